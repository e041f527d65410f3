//! One model request, streamed: the answer and reasoning go to the editor as they arrive,
//! tool calls are collected, and the usage the server reports (or an estimate) is counted.
//! With tools offered, the answer is watched for calls written as text
//! ([`text_calls::Watch`]) until the server returns a call in its own field: from then on
//! that model's answers in the session stream unwatched.

use futures::StreamExt;
use tokio_util::sync::CancellationToken;

use super::coalesce;
use super::context::{Step, TurnContext};
use super::estimate::{estimate_text, estimate_tokens};
use super::repeats::Repeats;
use crate::config::ModelSpec;
use crate::model::quirks::text_calls;
use crate::model::{Carried, ModelError, ModelEvent, ModelRequest, ToolCall};
use crate::secrets::StreamRedactor;
use crate::store::CallIds;
use crate::types::{FinishReason, ToolCallView, ToolStatus, TurnEvent};

/// How one model response ended.
pub(super) enum End {
    /// The server finished it (with its `finish_reason`, when it sent one).
    Finished(Option<FinishReason>),
    /// The request or the stream failed.
    Failed(ModelError),
    /// The user cancelled.
    Cancelled,
}

/// One streamed model response.
pub(super) struct Response {
    /// The visible answer.
    pub(super) text: String,
    /// The reasoning shown to the user.
    pub(super) reasoning: String,
    /// The calls, whole.
    pub(super) calls: Vec<ToolCall>,
    /// What the server wants back with this response.
    pub(super) carried: Option<Carried>,
    /// The editor's ids of the calls shown while the model was still writing them.
    pub(super) early: Vec<String>,
    /// How it ended.
    pub(super) end: End,
    /// What to tell the user when the server was first seen to cut the prompt.
    pub(super) cut: Option<String>,
    /// Whether the server started answering (a failure after that broke an answer off; one
    /// before it was the request's, already retried by `model::http`).
    pub(super) opened: bool,
    /// Whether the answer broke off while text that may be a call written as text was held
    /// back from the editor: a call may have been half-written.
    pub(super) text_call_held: bool,
    /// The length of the piece the answer (or its reasoning) kept repeating, when it was
    /// stopped for that ([`super::repeats`]).
    pub(super) repeated: Option<usize>,
}

/// Sends one request and streams the answer to the editor as it arrives. `ids` gives out
/// the editor's ids as the history will when the response is pushed, so a call shown while
/// it streams keeps its id.
pub(super) async fn stream_response(
    ctx: &TurnContext,
    step: &Step,
    request: ModelRequest,
    ids: CallIds,
    cancel: &CancellationToken,
) -> Response {
    let estimate_in = estimate_tokens(&request.messages);
    // Whatever came before (a cancelled answer, a note), this answer is a message of its own.
    ctx.emit(TurnEvent::NewMessage);
    // With tools offered, a call the server left in the text is held back from the editor,
    // unless its server was seen to read this model's calls itself.
    let offered: Vec<String> = request.tools.iter().map(|t| t.name.clone()).collect();
    let watch = (!offered.is_empty() && !ctx.meters.native_calls.lock().contains(&request.model))
        .then(|| text_calls::Watch::new(offered));
    let mut shown = Showing::new(ids, watch, request.model.clone());
    let mut repeats = ctx
        .facts
        .config
        .loops
        .stop_repeated_text
        .then(<[Repeats; 2]>::default);
    let mut read = Read::default();
    let opened = tokio::select! {
        biased;
        () = cancel.cancelled() => return read.response,
        opened = ctx.services.model.open(request) => opened,
    };
    let mut stream = match opened {
        Ok(stream) => {
            read.response.opened = true;
            stream
        }
        Err(e) => {
            read.response.end = End::Failed(e);
            return read.response;
        }
    };
    // An event read while merging pieces, handled before reading on.
    let mut held: coalesce::Next = None;
    loop {
        let next = match held.take() {
            Some(next) => next,
            None => tokio::select! {
                biased;
                () = cancel.cancelled() => return read.response,
                next = stream.next() => next,
            },
        };
        match next {
            None => break,
            Some(Err(e)) => {
                shown.broke(ctx, &mut read.response);
                read.response.end = End::Failed(e);
                return read.response;
            }
            Some(Ok(event)) => {
                held = shown.take(ctx, step, &mut read, event, &mut stream);
                if let Some(watches) = &mut repeats
                    && let Some(piece) = repeating(watches, &read.response)
                {
                    // Dropping the stream closes the request: the server stops writing.
                    read.response.repeated = Some(piece);
                    read.finish = Some(FinishReason::Length);
                    break;
                }
            }
        }
    }
    shown.finish(ctx, &mut read.response);
    count_usage(ctx, &step.spec, &mut read.response, estimate_in, read.usage);
    read.response.end = End::Finished(read.finish);
    read.response
}

