//! The incoming side: each line is read within the size limit and parsed once, straight into
//! the protocol layer's message type. What cannot become a message is answered here and
//! never reaches the protocol layer: a line that is not UTF-8 or not JSON gets a parse error
//! by the id its leading bytes name (recover.rs), a line over the limit an "invalid request"
//! (or, when it is the editor's answer to one of tandem's requests, that request fails at once
//! with what happened). JSON that is not a JSON-RPC message is passed on as a malformed frame,
//! for the protocol layer to answer as the protocol says. At the end of input the sender is
//! dropped: the protocol layer sees the editor's side close.

use std::sync::Arc;

use agent_client_protocol::{RawJsonRpcMessage, TransportFrame};
use futures::channel::mpsc;
use tokio::io::AsyncBufRead;

use super::frames::{Frame, framing_error, next_frame};
use super::recover;
use super::trace::{Dir, WireTrace};

/// Where what is read goes.
pub(super) struct Reading {
    /// Messages, to the protocol layer.
    pub(crate) to_protocol: mpsc::UnboundedSender<TransportFrame>,
    /// The transport's own answers, to the writer.
    pub(crate) answers: mpsc::UnboundedSender<String>,
    /// The longest line read.
    pub(crate) max_line: usize,
    /// The wire trace, when one is kept.
    pub(crate) trace: Option<Arc<WireTrace>>,
}

/// Reads `input` to its end (or until the protocol layer or the writer is gone).
pub(super) async fn read_all(mut input: impl AsyncBufRead + Unpin, reading: Reading) {
    loop {
        let frame = match next_frame(&mut input, reading.max_line).await {
            Ok(frame) => frame,
            Err(e) => {
                tracing::warn!("reading the editor's input failed: {e}; treating it as closed");
                return;
            }
        };
        let passed = match frame {
            Frame::End => return,
            Frame::Line(bytes) => {
                reading.saw(&bytes);
                line(bytes, &reading)
            }
            Frame::TooLong { size, head } => {
                let shown = format!(" … [{size} bytes, over the limit]");
                reading.saw(&[head.as_slice(), shown.as_bytes()].concat());
                too_long(size, &head, &reading)
            }
        };
        if passed.is_err() {
            return;
        }
    }
}

/// Whichever side is gone: reading on is pointless.
struct Gone;

impl Reading {
    fn saw(&self, line: &[u8]) {
        if let Some(trace) = &self.trace {
            trace.record(Dir::In, &String::from_utf8_lossy(line));
        }
    }

    fn pass(&self, frame: TransportFrame) -> Result<(), Gone> {
        self.to_protocol.unbounded_send(frame).map_err(|_| Gone)
    }

    fn answer(&self, line: String) -> Result<(), Gone> {
        self.answers.unbounded_send(line).map_err(|_| Gone)
    }
}

/// One whole line: a message for the protocol layer, or an answer of the transport's own.
fn line(bytes: Vec<u8>, reading: &Reading) -> Result<(), Gone> {
    let text = match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(e) => {
            let at = e.utf8_error().valid_up_to();
            // Info, not a warning: the editor gets the error itself.
            tracing::info!(
                byte = at,
                "a line of input is not valid UTF-8; answered with a parse error"
            );
            let why = format!("the message is not valid UTF-8 (at byte {at})");
            return reading.answer(framing_error(e.as_bytes(), -32700, "Parse error", &why));
        }
    };
    if text.trim().is_empty() {
        // Blank lines between messages are not messages; ndjson writers leave them.
        return Ok(());
    }
    match serde_json::from_str::<RawJsonRpcMessage>(&text) {
        Ok(message) => reading.pass(TransportFrame::Single(message)),
        Err(e) if e.is_data() => {
            // JSON, but not a JSON-RPC message (or a batch): the protocol layer answers it.
            let mut error = agent_client_protocol::Error::invalid_request();
            if text.trim_start().starts_with('[') {
                error = error
                    .data("JSON-RPC batches are not supported; send each message individually");
            }
            reading.pass(TransportFrame::Malformed { raw: text, error })
        }
        Err(e) => {
            // Answered here rather than by the protocol layer, which could not name the
            // request: the editor's request gets its error instead of waiting forever.
            tracing::info!("a line of input is not JSON ({e}); answered with a parse error");
            let why = e.to_string();
            reading.answer(framing_error(text.as_bytes(), -32700, "Parse error", &why))
        }
    }
}

/// A line over the limit, of which `head` was kept.
fn too_long(size: u64, head: &[u8], reading: &Reading) -> Result<(), Gone> {
    let max = reading.max_line;
    if let Some(id) = recover::answer_id(head) {
        // The editor's answer to one of tandem's requests: the call waiting for it fails now
        // with what happened, instead of waiting out its timeout.
        tracing::warn!(
            size,
            max,
            "an answer from the editor is over the size limit; the request it answers fails"
        );
        let failed = serde_json::json!({
            "jsonrpc": "2.0",
            "id": id,
            "error": {"code": -32600, "message": format!(
                "the editor's answer was {size} bytes, over tandem's limit of {max} \
                 (max_message_bytes, TANDEM_MAX_MESSAGE_BYTES)"
            )},
        });
        if let Ok(message) = serde_json::from_value::<RawJsonRpcMessage>(failed) {
            return reading.pass(TransportFrame::Single(message));
        }
    }
    tracing::info!(
        size,
        max,
        "a line of input is over the size limit; discarded and answered with an error"
    );
    let why = format!(
        "the message is {size} bytes, over the limit of {max} \
         (max_message_bytes, TANDEM_MAX_MESSAGE_BYTES); it was discarded"
    );
    reading.answer(framing_error(head, -32600, "Invalid request", &why))
}
