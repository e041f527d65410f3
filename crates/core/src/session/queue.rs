//! What waits while a session's turn runs: prompts and rewinds, run one after another once
//! it ends, each with its own answer; and prompts folded into the running turn instead
//! (`queued_prompts = "steer"`), answered when it ends. Everything keeps the order it came
//! in. A cancel answers all of it `cancelled`.

use std::collections::VecDeque;
use std::sync::Arc;

use tokio::sync::oneshot;

use super::SessionError;
use super::ran::Ran;
use crate::output_schema::OutputSchema;
use crate::turn::{Back, Conflicts, Landed, Steering};
use crate::types::{Prompt, StopReason};

/// Work the actor runs one at a time.
pub(super) enum QueuedWork {
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
    /// When it came, among everything that waits.
    seq: u64,
    prompt: Prompt,
    landed: oneshot::Receiver<Landed>,
    reply: Reply,
}

/// The work waiting for the running turn, in the order it came.
#[derive(Default)]
pub(super) struct Queue {
    jobs: VecDeque<(u64, QueuedWork, Reply)>,
    riders: Vec<Rider>,
    /// The next arrival's place.
    next: u64,
}

impl Queue {
    fn seq(&mut self) -> u64 {
        self.next += 1;
        self.next
    }

    /// Whether no job waits.
    pub(super) fn is_empty(&self) -> bool {
        self.jobs.is_empty()
    }

    /// `job` runs after what already waits.
    pub(super) fn push(&mut self, job: QueuedWork, reply: Reply) {
        let seq = self.seq();
        self.jobs.push_back((seq, job, reply));
    }

    /// `prompt` was sent to the running turn's steering (`landed` says when it reached the
    /// model); it is answered when that turn ends.
    pub(super) fn ride(&mut self, prompt: Prompt, landed: oneshot::Receiver<Landed>, reply: Reply) {
        let seq = self.seq();
        self.riders.push(Rider {
            seq,
            prompt,
            landed,
            reply,
        });
    }

    /// The next job to run.
    pub(super) fn pop(&mut self) -> Option<(QueuedWork, Reply)> {
        self.jobs.pop_front().map(|(_, job, reply)| (job, reply))
    }

    /// The running turn ended with `result`: a prompt that steered it gets the same answer
    /// (`refusal` when the turn would not take it); one that never reached the model (it came
    /// as the turn ended) runs as a turn of its own, in the place it came in. Messages still
    /// waiting in `steering` are dropped (their senders hear it).
    pub(super) fn settle_riders(
        &mut self,
        steering: &Steering,
        result: &Result<Ran, SessionError>,
    ) {
        steering.clear();
        for mut rider in std::mem::take(&mut self.riders) {
            match rider.landed.try_recv() {
                Ok(Ok(())) => {
                    let answer = match result {
                        Ok(ran) => Ok(Ran::stopped(ran.stop)),
                        Err(SessionError::Model(e)) => Err(SessionError::Model(e.clone())),
                        Err(e) => Err(SessionError::Internal(e.to_string())),
                    };
                    let _ = rider.reply.send(answer);
                }
                Ok(Err(_)) => {
                    let _ = rider.reply.send(Ok(Ran::stopped(StopReason::Refusal)));
                }
                Err(_) => {
                    let job = QueuedWork::Prompt {
                        prompt: rider.prompt,
                        output: None,
                    };
                    let at = self.jobs.partition_point(|(seq, ..)| *seq < rider.seq);
                    self.jobs.insert(at, (rider.seq, job, rider.reply));
                }
            }
        }
    }

    /// Answers everything that waits `cancelled` (the user cancelled, or the session ends).
    pub(super) fn cancel_all(&mut self, steering: &Steering) {
        steering.clear();
        for rider in self.riders.drain(..) {
            let _ = rider.reply.send(Ok(Ran::stopped(StopReason::Cancelled)));
        }
        for (_, _, reply) in self.jobs.drain(..) {
            let _ = reply.send(Ok(Ran::stopped(StopReason::Cancelled)));
        }
    }
}
