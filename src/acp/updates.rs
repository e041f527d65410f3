//! A session's events as ACP `session/update` payloads, shaped by what the editor advertised:
//! tandem's notes as `notice` or answer text, plans as `plan_update` / `plan_removed` or
//! `plan`, compactions as `compaction_update` and `compaction_summary_chunk` or a note, tool
//! calls with their content.

use agent_client_protocol::v1::schema::{
    self as acp, ConfigOptionUpdate, ContentBlock, ContentChunk, CurrentModeUpdate, ImageContent,
    SessionUpdate, TextContent, UsageUpdate,
};

use super::convert::config_options;
use crate::client::ClientCaps;
use crate::conversation::split_data_url;
use crate::types::{
    CompactionStatus, Location, PlanItem, Severity, ToolCallView, ToolContent, ToolKind,
    ToolStatus, TurnEvent,
};

/// The `session/update` payloads for an event (a replayed user message may take several), as
/// an editor that advertised `caps` takes them.
pub(crate) fn session_updates(event: TurnEvent, caps: &ClientCaps) -> Vec<SessionUpdate> {
    let update = match event {
        TurnEvent::UserMessage(blocks) => return super::sent::user_chunks(blocks),
        TurnEvent::NewMessage => return Vec::new(),
        TurnEvent::Child(update) => {
            return super::children::subagent_update(update, caps)
                .into_iter()
                .collect();
        }
        TurnEvent::MessageFrom {
            sender,
            recipient,
            text,
        } => {
            return super::children::message_from(sender, recipient, text, caps)
                .into_iter()
                .collect();
        }
        TurnEvent::Notice { severity, text } => notice(severity, text, caps),
        TurnEvent::Plan(items) => plan_update(items, caps),

        TurnEvent::Text(t) => SessionUpdate::AgentMessageChunk(text_chunk(t)),
        TurnEvent::Thought(t) => SessionUpdate::AgentThoughtChunk(text_chunk(t)),
        TurnEvent::Usage { used, size, cost } => SessionUpdate::UsageUpdate(
            UsageUpdate::new(used, size).cost(cost.map(|amount| acp::Cost::new(amount, "USD"))),
        ),
        TurnEvent::ModeChanged(mode) => {
            SessionUpdate::CurrentModeUpdate(CurrentModeUpdate::new(mode.id()))
        }
        TurnEvent::OptionsChanged(views) => {
            SessionUpdate::ConfigOptionUpdate(ConfigOptionUpdate::new(config_options(&views)))
        }
        TurnEvent::ToolCall(view) => SessionUpdate::ToolCall(tool_call(view)),
        TurnEvent::ToolCallReady(view) => SessionUpdate::ToolCallUpdate(tool_call_update(&view)),
        TurnEvent::ToolCallUpdate {
            id,
            status,
            content,
            title,
        } => SessionUpdate::ToolCallUpdate(changed_call(id, status, content, title)),
        TurnEvent::CompactionChunk { .. } | TurnEvent::Compaction { .. } if !caps.compaction => {
            return compaction_note(event, caps);
        }
        TurnEvent::CompactionChunk { id, text } => SessionUpdate::CompactionSummaryChunk(
            acp::CompactionSummaryChunk::new(id, ContentBlock::Text(TextContent::new(text))),
        ),
        TurnEvent::Compaction {
            id,
            status,
            summary,
            error,
        } => {
            let status = match status {
                CompactionStatus::InProgress => acp::CompactionStatus::InProgress,
                CompactionStatus::Completed => acp::CompactionStatus::Completed,
                CompactionStatus::Failed => acp::CompactionStatus::Failed,
            };
            let mut update = acp::CompactionUpdate::new(id, status);
            if let Some(summary) = summary {
                update = update.summary(vec![ContentBlock::Text(TextContent::new(summary))]);
            }
            if let Some(error) = error {
                update = update.error(error);
            }
            SessionUpdate::CompactionUpdate(update)
        }
        TurnEvent::Title(title) => SessionUpdate::SessionInfoUpdate(
            acp::SessionInfoUpdate::new()
                .title(title)
                .updated_at(crate::store::transcript::now()),
        ),
    };
    vec![update]
}

