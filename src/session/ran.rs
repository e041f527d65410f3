//! How a prompt (or a rewind) ended, as the session answers it.

use crate::turn::RewindReport;
use crate::types::StopReason;

/// How a prompt ended.
#[derive(Debug)]
pub struct Ran {
    /// Why it stopped.
    pub stop: StopReason,
    /// What a command action printed (only for those).
    pub output: Option<String>,
    /// With an output schema: the validated answer, or why it did not validate.
    pub structured: Option<Result<serde_json::Value, String>>,
    /// For a rewind or its listing: what it did.
    pub rewound: Option<RewindReport>,
}

impl Ran {
    /// A prompt that ended with `stop` and nothing more to tell.
    pub fn stopped(stop: StopReason) -> Self {
        Ran {
            stop,
            output: None,
            structured: None,
            rewound: None,
        }
    }
}
