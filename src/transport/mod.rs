//! The stdio transport: newline-delimited JSON-RPC on stdin/stdout, made safe for pipes.
//!
//! Editors wait for each answer; a file piped in (`tandem < requests.ndjson`) does not. So:
//! - a request written right behind `initialize` is held until `initialize` is answered (the
//!   protocol requires initialization to complete first);
//! - when stdin ends, tandem keeps serving until every request it read has been answered;
//!   after a grace period, running prompts are cancelled, and then the connection closes.
//!   Requests to the editor fail at once: no answer can arrive (`Stopper::editor_gone`).
//!
//! Lines are read with a size limit (frames.rs): a longer one is answered with an error and its
//! bytes are dropped as they arrive, never held (a longer answer from the editor fails, at
//! once, the request of tandem's it answers); a line that is not UTF-8 or not JSON gets a
//! parse error, answered by its id when its leading bytes name one for sure (recover.rs).
//! Either way the connection goes on. Every error answer gets readable details and never
//! echoes a huge input (details.rs), and the wire trace records both directions (trace.rs).
//! An `initialize` whose protocol version is a number in a string is read as the number
//! (compat.rs).

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use parking_lot::Mutex;
use std::time::Duration;

use agent_client_protocol::{Lines, RawJsonRpcMessage, TransportFrame};
use futures::{Sink, Stream};
use serde_json::Value;
use tokio::io::{AsyncBufRead, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::{Notify, mpsc};
use tokio_util::sync::CancellationToken;

mod compat;
mod details;
mod frames;
mod recover;
mod trace;
mod writer;

pub use trace::WireTrace;

use frames::{framing_error, next_text};

/// How long cancelled prompts get to answer before the connection closes anyway.
const AFTER_CANCEL: Duration = Duration::from_secs(10);

/// Requests read but not yet answered (by id, with how many are open under it), and the
/// sessions seen.
#[derive(Default)]
struct Ledger {
    state: Mutex<(HashMap<String, u32>, HashSet<String>)>,
    answered: Notify,
}

impl Ledger {
    fn is_pending(&self, id: &str) -> bool {
        self.state.lock().0.contains_key(id)
    }
    fn idle(&self) -> bool {
        self.state.lock().0.is_empty()
    }
    /// Waits until `done` holds, checking after every answer.
    async fn until(&self, done: impl Fn(&Ledger) -> bool) {
        loop {
            let notified = self.answered.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if done(self) {
                return;
            }
            notified.await;
        }
    }
}

/// A JSON-RPC message's id as text, when it has one.
fn id_of(message: &Value) -> Option<String> {
    message
        .get("id")
        .filter(|id| !id.is_null())
        .map(Value::to_string)
}

/// Notes what an outgoing line answers and which sessions it names.
fn note_outgoing(ledger: &Ledger, line: &str) {
    // Notifications and requests (most lines: every streamed chunk) answer nothing; the SDK
    // writes their `method` right after `jsonrpc`, so they are told apart without parsing.
    if line.starts_with(r#"{"jsonrpc":"2.0","method":"#) {
        return;
    }
    let Ok(message) = serde_json::from_str::<Value>(line) else {
        return;
    };
    if message.get("method").is_some() {
        return;
    }
    let mut state = ledger.state.lock();
    if let Some(id) = id_of(&message)
        && let Some(count) = state.0.get_mut(&id)
    {
        // An id used twice is pending until both are answered.
        *count -= 1;
        if *count == 0 {
            state.0.remove(&id);
        }
    }
    if let Some(session) = message["result"]["sessionId"].as_str() {
        state.1.insert(session.to_string());
    }
    drop(state);
    ledger.answered.notify_waiters();
}

/// stdout, shared by the SDK's outgoing lines and the transport's own error replies, so whole
/// lines never interleave.
type Out = Arc<tokio::sync::Mutex<Box<dyn AsyncWrite + Send + Unpin>>>;

/// stdout for the transport's own answers, and the wire trace that records them.
#[derive(Clone)]
struct Answers {
    out: Out,
    trace: Option<Arc<WireTrace>>,
}

impl Answers {
    async fn send(&self, line: &str) -> std::io::Result<()> {
        if let Some(trace) = &self.trace {
            trace.record(trace::Dir::Out, line);
        }
        write_line(&self.out, line).await
    }

    fn saw(&self, line: &[u8]) {
        if let Some(trace) = &self.trace {
            trace.record(trace::Dir::In, &String::from_utf8_lossy(line));
        }
    }
}

async fn write_line(out: &Out, line: &str) -> std::io::Result<()> {
    let mut out = out.lock().await;
    out.write_all(line.as_bytes()).await?;
    if !line.ends_with('\n') {
        out.write_all(b"\n").await?;
    }
    out.flush().await
}

/// The stdio transport with a grace period after stdin ends, a line size limit and an
/// optional wire trace; SIGTERM and SIGINT close it in order.
pub fn stdio(
    grace: Duration,
    max_line: usize,
    trace: Option<WireTrace>,
) -> (Lines<impl LineSink, impl LineStream>, CancellationToken) {
    let (lines, stop) = over(
        tokio::io::stdin(),
        tokio::io::stdout(),
        (grace, max_line),
        trace.map(Arc::new),
    );
    let gone = stop.editor_gone.clone();
    tokio::spawn(stop_on_signal(stop));
    (lines, gone)
}

/// What the transport's outgoing side is.
pub trait LineSink: Sink<String, Error = std::io::Error> + Send + 'static {}
impl<T: Sink<String, Error = std::io::Error> + Send + 'static> LineSink for T {}
/// What the transport's incoming side is.
pub trait LineStream: Stream<Item = std::io::Result<String>> + Send + 'static {}
impl<T: Stream<Item = std::io::Result<String>> + Send + 'static> LineStream for T {}

/// What closing the connection early needs (see [`stop_on_signal`]).
pub struct Stopper {
    tx: mpsc::Sender<std::io::Result<String>>,
    ledger: Arc<Ledger>,
    close: CancellationToken,
    /// Cancelled when stdin ends: the editor can answer nothing more.
    pub editor_gone: CancellationToken,
}

/// The same transport over any byte streams (the fuzz harness feeds it from memory).
/// `limits` is the grace period after stdin ends and the longest line read.
pub fn over(
    input: impl AsyncRead + Send + Unpin + 'static,
    output: impl AsyncWrite + Send + Unpin + 'static,
    limits: (Duration, usize),
    trace: Option<Arc<WireTrace>>,
) -> (Lines<impl LineSink, impl LineStream>, Stopper) {
    let (grace, max_line) = limits;
    let ledger = Arc::new(Ledger::default());
    let (tx, rx) = mpsc::channel::<std::io::Result<String>>(64);
    let out: Out = Arc::new(tokio::sync::Mutex::new(Box::new(output)));
    // Cancelled when the connection should close: after stdin ends, or after a stop signal.
    let close = CancellationToken::new();
    let editor_gone = CancellationToken::new();
    tokio::spawn(read_input(
        BufReader::new(input),
        tx.clone(),
        ledger.clone(),
        grace,
        max_line,
        Answers {
            out: out.clone(),
            trace: trace.clone(),
        },
        (close.clone(), editor_gone.clone()),
    ));
    let stop = Stopper {
        tx,
        ledger: ledger.clone(),
        close: close.clone(),
        editor_gone,
    };
    let lines = writer::start(out, ledger);
    let outgoing = futures::sink::unfold(lines, move |lines, line: String| {
        let line = details::with_details(line);
        if let Some(trace) = &trace {
            trace.record(trace::Dir::Out, &line);
        }
        send_on(lines, line)
    });
    let incoming = futures::stream::unfold((rx, close), |(mut rx, close)| async move {
        let item = tokio::select! {
            biased;
            item = rx.recv() => item,
            () = close.cancelled() => None,
        };
        item.map(|item| (item, (rx, close)))
    });
    (Lines::new(Box::pin(outgoing), incoming), stop)
}

/// Queues `line` for the writer task; an error once stdout is gone.
async fn send_on(
    lines: mpsc::Sender<String>,
    line: String,
) -> std::io::Result<mpsc::Sender<String>> {
    lines
        .send(line)
        .await
        .map_err(|_| std::io::Error::new(std::io::ErrorKind::BrokenPipe, "stdout is closed"))?;
    Ok(lines)
}

/// Resolves on SIGTERM or SIGINT: the way a terminal, a process manager or an editor asks
/// tandem to stop. Logged; what follows is the same orderly close as the end of stdin,
/// without the grace period.
async fn stop_signal() {
    let name = crate::platform::stop_requested().await;
    tracing::info!(
        signal = name,
        "stopping: cancelling running prompts and closing"
    );
}

async fn read_input<R: AsyncBufRead + Unpin>(
    mut input: R,
    tx: mpsc::Sender<std::io::Result<String>>,
    ledger: Arc<Ledger>,
    grace: Duration,
    max_line: usize,
    answers: Answers,
    (close, editor_gone): (CancellationToken, CancellationToken),
) {
    loop {
        let mut line = match next_text(&mut input, max_line, &answers).await {
            Ok(Some(line)) => line,
            Ok(None) => break,
            Err(e) => {
                let _ = tx.send(Err(e)).await;
                break;
            }
        };
        if line.trim().is_empty() {
            // Blank lines between messages are not messages; ndjson writers leave them.
            continue;
        }
        let message: Option<Value> = match read_message(&mut line) {
            Ok(message) => Some(message),
            Err(e) => {
                // Answered here rather than by the SDK, which cannot name the request: the
                // editor's request gets its error instead of waiting forever.
                tracing::warn!("a line on stdin is not JSON ({e}); answered with a parse error");
                let reply = framing_error(line.as_bytes(), -32700, "Parse error", e.to_string());
                if answers.send(&reply).await.is_err() {
                    break;
                }
                continue;
            }
        };
        // Pending only if the SDK will answer it by its id: anything it finds invalid it
        // answers with id null, and waiting for that answer would wait forever.
        let request = message
            .as_ref()
            .filter(|m| m.get("method").is_some())
            .and_then(id_of)
            .filter(|_| {
                matches!(
                    TransportFrame::parse_json(&line),
                    TransportFrame::Single(RawJsonRpcMessage::Request(_))
                )
            });
        let initialize = message
            .as_ref()
            .is_some_and(|m| m["method"] == "initialize");
        if let Some(session) = message
            .as_ref()
            .and_then(|m| m["params"]["sessionId"].as_str())
        {
            ledger.state.lock().1.insert(session.to_string());
        }
        if let Some(id) = &request {
            *ledger.state.lock().0.entry(id.clone()).or_default() += 1;
        }
        if tx.send(Ok(line)).await.is_err() {
            return;
        }
        if let (true, Some(id)) = (initialize, request) {
            ledger.until(|l| !l.is_pending(&id)).await;
        }
    }
    // stdin ended: what waits for the editor fails now; what was asked may finish, within
    // the grace period.
    editor_gone.cancel();
    if tokio::time::timeout(grace, ledger.until(Ledger::idle))
        .await
        .is_err()
    {
        tracing::warn!(
            grace_secs = grace.as_secs(),
            "stdin ended and requests are still running; cancelling them"
        );
        cancel_running(&tx, &ledger).await;
    }
    close.cancel();
}

/// `line` as JSON, after what [`compat`] puts right (the line rewritten to match).
fn read_message(line: &mut String) -> Result<Value, serde_json::Error> {
    let mut message: Value = serde_json::from_str(line)?;
    if compat::normalise(&mut message) {
        *line = message.to_string();
    }
    Ok(message)
}

/// On SIGTERM or SIGINT: running prompts are cancelled (their commands killed, terminals
/// released: stdin is still read, so the editor's answers arrive), and once every request
/// is answered the connection closes, without the grace period stdin's end gets.
async fn stop_on_signal(stop: Stopper) {
    let Stopper {
        tx, ledger, close, ..
    } = stop;
    tokio::select! {
        () = stop_signal() => {}
        () = close.cancelled() => return,
    }
    if !ledger.idle() {
        tracing::warn!("requests are still running at the stop signal; cancelling them");
        cancel_running(&tx, &ledger).await;
    }
    close.cancel();
}

/// Sends `session/cancel` for every session seen and waits (bounded) for what is running to
/// answer.
async fn cancel_running(tx: &mpsc::Sender<std::io::Result<String>>, ledger: &Ledger) {
    let sessions: Vec<String> = ledger.state.lock().1.iter().cloned().collect();
    tracing::info!(sessions = sessions.len(), "cancelling running prompts");
    for session in sessions {
        let cancel = serde_json::json!({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": session}});
        let _ = tx.send(Ok(cancel.to_string())).await;
    }
    let _ = tokio::time::timeout(AFTER_CANCEL, ledger.until(Ledger::idle)).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn answers_clear_pending_requests_and_sessions_are_noted() {
        let ledger = Ledger::default();
        ledger.state.lock().0.insert("1".into(), 1);
        // The same id twice: pending until both are answered.
        ledger.state.lock().0.insert("\"a\"".into(), 2);
        note_outgoing(
            &ledger,
            r#"{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s1"}}"#,
        );
        assert!(!ledger.is_pending("1"));
        assert!(ledger.state.lock().1.contains("s1"));
        note_outgoing(
            &ledger,
            r#"{"jsonrpc":"2.0","method":"session/update","params":{}}"#,
        );
        assert!(!ledger.idle());
        note_outgoing(
            &ledger,
            r#"{"jsonrpc":"2.0","id":"a","error":{"code":1,"message":"x"}}"#,
        );
        assert!(ledger.is_pending("\"a\""));
        note_outgoing(&ledger, r#"{"jsonrpc":"2.0","id":"a","result":{}}"#);
        tokio::time::timeout(Duration::from_secs(1), ledger.until(Ledger::idle))
            .await
            .unwrap();
    }
}
