//! What differs between operating systems, in one place: the shell a command line runs in,
//! process groups (a child and everything it starts, killed together), how a child's exit is
//! read, which kinds of file must not be opened for reading, and the signals that ask
//! tandem to stop. This is the only module with `cfg(unix)` code outside tests; a port to
//! another system adds its counterpart of `unix.rs` here and nothing else changes.

#[cfg(all(target_os = "linux", target_env = "gnu"))]
mod heap;
#[cfg(unix)]
mod unix;

#[cfg(unix)]
pub use unix::{
    exit_signal, in_own_group, kill_group, shell_line, stop_requested, unreadable_kind,
};

/// Sets up the memory allocator for a long-lived process, where the system's allocator
/// needs it (glibc: one arena, see `heap.rs`). Call first in `main`, before threads start.
pub fn tune_allocator() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    heap::use_one_arena();
}

/// Commands the shell itself runs (no program of that name to start), so a line that uses
/// one must go to the shell.
const SHELL_BUILTINS: &[&str] = &[
    ".", ":", "alias", "bg", "bind", "builtin", "cd", "command", "declare", "dirs", "eval", "exec",
    "exit", "export", "fg", "hash", "jobs", "let", "local", "popd", "pushd", "read", "readonly",
    "return", "set", "shift", "source", "trap", "type", "typeset", "ulimit", "umask", "unalias",
    "unset", "wait",
];

/// The program and arguments an editor terminal starts for `line`. Terminal headers show
/// them as the command line, so a plain line (a program and its arguments, quoted or not)
/// is started as itself: `cargo test --all` reads as that rather than as a shell with `-c`.
/// A line that needs the shell (pipes, `&&`, redirections, variables, globs, builtins,
/// several lines) goes to [`shell_line`].
pub fn terminal_line(line: &str) -> (String, Vec<String>) {
    let needs_shell = line.contains(|c: char| "|&;<>()$`\\*?[]{}~#!\n\r".contains(c));
    if !needs_shell
        && let Some(mut words) = shlex::split(line)
        && let Some(program) = words.first()
        && !program.contains('=')
        && !SHELL_BUILTINS.contains(&program.as_str())
    {
        let program = words.remove(0);
        return (program, words);
    }
    shell_line(line)
}

/// Builds the command that runs `line` in the shell; the caller adds the directory, the
/// environment and the pipes.
pub fn shell_command(line: &str) -> tokio::process::Command {
    let (program, args) = shell_line(line);
    let mut command = tokio::process::Command::new(program);
    command.args(args);
    command
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_lines_start_as_themselves_and_the_rest_in_the_shell() {
        let direct = |line: &str, program: &str, args: &[&str]| {
            assert_eq!(
                terminal_line(line),
                (
                    program.to_string(),
                    args.iter().map(|a| a.to_string()).collect::<Vec<_>>()
                ),
                "{line}"
            );
        };
        direct("cargo test --all", "cargo", &["test", "--all"]);
        direct(
            "git commit -m \"fix the bug\"",
            "git",
            &["commit", "-m", "fix the bug"],
        );
        direct("  ls  ", "ls", &[]);
        for line in [
            "cargo test | tail",
            "make && make install",
            "echo $HOME",
            "ls *.rs",
            "cd src",
            "FOO=1 cargo run",
            "echo 'unclosed",
            "echo hi > out.txt",
            "printf 'a\nb'\nls",
            "",
        ] {
            assert_eq!(terminal_line(line), shell_line(line), "{line}");
        }
    }

    #[test]
    fn a_line_runs_in_the_shell() {
        let (program, args) = shell_line("echo hi && ls");
        assert_eq!(program, "sh");
        assert_eq!(args, ["-c", "echo hi && ls"]);
    }

    #[tokio::test]
    async fn killing_a_group_ends_its_grandchildren() {
        let mut command = shell_command("sleep 30 & sleep 30");
        let mut child = in_own_group(&mut command)
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        kill_group(child.id().unwrap());
        let status = tokio::time::timeout(std::time::Duration::from_secs(10), child.wait())
            .await
            .unwrap()
            .unwrap();
        assert_eq!(exit_signal(&status), Some(9));
    }

    #[tokio::test]
    async fn special_files_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f");
        std::fs::write(&file, "x").unwrap();
        let kind = |p: &std::path::Path| std::fs::metadata(p).unwrap().file_type();
        assert_eq!(unreadable_kind(&kind(&file)), None);
        assert_eq!(unreadable_kind(&kind(dir.path())), Some("is a directory"));
        assert_eq!(
            unreadable_kind(&kind(std::path::Path::new("/dev/null"))),
            Some("is a device file, not a regular file")
        );
    }
}