/// Whether the answer or the reasoning (`watches`, in that order) is only repeating itself
/// now: the length of the piece. Each watch is given what its text grew by since the last
/// look.
fn repeating(watches: &mut [Repeats; 2], response: &Response) -> Option<usize> {
    let [answer, reasoning] = watches;
    answer
        .catch_up(&response.text)
        .or_else(|| reasoning.catch_up(&response.reasoning))
}

/// What a response has brought so far.
struct Read {
    response: Response,
    usage: Option<crate::model::Usage>,
    finish: Option<FinishReason>,
}

impl Default for Read {
    fn default() -> Self {
        Self {
            response: Response {
                text: String::new(),
                reasoning: String::new(),
                calls: Vec::new(),
                carried: None,
                early: Vec::new(),
                end: End::Cancelled,
                cut: None,
                opened: false,
                text_call_held: false,
                repeated: None,
            },
            usage: None,
            finish: None,
        }
    }
}

/// What the editor is shown while a response streams: its text (held back where it may be a
/// call left in the text, and where it may be the start of a key: see
/// `secrets::StreamRedactor`), its reasoning, and the calls whose names arrived.
struct Showing {
    ids: CallIds,
    watch: Option<text_calls::Watch>,
    /// The model asked.
    model: String,
    text: StreamRedactor,
    thought: StreamRedactor,
}

impl Showing {
    fn new(ids: CallIds, watch: Option<text_calls::Watch>, model: String) -> Self {
        Self {
            ids,
            watch,
            model,
            text: StreamRedactor::default(),
            thought: StreamRedactor::default(),
        }
    }

    /// Takes one event into `read` and shows what it shows; returns an event read ahead
    /// while merging the pieces ready now.
    fn take(
        &mut self,
        ctx: &TurnContext,
        step: &Step,
        read: &mut Read,
        event: ModelEvent,
        stream: &mut crate::model::EventStream,
    ) -> coalesce::Next {
        let response = &mut read.response;
        match event {
            ModelEvent::Text(mut t) => {
                let held = coalesce::gather(stream, &mut t, false);
                response.text.push_str(&t);
                let shown = match &mut self.watch {
                    Some(watch) => watch.push(&t),
                    None => t,
                };
                emit_some(ctx, TurnEvent::Text(self.text.push(&shown)));
                return held;
            }
            ModelEvent::Reasoning(mut t) => {
                let held = coalesce::gather(stream, &mut t, true);
                response.reasoning.push_str(&t);
                emit_some(ctx, TurnEvent::Thought(self.thought.push(&t)));
                return held;
            }
            ModelEvent::Usage(u) => read.usage = Some(u),
            ModelEvent::ToolCalls(calls) => {
                if !calls.is_empty() {
                    self.native(ctx);
                }
                response.calls.extend(calls);
            }
            ModelEvent::Carried(carried) => response.carried = Some(carried),
            ModelEvent::CallStarted { id, name } => {
                self.native(ctx);
                if let Some(shown) = announce(ctx, step, &mut self.ids, &id, &name) {
                    response.early.push(shown);
                }
            }
            ModelEvent::Finish(reason) => read.finish = Some(reason),
        }
        None
    }

    /// The server returned a call in its own field: it reads this model's calls itself, so
    /// what was held back is shown now, and the model's answers are not watched again in
    /// the session.
    fn native(&mut self, ctx: &TurnContext) {
        let Some(watch) = self.watch.take() else {
            return;
        };
        emit_some(ctx, TurnEvent::Text(self.text.push(&watch.native())));
        ctx.meters.native_calls.lock().insert(self.model.clone());
    }

    /// The answer broke off: what was held back as the start of what may be a call written as
    /// text is shown, so the user sees what the conversation holds, and noted (a call may have
    /// been half-written). What may be the start of a key stays held back: the answer may be
    /// asked for again and go on from there, and a key split across the two must not reach
    /// the editor in two halves.
    fn broke(&mut self, ctx: &TurnContext, response: &mut Response) {
        if let Some(watch) = self.watch.take() {
            let (_, held) = watch.finish();
            response.text_call_held = !held.trim().is_empty();
            emit_some(ctx, TurnEvent::Text(self.text.push(&held)));
        }
    }

    /// The response is whole: calls left in the text are taken out of it, and what was held
    /// back is shown.
    fn finish(mut self, ctx: &TurnContext, response: &mut Response) {
        if let Some(watch) = self.watch.take() {
            let rest = take_text_calls(response, watch);
            emit_some(ctx, TurnEvent::Text(self.text.push(&rest)));
        }
        emit_some(ctx, TurnEvent::Thought(self.thought.finish()));
        emit_some(ctx, TurnEvent::Text(self.text.finish()));
    }
}

