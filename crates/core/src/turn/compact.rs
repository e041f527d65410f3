//! Compaction: when the conversation no longer fits comfortably in the model's context
//! window, the older part is summarized with one model call and replaced by the summary; the
//! current exchange stays verbatim ([`crate::store::History::compact`] applies it). The full
//! history stays in the transcript. It runs on its own as the loop nears the window or after
//! a context-length refusal, and when the user asks (`/compact`, [`compact_now`]).

use std::sync::Arc;

use futures::StreamExt;
use tokio_util::sync::CancellationToken;

use super::context::TurnContext;
use super::estimate::fit_to_model;
use super::outcome::TurnOutcome;
use crate::config::ModelSpec;
use crate::model::{ErrorClass, Message, ModelError, ModelEvent, ModelRequest};
use crate::store::History;
use crate::types::{CompactionStatus, StopReason, TurnEvent, UserPart};

const SUMMARY_SYSTEM: &str = "You summarize a coding session so that the agent can continue it without \
seeing the earlier messages. Write plain, specific notes; never call tools.";

const SUMMARY_REQUEST: &str = "Summarize the conversation above for the agent that continues it: the \
user's goals and requests, decisions made, files read and changed (with paths), commands run and \
their outcomes, the current state of the work, and what remains to do.";

/// How a compaction attempt ended.
pub(super) enum Compacted {
    /// The older part is summarized: the summary replaces all but the last `kept` messages.
    Done {
        /// The summary.
        summary: String,
        /// How many recent messages stay verbatim.
        kept: usize,
    },
    /// Nothing older than the current exchange to summarize.
    Nothing,
    /// Summarizing failed; the conversation is unchanged.
    Failed(ModelError),
    /// The user cancelled while summarizing.
    Cancelled,
}

/// Summarizes everything before the last user message of `conversation`.
async fn compact(
    ctx: &TurnContext,
    conversation: &[Arc<Message>],
    spec: &ModelSpec,
    cancel: &CancellationToken,
) -> Compacted {
    let Some(split) = conversation
        .iter()
        .rposition(|m| matches!(**m, Message::User(_)))
    else {
        return Compacted::Nothing;
    };
    if split == 0 {
        return Compacted::Nothing;
    }
    let kept = conversation.len() - split;
    let id = uuid::Uuid::new_v4().to_string();
    announce(ctx, &id, CompactionStatus::InProgress, None, None);
    tracing::info!(session = %ctx.facts.session_id, older = split, kept, "compacting the conversation");

    let mut messages = vec![Arc::new(Message::System(SUMMARY_SYSTEM.into()))];
    messages.extend(
        conversation[..split]
            .iter()
            .cloned()
            .map(|m| fit_to_model(m, spec)),
    );
    super::estimate::thin_images(&mut messages);
    messages.push(Arc::new(Message::User(vec![UserPart::Text(
        SUMMARY_REQUEST.into(),
    )])));
    let request = ModelRequest {
        model: spec.id.clone(),
        messages,
        reasoning_effort: None,
        tools: Vec::new(),
        // Capped as every answer is: a small local model left to itself can write its summary
        // until the window is full, and the summary is sent again with every later request.
        max_tokens: spec.max_output_tokens,
        response_format: None,
        // The session's: its requests stay together in the server's cache.
        cache_key: Some(ctx.facts.session_id.clone()),
    };
    let summary = match summarize(ctx, request, &id, cancel).await {
        Ok(Some(summary)) => summary,
        Ok(None) => {
            let why = "cancelled".to_string();
            announce(ctx, &id, CompactionStatus::Failed, None, Some(why));
            return Compacted::Cancelled;
        }
        Err(e) => {
            tracing::warn!(session = %ctx.facts.session_id, "compaction failed: {e}");
            announce(
                ctx,
                &id,
                CompactionStatus::Failed,
                None,
                Some(e.message.clone()),
            );
            return Compacted::Failed(e);
        }
    };
    // The next usage report measures the compacted conversation; until then it is estimated.
    ctx.usage.send_replace(None);
    announce(
        ctx,
        &id,
        CompactionStatus::Completed,
        Some(summary.clone()),
        None,
    );
    Compacted::Done { summary, kept }
}

/// Compacts `history` with a summary from `spec`'s model, when there is older conversation
/// to summarize and it worked; says how it went.
pub(super) async fn compact_history(
    ctx: &TurnContext,
    history: &mut crate::store::History,
    spec: &ModelSpec,
    cancel: &CancellationToken,
) -> Compacted {
    let compacted = compact(ctx, history.messages(), spec, cancel).await;
    if let Compacted::Done { summary, kept } = &compacted {
        history.compact(summary, *kept);
    }
    compacted
}

/// Streams the summary, showing it to the editor as it is written; `None` when cancelled.
async fn summarize(
    ctx: &TurnContext,
    request: ModelRequest,
    id: &str,
    cancel: &CancellationToken,
) -> Result<Option<String>, ModelError> {
    let mut stream = tokio::select! {
        () = cancel.cancelled() => return Ok(None),
        opened = ctx.services.model.open(request) => opened?,
    };
    let mut summary = String::new();
    loop {
        let next = tokio::select! {
            () = cancel.cancelled() => return Ok(None),
            next = stream.next() => next,
        };
        match next {
            None => break,
            Some(Err(e)) => return Err(e),
            Some(Ok(ModelEvent::Text(t))) => {
                if summary.is_empty() && t.trim().is_empty() {
                    continue;
                }
                summary.push_str(&t);
                ctx.emit(TurnEvent::CompactionChunk {
                    id: id.to_string(),
                    text: t,
                });
            }
            Some(Ok(_)) => {}
        }
    }
    if summary.trim().is_empty() {
        return Err(ModelError::new(
            ErrorClass::MalformedResponse,
            "the model returned an empty summary",
        ));
    }
    Ok(Some(summary.trim().to_string()))
}

/// Tells the editor where the compaction is (as `compaction_update` when it advertised
/// `session.compaction`, as a note once it is done otherwise: acp/convert.rs).
fn announce(
    ctx: &TurnContext,
    id: &str,
    status: CompactionStatus,
    summary: Option<String>,
    error: Option<String>,
) {
    ctx.emit(TurnEvent::Compaction {
        id: id.to_string(),
        status,
        summary,
        error,
    });
}

/// Compacts the conversation now (`/compact`); says so when there is nothing older than the
/// last exchange to summarize.
pub(crate) async fn compact_now(
    ctx: TurnContext,
    mut history: History,
    prompt: Vec<UserPart>,
    cancel: CancellationToken,
) -> TurnOutcome {
    let step = ctx.step();
    // A load shows the `/compact` prompt where it ran; the model never sees it.
    history.push_command(prompt);
    let result = match compact_history(&ctx, &mut history, &step.spec, &cancel).await {
        Compacted::Done { .. } => Ok(StopReason::EndTurn),
        Compacted::Nothing => {
            let note = "Nothing to compact yet: the conversation has a single exchange.";
            ctx.emit(TurnEvent::Text(note.into()));
            history.push_note(note.into());
            Ok(StopReason::EndTurn)
        }
        Compacted::Cancelled => Ok(StopReason::Cancelled),
        Compacted::Failed(e) => Err(e),
    };
    TurnOutcome::ended(history, result)
}

#[cfg(test)]
#[path = "compact_tests.rs"]
mod tests;
