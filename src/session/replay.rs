//! Turning a stored transcript back into what the editor saw, for `session/load`.

use crate::events::TurnEvent;
use crate::model::UserPart;
use crate::store::{Line, Record};

/// The note shown where older history was compacted.
pub const COMPACTED_NOTE: &str =
    "\n\n_[Earlier conversation compacted: the model now sees a summary of everything above.]_\n\n";

/// The updates that show the conversation in `lines`, in order: user messages, reasoning and
/// answers, tool calls in their final state, plans, and compaction points.
pub fn events(lines: &[Line]) -> Vec<TurnEvent> {
    let mut events = Vec::new();
    for line in lines {
        match &line.record {
            Record::User { parts } => events.push(TurnEvent::UserMessage(parts.clone())),
            Record::Assistant {
                text, reasoning, ..
            } => {
                if !reasoning.is_empty() {
                    events.push(TurnEvent::Thought(reasoning.clone()));
                }
                if !text.is_empty() {
                    events.push(TurnEvent::Text(text.clone()));
                }
            }
            Record::ToolResult {
                view: Some(view), ..
            } => events.push(TurnEvent::ToolCall(view.clone())),
            Record::Plan { entries } => events.push(TurnEvent::Plan(entries.clone())),
            Record::Compaction { .. } => events.push(TurnEvent::Text(COMPACTED_NOTE.into())),
            Record::ToolResult { view: None, .. }
            | Record::Meta { .. }
            | Record::Settings { .. }
            | Record::Title { .. } => {}
        }
    }
    events
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
