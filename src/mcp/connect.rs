//! Starting one MCP server and learning its tools.

use std::process::Stdio;
use std::sync::Arc;

use rmcp::ServiceExt;
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::TokioChildProcess;

use super::{ServerSpec, children};

/// A running MCP client session with one server.
pub type Client = RunningService<RoleClient, ()>;

/// A connected server.
pub struct Connection {
    /// The server's name.
    pub name: String,
    /// The client session, shared by the server's tools.
    pub client: Arc<Client>,
    /// The tools it offered.
    pub tools: Vec<rmcp::model::Tool>,
    /// Its `instructions`, if any.
    pub instructions: Option<String>,
    pgid: Option<u32>,
}

impl Connection {
    /// Stops the server and everything it started.
    pub fn stop(&self) {
        self.client.cancellation_token().cancel();
        if let Some(pgid) = self.pgid {
            children::kill(pgid);
        }
    }
}

/// Starts `spec`'s server over stdio, without `scrubbed` environment variables (tandem's
/// own API keys), and lists its tools.
pub async fn connect(spec: ServerSpec, scrubbed: Vec<String>) -> Result<Connection, String> {
    let Some(command) = spec.command.clone() else {
        return Err(match &spec.url {
            Some(url) => format!("HTTP MCP servers are not supported yet ({url})"),
            None => "no command to run".to_string(),
        });
    };
    let mut cmd = tokio::process::Command::new(&command);
    for name in &scrubbed {
        cmd.env_remove(name);
    }
    cmd.args(&spec.args)
        .envs(&spec.env)
        .process_group(0)
        .kill_on_drop(true);
    let (transport, _) = TokioChildProcess::builder(cmd)
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| format!("cannot start `{}`: {e}", command.display()))?;
    let pgid = transport.id();
    if let Some(pgid) = pgid {
        children::register(pgid);
    }
    let fail = |message: String| {
        if let Some(pgid) = pgid {
            children::kill(pgid);
        }
        message
    };
    let client = ()
        .serve(transport)
        .await
        .map_err(|e| fail(format!("the MCP handshake failed: {e}")))?;
    let tools = client
        .list_all_tools()
        .await
        .map_err(|e| fail(format!("listing its tools failed: {e}")))?;
    let instructions = client
        .peer_info()
        .and_then(|info| info.instructions.clone());
    Ok(Connection {
        name: spec.name,
        client: Arc::new(client),
        tools,
        instructions,
        pgid,
    })
}
