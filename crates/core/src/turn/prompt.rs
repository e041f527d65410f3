//! A prompt from the user: the files and folders it links become context, its
//! `user_prompt_submit` hooks may add to it or block it, a prompt larger than the model's
//! whole window is refused before anything is sent, then the turn runs and the `stop` hooks
//! hear how it ended. (The hooks around each tool call are in hooks.rs.)

use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::context::TurnContext;
use super::hooks::report;
use super::r#loop::run_turn;
use super::outcome::TurnOutcome;
use crate::conversation::last_answer;
use crate::customize::hooks::Event;
use crate::model::{ErrorClass, Message, ModelError};
use crate::store::History;
use crate::types::StopReason;
use crate::types::{Prompt, UserPart};
use crate::types::{Severity, TurnEvent};

/// Refuses a prompt that alone (with the system prompt) is larger than the model's whole
/// context window: compaction cannot make room for it, and the server would only refuse it
/// after a long upload. The estimate (four characters a token) is low for code and data, so
/// a prompt that would fit is never refused.
fn fits(ctx: &TurnContext, parts: &[UserPart]) -> Result<(), ModelError> {
    let step = ctx.step();
    let spec = &step.spec;
    let prompt = super::estimate::estimate_tokens(&[Message::User(parts.to_vec())]);
    // An ordinary prompt is far from the limit: the system prompt is built only near it.
    if prompt <= spec.context_window / 2 {
        return Ok(());
    }
    let system =
        super::estimate::estimate_text(&ctx.system_prompt(&step, &ctx.told_now(&step.settings)));
    if prompt + system <= spec.context_window {
        return Ok(());
    }
    Err(ModelError::new(
        ErrorClass::ContextLength,
        format!(
            "the prompt is about {prompt} tokens, more than model `{}` can read at once (its context window is {} tokens): nothing was sent. Attach less (a part of the file, or a path the model can read in windows), or pick a model with a larger context window.",
            spec.id, spec.context_window
        ),
    ))
}

/// What becomes of a message from the user before the model may read it.
pub(super) enum Admitted {
    /// It goes in, as the model reads it.
    Parts(Vec<UserPart>),
    /// A `user_prompt_submit` hook blocked it (the user was told).
    Blocked(String),
    /// It is larger than the model's whole window.
    TooBig(ModelError),
    /// The turn was cancelled meanwhile.
    Cancelled,
}

/// Makes a message from the user (a prompt, or one that steers a running turn) ready for the
/// model: linked files and folders become context, `user_prompt_submit` hooks may add to it
/// or block it, and one larger than the model's whole window is refused. Nothing is
/// recorded: a message the model can never read would poison every later request.
pub(super) async fn admit(
    ctx: &TurnContext,
    parts: Vec<UserPart>,
    cancel: &CancellationToken,
) -> Admitted {
    let hooks = ctx.services.extras.hooks.clone();
    // Linked files and folders become context before hooks and the model see the prompt.
    let mut parts = super::mentions::expand(ctx, parts).await;
    if hooks.hooks.any(Event::UserPromptSubmit) {
        let prompt: Vec<_> = parts.iter().filter_map(UserPart::as_text).collect();
        let said = tokio::select! {
            said = hooks.run(Event::UserPromptSubmit, None, json!({ "prompt": prompt.join("\n") })) => said,
            () = cancel.cancelled() => return Admitted::Cancelled,
        };
        report(ctx, &said);
        if let Some(reason) = said.blocked {
            ctx.emit(TurnEvent::Notice {
                severity: Severity::Warning,
                text: format!("The prompt was blocked by a hook: {reason}"),
            });
            return Admitted::Blocked(reason);
        }
        if let Some(context) = said.context_text() {
            parts.push(UserPart::Text(format!(
                "[Context added by the user's user_prompt_submit hook]\n{context}"
            )));
        }
    }
    match fits(ctx, &parts) {
        Ok(()) => Admitted::Parts(parts),
        Err(too_big) => Admitted::TooBig(too_big),
    }
}

/// Runs a prompt from the user: its `user_prompt_submit` hooks (which may add context or
/// block it), the turn, then the `stop` hooks. `history` is the conversation before it.
/// The transcript keeps what the model read and the blocks as the user sent them.
pub(crate) async fn run_prompt(
    ctx: TurnContext,
    mut history: History,
    prompt: Prompt,
    cancel: CancellationToken,
) -> TurnOutcome {
    let Prompt { parts, sent } = prompt;
    let hooks = ctx.services.extras.hooks.clone();
    let parts = match admit(&ctx, parts, &cancel).await {
        Admitted::Parts(parts) => parts,
        Admitted::Blocked(_) => return TurnOutcome::ended(history, Ok(StopReason::Refusal)),
        Admitted::TooBig(too_big) => return TurnOutcome::ended(history, Err(too_big)),
        Admitted::Cancelled => return TurnOutcome::ended(history, Ok(StopReason::Cancelled)),
    };
    history.push_prompt(parts, sent);
    let outcome = run_turn(ctx.clone(), history, cancel).await;
    if hooks.hooks.any(Event::Stop) {
        let stop_reason = outcome.result.as_ref().map_or("error", |s| s.as_str());
        let said = hooks
            .run(
                Event::Stop,
                None,
                json!({
                    "stop_reason": stop_reason,
                    "last_message": last_answer(outcome.history.messages()),
                }),
            )
            .await;
        report(&ctx, &said);
    }
    outcome
}