/// The fields of a tool call that changed.
fn changed_call(
    id: String,
    status: Option<ToolStatus>,
    content: Option<Vec<ToolContent>>,
    title: Option<String>,
) -> acp::ToolCallUpdate {
    let mut fields = acp::ToolCallUpdateFields::new();
    if let Some(title) = title {
        fields = fields.title(title);
    }
    if let Some(status) = status {
        fields = fields.status(tool_status(status));
    }
    if let Some(content) = content {
        fields = fields.content(tool_content(content));
    }
    acp::ToolCallUpdate::new(id, fields)
}

fn tool_call(view: ToolCallView) -> acp::ToolCall {
    acp::ToolCall::new(view.id, view.title)
        .kind(tool_kind(view.kind))
        .status(tool_status(view.status))
        .locations(locations(view.locations))
        .raw_input(view.raw_input)
        .content(tool_content(view.content))
}

/// A tool call as it is shown in a permission request.
pub(crate) fn tool_call_update(view: &ToolCallView) -> acp::ToolCallUpdate {
    let fields = acp::ToolCallUpdateFields::new()
        .title(view.title.clone())
        .kind(tool_kind(view.kind))
        .status(tool_status(view.status))
        .locations(locations(view.locations.clone()))
        .raw_input(view.raw_input.clone())
        .content(tool_content(view.content.clone()));
    acp::ToolCallUpdate::new(view.id.clone(), fields)
}

fn tool_kind(kind: ToolKind) -> acp::ToolKind {
    match kind {
        ToolKind::Read => acp::ToolKind::Read,
        ToolKind::Edit => acp::ToolKind::Edit,
        ToolKind::Execute => acp::ToolKind::Execute,
        ToolKind::Search => acp::ToolKind::Search,
        ToolKind::Think => acp::ToolKind::Think,
        ToolKind::Fetch => acp::ToolKind::Fetch,
        ToolKind::Other => acp::ToolKind::Other,
    }
}

fn tool_status(status: ToolStatus) -> acp::ToolCallStatus {
    match status {
        ToolStatus::Pending => acp::ToolCallStatus::Pending,
        ToolStatus::InProgress => acp::ToolCallStatus::InProgress,
        ToolStatus::Completed => acp::ToolCallStatus::Completed,
        ToolStatus::Failed => acp::ToolCallStatus::Failed,
    }
}

fn locations(locations: Vec<Location>) -> Vec<acp::ToolCallLocation> {
    locations
        .into_iter()
        .map(|l| acp::ToolCallLocation::new(l.path).line(l.line))
        .collect()
}

fn tool_content(content: Vec<ToolContent>) -> Vec<acp::ToolCallContent> {
    content
        .into_iter()
        .map(|c| match c {
            ToolContent::Text { text: t } => acp::ToolCallContent::Content(acp::Content::new(
                ContentBlock::Text(TextContent::new(t)),
            )),
            ToolContent::Diff { path, old, new } => {
                acp::ToolCallContent::Diff(acp::Diff::new(path, new).old_text(old))
            }
            ToolContent::Terminal { id, .. } => {
                acp::ToolCallContent::Terminal(acp::Terminal::new(id))
            }
            ToolContent::Image { url } => {
                let block = match split_data_url(&url) {
                    Some((mime, data)) => ContentBlock::Image(ImageContent::new(data, mime)),
                    None => ContentBlock::Text(TextContent::new(format!("![image]({url})"))),
                };
                acp::ToolCallContent::Content(acp::Content::new(block))
            }
        })
        .collect()
}

/// The note shown where older history was compacted, to an editor that does not show
/// compactions: once one is done (live, and when a session is replayed).
pub(crate) const COMPACTED_NOTE: &str =
    "Earlier conversation compacted: the model now sees a summary of everything above.";

/// A compaction's event for an editor that did not advertise `session.compaction`.
fn compaction_note(event: TurnEvent, caps: &ClientCaps) -> Vec<SessionUpdate> {
    match event {
        TurnEvent::Compaction {
            status: CompactionStatus::Completed,
            ..
        } => vec![notice(Severity::Info, COMPACTED_NOTE.into(), caps)],
        _ => Vec::new(),
    }
}

