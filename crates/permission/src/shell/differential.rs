//! The differential test: generated lines, each run by dash and by bash with recording stub
//! programs first (and alone) on the PATH. Two properties must hold for every line:
//!
//! 1. when the judge finds no hazard, every program either shell started is one the judge
//!    named (a grant on those programs is a grant on what runs);
//! 2. for every program either shell started, a deny rule on it refuses the line (deny
//!    rules hold whatever the line hides).
//!
//! Both shells must be installed; where one is missing the test says so and passes, unless
//! `TANDEM_SHELLS_REQUIRED=1` (CI sets it, and `.ci/run` installs both).
#![cfg(unix)]

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use proptest::prelude::*;

use super::parse;
use crate::config::permissions::{Rule, RuleEffect, parse_rule};
use crate::{Rules, Subject};

/// The stub programs: each appends its name to the file `$TANDEM_DIFF_LOG` names.
const STUBS: &[&str] = &["p1", "p2", "p3", "git", "touch"];

/// A scratch folder with the stubs in `bin/`, and the shells found on this machine.
struct Lab {
    dir: tempfile::TempDir,
    shells: Vec<PathBuf>,
}

impl Lab {
    fn new() -> Option<Lab> {
        let shells: Vec<PathBuf> = ["dash", "bash"]
            .iter()
            .filter_map(|name| crate::platform::on_path(name))
            .collect();
        if shells.len() < 2 {
            assert!(
                std::env::var("TANDEM_SHELLS_REQUIRED").as_deref() != Ok("1"),
                "the differential test needs dash and bash on the PATH"
            );
            // The test harness shows a test's stderr; a skipped check must say so.
            #[allow(clippy::print_stderr)]
            {
                eprintln!(
                    "SKIPPED the differential shell test: dash and bash are not both installed"
                );
            }
            return None;
        }
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("bin");
        std::fs::create_dir_all(&bin).unwrap();
        for stub in STUBS {
            let path = bin.join(stub);
            std::fs::write(
                &path,
                format!("#!/bin/sh\nprintf '%s\\n' {stub} >> \"$TANDEM_DIFF_LOG\"\n"),
            )
            .unwrap();
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        // Real shells, so that `sh -c '…'` and `bash -c '…'` run what they are given.
        for shell in &shells {
            std::os::unix::fs::symlink(shell, bin.join(shell.file_name().unwrap())).unwrap();
        }
        std::os::unix::fs::symlink(&shells[0], bin.join("sh")).unwrap();
        Some(Lab { dir, shells })
    }

    /// The programs `shell` started for `line`.
    fn ran(&self, shell: &Path, line: &str, case: usize) -> BTreeSet<String> {
        let name = shell.file_name().unwrap().to_string_lossy();
        let log = self.dir.path().join(format!("ran-{case}-{name}.log"));
        let work = self.dir.path().join("work");
        std::fs::create_dir_all(&work).unwrap();
        let mut child = Command::new(shell)
            .arg("-c")
            .arg(line)
            .env_clear()
            .env("PATH", self.dir.path().join("bin"))
            .env("TANDEM_DIFF_LOG", &log)
            .current_dir(&work)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let started = Instant::now();
        while child.try_wait().unwrap().is_none() {
            if started.elapsed() > Duration::from_secs(3) {
                let _ = child.kill();
                let _ = child.wait();
                break;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        if line.contains('&') {
            // A program started in the background may still be writing.
            std::thread::sleep(Duration::from_millis(30));
        }
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        let _ = std::fs::remove_file(&log);
        text.lines().map(str::to_string).collect()
    }
}

/// Checks both properties for `line`; `Err` says which failed.
fn check(lab: &Lab, line: &str, case: usize) -> Result<(), String> {
    let parsed = parse(line);
    let named: BTreeSet<String> = parsed
        .commands
        .iter()
        .filter_map(|c| c.program())
        .map(|p| p.text.rsplit('/').next().unwrap_or(&p.text).to_string())
        .collect();
    for shell in &lab.shells {
        let ran = lab.ran(shell, line, case);
        if parsed.hazards.is_empty()
            && let Some(missed) = ran.iter().find(|p| !named.contains(*p))
        {
            return Err(format!(
                "{} ran `{missed}`, which the judge did not name ({named:?}) in {line:?}",
                shell.display()
            ));
        }
        for program in &ran {
            let rules = deny(program);
            let subject = Subject::Command {
                line,
                parsed: parsed.clone(),
                cwd: Path::new("/ws"),
            };
            if rules.find(RuleEffect::Deny, &subject).is_none() {
                return Err(format!(
                    "{} ran `{program}` past `deny = [\"run_command({program}:*)\"]` in {line:?} (hazards: {:?})",
                    shell.display(),
                    parsed.hazards
                ));
            }
        }
    }
    Ok(())
}

fn deny(program: &str) -> Rules {
    let text = format!("run_command({program}:*)");
    let rule = Rule {
        effect: RuleEffect::Deny,
        target: parse_rule(&text).unwrap(),
        text,
        source: PathBuf::from("/config.toml"),
    };
    Rules::new([rule], Path::new("/ws"), None)
}

/// One of `texts` for each weight: plain ones often, tricky ones now and then.
fn pick(plain: &'static [&'static str], tricky: &'static [&'static str]) -> BoxedStrategy<String> {
    let plain = proptest::sample::select(plain).prop_map(str::to_string);
    let tricky = proptest::sample::select(tricky).prop_map(str::to_string);
    prop_oneof![3 => plain, 1 => tricky].boxed()
}

/// A program, as a line may spell it.
fn program() -> BoxedStrategy<String> {
    pick(
        &["p1", "p2", "git", "touch"],
        &[
            "\\p1",
            "'p2'",
            "$X",
            "{p1,p2}",
            "p${E}3",
            "$'p1'",
            "$\"p2\"",
            "command p1",
            "eval p2",
            "exec p1",
            "time p2",
            "coproc p1",
            "X=p3 p1",
            "sh -c p2",
            "bash -c 'p1; p3'",
            "let 'x[$(p3)]'",
            "p1 &>/dev/null",
        ],
    )
}

/// What may follow a program: arguments, quotes, redirections, comments.
fn tail() -> BoxedStrategy<String> {
    pick(
        &["hi", "push", "p2", "p3", "-r", "p1"],
        &[
            "'x y'",
            "$'\\''",
            "$'a\\'b'",
            "$\"p3\"",
            "&>/dev/null",
            "&>>/dev/null",
            ">/dev/null",
            "2>/dev/null",
            ">&2",
            ">& /dev/null",
            "2>&1",
            "<<< p2",
            "#",
            "#'",
            "{p2,p3}",
            "$(p3)",
            "`p2`",
            "${X:-$(p1)}",
            "\\",
            "'",
            "\"",
            "\n",
        ],
    )
}

/// What may join two commands.
fn separator() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(";".to_string()),
        Just("&&".to_string()),
        Just("||".to_string()),
        Just("|".to_string()),
        Just("|&".to_string()),
        Just("&".to_string()),
        Just("\n".to_string()),
        Just(" ".to_string()),
        Just(";;".to_string()),
    ]
}

