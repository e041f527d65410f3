//! Sessions: the manager maps ids to handles; each session is an actor task (actor.rs).

mod actor;
pub mod options;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use tokio::sync::{mpsc, oneshot};

use crate::client::{ClientCaps, ClientOps};
use crate::config::Config;
use crate::events::EventSink;
use crate::model::openai::missing_key_error;
use crate::model::{ModelClient, ModelError, UserPart};
use crate::permission::Grants;
use crate::tools::Registry;
use crate::turn::{StopReason, TurnContext};
use actor::{Actor, Command};
use options::{OptionError, OptionView, Settings};

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
    /// Something inside tandem broke.
    #[error("{0}")]
    Internal(String),
}

/// A new session's id and what the editor should show for it.
pub struct NewSession {
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
    sessions: Mutex<HashMap<String, mpsc::UnboundedSender<Command>>>,
}

impl SessionManager {
    /// A manager whose sessions ask `client`.
    pub fn new(config: Arc<Config>, client: Arc<dyn ModelClient>) -> Self {
        Self {
            config,
            client,
            tools: Arc::new(Registry::standard()),
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
        sink: Arc<dyn EventSink>,
        editor: Arc<dyn ClientOps>,
        caps: ClientCaps,
    ) -> Result<NewSession, SessionError> {
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
        self.check_credentials().map_err(SessionError::Model)?;
        // The workspace root is judged by where the directory really is (symlinks resolved).
        let root = cwd.canonicalize().unwrap_or(cwd);
        let id = uuid::Uuid::new_v4().to_string();
        let settings = Settings::initial(&self.config);
        let options = options::views(&settings, &self.config);
        let shared = Arc::new(Mutex::new(settings.clone()));
        let (tx, rx) = mpsc::unbounded_channel();
        let actor = Actor {
            id: id.clone(),
            config: self.config.clone(),
            sink: sink.clone(),
            settings: shared.clone(),
            history: Vec::new(),
            turn: TurnContext {
                session_id: id.clone(),
                cwd: root,
                config: self.config.clone(),
                model: self.client.clone(),
                settings: shared,
                tools: self.tools.clone(),
                client: editor,
                caps,
                grants: Arc::new(Mutex::new(Grants::default())),
                sink,
            },
        };
        tokio::spawn(actor.run(rx));
        self.lock().insert(id.clone(), tx);
        tracing::info!(session = %id, "session created");
        Ok(NewSession {
            id,
            settings,
            options,
        })
    }

    /// Runs a prompt to its end; resolves when the turn stops.
    pub async fn prompt(&self, id: &str, parts: Vec<UserPart>) -> Result<StopReason, SessionError> {
        let (reply, rx) = oneshot::channel();
        self.send(id, Command::Prompt { parts, reply })?;
        rx.await.map_err(|_| gone(id))?
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
        let sessions = self.lock();
        let tx = sessions
            .get(id)
            .ok_or_else(|| SessionError::NotFound(id.to_string()))?;
        tx.send(command).map_err(|_| gone(id))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, mpsc::UnboundedSender<Command>>> {
        // A poisoned map is still a valid map: sessions are only inserted and looked up.
        self.sessions
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

fn gone(id: &str) -> SessionError {
    SessionError::Internal(format!("session `{id}` stopped unexpectedly"))
}
