//! Starting one MCP server and learning its tools.

use std::process::Stdio;
use std::sync::Arc;

use rmcp::ServiceExt;
use rmcp::service::{RoleClient, RunningService};

use super::{Children, ServerSpec};
use crate::platform::Group;

/// Why a server could not be connected; the text is what the user and `_tandem/status` see.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ConnectError {
    /// The entry has nothing to connect to.
    #[error("it has neither a command nor a url")]
    Nowhere,
    /// The command could not be spawned.
    #[error("cannot start `{command}`: {source}")]
    Spawn {
        /// The program named by the entry.
        command: String,
        /// Why the spawn failed.
        source: std::io::Error,
    },
    /// The server started but the MCP handshake failed.
    #[error("the MCP handshake failed: {0}")]
    Handshake(String),
    /// The HTTP server did not complete the MCP handshake.
    #[error("the MCP handshake with {url} failed: {reason}")]
    HttpHandshake {
        /// The server's endpoint.
        url: String,
        /// What rmcp reported.
        reason: String,
    },
    /// `tools/list` failed.
    #[error("listing its tools failed: {0}")]
    ListTools(String),
    /// A configured header cannot be sent.
    #[error("invalid {what}: {reason}")]
    Header {
        /// Which part of which header.
        what: String,
        /// Why it is invalid.
        reason: String,
    },
    /// The server took longer than the connect timeout.
    #[error("did not start within {0} s")]
    Timeout(u64),
}

/// A running MCP client session with one server.
pub(crate) type Client = RunningService<RoleClient, super::Asker>;

/// A connected server.
pub(crate) struct Connection {
    /// The server's name.
    pub(crate) name: String,
    /// The client session, shared by the server's tools.
    pub(crate) client: Arc<Client>,
    /// The tools it offered.
    pub(crate) tools: Vec<rmcp::model::Tool>,
    /// Its `instructions`, if any.
    pub(crate) instructions: Option<String>,
    group: Option<u32>,
    children: Children,
}

impl Connection {
    /// Stops the server and everything it started.
    pub(crate) fn stop(&self) {
        self.client.cancellation_token().cancel();
        if let Some(group) = self.group {
            self.children.kill(group);
        }
    }
}

/// Starts `spec`'s server over stdio, without `scrubbed` environment variables (tandem's
/// own API keys), registers its process group with `children`, and lists its tools.
pub(crate) async fn connect(
    spec: ServerSpec,
    scrubbed: Vec<String>,
    children: Children,
    asker: super::Asker,
) -> Result<Connection, ConnectError> {
    let Some(command) = spec.command.clone() else {
        return match spec.url.clone() {
            Some(url) if spec.sse => connect_sse(spec, &url, children, asker).await,
            Some(url) => connect_http(spec, &url, children, asker).await,
            None => Err(ConnectError::Nowhere),
        };
    };
    let mut cmd = tokio::process::Command::new(&command);
    for name in &scrubbed {
        cmd.env_remove(name);
    }
    if let Some(dir) = &spec.cwd {
        cmd.current_dir(dir);
    }
    cmd.args(&spec.args)
        .envs(&spec.env)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    let spawn_error = |source| ConnectError::Spawn {
        command: command.display().to_string(),
        source,
    };
    let mut group = Group::spawn(cmd).map_err(spawn_error)?;
    let (Some(stdout), Some(stdin)) = (group.take_stdout(), group.take_stdin()) else {
        return Err(spawn_error(std::io::Error::other("no pipes to the server")));
    };
    let transport = (stdout, stdin);
    let key = children.register(group);
    let fail = |error: ConnectError| {
        children.kill(key);
        error
    };
    let client = asker
        .serve(transport)
        .await
        .map_err(|e| fail(ConnectError::Handshake(e.to_string())))?;
    describe(spec.name, client, Some(key), children.clone())
        .await
        .map_err(fail)
}

/// Lists a connected server's tools and reads its instructions.
async fn describe(
    name: String,
    client: Client,
    group: Option<u32>,
    children: Children,
) -> Result<Connection, ConnectError> {
    let tools = client
        .list_all_tools()
        .await
        .map_err(|e| ConnectError::ListTools(e.to_string()))?;
    let instructions = client
        .peer_info()
        .and_then(|info| info.instructions.clone());
    Ok(Connection {
        name,
        client: Arc::new(client),
        tools,
        instructions,
        group,
        children,
    })
}

/// Connects to a streamable HTTP server.
async fn connect_http(
    spec: ServerSpec,
    url: &str,
    children: Children,
    asker: super::Asker,
) -> Result<Connection, ConnectError> {
    use rmcp::transport::StreamableHttpClientTransport;
    use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
    let headers = header_map(&spec)?
        .into_iter()
        .filter_map(|(name, value)| Some((name?, value)))
        .collect();
    let config =
        StreamableHttpClientTransportConfig::with_uri(url.to_string()).custom_headers(headers);
    let transport = StreamableHttpClientTransport::from_config(config);
    let client = asker
        .serve(transport)
        .await
        .map_err(|e| ConnectError::HttpHandshake {
            url: url.to_string(),
            reason: e.to_string(),
        })?;
    describe(spec.name, client, None, children).await
}

/// Connects to a server of the old HTTP+SSE transport (sse.rs).
async fn connect_sse(
    spec: ServerSpec,
    url: &str,
    children: Children,
    asker: super::Asker,
) -> Result<Connection, ConnectError> {
    let handshake = |reason: String| ConnectError::HttpHandshake {
        url: url.to_string(),
        reason,
    };
    let transport = super::sse::open(url, header_map(&spec)?)
        .await
        .map_err(|e| handshake(e.to_string()))?;
    let client = asker
        .serve(transport)
        .await
        .map_err(|e| handshake(e.to_string()))?;
    describe(spec.name, client, None, children).await
}

/// The entry's headers, as HTTP sends them.
fn header_map(spec: &ServerSpec) -> Result<reqwest::header::HeaderMap, ConnectError> {
    // reqwest is built without a default TLS provider; ring is ours.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let mut headers = reqwest::header::HeaderMap::new();
    for (name, value) in &spec.headers {
        let name = reqwest::header::HeaderName::from_bytes(name.as_bytes()).map_err(|e| {
            ConnectError::Header {
                what: format!("header name `{name}`"),
                reason: e.to_string(),
            }
        })?;
        let value =
            reqwest::header::HeaderValue::from_str(value).map_err(|e| ConnectError::Header {
                what: format!("value for header `{name}`"),
                reason: e.to_string(),
            })?;
        headers.insert(name, value);
    }
    Ok(headers)
}
