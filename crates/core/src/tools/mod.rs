//! Model-facing tools, one per file behind [`Tool`]; a session's [`Registry`] holds them all
//! (built-ins, `load_skill`, MCP tools, `task`). Built-ins declare typed arguments through
//! [`TypedTool`], which derives their schema and parses their calls.
//!
//! A call goes through two steps: [`Tool::prepare`] parses the arguments and resolves paths
//! (so the permission policy can judge the call before anything happens), then the prepared
//! [`Call`] may `preview` what it will do (an edit's diff, shown while asking) and `run`s.

mod apply_patch;
mod ask_user;
pub mod background;
mod command_card;
mod edit_file;
mod ending;
mod error;
pub(crate) mod files;
mod glob;
pub mod grep;
pub mod image;
mod jobs;
mod list_dir;
pub(crate) mod load_skill;
mod read_file;
pub(crate) mod registry;
mod run_background;
mod run_command;
pub(crate) mod task;
pub(crate) mod text;
mod typed;
mod update_plan;
pub(crate) mod web_fetch;
pub(crate) mod web_search;
mod write_file;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use futures::future::BoxFuture;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::client::{ClientCaps, ClientOps};
use crate::platform::named::{self, PathBase};
use crate::types::Access;
use crate::types::{EventSink, Location, ToolContent, ToolKind};
pub(crate) use error::ToolError;
pub(crate) use registry::{Entry, Ready, Registry, ToolSource, Unusable};
pub(crate) use task::{Delegation, Subagents};
pub(crate) use typed::{TypedTool, parameters};

/// What a finished call returns.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ToolOutput {
    /// What the model reads.
    pub(crate) model: String,
    /// Images the model is given with `model`, as `data:` URLs (the editor is shown them in
    /// `content`).
    pub(crate) images: Vec<String>,
    /// What the editor shows.
    pub(crate) content: Vec<ToolContent>,
    /// Whether the call failed.
    pub(crate) failed: bool,
    /// A new title for the call, when running it told more than its arguments did (which
    /// tier an edit matched at).
    pub(crate) title: Option<String>,
    /// The call started something that goes on (a background command): the editor's tool
    /// call stays in progress, and whatever runs it reports its end.
    pub(crate) keeps_running: bool,
}

impl ToolOutput {
    /// A success whose model text and editor text are the same.
    pub(crate) fn text(text: impl Into<String>) -> Self {
        let text = text.into();
        Self {
            content: vec![ToolContent::Text { text: text.clone() }],
            model: text,
            images: Vec::new(),
            failed: false,
            title: None,
            keeps_running: false,
        }
    }
    /// A failure the model can act on.
    pub(crate) fn error(message: impl Into<String>) -> Self {
        let message = message.into();
        Self {
            content: vec![ToolContent::Text {
                text: message.clone(),
            }],
            model: format!("Error: {message}"),
            images: Vec::new(),
            failed: true,
            title: None,
            keeps_running: false,
        }
    }
}

/// What every call of one turn's tools shares: made once per turn context, shared by all
/// its calls.
pub(crate) struct ToolScope {
    /// The session.
    pub(crate) session_id: String,
    /// The session's working directory (canonical).
    pub(crate) cwd: PathBuf,
    /// The workspace's other folders (ACP `additionalDirectories`, canonical): with `cwd`,
    /// the folders the editor has open.
    pub(crate) folders: Vec<PathBuf>,
    /// The editor.
    pub(crate) client: Arc<dyn ClientOps>,
    /// What the editor can do.
    pub(crate) caps: ClientCaps,
    /// Where events go (plans, terminal content).
    pub(crate) sink: Arc<dyn EventSink>,
    /// Whether a deny rule forbids reading a path: searches leave such files out.
    pub(crate) unreadable: Unreadable,
    /// The shell command lines run in.
    pub(crate) shell: crate::platform::Shell,
    /// The session's background commands.
    pub(crate) background: Arc<background::Background>,
}

impl ToolScope {
    /// The workspace's folders: the working directory and the other folders.
    pub(crate) fn roots(&self) -> Vec<PathBuf> {
        std::iter::once(self.cwd.clone())
            .chain(self.folders.iter().cloned())
            .collect()
    }

    /// Whether `path` is inside the folders the editor has open.
    pub(crate) fn in_editor_folders(&self, path: &Path) -> bool {
        named::inside(path, std::slice::from_ref(&self.cwd)) || named::inside(path, &self.folders)
    }
}

