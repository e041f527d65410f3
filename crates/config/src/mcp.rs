//! MCP servers as the config files and the editor describe them.

use std::collections::HashMap;
use std::path::PathBuf;

use serde::Deserialize;

/// How to reach one MCP server.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerSpec {
    /// The server's name (the middle part of its tools' names).
    pub name: String,
    /// Program to run (stdio transport).
    #[serde(default)]
    pub command: Option<PathBuf>,
    /// Its arguments.
    #[serde(default)]
    pub args: Vec<String>,
    /// Extra environment variables for it.
    #[serde(default)]
    pub env: HashMap<String, String>,
    /// URL of a streamable HTTP server.
    #[serde(default)]
    pub url: Option<String>,
    /// HTTP headers for it (e.g. `Authorization`).
    #[serde(default)]
    pub headers: HashMap<String, String>,
    /// The server speaks the old HTTP+SSE transport: `type = "sse"` in a config file
    /// (`"http"`, the default for a `url`, is streamable HTTP; `"stdio"` a `command`).
    #[serde(default, rename = "type", deserialize_with = "sse_type")]
    pub sse: bool,
    /// The folder it runs in: a project's own servers run in the project (their relative
    /// paths mean files there); others in tandem's working directory.
    #[serde(skip)]
    pub cwd: Option<PathBuf>,
}

/// Reads a config entry's `type`: whether it names the old HTTP+SSE transport.
fn sse_type<'de, D: serde::Deserializer<'de>>(d: D) -> Result<bool, D::Error> {
    let kind = String::deserialize(d)?;
    match kind.as_str() {
        "sse" => Ok(true),
        "http" | "streamable-http" | "stdio" => Ok(false),
        other => Err(serde::de::Error::custom(format!(
            "unknown MCP transport type `{other}`: use \"stdio\", \"http\" or \"sse\""
        ))),
    }
}

impl ServerSpec {
    /// A server tandem starts: `command` with `args` and `env`, spoken to over stdio.
    pub fn local(
        name: String,
        command: PathBuf,
        args: Vec<String>,
        env: HashMap<String, String>,
    ) -> Self {
        Self {
            name,
            command: Some(command),
            args,
            env,
            url: None,
            headers: HashMap::new(),
            sse: false,
            cwd: None,
        }
    }

    /// A server reached over HTTP (`sse` for the old HTTP+SSE transport).
    pub fn remote(name: String, url: String, headers: HashMap<String, String>, sse: bool) -> Self {
        Self {
            name,
            command: None,
            args: Vec::new(),
            env: HashMap::new(),
            url: Some(url),
            headers,
            sse,
            cwd: None,
        }
    }
}
