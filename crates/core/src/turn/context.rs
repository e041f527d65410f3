//! What a turn runs with, as a few small handles: the session's [`Facts`] (fixed when it
//! opened), the [`Services`] it talks to, the [`Meters`] it reads and counts, its [`Role`]
//! (the session's own turn or a subagent's) and where its events go. One [`Step`] per model
//! request holds the settings and the model's profile, resolved once for that request.

use std::path::PathBuf;
use std::sync::Arc;

use tokio::sync::watch;

use super::role::Role;
use crate::client::{ClientCaps, ClientOps};
use crate::config::{Config, ModelSpec, Settings};
use crate::model::ModelClient;
use crate::permission::{Grants, Policy};
use crate::platform::named::PathBase;
use crate::store::{Told, Transcript};
use crate::tools::{Registry, ToolScope};
use crate::types::Mode;
use crate::types::{EventSink, TurnEvent};

/// The facts of the session a turn works in, fixed when it opened.
#[derive(Clone)]
pub struct Facts {
    /// The session the events belong to.
    pub(crate) session_id: String,
    /// The session's working directory (canonical): the workspace root.
    pub(crate) cwd: PathBuf,
    /// The workspace's other folders (ACP `additionalDirectories`, canonical).
    pub(crate) folders: Vec<PathBuf>,
    /// Configuration (models, limits, instructions).
    pub(crate) config: Arc<Config>,
    /// `AGENTS.md` instructions that apply to the session (read when it opened).
    pub(crate) project_instructions: String,
    /// The editor's own instructions for the session (ACP `systemPrompt`), sent when it
    /// opened.
    pub(crate) editor_instructions: Option<String>,
}

impl Facts {
    /// Where the session's tools resolve paths.
    pub(crate) fn place(&self) -> PathBase {
        PathBase {
            cwd: self.cwd.clone(),
            home: self.config.user_home.clone(),
            folders: self.folders.clone(),
        }
    }
}

/// What a session's turns talk to.
pub struct Services {
    /// The model server.
    pub(crate) model: Arc<dyn ModelClient>,
    /// The editor.
    pub(crate) editor: Arc<dyn ClientOps>,
    /// What the editor can do.
    pub(crate) caps: ClientCaps,
    /// The tools offered.
    pub(crate) tools: Arc<Registry>,
    /// The session's MCP servers and their tools.
    pub(crate) mcp: Arc<crate::mcp::Hub>,
    /// The session's skills, subagents and hooks.
    pub(crate) extras: Arc<crate::customize::Extras>,
    /// The session's transcript (a subagent records into it, nested).
    pub(crate) transcript: Transcript,
    /// The session's permission rules and workspace.
    pub(crate) policy: Arc<Policy>,
    /// Messages the user sent to the running turn; only the session's own turn takes them.
    pub(crate) steering: super::steer::Steering,
    /// The subagent sessions at work on the connection (shared by its sessions).
    pub(crate) children: super::ChildSessions,
    /// The session's background commands.
    pub(crate) background: Arc<crate::tools::background::Background>,
}

/// What a session's turns read and count as they go; the session's status reads the same
/// channels.
pub struct Meters {
    /// The session's live settings; the session actor changes them.
    pub(crate) settings: watch::Receiver<Settings>,
    /// The session's remembered permission answers.
    pub(crate) grants: watch::Sender<Grants>,
    /// Tokens the session has used so far, over all its model requests.
    pub(crate) totals: watch::Sender<Totals>,
    /// The window the server really uses, once it was seen to cut a prompt without an error.
    pub(crate) window_cut: watch::Sender<Option<u64>>,
    /// What the model server said about itself (its models, their windows), once it answered.
    pub(crate) discovered: watch::Receiver<Option<Arc<crate::model::discover::Discovered>>>,
    /// The models whose server returned a tool call in its own field in this session: it
    /// reads their calls itself, so their answers are not watched for calls written as text.
    pub(crate) native_calls: parking_lot::Mutex<std::collections::BTreeSet<String>>,
}

/// A session's token totals (as reported by the server).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Totals {
    /// Model requests that reported usage.
    pub requests: u64,
    /// Prompt tokens.
    pub input: u64,
    /// Prompt tokens served from the server's cache.
    pub cached: u64,
    /// Completion tokens.
    pub output: u64,
    /// Completion tokens spent reasoning.
    pub reasoning: u64,
    /// What the requests whose cost is known cost, in US dollars: the server's own figure,
    /// else the tokens at the model's price.
    pub(crate) cost_usd: f64,
    /// How many requests that is.
    pub priced: u64,
    /// Tool-call batches not run because the model repeated them (loop detection).
    pub repeats_blocked: u64,
    /// Prompts whose tools were withdrawn because the model kept repeating itself.
    pub tools_withdrawn: u64,
    /// Tool calls refused because their tool's budget for the prompt was spent.
    pub budget_refusals: u64,
}

