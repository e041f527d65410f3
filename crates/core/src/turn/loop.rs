//! The turn loop: ask the model, stream what it says, run the tools it calls, answer every
//! call, and ask again until the model stops. Cancellation is checked at every await that
//! can take long.
//!
//! The conversation is a [`History`]: the turn pushes what happens and the history records
//! it, so every tool call gets exactly one result whatever way the turn ends.

use std::sync::Arc;

use futures::future::BoxFuture;
use tokio_util::sync::CancellationToken;

use super::calls::{self, Caller};
use super::compact::{self, Compacted};
use super::context::{Step, TurnContext};
use super::estimate::{self, fit_to_model, projected};
use super::outcome::{CANCELLED, REQUEST_FAILED, TurnOutcome};
use super::prompt::Admitted;
use super::steer::Steering;
use super::stream::{self, End, settle_early, stream_response};
use super::{frame, guard, held_servers, subagent};
use crate::model::{ErrorClass, Message, ModelError, ModelRequest};
use crate::output_schema::OutputSchema;
use crate::store::History;
use crate::tools::Subagents;
use crate::types::{Prompt, StopReason, UserPart};
use crate::types::{Severity, TurnEvent};

/// Runs model requests and tool calls over `history` (which ends with the new prompt) until
/// the model stops, the user cancels, or the request cap is reached.
pub(crate) async fn run_turn(
    ctx: TurnContext,
    history: History,
    cancel: CancellationToken,
) -> TurnOutcome {
    let mut turn = Turn::new(ctx, history, cancel);
    let step = turn.ctx.step();
    if let Some(note) = estimate::images_left_out(turn.history.messages(), &step.spec) {
        turn.ctx.emit(TurnEvent::Notice {
            severity: Severity::Warning,
            text: note.clone(),
        });
        turn.history.push_note(note);
    }
    // The project's servers the user has not trusted yet were held back when the session
    // opened: asked about now, before anything is sent.
    if held_servers::ask_held(&turn.ctx, &turn.cancel)
        .await
        .is_err()
    {
        return turn.end(Ok(StopReason::Cancelled));
    }
    // MCP servers started with the session; their tools belong in the first request. Each is
    // bounded by its connect timeout. So do the session_start hooks, whose context goes in
    // the system prompt.
    tokio::select! {
        _ = futures::future::join(turn.ctx.services.mcp.settled(), turn.ctx.services.extras.started()) => {}
        () = turn.cancel.cancelled() => return turn.end(Ok(StopReason::Cancelled)),
    }
    let max_requests = turn.ctx.facts.config.max_turn_requests;
    while turn.requests < max_requests {
        if let Some(ended) = turn.step().await {
            let structured = ended.structured;
            let mut outcome = turn.end(ended.result);
            outcome.structured = structured;
            return outcome;
        }
    }
    tracing::info!(session = %turn.ctx.facts.session_id, max = max_requests, "turn hit its model request cap");
    turn.end(Ok(StopReason::MaxTurnRequests))
}

/// How a turn ended: its result and, with an output schema, the checked answer.
struct Ended {
    result: Result<StopReason, ModelError>,
    structured: Option<Result<serde_json::Value, String>>,
}

/// A response once recorded: its calls as the model made them and as the editor knows them,
/// those shown while they streamed, and how it ended.
struct Recorded {
    calls: Vec<crate::model::ToolCall>,
    shown_ids: Vec<String>,
    early: Vec<String>,
    end: End,
    /// Whether the server started answering.
    opened: bool,
    /// Whether any call was made or shown while it streamed (even one cut off).
    calls_started: bool,
}

impl Recorded {
    /// Whether the response failed with `e` after the server started answering, for a
    /// reason that passes, and before any call started (a call shown or made may have been
    /// half-written: asking again could run it twice).
    fn broke_off_before_calls(&self, e: &ModelError) -> bool {
        self.opened && e.is_transient() && self.calls.is_empty() && !self.calls_started
    }
}

/// [`run_turn`] boxed: what a subagent's runner calls to run its turn.
fn run_boxed(
    ctx: TurnContext,
    history: History,
    cancel: CancellationToken,
) -> BoxFuture<'static, TurnOutcome> {
    Box::pin(run_turn(ctx, history, cancel))
}

/// The turn ends with `result`.
fn stop(result: Result<StopReason, ModelError>) -> Option<Ended> {
    Some(Ended {
        result,
        structured: None,
    })
}

