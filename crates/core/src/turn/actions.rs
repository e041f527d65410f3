//! The user's custom actions (`[[actions]]`): a slash command (or `_tandem/actions/run`) that
//! runs a command line like a `run_command` call, as a turn of its own.

use tokio_util::sync::CancellationToken;

use super::calls::{self, Caller};
use super::context::TurnContext;
use super::outcome::TurnOutcome;
use crate::model::ToolCall;
use crate::store::History;
use crate::types::{StopReason, UserPart};

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
