//! The agent of one headless run: [`crate::serve`], as for an editor, on one end of an
//! in-memory pipe, with Ctrl-C (SIGINT) or SIGTERM as its shutdown (the running prompt is
//! cancelled, as a signal cancels it in the stdio agent, and the session ends as it does
//! there: its commands stopped, its sandbox folder removed). The run talks to it over the
//! pipe's other end.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tokio::io::{DuplexStream, ReadHalf, WriteHalf};
use tokio::task::JoinHandle;

use super::display::Display;
use crate::config::Config;
use crate::model::ModelClient;
use crate::transport::{self, Framing, Wire};

/// The run's end of the pipe.
pub(super) type EditorEnd = Wire<ReadHalf<DuplexStream>, WriteHalf<DuplexStream>>;

/// The agent serving one run.
pub(super) struct Agent {
    served: JoinHandle<anyhow::Result<()>>,
    interrupted: Arc<AtomicBool>,
}

/// Starts the agent for `config`; returns it and the run's end of the pipe.
pub(super) fn start(
    config: Config,
    client: Arc<dyn ModelClient>,
    display: &Arc<Display>,
) -> (Agent, EditorEnd) {
    let (agent_end, editor_end) = tokio::io::duplex(1 << 16);
    let (agent_in, agent_out) = tokio::io::split(agent_end);
    let (editor_in, editor_out) = tokio::io::split(editor_end);
    let interrupted = Arc::new(AtomicBool::new(false));
    let shutdown = {
        let (interrupted, display) = (interrupted.clone(), display.clone());
        async move {
            let signal = crate::platform::stop_requested().await;
            tracing::info!(signal, "stop requested");
            interrupted.store(true, Ordering::SeqCst);
            display.progress("interrupted, cancelling");
        }
    };
    let framing = |max_line| Framing {
        max_line,
        trace: None,
    };
    let max_line = config.max_message_bytes;
    let wire = transport::over(agent_in, agent_out, framing(max_line));
    let served = tokio::spawn(crate::serve(Arc::new(config), client, wire, shutdown));
    let agent = Agent {
        served,
        interrupted,
    };
    // The agent's answers are its own to bound; the run reads them whole.
    (
        agent,
        transport::over(editor_in, editor_out, framing(usize::MAX)),
    )
}

impl Agent {
    /// Waits for the agent to end (the run's end of the pipe is closed by now: it writes what
    /// the session recorded to disk and stops its MCP servers); says whether Ctrl-C stopped it.
    pub(super) async fn ended(self) -> bool {
        match self.served.await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => tracing::warn!("the agent ended with an error: {e:#}"),
            Err(e) => tracing::warn!("the agent's task failed: {e}"),
        }
        self.interrupted.load(Ordering::SeqCst)
    }
}
