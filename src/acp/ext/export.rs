//! A stored session as readable Markdown.

use crate::store::{Line, Record};
use crate::types::UserPart;
use crate::types::{ToolContent, ToolStatus};

/// The conversation in `lines` as Markdown: the title, then each user message, the
/// assistant's reasoning (quoted) and answers, tool calls with their final status, plans.
pub(crate) fn render(lines: &[Line]) -> String {
    // The newest: a rewind may have titled the session again.
    let title = lines.iter().rev().find_map(|l| match &l.record {
        Record::Title { title } => Some(title.clone()),
        _ => None,
    });
    let mut out = String::new();
    for line in lines {
        match &line.record {
            Record::Meta { id, cwd } => {
                out.push_str(&format!(
                    "# {}\n\n",
                    title.clone().unwrap_or_else(|| format!("Session {id}"))
                ));
                out.push_str(&format!(
                    "_Session `{id}` in `{}`, started {}._\n\n",
                    cwd.display(),
                    line.at
                ));
            }
            Record::User { parts, .. } | Record::Command { parts } => user(&mut out, parts),
            Record::Assistant {
                text, reasoning, ..
            } => assistant(&mut out, text, reasoning),
            Record::ToolResult {
                view: Some(view), ..
            } => tool(&mut out, view),
            Record::Plan { entries } => {
                out.push_str("**Plan:**\n\n");
                for e in entries {
                    let mark = if e.status == "completed" { "x" } else { " " };
                    out.push_str(&format!("- [{mark}] {}\n", e.content));
                }
                out.push('\n');
            }
            Record::Note { text } => out.push_str(&format!("_{}_\n\n", text.trim())),
            Record::Compaction { .. } => {
                out.push_str("_[The conversation above was compacted here.]_\n\n")
            }
            // The whole story: what a rewind took back stays above it, marked.
            Record::Rewind { turn, restored, .. } => {
                out.push_str(&format!(
                    "_[Rewound to before turn {turn}: the turns from there are out of the conversation{}.]_\n\n",
                    if restored.is_empty() {
                        String::new()
                    } else {
                        let files: Vec<String> = restored
                            .iter()
                            .map(|r| format!("`{}`", r.path.display()))
                            .collect();
                        format!("; put back {}", files.join(", "))
                    }
                ));
            }
            Record::ToolResult { view: None, .. }
            | Record::FileChange { .. }
            | Record::FileIntent { .. }
            | Record::FileOutcome { .. }
            | Record::RewindIntent { .. }
            | Record::RewindDropped { .. }
            | Record::CommandRan { .. }
            | Record::ImagesLeftOut { .. }
            | Record::Context { .. }
            | Record::Folders { .. }
            | Record::Settings { .. }
            | Record::Title { .. }
            | Record::CutOff { .. }
            | Record::Subagent { .. } => {}
        }
    }
    out
}

fn user(out: &mut String, parts: &[UserPart]) {
    out.push_str("## User\n\n");
    for part in parts {
        match part {
            UserPart::Text(t) => out.push_str(&format!("{}\n\n", t.trim_end())),
            UserPart::Image { .. } => out.push_str("_[image]_\n\n"),
            UserPart::Link { .. } => {
                let text = part.as_text().unwrap_or_default();
                out.push_str(&format!("{text}\n\n"));
            }
        }
    }
}

fn assistant(out: &mut String, text: &str, reasoning: &str) {
    if !reasoning.is_empty() || !text.is_empty() {
        out.push_str("## Assistant\n\n");
    }
    if !reasoning.is_empty() {
        for l in reasoning.trim_end().lines() {
            out.push_str(&format!("> {l}\n"));
        }
        out.push('\n');
    }
    if !text.is_empty() {
        out.push_str(&format!("{}\n\n", text.trim_end()));
    }
}

fn tool(out: &mut String, view: &crate::types::ToolCallView) {
    let status = match view.status {
        ToolStatus::Completed => "completed",
        ToolStatus::Failed => "failed",
        ToolStatus::InProgress => "in progress",
        ToolStatus::Pending => "pending",
    };
    out.push_str(&format!("**Tool:** {} ({status})\n\n", view.title));
    for content in &view.content {
        if let ToolContent::Diff { path, .. } = content {
            out.push_str(&format!("_Changed `{}`._\n\n", path.display()));
        }
    }
}
