//! Transcript records: one self-describing JSON object per line, each carrying the schema
//! version. The conversation the model sees (history.rs) and what the editor replays are
//! rebuilt from them.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::conversation::{Carried, ToolCall};
use crate::types::{PlanItem, ToolCallView, ToolContent};
use crate::types::{PromptBlock, UserPart};

/// The record format version written by this build. Version 2 added the provider state
/// of model responses (`carried`, tool calls' `extra`); version 1 lines read as version 2
/// lines without it. The write-ahead records (`file_intent`, `file_outcome`,
/// `rewind_intent`, `rewind_dropped`) came later within version 2: a build from before them
/// skips those lines as unreadable and reads the rest.
pub(crate) const VERSION: u32 = 2;

/// How the view of a result keeps an image the result also gave the model: by its place
/// among the result's `images`, so the data is stored once.
const SAME_IMAGE: &str = "tandem:result-image:";

/// `view` as a [`Record::ToolResult`] keeps it: an image that is also one of `images` is
/// named by its place there.
pub(crate) fn view_by_reference(mut view: ToolCallView, images: &[String]) -> ToolCallView {
    for content in &mut view.content {
        if let ToolContent::Image { url } = content
            && let Some(i) = images.iter().position(|image| image == url)
        {
            *url = format!("{SAME_IMAGE}{i}");
        }
    }
    view
}

/// The other way round: `view` with every image it names by place in `images` in full.
pub(crate) fn view_in_full(mut view: ToolCallView, images: &[String]) -> ToolCallView {
    for content in &mut view.content {
        if let ToolContent::Image { url } = content
            && let Some(image) = url
                .strip_prefix(SAME_IMAGE)
                .and_then(|i| i.parse::<usize>().ok())
                .and_then(|i| images.get(i))
        {
            *url = image.clone();
        }
    }
    view
}

/// One line of a transcript, read with [`Line::parse`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Line {
    /// Schema version.
    pub(crate) v: u32,
    /// When it was written (RFC 3339).
    pub at: String,
    /// What happened.
    #[serde(flatten)]
    pub record: Record,
}

/// The fields of a line besides its record's.
#[derive(Deserialize)]
struct Stamp {
    v: u32,
    at: String,
}

impl Line {
    /// The line `bytes` hold. Read twice, the version and time, then the record, which is
    /// quicker than serde's way with a flattened tagged enum: that gathers the whole object
    /// into an in-memory tree and the record's fields into a second one (a long session's
    /// load spent a sixth of its time there).
    pub(crate) fn parse(bytes: &[u8]) -> serde_json::Result<Self> {
        let Stamp { v, at } = serde_json::from_slice(bytes)?;
        let record = serde_json::from_slice(bytes)?;
        Ok(Line { v, at, record })
    }
}

