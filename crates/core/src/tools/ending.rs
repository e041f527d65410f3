//! How a command ended, in words for the model: shared by a command run to its end
//! (run_command.rs) and one that ran in the background (run_background.rs).

use std::time::Duration;

use crate::client::ExitStatus;

/// How the command ended, in words for the model.
pub(super) fn ending(
    exit: Option<&ExitStatus>,
    timed_out: bool,
    cancelled: bool,
    timeout: Duration,
) -> String {
    if cancelled {
        return "Cancelled by the user; the command was killed.".into();
    }
    if timed_out {
        return format!(
            "Timed out after {} s; the command was killed.",
            timeout.as_secs_f64()
        );
    }
    match exit {
        Some(ExitStatus {
            code: Some(code), ..
        }) => format!("Exit code: {code}"),
        Some(ExitStatus {
            signal: Some(signal),
            ..
        }) => format!("Ended by {signal}"),
        _ => "Ended (no exit status reported)".into(),
    }
}
