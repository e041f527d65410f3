//! The shapes of `_tandem/session/rewind` and `_tandem/session/steer` (answered in
//! methods.rs): taking turns back and speaking to a running turn, for clients that build a UI
//! on them (every client also has `/rewind`, `/undo`, and prompts queued while a turn runs).

use agent_client_protocol::v1::schema::ContentBlock;
use agent_client_protocol::{JsonRpcRequest, JsonRpcResponse};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::store::timeline::{Touch, TurnSummary};
use crate::turn::{Conflicts, FileResult, RewindReport};

/// What to do with a file that changed after tandem last wrote it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum ConflictChoice {
    /// Ask the user about each such file (`session/request_permission`).
    #[default]
    Ask,
    /// Leave every such file as it is.
    Keep,
    /// Put every such file back all the same, discarding those changes.
    Overwrite,
}

/// `_tandem/session/rewind`: go back to before a turn (the conversation, and each file
/// tandem changed since), or, without `turn`, list the turns.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, JsonRpcRequest)]
#[request(method = "_tandem/session/rewind", response = RewindResponse)]
#[serde(rename_all = "camelCase")]
pub(crate) struct RewindRequest {
    /// An open session.
    pub(crate) session_id: String,
    /// The first turn to take back (1-based, as the response's `turns` number them); absent:
    /// nothing is taken back, the turns are listed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub(crate) turn: Option<usize>,
    /// Files changed after tandem last wrote them: `ask` (default), `keep` or `overwrite`.
    #[serde(default)]
    pub(crate) conflicts: ConflictChoice,
}

/// What the rewind did.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, JsonRpcResponse)]
#[serde(rename_all = "camelCase")]
pub(crate) struct RewindResponse {
    /// Whether the conversation went back (`false`: a listing, or a turn that does not
    /// exist, or the request was cancelled while the user was asked).
    pub(crate) rewound: bool,
    /// The turns taken back.
    pub(crate) taken_back: Vec<TurnInfo>,
    /// Each file tandem changed since the turn started, and what happened to it.
    pub(crate) files: Vec<FileInfo>,
    /// The command lines that ran in the turns taken back: what they did is not undone.
    pub(crate) commands: Vec<String>,
    /// The turns the conversation holds now.
    pub(crate) turns: Vec<TurnInfo>,
    /// The same in words (Markdown), as `/rewind` answers.
    pub(crate) message: String,
}

/// One turn.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct TurnInfo {
    /// Its number (1-based).
    pub(crate) number: usize,
    /// The first line of its prompt.
    pub(crate) prompt: String,
    /// The files it changed: `path` and `change` (`created`, `changed` or `deleted`).
    pub(crate) files: Vec<TurnFile>,
    /// The command lines it ran.
    pub(crate) commands: Vec<String>,
}

/// A file a turn changed.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct TurnFile {
    /// The file (absolute).
    pub(crate) path: String,
    /// `created`, `changed` or `deleted`.
    pub(crate) change: String,
}

/// A file of a rewind.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct FileInfo {
    /// The file (absolute).
    pub(crate) path: String,
    /// `restored`, `recreated` (tandem had deleted it), `removed` (tandem had created it),
    /// `emptied` (tandem had created it and only the editor has it: delete it there),
    /// `unchanged` (it already held its earlier text), `kept` (it changed after tandem wrote
    /// it and was left as it is), `overwritten` (it changed after tandem wrote it and was put
    /// back all the same) or `failed`.
    pub(crate) outcome: String,
    /// For `kept` and `overwritten`: a short unified diff from what tandem wrote to what was
    /// there; for `failed`: why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) detail: Option<String>,
    /// Whether it was written through the editor (`fs/write_text_file`).
    pub(crate) through_editor: bool,
}

/// `_tandem/session/steer`: a message for the session's running turn, read by the model at
/// its next request (after the results of the calls running now).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, JsonRpcRequest)]
#[request(method = "_tandem/session/steer", response = SteerResponse)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SteerRequest {
    /// An open session with a running turn.
    pub(crate) session_id: String,
    /// The message, as a `session/prompt`'s content blocks (ACP `ContentBlock`, as in
    /// `protocol/acp/v1/schema.json`).
    #[schemars(with = "Vec<serde_json::Map<String, serde_json::Value>>")]
    pub(crate) prompt: Vec<ContentBlock>,
}

/// Sent once the message reached the model: it is in the conversation, and the editor was
/// shown it as a `user_message_chunk` where it landed.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema, JsonRpcResponse)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SteerResponse {}

impl From<ConflictChoice> for Conflicts {
    fn from(choice: ConflictChoice) -> Self {
        match choice {
            ConflictChoice::Ask => Conflicts::Ask,
            ConflictChoice::Keep => Conflicts::Keep,
            ConflictChoice::Overwrite => Conflicts::Overwrite,
        }
    }
}

/// The response for what a rewind did.
pub(crate) fn response(report: RewindReport) -> RewindResponse {
    let through_editor = report.through_editor;
    RewindResponse {
        rewound: report.turn.is_some() && !report.taken_back.is_empty(),
        taken_back: report.taken_back.iter().map(turn_info).collect(),
        files: report
            .files
            .into_iter()
            .map(|file| {
                let (outcome, detail, written) = match file.result {
                    FileResult::Restored => ("restored", None, true),
                    FileResult::Recreated => ("recreated", None, true),
                    FileResult::Removed => ("removed", None, false),
                    FileResult::Emptied => ("emptied", None, true),
                    FileResult::AlreadyBack => ("unchanged", None, false),
                    FileResult::LeftChanged { diff } => ("kept", Some(diff), false),
                    FileResult::Overwritten { diff } => ("overwritten", Some(diff), true),
                    FileResult::Failed { why } => ("failed", Some(why), false),
                };
                FileInfo {
                    path: file.path.display().to_string(),
                    outcome: outcome.into(),
                    detail,
                    through_editor: written && through_editor,
                }
            })
            .collect(),
        commands: report.commands,
        turns: report.turns.iter().map(turn_info).collect(),
        message: report.message,
    }
}

fn turn_info(turn: &TurnSummary) -> TurnInfo {
    TurnInfo {
        number: turn.number,
        prompt: turn.first_line.clone(),
        files: turn
            .files
            .iter()
            .map(|(path, touch)| TurnFile {
                path: path.display().to_string(),
                change: match touch {
                    Touch::Created => "created",
                    Touch::Changed => "changed",
                    Touch::Deleted => "deleted",
                }
                .into(),
            })
            .collect(),
        commands: turn.commands.clone(),
    }
}
