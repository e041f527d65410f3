//! Sessions: the manager maps ids to handles; each session is an actor task (actor.rs), which
//! queues what comes while a turn runs (queue.rs).
//! The model server's key is re-read after a refusal and at each opening (credentials.rs),
//! so a new `tandem login` serves sessions already open.
//!
//! This file holds what the manager does with sessions that are open (prompts, settings,
//! rewinds, cancels, closing). The rest of `impl SessionManager`, one concern a file: opening a
//! session every way the editor can (open.rs), starting its actor (start.rs), and which of the
//! project's MCP servers it starts or holds back (trust.rs).

mod actor;
pub mod commands;
mod credentials;
mod discovery;
pub(crate) mod instructions;
mod live;
mod open;
pub(crate) mod options;
pub(crate) mod playback;
mod queue;
mod ran;
mod sandbox;
mod settle;
mod start;
mod status;
mod trust;

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use parking_lot::Mutex;

use tokio::sync::oneshot;

use crate::client::{ClientCaps, ClientOps};
use crate::config::Config;
use crate::config::Settings;
use crate::model::wire::missing_key_error;
use crate::model::{ModelClient, ModelError};
use crate::store::{self, Line, Store};
use crate::tools::Entry;
use crate::types::EventSink;
use crate::types::OptionView;
use crate::types::Prompt;
use actor::Command;
pub use credentials::{EndpointChange, LogoutError};
use credentials::{SessionModel, Shared};
use discovery::Discovery;
use live::{Live, keep_if_used};
use options::OptionError;
pub(crate) use ran::Ran;
pub(crate) use status::LiveSession;

/// Why a session request failed; converted to a JSON-RPC error in acp/errors.rs.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// No session has this id.
    #[error("unknown session `{0}`")]
    NotFound(String),
    /// A request about a subagent's session other than `session/cancel`.
    #[error(
        "session `{id}` is a subagent's, owned by session `{parent}`: only its work can be stopped (session/cancel); prompt the parent session instead"
    )]
    Subagent {
        /// The child.
        id: String,
        /// Its parent.
        parent: String,
    },
    /// A message meant for a running turn, with none running.
    #[error(
        "session `{0}` has no running turn to steer: send the message as a prompt (session/prompt)"
    )]
    Idle(String),
    /// A message meant for a running turn that is not the model's (a rewind, `/compact`,
    /// an action).
    #[error(
        "the session is running a command, not a model turn, so there is nothing to steer: send the message as a prompt (session/prompt), which runs once the command ends"
    )]
    NotSteerable,
    /// The running turn would not take the message: a hook blocked it, or the model could
    /// never read it.
    #[error("the message was not sent to the model: {0}")]
    SteerRefused(String),
    /// The turn ended (or was cancelled) before the message reached the model.
    #[error(
        "the turn ended before the message reached the model, so it was not sent: send it as a prompt (session/prompt)"
    )]
    NotDelivered,
    /// The request's parameters are wrong.
    #[error("{0}")]
    InvalidParams(String),
    /// A config option or value is wrong.
    #[error(transparent)]
    Option(#[from] OptionError),
    /// The model failed.
    #[error(transparent)]
    Model(ModelError),
    /// Another tandem process has the session open.
    #[error(
        "session `{0}` is open in another tandem process (another editor window, or `tandem exec --session`): close it there to continue it here, or fork it (`session/fork`) to go on from a copy"
    )]
    InUse(String),
    /// The transcript store failed.
    #[error("session storage failed: {0}")]
    Store(store::StoreError),
    /// Something inside tandem broke.
    #[error("{0}")]
    Internal(String),
}

impl From<store::StoreError> for SessionError {
    fn from(e: store::StoreError) -> Self {
        match e {
            store::StoreError::NotFound(id) => SessionError::NotFound(id),
            store::StoreError::Busy(id) => SessionError::InUse(id),
            e @ store::StoreError::NoSuchTurn { .. } => SessionError::InvalidParams(e.to_string()),
            other => SessionError::Store(other),
        }
    }
}

/// The editor a session talks to: where its events go, what it can be asked to do, and
/// which of those it advertised.
pub struct EditorLink {
    /// Where events go.
    pub sink: Arc<dyn EventSink>,
    /// Requests to the editor.
    pub ops: Arc<dyn ClientOps>,
    /// What the editor can do.
    pub caps: ClientCaps,
    /// The editor's own instructions for this session (ACP `systemPrompt`, added after
    /// tandem's), when it sent some with the opening.
    pub instructions: Option<String>,
}

/// An opened session's id and what the editor should show for it.
pub struct NewSession {
    /// Its slash commands, announced after the response.
    pub commands: Vec<commands::SlashCommand>,
    /// The id.
    pub id: String,
    /// The settings it starts with.
    pub settings: Settings,
    /// Its config options.
    pub options: Vec<OptionView>,
    /// For `session/load`: what the editor is shown before the response. The connection
    /// sends it, from its own task.
    pub replay: Replay,
}