/// A turn in progress.
struct Turn {
    ctx: TurnContext,
    history: History,
    cancel: CancellationToken,
    /// Model requests made so far.
    requests: u32,
    /// The server said the conversation did not fit, and it was compacted once for that.
    retried_context: bool,
    /// Whether the images were left out after the server refused a request holding them.
    retried_images: bool,
    /// An answer that did not match the output schema was sent back once.
    repaired: bool,
    /// Answers that broke off mid-stream and were asked for again, in a row.
    stream_retries: u32,
    guard: guard::Guard,
    /// What runs the subagents of `task` calls (only in the session's own turns).
    subagents: Option<Arc<dyn Subagents>>,
}

impl Turn {
    fn new(ctx: TurnContext, history: History, cancel: CancellationToken) -> Self {
        let guard = guard::Guard::new(ctx.facts.config.loops.clone());
        let subagents = ctx
            .role
            .starts_subagents()
            .then(|| Arc::new(subagent::Runner::new(ctx.clone(), run_boxed)) as Arc<dyn Subagents>);
        Self {
            subagents,
            ctx,
            history,
            cancel,
            requests: 0,
            retried_context: false,
            retried_images: false,
            repaired: false,
            stream_retries: 0,
            guard,
        }
    }

    /// The outcome of a turn that ended with `result`.
    fn end(self, result: Result<StopReason, ModelError>) -> TurnOutcome {
        TurnOutcome::ended(self.history, result)
    }

    /// One model request and what follows from it; `Some` when the turn is over.
    async fn step(&mut self) -> Option<Ended> {
        // An MCP server that went away or came back is told to the user once.
        for notice in self.ctx.services.mcp.take_notices() {
            self.ctx.emit(TurnEvent::Notice {
                severity: Severity::Warning,
                text: notice,
            });
        }
        // What the user said meanwhile goes in after the last calls' results.
        self.take_steering().await;
        // The settings and the model's profile, once for this request and its calls.
        let step = self.ctx.step();
        let request = match self.request(&step).await {
            Ok(request) => request,
            Err(ended) => return ended,
        };
        self.requests += 1;
        let ids = self.history.call_ids();
        let response = stream_response(&self.ctx, &step, request, ids, &self.cancel).await;
        let said = !response.text.is_empty();
        let repeated = response.repeated;
        let recorded = self.record(response);
        let finish = match recorded.end {
            End::Cancelled => {
                self.history.close_unanswered(CANCELLED);
                return stop(Ok(StopReason::Cancelled));
            }
            End::Failed(e) if recorded.broke_off_before_calls(&e) => {
                return self.broke_off(e, &step, said).await;
            }
            End::Failed(e) => return self.failed(e, &step, recorded.calls.is_empty()).await,
            End::Finished(finish) => finish,
        };
        self.stream_retries = 0;
        if let Some(piece) = repeated {
            let told = super::repeats::told(piece);
            tracing::info!(session = %self.ctx.facts.session_id, piece, "{told}");
            self.ctx.emit(TurnEvent::Notice {
                severity: Severity::Warning,
                text: told.clone(),
            });
            self.history.push_note(told);
        }
        if recorded.calls.is_empty() {
            return self.answered(StopReason::after(finish.as_ref())).await;
        }
        let refusals = self.guard.apply(&self.ctx, &recorded.calls);
        // The calls are on disk before any of them runs: a crash mid-call keeps them.
        self.history.transcript().flush().await;
        let issued = calls::Issued::new(recorded.calls, recorded.shown_ids, &recorded.early);
        let caller = Caller {
            ctx: &self.ctx,
            step: &step,
            subagents: self.subagents.clone(),
        };
        let cancelled =
            calls::run_all(&caller, &mut self.history, issued, refusals, &self.cancel).await;
        if cancelled {
            return stop(Ok(StopReason::Cancelled));
        }
        None
    }

