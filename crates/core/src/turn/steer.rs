//! Steering: messages the user sends while a turn runs. The session puts them in the
//! turn's [`Steering`]; the turn loop takes them at its next request boundary (after the
//! results of the calls that ran, never in the middle of a call) and before it would end, so
//! the model reads them in the same turn, after the checks a prompt gets (hooks, size). Each
//! message's sender hears when it landed or why it was refused; one that never landed (the
//! turn ended first) is dropped with its sender, which tells it so.

use std::collections::VecDeque;
use std::sync::Arc;

use parking_lot::Mutex;
use tokio::sync::oneshot;

use crate::types::Prompt;

/// What a message's sender hears: it landed, or why it was refused (a hook blocked it, or
/// it is larger than the model's window). A sender dropped unanswered: it never landed.
pub(crate) type Landed = Result<(), String>;

/// A message for the running turn, and whom to tell once it landed.
pub(crate) type Message = (Prompt, oneshot::Sender<Landed>);

/// The messages waiting for the running turn of one session.
#[derive(Debug, Clone, Default)]
pub(crate) struct Steering(Arc<Mutex<VecDeque<Message>>>);

impl Steering {
    /// Queues `prompt` for the running turn; the receiver resolves once the model's next
    /// request holds it, or fails when it never will.
    pub(crate) fn send(&self, prompt: Prompt) -> oneshot::Receiver<Landed> {
        let (landed, heard) = oneshot::channel();
        self.0.lock().push_back((prompt, landed));
        heard
    }

    /// Takes every waiting message, in order, with what to tell once each has landed.
    pub(crate) fn take(&self) -> Vec<Message> {
        self.0.lock().drain(..).collect()
    }

    /// Whether a message waits.
    pub(crate) fn waiting(&self) -> bool {
        !self.0.lock().is_empty()
    }

    /// Drops what still waits (the turn is over): each sender hears it never landed.
    pub(crate) fn clear(&self) {
        self.0.lock().clear();
    }
}
