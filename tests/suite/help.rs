//! `tandem --help` and each subcommand's help explain themselves: examples, exit statuses and
//! every option a CI script needs; `--version` prints the crate version.

use std::process::Command;

fn help(args: &[&str]) -> String {
    let out = Command::new(crate::common::tandem_bin())
        .args(args)
        .arg("--help")
        .output()
        .unwrap();
    assert!(out.status.success(), "{args:?} --help failed");
    assert!(out.stderr.is_empty(), "help goes to stdout only");
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn every_help_has_examples() {
    for args in [&[][..], &["exec"], &["doctor"], &["login"], &["logout"]] {
        let text = help(args);
        assert!(text.contains("Examples:\n  tandem"), "{args:?}:\n{text}");
        assert!(text.contains("Usage: tandem"), "{args:?}:\n{text}");
    }
}

#[test]
fn exec_help_names_every_option_and_exit_status() {
    let text = help(&["exec"]);
    for option in [
        "--mode",
        "--cwd",
        "--model",
        "--output",
        "--max-turns",
        "--timeout",
        "--session",
        "--trust-project",
        "ndjson",
        "read-only",
    ] {
        assert!(text.contains(option), "exec --help lacks {option}:\n{text}");
    }
    for status in [
        "0 when", "1 on", "2 on", "3 when", "4 when", "5 when", "130 when",
    ] {
        assert!(
            text.contains(status),
            "exec --help lacks `{status}`:\n{text}"
        );
    }
}

#[test]
fn version_prints_the_crate_version() {
    let out = Command::new(crate::common::tandem_bin())
        .arg("--version")
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8(out.stdout).unwrap().trim(),
        format!("tandem {}", env!("CARGO_PKG_VERSION"))
    );
}

/// Help is read from an installed binary, far from a clone: its examples must not name the
/// repository's files, and the top-level help lists the environment variables tandem reads.
#[test]
fn help_examples_work_from_an_installed_binary_and_name_the_environment() {
    for args in [&[][..], &["exec"], &["doctor"], &["login"], &["logout"]] {
        let text = help(args);
        assert!(
            !text.contains("fixtures/"),
            "{args:?} names a repository file:\n{text}"
        );
    }
    let text = help(&[]);
    for var in [
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        "TANDEM_PROVIDER",
        "TANDEM_MODEL",
        "TANDEM_MODELS",
        "TANDEM_MODE",
        "TANDEM_CONFIG",
        "TANDEM_HOME",
        "TANDEM_CREDENTIAL_STORE",
        "TANDEM_TRACE_WIRE",
        "TANDEM_EOF_GRACE_SECS",
        "TANDEM_MAX_MESSAGE_BYTES",
        "TANDEM_API",
        "TANDEM_SANDBOX",
        "TANDEM_INVOKED_AS",
        "RUST_LOG",
    ] {
        assert!(text.contains(var), "--help lacks {var}:\n{text}");
    }
    assert!(text.contains("tandem login"), "{text}");
}

/// `tandem` typed in a shell: one line on stderr says what it waits for; Ctrl-D ends it.
#[cfg(unix)]
#[test]
fn plain_tandem_on_a_terminal_says_what_it_is() {
    use expectrl::Expect;
    let home = tempfile::tempdir().unwrap();
    let mut command = Command::new(crate::common::tandem_bin());
    command
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home.path())
        .env("TERM", "xterm");
    let mut term = expectrl::Session::spawn(command).unwrap();
    term.set_expect_timeout(Some(std::time::Duration::from_secs(20)));
    term.expect("speaks the Agent Client Protocol on stdin/stdout")
        .unwrap();
    term.expect("tandem login").unwrap();
    term.send("\x04").unwrap();
    term.expect(expectrl::Eof).unwrap();
}

