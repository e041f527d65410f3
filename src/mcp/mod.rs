//! MCP servers: the editor's (from `session/new`, `load`, `resume`) and the user's (config
//! files) become the model's tools, `mcp__<server>__<tool>`, run under the same permission
//! and cancellation rules as tandem's own.
//!
//! Servers connect in the background when a session opens; a turn waits for them (bounded)
//! before its first model request. A server that fails or dies never fails the session.

mod children;
mod connect;
mod tool;

use std::sync::Arc;

use parking_lot::Mutex;
use std::time::Duration;

use tokio::sync::watch;

use crate::tools::{Tool, ToolSource};
pub use children::Children;
pub use tool::exposed_name;

pub use crate::config::ServerSpec;

/// How long a server may take to start and list its tools.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

/// Merges server lists by name; later lists win (user < project < session).
pub fn merge(lists: impl IntoIterator<Item = Vec<ServerSpec>>) -> Vec<ServerSpec> {
    let mut merged: Vec<ServerSpec> = Vec::new();
    for list in lists {
        for spec in list {
            merged.retain(|s| s.name != spec.name);
            merged.push(spec);
        }
    }
    merged
}

/// One server's state.
#[derive(Debug, Clone)]
enum State {
    Connecting,
    Ready,
    Failed(String),
}

/// A session's MCP servers and the tools they offer.
pub struct Hub {
    tools: Mutex<Vec<Arc<dyn Tool>>>,
    instructions: Mutex<Vec<(String, String)>>,
    states: Mutex<Vec<(String, State)>>,
    clients: Mutex<Vec<connect::Connection>>,
    /// Counts servers still connecting; 0 means settled.
    pending: watch::Sender<usize>,
}

impl Hub {
    /// A hub with no servers.
    pub fn empty() -> Arc<Hub> {
        Arc::new(Hub {
            tools: Mutex::new(Vec::new()),
            instructions: Mutex::new(Vec::new()),
            states: Mutex::new(Vec::new()),
            clients: Mutex::new(Vec::new()),
            pending: watch::Sender::new(0),
        })
    }

    /// Starts connecting to `specs` in the background and returns at once. `scrubbed` names
    /// environment variables the servers must not inherit (tandem's API keys); the servers'
    /// process groups are registered with `children`.
    pub fn start(specs: Vec<ServerSpec>, scrubbed: Vec<String>, children: &Children) -> Arc<Hub> {
        let hub = Hub::empty();
        hub.pending.send_replace(specs.len());
        for spec in specs {
            hub.states
                .lock()
                .push((spec.name.clone(), State::Connecting));
            let hub = hub.clone();
            let scrubbed = scrubbed.clone();
            let children = children.clone();
            tokio::spawn(async move {
                let name = spec.name.clone();
                let connecting = connect::connect(spec, scrubbed, children);
                let result = tokio::time::timeout(CONNECT_TIMEOUT, connecting)
                    .await
                    .unwrap_or_else(|_| {
                        Err(format!(
                            "did not start within {} s",
                            CONNECT_TIMEOUT.as_secs()
                        ))
                    });
                hub.settle(&name, result);
            });
        }
        hub
    }

    fn settle(self: &Arc<Self>, name: &str, result: Result<connect::Connection, String>) {
        let state = match result {
            Ok(connection) => {
                tracing::info!(server = %name, tools = connection.tools.len(), "MCP server ready");
                let taken: Vec<String> = self
                    .tools
                    .lock()
                    .iter()
                    .map(|t| t.name().to_string())
                    .collect();
                let adapters = tool::adapters(&connection, &taken);
                self.tools.lock().extend(adapters);
                if let Some(text) = connection
                    .instructions
                    .clone()
                    .filter(|t| !t.trim().is_empty())
                {
                    self.instructions.lock().push((name.to_string(), text));
                }
                self.clients.lock().push(connection);
                State::Ready
            }
            Err(reason) => {
                tracing::warn!(server = %name, "MCP server unavailable: {reason}");
                State::Failed(reason)
            }
        };
        if let Some(entry) = self.states.lock().iter_mut().find(|(n, _)| n == name) {
            entry.1 = state;
        }
        self.pending.send_modify(|n| *n = n.saturating_sub(1));
    }

    /// Waits until every server is ready or has failed (each is bounded by its connect timeout).
    pub async fn settled(&self) {
        let mut rx = self.pending.subscribe();
        let _ = rx.wait_for(|n| *n == 0).await;
    }

    /// The MCP tools offered now.
    pub fn tools(&self) -> Vec<Arc<dyn Tool>> {
        self.tools.lock().clone()
    }

    /// Every server: name, `connecting` / `ready` / `failed`, and the failure's reason.
    pub fn states(&self) -> Vec<(String, &'static str, Option<String>)> {
        self.states
            .lock()
            .iter()
            .map(|(name, state)| match state {
                State::Connecting => (name.clone(), "connecting", None),
                State::Ready => (name.clone(), "ready", None),
                State::Failed(reason) => (name.clone(), "failed", Some(reason.clone())),
            })
            .collect()
    }

    /// Server instructions for the system prompt.
    pub fn instructions(&self) -> String {
        self.instructions
            .lock()
            .iter()
            .map(|(name, text)| {
                format!(
                    "\n\n## Instructions from MCP server `{name}`\n\n{}",
                    text.trim()
                )
            })
            .collect()
    }

    /// Stops every server (and everything it started).
    pub fn shutdown(&self) {
        for connection in self.clients.lock().drain(..) {
            connection.stop();
        }
    }
}

/// A session's registry reaches its MCP tools through the hub, as servers connect.
impl ToolSource for Hub {
    fn tools(&self) -> Vec<Arc<dyn Tool>> {
        Hub::tools(self)
    }

    /// When `name` belongs to a server that could not be started, what to tell the user.
    fn unavailable(&self, name: &str) -> Option<String> {
        self.states
            .lock()
            .iter()
            .find_map(|(server, state)| match state {
                State::Failed(reason) if name.starts_with(&exposed_name(server, "", &[])) => {
                    Some(format!("MCP server `{server}` is unavailable: {reason}"))
                }
                _ => None,
            })
    }
}

impl Drop for Hub {
    fn drop(&mut self) {
        self.shutdown();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn spec(name: &str, command: &str) -> ServerSpec {
        ServerSpec {
            name: name.into(),
            command: Some(command.into()),
            args: vec![],
            env: HashMap::new(),
            url: None,
            headers: HashMap::new(),
            sse: false,
        }
    }

    #[test]
    fn later_lists_win_by_name() {
        let merged = merge([
            vec![spec("a", "user"), spec("b", "user")],
            vec![spec("a", "session")],
        ]);
        assert_eq!(merged.len(), 2);
        assert_eq!(
            merged
                .iter()
                .find(|s| s.name == "a")
                .unwrap()
                .command
                .as_deref(),
            Some(std::path::Path::new("session"))
        );
    }
}
