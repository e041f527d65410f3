//! The Windows side of [`crate::platform`]: PowerShell or `cmd /C`, Job Objects, no signals
//! in exit statuses, case-insensitive paths, and Ctrl-C, Ctrl-Break and a closed console as
//! the requests to stop.

use std::fs::FileType;

use process_wrap::tokio::{CommandWrap, JobObject};

use super::Dialect;

/// The shell when none is configured: PowerShell 7 (`pwsh`) when it is on the PATH, else
/// Windows PowerShell, else `cmd /C` (always there).
pub(crate) fn system_shell() -> (String, Vec<String>) {
    let powershell = ["-NoLogo", "-NoProfile", "-NonInteractive", "-Command"];
    for program in ["pwsh", "powershell"] {
        if let Some(found) = super::paths::on_path(program) {
            let args = powershell.iter().map(|a| a.to_string()).collect();
            return (found.display().to_string(), args);
        }
    }
    let args = ["/D", "/S", "/C"].iter().map(|a| a.to_string()).collect();
    ("cmd.exe".to_string(), args)
}

/// Adds the command line as the shell's last argument. `cmd` does not split its command
/// line the way other programs do, so the line goes to it as written, in the quotes `/S`
/// strips again.
pub(crate) fn add_line(command: &mut tokio::process::Command, dialect: Dialect, line: &str) {
    if dialect == Dialect::Cmd {
        command.raw_arg(format!("\"{line}\""));
    } else {
        command.arg(line);
    }
}

/// Puts the child in a Job Object of its own, so that killing it reaches everything it
/// starts (grandchildren included), and closing tandem ends the job.
pub(crate) fn isolate(command: &mut CommandWrap) {
    command.wrap(JobObject);
}

/// Windows ends processes with exit codes, never signals.
pub fn exit_signal(_status: &std::process::ExitStatus) -> Option<i32> {
    None
}

/// Why a file of this kind must not be read as a file. `None` for a regular file.
pub fn unreadable_kind(kind: &FileType) -> Option<&'static str> {
    if kind.is_file() {
        None
    } else if kind.is_dir() {
        Some("is a directory")
    } else {
        Some("is not a regular file")
    }
}

/// NTFS and FAT names differ only in case name the same file.
pub const PATHS_IGNORE_CASE: bool = true;

/// Resolves with the event's name on Ctrl-C, Ctrl-Break or the console closing; never, when
/// none can be listened for (then only the end of stdin stops tandem).
pub async fn stop_requested() -> &'static str {
    use tokio::signal::windows::{ctrl_break, ctrl_c, ctrl_close};
    let (c, brk, close) = (ctrl_c(), ctrl_break(), ctrl_close());
    let (Ok(mut c), Ok(mut brk), Ok(mut close)) = (c, brk, close) else {
        tracing::warn!("cannot listen for Ctrl-C/Ctrl-Break; only the end of stdin stops tandem");
        return std::future::pending().await;
    };
    tokio::select! {
        _ = c.recv() => "Ctrl-C",
        _ = brk.recv() => "Ctrl-Break",
        _ = close.recv() => "console close",
    }
}

/// Nothing is done on Windows: a process of the same user can still read tandem's memory
/// (and so its environment); what keeps the key from the model there is redaction.
pub fn close_to_inspection() {}
