//! What the manager knows of an open session without asking its actor: watch receivers of
//! the state the actor and its turns change, and what `_tandem/status` / `_tandem/usage`
//! report from them.

use std::path::PathBuf;
use std::sync::Arc;

use tokio::sync::watch;

use crate::config::{Config, Settings};
use crate::mcp::Hub;
use crate::permission::{Grants, Policy};
use crate::store::Transcript;
use crate::turn::Totals;

/// An open session's state, as its actor and turns publish it.
pub(super) struct StatusWatch {
    /// Working directory (canonical).
    pub(super) cwd: PathBuf,
    /// The workspace's other folders, as the editor sent them.
    pub(super) folders: Vec<PathBuf>,
    /// The settings the actor holds.
    pub(super) settings: watch::Receiver<Settings>,
    /// The last usage report: (tokens in use, estimate).
    pub(super) usage: watch::Receiver<Option<(u64, u64)>>,
    /// Token totals.
    pub(super) totals: watch::Receiver<Totals>,
    /// Remembered permission answers.
    pub(super) grants: watch::Receiver<Grants>,
    /// Permission rules and workspace.
    pub(super) policy: Arc<Policy>,
    /// MCP servers.
    pub(super) mcp: Arc<Hub>,
    /// Where the session is recorded (to flush before reading it back).
    pub(super) transcript: Transcript,
    /// What the server reported about itself, for the model's profile.
    pub(super) discovered: super::discovery::Discovering,
    /// The window the server was seen to cut prompts at.
    pub(super) window_cut: watch::Receiver<Option<u64>>,
    /// Its background commands.
    pub(super) background: Arc<crate::tools::background::Background>,
}

impl StatusWatch {
    /// What the extension methods show of the session `id` now.
    pub(super) fn report(&self, id: &str, config: &Config) -> LiveSession {
        let settings = self.settings.borrow().clone();
        // The same profile the turn reads, so the window shown here is the one in the
        // editor's usage updates.
        let profile = crate::model::profile::resolve(
            config,
            &settings.model,
            self.discovered.borrow().as_deref(),
            *self.window_cut.borrow(),
        );
        LiveSession {
            id: id.to_string(),
            cwd: self.cwd.clone(),
            context_window: profile.context_window,
            profile,
            context_used: self.usage.borrow().map(|(used, _)| used),
            totals: *self.totals.borrow(),
            mcp: self.mcp.states(),
            permissions: self.policy.snapshot(&self.grants.borrow()),
            unsaved: self.transcript.unsaved(),
            background: self.background.list(),
            settings,
        }
    }
}

/// What `_tandem/status` and `_tandem/usage` report about an open session.
pub struct LiveSession {
    /// Session id.
    pub id: String,
    /// Working directory (canonical).
    pub cwd: PathBuf,
    /// Current settings.
    pub settings: Settings,
    /// The current model's context window.
    pub context_window: u64,
    /// The current model's profile, as its turns read it.
    pub profile: crate::config::ModelSpec,
    /// Tokens in use after the last model response, when the server reported them.
    pub context_used: Option<u64>,
    /// Token totals.
    pub totals: Totals,
    /// MCP servers: name, state, and why it failed.
    pub mcp: Vec<(String, &'static str, Option<String>)>,
    /// Rules in force and remembered answers.
    pub permissions: crate::permission::Snapshot,
    /// What the disk has not taken of its transcript yet.
    pub unsaved: Option<crate::store::Unsaved>,
    /// Its background commands.
    pub background: Vec<crate::tools::background::Listed>,
}
