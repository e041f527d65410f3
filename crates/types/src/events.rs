//! What the core tells the editor, without knowing how it is sent: the ACP layer turns each
//! [`TurnEvent`] into a `session/update` notification (acp/convert.rs).

use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{Mode, OptionView, PromptBlock, ToolKind};

/// Where a tool call is in its life (ACP `ToolCallStatus`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolStatus {
    /// Known, not started (e.g. waiting for permission).
    Pending,
    /// Running.
    InProgress,
    /// Finished.
    Completed,
    /// Failed, refused, rejected or cancelled.
    Failed,
}

/// Something a tool call shows in the editor.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "type")]
pub enum ToolContent {
    /// Text (Markdown).
    Text {
        /// The text.
        text: String,
    },
    /// A file change; `old` is `None` for a new file.
    Diff {
        /// The file.
        path: PathBuf,
        /// Text before.
        old: Option<String>,
        /// Text after.
        new: String,
    },
    /// An image a call gave (an MCP screenshot, an image file read), as a `data:` URL.
    Image {
        /// The image.
        url: String,
    },
    /// A live terminal in the editor.
    Terminal {
        /// The editor's terminal id.
        id: String,
        /// Once the call answered: the command's output and how it ended (a background
        /// command's output so far), as Markdown. The terminal is released when the command
        /// ends, so a `session/load` replays this text instead.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        output: Option<String>,
    },
}

impl ToolContent {
    /// A command's terminal as the call's result holds it: released once the command ended,
    /// and an editor may no longer be sent its id (Zed forgets a released terminal and drops a
    /// whole update that names one); the card keeps showing the terminal it was given at the
    /// start (a background command's job updates that card itself until it ends).
    pub fn is_released_terminal(&self) -> bool {
        matches!(
            self,
            ToolContent::Terminal {
                output: Some(_),
                ..
            }
        )
    }
}

/// A file (and line) a tool call touches, so the editor can follow along.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Location {
    /// Absolute path.
    pub path: PathBuf,
    /// 1-based line, when known.
    pub line: Option<u32>,
}

/// A tool call as the editor shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCallView {
    /// The model's call id.
    pub id: String,
    /// Human title ("Read src/main.rs", "Run `cargo test`").
    pub title: String,
    /// What kind of work it is.
    pub kind: ToolKind,
    /// Current status.
    pub status: ToolStatus,
    /// Files it touches.
    pub locations: Vec<Location>,
    /// The arguments as the model sent them.
    pub raw_input: Option<Value>,
    /// What it shows.
    pub content: Vec<ToolContent>,
}

impl ToolCallView {
    /// Makes a question about a change open with the change: the first diff goes first in the
    /// content (what came before it right after it, in its order; the rest untouched) and its
    /// file first among the locations. CodeCompanion's approval view shows a diff only when
    /// it is `content[0]` (`requires_diff` in `acp/request_permission.lua` looks at
    /// `tool_call.content[1]`, Lua's first) and names it by the first location (`get_diff`:
    /// "tool_call.locations[1].path"); without a diff first the user sees a bare question.
    pub fn diff_first(&mut self) {
        let Some(i) = self
            .content
            .iter()
            .position(|c| matches!(c, ToolContent::Diff { .. }))
        else {
            return;
        };
        self.content[..=i].rotate_right(1);
        if let ToolContent::Diff { path, .. } = &self.content[0]
            && let Some(j) = self.locations.iter().position(|l| &l.path == path)
        {
            self.locations[..=j].rotate_right(1);
        }
    }
}

/// One entry of the agent's plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanItem {
    /// What to do.
    pub content: String,
    /// `pending`, `in_progress` or `completed`.
    pub status: String,
    /// `high`, `medium` or `low`.
    pub priority: String,
}

