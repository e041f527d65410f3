//! How a turn ends: the conversation it leaves (every tool call in it answered once) and its
//! result, and the words the model reads for calls a turn did not run.

use crate::model::ModelError;
use crate::store::History;
use crate::types::StopReason;

/// What the model reads for calls not run because the user cancelled the turn.
pub(crate) const CANCELLED: &str = "Not run: the user cancelled the turn.";
/// What the model reads for calls not run because the model request failed.
pub(super) const REQUEST_FAILED: &str = "Not run: the model request failed.";

/// The conversation after a turn and how the turn ended. The conversation is returned also
/// when the turn failed or was cancelled, so it keeps what the user saw, and every tool call
/// in it has exactly one result. It may have been compacted on the way.
#[derive(Debug)]
pub(crate) struct TurnOutcome {
    /// The session's whole conversation now.
    pub(crate) history: History,
    /// How the turn ended.
    pub(crate) result: Result<StopReason, ModelError>,
    /// What a command action printed (only for those).
    pub(crate) output: Option<String>,
    /// With an output schema, once the model finished: the validated value, or why the last
    /// answer still did not validate.
    pub(crate) structured: Option<Result<serde_json::Value, String>>,
    /// For a rewind or its listing: what it did.
    pub(crate) rewound: Option<super::rewind::report::RewindReport>,
}

impl TurnOutcome {
    /// A turn that ended without a command action's output.
    pub(crate) fn ended(history: History, result: Result<StopReason, ModelError>) -> Self {
        TurnOutcome {
            history,
            result,
            output: None,
            structured: None,
            rewound: None,
        }
    }
}