/// Shows the editor a call whose name arrived (status pending, titled by its tool's label,
/// "Edit file") before its arguments are complete; returns the id it is shown under. Calls the editor is never
/// shown (the plan) and tools this turn does not offer are left for later.
fn announce(
    ctx: &TurnContext,
    step: &Step,
    ids: &mut CallIds,
    model_id: &str,
    name: &str,
) -> Option<String> {
    // Every call takes its id, shown or not, as the history will give them out.
    let id = ids.issue(model_id);
    let tool = ctx.find_tool(step, name).filter(|t| t.announced())?;
    ctx.emit(TurnEvent::ToolCall(ToolCallView {
        id: id.clone(),
        title: tool.label(),
        kind: tool.kind(),
        status: ToolStatus::Pending,
        locations: Vec::new(),
        raw_input: None,
        content: Vec::new(),
    }));
    Some(id)
}

/// The calls shown early that will run (those among the response's calls, when it finished),
/// and those cut off with the answer, which are shown as failed, with why. Nothing of a cut-off
/// call reaches the history but its id (see `History::cut_off`).
pub(super) fn settle_early(
    ctx: &TurnContext,
    early: Vec<String>,
    shown_ids: &[String],
    end: &End,
) -> (Vec<String>, Vec<String>) {
    let why = match end {
        End::Finished(_) => {
            "The model's answer ended before this call was complete; it was not run."
        }
        End::Failed(_) => {
            "The model's answer broke off before this call was complete; it was not run."
        }
        End::Cancelled => "Cancelled before the model finished writing this call; it was not run.",
    };
    let (kept, dropped): (Vec<String>, Vec<String>) = early
        .into_iter()
        .partition(|id| matches!(end, End::Finished(_)) && shown_ids.contains(id));
    for id in &dropped {
        ctx.emit(TurnEvent::ToolCallUpdate {
            id: id.clone(),
            status: Some(ToolStatus::Failed),
            content: Some(vec![crate::types::ToolContent::Text {
                text: why.to_string(),
            }]),
            title: None,
        });
    }
    (kept, dropped)
}

/// When the model wrote its calls as text (and the server found none), makes them the
/// response's calls and its text what came before them; returns the held-back text to show.
fn take_text_calls(response: &mut Response, watch: text_calls::Watch) -> String {
    let (found, rest) = watch.finish();
    if let Some(found) = found {
        tracing::info!(
            calls = found.calls.len(),
            "the model wrote its tool calls as text"
        );
        response.text = found.preamble;
        response.calls = found.calls;
    }
    rest
}

/// Counts the request's usage (the server's, or an estimate when it reports none), checks it
/// for a prompt the server cut, and tells the editor how full the context is.
fn count_usage(
    ctx: &TurnContext,
    spec: &ModelSpec,
    response: &mut Response,
    estimate_in: u64,
    usage: Option<crate::model::Usage>,
) {
    // Context in use: the last request's prompt + completion, or an estimate when the server
    // does not report usage.
    let estimate_out = estimate_text(&response.text)
        + response
            .calls
            .iter()
            .map(|c| estimate_text(&c.arguments) + 8)
            .sum::<u64>();
    let used = match usage {
        Some(u) => {
            let before = ctx.usage.borrow().map_or(0, |(_, estimated)| estimated);
            response.cut = super::truncation::check(ctx, estimate_in, before, &u);
            let priced = u.cost.or_else(|| {
                spec.price
                    .map(|p| p.cost(u.prompt_tokens, u.cached_tokens, u.completion_tokens))
            });
            ctx.meters.totals.send_modify(|t| {
                t.requests += 1;
                t.input += u.prompt_tokens;
                t.cached += u.cached_tokens;
                t.output += u.completion_tokens;
                t.reasoning += u.reasoning_tokens;
                if let Some(cost) = priced {
                    t.cost_usd += cost;
                    t.priced += 1;
                }
            });
            let used = u.prompt_tokens + u.completion_tokens;
            ctx.usage
                .send_replace(Some((used, estimate_in + estimate_out)));
            used
        }
        None => estimate_in + estimate_out,
    };
    ctx.emit(TurnEvent::Usage {
        cost: ctx.meters.totals.borrow().cost(),
        used,
        size: match *ctx.meters.window_cut.borrow() {
            Some(cut) => spec.context_window.min(cut),
            None => spec.context_window,
        },
    });
}

/// Emits a text or thought piece unless it is empty (all of it held back for now).
fn emit_some(ctx: &TurnContext, event: TurnEvent) {
    if let TurnEvent::Text(t) | TurnEvent::Thought(t) = &event
        && t.is_empty()
    {
        return;
    }
    ctx.emit(event);
}
