//! Starting a session's actor: what every way of opening a session (new, load, resume, fork)
//! ends with.

use std::path::PathBuf;
use std::sync::Arc;

use parking_lot::Mutex;

use tokio::sync::mpsc;

use super::actor::Actor;
use super::{Live, NewSession, SessionManager, commands, instructions, options};
use crate::client::{ClientCaps, ClientOps};
use crate::config::Settings;
use crate::model::Message;
use crate::permission::{Grants, Policy, Rules, Workspace};
use crate::store::{Record, Transcript};
use crate::turn::TurnContext;
use crate::types::{EventSink, TurnEvent};

impl SessionManager {
    pub(super) fn start(&self, s: Start) -> NewSession {
        // The workspace root is judged by where the directory really is (symlinks resolved).
        let root = s.cwd.canonicalize().unwrap_or_else(|_| s.cwd.clone());
        let options = options::views(&s.settings, &self.config);
        let project = crate::config::project(&s.cwd);
        if project.declares_hooks() {
            tracing::warn!(cwd = %s.cwd.display(), "hooks in the project's .tandem/config.toml are ignored: opening a project must not run its code; declare them in your own config file");
        }
        let actions: Vec<_> = self
            .config
            .actions
            .iter()
            .cloned()
            .chain(project.actions.iter().cloned())
            .collect();
        let commands = commands::discover(&s.cwd, &self.config.config_dir, &actions);
        let extras = Arc::new(crate::customize::Extras::open(
            &self.config,
            &s.id,
            &root,
            s.transcript.path(),
            s.source,
        ));
        let home = self.config.user_home.as_deref();
        let policy = Arc::new(Policy {
            rules: Rules::new(
                self.config
                    .permissions
                    .iter()
                    .cloned()
                    .chain(project.rules(&s.cwd)),
                &root,
                home,
            ),
            workspace: Workspace::new(
                root.clone(),
                extras.read_roots().map(PathBuf::from).collect(),
                home,
            ),
        });
        let shared = Arc::new(Mutex::new(s.settings.clone()));
        let transcript = Arc::new(s.transcript);
        let sink: Arc<dyn EventSink> = Arc::new(Recording {
            inner: s.sink,
            transcript: transcript.clone(),
        });
        let (tx, rx) = mpsc::unbounded_channel();
        let actor = Actor {
            id: s.id.clone(),
            config: self.config.clone(),
            sink: sink.clone(),
            settings: shared.clone(),
            history: s.history,
            turn: TurnContext {
                session_id: s.id.clone(),
                cwd: root,
                config: self.config.clone(),
                model: self.client.clone(),
                settings: shared,
                tools: self.tools.clone(),
                client: s.editor,
                caps: s.caps,
                grants: Arc::new(Mutex::new(Grants::default())),
                policy,
                sink,
                transcript: transcript.clone(),
                project_instructions: instructions::load(&s.cwd, &self.config.config_dir),
                usage: Arc::new(Mutex::new(None)),
                mcp: s.mcp,
                totals: Arc::default(),
                extras,
                subagent: None,
                output: None,
            },
            transcript,
            title: s.title,
            commands: commands.clone(),
        };
        let view = actor.turn.clone();
        tokio::spawn(actor.run(rx));
        self.sessions.lock().insert(
            s.id.clone(),
            Live {
                tx,
                view,
                commands: commands.clone(),
            },
        );
        NewSession {
            id: s.id,
            settings: s.settings,
            options,
            commands,
        }
    }
}

/// Everything a session starts from.
pub(super) struct Start {
    pub(super) id: String,
    pub(super) cwd: PathBuf,
    pub(super) sink: Arc<dyn EventSink>,
    pub(super) editor: Arc<dyn ClientOps>,
    pub(super) caps: ClientCaps,
    pub(super) settings: Settings,
    pub(super) history: Vec<Message>,
    pub(super) transcript: Transcript,
    pub(super) title: Option<String>,
    pub(super) mcp: Arc<crate::mcp::Hub>,
    /// How it was opened, for `session_start` hooks: `new`, `load`, `resume` or `fork`.
    pub(super) source: &'static str,
}

/// Forwards events and records the plan, which tools emit directly, in the transcript.
struct Recording {
    inner: Arc<dyn EventSink>,
    transcript: Arc<Transcript>,
}

impl EventSink for Recording {
    fn emit(&self, session_id: &str, event: TurnEvent) {
        if let TurnEvent::Plan(entries) = &event {
            self.transcript.append(Record::Plan {
                entries: entries.clone(),
            });
        }
        self.inner.emit(session_id, event);
    }
}
