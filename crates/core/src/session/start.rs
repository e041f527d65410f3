//! Starting a session's actor: what every way of opening a session (new, load, resume, fork)
//! ends with. The actor owns the session's turn context, settings and history; the manager
//! keeps its inbox and a [`StatusWatch`] of its state.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use tokio::sync::{mpsc, watch};

use super::actor::Actor;
use super::status::StatusWatch;
use super::{EditorLink, Live, NewSession, SessionManager, commands, instructions, options};
use crate::config::{ProjectConfig, Settings};
use crate::customize::Extras;
use crate::permission::shell::Grammar;
use crate::permission::{Grants, Policy, Protected, Rules, Workspace};
use crate::store::{History, Record, Transcript};
use crate::tools::load_skill::LoadSkill;
use crate::tools::task::Task;
use crate::tools::web_fetch::WebFetch;
use crate::tools::web_search::WebSearch;
use crate::tools::{Entry, Registry};
use crate::turn::{Facts, Meters, Services, TurnContext};
use crate::types::{EventSink, TurnEvent};

/// Everything a session starts from.
pub(super) struct Start {
    pub(super) id: String,
    /// The working directory, canonical (links resolved).
    pub(super) cwd: PathBuf,
    /// The workspace's other folders (ACP `additionalDirectories`), canonical.
    pub(super) folders: Vec<PathBuf>,
    /// The editor it talks to.
    pub(super) editor: EditorLink,
    pub(super) settings: Settings,
    /// The conversation so far, and where it is recorded.
    pub(super) history: History,
    pub(super) title: Option<String>,
    pub(super) mcp: Arc<crate::mcp::Hub>,
    /// The project's `.tandem/config.toml`, read once for this opening.
    pub(super) project: ProjectConfig,
    /// How it was opened, for `session_start` hooks: `new`, `load`, `resume` or `fork`.
    pub(super) source: &'static str,
}

impl SessionManager {
    pub(super) fn start(&self, s: Start) -> NewSession {
        // One snapshot: the configuration, its model client and its server's answer belong
        // together even if a login replaces them meanwhile.
        let backend = self.backend();
        // Canonical already (open.rs): one value, handed to every part below.
        let root = s.cwd.clone();
        let folders = s.folders.clone();
        let (options, commands) = self.shown(&s, &backend);
        let transcript = s.history.transcript().clone();
        let extras = Arc::new(Extras::open(
            &backend.config,
            &s.id,
            &root,
            transcript.path(),
            s.source,
        ));
        let policy = self.policy(&s, &root, &folders, &extras);
        let sandbox = policy.sandbox.clone();
        let (settings, settings_rx) = watch::channel(s.settings.clone());
        let usage = Arc::new(watch::channel(None).0);
        let background = Arc::new(crate::tools::background::Background::new(
            backend.config.background_commands,
        ));
        let facts = facts(&s, &root, &folders, &backend.config);
        let services = Arc::new(Services {
            // Through the shared backend: a key found again after a refusal counts at once.
            model: Arc::new(super::SessionModel::new(
                self.shared.clone(),
                backend.clone(),
            )),
            editor: s.editor.ops,
            caps: s.editor.caps,
            tools: Arc::new(self.registry(&backend.config, &extras, &s.mcp)),
            mcp: s.mcp.clone(),
            extras,
            transcript: transcript.clone(),
            policy: policy.clone(),
            steering: crate::turn::Steering::default(),
            children: self.subagents.clone(),
            background: background.clone(),
        });
        let (meters, status) = meters(Measured {
            cwd: root,
            folders: s.folders.clone(),
            settings: settings_rx,
            usage: usage.subscribe(),
            policy,
            mcp: s.mcp,
            transcript: transcript.clone(),
            discovered: backend.discovered.answer(),
            background,
        });
        let sink: Arc<dyn EventSink> = Arc::new(Recording {
            inner: s.editor.sink,
            session_id: s.id.clone(),
            transcript,
        });
        if let Some(sandbox) = sandbox {
            super::sandbox::tell_when_unconfined(sandbox, sink.clone(), s.id.clone());
        }
        let actor = Actor::new(
            TurnContext::new(facts, services, meters, sink, usage),
            settings,
            s.history,
            s.title,
            commands.clone(),
        );
        self.serve(&s.id, actor, status, commands.clone());
        NewSession {
            id: s.id,
            settings: s.settings,
            options,
            commands,
            replay: super::Replay::default(),
        }
    }
}

impl SessionManager {
    /// What the editor is shown of a session as it opens: its config options and its slash
    /// commands (and a warning on stderr for hooks a project declares, which never run).
    fn shown(
        &self,
        s: &Start,
        backend: &super::Backend,
    ) -> (Vec<crate::types::OptionView>, Vec<commands::SlashCommand>) {
        let options = options::views(
            &s.settings,
            &backend.config,
            backend.discovered.borrow().as_deref(),
            s.editor.caps.boolean_options,
        );
        if s.project.declares_hooks() {
            tracing::warn!(cwd = %s.cwd.display(), "hooks in the project's .tandem/config.toml are ignored: opening a project must not run its code; declare them in your own config file");
        }
        let commands = commands::discover(
            &s.cwd,
            &backend.config.config_dir,
            &self.config().actions,
            &s.project.actions,
        );
        (options, commands)
    }

