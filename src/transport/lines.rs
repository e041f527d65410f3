//! Lines the protocol layer wrote itself: a long run of notifications (a `session/load`'s
//! replay) serialized straight from typed messages into text, handed to the writer in
//! chunks, instead of one SDK frame each (every frame is built as a JSON value first, moved
//! across three channels and freed on another thread: most of a long load's time).
//!
//! The writer takes these before the protocol layer's frames (writer.rs), so a frame sent
//! after a chunk was handed over (a load's response) is written after it. A frame sent
//! before may be written after it: the protocol layer only sends this way what no earlier
//! frame has to precede (the updates of a session that is not open yet).

use agent_client_protocol::Channel;
use futures::SinkExt;
use futures::channel::mpsc;

/// How many chunks may wait for the writer; a producer faster than the editor reads waits,
/// so a long replay is never all in memory at once.
const WAITING: usize = 2;

/// Where whole, already serialized lines go to be written: cheap to clone.
#[derive(Clone, Debug)]
pub(crate) struct Lines {
    tx: mpsc::Sender<String>,
}

/// The writer's end of [`Lines`].
pub(super) type Chunks = mpsc::Receiver<String>;

/// A new way in for lines, and the writer's end of it.
pub(super) fn channel() -> (Lines, Chunks) {
    let (tx, rx) = mpsc::channel(WAITING);
    (Lines { tx }, rx)
}

impl Lines {
    /// Hands `chunk` (one or more JSON-RPC messages, each a line ending in `\n`) to the
    /// writer, waiting while it is behind. False once the writer is gone (the output closed).
    pub(crate) async fn send(&self, chunk: String) -> bool {
        debug_assert!(chunk.is_empty() || chunk.ends_with('\n'));
        self.tx.clone().send(chunk).await.is_ok()
    }
}

/// A transport, and whether the protocol layer may hand it lines it wrote itself.
pub(crate) trait Outlet {
    /// The way in for already serialized lines, if this transport writes text it is given
    /// (tandem's own [`Wire`](super::Wire)); `None` for one that carries only frames.
    fn lines(&self) -> Option<Lines> {
        None
    }
}

/// The SDK's own byte streams carry frames only.
impl<O, I> Outlet for agent_client_protocol::ByteStreams<O, I> {}

/// An in-memory channel carries frames only.
impl Outlet for Channel {}
