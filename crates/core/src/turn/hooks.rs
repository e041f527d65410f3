//! The user's hooks around each tool call: `pre_tool_use` before it may run (their verdict
//! joins the permission chain in permit.rs) and `post_tool_use` after it ran (what they say
//! is added for the model). Hook failures are shown to the user (as a thought, so they never
//! mix into the answer) and logged, and the turn goes on.

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::context::TurnContext;
use crate::customize::hooks::{Event, Said, ToolVerdict};
use crate::model::ToolCall;
use crate::tools::ToolOutput;
use crate::types::TurnEvent;

/// What every tool event tells a hook about the call.
fn tool_fields(ctx: &TurnContext, call: &ToolCall, args: &Value) -> Value {
    json!({
        "tool_name": call.name,
        "tool_input": args,
        "call_id": call.id,
        "mode": ctx.mode().id(),
        "agent": ctx.role.agent_name(),
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
    let hooks = &ctx.services.extras.hooks;
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
    let hooks = &ctx.services.extras.hooks;
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
pub(super) fn report(ctx: &TurnContext, said: &Said) {
    for failure in &said.failures {
        ctx.emit(TurnEvent::Thought(format!("\n[{failure}]\n")));
    }
}
