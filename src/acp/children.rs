//! A subagent's session as ACP shows it to an editor that advertised `subagents`:
//! `subagent_update` on the parent (announced with a title, a description, its folder and the
//! right to cancel it; then running; then idle with its stop reason and usage), and its task
//! as a `session_message` from the parent on the child. Nothing for other editors: they
//! follow the subagent inside its `task` call.

use agent_client_protocol::v1::schema::{
    self as acp, ContentBlock, ErrorStopReason, IdleStateUpdate, IdleStopReason, MessageId,
    RunningStateUpdate, SessionCancelCapabilities, SessionMessage, SessionUpdate, StateUpdate,
    SubagentSessionCapabilities, SubagentUpdate, TextContent,
};

use crate::client::ClientCaps;
use crate::types::{ChildEnd, ChildState, ChildUpdate, StopReason, Tokens};

/// The `subagent_update` for `update`, when the editor takes them.
pub(super) fn subagent_update(update: ChildUpdate, caps: &ClientCaps) -> Option<SessionUpdate> {
    if !caps.subagents {
        return None;
    }
    let child = SubagentUpdate::new(update.id);
    let child = match update.state {
        ChildState::Announced {
            title,
            description,
            cwd,
        } => child
            .title(title)
            .description(description)
            .cwd(cwd)
            .capabilities(
                SubagentSessionCapabilities::new().cancel(SessionCancelCapabilities::new()),
            ),
        ChildState::Running => child.state(StateUpdate::Running(RunningStateUpdate::new())),
        ChildState::Idle { ended, usage } => child.state(StateUpdate::Idle(
            IdleStateUpdate::new()
                .stop_reason(stop_reason(ended))
                .usage(usage.map(usage_of)),
        )),
    };
    Some(SessionUpdate::SubagentUpdate(child))
}

/// The `session_message` carrying `text` from the session `sender` to `recipient`, when the
/// editor takes them.
pub(super) fn message_from(
    sender: String,
    recipient: String,
    text: String,
    caps: &ClientCaps,
) -> Option<SessionUpdate> {
    if !caps.subagents {
        return None;
    }
    Some(SessionUpdate::SessionMessage(
        SessionMessage::new(MessageId::new(uuid::Uuid::new_v4().to_string()))
            .sender_session_id(acp::SessionId::new(sender))
            .recipient_session_id(acp::SessionId::new(recipient))
            .content(vec![ContentBlock::Text(TextContent::new(text))]),
    ))
}

/// What the editor is told about how a child's work ended.
fn stop_reason(ended: ChildEnd) -> IdleStopReason {
    match ended {
        ChildEnd::Stopped(StopReason::EndTurn) => IdleStopReason::EndTurn,
        ChildEnd::Stopped(StopReason::MaxTokens) => IdleStopReason::MaxTokens,
        ChildEnd::Stopped(StopReason::MaxTurnRequests) => IdleStopReason::MaxTurnRequests,
        ChildEnd::Stopped(StopReason::Refusal) => IdleStopReason::Refusal,
        ChildEnd::Stopped(StopReason::Cancelled) => IdleStopReason::Cancelled,
        ChildEnd::Failed(why) => {
            IdleStopReason::Error(ErrorStopReason::new().error(acp::Error::new(-32603, why)))
        }
    }
}

/// Tokens as ACP's `Usage` counts them.
pub(super) fn usage_of(t: Tokens) -> acp::Usage {
    acp::Usage::new(t.input + t.output, t.input, t.output)
        .thought_tokens((t.reasoning > 0).then_some(t.reasoning))
        .cached_read_tokens((t.cached > 0).then_some(t.cached))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn caps(subagents: bool) -> ClientCaps {
        ClientCaps {
            subagents,
            ..ClientCaps::default()
        }
    }

    fn idle(ended: ChildEnd) -> serde_json::Value {
        let update = ChildUpdate {
            id: "c1".into(),
            state: ChildState::Idle { ended, usage: None },
        };
        serde_json::to_value(subagent_update(update, &caps(true)).unwrap()).unwrap()
    }

    #[test]
    fn nothing_is_sent_to_an_editor_that_did_not_advertise_subagents() {
        let update = ChildUpdate {
            id: "c1".into(),
            state: ChildState::Running,
        };
        assert!(subagent_update(update, &caps(false)).is_none());
        assert!(message_from("p".into(), "c1".into(), "task".into(), &caps(false)).is_none());
    }

    #[test]
    fn a_failed_child_goes_idle_with_an_error_and_why() {
        let sent = idle(ChildEnd::Failed("the server is down".into()));
        assert_eq!(sent["state"]["state"], "idle");
        assert_eq!(sent["state"]["stopReason"], "error");
        assert_eq!(sent["state"]["error"]["message"], "the server is down");
        let sent = idle(ChildEnd::Stopped(StopReason::MaxTurnRequests));
        assert_eq!(sent["state"]["stopReason"], "max_turn_requests");
    }
}
