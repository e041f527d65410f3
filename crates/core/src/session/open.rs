//! Opening a session, every way the editor can: new, load (with the conversation replayed),
//! resume (without) and fork. Each checks the request, reads the project's config once, and
//! ends in [`SessionManager::start`](super::start); a stored session first has what a crash
//! left half done finished (settle.rs).

use std::path::{Path, PathBuf};

use super::start::Start;
use super::{EditorLink, NewSession, SessionError, SessionManager};
use crate::config::{Config, ServerSpec, Settings};
use crate::store::{self, History, Line, Record};
use crate::types::Mode;

impl SessionManager {
    /// Starts a session in `cwd`, which must be an absolute path to an existing directory;
    /// its tools reach the editor through `editor` as far as its capabilities allow.
    /// `requested_id` lets a script choose the id it will refer to.
    pub async fn create(
        &self,
        cwd: PathBuf,
        folders: Vec<PathBuf>,
        editor: EditorLink,
        servers: Vec<ServerSpec>,
        requested_id: Option<String>,
    ) -> Result<NewSession, SessionError> {
        check_cwd(&cwd)?;
        check_folders(&folders)?;
        self.check_credentials().map_err(SessionError::Model)?;
        super::discovery::settle_for_picker(&self.config(), &self.discovered()).await;
        let id = match requested_id {
            Some(id) => self.check_requested(id)?,
            None => uuid::Uuid::new_v4().to_string(),
        };
        let settings = Settings::initial(&self.config());
        // The starting settings, so a later load restores them even if never changed.
        let first = Record::Settings {
            mode: settings.mode.id().to_string(),
            model: settings.model.clone(),
            reasoning_effort: settings.reasoning_effort.clone(),
            auto_compact: Some(settings.auto_compact),
        };
        let recorded = (!folders.is_empty()).then(|| Record::Folders {
            folders: folders.clone(),
        });
        let transcript = self
            .store
            .create(&id, &cwd, std::iter::once(first).chain(recorded))
            .await?;
        tracing::info!(session = %id, "session created");
        // From here on the session knows one folder: where the editor's really is.
        let (cwd, folders) = canonical_place(&cwd, &folders);
        let project = crate::config::project(&cwd);
        Ok(self.start(Start {
            mcp: self.mcp_hub(&cwd, &project, servers, asker(&editor, &id)),
            project,
            id,
            cwd,
            folders,
            editor,
            settings,
            history: History::new(transcript),
            title: None,
            source: "new",
        }))
    }

    /// Opens a stored session in `cwd` with its history, mode and model. With `replay`, the
    /// whole conversation is sent to the editor first (`session/load`); without, it is not
    /// (`session/resume`). A session already open here is reopened from its transcript.
    pub async fn load(
        &self,
        id: &str,
        cwd: PathBuf,
        folders: Vec<PathBuf>,
        editor: EditorLink,
        replay: bool,
        servers: Vec<ServerSpec>,
    ) -> Result<NewSession, SessionError> {
        let source = if replay { "load" } else { "resume" };
        self.open_stored(id, (cwd, Some(folders)), editor, replay, servers, source)
            .await
    }

    /// A new session with a copy of `id`'s history so far (open or only stored), working in
    /// `cwd` (and `folders`) or where `id` did, with the editor's MCP `servers`; the two go
    /// their own ways from here. With `turn`, the copy stops before that turn, and no file is
    /// touched.
    pub async fn fork(
        &self,
        id: &str,
        cwd: Option<PathBuf>,
        folders: Option<Vec<PathBuf>>,
        editor: EditorLink,
        servers: Vec<ServerSpec>,
        turn: Option<usize>,
    ) -> Result<NewSession, SessionError> {
        if let Some(cwd) = &cwd {
            check_cwd(cwd)?;
        }
        self.flush_open(id).await;
        let new_id = uuid::Uuid::new_v4().to_string();
        let cwd = self.store.fork(id, &new_id, cwd.as_deref(), turn).await?;
        tracing::info!(from = %id, session = %new_id, "session forked");
        self.open_stored(&new_id, (cwd, folders), editor, false, servers, "fork")
            .await
    }

