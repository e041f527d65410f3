//! A real session, opened through the [`SessionManager`] as the editor would open one, whose
//! model and editor are the fakes: the actor, the turn loop, the permission chain, hooks and
//! guards all run as they do in the binary, in process and in milliseconds.

use std::sync::Arc;

use super::{Events, FakeEditor, FakeModel, Reply, Scratch};
use crate::client::ClientCaps;
use crate::model::{Message, ModelClient, ModelRequest};
use crate::session::{EditorLink, Ran, SessionError, SessionManager};
use crate::types::{StopReason, UserPart};

/// One open session with fakes for its model and editor.
pub struct Session {
    /// Where its home, data and project are.
    pub scratch: Scratch,
    /// Its sessions.
    pub manager: Arc<SessionManager>,
    /// The model it asks.
    pub model: Arc<FakeModel>,
    /// The editor it asks.
    pub editor: Arc<FakeEditor>,
    /// What it showed the editor.
    pub events: Arc<Events>,
    /// Its id.
    pub id: String,
}

impl Session {
    /// Opens a session in a fresh project whose model answers `replies` and whose editor is
    /// `editor` (reads and writes through it, no terminals); `config` is the user's config
    /// file, `vars` the environment.
    pub async fn open(
        replies: Vec<Reply>,
        editor: Arc<FakeEditor>,
        config: &str,
        vars: &[(&str, &str)],
    ) -> Self {
        let caps = ClientCaps {
            read_text_file: true,
            write_text_file: true,
            ..ClientCaps::default()
        };
        Self::open_with(replies, editor, caps, config, vars).await
    }

    /// Like [`Session::open`], but the editor offers no file access: tandem reads and writes
    /// the project on disk itself (the editor still answers questions).
    pub async fn on_disk(
        replies: Vec<Reply>,
        editor: Arc<FakeEditor>,
        config: &str,
        vars: &[(&str, &str)],
    ) -> Self {
        Self::open_with(replies, editor, ClientCaps::default(), config, vars).await
    }

    async fn open_with(
        replies: Vec<Reply>,
        editor: Arc<FakeEditor>,
        caps: ClientCaps,
        config: &str,
        vars: &[(&str, &str)],
    ) -> Self {
        let scratch = Scratch::new();
        let dir = scratch.config_dir();
        let _ = std::fs::create_dir_all(&dir);
        if let Err(e) = std::fs::write(dir.join("config.toml"), config) {
            panic!("cannot write the config file: {e}");
        }
        let model = FakeModel::new(replies);
        let client: Arc<dyn ModelClient> = model.clone();
        let manager = Arc::new(SessionManager::new(Arc::new(scratch.config(vars)), client));
        let events = Events::new();
        let link = EditorLink {
            sink: events.clone(),
            ops: editor.clone(),
            caps,
            instructions: None,
        };
        let opened = manager
            .create(scratch.project(), Vec::new(), link, Vec::new(), None)
            .await;
        let id = match opened {
            Ok(session) => session.id,
            Err(e) => panic!("the session did not open: {e}"),
        };
        Self {
            scratch,
            manager,
            model,
            editor,
            events,
            id,
        }
    }

    /// Sends `text` as a prompt and waits for its end.
    pub async fn prompt(&self, text: &str) -> Result<StopReason, SessionError> {
        self.manager
            .prompt(&self.id, vec![UserPart::Text(text.into())])
            .await
    }

    /// Sends `text` as a prompt now; the future waits for its end.
    pub fn start(
        &self,
        text: &str,
    ) -> impl Future<Output = Result<Ran, SessionError>> + Send + 'static {
        self.manager
            .run(&self.id, vec![UserPart::Text(text.into())], None)
    }

    /// Every request the model got.
    pub fn requests(&self) -> Vec<ModelRequest> {
        self.model.requests()
    }
}

/// The tool results (call id, what the model read) of `request`, in order.
pub fn results(request: &ModelRequest) -> Vec<(String, String)> {
    request
        .messages
        .iter()
        .filter_map(|m| match &**m {
            Message::Tool {
                call_id, content, ..
            } => Some((call_id.clone(), content.clone())),
            _ => None,
        })
        .collect()
}
