//! Logs go to stderr through `tracing`, filtered by `RUST_LOG`, with secrets redacted
//! ([`crate::secrets`]); stdout carries only the protocol.
//!
//! Without `RUST_LOG`, stderr says only what went wrong: some editors show every stderr line
//! to the user (agent-shell prints each one as a notice), so tandem's progress (sessions
//! opened, prompts cancelled) is there only when asked for, with `-v` or `RUST_LOG`.

use tracing_subscriber::EnvFilter;

/// Who reads the stderr lines a run writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Audience {
    /// An editor, which may show every line: the stdio agent.
    Editor,
    /// A person at a terminal, running a command (`exec`, `doctor`, `logout`) whose error
    /// lines are its own: the ACP SDK's notes about error answers are left out.
    Command,
    /// A person answering questions (`login`): the command says everything that matters
    /// itself, and a log line would land in the middle of a prompt.
    Prompted,
}

/// The filter when `RUST_LOG` is unset: warnings and errors (nothing while a person answers
/// prompts); with `verbose` (`-v`, `-vv`, `-vvv`) tandem's own info, debug or trace lines too.
pub fn default_filter(audience: Audience, verbose: u8) -> String {
    let own = match verbose {
        0 => None,
        1 => Some("tandem=info"),
        2 => Some("tandem=debug"),
        _ => Some("tandem=trace"),
    };
    let base = match audience {
        // The SDK warns about every error response it sends: the editor already shows the
        // error itself, and agent-shell would show each one twice (once as a notice).
        Audience::Editor | Audience::Command => "warn,agent_client_protocol=error",
        Audience::Prompted if own.is_some() => "warn,agent_client_protocol=error",
        Audience::Prompted => "off",
    };
    match own {
        Some(own) => format!("{own},{base}"),
        None => base.to_string(),
    }
}

/// Installs the stderr subscriber. `default` applies when `RUST_LOG` is unset or invalid.
pub fn init(default: &str) {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(|| crate::secrets::RedactingWriter(std::io::stderr()))
        .with_ansi(false)
        .with_target(false)
        .try_init();
}

#[cfg(test)]
mod tests {
    use super::{Audience, default_filter};

    #[test]
    fn warnings_by_default_and_more_with_each_v() {
        assert_eq!(
            default_filter(Audience::Editor, 0),
            "warn,agent_client_protocol=error"
        );
        assert_eq!(
            default_filter(Audience::Editor, 1),
            "tandem=info,warn,agent_client_protocol=error"
        );
        assert_eq!(
            default_filter(Audience::Editor, 2),
            "tandem=debug,warn,agent_client_protocol=error"
        );
        assert_eq!(
            default_filter(Audience::Editor, 9),
            "tandem=trace,warn,agent_client_protocol=error"
        );
        assert_eq!(
            default_filter(Audience::Command, 1),
            "tandem=info,warn,agent_client_protocol=error"
        );
    }

    #[test]
    fn nothing_is_logged_into_prompts_unless_asked() {
        assert_eq!(default_filter(Audience::Prompted, 0), "off");
        assert_eq!(
            default_filter(Audience::Prompted, 1),
            "tandem=info,warn,agent_client_protocol=error"
        );
    }
}
