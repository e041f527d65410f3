//! MCP servers: the editor's (from `session/new`, `load`, `resume`), the user's (config
//! files) and the trusted ones of the project become the model's tools,
//! `mcp__<server>__<tool>`, run under the same permission and cancellation rules as tandem's
//! own.
//!
//! Servers connect in the background when a session opens; a turn waits for them (bounded)
//! before its first model request. A server the project declares and the user has not
//! trusted yet is [`Held`] instead: it starts only when the session's next prompt has asked
//! (turn/held_servers.rs), and the hub reports it as `held`, or as `not_started` once declined.
//!
//! A server that fails or dies never fails the session: one that dies has its tools
//! withdrawn from the model while tandem starts it again (stdio) or reconnects (HTTP), with a
//! growing pause between tries, and the user is told once when it goes and once when it is
//! back.
//!
//! A project's server started on the user's trust ([`Trusted`]) has its definition and the
//! files it runs read again right before every start and every restart: when they no longer
//! match what the user trusted (the model edited the script, a pull changed it), the changed
//! code is not started; the server is held again, to be asked about at the next prompt (or
//! left stopped where nobody can be asked), and the user is told. What is read is what the
//! fingerprint covers (permission/trust/runs); a change made between that reading and the
//! moment the program reads its own files is not seen.

mod asker;
mod children;
mod connect;
mod sse;
mod tool;

use std::path::PathBuf;
use std::sync::{Arc, Weak};

use parking_lot::Mutex;
use std::time::Duration;

use tokio::sync::watch;

use crate::permission::trust::Declared;
use crate::tools::{Tool, ToolSource};
pub(crate) use asker::Asker;
pub(crate) use children::Children;
pub(crate) use tool::exposed_name;

pub use crate::config::ServerSpec;

/// How long a server may take to start and list its tools.
pub(crate) const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);
/// How often a connected server is checked for having gone away.
const WATCH_EVERY: Duration = Duration::from_millis(200);
/// The first and the longest pause between tries to bring a server back.
const RETRY_FIRST: Duration = Duration::from_millis(500);
const RETRY_MOST: Duration = Duration::from_secs(60);

/// Merges server lists by name; later lists win (user < project < session).
pub(crate) fn merge(lists: impl IntoIterator<Item = Vec<ServerSpec>>) -> Vec<ServerSpec> {
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
    /// It went away after it was ready; tandem is bringing it back.
    Reconnecting(String),
    /// Declared by the project and waiting for the user's trust.
    Held(String),
    /// Declared by the project and not started (not trusted, or not allowed here).
    NotStarted(String),
}

/// A server the project declares, held back until the user trusts it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Held {
    /// The project's definition.
    pub(crate) spec: ServerSpec,
    /// The user's own server of the same name, which starts instead when the project's is not
    /// trusted.
    pub(crate) instead: Option<ServerSpec>,
    /// The file that declares it.
    pub(crate) source: PathBuf,
    /// What changed since the user trusted it, when it is held again for that.
    pub(crate) changed: Option<String>,
}

/// A project's server started because the user trusted it: what was trusted, checked again
/// before every start and restart.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Trusted {
    /// The server, as it is held again when its code changed.
    pub(crate) held: Held,
    /// The definition and the files' hashes the user trusted.
    pub(crate) declared: Declared,
    /// Whether the session can ask about it again (not `tandem exec`): a changed server is
    /// then held for the next prompt, else left stopped.
    pub(crate) asks: bool,
}

impl Trusted {
    /// What changed since it was trusted, read now (off the async threads): `None` when
    /// nothing did.
    async fn changed(&self) -> Option<String> {
        let (spec, source) = (self.held.spec.clone(), self.held.source.clone());
        let now = tokio::task::spawn_blocking(move || Declared::mcp_server(&spec, &source)).await;
        match now {
            Ok(now) => self.declared.changes(&now),
            Err(e) => Some(format!("tandem could not read its files again ({e})")),
        }
    }
}

/// One server of a session, everything the hub knows of it in one record.
struct Server {
    name: String,
    state: State,
    /// The tools it offers now (none unless it is ready).
    tools: Vec<Arc<dyn Tool>>,
    /// What it asks to be put in the system prompt.
    instructions: Option<String>,
    /// The live connection, once it is ready.
    connection: Option<connect::Connection>,
    /// The project's definition, while it waits for the user's trust.
    held: Option<Held>,
    /// What the user has not been told yet about it (it went away, or came back).
    notices: Vec<String>,
}

impl Server {
    fn new(name: &str, state: State) -> Self {
        Self {
            name: name.to_string(),
            state,
            tools: Vec::new(),
            instructions: None,
            connection: None,
            held: None,
            notices: Vec::new(),
        }
    }
}