/// What happened in a session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Record {
    /// The first line: which session this is.
    Meta {
        /// Session id.
        id: String,
        /// Working directory.
        cwd: PathBuf,
    },
    /// The workspace's other folders (ACP `additionalDirectories`) from here on; written
    /// when a session opens with a list that differs from the last one recorded.
    Folders {
        /// Absolute paths, in the editor's order.
        folders: Vec<PathBuf>,
    },
    /// A prompt from the user: it starts a turn, unless `within_turn`.
    User {
        /// What the model reads of it (mentioned files inlined, hooks' context added).
        parts: Vec<UserPart>,
        /// The blocks as the editor sent them, which a load shows; absent when they would
        /// show as `parts` do (and in records written before tandem kept them).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        sent: Option<Vec<PromptBlock>>,
        /// Said during a turn rather than starting one: a message the user steered the
        /// running turn with, or tandem's own request to redo an answer.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        within_turn: bool,
    },
    /// A slash command the user ran that is not a prompt for the model (`/compact`): the
    /// editor sees it again on load, the model never does.
    Command {
        /// The prompt as the user wrote it.
        parts: Vec<UserPart>,
    },
    /// Something tandem told the user outside the model's answers (`/compact` with nothing
    /// to compact); replayed as the agent's text, never seen by the model.
    Note {
        /// The text (Markdown).
        text: String,
    },
    /// Something that changed since the conversation started (mode, date, answer format,
    /// tools), told to the model where it changed; the editor never shows it.
    Context {
        /// What the model reads.
        text: String,
    },
    /// One model response.
    Assistant {
        /// Visible text.
        text: String,
        /// Reasoning shown to the user; sent back to the model only with `carried` state of
        /// the same origin.
        #[serde(default)]
        reasoning: String,
        /// Calls it made.
        #[serde(default)]
        tool_calls: Vec<ToolCall>,
        /// What the server wants back with this response (absent in version 1).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        carried: Option<Carried>,
    },
    /// A tool call's result, and how the editor last showed it.
    ToolResult {
        /// The call.
        call_id: String,
        /// What the model read.
        content: String,
        /// Images the model was given with it, as `data:` URLs (absent when none).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        images: Vec<String>,
        /// The final tool call as shown (absent for calls never shown, e.g. not run).
        #[serde(default)]
        view: Option<ToolCallView>,
    },
    /// The agent's plan.
    Plan {
        /// The whole plan.
        entries: Vec<PlanItem>,
    },
    /// Mode, model and reasoning effort.
    Settings {
        /// Mode id.
        mode: String,
        /// Model id.
        model: String,
        /// Reasoning effort.
        reasoning_effort: String,
        /// Automatic compaction (absent in transcripts older than the switch: on).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        auto_compact: Option<bool>,
    },
    /// Calls the editor was shown while the model wrote them, cut off before they were
    /// complete (a cancel, a broken stream): nothing of them is kept but their ids, which no
    /// later call may take (the editor still shows them).
    CutOff {
        /// The editor's ids.
        call_ids: Vec<String>,
    },
    /// The session's title.
    Title {
        /// The title.
        title: String,
    },
    /// Older history replaced by a summary; the last `kept` messages stay verbatim.
    Compaction {
        /// The summary the model sees instead of the older messages.
        summary: String,
        /// How many messages were kept.
        kept: usize,
    },
    /// The model server refused a request that held images: every image the conversation
    /// held up to here is left out from now on, each replaced by `note`.
    ImagesLeftOut {
        /// What the model reads in each image's place.
        note: String,
    },
    /// A file a tool call changed, recorded after the change, before the call's result:
    /// what it held before and after, so a rewind can put it back. Written by tandem before
    /// changes were recorded ahead ([`Record::FileIntent`]), and still for a change made
    /// without a ledger; read as a change that was made.
    FileChange {
        /// The file (absolute).
        path: PathBuf,
        /// What it held before.
        before: Snapshot,
        /// What tandem left in it.
        after: Snapshot,
    },
    /// A command line a tool call started (recorded before the call's result): a rewind
    /// cannot take back what it did, and says so.
    CommandRan {
        /// The line.
        line: String,
    },
    /// A file change a tool call is about to make, recorded and written before the file is
    /// touched (write-ahead); its [`Record::FileOutcome`] follows. A load that finds no
    /// outcome looks at the file and records what it found. Transcripts written before
    /// tandem recorded changes ahead hold a [`Record::FileChange`] instead.
    FileIntent {
        /// Names the change for its outcome (unique in the transcript).
        id: String,
        /// The file (absolute).
        path: PathBuf,
        /// What it holds before: what a rewind puts back.
        before: Snapshot,
        /// What it will hold (`Missing`: tandem removes it), by its hash: the record the
        /// change waits for carries one text, and the outcome the other.
        after: Snapshot,
    },
    /// How the change a [`Record::FileIntent`] announced ended.
    FileOutcome {
        /// The intent's id.
        id: String,
        /// What happened.
        outcome: Outcome,
        /// For a change made, what the file holds now, whole where it can be kept (see
        /// [`Snapshot::of`]); absent otherwise.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        after: Option<Snapshot>,
        /// Found by looking at the file when the session was opened again: tandem had
        /// stopped between the intent and its outcome.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        found: bool,
    },
    /// A rewind about to be applied, recorded and written before any file is put back
    /// (write-ahead); the [`Record::Rewind`] that names it follows once it is applied, or a
    /// [`Record::RewindDropped`] when it was not. A load that finds neither completes it.
    RewindIntent {
        /// Names it for its outcome (unique in the transcript).
        id: String,
        /// The first turn it takes back, as [`Record::Rewind`] counts.
        turn: usize,
        /// The files it puts back, each from what it holds now to what it will hold.
        files: Vec<Restored>,
    },
    /// A [`Record::RewindIntent`] that was not applied, and no file touched: its record
    /// could not be written first.
    RewindDropped {
        /// The intent's id.
        id: String,
        /// Why, in words.
        why: String,
    },
    /// The conversation went back to before turn `turn` (1-based, counting the turns the
    /// conversation held then): those turns are out of it from here on, and the files in
    /// `restored` were put back.
    Rewind {
        /// The first turn taken back.
        turn: usize,
        /// The files put back, each from what it held to what it holds again.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        restored: Vec<Restored>,
        /// The [`Record::RewindIntent`] this completes (absent when no file was to be put
        /// back, and in transcripts written before rewinds were recorded ahead).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        intent: Option<String>,
    },
    /// A record of a subagent's conversation, run by the `task` call `call_id`; not part of
    /// the session's own history.
    Subagent {
        /// The `task` call that runs it.
        call_id: String,
        /// The subagent's name.
        agent: String,
        /// What it recorded.
        record: Box<Record>,
    },
}

