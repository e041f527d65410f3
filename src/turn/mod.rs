//! One prompt's work: ask the model, stream what it says, run the tools it calls, answer
//! every call, and ask again until the model stops. Cancellation is checked at every await
//! that can take long.

mod calls;
mod coalesce;
mod compact;
mod context;
mod guard;
mod hooked;
mod permit;
mod shown;
pub mod subagent;

pub use context::{Totals, TurnContext};
pub use hooked::run_prompt;

use futures::StreamExt;
use tokio_util::sync::CancellationToken;

use crate::config::ModelSpec;
use crate::model::{ErrorClass, Message, ModelError, ModelEvent, ModelRequest, ToolCall};
use crate::output_schema;
use crate::store::Record;
use crate::types::UserPart;
use crate::types::{FinishReason, StopReason, TurnEvent};

/// The conversation after a turn and how the turn ended. The conversation is returned also
/// when the turn failed or was cancelled, so it keeps what the user saw, and every tool call
/// in it has exactly one result. It may have been compacted on the way.
#[derive(Debug)]
pub struct TurnOutcome {
    /// The session's whole conversation now.
    pub history: Vec<Message>,
    /// How the turn ended.
    pub result: Result<StopReason, ModelError>,
    /// What a command action printed (only for those).
    pub output: Option<String>,
    /// With an output schema, once the model finished: the validated value, or why the last
    /// answer still did not validate.
    pub structured: Option<Result<serde_json::Value, String>>,
}

impl TurnOutcome {
    /// A turn that ended without a command action's output.
    fn ended(history: Vec<Message>, result: Result<StopReason, ModelError>) -> Self {
        TurnOutcome {
            history,
            result,
            output: None,
            structured: None,
        }
    }
}

/// How one model response ended.
enum End {
    Finished(Option<FinishReason>),
    Failed(ModelError),
    Cancelled,
}

/// One streamed model response.
struct Response {
    text: String,
    reasoning: String,
    calls: Vec<ToolCall>,
    end: End,
}