impl Totals {
    /// What was spent since `before` (this one's counts minus those).
    pub(crate) fn since(&self, before: &Totals) -> Totals {
        Totals {
            requests: self.requests.saturating_sub(before.requests),
            input: self.input.saturating_sub(before.input),
            cached: self.cached.saturating_sub(before.cached),
            output: self.output.saturating_sub(before.output),
            reasoning: self.reasoning.saturating_sub(before.reasoning),
            cost_usd: (self.cost_usd - before.cost_usd).max(0.0),
            priced: self.priced.saturating_sub(before.priced),
            repeats_blocked: self.repeats_blocked.saturating_sub(before.repeats_blocked),
            tools_withdrawn: self.tools_withdrawn.saturating_sub(before.tools_withdrawn),
            budget_refusals: self.budget_refusals.saturating_sub(before.budget_refusals),
        }
    }

    /// The tokens counted, unless no request reported usage.
    pub fn tokens(&self) -> Option<crate::types::Tokens> {
        (self.requests > 0).then_some(crate::types::Tokens {
            input: self.input,
            output: self.output,
            cached: self.cached,
            reasoning: self.reasoning,
        })
    }

    /// The cost so far, once any request's cost is known.
    pub fn cost(&self) -> Option<f64> {
        (self.priced > 0).then_some(self.cost_usd)
    }
}

/// What one turn runs with.
#[derive(Clone)]
pub struct TurnContext {
    /// The session's facts.
    pub(crate) facts: Arc<Facts>,
    /// What it talks to.
    pub(crate) services: Arc<Services>,
    /// What it reads and counts.
    pub(crate) meters: Arc<Meters>,
    /// The session's own turn, or a subagent's.
    pub(crate) role: Role,
    /// Where the editor-facing events go.
    pub(crate) sink: Arc<dyn EventSink>,
    /// The last usage report: (tokens in use, our estimate of the same messages), so the next
    /// request's size can be projected from real counts.
    pub(crate) usage: Arc<watch::Sender<Option<(u64, u64)>>>,
    /// For this prompt only: the schema its final answer must validate against.
    pub(crate) output: Option<Arc<crate::output_schema::OutputSchema>>,
    /// For this turn only: why every tool call must be asked about, whatever the mode, the
    /// rules and the remembered answers allow (a project's action, see `actions.rs`).
    pub(crate) must_ask: Option<String>,
    /// What every tool call of this context shares, made once.
    tool_scope: Arc<ToolScope>,
}

/// What one model request is made with: the session's settings and the model's profile,
/// resolved once for the request (every tool offered or run in it is judged by them).
pub(crate) struct Step {
    /// The settings as they were when the request was made.
    pub(crate) settings: Settings,
    /// The model asked, with what it can do.
    pub(crate) spec: ModelSpec,
}

impl TurnContext {
    /// A context for the session's own turns.
    pub(crate) fn new(
        facts: Arc<Facts>,
        services: Arc<Services>,
        meters: Arc<Meters>,
        sink: Arc<dyn EventSink>,
        usage: Arc<watch::Sender<Option<(u64, u64)>>>,
    ) -> Self {
        let tool_scope = tool_scope(&facts, &services, &sink);
        Self {
            facts,
            services,
            meters,
            role: Role::Session,
            sink,
            usage,
            output: None,
            must_ask: None,
            tool_scope,
        }
    }

    /// The same session's context for a subagent in `role`, whose events go to `sink`: its
    /// own context usage, no answer format (that is the parent's business).
    /// A subagent in a session of its own (`child`) speaks to the editor as that session.
    pub(crate) fn for_subagent(
        &self,
        role: Role,
        sink: Arc<dyn EventSink>,
        child: Option<&str>,
    ) -> Self {
        let facts = match child {
            Some(id) => Arc::new(Facts {
                session_id: id.to_string(),
                ..(*self.facts).clone()
            }),
            None => self.facts.clone(),
        };
        Self {
            tool_scope: tool_scope(&facts, &self.services, &sink),
            facts,
            services: self.services.clone(),
            meters: self.meters.clone(),
            role,
            sink,
            usage: Arc::new(watch::channel(None).0),
            output: None,
            must_ask: self.must_ask.clone(),
        }
    }

    /// What every tool call of this context shares.
    pub(crate) fn tool_scope(&self) -> Arc<ToolScope> {
        self.tool_scope.clone()
    }

    /// The settings and the model's profile for a request made now.
    pub(crate) fn step(&self) -> Step {
        let settings = self.settings();
        let id = self.role.model().unwrap_or(&settings.model);
        let spec = crate::model::profile::resolve(
            &self.facts.config,
            id,
            self.meters.discovered.borrow().as_deref(),
            *self.meters.window_cut.borrow(),
        );
        Step { settings, spec }
    }