/// What a load shows before its response: the stored conversation, and nothing else. The
/// mode and options travel in the response itself: an update about them sent before it
/// reaches a client that has no session yet to apply it to (agent-shell prints "Session
/// mode: nil"). The updates are made where they are sent, on the connection's thread.
#[derive(Debug, Default)]
pub struct Replay {
    /// The transcript's records.
    pub lines: Vec<Line>,
}

impl Replay {
    /// The updates, in order, made a batch at a time as they are sent.
    pub fn playback(&self) -> playback::Playback<'_> {
        playback::Playback::new(&self.lines)
    }
}

/// The configuration new sessions are made from, with its model client and what its server
/// said about itself. Replaced whole when `tandem login` stored a key after start-up
/// (credentials.rs).
struct Backend {
    config: Arc<Config>,
    client: Arc<dyn ModelClient>,
    discovered: Discovery,
}

/// Owns every live session of a connection.
pub struct SessionManager {
    /// The configuration and client, shared with the sessions' [`SessionModel`]s.
    shared: Arc<Shared>,
    /// The built-in tools with their specs, made at the first session for every session.
    builtins: std::sync::OnceLock<Vec<Entry>>,
    store: Store,
    sessions: Mutex<HashMap<String, Live>>,
    /// The MCP server processes its sessions started, killed at shutdown.
    children: crate::mcp::Children,
    /// The subagents its sessions run in sessions of their own, while they work.
    subagents: crate::turn::ChildSessions,
    /// The transcripts of the sessions the end of the connection ended ([`Self::end_all`]),
    /// kept open as long as the manager: the exit still tries again, and names, what a full
    /// disk refused of them (`store::write_out` sees only open transcripts).
    ended: Mutex<Vec<store::Transcript>>,
}

impl SessionManager {
    /// A manager whose sessions ask `client`.
    pub fn new(config: Arc<Config>, client: Arc<dyn ModelClient>) -> Self {
        let store = Store::new(&config.home);
        // Once per process: a private data directory, no partial forks left by a crash.
        store.tidy();
        let shared = Arc::new(Shared::new(Backend {
            discovered: discovery::start(&config),
            config,
            client,
        }));
        shared.look_up_stored_keys();
        Self {
            shared,
            builtins: std::sync::OnceLock::new(),
            store,
            sessions: Mutex::new(HashMap::new()),
            children: crate::mcp::Children::default(),
            subagents: crate::turn::ChildSessions::default(),
            ended: Mutex::default(),
        }
    }

    fn backend(&self) -> Arc<Backend> {
        self.shared.current()
    }

    /// The configuration new sessions are created from.
    pub fn config(&self) -> Arc<Config> {
        self.backend().config.clone()
    }

    fn discovered(&self) -> Discovery {
        self.backend().discovered.clone()
    }

    /// Begins asking the model server about itself (discovery.rs) and the system whether it
    /// can sandbox, once a session's answer has gone out: no opening waits for either.
    pub fn begin_background_work(&self) {
        self.discovered().begin();
        sandbox::check_soon(&self.config());
    }

    /// Whether model requests can be made at all (a hosted server needs a key). Without one,
    /// after the server refused the key, or after a login or logout renewed the login stamp,
    /// the configuration is read again first: `tandem login` may have stored a key (or chosen
    /// a server that needs none) since, or `tandem logout` taken it away. A refused key with
    /// nothing new is left for the server to judge again.
    pub(crate) fn check_credentials(&self) -> Result<(), ModelError> {
        self.shared.settled();
        let missing = missing_key(&self.config());
        if missing.is_none() && !self.shared.is_refused() && !self.shared.store_changed() {
            return Ok(());
        }
        match (self.shared.reload(), missing) {
            (Some(config), _) => missing_key(&config).map_or(Ok(()), Err),
            (None, Some(error)) => Err(error),
            (None, None) => Ok(()),
        }
    }

    /// Whether the keys `tandem login` stored are still being looked up (at start-up, on a
    /// thread of their own): until then the configuration has none of them.
    pub fn looking_up_stored_keys(&self) -> bool {
        self.shared.looking_up()
    }

    /// ACP's `logout` (see `Shared::logout`).
    pub fn logout(&self) -> Result<(), LogoutError> {
        self.shared.logout()
    }

    /// ACP's `providers/set` (see `Shared::set_endpoint`).
    pub fn set_endpoint(&self, change: EndpointChange) -> Result<(), String> {
        self.shared.set_endpoint(change)
    }

