//! What the core tells the editor, without knowing how it is sent: the ACP layer turns each
//! [`TurnEvent`] into a `session/update` notification (acp/convert.rs).

use crate::permission::Mode;
use crate::session::options::OptionView;

/// Something the editor should see, as soon as it happens.
#[derive(Debug, Clone, PartialEq)]
pub enum TurnEvent {
    /// A piece of the model's answer.
    Text(String),
    /// A piece of the model's reasoning.
    Thought(String),
    /// Context in use after a model response, and the model's window.
    Usage {
        /// Tokens in the context (last request's prompt + completion).
        used: u64,
        /// The model's context window.
        size: u64,
    },
    /// The session's mode changed (sent as `current_mode_update`).
    ModeChanged(Mode),
    /// The session's config options changed (sent as `config_option_update`).
    OptionsChanged(Vec<OptionView>),
}

/// Where events go; one per connection, shared by its sessions.
pub trait EventSink: Send + Sync {
    /// Delivers one event for `session_id`, in order with the others.
    fn emit(&self, session_id: &str, event: TurnEvent);
}
