//! Whether each configured hook can run: its program is found and the script it names exists.
//! A hook that cannot start is worse than none: under `sh`, a missing script exits 2, which a
//! `pre_tool_use` hook means as "deny", so every tool call would be refused.

use std::path::{Path, PathBuf};

use super::{Check, bad, ok};
use crate::config::Config;
use crate::config::hooks::Event;

/// One check per hook that cannot run, or one saying they all can.
pub(super) fn checks(config: &Config) -> Vec<Check> {
    let mut count = 0;
    let mut problems = Vec::new();
    for event in Event::ALL {
        for hook in config.hooks.of(event) {
            count += 1;
            if let Some(problem) = problem(&hook.command, config.user_home.as_deref()) {
                let consequence = if event == Event::PreToolUse {
                    " Until then, every tool call it matches is refused."
                } else {
                    ""
                };
                problems.push(bad(
                    format!("{} hook `{}`: {problem}", event.name(), hook.command),
                    format!(
                        "create it, or remove the hook from {}.{consequence}",
                        config
                            .config_file
                            .as_deref()
                            .map_or("the config file".into(), |p| p.display().to_string())
                    ),
                ));
            }
        }
    }
    if problems.is_empty() && count > 0 {
        let plural = if count == 1 { "" } else { "s" };
        problems.push(ok(format!("{count} configured hook{plural} can run")));
    }
    problems
}

/// Why `command` cannot run: its program is not on the PATH or does not exist, or the
/// script an interpreter is given (`sh ~/hooks/guard.sh`) is missing.
fn problem(command: &str, home: Option<&Path>) -> Option<String> {
    let words = shlex::split(command)?;
    let program = words.first()?;
    if looks_like_path(program) {
        let path = expand(program, home);
        return (!path.exists()).then(|| format!("{} does not exist", path.display()));
    }
    if crate::platform::on_path(program).is_none() {
        return Some(format!("`{program}` is not installed or not on the PATH"));
    }
    let interpreter = Path::new(program)
        .file_stem()
        .and_then(|s| s.to_str())
        .is_some_and(|name| INTERPRETERS.contains(&name));
    let script = words[1..].iter().find(|w| !w.starts_with('-'))?;
    if !interpreter || !looks_like_path(script) {
        return None;
    }
    let path = expand(script, home);
    (!path.exists()).then(|| format!("{} does not exist", path.display()))
}

/// Programs whose first argument is a script to run.
const INTERPRETERS: &[&str] = &[
    "sh",
    "bash",
    "zsh",
    "dash",
    "fish",
    "python",
    "python3",
    "node",
    "ruby",
    "perl",
    "pwsh",
    "powershell",
];

/// A word that names a file: has a path separator, or a script's extension.
fn looks_like_path(word: &str) -> bool {
    word.contains('/')
        || word.contains('\\')
        || [".sh", ".py", ".ps1", ".js", ".rb", ".pl"]
            .iter()
            .any(|ext| word.ends_with(ext))
}

fn expand(word: &str, home: Option<&Path>) -> PathBuf {
    match (word.strip_prefix("~/"), home) {
        (Some(rest), Some(home)) => home.join(rest),
        _ => PathBuf::from(word),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_script_and_a_missing_program_are_named() {
        let home = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(home.path().join("h")).unwrap();
        std::fs::write(home.path().join("h/ok.sh"), "exit 0").unwrap();
        assert_eq!(problem("sh ~/h/ok.sh", Some(home.path())), None);
        let missing = problem("sh ~/h/guard.sh --strict", Some(home.path())).unwrap();
        assert!(missing.contains("guard.sh does not exist"), "{missing}");
        let program = problem("no-such-program-xyz --x", None).unwrap();
        assert!(program.contains("not on the PATH"), "{program}");
        // Slashes in an inline command's arguments are not scripts.
        assert_eq!(problem("git branch | sed 's/^/on /'", None), None);
        assert!(problem("~/h/missing.sh", Some(home.path())).is_some());
    }
}
