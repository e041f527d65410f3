//! tandem: an Agent Client Protocol agent for any OpenAI-compatible chat model.
//!
//! `main.rs` parses flags, turns signals into a shutdown future and calls [`run_stdio`] or
//! [`exec::run`]; everything else takes its configuration, model client, transport and
//! shutdown as arguments (DESIGN.md §1). The library owns no signals.
//!
//! This crate is the top floor: the ACP layer (`acp/`, the ndjson framing in `transport/`),
//! `tandem exec`, `doctor`, `login`, the CLI and logging, over the crates below it, one per floor
//! (each crate's own docs say what it holds):
//!
//! | crate | holds | uses |
//! |---|---|---|
//! | `tandem-types` | plain data, the conversation, the output-schema check | — |
//! | `tandem-platform` | what differs per OS, exact file access, the sandbox, named paths, HTTP basics | — |
//! | `tandem-config` | configuration, stored keys, secret redaction | types, platform |
//! | `tandem-permission` | modes, rules, grants, shell judgement, project trust | types, platform, config |
//! | `tandem-model` | the three wire APIs over one HTTP layer, discovery, quirks | types, platform, config |
//! | `tandem-core` | the editor seam, tools, edits, transcripts, MCP, turns, sessions | all of the above |
//! | `tandem` | ACP, exec, doctor, login, the binary | all of the above |
//!
//! The `use` lines below give the lower crates the names the code has always reached them by
//! (`crate::config`, `crate::session`, …).
#![deny(clippy::print_stdout, clippy::print_stderr)]

pub mod acp;
pub mod cli;
pub mod demo;
pub mod doctor;
pub mod exec;
#[cfg(feature = "fuzzing")]
pub mod harness;
pub mod logging;
pub mod login;
pub(crate) mod transport;

// The floors below, by the names this crate's code reaches them with.
use tandem_config as config;
use tandem_config::credentials;
use tandem_config::secrets;
#[cfg(test)]
use tandem_core::testkit;
use tandem_core::{client, mcp, session, store, tools, turn, web};
use tandem_model as model;
use tandem_permission as permission;
use tandem_platform as platform;
use tandem_types as types;
use tandem_types::{conversation, output_schema};

use std::sync::Arc;

use agent_client_protocol::{Agent, ConnectTo};

use config::Config;
use model::ModelClient;
use session::SessionManager;

/// The model client the configuration asks for: the replay fixture or the HTTP endpoint.
pub(crate) fn model_client(config: &Config) -> anyhow::Result<Arc<dyn ModelClient>> {
    Ok(model::client_for(config)?)
}

/// Serves ACP over `transport` until the editor's side closes or `shutdown` resolves (the
/// connection's life is `acp::lifecycle`'s), then flushes the sessions' transcripts (saying on
/// stderr what a full disk refused, lost with the process) and stops the MCP servers they
/// started. Any transport the ACP SDK can connect to will do: the stdio
/// wire ([`transport::stdio`]), exec's in-memory pipe, or the SDK's own streams and channels.
pub(crate) async fn serve(
    config: Arc<Config>,
    client: Arc<dyn ModelClient>,
    transport: impl ConnectTo<Agent> + transport::Outlet + 'static,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> anyhow::Result<()> {
    let manager = Arc::new(SessionManager::new(config, client));
    let served = acp::serve(manager.clone(), transport, shutdown)
        .await
        .map_err(|e| anyhow::anyhow!("ACP connection failed: {}", e.message));
    // The connection is over: what the sessions recorded reaches the disk, and no MCP server
    // outlives tandem.
    manager.shutdown().await;
    // The disk had its wait before the connection closed (the editor was told what it
    // refused): one last try, and what is still refused is said here, lost with the process.
    for lost in store::write_out(tokio::time::Instant::now()).await {
        tracing::error!(
            session = %lost.session,
            records = lost.records,
            path = %lost.path.display(),
            "{}",
            lost.told()
        );
    }
    served
}

/// Serves ACP on stdin/stdout (what an editor launches) until stdin ends or `shutdown`
/// resolves (the binary's SIGTERM and SIGINT).
pub async fn run_stdio(
    config: Config,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> anyhow::Result<()> {
    let client = model_client(&config)?;
    tracing::info!(
        version = env!("CARGO_PKG_VERSION"),
        provider = %config.endpoint.provider,
        base_url = %config.endpoint.base_url,
        model = %config.default_model,
        "tandem ready on stdio"
    );
    let trace = config.trace_wire.as_deref().and_then(|path| {
        transport::WireTrace::open(path)
            .inspect(|_| tracing::info!(path = %path.display(), "tracing the wire"))
            .inspect_err(|e| tracing::warn!(path = %path.display(), "cannot open the wire trace, going on without it: {e}"))
            .ok()
    });
    let framing = transport::Framing {
        max_line: config.max_message_bytes,
        trace,
    };
    serve(
        Arc::new(config),
        client,
        transport::stdio(framing),
        shutdown,
    )
    .await
}