/// The one plan a session has, as editors that take plan operations know it.
const PLAN_ID: &str = "plan";

/// A plan, whole: `plan_update` (or `plan_removed` when it is empty) to an editor that takes
/// plan operations, `plan` to others.
fn plan_update(items: Vec<PlanItem>, caps: &ClientCaps) -> SessionUpdate {
    if !caps.plan_updates {
        return SessionUpdate::Plan(acp::Plan::new(plan_entries(items)));
    }
    if items.is_empty() {
        return SessionUpdate::PlanRemoved(acp::PlanRemoved::new(PLAN_ID));
    }
    SessionUpdate::PlanUpdate(acp::PlanUpdate::new(acp::PlanUpdateContent::items(
        PLAN_ID,
        plan_entries(items),
    )))
}

/// One of tandem's notes: a `notice` to an editor that takes them, an italic paragraph of the
/// answer to others.
fn notice(severity: Severity, text: String, caps: &ClientCaps) -> SessionUpdate {
    if !caps.notices {
        return SessionUpdate::AgentMessageChunk(text_chunk(format!("\n\n_{}_\n\n", text.trim())));
    }
    let severity = match severity {
        Severity::Info => acp::NoticeSeverity::Info,
        Severity::Warning => acp::NoticeSeverity::Warning,
        Severity::Error => acp::NoticeSeverity::Error,
    };
    let (title, description) = notice_title(text.trim());
    SessionUpdate::Notice(acp::Notice::new(severity, title).description(description))
}

/// A notice's title (its first sentence, when that is short) and the rest as its description.
fn notice_title(text: &str) -> (String, Option<String>) {
    const SHORT: usize = 120;
    let first = text
        .char_indices()
        .find(|&(i, c)| c == '.' && text[i + 1..].starts_with([' ', '\n']))
        .map(|(i, _)| &text[..=i]);
    match first {
        Some(first) if first.len() <= SHORT => {
            let rest = text[first.len()..].trim();
            (
                first.to_string(),
                (!rest.is_empty()).then(|| rest.to_string()),
            )
        }
        _ if text.len() <= SHORT => (text.to_string(), None),
        _ => ("tandem".to_string(), Some(text.to_string())),
    }
}

fn plan_entries(items: Vec<PlanItem>) -> Vec<acp::PlanEntry> {
    items
        .into_iter()
        .map(|i| {
            let status = match i.status.as_str() {
                "in_progress" => acp::PlanEntryStatus::InProgress,
                "completed" => acp::PlanEntryStatus::Completed,
                _ => acp::PlanEntryStatus::Pending,
            };
            let priority = match i.priority.as_str() {
                "high" => acp::PlanEntryPriority::High,
                "low" => acp::PlanEntryPriority::Low,
                _ => acp::PlanEntryPriority::Medium,
            };
            acp::PlanEntry::new(i.content, priority, status)
        })
        .collect()
}

fn text_chunk(text: String) -> ContentChunk {
    ContentChunk::new(ContentBlock::Text(TextContent::new(text)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_notices_title_is_its_first_short_sentence() {
        assert_eq!(
            notice_title("The disk is full. Records wait in memory."),
            (
                "The disk is full.".into(),
                Some("Records wait in memory.".into())
            )
        );
        assert_eq!(
            notice_title("No stop at all"),
            ("No stop at all".into(), None)
        );
        // A version number is no sentence end.
        assert_eq!(
            notice_title("Needs v1.2 or later."),
            ("Needs v1.2 or later.".into(), None)
        );
        let long = "x".repeat(200);
        assert_eq!(notice_title(&long), ("tandem".into(), Some(long.clone())));
    }

    #[test]
    fn without_notices_a_note_is_an_italic_paragraph_of_the_answer() {
        let caps = ClientCaps::default();
        let update = notice(Severity::Warning, " cut short ".into(), &caps);
        let SessionUpdate::AgentMessageChunk(chunk) = update else {
            panic!("{update:?}")
        };
        let ContentBlock::Text(text) = chunk.content else {
            panic!()
        };
        assert_eq!(text.text, "\n\n_cut short_\n\n");
    }
}
