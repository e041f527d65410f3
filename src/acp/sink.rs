//! [`ConnectionSink`]: a session's events as `session/update` notifications on one
//! connection, shaped by what the editor advertised (convert.rs), with a `messageId` on every
//! message chunk: chunks of one message share it, and a new message gets a new one. A
//! subagent's session (a child) keeps its own run of messages apart from its parent's. A new
//! tool call that is pending says so, though the schema's default leaves that out.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};

use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    MessageId, SessionNotification, SessionUpdate, ToolCallStatus,
};
use agent_client_protocol::{Client, JsonRpcMessage, UntypedMessage};
use parking_lot::Mutex;

use super::updates;
use crate::client::ClientCaps;
use crate::types::{ChildState, ChildUpdate, EventSink, TurnEvent};

/// Sends one session's events (or a replay's) to the editor.
pub(super) struct ConnectionSink {
    cx: ConnectionTo<Client>,
    caps: ClientCaps,
    /// Per session (the parent's, and its children's while they work).
    runs: Mutex<HashMap<String, MessageRun>>,
}

/// Which kind of chunk the last update was, and the id its message has.
#[derive(Default)]
struct MessageRun {
    current: Option<(Kind, MessageId)>,
}

/// The three kinds of message chunk: a change of kind starts a new message.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    User,
    Agent,
    Thought,
}

impl MessageRun {
    /// The id for a chunk of `kind`: the running message's, or a new one.
    fn id(&mut self, kind: Kind) -> MessageId {
        match &self.current {
            Some((k, id)) if *k == kind => id.clone(),
            _ => {
                let id = new_message_id();
                self.current = Some((kind, id.clone()));
                id
            }
        }
    }

    /// Gives `update` its message id, or ends the running message when it is no chunk.
    fn stamp(&mut self, update: &mut SessionUpdate) {
        let (kind, chunk) = match update {
            SessionUpdate::UserMessageChunk(c) => (Kind::User, c),
            SessionUpdate::AgentMessageChunk(c) => (Kind::Agent, c),
            SessionUpdate::AgentThoughtChunk(c) => (Kind::Thought, c),
            _ => {
                self.current = None;
                return;
            }
        };
        chunk.message_id = Some(self.id(kind));
    }
}

/// A new message id, in a UUID's form: a random value drawn once per process, and a count,
/// so ids never repeat and a long replay does not ask the system for randomness per message.
fn new_message_id() -> MessageId {
    static BASE: std::sync::OnceLock<u128> = std::sync::OnceLock::new();
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let base = *BASE.get_or_init(|| uuid::Uuid::new_v4().as_u128());
    let n = u128::from(NEXT.fetch_add(1, Ordering::Relaxed));
    // The count goes in the low bits, below the variant's: it never touches them.
    let bytes = (base ^ n).to_be_bytes();
    MessageId::new(
        uuid::Builder::from_random_bytes(bytes)
            .into_uuid()
            .to_string(),
    )
}

impl ConnectionSink {
    /// A sink over `cx` for an editor that advertised `caps`.
    pub(super) fn new(cx: ConnectionTo<Client>, caps: ClientCaps) -> Self {
        Self {
            cx,
            caps,
            runs: Mutex::default(),
        }
    }

    /// The notifications that show `event` of `session_id`, each message chunk stamped
    /// with its message's id.
    pub(super) fn notifications(
        &self,
        session_id: &str,
        event: TurnEvent,
    ) -> Vec<SessionNotification> {
        if event == TurnEvent::NewMessage {
            self.runs.lock().remove(session_id);
        }
        // A child whose work ended keeps no run: a later task starts a new message anyway.
        if let TurnEvent::Child(ChildUpdate {
            id,
            state: ChildState::Idle { .. },
        }) = &event
        {
            self.runs.lock().remove(id);
        }
        let updates = updates::session_updates(event, &self.caps);
        if updates.is_empty() {
            return Vec::new();
        }
        let mut runs = self.runs.lock();
        let run = runs.entry(session_id.to_string()).or_default();
        updates
            .into_iter()
            .map(|mut update| {
                run.stamp(&mut update);
                SessionNotification::new(session_id.to_string(), update)
            })
            .collect()
    }
}

impl EventSink for ConnectionSink {
    fn emit(&self, session_id: &str, event: TurnEvent) {
        for note in self.notifications(session_id, event) {
            let sent = match pending_call(&note) {
                Some(pending) => self.cx.send_notification(pending),
                None => self.cx.send_notification(note),
            };
            if let Err(e) = sent {
                tracing::debug!(session = %session_id, "could not send session/update: {e}");
            }
        }
    }
}