    /// Runs `actor` as the open session `id`, reached through the manager from now on.
    fn serve(
        &self,
        id: &str,
        actor: Actor,
        status: StatusWatch,
        commands: Vec<commands::SlashCommand>,
    ) {
        let (tx, rx) = mpsc::unbounded_channel();
        let actor = tokio::spawn(actor.run(rx));
        self.sessions.lock().insert(
            id.to_string(),
            Live {
                tx,
                status,
                commands,
                actor,
            },
        );
    }

    /// Every tool the session offers: the built-ins, `load_skill` when it has skills, its MCP
    /// servers' tools as they connect, and `task`.
    fn registry(
        &self,
        config: &crate::config::Config,
        extras: &Extras,
        mcp: &Arc<crate::mcp::Hub>,
    ) -> Registry {
        let mut front = self.builtins.get_or_init(crate::tools::builtins).clone();
        let web = &config.web;
        if web.fetch {
            front.push(Entry::new(Arc::new(WebFetch::new(web.clone()))));
        }
        if let Some(search) = &web.search {
            front.push(Entry::new(Arc::new(WebSearch::new(
                search.clone(),
                web.timeout,
            ))));
        }
        if !extras.skills.is_empty() {
            front.push(Entry::new(Arc::new(LoadSkill::new(extras.skills.clone()))));
        }
        let task = Entry::new(Arc::new(Task::new(extras.agents.clone())));
        Registry::new(front, vec![mcp.clone()], vec![task])
    }

    /// The session's permission rules (the user's, then the project's deny and ask rules) and
    /// its workspace (the root, plus the folders of its skills, which it may read).
    fn policy(&self, s: &Start, root: &Path, folders: &[PathBuf], extras: &Extras) -> Arc<Policy> {
        let config = self.config();
        let home = config.user_home.as_deref();
        let rules = config
            .permissions
            .iter()
            .cloned()
            .chain(s.project.rules(&s.cwd));
        Arc::new(Policy {
            rules: Rules::new(rules, root, home),
            // The workspace's other folders are inside it, like the skills' folders.
            workspace: Workspace::new(
                root.to_path_buf(),
                folders
                    .iter()
                    .cloned()
                    .chain(extras.read_roots().map(PathBuf::from))
                    .collect(),
                home,
            ),
            // What decides what runs later: tandem's own folders and the skills'.
            protected: Protected::for_project(
                [config.config_dir.clone(), config.home.clone()]
                    .into_iter()
                    .chain(config.config_file.clone())
                    .chain(config.skill_dirs.iter().cloned()),
                &std::iter::once(root.to_path_buf())
                    .chain(folders.iter().cloned())
                    .collect::<Vec<_>>(),
            ),
            grammar: Grammar::of(&config.shell),
            sandbox: super::sandbox::for_session(
                &config,
                std::iter::once(root.to_path_buf())
                    .chain(folders.iter().cloned())
                    .collect(),
            ),
        })
    }
}

/// What a session's status reads besides its meters.
struct Measured {
    cwd: PathBuf,
    folders: Vec<PathBuf>,
    settings: watch::Receiver<crate::config::Settings>,
    usage: watch::Receiver<Option<(u64, u64)>>,
    policy: Arc<Policy>,
    mcp: Arc<crate::mcp::Hub>,
    transcript: Transcript,
    discovered: super::discovery::Discovering,
    background: Arc<crate::tools::background::Background>,
}

/// A new session's meters (what its turns read and count), and the status watch that
/// `_tandem/status` reads them through.
fn meters(m: Measured) -> (Arc<Meters>, StatusWatch) {
    let meters = Arc::new(Meters {
        settings: m.settings.clone(),
        grants: watch::channel(Grants::default()).0,
        totals: watch::channel(Default::default()).0,
        window_cut: watch::channel(None).0,
        discovered: m.discovered.clone(),
        native_calls: Default::default(),
    });
    let status = StatusWatch {
        cwd: m.cwd,
        folders: m.folders,
        settings: m.settings,
        usage: m.usage,
        totals: meters.totals.subscribe(),
        grants: meters.grants.subscribe(),
        policy: m.policy,
        mcp: m.mcp,
        transcript: m.transcript,
        discovered: m.discovered,
        window_cut: meters.window_cut.subscribe(),
        background: m.background,
    };
    (meters, status)
}

/// The facts of the session `s` opens, in `root` with `folders`.
fn facts(
    s: &Start,
    root: &Path,
    folders: &[PathBuf],
    config: &Arc<crate::config::Config>,
) -> Arc<Facts> {
    Arc::new(Facts {
        session_id: s.id.clone(),
        cwd: root.to_path_buf(),
        folders: folders.to_vec(),
        config: config.clone(),
        project_instructions: instructions::load(&s.cwd, folders, &config.config_dir),
        editor_instructions: s.editor.instructions.clone(),
    })
}

/// Forwards events and records the plan, which tools emit directly, in the transcript: the
/// session's own, not a subagent's in a session of its own.
struct Recording {
    inner: Arc<dyn EventSink>,
    session_id: String,
    transcript: Transcript,
}

impl EventSink for Recording {
    fn emit(&self, session_id: &str, event: TurnEvent) {
        if let TurnEvent::Plan(entries) = &event
            && session_id == self.session_id
        {
            self.transcript.append(Record::Plan {
                entries: entries.clone(),
            });
        }
        self.inner.emit(session_id, event);
    }
}
