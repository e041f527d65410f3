//! What a permission request offers the user and what the user answered: the words
//! permission writes and the editor seam carries back.

/// The user's answer to a permission request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PermissionAnswer {
    /// Run this call.
    AllowOnce,
    /// Run this and remember for the session.
    AllowAlways,
    /// Do not run this call.
    RejectOnce,
    /// Do not run this, and do not ask again for the session.
    RejectAlways,
    /// The prompt turn was cancelled while asking.
    Cancelled,
}

/// One answer a permission request offers, with the words shown for it (what an "always"
/// answer remembers is part of its label).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PermissionChoice {
    /// The answer it stands for.
    pub answer: PermissionAnswer,
    /// What the user reads.
    pub label: String,
}
