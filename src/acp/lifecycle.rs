//! The connection's life, over any transport: serving until the editor's side closes or the
//! caller asks to stop, and ending in order.
//!
//! - **End of input** (the editor closed stdin, a piped file ended): requests to the editor
//!   fail at once (no answer can arrive); what the editor asked may still finish, within the
//!   grace period (`TANDEM_EOF_GRACE_SECS`); then running prompts are cancelled, get
//!   [`AFTER_CANCEL`] to answer, and the connection closes.
//! - **Shutdown** (the future the caller passes: SIGTERM or SIGINT for the stdio agent, Ctrl-C
//!   for `tandem exec`): running prompts are cancelled at once (their commands killed,
//!   terminals released: the editor's answers still arrive), get [`AFTER_CANCEL`], and the
//!   connection closes, without the grace period.
//!
//! Either way, every session then ends as `session/close` ends one, all at once, while the
//! editor may still read: its turn over, its background commands stopped (local ones killed
//! with all they started; the editor's terminals get `terminal/kill` and `terminal/release`,
//! written to the editor even after the end of input, when no answer can come back), its
//! sandbox folder removed (`SessionManager::end_all`).
//!
//! Then, before the connection closes, the records the sessions still hold in memory
//! for the disk (a full disk refused them) are tried again for up to [`EXIT_WAIT`]; what the
//! disk still refuses then is said to the editor, a notice per session naming what is lost
//! (and on stderr as tandem ends, `crate::serve`).
//!
//! Every request being answered off the dispatch loop is a task of the handlers' tracker, so
//! "every request answered" is that tracker being empty. The transport only frames; the relay
//! between it and the SDK (relay.rs) holds what the protocol needs of the wire.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::{Agent, Channel, Client, ConnectTo};

use super::{ConnectionSink, Handlers, relay};
use crate::session::SessionManager;
use crate::transport::Outlet;
use crate::types::{EventSink, Severity, TurnEvent};

/// How long cancelled prompts get to answer before the connection closes anyway.
pub(crate) const AFTER_CANCEL: Duration = Duration::from_secs(10);

/// How long an exit waits for the disk to take the records still held in memory.
pub(crate) const EXIT_WAIT: Duration = Duration::from_secs(5);

/// Why the connection is ending.
enum Ending {
    /// The editor's side closed.
    InputEnded,
    /// The caller asked to stop.
    Shutdown,
}

/// Serves ACP for `manager`'s sessions over `transport` until the editor's side closes or
/// `shutdown` resolves, then ends in order (see the module docs). An error when the transport
/// or the connection failed.
pub(crate) async fn serve(
    manager: Arc<SessionManager>,
    transport: impl ConnectTo<Agent> + Outlet + 'static,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), agent_client_protocol::Error> {
    let handlers = Arc::new(Handlers::new(manager.clone(), transport.lines()));
    let grace = manager.config().eof_grace;
    let (wire, driver) = ConnectTo::<Agent>::into_channel_and_future(transport);
    let (protocol, relay_end) = Channel::duplex();
    let h = handlers.clone();
    let connection = super::connect(handlers, protocol, async move |cx| {
        let ending = tokio::select! {
            () = cx.incoming_closed() => Ending::InputEnded,
            () = shutdown => Ending::Shutdown,
        };
        end(&h, ending, grace).await;
        tell_unwritten(&h, &cx).await;
        Ok(())
    });
    let served = async {
        let (served, ()) = futures::join!(connection, relay::run(wire, relay_end));
        served
    };
    let Some(mut driver) = driver else {
        return served.await;
    };
    tokio::pin!(served);
    tokio::select! {
        served = &mut served => {
            // Everything the connection sent was handed over: the transport writes it, then ends.
            let _ = driver.request_finish();
            let written = driver.await;
            served.and(written)
        }
        failed = &mut driver => {
            // The transport ended first: its input is gone, so the connection ends as at the
            // end of input, and nothing more reaches the editor.
            if let Err(e) = &failed {
                tracing::warn!("the transport failed: {}", e.message);
            }
            served.await.and(failed)
        }
    }
}

/// Ends the connection's work in order (see the module docs).
async fn end(handlers: &Handlers, ending: Ending, grace: Duration) {
    match ending {
        Ending::InputEnded => {
            // What waits for the editor fails now; what was asked may finish, within grace.
            handlers.editor_gone();
            if tokio::time::timeout(grace, handlers.idle()).await.is_err() {
                tracing::warn!(
                    grace_secs = grace.as_secs(),
                    "stdin ended and requests are still running; cancelling them"
                );
                cancel_running(handlers).await;
            }
        }
        Ending::Shutdown => {
            tracing::info!("stopping: cancelling running prompts and closing");
            if !handlers.is_idle() {
                cancel_running(handlers).await;
            }
        }
    }
    // What the sessions still run stops while the connection is there to say so.
    handlers.manager.end_all().await;
}

/// Waits (up to [`EXIT_WAIT`]) for the records held in memory to reach the disk, and tells
/// the editor, per session, what the disk still refuses: lost with the process.
async fn tell_unwritten(handlers: &Handlers, cx: &ConnectionTo<Client>) {
    let lost = crate::store::write_out(tokio::time::Instant::now() + EXIT_WAIT).await;
    if lost.is_empty() {
        return;
    }
    let sink = ConnectionSink::new(cx.clone(), handlers.caps());
    for lost in lost {
        sink.emit(
            &lost.session,
            TurnEvent::Notice {
                severity: Severity::Error,
                text: lost.told(),
            },
        );
    }
}

/// Cancels every running prompt and waits (bounded) for what is running to answer.
async fn cancel_running(handlers: &Handlers) {
    let cancelled = handlers.manager.cancel_all();
    tracing::info!(sessions = cancelled, "cancelling running prompts");
    let _ = tokio::time::timeout(AFTER_CANCEL, handlers.idle()).await;
}

impl Handlers {
    /// The editor's side has closed: requests to it fail at once from now on.
    fn editor_gone(&self) {
        self.editor_gone.cancel();
    }

    /// Whether no request is being answered.
    fn is_idle(&self) -> bool {
        self.tasks.is_empty()
    }

    /// Resolves once no request is being answered.
    async fn idle(&self) {
        // Closing only lets `wait` end when the tracker is empty; tasks started later are
        // still tracked (and waited for).
        self.tasks.close();
        self.tasks.wait().await;
    }
}

#[cfg(test)]
#[path = "lifecycle_tests.rs"]
mod tests;
