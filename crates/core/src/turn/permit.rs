//! Whether one prepared call may run: the session's policy and the `pre_tool_use` hooks
//! decide, and the user is asked when they say so, with options that name what an "always"
//! answer remembers.

use serde_json::Value;

use super::context::TurnContext;
use super::shown::Shown;
use crate::model::ToolCall;
use crate::permission::{Decision, Offer};
use crate::tools::{Call, ToolEnv};
use crate::types::Access;
use crate::types::PermissionAnswer;
use crate::types::{ToolContent, ToolStatus};

/// Why a call did not run (a rule, the mode, a hook, the user, a cancel): the text is what
/// the model reads as the call's result; the call has already been shown as failed.
#[derive(Debug)]
pub(super) struct Refusal(pub String);

/// `Ok` when the call may run; otherwise the call is shown as failed and the refusal is what
/// the model reads.
pub(super) async fn permit(
    ctx: &TurnContext,
    call: &ToolCall,
    args: &Value,
    access: &Access,
    work: &mut Box<dyn Call>,
    env: &ToolEnv,
    shown: &mut Shown<'_>,
) -> Result<(), Refusal> {
    let cancel = &env.cancel;
    let verdict = super::hooks::before_tool(ctx, call, args, cancel).await;
    // The mode is read now: a switch mid-turn applies from the next tool call.
    let mode = ctx.mode();
    let judged = ctx.services.policy.judge_with(
        &call.name,
        access,
        mode,
        &ctx.meters.grants.borrow(),
        ctx.must_ask.as_deref(),
        &verdict,
    );
    match judged.decision {
        Decision::Allow => Ok(()),
        Decision::Refuse(reason) => Err(fail(shown, reason.clone(), reason)),
        Decision::Ask => ask(ctx, &judged.offer, work, env, shown).await,
    }
}

/// Shows the call as failed with `shown_text`; `model` is what the model reads.
fn fail(shown: &mut Shown<'_>, shown_text: String, model: String) -> Refusal {
    shown.update(
        Some(ToolStatus::Failed),
        Some(vec![ToolContent::Text { text: shown_text }]),
    );
    Refusal(model)
}

/// Asks the user, with the call's preview (an edit's diff, first) and `offer`'s choices,
/// and remembers an "always" answer.
async fn ask(
    ctx: &TurnContext,
    offer: &Offer,
    work: &mut Box<dyn Call>,
    env: &ToolEnv,
    shown: &mut Shown<'_>,
) -> Result<(), Refusal> {
    let cancel = &env.cancel;
    let mut content = match work.preview(env).await {
        Ok(content) => content,
        Err(out) => {
            shown.update(Some(ToolStatus::Failed), Some(out.content));
            return Err(Refusal(out.model));
        }
    };
    if let Some(title) = work.title() {
        shown.retitle(title);
    }
    if let Some(why) = &offer.withheld {
        content.push(ToolContent::Text { text: why.clone() });
    }
    shown.view.content = content;
    shown.view.diff_first();
    if !shown.view.content.is_empty() {
        shown.update(None, Some(shown.view.content.clone()));
    }
    let mut asked = shown.view.clone();
    if let Some(note) = &offer.note {
        asked.title = format!("{} ({note})", asked.title);
    }
    let choices = offer.choices();
    let answer = tokio::select! {
        answer = ctx.services.editor.request_permission(&ctx.facts.session_id, &asked, &choices) => answer,
        () = cancel.cancelled() => Ok(PermissionAnswer::Cancelled),
    };
    match answer {
        Ok(PermissionAnswer::AllowOnce) => Ok(()),
        Ok(PermissionAnswer::AllowAlways) => {
            if let Some(grants) = &offer.allow_always {
                ctx.meters.grants.send_modify(|g| g.remember(grants, true));
            }
            Ok(())
        }
        Ok(answer @ (PermissionAnswer::RejectOnce | PermissionAnswer::RejectAlways)) => {
            if answer == PermissionAnswer::RejectAlways {
                ctx.meters
                    .grants
                    .send_modify(|g| g.remember(&offer.reject_always, false));
            }
            let shown_text = noted(shown, "Rejected by the user.");
            shown.update(Some(ToolStatus::Failed), Some(shown_text));
            Err(Refusal("Rejected: the user declined this tool call. Do not retry it unchanged; ask the user how to proceed or try another approach.".into()))
        }
        Ok(PermissionAnswer::Cancelled) => {
            cancel.cancel();
            let shown_text = noted(shown, "Not run: the turn was cancelled.");
            shown.update(Some(ToolStatus::Failed), Some(shown_text));
            Err(Refusal(super::outcome::CANCELLED.into()))
        }
        Err(e) => {
            let message = format!(
                "the editor could not ask the user for permission: {}",
                e.message
            );
            Err(fail(shown, message.clone(), format!("Error: {message}")))
        }
    }
}

/// What the card showed while the user was asked, with why the call did not run after it:
/// the call ends failed (every call ends `completed` or `failed`, or clients that show a
/// status, CodeCompanion and agent-shell among them, keep it pending), and its card still says
/// what was asked and what came of it.
fn noted(shown: &Shown<'_>, why: &str) -> Vec<ToolContent> {
    let mut content = shown.view.content.clone();
    content.push(ToolContent::Text { text: why.into() });
    content
}
