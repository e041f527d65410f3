//! How a prompt (or a rewind) ended, as the session answers it, and the job that runs it.

use crate::turn::{RewindReport, Totals};
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
    /// What the turn spent: tokens, requests and cost.
    pub spent: Totals,
}

impl Ran {
    /// A prompt that ended with `stop` and nothing more to tell.
    pub(crate) fn stopped(stop: StopReason) -> Self {
        Ran {
            stop,
            output: None,
            structured: None,
            rewound: None,
            spent: Totals::default(),
        }
    }

    /// How a turn that ended with a stop reason is answered: with what it printed, its
    /// structured answer or rewind report, and what it spent.
    pub(crate) fn of(
        output: Option<String>,
        structured: Option<Result<serde_json::Value, String>>,
        rewound: Option<RewindReport>,
        spent: Totals,
    ) -> impl FnOnce(StopReason) -> Ran {
        move |stop| Ran {
            stop,
            output,
            structured,
            rewound,
            spent,
        }
    }
}

/// A job a session is running: its task, its cancel, who waits for its answer.
pub(super) struct Running {
    pub(super) task: tokio::task::JoinHandle<crate::turn::TurnOutcome>,
    pub(super) cancel: tokio_util::sync::CancellationToken,
    pub(super) reply: tokio::sync::oneshot::Sender<Result<Ran, super::SessionError>>,
    /// Whether it is a model turn, which messages can steer.
    pub(super) steerable: bool,
    /// The session's totals when it started: what the turn spent is measured from them.
    pub(super) before: Totals,
}

impl Running {
    /// A job that just started, with the session's totals `before` it.
    pub(super) fn new(
        task: tokio::task::JoinHandle<crate::turn::TurnOutcome>,
        cancel: tokio_util::sync::CancellationToken,
        reply: tokio::sync::oneshot::Sender<Result<Ran, super::SessionError>>,
        steerable: bool,
        before: Totals,
    ) -> Self {
        Self {
            task,
            cancel,
            reply,
            steerable,
            before,
        }
    }
}