    /// [`Self::load`] in `place` (the working directory and the workspace's other folders,
    /// or those last recorded when `None`), telling `session_start` hooks how the session
    /// was opened.
    async fn open_stored(
        &self,
        id: &str,
        place: (PathBuf, Option<Vec<PathBuf>>),
        editor: EditorLink,
        replay: bool,
        servers: Vec<ServerSpec>,
        source: &'static str,
    ) -> Result<NewSession, SessionError> {
        let (cwd, requested) = place;
        check_cwd(&cwd)?;
        if let Some(folders) = &requested {
            check_folders(folders)?;
        }
        self.check_credentials().map_err(SessionError::Model)?;
        // The saved model is checked against the server's list when that decides the picker.
        super::discovery::settle_for_picker(&self.config(), &self.discovered()).await;
        // What the session open here has queued belongs in what is read.
        self.flush_open(id).await;
        let began = std::time::Instant::now();
        let (lines, transcript) = self.store.open(id).await?;
        // A change or rewind a crash left half done is finished (or reported) first.
        let lines = super::settle::finish(lines, &transcript, &canonical(&cwd)).await;
        let read = began.elapsed();
        self.sessions.lock().remove(id);
        let settings = self.restored_settings(&lines);
        let title = lines.iter().rev().find_map(|l| match &l.record {
            Record::Title { title } => Some(title.clone()),
            _ => None,
        });
        // The request's folders are the session's from now on (ACP: an empty list means
        // none); a change is recorded so `session/list` reports them.
        let last_folders = lines
            .iter()
            .rev()
            .find_map(|l| match &l.record {
                Record::Folders { folders } => Some(folders.clone()),
                _ => None,
            })
            .unwrap_or_default();
        let folders = requested.unwrap_or_else(|| last_folders.clone());
        if last_folders != folders {
            transcript.append(Record::Folders {
                folders: folders.clone(),
            });
        }
        let history = History::rebuild(&lines, transcript);
        let read_ms = read.as_millis();
        let rebuilt_ms = (began.elapsed() - read).as_millis();
        tracing::info!(session = %id, records = lines.len(), messages = history.messages().len(), replay, read_ms, rebuilt_ms, "session opened from its transcript");
        // From here on the session knows one folder: where the editor's really is.
        let (cwd, folders) = canonical_place(&cwd, &folders);
        let project = crate::config::project(&cwd);
        let opened = self.start(Start {
            mcp: self.mcp_hub(&cwd, &project, servers, asker(&editor, id)),
            project,
            id: id.to_string(),
            cwd,
            folders,
            editor,
            settings,
            history,
            title,
            source,
        });
        let mut opened = opened;
        if replay {
            opened.replay = super::Replay { lines };
        }
        Ok(opened)
    }

    /// A script's own session id, if it is usable and free.
    fn check_requested(&self, id: String) -> Result<String, SessionError> {
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
        Ok(id)
    }

    /// Waits until what the open session `id` (if any) has recorded is on disk.
    pub(super) async fn flush_open(&self, id: &str) {
        let transcript = self
            .sessions
            .lock()
            .get(id)
            .map(|live| live.status.transcript.clone());
        if let Some(transcript) = transcript {
            transcript.flush().await;
        }
    }

    /// The last recorded settings that still make sense with this configuration.
    fn restored_settings(&self, lines: &[Line]) -> Settings {
        let config = self.config();
        let mut settings = Settings::initial(&config);
        if let Some((mode, model, effort, auto)) =
            lines.iter().rev().find_map(|l| match &l.record {
                Record::Settings {
                    mode,
                    model,
                    reasoning_effort,
                    auto_compact,
                } => Some((mode, model, reasoning_effort, auto_compact)),
                _ => None,
            })
        {
            if let Some(auto) = auto {
                settings.auto_compact = *auto;
            }
            if let Some(mode) = Mode::parse(mode) {
                settings.mode = mode;
            }
            if self.offers(&config, model) {
                settings.model = model.clone();
            } else {
                tracing::warn!(%model, "the stored session's model is no longer offered; using the default");
            }
            settings.reasoning_effort = effort.clone();
        }
        settings
    }

    /// Whether a session may still use `model`: a configured one, or (with no models
    /// configured, when the picker lists what the server serves) one the server lists, or
    /// any while the server has not said what it serves: the choice is trusted until then.
    fn offers(&self, config: &Config, model: &str) -> bool {
        if config.model(model).is_some() {
            return true;
        }
        if config.models_configured {
            return false;
        }
        match self.discovered().borrow().as_deref() {
            Some(found) if !found.models.is_empty() => found.models.iter().any(|m| m == model),
            _ => true,
        }
    }
}

/// The workspace's other folders must be absolute paths to existing directories.
fn check_folders(folders: &[PathBuf]) -> Result<(), SessionError> {
    for folder in folders {
        if !folder.is_absolute() || !folder.is_dir() {
            return Err(SessionError::InvalidParams(format!(
                "additionalDirectories: `{}` is not an absolute path to an existing directory",
                folder.display()
            )));
        }
    }
    Ok(())
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

/// Where the MCP servers of session `id` send their questions: its editor.
fn asker(editor: &super::EditorLink, id: &str) -> crate::mcp::Asker {
    crate::mcp::Asker::new(editor.ops.clone(), id, editor.caps)
}

/// `path` as the file system has it (links resolved), or as given when it cannot be read.
fn canonical(path: &Path) -> PathBuf {
    crate::platform::canonical(path).unwrap_or_else(|_| path.to_path_buf())
}

/// A session's working directory and other folders, canonical: every part of the session
/// (its permission workspace, tools, instructions, commands, MCP servers, status) is given
/// these, and no part canonicalizes again. The transcript keeps what the editor sent.
fn canonical_place(cwd: &Path, folders: &[PathBuf]) -> (PathBuf, Vec<PathBuf>) {
    (
        canonical(cwd),
        folders.iter().map(|f| canonical(f)).collect(),
    )
}
