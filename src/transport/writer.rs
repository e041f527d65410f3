//! The outgoing side: lines from the SDK go through a channel to one writer task, which
//! writes everything already queued in one go and flushes once. A single answer is written
//! as soon as it comes; a burst (a fast model's chunks) costs one write per burst instead of
//! one per line, and wakes the editor once.

use std::sync::Arc;

use tokio::io::AsyncWriteExt;
use tokio::sync::mpsc;

use super::{Ledger, Out, note_outgoing};

/// Most bytes gathered into one write.
const BATCH_BYTES: usize = 1 << 20;

/// Lines waiting for the writer; a full queue makes the SDK wait (the editor reads slowly).
const QUEUE: usize = 1024;

/// Starts the writer task and returns where lines go.
pub(super) fn start(out: Out, ledger: Arc<Ledger>) -> mpsc::Sender<String> {
    let (tx, rx) = mpsc::channel(QUEUE);
    tokio::spawn(write_all(out, ledger, rx));
    tx
}

async fn write_all(out: Out, ledger: Arc<Ledger>, mut rx: mpsc::Receiver<String>) {
    let mut buf: Vec<u8> = Vec::with_capacity(64 * 1024);
    let mut written: Vec<String> = Vec::new();
    while let Some(line) = rx.recv().await {
        push(&mut buf, &line);
        written.push(line);
        while buf.len() < BATCH_BYTES {
            match rx.try_recv() {
                Ok(line) => {
                    push(&mut buf, &line);
                    written.push(line);
                }
                Err(_) => break,
            }
        }
        let result = {
            let mut out = out.lock().await;
            match out.write_all(&buf).await {
                Ok(()) => out.flush().await,
                Err(e) => Err(e),
            }
        };
        if let Err(e) = result {
            // The editor is gone: dropping the receiver fails the SDK's next send.
            tracing::debug!("stdout closed: {e}");
            return;
        }
        buf.clear();
        // Answers count as given once they are written.
        for line in written.drain(..) {
            note_outgoing(&ledger, &line);
        }
    }
}

/// Appends `line` and its newline, with tandem's secrets redacted: whatever a model or a
/// server echoed, the key never reaches the editor.
fn push(buf: &mut Vec<u8>, line: &str) {
    buf.extend_from_slice(crate::secrets::redact(line).as_bytes());
    if !line.ends_with('\n') {
        buf.push(b'\n');
    }
}