/// Everything a running call may use.
#[derive(Clone)]
pub(crate) struct ToolEnv {
    /// What the turn's calls share.
    pub(crate) scope: Arc<ToolScope>,
    /// The call id, for updates.
    pub(crate) call_id: String,
    /// Cancelled when the turn is.
    pub(crate) cancel: CancellationToken,
    /// What runs a `task` call's subagent (absent where subagents may not start one).
    pub(crate) subagents: Option<Arc<dyn Subagents>>,
    /// Whether the call was allowed (by the policy or the user) and runs: only then may
    /// tandem read or write on disk a file the editor would not open (one outside its
    /// folders). `false` while the call is previewed for the permission question.
    pub(crate) permitted: bool,
    /// The sandbox commands run in: the session's, unless the user turned it off or the
    /// session is in `full-access` mode.
    pub(crate) sandbox: Option<Arc<crate::platform::sandbox::SessionSandbox>>,
    /// What the call changed and started, for the turn to record with its result.
    pub(crate) journal: crate::types::Journal,
}

/// Tells the paths a deny rule forbids reading.
pub(crate) type Unreadable = Arc<dyn Fn(&Path) -> bool + Send + Sync>;

/// A call ready to run.
pub(crate) trait Call: Send {
    /// What the editor should show while the user is asked (an edit's diff). A failure here
    /// (e.g. `old_string` not found) ends the call before anyone is asked.
    fn preview<'a>(
        &'a mut self,
        _env: &'a ToolEnv,
    ) -> BoxFuture<'a, Result<Vec<ToolContent>, ToolOutput>> {
        Box::pin(async { Ok(Vec::new()) })
    }
    /// The call's title once previewed, when the preview told more than the arguments
    /// (which tier an edit matched at).
    fn title(&self) -> Option<String> {
        None
    }
    /// Does the work. Must return promptly once `env.cancel` fires.
    fn run(self: Box<Self>, env: ToolEnv) -> BoxFuture<'static, ToolOutput>;
}

/// A parsed call: how it looks, what it touches, and the work itself.
pub(crate) struct Prepared {
    /// Human title.
    pub(crate) title: String,
    /// Files it touches.
    pub(crate) locations: Vec<Location>,
    /// For the permission policy.
    pub(crate) access: Access,
    /// The work.
    pub(crate) call: Box<dyn Call>,
}

/// One model-facing tool.
pub(crate) trait Tool: Send + Sync {
    /// The stable name the model calls.
    fn name(&self) -> &str;
    /// What it does, for the model.
    fn description(&self) -> &str;
    /// JSON Schema of the arguments.
    fn parameters(&self) -> Value;
    /// ACP kind.
    fn kind(&self) -> ToolKind;
    /// A call's title before its arguments are known, or when they are unusable ("Edit
    /// file", never `edit_file`): the editor shows a call as soon as its name streams in, and
    /// CodeCompanion heads its question with the title the call has then ("Edit: <title> ?").
    fn label(&self) -> String;
    /// Whether calls are shown as tool calls (`update_plan` is shown as a plan instead).
    fn announced(&self) -> bool {
        true
    }
    /// Parses arguments and resolves paths against `place`.
    fn prepare(&self, args: Value, place: &PathBase) -> Result<Prepared, ToolError>;
}

/// Whether calls of this kind change something (and so run one at a time, in order).
pub(crate) fn mutates(kind: ToolKind) -> bool {
    matches!(kind, ToolKind::Edit | ToolKind::Execute | ToolKind::Other)
}

/// The built-in tools (DESIGN.md §3), with their specs; every session offers them first.
pub(crate) fn builtins() -> Vec<Entry> {
    let tools: [Arc<dyn Tool>; 12] = [
        Arc::new(read_file::ReadFile),
        Arc::new(write_file::WriteFile),
        Arc::new(edit_file::EditFile),
        Arc::new(apply_patch::ApplyPatch),
        Arc::new(run_command::RunCommand),
        Arc::new(jobs::CommandOutput),
        Arc::new(jobs::StopCommand),
        Arc::new(list_dir::ListDir),
        Arc::new(glob::Glob),
        Arc::new(grep::Grep),
        Arc::new(update_plan::UpdatePlan),
        Arc::new(ask_user::AskUser),
    ];
    tools.into_iter().map(Entry::new).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_tool_has_an_object_schema_and_a_unique_name() {
        let skills = Arc::new(crate::customize::skills::Catalog::default());
        let agents = vec![crate::customize::agents::general()];
        let registry = Registry::new(
            builtins()
                .into_iter()
                .chain([Entry::new(Arc::new(load_skill::LoadSkill::new(skills)))])
                .collect(),
            Vec::new(),
            vec![Entry::new(Arc::new(task::Task::new(agents)))],
        );
        let specs = registry.specs(|_| true);
        assert_eq!(specs.len(), 14);
        let mut names: Vec<_> = specs.iter().map(|s| s.name.clone()).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), 14, "{names:?}");
        for spec in specs {
            assert_eq!(spec.parameters["type"], "object", "{}", spec.name);
            assert!(spec.parameters.get("$schema").is_none());
        }
    }
}
