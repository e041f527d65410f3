//! What waits while a session's turn runs: prompts and rewinds, run one after another once
//! it ends, each with its own answer; and prompts folded into the running turn instead
//! (`queued_prompts = "steer"`), answered when it ends. A cancel answers all of them
//! `cancelled`.

use std::collections::VecDeque;
use std::sync::Arc;

use tokio::sync::oneshot;

use super::SessionError;
use super::ran::Ran;
use crate::output_schema::OutputSchema;
use crate::turn::{Back, Conflicts, Steering};
use crate::types::{Prompt, StopReason};

/// Work the actor runs one at a time.
pub(super) enum Job {
    /// A prompt (or a slash command), with the schema its answer must follow.
    Prompt {
        prompt: Prompt,
        output: Option<Arc<OutputSchema>>,
    },
    /// `_tandem/session/rewind`.
    Rewind { back: Back, conflicts: Conflicts },
}

type Reply = oneshot::Sender<Result<Ran, SessionError>>;

/// A prompt that steers the running turn, answered when that turn ends.
struct Rider {
    prompt: Prompt,
    landed: oneshot::Receiver<()>,
    reply: Reply,
}

/// The work waiting for the running turn, in the order it came.
#[derive(Default)]
pub(super) struct Queue {
    jobs: VecDeque<(Job, Reply)>,
    riders: Vec<Rider>,
}

impl Queue {
    /// `job` runs after what already waits.
    pub(super) fn push(&mut self, job: Job, reply: Reply) {
        self.jobs.push_back((job, reply));
    }

    /// `prompt` was sent to the running turn's steering (`landed` says when it reached the
    /// model); it is answered when that turn ends.
    pub(super) fn ride(&mut self, prompt: Prompt, landed: oneshot::Receiver<()>, reply: Reply) {
        self.riders.push(Rider {
            prompt,
            landed,
            reply,
        });
    }

    /// The next job to run.
    pub(super) fn pop(&mut self) -> Option<(Job, Reply)> {
        self.jobs.pop_front()
    }

    /// The running turn ended with `result`: a prompt that steered it gets the same answer;
    /// one that never reached the model (it came as the turn ended) runs next, ahead of the
    /// rest, as a turn of its own. Messages still waiting in `steering` are dropped (their
    /// senders hear it).
    pub(super) fn settle_riders(
        &mut self,
        steering: &Steering,
        result: &Result<Ran, SessionError>,
    ) {
        steering.clear();
        let riders = std::mem::take(&mut self.riders);
        for mut rider in riders.into_iter().rev() {
            if rider.landed.try_recv().is_ok() {
                let answer = match result {
                    Ok(ran) => Ok(Ran::stopped(ran.stop)),
                    Err(SessionError::Model(e)) => Err(SessionError::Model(e.clone())),
                    Err(e) => Err(SessionError::Internal(e.to_string())),
                };
                let _ = rider.reply.send(answer);
            } else {
                let job = Job::Prompt {
                    prompt: rider.prompt,
                    output: None,
                };
                self.jobs.push_front((job, rider.reply));
            }
        }
    }

    /// Answers everything that waits `cancelled` (the user cancelled, or the session ends).
    pub(super) fn cancel_all(&mut self, steering: &Steering) {
        steering.clear();
        for rider in self.riders.drain(..) {
            let _ = rider.reply.send(Ok(Ran::stopped(StopReason::Cancelled)));
        }
        for (_, reply) in self.jobs.drain(..) {
            let _ = reply.send(Ok(Ran::stopped(StopReason::Cancelled)));
        }
    }
}