/// A session's MCP servers and the tools they offer: one record per server, in the order
/// they were declared, behind one lock.
pub(crate) struct Hub {
    servers: Mutex<Vec<Server>>,
    /// Counts servers still connecting; 0 means settled.
    pending: watch::Sender<usize>,
    /// Environment variables no server inherits (tandem's API keys).
    scrubbed: Vec<String>,
    /// Where the servers' process groups are registered.
    children: Children,
    /// Where the servers' own questions go (the session's editor).
    asker: Asker,
}

impl Hub {
    /// A hub with no servers yet. `scrubbed` names environment variables the servers must
    /// not inherit (tandem's API keys); their process groups are registered with `children`;
    /// their questions go to `asker`.
    pub(crate) fn new(scrubbed: Vec<String>, children: Children, asker: Asker) -> Arc<Hub> {
        Arc::new(Hub {
            servers: Mutex::new(Vec::new()),
            pending: watch::Sender::new(0),
            scrubbed,
            children,
            asker,
        })
    }

    /// Runs `change` on `name`'s record, made (with `state`) when it is new.
    fn with_server<T>(&self, name: &str, state: State, change: impl FnOnce(&mut Server) -> T) -> T {
        let mut servers = self.servers.lock();
        let at = match servers.iter().position(|s| s.name == name) {
            Some(at) => at,
            None => {
                servers.push(Server::new(name, state.clone()));
                servers.len() - 1
            }
        };
        let server = &mut servers[at];
        server.state = state;
        change(server)
    }

    /// Starts connecting to `spec` in the background; [`Hub::settled`] waits for it too.
    pub(crate) fn launch(self: &Arc<Self>, spec: ServerSpec) {
        self.start(spec, None);
    }

    /// Starts the project's server the user trusted, as [`Hub::launch`] does, once its code
    /// is checked to be what was trusted (and again before every restart).
    pub(crate) fn launch_trusted(self: &Arc<Self>, trusted: Trusted) {
        self.start(trusted.held.spec.clone(), Some(trusted));
    }

    fn start(self: &Arc<Self>, spec: ServerSpec, trusted: Option<Trusted>) {
        self.with_server(&spec.name, State::Connecting, |s| s.held = None);
        self.pending.send_modify(|n| *n += 1);
        let weak = Arc::downgrade(self);
        let scrubbed = self.scrubbed.clone();
        let children = self.children.clone();
        let asker = self.asker.clone();
        tokio::spawn(async move {
            let name = spec.name.clone();
            if let Some(trusted) = &trusted
                && let Some(what) = trusted.changed().await
            {
                if let Some(hub) = weak.upgrade() {
                    hub.changed(trusted, &what);
                    hub.pending.send_modify(|n| *n = n.saturating_sub(1));
                }
                return;
            }
            let result = connect_bounded(&spec, &scrubbed, &children, &asker).await;
            let ready = result.is_ok();
            match weak.upgrade() {
                Some(hub) => hub.settle(&name, result),
                None => return,
            }
            if ready {
                supervise(weak, spec, trusted, scrubbed, children, asker).await;
            }
        });
    }

    /// Leaves the trusted project server unstarted because `what` changed since the user
    /// trusted it: held again to be asked about at the next prompt, or (nobody to ask) not
    /// started; the user is told either way.
    fn changed(self: &Arc<Self>, trusted: &Trusted, what: &str) {
        let name = trusted.held.spec.name.clone();
        tracing::warn!(server = %name, "project MCP server not started: {what} since it was trusted");
        if trusted.asks {
            let held = Held {
                changed: Some(what.to_string()),
                ..trusted.held.clone()
            };
            let why = format!(
                "declared by the project; not started because {what} since you trusted it: tandem asks again at the session's next prompt"
            );
            self.with_server(&name, State::Held(why), |s| {
                s.held = Some(held);
                s.notices.push(format!(
                    "MCP server `{name}` was not started: {what} since you trusted it. tandem asks about it again at your next prompt."
                ));
            });
            return;
        }
        let why = format!(
            "declared by the project; not started because {what} since it was trusted, and this session cannot ask"
        );
        self.with_server(&name, State::NotStarted(why), |s| {
            s.held = None;
            s.notices.push(format!(
                "MCP server `{name}` was not started: {what} since it was trusted, and nobody can be asked here."
            ));
        });
        if let Some(instead) = trusted.held.instead.clone() {
            self.launch(instead);
        }
    }

    /// Holds `held` back until the user has been asked; `why` is what `_tandem/status` says.
    pub(crate) fn hold(&self, held: Held, why: String) {
        let name = held.spec.name.clone();
        self.with_server(&name, State::Held(why), |s| s.held = Some(held));
    }

