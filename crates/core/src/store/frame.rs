//! The start of every model request in a conversation, fixed when the conversation starts:
//! the system prompt, the tools in their order, and the facts the prompt stated. Local
//! servers reuse their cache only for a byte-identical prefix, so later changes reach the
//! model as short context notes appended where they happen, never as edits to this start.

use crate::types::{Mode, ToolSpec};

/// The fixed start of a conversation's requests.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Frame {
    /// The system prompt, as first sent.
    pub(crate) system: String,
    /// The tools offered, in a stable order; tools that appear later are appended, tools
    /// that go away stay listed (their calls get a result that says why).
    pub(crate) tools: Vec<ToolSpec>,
    /// What the model was last told of the things that change.
    pub(crate) told: Told,
}

/// The facts that change during a session, as the model last heard them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Told {
    /// The permission mode.
    pub(crate) mode: Mode,
    /// Today's date (`YYYY-MM-DD`).
    pub(crate) date: String,
    /// The answer format the current prompt requires, if any.
    pub(crate) output: Option<String>,
}
