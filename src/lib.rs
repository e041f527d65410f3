//! tandem: an Agent Client Protocol agent for any OpenAI-compatible chat model.
//!
//! `main.rs` parses flags and calls [`run_stdio`] or [`exec::run`]; everything else takes
//! its configuration, model client and transport as arguments (DESIGN.md §1).
#![deny(clippy::print_stdout, clippy::print_stderr)]

pub mod acp;
pub mod cli;
pub mod client;
pub mod config;
pub mod conversation;
pub mod credentials;
pub mod customize;
pub mod doctor;
pub mod edit;
pub mod exec;
#[cfg(feature = "fuzzing")]
pub mod harness;
pub mod local;
pub mod logging;
pub mod login;
pub mod mcp;
pub mod model;
pub mod output_schema;
pub mod permission;
pub mod platform;
pub mod secrets;
pub mod session;
pub mod store;
pub mod tools;
pub mod transport;
pub mod turn;
pub mod types;

use std::sync::Arc;

use agent_client_protocol::{Agent, ConnectTo};

use config::Config;
use model::ModelClient;
use session::SessionManager;

/// The model client the configuration asks for: the replay fixture or the HTTP endpoint.
pub fn model_client(config: &Config) -> anyhow::Result<Arc<dyn ModelClient>> {
    Ok(model::client_for(config)?)
}

/// Serves ACP over `transport` until the client goes away, then flushes the sessions'
/// transcripts and stops the MCP servers they started. `transport` comes with the token the
/// transport cancels when the editor's side closes (see [`transport::over`]).
pub async fn serve(
    config: Arc<Config>,
    client: Arc<dyn ModelClient>,
    transport: (
        impl ConnectTo<Agent> + 'static,
        tokio_util::sync::CancellationToken,
    ),
) -> anyhow::Result<()> {
    let (transport, editor_gone) = transport;
    let manager = Arc::new(SessionManager::new(config, client));
    let served = acp::agent(manager.clone(), editor_gone)
        .connect_to(transport)
        .await
        .map_err(|e| anyhow::anyhow!("ACP connection failed: {e}"));
    // stdin ended (or the connection failed): what the sessions recorded reaches the disk,
    // and no MCP server outlives tandem.
    manager.shutdown().await;
    served
}

/// Serves ACP on stdin/stdout: what an editor launches.
pub async fn run_stdio(config: Config) -> anyhow::Result<()> {
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
    let stdio = transport::stdio(config.eof_grace, config.max_message_bytes, trace);
    // serve() stops the MCP servers and flushes the transcripts before it returns.
    serve(Arc::new(config), client, stdio).await
}
