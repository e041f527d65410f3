//! Sessions: the manager maps ids to handles; each session is an actor task (actor.rs).

mod actor;
pub mod commands;
pub mod instructions;
pub mod options;
pub mod playback;
mod start;
mod status;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use parking_lot::Mutex;

use tokio::sync::{mpsc, oneshot};

use crate::client::{ClientCaps, ClientOps};
use crate::config::Config;
use crate::config::Settings;
use crate::mcp::ServerSpec;
use crate::model::openai::missing_key_error;
use crate::model::{ModelClient, ModelError};
use crate::store::{self, Line, Record, Store};
use crate::tools::Registry;
use crate::turn::TurnContext;
use crate::types::EventSink;
use crate::types::Mode;
use crate::types::OptionView;
use crate::types::StopReason;
use crate::types::TurnEvent;
use crate::types::UserPart;
use actor::Command;
pub use actor::Ran;
use options::OptionError;
use start::Start;
pub use status::LiveSession;

/// Why a session request failed; converted to a JSON-RPC error in acp/errors.rs.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// No session has this id.
    #[error("unknown session `{0}`")]
    NotFound(String),
    /// A prompt is already running.
    #[error("session `{0}` is already answering a prompt; send session/cancel first")]
    Busy(String),
    /// The request's parameters are wrong.
    #[error("{0}")]
    InvalidParams(String),
    /// A config option or value is wrong.
    #[error(transparent)]
    Option(#[from] OptionError),
    /// The model failed.
    #[error(transparent)]
    Model(ModelError),
    /// The transcript store failed.
    #[error("session storage failed: {0}")]
    Store(store::StoreError),
    /// Something inside tandem broke.
    #[error("{0}")]
    Internal(String),
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
}

/// Owns every live session of a connection.
pub struct SessionManager {
    config: Arc<Config>,
    client: Arc<dyn ModelClient>,
    tools: Arc<Registry>,
    store: Store,
    sessions: Mutex<HashMap<String, Live>>,
}

impl SessionManager {
    /// A manager whose sessions ask `client`.
    pub fn new(config: Arc<Config>, client: Arc<dyn ModelClient>) -> Self {
        Self {
            config: config.clone(),
            client,
            tools: Arc::new(Registry::standard()),
            store: Store::new(&config.home),
            sessions: Mutex::new(HashMap::new()),
        }
    }

    /// The configuration sessions are created from.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Whether model requests can be made at all (a hosted server needs a key).
    pub fn check_credentials(&self) -> Result<(), ModelError> {
        let endpoint = &self.config.endpoint;
        if self.config.replay.is_none() && endpoint.requires_key && endpoint.api_key.is_none() {
            return Err(missing_key_error(&endpoint.base_url, &endpoint.api_key_env));
        }
        Ok(())
    }

    /// Starts a session in `cwd`, which must be an absolute path to an existing directory;
    /// its tools reach the editor through `editor` as far as `caps` allow.
    pub fn create(
        &self,
        cwd: PathBuf,
        editor: EditorLink,
        servers: Vec<ServerSpec>,
        requested_id: Option<String>,
    ) -> Result<NewSession, SessionError> {
        let EditorLink {
            sink,
            ops: editor,
            caps,
        } = editor;
        check_cwd(&cwd)?;
        self.check_credentials().map_err(SessionError::Model)?;
        let id = match requested_id {
            // Scripts (a hand-written ndjson file) name their session to refer to it later.
            Some(id) => {
                if !store::valid_id(&id) {
                    return Err(SessionError::InvalidParams(format!(
                        "requested session id `{id}` may only use letters, digits, `-` and `_` (at most 64)"
                    )));
                }
                if self.store.exists(&id) || self.sessions.lock().contains_key(&id) {
                    return Err(SessionError::InvalidParams(format!(
                        "a session `{id}` already exists; load it with session/load, or choose another id"
                    )));
                }
                id
            }
            None => uuid::Uuid::new_v4().to_string(),
        };
        let transcript = self.store.create(&id, &cwd).map_err(SessionError::Store)?;
        let settings = Settings::initial(&self.config);
        // The starting settings, so a later load restores them even if never changed.
        transcript.append(Record::Settings {
            mode: settings.mode.id().to_string(),
            model: settings.model.clone(),
            reasoning_effort: settings.reasoning_effort.clone(),
        });
        tracing::info!(session = %id, "session created");
        Ok(self.start(Start {
            mcp: self.mcp_hub(&cwd, servers),
            id,
            cwd,
            sink,
            editor,
            caps,
            settings,
            history: Vec::new(),
            transcript,
            title: None,
            source: "new",
        }))
    }

    /// Opens a stored session in `cwd` with its history, mode and model. With `replay`, the
    /// whole conversation is sent to the editor first (`session/load`); without, it is not
    /// (`session/resume`). A session already open here is reopened from its transcript.
    pub fn load(
        &self,
        id: &str,
        cwd: PathBuf,
        editor: EditorLink,
        replay: bool,
        servers: Vec<ServerSpec>,
    ) -> Result<NewSession, SessionError> {
        let source = if replay { "load" } else { "resume" };
        self.open_stored(id, cwd, editor, replay, servers, source)
    }

