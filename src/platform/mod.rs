//! What differs between operating systems, in one place: the shell a command line runs in,
//! process groups (a child and everything it starts, killed together), how a child's exit is
//! read, which kinds of file must not be opened for reading, and the signals that ask
//! tandem to stop. This is the only module with `cfg(unix)` code outside tests; a port to
//! another system adds its counterpart of `unix.rs` here and nothing else changes.

#[cfg(unix)]
mod unix;

#[cfg(unix)]
pub use unix::{
    exit_signal, in_own_group, kill_group, shell_line, stop_requested, unreadable_kind,
};

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