    /// The next request of `step`: the fixed system prompt and tools, the conversation as the
    /// model takes it, compacted first when it nears the window. `Err` when the step ends
    /// before a request is made (`None`: a compaction happened, ask again).
    async fn request(&mut self, step: &Step) -> Result<ModelRequest, Option<Ended>> {
        let spec = &step.spec;
        let (system, tools) = frame::prepare(&self.ctx, step, &mut self.history);
        let mut messages = Vec::with_capacity(self.history.messages().len() + 1);
        messages.push(Arc::new(Message::System(system)));
        let conversation = self.history.messages().iter().cloned();
        messages.extend(conversation.map(|m| fit_to_model(m, spec)));
        estimate::thin_images(&mut messages);
        let threshold = self.ctx.facts.config.compact_threshold * spec.context_window as f64;
        if step.settings.auto_compact && projected(&self.ctx, &messages) as f64 > threshold {
            match self.compact(step).await {
                Compacted::Done { .. } => return Err(None),
                Compacted::Cancelled => return Err(stop(Ok(StopReason::Cancelled))),
                // Go on with the full conversation; the server will say if it does not fit.
                Compacted::Nothing | Compacted::Failed(_) => {}
            }
        }
        Ok(ModelRequest {
            model: spec.id.clone(),
            messages,
            reasoning_effort: step.settings.effort_for_request(&self.ctx.facts.config),
            tools: if self.guard.tools_off() {
                Vec::new()
            } else {
                tools
            },
            max_tokens: spec.max_output_tokens,
            response_format: self.schema().map(|o| o.schema().clone()),
            cache_key: Some(self.ctx.facts.session_id.clone()),
        })
    }

    /// The request failed with `e` (`no_calls`: before the model called anything): a window
    /// the conversation did not fit is compacted and asked again once, images a server refused
    /// are left out and asked again once; anything else ends the turn with the error.
    async fn failed(&mut self, e: ModelError, step: &Step, no_calls: bool) -> Option<Ended> {
        if e.class == ErrorClass::ContextLength
            && !self.retried_context
            && no_calls
            && step.settings.auto_compact
        {
            // The server says it does not fit: compact once and try again.
            self.retried_context = true;
            return match self.compact(step).await {
                Compacted::Done { .. } => None,
                Compacted::Cancelled => stop(Ok(StopReason::Cancelled)),
                Compacted::Nothing | Compacted::Failed(_) => stop(Err(e)),
            };
        }
        if e.class == ErrorClass::BadRequest
            && !self.retried_images
            && no_calls
            && self.history.holds_images()
        {
            self.leave_out_refused_images(&e);
            return None;
        }
        self.history.close_unanswered(REQUEST_FAILED);
        stop(Err(e))
    }

    /// The answer broke off mid-stream with `e` (the connection dropped, the server was
    /// overloaded mid-answer) before any call started: asked for again after a backoff, up to
    /// `retry.stream_retries` times in a row, as codex does. What the editor was shown stays
    /// shown and is not streamed twice: when the answer had said anything (`said`), it stays
    /// in the conversation and the model is told to go on from where it broke off. The user
    /// sees why and how many tries are left.
    async fn broke_off(&mut self, e: ModelError, step: &Step, said: bool) -> Option<Ended> {
        let policy = self.ctx.facts.config.retry;
        let max_requests = self.ctx.facts.config.max_turn_requests;
        if self.stream_retries >= policy.stream_retries || self.requests >= max_requests {
            return self.failed(e, step, true).await;
        }
        self.stream_retries += 1;
        let backoff = policy
            .initial_delay
            .saturating_mul(2u32.saturating_pow(self.stream_retries - 1));
        let delay = e.retry_after.unwrap_or(backoff).min(policy.max_total);
        let told = format!(
            "The model server broke off the answer ({}); tandem asks again (try {} of {}).",
            e.message, self.stream_retries, policy.stream_retries
        );
        tracing::info!(session = %self.ctx.facts.session_id, ?delay, "{told}");
        self.ctx.emit(TurnEvent::Notice {
            severity: Severity::Warning,
            text: told.clone(),
        });
        self.history.push_note(told);
        tokio::select! {
            biased;
            () = self.cancel.cancelled() => return stop(Ok(StopReason::Cancelled)),
            () = tokio::time::sleep(delay) => {}
        }
        if said {
            // What the user said meanwhile first: the note joins their message, so the model
            // reads one user message, not two in a row.
            self.take_steering().await;
            self.history
                .push_context(crate::conversation::GO_ON.to_string());
        }
        None
    }

    /// The server refused a request that held images (`e`): an image it cannot take would
    /// fail every later request too, so the images are left out for good, the user is told,
    /// and the request is made again (once a turn).
    fn leave_out_refused_images(&mut self, e: &ModelError) {
        self.retried_images = true;
        let told = format!(
            "The model server refused the request with its images ({}); tandem left the images out of the conversation and asked again.",
            e.message
        );
        self.ctx.emit(TurnEvent::Notice {
            severity: Severity::Warning,
            text: told.clone(),
        });
        self.history.push_note(told);
        self.history
            .leave_out_images("the model server refused a request that held images");
    }