/// Issue 31: each subcommand takes only the flags it uses, a replay fixture that cannot be
/// read is a configuration error, and exec's JSON output is described whole.
#[test]
fn each_subcommand_takes_only_the_flags_it_uses() {
    let run = |args: &[&str]| {
        let out = Command::new(crate::common::tandem_bin())
            .args(args)
            .env("HOME", std::env::temp_dir())
            .env_remove("OPENAI_API_KEY")
            .output()
            .unwrap();
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    for args in [
        &["login", "--mode", "ask"][..],
        &["login", "--replay", "f.json"],
        &["login", "--trace-wire", "t"],
        &["logout", "--model", "m"],
        &["logout", "--mode", "ask"],
        &["doctor", "--mode", "ask"],
        &["doctor", "--trace-wire", "t"],
        &["--mode", "ask", "exec", "hi"],
        &["exec", "--trace-wire", "t", "hi"],
    ] {
        let (code, _, stderr) = run(args);
        assert_eq!(code, 2, "{args:?} was taken: {stderr}");
        assert!(
            stderr.contains("unexpected argument") || stderr.contains("cannot be used"),
            "{args:?}: {stderr}"
        );
    }
    // The server's flags go anywhere, before the subcommand too.
    for args in [
        &["--provider", "ollama", "logout"][..],
        &["-v", "logout"],
        &["logout", "--base-url", "http://127.0.0.1:9/v1"],
    ] {
        let (code, _, stderr) = run(args);
        assert_eq!(code, 0, "{args:?}: {stderr}");
    }
    let (code, stdout, _) = run(&["doctor", "--replay", "/nonexistent/fixture.json"]);
    assert_eq!(code, 1, "{stdout}");
    assert!(
        stdout.contains("✗ the replay fixture cannot be used"),
        "{stdout}"
    );
    assert!(!stdout.contains("All checks passed"), "{stdout}");
    let (code, _, stderr) = run(&["exec", "--replay", "/nonexistent/fixture.json", "hi"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("cannot read replay fixture"), "{stderr}");
    let text = help(&["exec"]);
    assert!(text.contains("toolCalls"), "{text}");
    let text = help(&["login"]);
    assert!(text.contains("\"$OPENROUTER_API_KEY\""), "{text}");
}

/// `tandem` with `args`, nothing of the caller's environment but PATH: (status, stdout, stderr).
fn tandem(args: &[&str]) -> (i32, String, String) {
    let home = tempfile::tempdir().unwrap();
    let out = Command::new(crate::common::tandem_bin())
        .args(args)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home.path())
        .env("TANDEM_HOME", home.path().join("data"))
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Issue 58: `-h` and `--help` describe tandem in the same words, the internal `sandbox`
/// command is not among the user's commands and takes no server flag, and `login --model`
/// says what login does with it.
#[test]
fn short_and_long_help_agree_and_internal_commands_are_hidden() {
    let (code, short, _) = tandem(&["-h"]);
    assert_eq!(code, 0);
    let long = help(&[]);
    let summary = short.lines().next().unwrap_or_default();
    assert!(summary.contains("vendor-neutral"), "{short}");
    assert_eq!(
        long.lines().next().unwrap_or_default(),
        summary,
        "-h:\n{short}\n--help:\n{long}"
    );
    for text in [&short, &long] {
        assert!(
            text.contains("  demo "),
            "demo is a user's command:\n{text}"
        );
        assert!(
            !text.lines().any(|l| l.trim_start().starts_with("sandbox ")),
            "sandbox is listed:\n{text}"
        );
    }
    for flag in [
        &["--provider", "ollama"][..],
        &["--base-url", "http://127.0.0.1:9/v1"],
        &["--api", "responses"],
        &["--config", "/nonexistent.toml"],
        &["-v"],
    ] {
        let mut args = vec!["sandbox"];
        args.extend_from_slice(flag);
        args.extend(["--policy", "{}", "--", "true"]);
        let (code, _, stderr) = tandem(&args);
        assert_eq!(code, 2, "{args:?} was taken: {stderr}");
        assert!(
            stderr.contains("cannot be used with 'sandbox'"),
            "{args:?}: {stderr}"
        );
    }
    for flag in [
        &["--provider", "ollama"][..],
        &["--base-url", "http://127.0.0.1:9/v1"],
        &["--api", "responses"],
    ] {
        let mut args = vec!["demo"];
        args.extend_from_slice(flag);
        let (code, _, stderr) = tandem(&args);
        assert_eq!(code, 2, "{args:?} was taken: {stderr}");
        assert!(
            stderr.contains("cannot be used with 'demo'"),
            "{args:?}: {stderr}"
        );
    }
    let login = help(&["login"]);
    assert!(
        login.contains("The model to test and save for new sessions; without it, login lists the server's models"),
        "{login}"
    );
    assert!(!login.contains("Model id for new sessions"), "{login}");
}