/// Runs model requests and tool calls over `conversation` (which ends with the new prompt)
/// until the model stops, the user cancels, or the request cap is reached.
pub async fn run_turn(
    ctx: TurnContext,
    mut conversation: Vec<Message>,
    cancel: CancellationToken,
) -> TurnOutcome {
    // MCP servers started with the session; their tools belong in the first request. Each is
    // bounded by its connect timeout.
    // So do the session_start hooks, whose context goes in the system prompt.
    tokio::select! {
        _ = futures::future::join(ctx.mcp.settled(), ctx.extras.started()) => {}
        () = cancel.cancelled() => {
            return TurnOutcome::ended(conversation, Ok(StopReason::Cancelled));
        }
    }
    let mut retried_context = false;
    let mut repaired = false;
    let mut requests = 0;
    let mut guard = guard::Guard::new(&ctx.config.loops);
    while requests < ctx.config.max_turn_requests {
        let settings = ctx.settings();
        let spec = ctx.model_spec(&settings);
        let mut messages = Vec::with_capacity(conversation.len() + 1);
        messages.push(Message::System(ctx.system_prompt(settings.mode)));
        messages.extend(conversation.iter().cloned().map(|m| fit_to_model(m, &spec)));
        if projected(&ctx, &messages) as f64
            > ctx.config.compact_threshold * spec.context_window as f64
        {
            match compact::compact(&ctx, &conversation, &spec, &cancel).await {
                compact::Compacted::Done(shorter) => {
                    conversation = shorter;
                    continue;
                }
                compact::Compacted::Cancelled => {
                    return TurnOutcome::ended(conversation, Ok(StopReason::Cancelled));
                }
                // Go on with the full conversation; the server will say if it does not fit.
                compact::Compacted::Nothing | compact::Compacted::Failed(_) => {}
            }
        }
        requests += 1;
        let request = ModelRequest {
            model: spec.id.clone(),
            messages,
            reasoning_effort: settings.effort_for_request(&ctx.config),
            tools: if guard.tools_off() {
                Vec::new()
            } else {
                ctx.tool_specs()
            },
            max_tokens: None,
            response_format: ctx
                .output
                .as_ref()
                .filter(|_| ctx.config.structured_output)
                .map(|o| o.schema().clone()),
        };
        let response = stream_response(&ctx, &spec, request, &cancel).await;
        let calls = response.calls.clone();
        if !response.text.is_empty() || !response.reasoning.is_empty() || !calls.is_empty() {
            ctx.transcript.append(Record::Assistant {
                text: response.text.clone(),
                reasoning: response.reasoning,
                tool_calls: calls.clone(),
            });
        }
        if !response.text.is_empty() || !calls.is_empty() {
            conversation.push(Message::Assistant {
                text: response.text,
                tool_calls: calls.clone(),
            });
        }
        let unanswered = |conversation: &mut Vec<Message>, why: &str| {
            for c in &calls {
                ctx.transcript.append(Record::ToolResult {
                    call_id: c.id.clone(),
                    content: why.to_string(),
                    view: None,
                });
                conversation.push(Message::Tool {
                    call_id: c.id.clone(),
                    content: why.to_string(),
                });
            }
        };
        let finish = match response.end {
            End::Cancelled => {
                unanswered(&mut conversation, "Not run: the user cancelled the turn.");
                return TurnOutcome::ended(conversation, Ok(StopReason::Cancelled));
            }
            End::Failed(e)
                if e.class == ErrorClass::ContextLength && !retried_context && calls.is_empty() =>
            {
                // The server says it does not fit: compact once and try again.
                retried_context = true;
                match compact::compact(&ctx, &conversation, &spec, &cancel).await {
                    compact::Compacted::Done(shorter) => {
                        conversation = shorter;
                        continue;
                    }
                    compact::Compacted::Cancelled => {
                        return TurnOutcome::ended(conversation, Ok(StopReason::Cancelled));
                    }
                    compact::Compacted::Nothing | compact::Compacted::Failed(_) => {
                        return TurnOutcome::ended(conversation, Err(e));
                    }
                }
            }
            End::Failed(e) => {
                unanswered(&mut conversation, "Not run: the model request failed.");
                return TurnOutcome::ended(conversation, Err(e));
            }
            End::Finished(finish) => finish,
        };
        if calls.is_empty() {
            let stop = StopReason::after(finish.as_ref());
            let Some(output) = ctx.output.clone().filter(|_| stop == StopReason::EndTurn) else {
                return TurnOutcome::ended(conversation, Ok(stop));
            };
            let checked = output.check(hooked::last_answer(&conversation));
            if let Err(error) = &checked
                && !repaired
                && requests < ctx.config.max_turn_requests
            {
                // One more request, told what was wrong.
                repaired = true;
                tracing::info!(session = %ctx.session_id, "the answer did not match the output schema; asking once more: {error}");
                let note = vec![UserPart::Text(output_schema::OutputSchema::repair_prompt(
                    error,
                ))];
                ctx.transcript.append(Record::User {
                    parts: note.clone(),
                });
                conversation.push(Message::User(note));
                continue;
            }
            let mut outcome = TurnOutcome::ended(conversation, Ok(stop));
            outcome.structured = Some(checked);
            return outcome;
        }
        let refusals = guard.apply(&ctx, &calls);
        let (results, cancelled) = calls::run_all(&ctx, calls, refusals, &cancel).await;
        conversation.extend(results);
        if cancelled {
            return TurnOutcome::ended(conversation, Ok(StopReason::Cancelled));
        }
    }
    tracing::info!(session = %ctx.session_id, max = ctx.config.max_turn_requests, "turn hit its model request cap");
    TurnOutcome::ended(conversation, Ok(StopReason::MaxTurnRequests))
}

