//! What a turn runs with: the session's shared state, tools, editor and extras, and the
//! choices that depend on them (tools offered, model asked, system prompt).

use std::path::PathBuf;
use std::sync::Arc;

use tokio::sync::watch;

use super::subagent;
use crate::client::{ClientCaps, ClientOps};
use crate::config::Settings;
use crate::config::{Config, ModelSpec};
use crate::model::ModelClient;
use crate::permission::{Grants, Policy};
use crate::store::{Told, Transcript};
use crate::tools::{Place, Registry};
use crate::types::Mode;
use crate::types::{EventSink, TurnEvent};

/// What every turn of a session shares, fixed when the session opens (the settings, grants
/// and totals inside change, through watch channels the session's status is read from).
pub struct SessionScope {
    /// The session the events belong to.
    pub session_id: String,
    /// The session's working directory (canonical): the workspace root.
    pub cwd: PathBuf,
    /// The workspace's other folders (ACP `additionalDirectories`, canonical).
    pub folders: Vec<PathBuf>,
    /// Configuration (models, limits, instructions).
    pub config: Arc<Config>,
    /// The model server.
    pub model: Arc<dyn ModelClient>,
    /// The session's live settings; the session actor changes them.
    pub settings: watch::Receiver<Settings>,
    /// The tools offered.
    pub tools: Arc<Registry>,
    /// The editor.
    pub client: Arc<dyn ClientOps>,
    /// What the editor can do.
    pub caps: ClientCaps,
    /// The session's remembered permission answers.
    pub grants: watch::Sender<Grants>,
    /// The session's permission rules and workspace.
    pub policy: Arc<Policy>,
    /// The session's transcript (a subagent records into it, nested).
    pub transcript: Transcript,
    /// `AGENTS.md` instructions that apply to the session (read when it opened).
    pub project_instructions: String,
    /// The session's MCP servers and their tools.
    pub mcp: Arc<crate::mcp::Hub>,
    /// Tokens the session has used so far, over all its model requests.
    pub totals: watch::Sender<Totals>,
    /// The session's skills, subagents and hooks.
    pub extras: Arc<crate::customize::Extras>,
    /// The window the server really uses, once it was seen to cut a prompt without an error.
    pub window_cut: watch::Sender<Option<u64>>,
    /// What the model server said about itself (its models, their windows), once it answered.
    pub discovered: watch::Receiver<Option<Arc<crate::model::discover::Discovered>>>,
}

/// What one turn runs with: the session's scope, and what differs between the session's own
/// turns and a subagent's (where events go, whose context usage is tracked, which tools and
/// answer format apply).
#[derive(Clone)]
pub struct TurnContext {
    scope: Arc<SessionScope>,
    /// Where the editor-facing events go.
    pub sink: Arc<dyn EventSink>,
    /// The last usage report: (tokens in use, our estimate of the same messages), so the next
    /// request's size can be projected from real counts.
    pub usage: Arc<watch::Sender<Option<(u64, u64)>>>,
    /// Set when this context runs a subagent: which, and the tools it may use.
    pub subagent: Option<Arc<subagent::Scope>>,
    /// For this prompt only: the schema its final answer must validate against.
    pub output: Option<Arc<crate::output_schema::OutputSchema>>,
    /// For this turn only: why every tool call must be asked about, whatever the mode, the
    /// rules and the remembered answers allow (a project's action, see `actions.rs`).
    pub must_ask: Option<String>,
}

impl std::ops::Deref for TurnContext {
    type Target = SessionScope;

    fn deref(&self) -> &SessionScope {
        &self.scope
    }
}

/// A session's token totals (as reported by the server).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
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
    /// Tool-call batches not run because the model repeated them (loop detection).
    pub repeats_blocked: u64,
    /// Prompts whose tools were withdrawn because the model kept repeating itself.
    pub tools_withdrawn: u64,
    /// Tool calls refused because their tool's budget for the prompt was spent.
    pub budget_refusals: u64,
}

