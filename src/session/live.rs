//! A session open in this process, as the manager holds it, and what closing one leaves on
//! disk.

use tokio::sync::mpsc;

use super::actor::Command;
use super::{commands, status};
use crate::store::{self, Store};

/// A session open in this process: its actor's inbox, and what the extension methods read
/// of it (settings, usage, MCP servers) without asking the actor.
pub(super) struct Live {
    pub(super) tx: mpsc::UnboundedSender<Command>,
    pub(super) status: status::Watch,
    pub(super) commands: Vec<commands::SlashCommand>,
}

impl Live {
    /// Ends the session here and now: its MCP servers are stopped before the caller answers,
    /// rather than whenever the actor next runs (it cancels any running turn as it ends).
    pub(super) fn stop(self) {
        self.status.mcp.shutdown();
        let background = self.status.background.clone();
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => drop(runtime.spawn(async move { background.stop_all().await })),
            Err(_) => tracing::debug!("no runtime to stop background commands on"),
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
