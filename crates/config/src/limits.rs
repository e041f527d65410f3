//! Bounds on what peers and models may cost: model-server timeouts and response size, how
//! long an editor request may go unanswered, and the runaway-model guards (repeated tool-call
//! batches, per-tool budgets, an answer that repeats itself, the output limit of a local
//! server's models). Read from the `[timeouts]`, `[loops]` and `[tool_budgets]` tables of the
//! config file.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Deserialize;

use super::ConfigError;

/// How long tandem waits on its peers before it gives up with a clear error.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Timeouts {
    /// Opening a TCP/TLS connection to the model server.
    pub connect: Duration,
    /// From sending a model request to its first streamed chunk (prompt processing and
    /// queueing on the server; reasoning models that stream nothing while they think).
    pub first_byte: Duration,
    /// Longest gap between two streamed chunks once the answer has begun.
    pub idle: Duration,
    /// An editor's answer to `fs/*` and `terminal/*` requests (not to permission requests,
    /// which wait on a person, and not to `terminal/wait_for_exit`, bounded by the command's
    /// own timeout).
    pub editor: Duration,
    /// One whole answer, from its first streamed bytes to its last chunk: a server that keeps
    /// sending (a chunk every few seconds, forever) is stopped all the same.
    pub answer: Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Self {
            connect: Duration::from_secs(15),
            first_byte: Duration::from_secs(300),
            idle: Duration::from_secs(120),
            editor: Duration::from_secs(60),
            answer: Duration::from_secs(1800),
        }
    }
}

/// The default bound on one model response's bytes on the wire.
pub(crate) const DEFAULT_MAX_RESPONSE_BYTES: u64 = 64 * 1024 * 1024;

/// How long in-flight requests may run after stdin ends before prompts are cancelled.
pub(crate) const DEFAULT_EOF_GRACE: Duration = Duration::from_secs(300);
/// Longest line read from stdin unless configured otherwise.
pub(crate) const DEFAULT_MAX_MESSAGE_BYTES: u64 = 64 * 1024 * 1024;

/// Most tokens one answer of a local server's model may take when neither the model's entry
/// nor the file's `max_output_tokens` says: a small model left to itself can write until the
/// answer timeout (SmolLM2 on llama-server streamed for 300 s and more), and a few thousand
/// tokens hold any single answer or file a local model writes well. A smaller window lowers
/// it to a quarter of the window (`model::profile`).
pub const LOCAL_OUTPUT_TOKENS: u32 = 4096;

/// What tandem does about a model that repeats itself or overuses a tool, per prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoopGuard {
    /// The same batch of tool calls this many times in a row is not run again: the model
    /// gets "you already did this" results and a steering note.
    pub repeat_warn: u32,
    /// At this many repeats the next request goes without tools, so the model must answer.
    pub repeat_stop: u32,
    /// Most calls of a tool (by name) in one prompt; further calls are refused with a result
    /// saying so.
    pub tool_budgets: BTreeMap<String, u32>,
    /// Whether an answer (or its reasoning) that keeps repeating one piece of text is stopped
    /// (`loops.stop_repeated_text`, default true).
    pub stop_repeated_text: bool,
}

impl Default for LoopGuard {
    fn default() -> Self {
        Self {
            repeat_warn: 3,
            repeat_stop: 6,
            tool_budgets: BTreeMap::new(),
            stop_repeated_text: true,
        }
    }
}

/// The `[timeouts]` table, in seconds.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct FileTimeouts {
    pub(crate) connect_secs: Option<f64>,
    pub(crate) first_byte_secs: Option<f64>,
    pub(crate) idle_secs: Option<f64>,
    pub(crate) editor_secs: Option<f64>,
    pub(crate) answer_secs: Option<f64>,
}

/// The `[loops]` table.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct FileLoops {
    pub(crate) repeat_warn: Option<u32>,
    pub(crate) repeat_stop: Option<u32>,
    pub(crate) stop_repeated_text: Option<bool>,
}

fn seconds(name: &str, value: Option<f64>, default: Duration) -> Result<Duration, ConfigError> {
    match value {
        None => Ok(default),
        Some(s) if s.is_finite() && s > 0.0 && s < 1e9 => Ok(Duration::from_secs_f64(s)),
        Some(_) => Err(ConfigError::Invalid(format!(
            "timeouts.{name} must be a positive number of seconds"
        ))),
    }
}

impl FileTimeouts {
    pub(super) fn resolve(&self) -> Result<Timeouts, ConfigError> {
        let d = Timeouts::default();
        Ok(Timeouts {
            connect: seconds("connect_secs", self.connect_secs, d.connect)?,
            first_byte: seconds("first_byte_secs", self.first_byte_secs, d.first_byte)?,
            idle: seconds("idle_secs", self.idle_secs, d.idle)?,
            editor: seconds("editor_secs", self.editor_secs, d.editor)?,
            answer: seconds("answer_secs", self.answer_secs, d.answer)?,
        })
    }
}

impl FileLoops {
    pub(super) fn resolve(
        &self,
        tool_budgets: &BTreeMap<String, u32>,
    ) -> Result<LoopGuard, ConfigError> {
        let d = LoopGuard::default();
        let repeat_warn = self.repeat_warn.unwrap_or(d.repeat_warn);
        let repeat_stop = self.repeat_stop.unwrap_or(d.repeat_stop);
        if repeat_warn < 2 {
            return Err(ConfigError::Invalid(
                "loops.repeat_warn must be at least 2 (the first call is never a repeat)".into(),
            ));
        }
        if repeat_stop < repeat_warn {
            return Err(ConfigError::Invalid(
                "loops.repeat_stop must be at least loops.repeat_warn".into(),
            ));
        }
        Ok(LoopGuard {
            repeat_warn,
            repeat_stop,
            tool_budgets: tool_budgets.clone(),
            stop_repeated_text: self.stop_repeated_text.unwrap_or(d.stop_repeated_text),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_overrides() {
        let t = FileTimeouts {
            idle_secs: Some(0.5),
            ..FileTimeouts::default()
        }
        .resolve()
        .unwrap();
        assert_eq!(t.idle, Duration::from_millis(500));
        assert_eq!(t.first_byte, Timeouts::default().first_byte);
        let bad = FileTimeouts {
            editor_secs: Some(0.0),
            answer_secs: None,
            ..FileTimeouts::default()
        };
        assert!(
            bad.resolve()
                .unwrap_err()
                .to_string()
                .contains("editor_secs")
        );
    }

    #[test]
    fn loop_limits_must_be_ordered() {
        let budgets = BTreeMap::from([("run_command".to_string(), 5)]);
        let g = FileLoops::default().resolve(&budgets).unwrap();
        assert_eq!((g.repeat_warn, g.repeat_stop), (3, 6));
        assert_eq!(g.tool_budgets["run_command"], 5);
        let bad = FileLoops {
            repeat_warn: Some(4),
            repeat_stop: Some(3),
            stop_repeated_text: None,
        };
        assert!(bad.resolve(&budgets).is_err());
        let bad = FileLoops {
            repeat_warn: Some(1),
            repeat_stop: None,
            stop_repeated_text: None,
        };
        assert!(bad.resolve(&budgets).is_err());
    }
}