    /// The servers held back so far, now to be asked about (they stay `held` until
    /// [`Hub::launch`]ed, [`Hub::decline`]d or held again).
    pub(crate) fn take_held(&self) -> Vec<Held> {
        self.servers
            .lock()
            .iter_mut()
            .filter_map(|s| s.held.take())
            .collect()
    }

    /// Records that the project's server `name` was not started, and why.
    pub(crate) fn decline(&self, name: &str, why: String) {
        tracing::info!(server = %name, "project MCP server not started: {why}");
        self.with_server(name, State::NotStarted(why), |s| s.held = None);
    }

    /// Takes back the tools, instructions and client of `name`, which went away.
    fn withdraw(&self, name: &str, reason: &str) {
        let stopped = self.with_server(name, State::Reconnecting(reason.to_string()), |s| {
            s.tools.clear();
            s.instructions = None;
            s.notices.push(format!(
                "MCP server `{name}` stopped ({reason}); its tools are withdrawn while tandem brings it back."
            ));
            s.connection.take()
        });
        if let Some(connection) = stopped {
            connection.stop();
        }
        tracing::warn!(server = %name, "MCP server stopped ({reason}); its tools are withdrawn while it is brought back");
    }

    /// Offers `connection`'s tools (again): the server is ready.
    fn offer(&self, name: &str, connection: connect::Connection) {
        let taken: Vec<String> = self
            .servers
            .lock()
            .iter()
            .filter(|s| s.name != name)
            .flat_map(|s| s.tools.iter().map(|t| t.name().to_string()))
            .collect();
        let adapters = tool::adapters(&connection, &taken);
        let instructions = connection
            .instructions
            .clone()
            .filter(|t| !t.trim().is_empty());
        let replaced = self.with_server(name, State::Ready, |s| {
            s.tools = adapters;
            s.instructions = instructions;
            s.connection.replace(connection)
        });
        if let Some(old) = replaced {
            old.stop();
        }
    }

    /// What the user should be told about the servers since the last time, once.
    pub(crate) fn take_notices(&self) -> Vec<String> {
        self.servers
            .lock()
            .iter_mut()
            .flat_map(|s| std::mem::take(&mut s.notices))
            .collect()
    }

    /// Whether `name`'s connection has gone away.
    fn closed(&self, name: &str) -> bool {
        self.servers
            .lock()
            .iter()
            .find(|s| s.name == name)
            .and_then(|s| s.connection.as_ref())
            .is_some_and(|c| c.client.is_closed() || c.client.is_transport_closed())
    }

    fn settle(
        self: &Arc<Self>,
        name: &str,
        result: Result<connect::Connection, connect::ConnectError>,
    ) {
        match result {
            Ok(connection) => {
                tracing::info!(server = %name, tools = connection.tools.len(), "MCP server ready");
                self.offer(name, connection);
            }
            Err(reason) => {
                tracing::warn!(server = %name, "MCP server unavailable: {reason}");
                self.with_server(name, State::Failed(reason.to_string()), |_| ());
            }
        }
        self.pending.send_modify(|n| *n = n.saturating_sub(1));
    }

    /// Waits until every server is ready or has failed (each is bounded by its connect timeout).
    pub(crate) async fn settled(&self) {
        let mut rx = self.pending.subscribe();
        let _ = rx.wait_for(|n| *n == 0).await;
    }

    /// The MCP tools offered now, server by server in the order they were declared.
    pub(crate) fn tools(&self) -> Vec<Arc<dyn Tool>> {
        self.servers
            .lock()
            .iter()
            .flat_map(|s| s.tools.iter().cloned())
            .collect()
    }

    /// Every server: name, `connecting` / `ready` / `failed` / `reconnecting` / `held` /
    /// `not_started`, and the reason.
    pub(crate) fn states(&self) -> Vec<(String, &'static str, Option<String>)> {
        self.servers
            .lock()
            .iter()
            .map(|s| {
                let (word, reason) = s.state.describe();
                (s.name.clone(), word, reason)
            })
            .collect()
    }

    /// Server instructions for the system prompt.
    pub(crate) fn instructions(&self) -> String {
        self.servers
            .lock()
            .iter()
            .filter_map(|s| {
                let text = s.instructions.as_ref()?;
                Some(format!(
                    "\n\n## Instructions from MCP server `{}`\n\n{}",
                    s.name,
                    text.trim()
                ))
            })
            .collect()
    }

    /// Stops every server (and everything it started).
    pub(crate) fn shutdown(&self) {
        let connections: Vec<_> = self
            .servers
            .lock()
            .iter_mut()
            .filter_map(|s| s.connection.take())
            .collect();
        for connection in connections {
            connection.stop();
        }
    }
}