/// Something the editor should see, as soon as it happens.
#[derive(Debug, Clone, PartialEq)]
pub enum TurnEvent {
    /// A piece of the model's answer.
    Text(String),
    /// A piece of the model's reasoning.
    Thought(String),
    /// Context in use after a model response, and the model's window.
    Usage {
        /// Tokens in the context (last request's prompt + completion).
        used: u64,
        /// The model's context window.
        size: u64,
        /// What the session has cost so far in US dollars, once that is known.
        cost: Option<f64>,
    },
    /// The session's mode changed (sent as `current_mode_update`).
    ModeChanged(Mode),
    /// The session's config options changed (sent as `config_option_update`).
    OptionsChanged(Vec<OptionView>),
    /// A new tool call (sent as `tool_call`).
    ToolCall(ToolCallView),
    /// A call shown while the model was still writing it, now whole: every field again (sent
    /// as a `tool_call_update` carrying them all).
    ToolCallReady(ToolCallView),
    /// A tool call changed (sent as `tool_call_update`); `None` fields are unchanged.
    ToolCallUpdate {
        /// The call.
        id: String,
        /// New status.
        status: Option<ToolStatus>,
        /// New content (replaces the old).
        content: Option<Vec<ToolContent>>,
        /// New title.
        title: Option<String>,
    },
    /// The agent's plan, whole (sent as `plan`, or `plan_update` to editors that advertised
    /// plan operations); an empty plan is taken away (`plan_removed` for those editors).
    Plan(Vec<PlanItem>),
    /// A note from tandem itself, not the model's words: a guard that stopped calls, a cut the
    /// server made, a disk that refuses writes (sent as `notice` to editors that advertised
    /// `session.notices`, as an italic line of the answer to others).
    Notice {
        /// How much it matters.
        severity: Severity,
        /// What happened, as one or two sentences.
        text: String,
    },
    /// What follows is a new message (the model's next answer, or the next replayed one):
    /// message chunks after it carry a new `messageId`. Nothing is sent for it.
    NewMessage,
    /// A user message, when a stored session is replayed (sent as `user_message_chunk`s):
    /// its blocks as the user sent them.
    UserMessage(Vec<PromptBlock>),
    /// The session's title (sent as `session_info_update`).
    Title(String),
    /// A compaction started, finished or failed (sent as `compaction_update`; only for editors
    /// that advertised `session.compaction`).
    Compaction {
        /// Identifies this compaction across its updates.
        id: String,
        /// Where it is.
        status: CompactionStatus,
        /// The summary, once completed.
        summary: Option<String>,
        /// Why it failed, when it did.
        error: Option<String>,
    },
    /// A subagent's session was announced, started or finished (sent on the parent session
    /// as `subagent_update`; only to editors that advertised `subagents`).
    Child(super::ChildUpdate),
    /// What another session sent this one: a subagent's task, from its parent (sent as
    /// `session_message`; only to editors that advertised `subagents`).
    MessageFrom {
        /// The sending session.
        sender: String,
        /// The receiving session (the one the event is for).
        recipient: String,
        /// The message.
        text: String,
    },
    /// A piece of a compaction's summary as the model writes it (sent as
    /// `compaction_summary_chunk`; only for editors that advertised `session.compaction`).
    CompactionChunk {
        /// The compaction it belongs to.
        id: String,
        /// The piece.
        text: String,
    },
}

/// How much a [`TurnEvent::Notice`] matters (ACP `NoticeSeverity`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Severity {
    /// For the record: something was left out or shortened as designed.
    Info,
    /// Something the user may want to act on.
    Warning,
    /// Something failed that the user must know about.
    Error,
}

/// Where a compaction is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompactionStatus {
    /// The summary is being written.
    InProgress,
    /// The older history was replaced by the summary.
    Completed,
    /// Summarizing failed; the history is unchanged.
    Failed,
}

/// Where events go; one per connection, shared by its sessions.
pub trait EventSink: Send + Sync {
    /// Delivers one event for `session_id`, in order with the others.
    fn emit(&self, session_id: &str, event: TurnEvent);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(t: &str) -> ToolContent {
        ToolContent::Text { text: t.into() }
    }

    fn diff(path: &str) -> ToolContent {
        ToolContent::Diff {
            path: path.into(),
            old: None,
            new: "x\n".into(),
        }
    }

    fn at(path: &str) -> Location {
        Location {
            path: path.into(),
            line: None,
        }
    }

    fn view(content: Vec<ToolContent>, locations: Vec<Location>) -> ToolCallView {
        ToolCallView {
            id: "c".into(),
            title: "Patch".into(),
            kind: ToolKind::Edit,
            status: ToolStatus::Pending,
            locations,
            raw_input: None,
            content,
        }
    }

    #[test]
    fn the_first_diff_and_its_file_go_first_and_what_came_before_follows() {
        let mut call = view(
            vec![
                text("a too large"),
                text("deletes a"),
                diff("b"),
                text("b's note"),
                diff("c"),
            ],
            vec![at("a"), at("b"), at("c")],
        );
        call.diff_first();
        assert_eq!(
            call.content,
            [
                diff("b"),
                text("a too large"),
                text("deletes a"),
                text("b's note"),
                diff("c")
            ]
        );
        assert_eq!(call.locations, [at("b"), at("a"), at("c")]);
        // Already first, or no diff at all: unchanged.
        for content in [vec![diff("a"), text("note")], vec![text("why")]] {
            let mut call = view(content.clone(), vec![at("a"), at("b")]);
            call.diff_first();
            assert_eq!(call.content, content);
            assert_eq!(call.locations, [at("a"), at("b")]);
        }
    }
}
