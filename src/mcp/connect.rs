//! Starting one MCP server and learning its tools.

use std::process::Stdio;
use std::sync::Arc;

use rmcp::ServiceExt;
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::TokioChildProcess;

use super::{Children, ServerSpec};

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
    children: Children,
}

impl Connection {
    /// Stops the server and everything it started.
    pub fn stop(&self) {
        self.client.cancellation_token().cancel();
        if let Some(pgid) = self.pgid {
            self.children.kill(pgid);
        }
    }
}

/// Starts `spec`'s server over stdio, without `scrubbed` environment variables (tandem's
/// own API keys), registers its process group with `children`, and lists its tools.
pub async fn connect(
    spec: ServerSpec,
    scrubbed: Vec<String>,
    children: Children,
) -> Result<Connection, String> {
    let Some(command) = spec.command.clone() else {
        return match spec.url.clone() {
            Some(_) if spec.sse => Err(
                "it uses the old HTTP+SSE transport, which tandem does not support; use its streamable HTTP endpoint".into(),
            ),
            Some(url) => connect_http(spec, &url, children).await,
            None => Err("it has neither a command nor a url".to_string()),
        };
    };
    let mut cmd = tokio::process::Command::new(&command);
    for name in &scrubbed {
        cmd.env_remove(name);
    }
    crate::platform::in_own_group(&mut cmd)
        .args(&spec.args)
        .envs(&spec.env)
        .kill_on_drop(true);
    let (transport, _) = TokioChildProcess::builder(cmd)
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| format!("cannot start `{}`: {e}", command.display()))?;
    let pgid = transport.id();
    if let Some(pgid) = pgid {
        children.register(pgid);
    }
    let fail = |message: String| {
        if let Some(pgid) = pgid {
            children.kill(pgid);
        }
        message
    };
    let client = ()
        .serve(transport)
        .await
        .map_err(|e| fail(format!("the MCP handshake failed: {e}")))?;
    describe(spec.name, client, pgid, children.clone())
        .await
        .map_err(fail)
}

/// Lists a connected server's tools and reads its instructions.
async fn describe(
    name: String,
    client: Client,
    pgid: Option<u32>,
    children: Children,
) -> Result<Connection, String> {
    let tools = client
        .list_all_tools()
        .await
        .map_err(|e| format!("listing its tools failed: {e}"))?;
    let instructions = client
        .peer_info()
        .and_then(|info| info.instructions.clone());
    Ok(Connection {
        name,
        client: Arc::new(client),
        tools,
        instructions,
        pgid,
        children,
    })
}

/// Connects to a streamable HTTP server.
async fn connect_http(
    spec: ServerSpec,
    url: &str,
    children: Children,
) -> Result<Connection, String> {
    use rmcp::transport::StreamableHttpClientTransport;
    use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
    // reqwest is built without a default TLS provider; ring is ours.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let mut headers = std::collections::HashMap::new();
    for (name, value) in &spec.headers {
        let name = reqwest::header::HeaderName::from_bytes(name.as_bytes())
            .map_err(|e| format!("invalid header name `{name}`: {e}"))?;
        let value = reqwest::header::HeaderValue::from_str(value)
            .map_err(|e| format!("invalid value for header `{name}`: {e}"))?;
        headers.insert(name, value);
    }
    let config =
        StreamableHttpClientTransportConfig::with_uri(url.to_string()).custom_headers(headers);
    let transport = StreamableHttpClientTransport::from_config(config);
    let client = ()
        .serve(transport)
        .await
        .map_err(|e| format!("the MCP handshake with {url} failed: {e}"))?;
    describe(spec.name, client, None, children).await
}
