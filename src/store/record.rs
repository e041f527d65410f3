//! Transcript records: one self-describing JSON object per line, each carrying the schema
//! version. The conversation the model sees, and what the editor replays, are rebuilt from them.

use std::collections::HashMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::model::{Message, ToolCall};
use crate::types::UserPart;
use crate::types::{PlanItem, ToolCallView};

/// The record format version written by this build.
pub const VERSION: u32 = 1;

/// One line of a transcript.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Line {
    /// Schema version.
    pub v: u32,
    /// When it was written (RFC 3339).
    pub at: String,
    /// What happened.
    #[serde(flatten)]
    pub record: Record,
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
    /// A prompt from the user.
    User {
        /// Its content.
        parts: Vec<UserPart>,
    },
    /// One model response.
    Assistant {
        /// Visible text.
        text: String,
        /// Reasoning shown to the user (never sent back to the model).
        #[serde(default)]
        reasoning: String,
        /// Calls it made.
        #[serde(default)]
        tool_calls: Vec<ToolCall>,
    },
    /// A tool call's result, and how the editor last showed it.
    ToolResult {
        /// The call.
        call_id: String,
        /// What the model read.
        content: String,
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

/// The text that introduces a compaction summary to the model.
pub fn summary_preamble(summary: &str) -> String {
    format!(
        "[Summary of the earlier conversation, which was compacted to fit the context window]\n{summary}\n[End of summary]"
    )
}

/// Replaces all but the last `kept` messages with `summary`, which is put in front of the
/// first kept user message (so user and assistant turns still alternate).
pub fn compact(history: Vec<Message>, summary: &str, kept: usize) -> Vec<Message> {
    let split = history.len().saturating_sub(kept);
    let mut recent: Vec<Message> = history.into_iter().skip(split).collect();
    let note = UserPart::Text(summary_preamble(summary));
    match recent.first_mut() {
        Some(Message::User(parts)) => parts.insert(0, note),
        _ => recent.insert(0, Message::User(vec![note])),
    }
    recent
}

/// Rebuilds the conversation the model sees. Every tool call gets exactly one result: a call
/// whose result never reached the transcript (a crash mid-turn) is answered as not run.
pub fn history(lines: &[Line]) -> Vec<Message> {
    let mut out: Vec<Message> = Vec::new();
    let mut open: Option<(Vec<String>, HashMap<String, String>)> = None;
    let close = |out: &mut Vec<Message>,
                 open: &mut Option<(Vec<String>, HashMap<String, String>)>| {
        if let Some((ids, mut results)) = open.take() {
            for id in ids {
                let content = results.remove(&id).unwrap_or_else(|| {
                    "Not run: tandem stopped before this call finished.".to_string()
                });
                out.push(Message::Tool {
                    call_id: id,
                    content,
                });
            }
        }
    };
    for line in lines {
        match &line.record {
            Record::User { parts } => {
                close(&mut out, &mut open);
                out.push(Message::User(parts.clone()));
            }
            Record::Assistant {
                text, tool_calls, ..
            } => {
                close(&mut out, &mut open);
                out.push(Message::Assistant {
                    text: text.clone(),
                    tool_calls: tool_calls.clone(),
                });
                if !tool_calls.is_empty() {
                    open = Some((
                        tool_calls.iter().map(|c| c.id.clone()).collect(),
                        HashMap::new(),
                    ));
                }
            }
            Record::ToolResult {
                call_id, content, ..
            } => {
                if let Some((_, results)) = open.as_mut() {
                    results.insert(call_id.clone(), content.clone());
                }
            }
            Record::Compaction { summary, kept } => {
                close(&mut out, &mut open);
                out = compact(std::mem::take(&mut out), summary, *kept);
            }
            Record::Meta { .. }
            | Record::Plan { .. }
            | Record::Settings { .. }
            | Record::Title { .. }
            | Record::Subagent { .. } => {}
        }
    }
    close(&mut out, &mut open);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(record: Record) -> Line {
        Line {
            v: VERSION,
            at: String::new(),
            record,
        }
    }

    fn call(id: &str) -> ToolCall {
        ToolCall {
            id: id.into(),
            name: "read_file".into(),
            arguments: "{}".into(),
        }
    }

    #[test]
    fn results_follow_their_calls_in_call_order_and_missing_ones_are_filled() {
        let lines = vec![
            line(Record::User {
                parts: vec![UserPart::Text("hi".into())],
            }),
            line(Record::Assistant {
                text: String::new(),
                reasoning: "r".into(),
                tool_calls: vec![call("a"), call("b"), call("c")],
            }),
            line(Record::ToolResult {
                call_id: "b".into(),
                content: "B".into(),
                view: None,
            }),
            line(Record::ToolResult {
                call_id: "a".into(),
                content: "A".into(),
                view: None,
            }),
        ];
        let h = history(&lines);
        assert_eq!(h.len(), 5);
        assert_eq!(
            h[2],
            Message::Tool {
                call_id: "a".into(),
                content: "A".into()
            }
        );
        assert_eq!(
            h[3],
            Message::Tool {
                call_id: "b".into(),
                content: "B".into()
            }
        );
        assert!(
            matches!(&h[4], Message::Tool { call_id, content } if call_id == "c" && content.starts_with("Not run"))
        );
    }

    #[test]
    fn compaction_keeps_the_tail_and_prefixes_the_summary() {
        let user = |t: &str| {
            line(Record::User {
                parts: vec![UserPart::Text(t.into())],
            })
        };
        let said = |t: &str| {
            line(Record::Assistant {
                text: t.into(),
                reasoning: String::new(),
                tool_calls: vec![],
            })
        };
        let lines = vec![
            user("1"),
            said("one"),
            user("2"),
            said("two"),
            line(Record::Compaction {
                summary: "S".into(),
                kept: 2,
            }),
            user("3"),
        ];
        let h = history(&lines);
        assert_eq!(h.len(), 3);
        match &h[0] {
            Message::User(parts) => {
                assert!(matches!(&parts[0], UserPart::Text(t) if t.contains("S")));
                assert_eq!(parts[1], UserPart::Text("2".into()));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn lines_round_trip_with_a_version() {
        let l = line(Record::Title { title: "t".into() });
        let text = serde_json::to_string(&l).unwrap();
        assert!(text.contains("\"v\":1") && text.contains("\"type\":\"title\""));
        assert_eq!(serde_json::from_str::<Line>(&text).unwrap(), l);
    }
}
