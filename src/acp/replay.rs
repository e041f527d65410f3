//! A `session/load`'s replay: the stored conversation as `session/update` notifications,
//! sent before the load's response, made a batch at a time as they are sent (a long
//! session's replay is never all in memory at once).
//!
//! On tandem's own wire (any transport that takes lines, `transport::Outlet`) each batch is
//! serialized here, straight from the typed notifications, and handed over as one chunk of
//! lines: byte for byte what the SDK would write, without the JSON value it builds for each
//! message and the three channels it moves it through. The writer takes those lines before
//! the SDK's frames, so the response, sent after the last chunk, is written after it. Over
//! another transport each notification goes through the SDK.

use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::SessionNotification;
use agent_client_protocol::{Client, JsonRpcMessage};
use serde::Serialize;

use super::ConnectionSink;
use crate::client::ClientCaps;
use crate::session::Replay;
use crate::transport::Lines;
use crate::types::EventSink;

/// How many replayed updates are made at a time; the connection gets to do other work (and
/// the writer to write) between batches.
const BATCH: usize = 1024;

/// Sends the replay of `replayed` for session `id`: as lines, when the transport takes them.
pub(super) async fn send(
    cx: &ConnectionTo<Client>,
    lines: Option<&Lines>,
    id: &str,
    replayed: &Replay,
    caps: ClientCaps,
) {
    if replayed.lines.is_empty() {
        return;
    }
    let sink = ConnectionSink::new(cx.clone(), caps);
    let mut playback = replayed.playback();
    while let Some(batch) = playback.next_batch(BATCH) {
        match lines {
            Some(lines) => {
                let mut chunk = Vec::with_capacity(batch.len() * 512);
                for event in batch {
                    for note in sink.notifications(id, event) {
                        write_line(&mut chunk, &note);
                    }
                }
                if !chunk.is_empty() && !lines.send(into_text(chunk)).await {
                    // The output is gone: nothing more can reach the editor.
                    return;
                }
            }
            None => {
                for event in batch {
                    sink.emit(id, event);
                }
                tokio::task::yield_now().await;
            }
        }
    }
}

/// A JSON-RPC notification as the SDK writes it: `jsonrpc`, `method`, `params`, in order.
#[derive(Serialize)]
struct Envelope<'a, P> {
    jsonrpc: &'static str,
    method: &'a str,
    params: &'a P,
}

/// Appends `note` to `chunk` as one line.
fn write_line(chunk: &mut Vec<u8>, note: &SessionNotification) {
    let envelope = Envelope {
        jsonrpc: "2.0",
        method: note.method(),
        params: note,
    };
    let start = chunk.len();
    match serde_json::to_writer(&mut *chunk, &envelope) {
        Ok(()) => chunk.push(b'\n'),
        Err(e) => {
            // Not a shape serde_json refuses (no map has other keys than strings); were one
            // to come, the line is left out whole rather than sent torn.
            chunk.truncate(start);
            tracing::error!("a replayed update could not be written: {e}");
        }
    }
}

/// The chunk as text: serde_json writes only UTF-8, so this never loses a byte.
fn into_text(chunk: Vec<u8>) -> String {
    String::from_utf8(chunk).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

#[cfg(test)]
mod tests {
    use agent_client_protocol::v1::schema::{
        ContentBlock, ContentChunk, MessageId, SessionUpdate, TextContent, ToolCall,
        ToolCallContent, ToolCallStatus, ToolKind,
    };
    use agent_client_protocol::{RawJsonRpcMessage, TransportFrame};

    use super::*;

    /// What the SDK writes for `note`.
    fn sdks(note: &SessionNotification) -> String {
        let (method, params) = note.to_untyped_message().unwrap().into_parts();
        let message = RawJsonRpcMessage::notification(method, params).unwrap();
        TransportFrame::Single(message).to_json().unwrap()
    }

    #[test]
    fn each_line_is_what_the_sdk_writes() {
        let text = |t: &str| ContentBlock::Text(TextContent::new(t));
        let chunk = ContentChunk::new(text("é \" \n\t\u{1}")).message_id(Some(MessageId::new("m")));
        let call = ToolCall::new("call-1", "Read `src/a.rs`")
            .kind(ToolKind::Read)
            .status(ToolCallStatus::Completed)
            .content(vec![ToolCallContent::from(text("fn main() {}\n"))])
            .raw_input(serde_json::json!({"path": "src/a.rs", "n": [1, 2.5, null]}));
        let updates = [
            SessionUpdate::UserMessageChunk(chunk.clone()),
            SessionUpdate::AgentThoughtChunk(chunk.clone()),
            SessionUpdate::AgentMessageChunk(chunk),
            SessionUpdate::ToolCall(call),
        ];
        let mut chunk = Vec::new();
        let mut expected = String::new();
        for update in updates {
            let note = SessionNotification::new("s-1", update);
            write_line(&mut chunk, &note);
            expected.push_str(&sdks(&note));
            expected.push('\n');
        }
        assert_eq!(into_text(chunk), expected);
    }
}