/// A pending `tool_call` as it is sent, saying that it is pending: `pending` is the schema's
/// default, which the SDK leaves out, and CodeCompanion shows a new call without a status as
/// running ("status = tool_call.status or \"in_progress\"" in its `acp/handler.lua`). `None`
/// for any other update.
fn pending_call(note: &SessionNotification) -> Option<UntypedMessage> {
    let SessionUpdate::ToolCall(call) = &note.update else {
        return None;
    };
    if call.status != ToolCallStatus::Pending {
        return None;
    }
    let mut message = note.to_untyped_message().ok()?;
    message.params["update"]["status"] = "pending".into();
    Some(message)
}

#[cfg(test)]
mod tests {
    use agent_client_protocol::v1::schema::{ContentBlock, ContentChunk, TextContent};

    use super::*;

    fn chunk(kind: Kind) -> SessionUpdate {
        let c = ContentChunk::new(ContentBlock::Text(TextContent::new("x")));
        match kind {
            Kind::User => SessionUpdate::UserMessageChunk(c),
            Kind::Agent => SessionUpdate::AgentMessageChunk(c),
            Kind::Thought => SessionUpdate::AgentThoughtChunk(c),
        }
    }

    fn id_of(update: &SessionUpdate) -> Option<MessageId> {
        match update {
            SessionUpdate::UserMessageChunk(c)
            | SessionUpdate::AgentMessageChunk(c)
            | SessionUpdate::AgentThoughtChunk(c) => c.message_id.clone(),
            _ => None,
        }
    }

    fn stamped(run: &mut MessageRun, mut update: SessionUpdate) -> Option<MessageId> {
        run.stamp(&mut update);
        id_of(&update)
    }

    #[test]
    fn chunks_of_one_message_share_an_id_and_a_new_kind_starts_a_new_one() {
        let mut run = MessageRun::default();
        let a = stamped(&mut run, chunk(Kind::Thought)).unwrap();
        assert_eq!(stamped(&mut run, chunk(Kind::Thought)), Some(a.clone()));
        let b = stamped(&mut run, chunk(Kind::Agent)).unwrap();
        assert_ne!(a, b);
        assert_eq!(stamped(&mut run, chunk(Kind::Agent)), Some(b.clone()));
        let c = stamped(&mut run, chunk(Kind::User)).unwrap();
        assert!(c != a && c != b);
    }

    #[test]
    fn message_ids_are_uuids_that_never_repeat() {
        let ids: std::collections::HashSet<String> =
            (0..10_000).map(|_| new_message_id().to_string()).collect();
        assert_eq!(ids.len(), 10_000);
        for id in ids.iter().take(5) {
            let uuid = uuid::Uuid::parse_str(id).unwrap();
            assert_eq!(uuid.get_version_num(), 4, "{id}");
        }
    }

    #[test]
    fn a_pending_tool_call_says_it_is_pending_and_nothing_else_changes() {
        use agent_client_protocol::v1::schema::ToolCall;
        let call = |status| {
            SessionNotification::new(
                "s",
                SessionUpdate::ToolCall(ToolCall::new("c", "Edit file").status(status)),
            )
        };
        let pending = call(ToolCallStatus::Pending);
        let sent = pending_call(&pending).unwrap();
        assert_eq!(sent.method, "session/update");
        let mut expected = serde_json::to_value(&pending).unwrap();
        assert!(expected["update"].get("status").is_none(), "{expected}");
        expected["update"]["status"] = "pending".into();
        assert_eq!(sent.params, expected);
        assert!(pending_call(&call(ToolCallStatus::Failed)).is_none());
        assert!(pending_call(&SessionNotification::new("s", chunk(Kind::Agent))).is_none());
    }

    #[test]
    fn any_other_update_or_a_new_message_ends_the_running_one() {
        let mut run = MessageRun::default();
        let a = stamped(&mut run, chunk(Kind::Agent)).unwrap();
        let plan = SessionUpdate::Plan(agent_client_protocol::v1::schema::Plan::new(vec![]));
        assert_eq!(stamped(&mut run, plan), None);
        let b = stamped(&mut run, chunk(Kind::Agent)).unwrap();
        assert_ne!(a, b);
        run.current = None;
        assert_ne!(stamped(&mut run, chunk(Kind::Agent)), Some(b));
    }
}