/// Shapes around a command.
fn wrap(command: String, shape: usize) -> String {
    match shape {
        0 => command,
        1 => format!("( {command} )"),
        2 => format!("{{ {command}; }}"),
        3 => format!("[[ -n x ]] && {command}"),
        4 => format!("((1)) && {command}"),
        5 => format!("if true; then {command}; fi"),
        6 => format!("f() {{ {command}; }}; f"),
        7 => format!("alias p1=p2\n{command}"),
        8 => format!("case x in x) {command};& y) p3;; esac"),
        9 => format!("for i in a; do {command}; done"),
        10 => format!("! {command}"),
        _ => command,
    }
}

fn command() -> impl Strategy<Value = String> {
    (program(), prop::collection::vec(tail(), 0..4), 0usize..16)
        .prop_map(|(program, tail, shape)| wrap(format!("{program} {}", tail.join(" ")), shape))
}

fn line() -> impl Strategy<Value = String> {
    (
        command(),
        prop::collection::vec((separator(), command()), 0..3),
    )
        .prop_map(|(first, rest)| {
            let mut line = first;
            for (sep, next) in rest {
                line.push_str(&sep);
                line.push_str(&next);
            }
            line
        })
}

/// The two lines the review found, and their kin.
#[test]
fn the_lines_the_review_found() {
    let Some(lab) = Lab::new() else { return };
    for (i, line) in [
        "echo hi &>/dev/null touch PWNED",
        "echo hi $'\\'\ntouch PWNED\n#'",
        "echo hi &>>/dev/null p1",
        "echo hi |& p1",
        "echo $\"x\" p2",
        "{p1,hi}",
        "rm build 2>/dev/null p1",
        "echo hi\np1 {a,b}",
        "p1 \\ #|case x in x) p2 ;& y) p3;; esac",
        "[[ -n x ]] && p2 \n\\p1 ",
        "if true; then touch &>/dev/null >/dev/null p2; fi",
        "p1 &>/dev/null 2>/dev/null p2 &>>/dev/null p3",
    ]
    .iter()
    .enumerate()
    {
        if let Err(e) = check(&lab, line, i) {
            panic!("{e}");
        }
    }
}

#[test]
fn generated_lines_run_only_what_the_judge_named() {
    let Some(lab) = Lab::new() else { return };
    // `TANDEM_DIFF_CASES` runs more (a long search before a release, say).
    let cases = std::env::var("TANDEM_DIFF_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(800);
    let config = ProptestConfig {
        cases,
        failure_persistence: None,
        ..ProptestConfig::default()
    };
    let case = std::sync::atomic::AtomicUsize::new(100);
    proptest!(config, |(line in line())| {
        let n = case.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        if let Err(e) = check(&lab, &line, n) {
            prop_assert!(false, "{}", e);
        }
    });
}