/// Compacts `conversation` now (the `/compact` command); `Ok(false)` when there is nothing
/// older than the last exchange to summarize.
pub async fn compact_now(
    ctx: TurnContext,
    conversation: Vec<Message>,
    cancel: CancellationToken,
) -> TurnOutcome {
    let settings = ctx.settings();
    let spec = ctx.model_spec(&settings);
    // The `/compact` prompt itself is the last user message; summarize everything before it.
    match compact::compact(&ctx, &conversation, &spec, &cancel).await {
        compact::Compacted::Done(shorter) => TurnOutcome::ended(shorter, Ok(StopReason::EndTurn)),
        compact::Compacted::Nothing => {
            ctx.emit(TurnEvent::Text(
                "Nothing to compact yet: the conversation has a single exchange.".into(),
            ));
            TurnOutcome::ended(conversation, Ok(StopReason::EndTurn))
        }
        compact::Compacted::Cancelled => {
            TurnOutcome::ended(conversation, Ok(StopReason::Cancelled))
        }
        compact::Compacted::Failed(e) => TurnOutcome::ended(conversation, Err(e)),
    }
}

/// `/permissions`: shows the session's rules and remembered answers; `clear` first forgets
/// the answers. Nothing reaches the model.
pub async fn show_permissions(
    ctx: TurnContext,
    conversation: Vec<Message>,
    args: String,
) -> TurnOutcome {
    let mut text = String::new();
    match args.trim() {
        "" => {}
        "clear" => {
            let forgotten = ctx.grants.lock().clear();
            text = format!("Forgot {forgotten} remembered answer(s).\n\n");
        }
        other => {
            text = format!(
                "`/permissions {other}`: unknown argument; `/permissions` shows, `/permissions clear` forgets the remembered answers.\n\n"
            );
        }
    }
    let mode = ctx.settings.lock().mode;
    let snapshot = ctx.policy.snapshot(&ctx.grants.lock());
    text.push_str(&snapshot.markdown(mode));
    ctx.emit(TurnEvent::Text(text));
    TurnOutcome::ended(conversation, Ok(StopReason::EndTurn))
}

/// Runs the command of the custom action `name` (its slash command or `_tandem/actions/run`)
/// as a `run_command` call: the mode's permission rules apply, the editor shows it, and the
/// conversation records what ran and what it printed so the model knows.
pub async fn run_action(
    ctx: TurnContext,
    mut conversation: Vec<Message>,
    name: String,
    command: String,
    cancel: CancellationToken,
) -> TurnOutcome {
    let call = ToolCall {
        id: format!("action-{}", uuid::Uuid::new_v4()),
        name: "run_command".into(),
        arguments: serde_json::json!({ "command": command }).to_string(),
    };
    let (output, _) = calls::run_one(&ctx, &call, &cancel).await;
    let note = format!("[The user ran the `{name}` action: `{command}`]\n{output}");
    ctx.transcript.append(Record::User {
        parts: vec![UserPart::Text(note.clone())],
    });
    conversation.push(Message::User(vec![UserPart::Text(note)]));
    let stop = if cancel.is_cancelled() {
        StopReason::Cancelled
    } else {
        StopReason::EndTurn
    };
    TurnOutcome {
        history: conversation,
        result: Ok(stop),
        output: Some(output),
        structured: None,
    }
}

/// The tokens `messages` will take: the last reported count plus an estimate of what was
/// added since, or a whole estimate before the first report.
fn projected(ctx: &TurnContext, messages: &[Message]) -> u64 {
    let estimate = estimate_tokens(messages);
    match *ctx.usage.lock() {
        Some((used, estimated_then)) => used + estimate.saturating_sub(estimated_then),
        None => estimate,
    }
}