/// A file's content as a transcript keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Snapshot {
    /// There was no file.
    Missing,
    /// The whole text (with any byte order mark).
    Text(String),
    /// The text was not kept, only its SHA-256: it held a secret (transcripts never hold
    /// one) or was too large. Such a file can be compared but not put back.
    Withheld {
        /// The text's SHA-256, in hex.
        sha256: String,
        /// Why it was not kept, in words.
        why: String,
    },
}

/// How a file change recorded ahead ([`Record::FileIntent`]) ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "result", rename_all = "snake_case")]
pub enum Outcome {
    /// The file holds what the intent said: a change like any other, which a rewind takes
    /// back.
    Done,
    /// The file was left as it was.
    NotMade {
        /// Why, in words.
        why: String,
    },
    /// The file holds neither its text before nor the intended one: someone else changed it
    /// while tandem had stopped mid-change. tandem does not know what its change did, so a
    /// rewind leaves the file alone.
    Unknown {
        /// What tandem found, in words.
        why: String,
    },
}

/// A file a rewind put back.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Restored {
    /// The file.
    pub path: PathBuf,
    /// What it held before the rewind.
    pub(crate) before: Snapshot,
    /// What the rewind put in it (`Missing`: removed).
    pub(crate) after: Snapshot,
}

/// The text that introduces a compaction summary to the model.
pub(crate) fn summary_preamble(summary: &str) -> String {
    format!(
        "[Summary of the earlier conversation, which was compacted to fit the context window]\n{summary}\n[End of summary]"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_round_trip_with_a_version() {
        let l = Line {
            v: VERSION,
            at: String::new(),
            record: Record::Title { title: "t".into() },
        };
        let text = serde_json::to_string(&l).unwrap();
        assert!(text.contains("\"v\":2") && text.contains("\"type\":\"title\""));
        assert_eq!(Line::parse(text.as_bytes()).unwrap(), l);
    }

    #[test]
    fn a_line_reads_whatever_the_order_of_its_fields() {
        let text = r#"{"type":"user","parts":[{"text":"hi"}],"at":"t","v":1,"later":true}"#;
        let line = Line::parse(text.as_bytes()).unwrap();
        assert_eq!((line.v, line.at.as_str()), (1, "t"));
        assert!(matches!(line.record, Record::User { parts, .. } if parts.len() == 1));
        for broken in [
            r#"{"v":1,"at":"t"}"#,
            r#"{"type":"title","title":"x"}"#,
            "{",
        ] {
            assert!(Line::parse(broken.as_bytes()).is_err(), "{broken}");
        }
    }
}