impl State {
    /// The state's word for `_tandem/status`, and its reason.
    fn describe(&self) -> (&'static str, Option<String>) {
        match self {
            State::Connecting => ("connecting", None),
            State::Ready => ("ready", None),
            State::Failed(reason) => ("failed", Some(reason.clone())),
            State::Reconnecting(reason) => ("reconnecting", Some(reason.clone())),
            State::Held(reason) => ("held", Some(reason.clone())),
            State::NotStarted(reason) => ("not_started", Some(reason.clone())),
        }
    }

    /// Why the server's tools cannot be called, when they cannot.
    fn unavailable(&self) -> Option<&str> {
        match self {
            State::Failed(reason)
            | State::Reconnecting(reason)
            | State::Held(reason)
            | State::NotStarted(reason) => Some(reason),
            State::Connecting | State::Ready => None,
        }
    }
}

/// Starts `spec`'s server, giving up after [`CONNECT_TIMEOUT`].
async fn connect_bounded(
    spec: &ServerSpec,
    scrubbed: &[String],
    children: &Children,
    asker: &Asker,
) -> Result<connect::Connection, connect::ConnectError> {
    let asker = asker.for_server(&spec.name);
    let (spec, scrubbed) = (spec.clone(), scrubbed.to_vec());
    let connecting = connect::connect(spec, scrubbed, children.clone(), asker);
    tokio::time::timeout(CONNECT_TIMEOUT, connecting)
        .await
        .unwrap_or(Err(connect::ConnectError::Timeout(
            CONNECT_TIMEOUT.as_secs(),
        )))
}

/// Watches a ready server for as long as its session lives; when it goes away, withdraws its
/// tools and brings it back, pausing longer after each failed try. A `trusted` project
/// server is checked before each try, and not brought back once its code changed.
async fn supervise(
    hub: Weak<Hub>,
    spec: ServerSpec,
    trusted: Option<Trusted>,
    scrubbed: Vec<String>,
    children: Children,
    asker: Asker,
) {
    let name = spec.name.clone();
    loop {
        tokio::time::sleep(WATCH_EVERY).await;
        let Some(live) = hub.upgrade() else { return };
        if !live.closed(&name) {
            continue;
        }
        live.withdraw(&name, "its connection closed");
        drop(live);
        let mut pause = RETRY_FIRST;
        loop {
            if let Some(trusted) = &trusted
                && let Some(what) = trusted.changed().await
            {
                if let Some(live) = hub.upgrade() {
                    live.changed(trusted, &what);
                }
                return;
            }
            let result = connect_bounded(&spec, &scrubbed, &children, &asker).await;
            let Some(live) = hub.upgrade() else {
                if let Ok(connection) = result {
                    connection.stop();
                }
                return;
            };
            match result {
                Ok(connection) => {
                    tracing::info!(server = %name, "MCP server is back");
                    live.offer(&name, connection);
                    live.with_server(&name, State::Ready, |s| {
                        s.notices.push(format!(
                            "MCP server `{name}` is back; its tools are offered again."
                        ));
                    });
                    break;
                }
                Err(reason) => {
                    tracing::warn!(server = %name, retry_in = ?pause, "MCP server still down: {reason}");
                    live.with_server(&name, State::Reconnecting(reason.to_string()), |_| ());
                }
            }
            drop(live);
            tokio::time::sleep(pause).await;
            pause = (pause * 2).min(RETRY_MOST);
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
        self.servers.lock().iter().find_map(|s| {
            let reason = s.state.unavailable()?;
            name.starts_with(&exposed_name(&s.name, "", &[]))
                .then(|| format!("MCP server `{}` is unavailable: {reason}", s.name))
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

    fn spec(name: &str, command: &str) -> ServerSpec {
        ServerSpec::local(name.into(), command.into(), Vec::new(), Default::default())
    }

    #[test]
    fn held_servers_are_reported_until_declined_and_say_why_they_are_unavailable() {
        let hub = Hub::new(Vec::new(), Children::default(), Asker::nobody());
        let held = Held {
            spec: spec("proj", "theirs"),
            instead: None,
            source: "/p/.tandem/config.toml".into(),
            changed: None,
        };
        hub.hold(held.clone(), "waiting".into());
        assert_eq!(
            hub.states(),
            [("proj".to_string(), "held", Some("waiting".to_string()))]
        );
        assert_eq!(hub.take_held(), [held]);
        assert!(hub.take_held().is_empty(), "taken once");
        hub.decline("proj", "not trusted".into());
        assert_eq!(hub.states()[0].1, "not_started");
        assert_eq!(
            ToolSource::unavailable(&*hub, "mcp__proj__echo").as_deref(),
            Some("MCP server `proj` is unavailable: not trusted")
        );
        assert_eq!(ToolSource::unavailable(&*hub, "mcp__other__echo"), None);
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