/// Sends one request and streams the answer to the editor as it arrives.
async fn stream_response(
    ctx: &TurnContext,
    spec: &ModelSpec,
    request: ModelRequest,
    cancel: &CancellationToken,
) -> Response {
    let estimate_in = estimate_tokens(&request.messages);
    let mut response = Response {
        text: String::new(),
        reasoning: String::new(),
        calls: Vec::new(),
        end: End::Cancelled,
    };
    let opened = tokio::select! {
        biased;
        () = cancel.cancelled() => return response,
        opened = ctx.model.open(request) => opened,
    };
    let mut stream = match opened {
        Ok(stream) => stream,
        Err(e) => {
            response.end = End::Failed(e);
            return response;
        }
    };
    let mut usage = None;
    let mut finish = None;
    // An event read while merging pieces, handled before reading on.
    let mut held: coalesce::Next = None;
    loop {
        let next = match held.take() {
            Some(next) => next,
            None => tokio::select! {
                biased;
                () = cancel.cancelled() => return response,
                next = stream.next() => next,
            },
        };
        match next {
            None => break,
            Some(Err(e)) => {
                response.end = End::Failed(e);
                return response;
            }
            Some(Ok(ModelEvent::Text(mut t))) => {
                held = coalesce::gather(&mut stream, &mut t, false);
                response.text.push_str(&t);
                ctx.emit(TurnEvent::Text(t));
            }
            Some(Ok(ModelEvent::Reasoning(mut t))) => {
                held = coalesce::gather(&mut stream, &mut t, true);
                response.reasoning.push_str(&t);
                ctx.emit(TurnEvent::Thought(t));
            }
            Some(Ok(ModelEvent::Usage(u))) => usage = Some(u),
            Some(Ok(ModelEvent::ToolCalls(calls))) => response.calls.extend(calls),
            Some(Ok(ModelEvent::Finish(reason))) => finish = Some(reason),
        }
    }
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
            {
                let mut t = ctx.totals.lock();
                t.requests += 1;
                t.input += u.prompt_tokens;
                t.cached += u.cached_tokens;
                t.output += u.completion_tokens;
                t.reasoning += u.reasoning_tokens;
            }
            let used = u.prompt_tokens + u.completion_tokens;
            *ctx.usage.lock() = Some((used, estimate_in + estimate_out));
            used
        }
        None => estimate_in + estimate_out,
    };
    ctx.emit(TurnEvent::Usage {
        used,
        size: spec.context_window,
    });
    response.end = End::Finished(finish);
    response
}

/// Replaces image parts with a note for models that do not take images, so switching to such
/// a model mid-session keeps working.
fn fit_to_model(message: Message, spec: &ModelSpec) -> Message {
    match message {
        Message::User(parts) if !spec.images => Message::User(
            parts
                .into_iter()
                .map(|p| match p {
                    UserPart::Image { .. } => UserPart::Text(format!(
                        "[image omitted: model `{}` does not accept images]",
                        spec.id
                    )),
                    text => text,
                })
                .collect(),
        ),
        other => other,
    }
}

/// About four characters a token: good enough to show the context filling up.
fn estimate_text(text: &str) -> u64 {
    (text.chars().count() as u64).div_ceil(4)
}

fn estimate_tokens(messages: &[Message]) -> u64 {
    messages
        .iter()
        .map(|m| match m {
            Message::System(t) | Message::Tool { content: t, .. } => estimate_text(t),
            Message::Assistant { text, tool_calls } => {
                estimate_text(text)
                    + tool_calls
                        .iter()
                        .map(|c| estimate_text(&c.arguments) + 8)
                        .sum::<u64>()
            }
            Message::User(parts) => parts
                .iter()
                .map(|p| match p {
                    UserPart::Text(t) => estimate_text(t),
                    // Providers bill a typical image at several hundred tokens.
                    UserPart::Image { .. } => 800,
                })
                .sum(),
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn estimates_round_up() {
        assert_eq!(estimate_text(""), 0);
        assert_eq!(estimate_text("abcde"), 2);
    }
}