impl TurnContext {
    /// A context for the session's own turns.
    pub fn new(
        scope: Arc<SessionScope>,
        sink: Arc<dyn EventSink>,
        usage: Arc<watch::Sender<Option<(u64, u64)>>>,
    ) -> Self {
        Self {
            scope,
            sink,
            usage,
            subagent: None,
            output: None,
            must_ask: None,
        }
    }

    /// The tool the model called `name`, if the model here may call it.
    pub fn find_tool(&self, name: &str) -> Option<Arc<dyn crate::tools::Tool>> {
        self.offers(name).then(|| self.tools.get(name)).flatten()
    }

    /// Whether the model here may call `name`: the edit tools its family uses (`apply_patch`,
    /// or `edit_file` and `write_file`), and for a subagent only the tools it was given, never
    /// `task`.
    pub(crate) fn offers(&self, name: &str) -> bool {
        let edits = self.model_spec(&self.settings()).edit_tool;
        edits.offers(name) && self.subagent.as_ref().is_none_or(|s| s.allows(name))
    }

    /// Every tool offered to the model now.
    pub(crate) fn tool_specs(&self) -> Vec<crate::types::ToolSpec> {
        self.tools.specs(|name| self.offers(name))
    }

    /// Where the session's tools resolve paths.
    pub(crate) fn place(&self) -> Place {
        Place {
            cwd: self.cwd.clone(),
            home: self.config.user_home.clone(),
            folders: self.folders.clone(),
        }
    }

    /// The model to ask now: a subagent's own, else the session's current one.
    pub(crate) fn model_spec(&self, settings: &Settings) -> ModelSpec {
        let id = self
            .subagent
            .as_ref()
            .and_then(|s| s.agent.model.as_deref())
            .unwrap_or(&settings.model);
        crate::model::profile::resolve(
            &self.config,
            id,
            self.discovered.borrow().as_deref(),
            *self.window_cut.borrow(),
        )
    }

    /// The session's settings now.
    pub(crate) fn settings(&self) -> Settings {
        self.settings.borrow().clone()
    }

    /// The session's mode now.
    pub(crate) fn mode(&self) -> Mode {
        self.settings.borrow().mode
    }

    pub(crate) fn emit(&self, event: TurnEvent) {
        self.sink.emit(&self.session_id, event);
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
    pub fn system_prompt(&self, told: &Told) -> String {
        let intro = match &self.subagent {
            Some(scope) => scope.agent.prompt.as_str(),
            None => {
                "You are tandem, a coding agent working inside the user's editor. Use the tools \
                 to read, search and change the project; the user reviews edits and commands in \
                 the editor. Answer clearly and concisely; use Markdown for code."
            }
        };
        let mut prompt = format!(
            "{intro}\n\n\
             Working directory: {}\nPlatform: {}\nShell: {}\nToday's date: {}\nMode: {} ({})",
            self.cwd.display(),
            std::env::consts::OS,
            self.config.shell.describe(),
            told.date,
            told.mode.id(),
            told.mode.description(),
        );
        if !self.folders.is_empty() {
            prompt.push_str(
                "\nThe workspace's other folders (as much part of the project as the working directory; name them by absolute path):",
            );
            for folder in &self.folders {
                prompt.push_str(&format!("\n- {}", folder.display()));
            }
        }
        if let Some(extra) = &self.config.instructions {
            prompt.push_str("\n\n");
            prompt.push_str(extra);
        }
        prompt.push_str(&self.project_instructions);
        prompt.push_str(&self.mcp.instructions());
        if self.offers("load_skill") {
            prompt.push_str(&self.extras.skills.prompt_section());
        }
        if let Some(context) = self.extras.start_context() {
            prompt.push_str("\n\n## Session context (from the user's session_start hooks)\n\n");
            prompt.push_str(context);
        }
        prompt
    }
}
