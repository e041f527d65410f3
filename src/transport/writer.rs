//! The outgoing side: the frames the protocol layer sends, and the transport's own answers to
//! lines it could not pass on, go to one writer, which serializes each once, redacts tandem's
//! secrets from it (whatever a model or a server echoed, the key never reaches the editor),
//! writes everything already queued in one go and flushes once. A single answer is written
//! as soon as it comes; a burst (a fast model's chunks) costs one write per burst and wakes
//! the editor once. The wire trace records each line as it was written.
//!
//! Lines the protocol layer serialized itself (lines.rs) are taken before its frames, so a
//! frame it sends after handing over lines is written after them.

use std::sync::Arc;

use agent_client_protocol::TransportFrame;
use futures::StreamExt;
use futures::channel::{mpsc, oneshot};
use tokio::io::{AsyncWrite, AsyncWriteExt};

use super::trace::{Dir, WireTrace};

/// Most bytes gathered into one write.
const BATCH_BYTES: usize = 1 << 20;

/// What is written: a frame from the protocol layer, an answer the transport made, or lines
/// the protocol layer serialized itself.
pub(super) enum Outgoing {
    Frame(TransportFrame),
    Own(String),
    Lines(String),
}

/// Where the writer's lines come from.
pub(super) struct Sources {
    /// The protocol layer's frames.
    pub(crate) frames: mpsc::UnboundedReceiver<TransportFrame>,
    /// The reader's answers to lines that never became messages.
    pub(crate) own: mpsc::UnboundedReceiver<String>,
    /// Lines the protocol layer serialized itself.
    pub(crate) lines: super::lines::Chunks,
    /// Fired when the protocol layer asks to finish.
    pub(crate) finish: oneshot::Receiver<()>,
}

impl Sources {
    /// Whatever is ready now, the reader's answers and the protocol layer's own lines first.
    fn ready(&mut self) -> Option<Outgoing> {
        if let Ok(line) = self.own.try_recv() {
            return Some(Outgoing::Own(line));
        }
        if let Ok(chunk) = self.lines.try_recv() {
            return Some(Outgoing::Lines(chunk));
        }
        self.frames.try_recv().ok().map(Outgoing::Frame)
    }
}

/// Writes what the sources carry until the protocol layer is done: its sender dropped, or
/// `finish` fired and what it had sent is written. An error once the output is gone.
pub(super) async fn write_all(
    mut output: impl AsyncWrite + Send + Unpin,
    sources: Sources,
    trace: Option<Arc<WireTrace>>,
) -> std::io::Result<()> {
    let mut sources = sources;
    // After a finish request, only what was already sent is written.
    let mut finishing = false;
    let (mut own_open, mut lines_open) = (true, true);
    let mut buf: Vec<u8> = Vec::with_capacity(64 * 1024);
    loop {
        let Sources {
            frames,
            own,
            lines,
            finish,
        } = &mut sources;
        let next = tokio::select! {
            biased;
            line = own.next(), if own_open => match line {
                Some(line) => Outgoing::Own(line),
                None => {
                    own_open = false;
                    continue;
                }
            },
            chunk = lines.next(), if lines_open => match chunk {
                Some(chunk) => Outgoing::Lines(chunk),
                None => {
                    lines_open = false;
                    continue;
                }
            },
            frame = frames.next() => match frame {
                Some(frame) => Outgoing::Frame(frame),
                None => break,
            },
            asked = finish, if !finishing => {
                finishing = true;
                // A finish hook dropped unused is no request to finish.
                if asked.is_ok() {
                    frames.close();
                }
                continue;
            }
        };
        push(&mut buf, next, trace.as_deref());
        while buf.len() < BATCH_BYTES {
            let Some(ready) = sources.ready() else { break };
            push(&mut buf, ready, trace.as_deref());
        }
        write(&mut output, &mut buf).await?;
    }
    // The protocol layer is done: the transport's last answers and lines, then the end.
    while let Ok(line) = sources.own.try_recv() {
        push(&mut buf, Outgoing::Own(line), trace.as_deref());
    }
    while let Ok(chunk) = sources.lines.try_recv() {
        push(&mut buf, Outgoing::Lines(chunk), trace.as_deref());
    }
    write(&mut output, &mut buf).await?;
    output.shutdown().await.or_else(ignore_closed)
}

/// A closed output at the very end is the editor having gone first: nothing is lost.
fn ignore_closed(e: std::io::Error) -> std::io::Result<()> {
    match e.kind() {
        std::io::ErrorKind::BrokenPipe | std::io::ErrorKind::NotConnected => Ok(()),
        _ => Err(e),
    }
}

async fn write(output: &mut (impl AsyncWrite + Unpin), buf: &mut Vec<u8>) -> std::io::Result<()> {
    if buf.is_empty() {
        return Ok(());
    }
    output.write_all(buf).await?;
    output.flush().await?;
    buf.clear();
    Ok(())
}

