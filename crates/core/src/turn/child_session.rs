//! A subagent in a session of its own, for an editor that advertised `subagents`: announced
//! on the parent (title, description, folder, the right to cancel it), handed its task as a
//! message from the parent, then running, its messages, plans and tool calls (and its
//! permission questions and editor requests) under its own session id, then idle with how it
//! ended and what it spent. `session/cancel` naming the child stops its work alone; the
//! parent's turn goes on and its model is told. The `task` call on the parent says where the
//! work is shown and ends with the subagent's answer, which is also what a `session/load`
//! replays (a child lives only while the connection does).

use super::context::TurnContext;
use super::delegated::{Ready, RunTurn, answer};
use crate::tools::{Delegation, ToolEnv, ToolOutput};
use crate::types::{ChildEnd, ChildState, ChildUpdate, ToolContent, TurnEvent};

/// Runs `task` (made `ready`) for the call `env.call_id` as a child session of the turn's.
pub(super) async fn work(
    ctx: TurnContext,
    run: RunTurn,
    task: Delegation,
    ready: Ready,
    env: ToolEnv,
) -> ToolOutput {
    let parent = ctx.facts.session_id.clone();
    let child = uuid::Uuid::new_v4().to_string();
    // Its own cancel, under the parent's: the parent's cancel stops it too.
    let cancel = env.cancel.child_token();
    let _working = ctx.services.children.enter(&child, &parent, cancel.clone());
    let update = |state| {
        TurnEvent::Child(ChildUpdate {
            id: child.clone(),
            state,
        })
    };
    ctx.emit(update(ChildState::Announced {
        title: task.title.clone(),
        description: task.agent.description.clone(),
        cwd: ctx.facts.cwd.clone(),
    }));
    ctx.sink.emit(
        &child,
        TurnEvent::MessageFrom {
            sender: parent.clone(),
            recipient: child.clone(),
            text: task.prompt.clone(),
        },
    );
    ctx.emit(update(ChildState::Running));
    ctx.emit(TurnEvent::ToolCallUpdate {
        id: env.call_id.clone(),
        status: None,
        content: Some(vec![ToolContent::Text {
            text: format!("Working in a session of its own: {}", task.title),
        }]),
        title: None,
    });
    let before = *ctx.meters.totals.borrow();
    let sub = ctx.for_subagent(ready.role, ctx.sink.clone(), Some(&child));
    let agent = &task.agent.name;
    tracing::info!(session = %parent, %child, %agent, call = %env.call_id, "subagent started in a session of its own");
    let outcome = run(sub, ready.history, cancel.clone()).await;
    let (failed, mut model) = answer(&outcome);
    // Stopped by the user from the child's session, not with the parent's turn.
    let stopped_alone = cancel.is_cancelled() && !env.cancel.is_cancelled();
    if stopped_alone {
        let so_far = crate::conversation::last_answer(outcome.history.messages());
        model = "The user stopped this subagent before it finished.".to_string();
        if !so_far.trim().is_empty() {
            model.push_str(&format!(" What it had written so far: {}", so_far.trim()));
        }
    }
    let ended = match &outcome.result {
        Ok(stop) => ChildEnd::Stopped(*stop),
        Err(e) => ChildEnd::Failed(e.to_string()),
    };
    let usage = ctx.meters.totals.borrow().since(&before).tokens();
    ctx.emit(update(ChildState::Idle { ended, usage }));
    tracing::info!(session = %parent, %child, %agent, failed, stopped_alone, "subagent ended");
    ToolOutput {
        content: vec![ToolContent::Text {
            text: model.clone(),
        }],
        model,
        images: Vec::new(),
        failed,
        title: None,
        keeps_running: false,
    }
}