    /// [`Self::load`], telling `session_start` hooks how the session was opened.
    fn open_stored(
        &self,
        id: &str,
        cwd: PathBuf,
        editor: EditorLink,
        replay: bool,
        servers: Vec<ServerSpec>,
        source: &'static str,
    ) -> Result<NewSession, SessionError> {
        let EditorLink {
            sink,
            ops: editor,
            caps,
        } = editor;
        check_cwd(&cwd)?;
        self.check_credentials().map_err(SessionError::Model)?;
        let (lines, transcript) = self.store.open(id).map_err(|e| match e {
            store::StoreError::NotFound(id) => SessionError::NotFound(id),
            other => SessionError::Store(other),
        })?;
        self.sessions.lock().remove(id);
        let settings = self.restored_settings(&lines);
        let title = lines.iter().rev().find_map(|l| match &l.record {
            Record::Title { title } => Some(title.clone()),
            _ => None,
        });
        if replay {
            for event in playback::events(&lines) {
                sink.emit(id, event);
            }
        }
        let history = store::record::history(&lines);
        tracing::info!(session = %id, records = lines.len(), messages = history.len(), replay, "session opened from its transcript");
        let mcp = self.mcp_hub(&cwd, servers);
        let opened = self.start(Start {
            mcp,
            id: id.to_string(),
            cwd,
            sink: sink.clone(),
            editor,
            caps,
            settings,
            history,
            transcript,
            title,
            source,
        });
        if replay {
            sink.emit(id, TurnEvent::ModeChanged(opened.settings.mode));
            sink.emit(id, TurnEvent::OptionsChanged(opened.options.clone()));
        }
        Ok(opened)
    }

    /// A new session with a copy of `id`'s history so far (open or only stored), working in
    /// `cwd` or where `id` did, with the editor's MCP `servers`; the two go their own ways
    /// from here.
    pub fn fork(
        &self,
        id: &str,
        cwd: Option<PathBuf>,
        editor: EditorLink,
        servers: Vec<ServerSpec>,
    ) -> Result<NewSession, SessionError> {
        if let Some(cwd) = &cwd {
            check_cwd(cwd)?;
        }
        let new_id = uuid::Uuid::new_v4().to_string();
        let cwd = self
            .store
            .fork(id, &new_id, cwd.as_deref())
            .map_err(|e| match e {
                store::StoreError::NotFound(id) => SessionError::NotFound(id),
                other => SessionError::Store(other),
            })?;
        tracing::info!(from = %id, session = %new_id, "session forked");
        self.open_stored(&new_id, cwd, editor, false, servers, "fork")
    }

    /// Starts the session's MCP servers: the user's, then the project's, then the editor's
    /// (later ones win by name). They never see tandem's own API key (unless `share_api_key`).
    fn mcp_hub(&self, cwd: &Path, servers: Vec<ServerSpec>) -> Arc<crate::mcp::Hub> {
        let specs = crate::mcp::merge([
            self.config.mcp_servers.clone(),
            crate::mcp::project_servers(cwd),
            servers,
        ]);
        crate::mcp::Hub::start(specs, crate::secrets::hidden_vars())
    }

    /// The last recorded settings that still make sense with this configuration.
    fn restored_settings(&self, lines: &[Line]) -> Settings {
        let mut settings = Settings::initial(&self.config);
        if let Some((mode, model, effort)) = lines.iter().rev().find_map(|l| match &l.record {
            Record::Settings {
                mode,
                model,
                reasoning_effort,
            } => Some((mode, model, reasoning_effort)),
            _ => None,
        }) {
            if let Some(mode) = Mode::parse(mode) {
                settings.mode = mode;
            }
            if self.config.model(model).is_some() {
                settings.model = model.clone();
            } else {
                tracing::warn!(%model, "the stored session's model is no longer configured; using the default");
            }
            settings.reasoning_effort = effort.clone();
        }
        settings
    }

    /// Stored sessions, newest first (see [`Store::list`]).
    pub fn list(
        &self,
        cwd: Option<&Path>,
        cursor: Option<&str>,
    ) -> (Vec<store::Summary>, Option<String>) {
        self.store.list(cwd, cursor)
    }

    /// The sessions open in this process, sorted by id.
    pub fn live(&self) -> Vec<LiveSession> {
        let mut out: Vec<LiveSession> = self
            .sessions
            .lock()
            .iter()
            .map(|(id, live)| {
                let v = &live.view;
                let settings = v.settings.lock().clone();
                let context_window = self
                    .config
                    .model(&settings.model)
                    .map_or(self.config.models[0].context_window, |m| m.context_window);
                LiveSession {
                    id: id.clone(),
                    cwd: v.cwd.clone(),
                    context_window,
                    context_used: v.usage.lock().map(|(used, _)| used),
                    totals: *v.totals.lock(),
                    mcp: v.mcp.states(),
                    permissions: v.policy.snapshot(&v.grants.lock()),
                    settings,
                }
            })
            .collect();
        out.sort_by(|a, b| a.id.cmp(&b.id));
        out
    }