    /// `authenticate`: the editor says a login may have happened, so the configuration and
    /// the stored key are read again, whatever this process saw before; then whether a key
    /// can be used now (one the server needs is there), and not the one the server refused.
    pub fn authenticate(&self) -> Result<(), ModelError> {
        self.shared.settled();
        let config = self.shared.reload().unwrap_or_else(|| self.config());
        if let Some(missing) = missing_key(&config) {
            return Err(missing);
        }
        self.shared.refusal().map_or(Ok(()), Err)
    }

    /// Stored sessions, newest first (see [`Store::list`]); a session open here reports the
    /// folders it has now.
    pub fn list(
        &self,
        cwd: Option<&Path>,
        cursor: Option<&str>,
    ) -> (Vec<store::Summary>, Option<String>) {
        let (mut page, next) = self.store.list(cwd, cursor);
        let sessions = self.sessions.lock();
        for summary in &mut page {
            if let Some(live) = sessions.get(&summary.id) {
                summary.folders = live.status.folders.clone();
            }
        }
        (page, next)
    }

    /// The sessions open in this process, sorted by id.
    pub fn live(&self) -> Vec<LiveSession> {
        let config = self.config();
        let mut out: Vec<LiveSession> = self
            .sessions
            .lock()
            .iter()
            .map(|(id, live)| live.status.report(id, &config))
            .collect();
        out.sort_by(|a, b| a.id.cmp(&b.id));
        out
    }

    /// The end of the connection: the MCP servers its sessions started are killed (none
    /// outlives tandem), and every session still open ends ([`Self::end_all`]). A session that
    /// never got a prompt is kept too (unlisted): a client may make one ahead and prompt it
    /// from its next process (`acpx sessions new`, then `acpx prompt`, resumes it); only
    /// `session/close` says it is done with.
    pub async fn shutdown(&self) {
        self.children.kill_all();
        self.end_all().await;
    }

    /// Ends every open session, all at once (the connection is ending; lifecycle.rs calls it
    /// while the editor may still read): each as `session/close` ends one (its turn ended,
    /// its background commands stopped, its sandbox folder removed), then its transcript is
    /// written out (what a full disk refuses waits in memory for the exit's last tries).
    /// Sessions ended here are kept, whether prompted or not.
    pub async fn end_all(&self) {
        let open: Vec<Live> = self.sessions.lock().drain().map(|(_, live)| live).collect();
        let transcripts: Vec<store::Transcript> = open
            .iter()
            .map(|live| live.status.transcript.clone())
            .collect();
        futures::future::join_all(open.into_iter().map(Live::stop)).await;
        for transcript in &transcripts {
            transcript.flush().await;
        }
        self.ended.lock().extend(transcripts);
    }

    /// A stored session's records (with what an open one has queued), for
    /// `_tandem/session/export`.
    pub async fn records(&self, id: &str) -> Result<Vec<Line>, SessionError> {
        self.flush_open(id).await;
        Ok(self.store.read(id)?)
    }

