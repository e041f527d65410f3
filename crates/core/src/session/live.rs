//! A session open in this process, as the manager holds it; how one ends (closed, deleted,
//! or the connection ending), and what closing one leaves on disk.

use std::time::Duration;

use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::actor::Command;
use super::{commands, status};
use crate::store::{self, Store};

/// How long an ending session waits for its running turn to end once cancelled (its
/// foreground command killed), and for its background commands to stop, at the same time.
pub(super) const ENDING: Duration = Duration::from_secs(10);

/// A session open in this process: its actor's inbox and task, and what the extension methods
/// read of it (settings, usage, MCP servers) without asking the actor.
pub(super) struct Live {
    pub(super) tx: mpsc::UnboundedSender<Command>,
    pub(super) status: status::StatusWatch,
    pub(super) commands: Vec<commands::SlashCommand>,
    /// The actor's task: it ends once the inbox is closed and its running turn has ended.
    pub(super) actor: JoinHandle<()>,
}

impl Live {
    /// Ends the session: at once, its MCP servers are stopped and its actor told to end (a
    /// running turn is cancelled, which kills its command). The future resolves once that turn
    /// has ended, the session's background commands are stopped (local ones killed with all
    /// they started, the editor's terminals killed and released) and its sandbox's private
    /// folder is removed: what `session/close` and `session/delete` wait for before they
    /// answer, and the connection before it ends. Each wait is bounded ([`ENDING`]).
    pub(super) fn stop(self) -> impl Future<Output = ()> + Send + 'static {
        let Live {
            tx, status, actor, ..
        } = self;
        status.mcp.shutdown();
        drop(tx);
        let background = status.background.clone();
        let sandbox = status.policy.sandbox.clone();
        async move {
            let turn = async {
                if tokio::time::timeout(ENDING, actor).await.is_err() {
                    tracing::warn!(
                        secs = ENDING.as_secs(),
                        "a closed session's turn did not end in time; going on without it"
                    );
                }
            };
            let jobs = async {
                if tokio::time::timeout(ENDING, background.stop_all())
                    .await
                    .is_err()
                {
                    tracing::warn!(
                        secs = ENDING.as_secs(),
                        "a closed session's background commands did not all stop in time"
                    );
                }
            };
            futures::join!(turn, jobs);
            // Its commands are stopped: nothing uses the folder any more.
            if let Some(sandbox) = sandbox {
                sandbox.end().await;
            }
        }
    }
}

/// Writes out what the session `id` recorded; then, when it never got a prompt, removes its
/// transcript: an editor that opens a session for every chat (CodeCompanion) would otherwise
/// leave one behind for every chat that was never used.
pub(super) async fn keep_if_used(store: &Store, id: &str, transcript: &store::Transcript) {
    transcript.flush().await;
    if store.prompted(id) {
        return;
    }
    match store.delete(id) {
        Ok(()) => tracing::debug!(session = %id, "closed without a prompt: not kept"),
        Err(e) => tracing::debug!(session = %id, "an unused session's transcript stays: {e}"),
    }
}
