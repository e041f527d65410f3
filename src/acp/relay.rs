//! Between any transport and the ACP SDK's connection: what the protocol needs of the wire
//! that a transport should not have to know.
//!
//! - Incoming: an `initialize` whose protocol version is a number in a string is read as the
//!   number (compat.rs); and a request that comes right behind `initialize` (a file piped in,
//!   `tandem < requests.ndjson`) is held until `initialize` is answered, since the SDK refuses
//!   requests before its handshake is complete.
//! - Outgoing: every error answer is completed once (`errors::finish`: its details, its
//!   `_meta`, its length), typed, before the transport serializes it.

use std::sync::Arc;

use agent_client_protocol::{
    Channel, RawJsonRpcId, RawJsonRpcMessage, RawJsonRpcResponse, TransportFrame,
};
use futures::StreamExt;
use parking_lot::Mutex;
use tokio::sync::Notify;

use super::{compat, errors};

/// Most the requests behind an `initialize` wait for its answer: it is answered at once, so
/// only a fault in tandem could make it wait longer, and then reading on beats hanging.
const HANDSHAKE: std::time::Duration = std::time::Duration::from_secs(30);

/// The `initialize` request waiting for its answer, if any.
#[derive(Default)]
struct Handshake {
    awaited: Mutex<Option<RawJsonRpcId>>,
    answered: Notify,
}

impl Handshake {
    fn is_waiting(&self) -> bool {
        self.awaited.lock().is_some()
    }

    /// Notes that `frame` went out; wakes the incoming side when it answers `initialize`.
    fn saw_outgoing(&self, frame: &TransportFrame) {
        let TransportFrame::Single(RawJsonRpcMessage::Response(response)) = frame else {
            return;
        };
        let id = match response {
            RawJsonRpcResponse::Result { id, .. } | RawJsonRpcResponse::Error { id, .. } => id,
        };
        let mut awaited = self.awaited.lock();
        if awaited.as_ref() == Some(id) {
            *awaited = None;
            self.answered.notify_waiters();
        }
    }

    async fn until_answered(&self) {
        loop {
            let answered = self.answered.notified();
            tokio::pin!(answered);
            answered.as_mut().enable();
            if !self.is_waiting() {
                return;
            }
            answered.await;
        }
    }
}

/// Moves frames between `wire` (a transport's end) and `protocol` (the SDK connection's end)
/// until the protocol side is done sending. Incoming frames stop at the end of input; the
/// protocol side then sees the editor's side close.
pub(super) async fn run(wire: Channel, protocol: Channel) {
    let (mut from_wire, to_wire) = wire.into_parts();
    let (mut from_protocol, to_protocol) = protocol.into_parts();
    let handshake = Arc::new(Handshake::default());
    let incoming = {
        let handshake = handshake.clone();
        async move {
            while let Some(mut frame) = from_wire.next().await {
                let initialize = match &mut frame {
                    TransportFrame::Single(RawJsonRpcMessage::Request(request)) => {
                        compat::normalise(request);
                        (&*request.method == "initialize").then(|| request.id.clone())
                    }
                    _ => None,
                };
                if let Some(id) = &initialize {
                    *handshake.awaited.lock() = Some(id.clone());
                }
                if to_protocol.unbounded_send(frame).is_err() {
                    return;
                }
                if initialize.is_some()
                    && tokio::time::timeout(HANDSHAKE, handshake.until_answered())
                        .await
                        .is_err()
                {
                    tracing::warn!("initialize was not answered in time; reading on");
                    *handshake.awaited.lock() = None;
                }
            }
        }
    };
    let outgoing = async move {
        while let Some(mut frame) = from_protocol.next().await {
            errors::finish(&mut frame);
            handshake.saw_outgoing(&frame);
            if to_wire.unbounded_send(frame).is_err() {
                return;
            }
        }
    };
    tokio::pin!(incoming, outgoing);
    // Incoming may end first (the end of input) while answers still go out; the relay is
    // done when the protocol side stops sending. Input still open then is left behind.
    tokio::select! {
        () = &mut outgoing => {}
        () = &mut incoming => outgoing.await,
    }
}
