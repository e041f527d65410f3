//! What the extension methods report about an open session.

use std::path::PathBuf;

use crate::config::Settings;

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
    /// Tokens in use after the last model response, when the server reported them.
    pub context_used: Option<u64>,
    /// Token totals.
    pub totals: crate::turn::Totals,
    /// MCP servers: name, state, and why it failed.
    pub mcp: Vec<(String, &'static str, Option<String>)>,
    /// Rules in force and remembered answers.
    pub permissions: crate::permission::Snapshot,
}
