//! One prompt's work: ask the model, stream what it says to the editor, and decide why the
//! turn stopped. Cancellation is checked at every await that can take long.

use std::sync::Arc;

use futures::StreamExt;
use tokio_util::sync::CancellationToken;

use crate::config::ModelSpec;
use crate::events::{EventSink, TurnEvent};
use crate::model::{Message, ModelClient, ModelError, ModelEvent, ModelRequest, UserPart};

/// Why a turn ended without an error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopReason {
    /// The model finished its answer.
    EndTurn,
    /// The model hit its output token limit.
    MaxTokens,
    /// The model (or its content filter) refused.
    Refusal,
    /// The user cancelled.
    Cancelled,
}

/// Everything a turn needs besides the history.
pub struct TurnContext {
    /// The session the events belong to.
    pub session_id: String,
    /// The model to ask.
    pub client: Arc<dyn ModelClient>,
    /// The model's id and limits, resolved from the session's settings at request time.
    pub spec: ModelSpec,
    /// `reasoning_effort`, when the model takes it.
    pub reasoning_effort: Option<String>,
    /// The system prompt for this request.
    pub system_prompt: String,
    /// Where the editor-facing events go.
    pub sink: Arc<dyn EventSink>,
}

/// What a turn adds to the history and how it ended. New messages are returned also when
/// the turn failed or was cancelled, so the transcript keeps what the user saw.
#[derive(Debug)]
pub struct TurnOutcome {
    /// Messages to append to the session's history.
    pub new_messages: Vec<Message>,
    /// How the turn ended.
    pub result: Result<StopReason, ModelError>,
}

/// Runs one model request over `history` and streams its answer.
pub async fn run_turn(
    ctx: TurnContext,
    history: Vec<Message>,
    cancel: CancellationToken,
) -> TurnOutcome {
    let mut messages = Vec::with_capacity(history.len() + 1);
    messages.push(Message::System(ctx.system_prompt.clone()));
    messages.extend(history.into_iter().map(|m| fit_to_model(m, &ctx.spec)));
    let estimate_in = estimate_tokens(&messages);
    let request = ModelRequest {
        model: ctx.spec.id.clone(),
        messages,
        reasoning_effort: ctx.reasoning_effort.clone(),
    };

    let mut answer = String::new();
    let outcome = |answer: String, result| TurnOutcome {
        new_messages: if answer.is_empty() {
            Vec::new()
        } else {
            vec![Message::Assistant(answer)]
        },
        result,
    };

    let opened = tokio::select! {
        biased;
        () = cancel.cancelled() => return outcome(answer, Ok(StopReason::Cancelled)),
        opened = ctx.client.open(request) => opened,
    };
    let mut stream = match opened {
        Ok(stream) => stream,
        Err(e) => return outcome(answer, Err(e)),
    };

    let mut usage = None;
    let mut finish = None;
    loop {
        let next = tokio::select! {
            biased;
            () = cancel.cancelled() => return outcome(answer, Ok(StopReason::Cancelled)),
            next = stream.next() => next,
        };
        match next {
            None => break,
            Some(Err(e)) => return outcome(answer, Err(e)),
            Some(Ok(ModelEvent::Text(t))) => {
                answer.push_str(&t);
                ctx.sink.emit(&ctx.session_id, TurnEvent::Text(t));
            }
            Some(Ok(ModelEvent::Reasoning(t))) => {
                ctx.sink.emit(&ctx.session_id, TurnEvent::Thought(t));
            }
            Some(Ok(ModelEvent::Usage(u))) => usage = Some(u),
            Some(Ok(ModelEvent::ToolCalls(calls))) => {
                // No tools are offered to the model yet, so a call cannot be run; the answer
                // ends with the text it has.
                let names: Vec<&str> = calls.iter().map(|c| c.name.as_str()).collect();
                tracing::warn!(session = %ctx.session_id, ?names, "model asked for tools, but none are offered");
            }
            Some(Ok(ModelEvent::Finish(reason))) => finish = Some(reason),
        }
    }

    // Context in use: the last request's prompt + completion, or an estimate when the server
    // does not report usage.
    let used = match usage {
        Some(u) => u.prompt_tokens + u.completion_tokens,
        None => estimate_in + estimate_text(&answer),
    };
    ctx.sink.emit(
        &ctx.session_id,
        TurnEvent::Usage {
            used,
            size: ctx.spec.context_window,
        },
    );
    let stop = match finish.as_deref() {
        Some("length") => StopReason::MaxTokens,
        Some("content_filter") => StopReason::Refusal,
        _ => StopReason::EndTurn,
    };
    outcome(answer, Ok(stop))
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
            Message::System(t) | Message::Assistant(t) => estimate_text(t),
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
