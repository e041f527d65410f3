//! The Unix side of [`crate::platform`]: `sh -c`, sessions and process groups, signals in
//! exit statuses, FIFOs and devices, case-sensitive paths, the signals that ask tandem to
//! stop, and (on Linux) a process other processes of the user cannot look into.

use std::fs::FileType;
use std::os::unix::fs::FileTypeExt;
use std::os::unix::process::ExitStatusExt;

use process_wrap::tokio::{CommandWrap, ProcessSession};

use super::Dialect;

/// The shell when none is configured: `sh -c`.
pub(crate) fn system_shell() -> (String, Vec<String>) {
    ("sh".to_string(), vec!["-c".to_string()])
}

/// Adds the command line as the shell's last argument.
pub(crate) fn add_line(command: &mut tokio::process::Command, _dialect: Dialect, line: &str) {
    command.arg(line);
}

/// Makes the child lead a new session, and so a new process group: killing the group
/// reaches everything it starts (grandchildren included), and the child has no controlling
/// terminal. Sharing tandem's would let a command open `/dev/tty` and push keystrokes into
/// the user's shell with `TIOCSTI`, to run there, unconfined, after tandem exits.
pub(crate) fn isolate(command: &mut CommandWrap) {
    command.wrap(ProcessSession);
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

/// Whether file names differ only in case name the same file: on macOS's default volumes
/// they do; on Linux and the other Unixes they do not.
pub const PATHS_IGNORE_CASE: bool = cfg!(target_os = "macos");

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

/// Closes this process to inspection by the user's other processes, where the system can: on
/// Linux it is made non-dumpable, as ssh-agent does, so `/proc/<pid>/environ`, `mem`, `maps`
/// and friends become root's and ptrace is refused; a command tandem starts cannot read the
/// API key out of tandem's environment or memory. Root still can. Elsewhere nothing changes.
pub fn close_to_inspection() {
    #[cfg(target_os = "linux")]
    linux::not_dumpable();
}

#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
mod linux {
    /// `prctl(PR_SET_DUMPABLE, 0)`. The programs tandem starts are dumpable again: the kernel
    /// resets the flag when a process executes a program.
    pub(super) fn not_dumpable() {
        // SAFETY: PR_SET_DUMPABLE takes one integer and touches no memory of ours.
        let done = unsafe { libc::prctl(libc::PR_SET_DUMPABLE, 0 as libc::c_ulong) };
        if done != 0 {
            tracing::debug!(
                "cannot make tandem non-dumpable: {}",
                std::io::Error::last_os_error()
            );
        }
    }

    #[cfg(test)]
    mod tests {
        #[test]
        fn the_process_is_no_longer_dumpable() {
            super::not_dumpable();
            // SAFETY: PR_GET_DUMPABLE only reads the flag.
            let dumpable = unsafe { libc::prctl(libc::PR_GET_DUMPABLE) };
            assert_eq!(dumpable, 0);
        }
    }
}
