//! Whose turn it is: the session's own, or a subagent's (a `task` call's). Everything that
//! differs between the two is asked of one [`Role`] value: which tools the model may call,
//! which model answers, how the system prompt starts, and whether subagents may be started.

use std::collections::HashSet;
use std::sync::Arc;

use crate::customize::agents::AgentDef;
use crate::tools::TypedTool;
use crate::tools::task::Task;

/// The session's own turn, or a subagent's.
#[derive(Clone, Default)]
pub(crate) enum Role {
    /// The user's prompt, in the session.
    #[default]
    Session,
    /// A subagent working for a `task` call.
    Subagent(Arc<Subagent>),
}

/// What a subagent is and may do.
pub(crate) struct Subagent {
    /// Its definition.
    pub(crate) agent: AgentDef,
    /// The tools it may call (`None`: all but `task`).
    allowed: Option<HashSet<String>>,
}

impl Subagent {
    /// The subagent `agent` defines.
    pub(crate) fn new(agent: AgentDef) -> Self {
        Self {
            allowed: agent.tools.as_ref().map(|t| t.iter().cloned().collect()),
            agent,
        }
    }
}

/// How a session's own system prompt starts.
const SESSION_INTRO: &str = "You are tandem, a coding agent working inside the user's editor. \
Use the tools to read, search and change the project; the user reviews edits and commands in \
the editor. Answer clearly and concisely; use Markdown for code.";

impl Role {
    /// Whether the model here may call `name`. A subagent never calls `task` (subagents do
    /// not nest) nor `ask_user`, and calls only the tools it was given; one given the edit tools of one
    /// family may use the other family's, since which of them a model is offered depends on
    /// the model, not on the agent.
    pub(crate) fn allows(&self, name: &str) -> bool {
        let Role::Subagent(sub) = self else {
            return true;
        };
        const EDITS: [&str; 3] = ["edit_file", "write_file", "apply_patch"];
        let edits =
            |a: &HashSet<String>| EDITS.contains(&name) && EDITS.iter().any(|e| a.contains(*e));
        // Nor does it ask the user: its questions go to the session's model.
        name != Task::NAME
            && name != "ask_user"
            && sub
                .allowed
                .as_ref()
                .is_none_or(|a| a.contains(name) || edits(a))
    }

    /// The model this role asks instead of the session's current one, if any.
    pub(crate) fn model(&self) -> Option<&str> {
        match self {
            Role::Session => None,
            Role::Subagent(sub) => sub.agent.model.as_deref(),
        }
    }

    /// How the system prompt starts.
    pub(crate) fn intro(&self) -> &str {
        match self {
            Role::Session => SESSION_INTRO,
            Role::Subagent(sub) => &sub.agent.prompt,
        }
    }

    /// The subagent's name, told to hooks (`None` for the session's own turn).
    pub(crate) fn agent_name(&self) -> Option<&str> {
        match self {
            Role::Session => None,
            Role::Subagent(sub) => Some(&sub.agent.name),
        }
    }

    /// Whether this turn may start subagents (only the session's own).
    pub(crate) fn starts_subagents(&self) -> bool {
        matches!(self, Role::Session)
    }

    /// Whether the project's held servers are asked about in this turn (the session's own;
    /// a subagent leaves that to the session).
    pub(crate) fn asks_about_project_servers(&self) -> bool {
        matches!(self, Role::Session)
    }
}