    /// A stored session's records, for `_tandem/session/export`.
    pub fn records(&self, id: &str) -> Result<Vec<Line>, SessionError> {
        match self.store.open(id) {
            Ok((lines, _)) => Ok(lines),
            Err(store::StoreError::NotFound(id)) => Err(SessionError::NotFound(id)),
            Err(e) => Err(SessionError::Store(e)),
        }
    }

    /// Frees an open session (its running turn is cancelled); the transcript stays.
    pub fn close(&self, id: &str) -> Result<(), SessionError> {
        match self.sessions.lock().remove(id) {
            Some(live) => {
                live.stop();
                Ok(())
            }
            None => Err(SessionError::NotFound(id.to_string())),
        }
    }

    /// Closes a session if open and removes its transcript.
    pub fn delete(&self, id: &str) -> Result<(), SessionError> {
        let removed = self.sessions.lock().remove(id);
        let was_open = removed.is_some();
        if let Some(live) = removed {
            live.stop();
        }
        match self.store.delete(id) {
            Ok(()) => Ok(()),
            Err(store::StoreError::NotFound(_)) if was_open => Ok(()),
            Err(store::StoreError::NotFound(id)) => Err(SessionError::NotFound(id)),
            Err(e) => Err(SessionError::Store(e)),
        }
    }

    /// Runs a prompt to its end; resolves when the turn stops.
    pub async fn prompt(&self, id: &str, parts: Vec<UserPart>) -> Result<StopReason, SessionError> {
        self.run(id, parts, None).await.map(|ran| ran.stop)
    }

    /// Runs a prompt (or a slash command), whose final answer must follow `output` when
    /// given; returns how it ended with a command action's output or the structured answer.
    pub async fn run(
        &self,
        id: &str,
        parts: Vec<UserPart>,
        output: Option<Arc<crate::output_schema::OutputSchema>>,
    ) -> Result<Ran, SessionError> {
        let (reply, rx) = oneshot::channel();
        self.send(
            id,
            Command::Prompt {
                parts,
                output,
                reply,
            },
        )?;
        rx.await.map_err(|_| gone(id))?
    }

    /// The slash commands (built-in, custom, actions) of an open session.
    pub fn commands(&self, id: &str) -> Result<Vec<commands::SlashCommand>, SessionError> {
        self.sessions
            .lock()
            .get(id)
            .map(|live| live.commands.clone())
            .ok_or_else(|| SessionError::NotFound(id.to_string()))
    }

    /// Cancels the running turn, if any.
    pub fn cancel(&self, id: &str) -> Result<(), SessionError> {
        self.send(id, Command::Cancel)
    }

    /// Switches the mode (`session/set_mode`).
    pub async fn set_mode(&self, id: &str, mode: &str) -> Result<(), SessionError> {
        let (reply, rx) = oneshot::channel();
        self.send(
            id,
            Command::SetMode {
                mode: mode.to_string(),
                reply,
            },
        )?;
        rx.await.map_err(|_| gone(id))?
    }

    /// Sets a config option; answers with every option as it now stands.
    pub async fn set_option(
        &self,
        id: &str,
        option: &str,
        value: &str,
    ) -> Result<Vec<OptionView>, SessionError> {
        let (reply, rx) = oneshot::channel();
        self.send(
            id,
            Command::SetOption {
                option: option.to_string(),
                value: value.to_string(),
                reply,
            },
        )?;
        rx.await.map_err(|_| gone(id))?
    }

    fn send(&self, id: &str, command: Command) -> Result<(), SessionError> {
        let sessions = self.sessions.lock();
        let live = sessions
            .get(id)
            .ok_or_else(|| SessionError::NotFound(id.to_string()))?;
        live.tx.send(command).map_err(|_| gone(id))
    }
}

/// A session open in this process: its actor's inbox, and the shared state the extension
/// methods read (settings, usage, MCP servers).
struct Live {
    tx: mpsc::UnboundedSender<Command>,
    view: TurnContext,
    commands: Vec<commands::SlashCommand>,
}

impl Live {
    /// Ends the session here and now: its MCP servers are stopped before the caller answers,
    /// rather than whenever the actor next runs (it cancels any running turn as it ends).
    fn stop(self) {
        self.view.mcp.shutdown();
    }
}

/// A session's working directory must be an absolute path to an existing directory.
fn check_cwd(cwd: &Path) -> Result<(), SessionError> {
    if !cwd.is_absolute() {
        return Err(SessionError::InvalidParams(format!(
            "cwd must be an absolute path, got `{}`",
            cwd.display()
        )));
    }
    if !cwd.is_dir() {
        return Err(SessionError::InvalidParams(format!(
            "cwd `{}` does not exist or is not a directory",
            cwd.display()
        )));
    }
    Ok(())
}

fn gone(id: &str) -> SessionError {
    SessionError::Internal(format!("session `{id}` stopped unexpectedly"))
}
