//! What a session is set to (mode, model, reasoning effort, automatic compaction): the configuration gives the
//! starting values; `session/set_mode` and `session/set_config_option` change them.

use super::Config;
use crate::types::Mode;

/// What a session is set to; read at each model request.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    /// The permission mode.
    pub mode: Mode,
    /// The model id.
    pub model: String,
    /// The chosen reasoning level; sent only to models that take it.
    pub reasoning_effort: String,
    /// Whether the conversation is compacted on its own when it nears the model's window
    /// (`/compact` works either way).
    pub auto_compact: bool,
}

impl Settings {
    /// The settings a new session starts with.
    pub fn initial(config: &Config) -> Self {
        Self {
            mode: config.default_mode,
            model: config.default_model.clone(),
            reasoning_effort: "medium".to_string(),
            auto_compact: config.auto_compact,
        }
    }

    /// `reasoning_effort` to send, if the current model takes it: as the config says of a
    /// model it lists, else as the table of model families says of its id (a model picked
    /// from the server's list).
    pub fn effort_for_request(&self, config: &Config) -> Option<String> {
        let takes = config.model(&self.model).map_or_else(
            || super::presets::known_reasoning_effort(&self.model),
            |m| m.reasoning_effort,
        );
        takes.then(|| self.reasoning_effort.clone())
    }
}
