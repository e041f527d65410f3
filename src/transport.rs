//! The stdio transport: newline-delimited JSON-RPC on stdin/stdout, made safe for pipes.
//!
//! Editors wait for each answer; a file piped in (`tandem < requests.ndjson`) does not. So:
//! - a request written right behind `initialize` is held until `initialize` is answered (the
//!   protocol requires initialization to complete first);
//! - when stdin ends, tandem keeps serving until every request it read has been answered;
//!   after a grace period, running prompts are cancelled, and then the connection closes.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agent_client_protocol::Lines;
use futures::{Sink, Stream};
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::{Notify, mpsc};

/// How long in-flight requests may run after stdin ends before prompts are cancelled.
pub const DEFAULT_EOF_GRACE: Duration = Duration::from_secs(300);
/// How long cancelled prompts get to answer before the connection closes anyway.
const AFTER_CANCEL: Duration = Duration::from_secs(10);

/// Requests read but not yet answered, and the sessions seen.
#[derive(Default)]
struct Ledger {
    state: Mutex<(HashSet<String>, HashSet<String>)>,
    answered: Notify,
}

impl Ledger {
    fn lock(&self) -> std::sync::MutexGuard<'_, (HashSet<String>, HashSet<String>)> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
    fn is_pending(&self, id: &str) -> bool {
        self.lock().0.contains(id)
    }
    fn idle(&self) -> bool {
        self.lock().0.is_empty()
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
    let Ok(message) = serde_json::from_str::<Value>(line) else {
        return;
    };
    if message.get("method").is_some() {
        return;
    }
    let mut state = ledger.lock();
    if let Some(id) = id_of(&message) {
        state.0.remove(&id);
    }
    if let Some(session) = message["result"]["sessionId"].as_str() {
        state.1.insert(session.to_string());
    }
    drop(state);
    ledger.answered.notify_waiters();
}

/// The stdio transport with a grace period after stdin ends.
pub fn stdio(
    grace: Duration,
) -> Lines<
    impl Sink<String, Error = std::io::Error> + Send + 'static,
    impl Stream<Item = std::io::Result<String>> + Send + 'static,
> {
    let ledger = Arc::new(Ledger::default());
    let (tx, rx) = mpsc::channel::<std::io::Result<String>>(64);
    tokio::spawn(read_stdin(tx, ledger.clone(), grace));
    let outgoing = futures::sink::unfold(
        (tokio::io::stdout(), ledger),
        |(mut out, ledger), line: String| async move {
            out.write_all(line.as_bytes()).await?;
            if !line.ends_with('\n') {
                out.write_all(b"\n").await?;
            }
            out.flush().await?;
            note_outgoing(&ledger, &line);
            Ok::<_, std::io::Error>((out, ledger))
        },
    );
    let incoming = futures::stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|item| (item, rx))
    });
    Lines::new(Box::pin(outgoing), incoming)
}

async fn read_stdin(
    tx: mpsc::Sender<std::io::Result<String>>,
    ledger: Arc<Ledger>,
    grace: Duration,
) {
    let mut lines = BufReader::new(tokio::io::stdin()).lines();
    loop {
        let line = match lines.next_line().await {
            Ok(Some(line)) => line,
            Ok(None) => break,
            Err(e) => {
                let _ = tx.send(Err(e)).await;
                break;
            }
        };
        let message: Option<Value> = serde_json::from_str(&line).ok();
        let request = message
            .as_ref()
            .filter(|m| m.get("method").is_some())
            .and_then(id_of);
        let initialize = message
            .as_ref()
            .is_some_and(|m| m["method"] == "initialize");
        if let Some(session) = message
            .as_ref()
            .and_then(|m| m["params"]["sessionId"].as_str())
        {
            ledger.lock().1.insert(session.to_string());
        }
        if let Some(id) = &request {
            ledger.lock().0.insert(id.clone());
        }
        if tx.send(Ok(line)).await.is_err() {
            return;
        }
        if let (true, Some(id)) = (initialize, request) {
            ledger.until(|l| !l.is_pending(&id)).await;
        }
    }
    // stdin ended: let what was asked finish, within the grace period.
    if tokio::time::timeout(grace, ledger.until(Ledger::idle))
        .await
        .is_err()
    {
        let sessions: Vec<String> = ledger.lock().1.iter().cloned().collect();
        tracing::warn!(
            grace_secs = grace.as_secs(),
            sessions = sessions.len(),
            "stdin ended and requests are still running; cancelling them"
        );
        for session in sessions {
            let cancel = serde_json::json!({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": session}});
            let _ = tx.send(Ok(cancel.to_string())).await;
        }
        let _ = tokio::time::timeout(AFTER_CANCEL, ledger.until(Ledger::idle)).await;
    }
    // Dropping the sender ends the incoming stream: the connection closes.
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn answers_clear_pending_requests_and_sessions_are_noted() {
        let ledger = Ledger::default();
        ledger.lock().0.insert("1".into());
        ledger.lock().0.insert("\"a\"".into());
        note_outgoing(
            &ledger,
            r#"{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s1"}}"#,
        );
        assert!(!ledger.is_pending("1"));
        assert!(ledger.lock().1.contains("s1"));
        note_outgoing(
            &ledger,
            r#"{"jsonrpc":"2.0","method":"session/update","params":{}}"#,
        );
        assert!(!ledger.idle());
        note_outgoing(
            &ledger,
            r#"{"jsonrpc":"2.0","id":"a","error":{"code":1,"message":"x"}}"#,
        );
        tokio::time::timeout(Duration::from_secs(1), ledger.until(Ledger::idle))
            .await
            .unwrap();
    }
}
