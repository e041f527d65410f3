//! Slash commands that are not prompts for the model: `/compact`, `/permissions`, and the
//! user's custom actions (a command line run like a `run_command` call).

use tokio_util::sync::CancellationToken;

use super::calls::{self, Caller};
use super::compact::{self, Compacted};
use super::context::TurnContext;
use super::outcome::TurnOutcome;
use crate::model::ToolCall;
use crate::store::History;
use crate::types::{StopReason, TurnEvent, UserPart};

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
    let result = match compact::compact_history(&ctx, &mut history, &step.spec, &cancel).await {
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

/// `/permissions`: shows the session's rules and remembered answers; `clear` first forgets
/// the answers. Nothing reaches the model.
pub(crate) async fn show_permissions(
    ctx: TurnContext,
    history: History,
    args: String,
) -> TurnOutcome {
    let mut text = String::new();
    match args.trim() {
        "" => {}
        "clear" => {
            let mut forgotten = 0;
            ctx.meters
                .grants
                .send_modify(|grants| forgotten = grants.clear());
            text = format!("Forgot {forgotten} remembered answer(s).\n\n");
        }
        other => {
            text = format!(
                "`/permissions {other}`: unknown argument; `/permissions` shows, `/permissions clear` forgets the remembered answers.\n\n"
            );
        }
    }
    if ctx.services.policy.sandbox.is_some() {
        // Whether this system can sandbox, checked once per process.
        let _ = crate::platform::sandbox::availability().await;
    }
    let snapshot = ctx.services.policy.snapshot(&ctx.meters.grants.borrow());
    text.push_str(&snapshot.markdown(ctx.mode()));
    let jobs = ctx.services.background.list();
    if !jobs.is_empty() {
        text.push_str("\n\n**Background commands** (stopped when the session ends):\n");
        for job in jobs {
            let state = match (job.running, job.exit_code) {
                (true, _) => "running".to_string(),
                (false, Some(code)) => format!("ended, exit code {code}"),
                (false, None) => "stopped".to_string(),
            };
            text.push_str(&format!("\n- `{}` `{}`: {state}", job.id, job.command));
        }
        text.push('\n');
    }
    ctx.emit(TurnEvent::Text(text));
    TurnOutcome::ended(history, Ok(StopReason::EndTurn))
}

/// A custom action the user invoked: its name and command line, and the project file that
/// declared it when it is a project's.
#[derive(Debug, Clone)]
pub(crate) struct Invoked {
    /// The action's name (its slash command).
    pub(crate) name: String,
    /// The command line it runs.
    pub(crate) line: String,
    /// The project's `.tandem/config.toml`, for a project's action.
    pub(crate) declared_by: Option<std::path::PathBuf>,
}

/// Runs the command of the custom action `invoked` (its slash command or
/// `_tandem/actions/run`) as a `run_command` call: the mode's permission rules apply, the
/// editor shows it, and the conversation records what ran and what it printed so the model
/// knows. A project's action is a program a cloned repository names, so it always asks
/// first, in every mode, with the command and the file that declared it.
pub(crate) async fn run_action(
    mut ctx: TurnContext,
    mut history: History,
    invoked: Invoked,
    cancel: CancellationToken,
) -> TurnOutcome {
    let Invoked {
        name,
        line,
        declared_by,
    } = invoked;
    ctx.must_ask = declared_by.map(|file| {
        format!(
            "declared by {}: tandem asks before every run of a project's action",
            file.display()
        )
    });
    let call = ToolCall::new(
        format!("action-{}", uuid::Uuid::new_v4()),
        "run_command",
        serde_json::json!({ "command": line }).to_string(),
    );
    let step = ctx.step();
    let caller = Caller {
        ctx: &ctx,
        step: &step,
        subagents: None,
    };
    let ran = calls::run_one(&caller, &call, &cancel, false).await;
    let output = ran.result.content;
    let note = format!("[The user ran the `{name}` action: `{line}`]\n{output}");
    // The action is a turn of its own (a rewind can take it back): what it did is recorded
    // in it.
    let parts = vec![UserPart::Text(note)];
    let sent = crate::types::PromptBlock::of_parts(&parts);
    history.push_prompt(parts, sent);
    history.effects(ran.effects);
    let stop = if cancel.is_cancelled() {
        StopReason::Cancelled
    } else {
        StopReason::EndTurn
    };
    let mut outcome = TurnOutcome::ended(history, Ok(stop));
    outcome.output = Some(output);
    outcome
}
