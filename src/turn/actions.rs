//! Slash commands that are not prompts for the model: `/compact`, `/permissions`, and the
//! user's custom actions (a command line run like a `run_command` call).

use tokio_util::sync::CancellationToken;

use super::{Turn, TurnContext, TurnOutcome, calls, compact::Compacted};
use crate::model::ToolCall;
use crate::store::History;
use crate::types::{StopReason, TurnEvent, UserPart};

/// Compacts the conversation now (`/compact`); says so when there is nothing older than the
/// last exchange to summarize.
pub async fn compact_now(
    ctx: TurnContext,
    mut history: History,
    prompt: Vec<UserPart>,
    cancel: CancellationToken,
) -> TurnOutcome {
    let spec = ctx.model_spec(&ctx.settings());
    // A load shows the `/compact` prompt where it ran; the model never sees it.
    history.push_command(prompt);
    let mut turn = Turn::new(ctx, history, cancel);
    let result = match turn.compact(&spec).await {
        Compacted::Done { .. } => Ok(StopReason::EndTurn),
        Compacted::Nothing => {
            let note = "Nothing to compact yet: the conversation has a single exchange.";
            turn.ctx.emit(TurnEvent::Text(note.into()));
            turn.history.push_note(note.into());
            Ok(StopReason::EndTurn)
        }
        Compacted::Cancelled => Ok(StopReason::Cancelled),
        Compacted::Failed(e) => Err(e),
    };
    turn.end(result)
}

/// `/permissions`: shows the session's rules and remembered answers; `clear` first forgets
/// the answers. Nothing reaches the model.
pub async fn show_permissions(ctx: TurnContext, history: History, args: String) -> TurnOutcome {
    let mut text = String::new();
    match args.trim() {
        "" => {}
        "clear" => {
            let mut forgotten = 0;
            ctx.grants.send_modify(|grants| forgotten = grants.clear());
            text = format!("Forgot {forgotten} remembered answer(s).\n\n");
        }
        other => {
            text = format!(
                "`/permissions {other}`: unknown argument; `/permissions` shows, `/permissions clear` forgets the remembered answers.\n\n"
            );
        }
    }
    let snapshot = ctx.policy.snapshot(&ctx.grants.borrow());
    text.push_str(&snapshot.markdown(ctx.mode()));
    ctx.emit(TurnEvent::Text(text));
    TurnOutcome::ended(history, Ok(StopReason::EndTurn))
}

/// Runs the command of the custom action `name` (its slash command or `_tandem/actions/run`)
/// as a `run_command` call: the mode's permission rules apply, the editor shows it, and the
/// conversation records what ran and what it printed so the model knows.
pub async fn run_action(
    ctx: TurnContext,
    mut history: History,
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
    history.push_user(vec![UserPart::Text(note)]);
    let stop = if cancel.is_cancelled() {
        StopReason::Cancelled
    } else {
        StopReason::EndTurn
    };
    let mut outcome = TurnOutcome::ended(history, Ok(stop));
    outcome.output = Some(output);
    outcome
}
