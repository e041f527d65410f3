//! Logs go to stderr through `tracing`, filtered by `RUST_LOG`, with secrets redacted
//! ([`crate::secrets`]); stdout carries only the protocol.

use tracing_subscriber::EnvFilter;

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
