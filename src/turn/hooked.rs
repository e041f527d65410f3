//! Where the user's hooks meet a turn: `user_prompt_submit` before the model sees a prompt,
//! `stop` when its turn ends, and `pre_tool_use` / `post_tool_use` around each tool call.
//! Hook failures are shown to the user (as a thought, so they never mix into the answer) and
//! logged, and the turn goes on.

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::{TurnContext, TurnOutcome, run_turn};
use crate::customize::hooks::{Event, Said, ToolVerdict};
use crate::model::{ErrorClass, Message, ModelError, ToolCall};
use crate::store::History;
use crate::tools::ToolOutput;
use crate::types::StopReason;
use crate::types::TurnEvent;
use crate::types::{Prompt, UserPart};

/// Refuses a prompt that alone (with the system prompt) is larger than the model's whole
/// context window: compaction cannot make room for it, and the server would only refuse it
/// after a long upload. The estimate (four characters a token) is low for code and data, so
/// a prompt that would fit is never refused.
fn fits(ctx: &TurnContext, parts: &[UserPart]) -> Result<(), ModelError> {
    let settings = ctx.settings();
    let spec = ctx.model_spec(&settings);
    let prompt = super::estimate::estimate_tokens(&[Message::User(parts.to_vec())]);
    // An ordinary prompt is far from the limit: the system prompt is built only near it.
    if prompt <= spec.context_window / 2 {
        return Ok(());
    }
    let system = super::estimate::estimate_text(&ctx.system_prompt(&ctx.told_now(&settings)));
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

/// Runs a prompt from the user: its `user_prompt_submit` hooks (which may add context or
/// block it), the turn, then the `stop` hooks. `history` is the conversation before it.
/// The transcript keeps what the model read and the blocks as the user sent them.
pub async fn run_prompt(
    ctx: TurnContext,
    mut history: History,
    prompt: Prompt,
    cancel: CancellationToken,
) -> TurnOutcome {
    let Prompt { parts, sent } = prompt;
    let hooks = ctx.extras.hooks.clone();
    // Linked files and folders become context before hooks and the model see the prompt.
    let mut parts = super::mentions::expand(&ctx, parts).await;
    if hooks.hooks.any(Event::UserPromptSubmit) {
        let prompt: Vec<_> = parts.iter().filter_map(UserPart::as_text).collect();
        let said = tokio::select! {
            said = hooks.run(Event::UserPromptSubmit, None, json!({ "prompt": prompt.join("\n") })) => said,
            () = cancel.cancelled() => return TurnOutcome::ended(history, Ok(StopReason::Cancelled)),
        };
        report(&ctx, &said);
        if let Some(reason) = said.blocked {
            ctx.emit(TurnEvent::Text(format!(
                "The prompt was blocked by a hook: {reason}"
            )));
            return TurnOutcome::ended(history, Ok(StopReason::Refusal));
        }
        if let Some(context) = said.context_text() {
            parts.push(UserPart::Text(format!(
                "[Context added by the user's user_prompt_submit hook]\n{context}"
            )));
        }
    }
    if let Err(too_big) = fits(&ctx, &parts) {
        // Nothing is recorded: a prompt the model can never read would poison every later
        // request of the session.
        return TurnOutcome::ended(history, Err(too_big));
    }
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

/// The text of the conversation's last assistant message, or "".
pub(super) fn last_answer(history: &[Message]) -> &str {
    history
        .iter()
        .rev()
        .find_map(|m| match m {
            Message::Assistant { text, .. } if !text.trim().is_empty() => Some(text.as_str()),
            _ => None,
        })
        .unwrap_or("")
}

/// What every tool event tells a hook about the call.
fn tool_fields(ctx: &TurnContext, call: &ToolCall, args: &Value) -> Value {
    json!({
        "tool_name": call.name,
        "tool_input": args,
        "call_id": call.id,
        "mode": ctx.mode().id(),
        "agent": ctx.subagent.as_ref().map(|s| s.agent.name.clone()),
    })
}

/// The `pre_tool_use` hooks' verdict on `call` (`Pass` when none matched or the turn was
/// cancelled meanwhile).
pub(super) async fn before_tool(
    ctx: &TurnContext,
    call: &ToolCall,
    args: &Value,
    cancel: &CancellationToken,
) -> ToolVerdict {
    let hooks = &ctx.extras.hooks;
    if !hooks.hooks.any(Event::PreToolUse) {
        return ToolVerdict::Pass;
    }
    let said = tokio::select! {
        said = hooks.run(Event::PreToolUse, Some(&call.name), tool_fields(ctx, call, args)) => said,
        () = cancel.cancelled() => return ToolVerdict::Pass,
    };
    report(ctx, &said);
    said.verdict()
}

/// Runs the `post_tool_use` hooks after `call` produced `output`; returns what they add for
/// the model.
pub(super) async fn after_tool(
    ctx: &TurnContext,
    call: &ToolCall,
    args: &Value,
    output: &ToolOutput,
) -> Option<String> {
    let hooks = &ctx.extras.hooks;
    if !hooks.hooks.any(Event::PostToolUse) {
        return None;
    }
    let mut fields = tool_fields(ctx, call, args);
    if let Some(obj) = fields.as_object_mut() {
        obj.insert("tool_output".into(), json!(output.model));
        obj.insert("failed".into(), json!(output.failed));
    }
    let said = hooks
        .run(Event::PostToolUse, Some(&call.name), fields)
        .await;
    report(ctx, &said);
    said.context_text()
        .map(|c| format!("\n\n[Context added by the user's post_tool_use hook]\n{c}"))
}

/// Shows each failed hook to the user without touching the answer.
fn report(ctx: &TurnContext, said: &Said) {
    for failure in &said.failures {
        ctx.emit(TurnEvent::Thought(format!("\n[{failure}]\n")));
    }
}
