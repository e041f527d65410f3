//! Logs go to stderr through `tracing`, filtered by `RUST_LOG`, with secrets redacted
//! ([`crate::secrets`]); stdout carries only the protocol.
//!
//! Without `RUST_LOG`, stderr says only what went wrong: some editors show every stderr line
//! to the user (agent-shell prints each one as a notice), so tandem's progress (sessions
//! opened, prompts cancelled) is there only when asked for, with `-v` or `RUST_LOG`.

use tracing_subscriber::EnvFilter;

/// The filter when `RUST_LOG` is unset: warnings and errors; with `verbose` (`-v`, `-vv`,
/// `-vvv`) tandem's own info, debug or trace lines too. `subcommand` is a command other than
/// the stdio agent, whose stderr is the user's terminal and whose error lines are its own, so
/// the ACP SDK's notes about error answers are left out there.
pub fn default_filter(subcommand: bool, verbose: u8) -> String {
    let own = match verbose {
        0 => None,
        1 => Some("tandem=info"),
        2 => Some("tandem=debug"),
        _ => Some("tandem=trace"),
    };
    let base = if subcommand {
        "warn,agent_client_protocol=error"
    } else {
        "warn"
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
    use super::default_filter;

    #[test]
    fn warnings_by_default_and_more_with_each_v() {
        assert_eq!(default_filter(false, 0), "warn");
        assert_eq!(default_filter(false, 1), "tandem=info,warn");
        assert_eq!(default_filter(false, 2), "tandem=debug,warn");
        assert_eq!(default_filter(false, 9), "tandem=trace,warn");
        assert_eq!(
            default_filter(true, 1),
            "tandem=info,warn,agent_client_protocol=error"
        );
    }
}
