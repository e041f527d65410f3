//! A subagent's session as the editor sees it when it advertised `subagents`: announced on
//! the parent session, then running, then idle with how its work ended.

use super::StopReason;

/// Tokens a piece of work used, as the server reported them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tokens {
    /// Prompt tokens.
    pub input: u64,
    /// Completion tokens.
    pub output: u64,
    /// Prompt tokens served from the server's cache.
    pub cached: u64,
    /// Completion tokens spent reasoning.
    pub reasoning: u64,
}

/// Where a subagent's session is (sent on the parent as `subagent_update`).
#[derive(Debug, Clone, PartialEq)]
pub enum ChildState {
    /// Just made: its title, what it is for, and the folder it works in. Nothing about the
    /// child reaches the editor before this.
    Announced {
        /// What the editor shows for it (the `task` call's title).
        title: String,
        /// The subagent's own description.
        description: String,
        /// Its working directory (the parent's).
        cwd: std::path::PathBuf,
    },
    /// Working on its task.
    Running,
    /// Done with its task.
    Idle {
        /// How the work ended.
        ended: ChildEnd,
        /// What it spent, when the server reported usage.
        usage: Option<Tokens>,
    },
}

/// How a subagent's work ended.
#[derive(Debug, Clone, PartialEq)]
pub enum ChildEnd {
    /// As a turn ends.
    Stopped(StopReason),
    /// Its model request failed; why.
    Failed(String),
}

/// A subagent's session changed (see [`ChildState`]).
#[derive(Debug, Clone, PartialEq)]
pub struct ChildUpdate {
    /// The child session's id.
    pub id: String,
    /// What changed.
    pub state: ChildState,
}
