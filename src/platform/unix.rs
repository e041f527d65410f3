//! The Unix side of [`crate::platform`]: `sh -c`, process groups and `killpg`, signals in
//! exit statuses, FIFOs and devices, and the signals that ask tandem to stop.

use std::fs::FileType;
use std::os::unix::fs::FileTypeExt;
use std::os::unix::process::ExitStatusExt;

/// The program and arguments that run `line`: `sh -c LINE`.
pub fn shell_line(line: &str) -> (String, Vec<String>) {
    ("sh".to_string(), vec!["-c".to_string(), line.to_string()])
}

/// Makes the child lead a new process group, so that [`kill_group`] reaches everything it
/// starts (grandchildren included).
pub fn in_own_group(command: &mut tokio::process::Command) -> &mut tokio::process::Command {
    command.process_group(0)
}

/// Kills the process group led by `leader` (a child started [`in_own_group`]); a group that
/// is already gone is not an error.
pub fn kill_group(leader: u32) {
    use nix::sys::signal::{Signal, killpg};
    use nix::unistd::Pid;
    if let Ok(pid) = i32::try_from(leader) {
        let _ = killpg(Pid::from_raw(pid), Signal::SIGKILL);
    }
}

/// The signal that ended a child, if one did.
pub fn exit_signal(status: &std::process::ExitStatus) -> Option<i32> {
    status.signal()
}

/// Why a file of this kind must not be read as a file: a directory, or a FIFO, socket or
/// device (reading those can block forever or never end). `None` for a regular file.
pub fn unreadable_kind(kind: &FileType) -> Option<&'static str> {
    if kind.is_file() {
        None
    } else if kind.is_dir() {
        Some("is a directory")
    } else if kind.is_fifo() {
        Some("is a FIFO (named pipe), not a regular file")
    } else if kind.is_char_device() || kind.is_block_device() {
        Some("is a device file, not a regular file")
    } else {
        Some("is not a regular file")
    }
}

/// Resolves with the signal's name on SIGTERM or SIGINT; never, when they cannot be listened
/// for (then only the end of stdin stops tandem).
pub async fn stop_requested() -> &'static str {
    use tokio::signal::unix::{SignalKind, signal};
    let (term, int) = (
        signal(SignalKind::terminate()),
        signal(SignalKind::interrupt()),
    );
    let (Ok(mut term), Ok(mut int)) = (term, int) else {
        tracing::warn!("cannot listen for SIGTERM/SIGINT; only the end of stdin stops tandem");
        return std::future::pending().await;
    };
    tokio::select! {
        _ = term.recv() => "SIGTERM",
        _ = int.recv() => "SIGINT",
    }
}
