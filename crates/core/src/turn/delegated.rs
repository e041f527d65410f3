//! What both ways of showing a subagent share (subagent.rs inside its `task` call,
//! child_session.rs as a session of its own): its turn made ready to run, and what the parent
//! model is told of how it went.

use std::sync::Arc;

use futures::future::BoxFuture;
use tokio_util::sync::CancellationToken;

use super::context::TurnContext;
use super::outcome::TurnOutcome;
use super::role::{Role, Subagent};
use crate::store::History;
use crate::tools::Delegation;
use crate::types::{StopReason, UserPart};

/// How a subagent's turn is run: the turn loop, handed in by the loop itself (so this file
/// does not depend on it).
pub(super) type RunTurn =
    fn(TurnContext, History, CancellationToken) -> BoxFuture<'static, TurnOutcome>;

/// A subagent's turn, ready to run: its history (the task as its one user message) and its
/// role.
pub(super) struct Ready {
    pub(super) history: History,
    pub(super) role: Role,
}

impl Ready {
    /// `task` for the call `call_id` of the turn `ctx`.
    pub(super) fn new(ctx: &TurnContext, task: &Delegation, call_id: &str) -> Self {
        let agent = &task.agent;
        let mut history = History::nested(
            ctx.services.transcript.nested(call_id, &agent.name),
            call_id,
        );
        history.push_user(vec![UserPart::Text(task.prompt.clone())]);
        Ready {
            history,
            role: Role::Subagent(Arc::new(Subagent::new(agent.clone()))),
        }
    }
}

/// What the parent model is told of a subagent's turn, and whether that counts as a failed
/// call.
pub(super) fn answer(outcome: &TurnOutcome) -> (bool, String) {
    let answer = crate::conversation::last_answer(outcome.history.messages())
        .trim()
        .to_string();
    match &outcome.result {
        Ok(StopReason::Cancelled) => (true, "Not finished.".to_string()),
        Ok(StopReason::Refusal) => (true, format!("The subagent refused the task. {answer}")),
        Ok(StopReason::EndTurn) if !answer.is_empty() => (false, answer),
        Ok(StopReason::EndTurn) => (
            false,
            "The subagent finished without an answer.".to_string(),
        ),
        Ok(StopReason::MaxTokens | StopReason::MaxTurnRequests) => (
            false,
            format!("{answer}\n\n(The subagent stopped before it finished: it ran out of room.)"),
        ),
        Err(e) => (
            true,
            format!("Error: the subagent's model request failed: {e}"),
        ),
    }
}
