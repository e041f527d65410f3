//! Turning a stored transcript back into what the editor saw, for `session/load`.

use crate::model::ToolCall;
use crate::store::{Line, Record};
use crate::turn::COMPACTED_NOTE;
use crate::types::UserPart;
use crate::types::{ToolCallView, ToolContent, ToolKind, ToolStatus, TurnEvent};

/// The updates that show the conversation in `lines`, in order: user messages, reasoning and
/// answers, tool calls in their final state, plans, and compaction points.
pub fn events(lines: &[Line]) -> Vec<TurnEvent> {
    let mut events = Vec::new();
    // Calls of the last model response that have no result yet.
    let mut open: Vec<ToolCall> = Vec::new();
    for line in lines {
        match &line.record {
            Record::User { parts } => {
                interrupted(&mut events, &mut open);
                events.push(TurnEvent::UserMessage(parts.clone()));
            }
            Record::Assistant {
                text,
                reasoning,
                tool_calls,
            } => {
                interrupted(&mut events, &mut open);
                if !reasoning.is_empty() {
                    events.push(TurnEvent::Thought(reasoning.clone()));
                }
                if !text.is_empty() {
                    events.push(TurnEvent::Text(text.clone()));
                }
                open = tool_calls.clone();
            }
            Record::ToolResult { call_id, view, .. } => {
                open.retain(|c| &c.id != call_id);
                if let Some(view) = view {
                    events.push(TurnEvent::ToolCall(view.clone()));
                }
            }
            Record::Plan { entries } => events.push(TurnEvent::Plan(entries.clone())),
            Record::Compaction { .. } => events.push(TurnEvent::Text(COMPACTED_NOTE.into())),
            // A subagent's work was shown inside its `task` call, which is replayed whole.
            Record::Meta { .. }
            | Record::Settings { .. }
            | Record::Title { .. }
            | Record::Subagent { .. } => {}
        }
    }
    interrupted(&mut events, &mut open);
    events
}

/// Shows calls that never got a result (tandem stopped mid-turn) as failed.
fn interrupted(events: &mut Vec<TurnEvent>, open: &mut Vec<ToolCall>) {
    for call in open.drain(..) {
        events.push(TurnEvent::ToolCall(ToolCallView {
            title: call.name.clone(),
            kind: ToolKind::Think,
            status: ToolStatus::Failed,
            locations: Vec::new(),
            raw_input: serde_json::from_str(&call.arguments).ok(),
            content: vec![ToolContent::Text {
                text: "Interrupted: tandem stopped before this call finished.".into(),
            }],
            id: call.id,
        }));
    }
}

/// A title from the first prompt: its first line, trimmed to 80 characters.
pub fn title_from(parts: &[UserPart]) -> Option<String> {
    let text = parts.iter().find_map(|p| match p {
        UserPart::Text(t) if !t.trim().is_empty() => Some(t.as_str()),
        _ => None,
    })?;
    let first = text
        .trim()
        .lines()
        .next()?
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    Some(if first.chars().count() > 80 {
        format!("{}…", first.chars().take(79).collect::<String>())
    } else {
        first
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn titles_are_the_first_line_trimmed() {
        assert_eq!(
            title_from(&[UserPart::Text("  Fix   the build\nand more".into())]).as_deref(),
            Some("Fix the build")
        );
        let long = "x".repeat(200);
        assert_eq!(
            title_from(&[UserPart::Text(long)]).unwrap().chars().count(),
            80
        );
        assert_eq!(
            title_from(&[UserPart::Image {
                url: "data:".into()
            }]),
            None
        );
    }
}