/// The wire text of `frame`, as the SDK's `TransportFrame::to_json` writes it, without the
/// deep copy of the message that method makes first (it serializes from a borrow, so it clones
/// every params object: a quarter of a long `session/load`'s time went into those copies).
fn line_of(frame: TransportFrame) -> Result<String, String> {
    use agent_client_protocol::RawJsonRpcMessage as Message;
    use agent_client_protocol::v1::schema::JsonRpcMessage as Versioned;
    let written = match frame {
        TransportFrame::Single(Message::Request(m)) => serde_json::to_string(&Versioned::wrap(&m)),
        TransportFrame::Single(Message::Notification(m)) => {
            serde_json::to_string(&Versioned::wrap(&m))
        }
        TransportFrame::Single(Message::Response(m)) => serde_json::to_string(&Versioned::wrap(&m)),
        TransportFrame::Malformed { raw, .. } => Ok(raw),
        // A kind of frame a later SDK adds: its own way.
        other => return other.to_json().map_err(|e| e.message),
    };
    written.map_err(|e| e.to_string())
}

/// Appends `item` as redacted lines, and records each in the trace as written.
fn push(buf: &mut Vec<u8>, item: Outgoing, trace: Option<&WireTrace>) {
    let line = match item {
        // Lines handed over hold whole lines; none is nothing to write.
        Outgoing::Lines(lines) if lines.is_empty() => return,
        Outgoing::Own(line) | Outgoing::Lines(line) => line,
        Outgoing::Frame(frame) => match line_of(frame) {
            Ok(line) => line,
            Err(e) => {
                tracing::error!("an outgoing message could not be written: {e}");
                return;
            }
        },
    };
    let text = crate::secrets::redact(&line);
    let text = text.trim_end_matches('\n');
    if let Some(trace) = trace {
        // JSON escapes every newline within a message: each one left ends a line.
        text.split('\n')
            .for_each(|line| trace.record(Dir::Out, line));
    }
    buf.extend_from_slice(text.as_bytes());
    buf.push(b'\n');
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lines handed over before a frame is sent are written before it, each line traced on
    /// its own (none for an empty hand-over), and the writer ends when the protocol layer's
    /// sender does.
    #[tokio::test]
    async fn lines_handed_over_go_out_before_the_frames_sent_after_them() {
        let (frames_tx, frames) = mpsc::unbounded();
        let (_own_tx, own) = mpsc::unbounded();
        let (lines, chunks) = super::super::lines::channel();
        let (_finish_tx, finish) = oneshot::channel();
        let dir = tempfile::tempdir().unwrap();
        let trace = Arc::new(WireTrace::open(&dir.path().join("trace")).unwrap());
        let sources = Sources {
            frames,
            own,
            lines: chunks,
            finish,
        };
        let note =
            |n: u32| format!("{{\"jsonrpc\":\"2.0\",\"method\":\"n\",\"params\":{{\"n\":{n}}}}}\n");
        assert!(lines.send(String::new()).await);
        assert!(lines.send(note(1) + &note(2)).await);
        let response = r#"{"jsonrpc":"2.0","id":3,"result":{}}"#;
        frames_tx
            .unbounded_send(TransportFrame::parse_json(response))
            .unwrap();
        drop(frames_tx);
        let mut out = Vec::new();
        write_all(&mut out, sources, Some(trace)).await.unwrap();
        let expected = format!("{}{}{response}\n", note(1), note(2));
        assert_eq!(String::from_utf8(out).unwrap(), expected);
        let traced = std::fs::read_to_string(dir.path().join("trace")).unwrap();
        let traced: Vec<&str> = traced
            .lines()
            .map(|l| l.split_once(" -> ").unwrap().1)
            .collect();
        assert_eq!(traced, [note(1).trim_end(), note(2).trim_end(), response]);
    }

    /// Lines the protocol layer serialized itself are redacted like every frame: a token a
    /// replayed transcript holds never reaches the editor.
    #[test]
    fn handed_over_lines_are_redacted() {
        let mut buf = Vec::new();
        let chunk = "{\"a\":\"ok\"}\n{\"t\":\"Authorization: Bearer sk-live-123\"}\n".to_string();
        push(&mut buf, Outgoing::Lines(chunk), None);
        let out = String::from_utf8(buf).unwrap();
        assert_eq!(
            out,
            "{\"a\":\"ok\"}\n{\"t\":\"Authorization: Bearer [redacted]\"}\n"
        );
    }

    /// Every kind of frame is written exactly as the SDK writes it.
    #[test]
    fn lines_are_the_sdks_own() {
        let lines = [
            r#"{"jsonrpc":"2.0","id":7,"method":"fs/read_text_file","params":{"path":"/a","sessionId":"s"}}"#,
            r#"{"jsonrpc":"2.0","id":"x","method":"m"}"#,
            r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"é \" \n"}}}}"#,
            r#"{"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn"}}"#,
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}"#,
            r#"{"jsonrpc":"2.0","id":4,"error":{"code":-32602,"message":"bad","data":{"x":[1,2]}}}"#,
            r#"{"not":"json-rpc"}"#,
        ];
        for line in lines {
            let frame = TransportFrame::parse_json(line);
            let sdk = frame.to_json().unwrap();
            assert_eq!(line_of(frame).unwrap(), sdk, "{line}");
        }
    }
}