    /// Frees an open session at once (its running turn is cancelled, its MCP servers
    /// stopped); the future resolves once the session has ended as [`Live::stop`] says (its
    /// commands stopped, its sandbox folder removed) and its transcript is written out, or
    /// gone when the session never got a prompt.
    pub fn close(
        &self,
        id: &str,
    ) -> impl Future<Output = Result<(), SessionError>> + Send + 'static {
        let closed = self.sessions.lock().remove(id).map(|live| {
            let transcript = live.status.transcript.clone();
            (transcript, live.stop())
        });
        let (store, id) = (self.store.clone(), id.to_string());
        async move {
            let (transcript, stopped) = closed.ok_or_else(|| SessionError::NotFound(id.clone()))?;
            stopped.await;
            keep_if_used(&store, &id, &transcript).await;
            Ok(())
        }
    }

    /// Closes a session if open (as [`Self::close`] does) and removes its transcript.
    pub fn delete(
        &self,
        id: &str,
    ) -> impl Future<Output = Result<(), SessionError>> + Send + 'static {
        let stopped = self.sessions.lock().remove(id).map(Live::stop);
        let (store, id) = (self.store.clone(), id.to_string());
        async move {
            let was_open = stopped.is_some();
            if let Some(stopped) = stopped {
                stopped.await;
            }
            match store.delete(&id) {
                Ok(()) => Ok(()),
                Err(store::StoreError::NotFound(_)) if was_open => Ok(()),
                Err(e) => Err(e.into()),
            }
        }
    }

    /// Runs a prompt to its end; resolves when the turn stops (the in-process tests' way in).
    #[cfg(any(test, feature = "testkit"))]
    pub(crate) async fn prompt(
        &self,
        id: &str,
        parts: Vec<crate::types::UserPart>,
    ) -> Result<crate::types::StopReason, SessionError> {
        self.run(id, parts, None).await.map(|ran| ran.stop)
    }

    /// Runs a prompt (or a slash command), whose final answer must follow `output` when
    /// given; returns how it ended with a command action's output or the structured answer.
    /// The prompt reaches the session when this is called, not when the future is first
    /// polled: a cancel sent after it finds it running.
    pub fn run(
        &self,
        id: &str,
        prompt: impl Into<Prompt>,
        output: Option<Arc<crate::output_schema::OutputSchema>>,
    ) -> impl Future<Output = Result<Ran, SessionError>> + Send + 'static {
        let prompt = prompt.into();
        self.discovered().ask_again_if_unanswered();
        self.ask(id, |reply| Command::Prompt {
            prompt,
            output,
            reply,
        })
    }

    /// Goes `back` to before a turn of an open session (or lists its turns), deciding about
    /// files changed since tandem wrote them by `conflicts`; waits for a running turn.
    pub fn rewind(
        &self,
        id: &str,
        back: crate::turn::Back,
        conflicts: crate::turn::Conflicts,
    ) -> impl Future<Output = Result<Ran, SessionError>> + Send + 'static {
        self.ask(id, move |reply| Command::Rewind {
            back,
            conflicts,
            reply,
        })
    }

    /// Sends `prompt` to the running turn of an open session; resolves once the model's
    /// next request holds it (an error when no turn runs, or it ended first).
    pub fn steer(
        &self,
        id: &str,
        prompt: impl Into<Prompt>,
    ) -> impl Future<Output = Result<(), SessionError>> + Send + 'static {
        let prompt = prompt.into();
        self.ask(id, |reply| Command::Steer { prompt, reply })
    }

    /// The slash commands (built-in, custom, actions) of an open session.
    pub fn commands(&self, id: &str) -> Result<Vec<commands::SlashCommand>, SessionError> {
        self.sessions
            .lock()
            .get(id)
            .map(|live| live.commands.clone())
            .ok_or_else(|| SessionError::NotFound(id.to_string()))
    }

    /// Cancels the running turn, if any; for a subagent's session, its work alone.
    pub fn cancel(&self, id: &str) -> Result<(), SessionError> {
        if self.subagents.cancel(id) {
            return Ok(());
        }
        self.send(id, Command::Cancel)
    }

    /// Cancels the running turn of every open session (the connection is ending); returns
    /// how many sessions were told.
    pub fn cancel_all(&self) -> usize {
        let sessions = self.sessions.lock();
        sessions
            .values()
            .filter(|live| live.tx.send(Command::Cancel).is_ok())
            .count()
    }

    /// Switches the mode (`session/set_mode`); like [`Self::run`], sent at once.
    pub fn set_mode(
        &self,
        id: &str,
        mode: &str,
    ) -> impl Future<Output = Result<(), SessionError>> + Send + 'static {
        let mode = mode.to_string();
        self.ask(id, |reply| Command::SetMode { mode, reply })
    }

    /// Sets a config option; answers with every option as it now stands. Sent at once.
    pub fn set_option(
        &self,
        id: &str,
        option: &str,
        value: &str,
    ) -> impl Future<Output = Result<Vec<OptionView>, SessionError>> + Send + 'static {
        let (option, value) = (option.to_string(), value.to_string());
        self.ask(id, |reply| Command::SetOption {
            option,
            value,
            reply,
        })
    }

    /// Sends the command `make` builds to the session's actor now; the future waits for the
    /// actor's reply.
    fn ask<T: Send + 'static>(
        &self,
        id: &str,
        make: impl FnOnce(oneshot::Sender<Result<T, SessionError>>) -> Command,
    ) -> impl Future<Output = Result<T, SessionError>> + Send + 'static {
        let (reply, answer) = oneshot::channel();
        let sent = self.send(id, make(reply));
        let id = id.to_string();
        async move {
            sent?;
            answer.await.map_err(|_| gone(&id))?
        }
    }

    fn send(&self, id: &str, command: Command) -> Result<(), SessionError> {
        let sessions = self.sessions.lock();
        let live = sessions
            .get(id)
            .ok_or_else(|| match self.subagents.parent_of(id) {
                Some(parent) => SessionError::Subagent {
                    id: id.to_string(),
                    parent,
                },
                None => SessionError::NotFound(id.to_string()),
            })?;
        live.tx.send(command).map_err(|_| gone(id))
    }
}

fn gone(id: &str) -> SessionError {
    SessionError::Internal(format!("session `{id}` stopped unexpectedly"))
}

/// Why no model request can be made with `config`: a hosted server without a key.
pub fn missing_key(config: &Config) -> Option<ModelError> {
    let endpoint = &config.endpoint;
    (config.replay.is_none() && endpoint.requires_key && endpoint.api_key.is_none())
        .then(|| missing_key_error(&endpoint.base_url, &endpoint.api_key_env))
}
