//! The wire: newline-delimited JSON-RPC over a pair of byte streams (stdin/stdout for an
//! editor, an in-memory pipe for `tandem exec` and the fuzz harness). Framing only: it knows
//! lines, not sessions, requests or the connection's lifecycle, which live in `acp/`.
//!
//! - Lines are read with a size limit (frames.rs): a longer one is answered with an error and
//!   its bytes are dropped as they arrive, never held (a longer answer from the editor fails,
//!   at once, the request of tandem's it answers). Each line is parsed once, into the protocol
//!   layer's message type; a line that is not UTF-8 or not JSON gets a parse error, answered
//!   by its id when its leading bytes name one for sure (reader.rs, recover.rs).
//! - What goes out is serialized once, redacted, batched and flushed by one writer
//!   (writer.rs); the wire trace records both directions (trace.rs). Besides the SDK's
//!   frames, the writer takes lines the protocol layer serialized itself (lines.rs: a long
//!   replay, written without a JSON value per message).
//! - At the end of input the protocol layer sees the editor's side close; the transport ends
//!   once the protocol layer is done sending and what it sent is written.
//!
//! [`Wire`] is a `ConnectTo` component of the ACP SDK, so any connection can run over it; and
//! the protocol layer runs over any other such component as well (the SDK's own byte streams
//! or channels, a socket): nothing of the connection's lifecycle is here to copy.

use std::sync::Arc;

use agent_client_protocol::{Channel, ConnectTo, ConnectionDriver, Role};
use futures::channel::{mpsc, oneshot};
use tokio::io::{AsyncRead, AsyncWrite, BufReader};

mod frames;
mod lines;
mod reader;
mod recover;
mod trace;
mod writer;

pub(crate) use lines::{Lines, Outlet};
pub(crate) use trace::WireTrace;

/// How lines are framed.
pub(crate) struct Framing {
    /// The longest line read (`max_message_bytes`).
    pub(crate) max_line: usize,
    /// Where both directions are recorded, when asked (`--trace-wire`).
    pub(crate) trace: Option<WireTrace>,
}

/// Newline-delimited JSON-RPC over `input` and `output`.
pub(crate) struct Wire<I, O> {
    input: I,
    output: O,
    max_line: usize,
    trace: Option<Arc<WireTrace>>,
    /// The way in for lines already serialized, and the writer's end of it.
    lines: (Lines, lines::Chunks),
}

/// The wire over stdin and stdout: what an editor launches.
pub(crate) fn stdio(framing: Framing) -> Wire<tokio::io::Stdin, tokio::io::Stdout> {
    over(tokio::io::stdin(), tokio::io::stdout(), framing)
}

/// The wire over any pair of byte streams.
pub(crate) fn over<I, O>(input: I, output: O, framing: Framing) -> Wire<I, O>
where
    I: AsyncRead + Send + Unpin + 'static,
    O: AsyncWrite + Send + Unpin + 'static,
{
    Wire {
        input,
        output,
        max_line: framing.max_line,
        trace: framing.trace.map(Arc::new),
        lines: lines::channel(),
    }
}

impl<I, O> Wire<I, O>
where
    I: AsyncRead + Send + Unpin + 'static,
    O: AsyncWrite + Send + Unpin + 'static,
{
    /// The protocol layer's end of the wire, and the work that moves its frames: reading
    /// until the input ends, writing until the protocol layer is done (or asked to finish,
    /// and what it sent is written).
    fn into_channel_and_driver(self) -> (Channel, ConnectionDriver) {
        let (for_protocol, ours) = Channel::duplex();
        let (frames, tx) = ours.into_parts();
        let (answers_tx, answers_rx) = mpsc::unbounded();
        let (finish_tx, finish_rx) = oneshot::channel();
        let reading = reader::Reading {
            to_protocol: tx,
            answers: answers_tx,
            max_line: self.max_line,
            trace: self.trace.clone(),
        };
        let read = reader::read_all(BufReader::new(self.input), reading);
        let sources = writer::Sources {
            frames,
            own: answers_rx,
            lines: self.lines.1,
            finish: finish_rx,
        };
        let write = writer::write_all(self.output, sources, self.trace);
        let work = async move {
            tokio::pin!(read, write);
            // Reading may end first (the end of input) while answers are still being
            // written; the wire is done when writing is. A read still waiting on input the
            // editor keeps open is dropped then.
            let written = tokio::select! {
                written = &mut write => written,
                () = &mut read => write.await,
            };
            written.map_err(agent_client_protocol::Error::into_internal_error)
        };
        let driver = ConnectionDriver::with_finish(work, move || {
            let _ = finish_tx.send(());
        });
        (for_protocol, driver)
    }
}

impl<I, O> Outlet for Wire<I, O> {
    fn lines(&self) -> Option<Lines> {
        Some(self.lines.0.clone())
    }
}

impl<I, O, R: Role> ConnectTo<R> for Wire<I, O>
where
    I: AsyncRead + Send + Unpin + 'static,
    O: AsyncWrite + Send + Unpin + 'static,
{
    async fn connect_to(
        self,
        client: impl ConnectTo<R::Counterpart>,
    ) -> Result<(), agent_client_protocol::Error> {
        let (channel, mut driver) = self.into_channel_and_driver();
        let connection = Box::pin(ConnectTo::<R>::connect_to(channel, client));
        match futures::future::select(connection, &mut driver).await {
            futures::future::Either::Left((result, _)) => {
                result?;
                // The connection handed over everything it sent: write it, then end.
                let _ = driver.request_finish();
                driver.await
            }
            futures::future::Either::Right((result, _)) => result,
        }
    }

    fn into_channel_and_future(self) -> (Channel, Option<ConnectionDriver>) {
        let (channel, driver) = self.into_channel_and_driver();
        (channel, Some(driver))
    }
}