    /// Whether the model of `step` may call `name` here: the edit tools its family uses
    /// (`apply_patch`, or `edit_file` and `write_file`), and what the role allows.
    pub(crate) fn offers(&self, step: &Step, name: &str) -> bool {
        // The handles on background commands only once there is one: most sessions never
        // start any, and every tool offered is sent with every request.
        let jobs =
            || !matches!(name, "command_output" | "stop_command") || self.services.background.any();
        step.spec.edit_tool.offers(name) && self.role.allows(name) && jobs()
    }

    /// The tool the model of `step` called `name`, if it may call it here.
    pub(crate) fn find_tool(&self, step: &Step, name: &str) -> Option<Arc<dyn crate::tools::Tool>> {
        self.offers(step, name)
            .then(|| self.services.tools.get(name))
            .flatten()
    }

    /// Every tool offered to the model of `step`.
    pub(crate) fn tool_specs(&self, step: &Step) -> Vec<crate::types::ToolSpec> {
        self.services.tools.specs(|name| self.offers(step, name))
    }

    /// The session's settings now.
    pub(crate) fn settings(&self) -> Settings {
        self.meters.settings.borrow().clone()
    }

    /// The messages the user steers this turn with: the session's own turn's, not a
    /// subagent's.
    pub(crate) fn steering(&self) -> Option<&super::steer::Steering> {
        matches!(self.role, Role::Session).then_some(&self.services.steering)
    }

    /// The session's mode now.
    pub(crate) fn mode(&self) -> Mode {
        self.meters.settings.borrow().mode
    }

    pub(crate) fn emit(&self, event: TurnEvent) {
        self.sink.emit(&self.facts.session_id, event);
    }

    /// The facts that change during a session, as they are now.
    pub(crate) fn told_now(&self, settings: &Settings) -> Told {
        Told {
            mode: settings.mode,
            date: chrono::Local::now().format("%Y-%m-%d").to_string(),
            output: self.output.as_ref().map(|o| o.instructions()),
        }
    }

    /// The system prompt stating `told`'s mode and date (a subagent's starts with its own).
    /// A prompt's answer format is told with the prompt, so the prompt stays the same.
    pub(crate) fn system_prompt(&self, step: &Step, told: &Told) -> String {
        let facts = &self.facts;
        let mut prompt = format!(
            "{}\n\n\
             Working directory: {}\nPlatform: {}\nShell: {}\nToday's date: {}\nMode: {} ({})",
            self.role.intro(),
            facts.cwd.display(),
            std::env::consts::OS,
            facts.config.shell.describe(),
            told.date,
            told.mode.id(),
            told.mode.description(),
        );
        if told.mode != crate::types::Mode::FullAccess
            && let Some(sandbox) = &self.services.policy.sandbox
            && let Some(said) = sandbox.for_model()
        {
            prompt.push('\n');
            prompt.push_str(&said);
        }
        if !facts.folders.is_empty() {
            prompt.push_str(
                "\nThe workspace's other folders (as much part of the project as the working directory; name them by absolute path):",
            );
            for folder in &facts.folders {
                prompt.push_str(&format!("\n- {}", folder.display()));
            }
        }
        if let Some(extra) = &facts.config.instructions {
            prompt.push_str("\n\n");
            prompt.push_str(extra);
        }
        prompt.push_str(&facts.project_instructions);
        if let Some(editor) = &facts.editor_instructions {
            prompt.push_str("\n\n## Instructions from the editor\n\n");
            prompt.push_str(editor);
        }
        prompt.push_str(&self.services.mcp.instructions());
        let extras = &self.services.extras;
        if self.offers(step, "load_skill") {
            prompt.push_str(&extras.skills.prompt_section());
        }
        if let Some(context) = extras.start_context() {
            prompt.push_str("\n\n## Session context (from the user's session_start hooks)\n\n");
            prompt.push_str(context);
        }
        prompt
    }
}

/// What the tool calls of a context sending its events to `sink` share.
fn tool_scope(facts: &Facts, services: &Services, sink: &Arc<dyn EventSink>) -> Arc<ToolScope> {
    let policy = services.policy.clone();
    Arc::new(ToolScope {
        session_id: facts.session_id.clone(),
        cwd: facts.cwd.clone(),
        folders: facts.folders.clone(),
        client: services.editor.clone(),
        caps: services.caps,
        sink: sink.clone(),
        unreadable: Arc::new(move |path: &std::path::Path| policy.denies_read(path)),
        shell: facts.config.shell.clone(),
        background: services.background.clone(),
    })
}