    /// Records a response in the history (what it said, its calls, a cut the server made,
    /// the ids of calls shown early and cut off) and says how it ended.
    fn record(&mut self, response: stream::Response) -> Recorded {
        let calls = response.calls;
        let (mut text, mut reasoning) = (response.text, response.reasoning);
        if matches!(&response.end, End::Failed(e) if e.class == ErrorClass::ResponseTooLarge) {
            // A runaway answer: the editor saw it stream; the history keeps only its end, so
            // the transcript stays small and the model is never sent the rest again.
            text = estimate::runaway_tail(&text);
            reasoning = estimate::runaway_tail(&reasoning);
        }
        let shown_ids = self.history.push_assistant(Message::Assistant {
            text,
            reasoning,
            tool_calls: calls.clone(),
            carried: response.carried.map(Box::new),
        });
        if let Some(note) = response.cut {
            self.ctx.emit(TurnEvent::Notice {
                severity: Severity::Warning,
                text: note.clone(),
            });
            self.history.push_note(note);
        }
        let (early, cut_off) = settle_early(&self.ctx, response.early, &shown_ids, &response.end);
        let calls_started = !early.is_empty() || !cut_off.is_empty() || response.text_call_held;
        self.history.cut_off(cut_off);
        Recorded {
            calls,
            shown_ids,
            early,
            end: response.end,
            opened: response.opened,
            calls_started,
        }
    }

    /// The model answered without calling tools: the turn ends, unless the answer must follow
    /// an output schema, does not, and may be asked for once more.
    async fn answered(&mut self, reason: StopReason) -> Option<Ended> {
        if reason == StopReason::EndTurn
            && self.ctx.steering().is_some_and(Steering::waiting)
            && self.take_steering().await
        {
            // The user said more while the model answered: it hears it before the turn ends.
            return None;
        }
        let Some(output) = self
            .ctx
            .output
            .clone()
            .filter(|_| reason == StopReason::EndTurn)
        else {
            return stop(Ok(reason));
        };
        let checked = output.check(&crate::conversation::last_answer(self.history.messages()));
        if let Err(error) = &checked
            && !self.repaired
            && self.requests < self.ctx.facts.config.max_turn_requests
        {
            // One more request, told what was wrong.
            self.repaired = true;
            tracing::info!(session = %self.ctx.facts.session_id, "the answer did not match the output schema; asking once more: {error}");
            let note = UserPart::Text(OutputSchema::repair_prompt(error));
            self.history.push_user(vec![note]);
            return None;
        }
        Some(Ended {
            result: Ok(reason),
            structured: Some(checked),
        })
    }

    /// Puts the messages the user sent the running turn into the conversation, each shown
    /// to the editor where it lands, and tells each sender it landed (or why not); whether
    /// any landed.
    async fn take_steering(&mut self) -> bool {
        let Some(steering) = self.ctx.steering() else {
            return false;
        };
        let mut any = false;
        for (Prompt { parts, sent }, landed) in steering.take() {
            // Checked as a prompt is: hooks may block it, and one the model can never read
            // stays out.
            let said = match super::prompt::admit(&self.ctx, parts, &self.cancel).await {
                Admitted::Parts(parts) => parts,
                Admitted::Blocked(reason) => {
                    let _ = landed.send(Err(format!(
                        "a user_prompt_submit hook blocked it: {reason}"
                    )));
                    continue;
                }
                Admitted::TooBig(e) => {
                    let _ = landed.send(Err(e.message));
                    continue;
                }
                // Dropped: its sender hears it was not sent.
                Admitted::Cancelled => continue,
            };
            self.ctx.emit(TurnEvent::UserMessage(sent.clone()));
            self.history.push_steer(said, sent);
            let _ = landed.send(Ok(()));
            any = true;
        }
        any
    }

    /// The schema the server should hold the answer to, when it is asked to.
    fn schema(&self) -> Option<&OutputSchema> {
        self.ctx
            .output
            .as_deref()
            .filter(|_| self.ctx.facts.config.structured_output)
    }

    /// Summarizes the older conversation and, when that worked, puts the summary in its place.
    async fn compact(&mut self, step: &Step) -> Compacted {
        compact::compact_history(&self.ctx, &mut self.history, &step.spec, &self.cancel).await
    }
}

#[cfg(test)]
#[path = "loop_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "cancel_tests.rs"]
mod cancel_tests;
