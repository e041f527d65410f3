//! The outgoing side: the frames the protocol layer sends, and the transport's own answers to
//! lines it could not pass on, go to one writer, which serializes each once, redacts tandem's
//! secrets from it (whatever a model or a server echoed, the key never reaches the editor),
//! writes everything already queued in one go and flushes once. A single answer is written
//! as soon as it comes; a burst (a fast model's chunks) costs one write per burst and wakes
//! the editor once. The wire trace records each line as it was written.

use std::sync::Arc;

use agent_client_protocol::TransportFrame;
use futures::StreamExt;
use futures::channel::{mpsc, oneshot};
use tokio::io::{AsyncWrite, AsyncWriteExt};

use super::trace::{Dir, WireTrace};

/// Most bytes gathered into one write.
const BATCH_BYTES: usize = 1 << 20;

/// One line to write: a frame from the protocol layer, or an answer the transport made.
pub(super) enum Outgoing {
    Frame(TransportFrame),
    Own(String),
}

/// Writes what `frames` (the protocol layer's) and `own` (the reader's answers) carry until
/// the protocol layer is done: its sender dropped, or `finish` fired and what it had sent is
/// written. An error once the output is gone.
pub(super) async fn write_all(
    mut output: impl AsyncWrite + Send + Unpin,
    frames: mpsc::UnboundedReceiver<TransportFrame>,
    own: mpsc::UnboundedReceiver<String>,
    finish: oneshot::Receiver<()>,
    trace: Option<Arc<WireTrace>>,
) -> std::io::Result<()> {
    let (mut frames, mut own, mut finish) = (frames, own, finish);
    // After a finish request, only what was already sent is written.
    let mut finishing = false;
    let mut own_open = true;
    let mut buf: Vec<u8> = Vec::with_capacity(64 * 1024);
    loop {
        let next = tokio::select! {
            biased;
            line = own.next(), if own_open => match line {
                Some(line) => Outgoing::Own(line),
                None => {
                    own_open = false;
                    continue;
                }
            },
            frame = frames.next() => match frame {
                Some(frame) => Outgoing::Frame(frame),
                None => break,
            },
            asked = &mut finish, if !finishing => {
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
            let ready = match own.try_recv() {
                Ok(line) => Outgoing::Own(line),
                Err(_) => match frames.try_recv() {
                    Ok(frame) => Outgoing::Frame(frame),
                    Err(_) => break,
                },
            };
            push(&mut buf, ready, trace.as_deref());
        }
        write(&mut output, &mut buf).await?;
    }
    // The protocol layer is done: the transport's last answers, then the end.
    while let Ok(line) = own.try_recv() {
        push(&mut buf, Outgoing::Own(line), trace.as_deref());
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

/// Appends `item` as one redacted line, and records it in the trace as written.
fn push(buf: &mut Vec<u8>, item: Outgoing, trace: Option<&WireTrace>) {
    let line = match item {
        Outgoing::Own(line) => line,
        Outgoing::Frame(frame) => match frame.to_json() {
            Ok(line) => line,
            Err(e) => {
                tracing::error!("an outgoing message could not be written: {}", e.message);
                return;
            }
        },
    };
    let line = crate::secrets::redact(&line);
    let line = line.trim_end_matches('\n');
    if let Some(trace) = trace {
        trace.record(Dir::Out, line);
    }
    buf.extend_from_slice(line.as_bytes());
    buf.push(b'\n');
}
