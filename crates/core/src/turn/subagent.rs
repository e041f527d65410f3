//! Running a `task` call's subagent (the tool itself is tools/task.rs): a conversation of its
//! own (its system prompt, its tools, maybe its model) under the session's mode and
//! permissions. An editor that advertised `subagents` follows it as a session of its own
//! (child_session.rs); any other sees one tool call whose content follows the subagent's
//! work. The parent model reads only the subagent's final answer. The subagent's records go
//! into the parent's transcript, wrapped so they stay out of the parent's history.

use std::sync::Arc;

use futures::future::BoxFuture;
use parking_lot::Mutex;

use super::context::TurnContext;
use super::delegated::{Ready, RunTurn, answer};
use crate::tools::{Delegation, Subagents, ToolEnv, ToolOutput};
use crate::types::{EventSink, ToolContent, ToolStatus, TurnEvent};

/// Most characters of the subagent's latest text shown while it works.
const TEXT_TAIL: usize = 600;

/// Runs the subagents of a session's own turn (the `task` tool's [`Subagents`]).
pub(super) struct Runner {
    ctx: TurnContext,
    run: RunTurn,
}

impl Runner {
    /// Subagents started from the turn `ctx`, whose turns `run` runs.
    pub(super) fn new(ctx: TurnContext, run: RunTurn) -> Self {
        Self { ctx, run }
    }
}

impl Subagents for Runner {
    fn run(&self, task: Delegation, env: ToolEnv) -> BoxFuture<'static, ToolOutput> {
        Box::pin(work(self.ctx.clone(), self.run, task, env))
    }
}

/// The subagent's turn: under the parent's mode, grants and cancel token, with its own
/// prompt, tools, model and history (recorded in the parent's transcript, wrapped). The
/// editor follows its calls and words in a session of its own when it can, in the `task`
/// call's content otherwise; the parent model reads its final answer.
async fn work(ctx: TurnContext, run: RunTurn, task: Delegation, env: ToolEnv) -> ToolOutput {
    let ready = Ready::new(&ctx, &task, &env.call_id);
    if ctx.services.caps.subagents {
        return super::child_session::work(ctx, run, task, ready, env).await;
    }
    let progress = Arc::new(Progress {
        parent: ctx.sink.clone(),
        call_id: env.call_id.clone(),
        state: Mutex::default(),
    });
    let agent = &task.agent.name;
    let sub = ctx.for_subagent(ready.role, progress.clone(), None);
    tracing::info!(session = %ctx.facts.session_id, %agent, call = %env.call_id, "subagent started");
    let outcome = run(sub, ready.history, env.cancel.clone()).await;
    let (failed, model) = answer(&outcome);
    tracing::info!(session = %ctx.facts.session_id, %agent, call = %env.call_id, failed, "subagent ended");
    let shown = progress.ended(&model);
    ToolOutput {
        model,
        images: Vec::new(),
        content: vec![ToolContent::Text { text: shown }],
        failed,
        title: None,
        keeps_running: false,
    }
}

/// The subagent's work so far, as the `task` call's content.
#[derive(Default)]
struct ProgressState {
    /// Its tool calls: id, title, status.
    calls: Vec<(String, String, ToolStatus)>,
    /// What it said since its last tool call, with its notes.
    text: String,
    /// What it said since its last tool call, without them.
    said: String,
    /// `text`'s length when last shown.
    shown: usize,
    /// The content last sent, so an unchanged one is not sent again.
    sent: String,
}

/// The subagent's event sink: folds its events into updates of the one `task` call.
struct Progress {
    parent: Arc<dyn EventSink>,
    call_id: String,
    state: Mutex<ProgressState>,
}

impl Progress {
    fn ended(&self, answer: &str) -> String {
        ended(&self.state.lock(), answer)
    }
}

/// The `task` call's content for the work so far.
fn render(st: &ProgressState) -> String {
    let mut out = calls(st);
    push_text(&mut out, &st.text);
    if out.is_empty() {
        out.push_str("Working…");
    }
    out.trim_end().to_string()
}

/// The `task` call's last content: the subagent's calls, then `answer` (what the parent model
/// reads). The text it was writing is left out when the answer holds it, as it does when the
/// subagent finished: the editor replaces the call's content with this, and would otherwise
/// show the answer twice. A cancelled or failed subagent's words so far stay.
fn ended(st: &ProgressState, answer: &str) -> String {
    let mut out = calls(st);
    if !answer.contains(st.said.trim()) {
        push_text(&mut out, &st.text);
    }
    if !out.is_empty() {
        out.push('\n');
    }
    out.push_str(answer);
    out.trim().to_string()
}

/// The subagent's calls, one line each, with how each is going.
fn calls(st: &ProgressState) -> String {
    let mut out = String::new();
    for (_, title, status) in &st.calls {
        let mark = match status {
            ToolStatus::Completed => "✓",
            ToolStatus::Failed => "✗",
            ToolStatus::Pending | ToolStatus::InProgress => "…",
        };
        out.push_str(&format!("{mark} {title}\n"));
    }
    out
}

/// Adds `text` (its tail, when long) after a blank line.
fn push_text(out: &mut String, text: &str) {
    let text = text.trim();
    if text.is_empty() {
        return;
    }
    let chars = text.chars().count();
    if chars > TEXT_TAIL {
        let tail: String = text.chars().skip(chars - TEXT_TAIL).collect();
        out.push_str(&format!("\n…{tail}\n"));
    } else {
        out.push_str(&format!("\n{text}\n"));
    }
}

impl EventSink for Progress {
    fn emit(&self, session_id: &str, event: TurnEvent) {
        let changed = {
            let mut st = self.state.lock();
            match event {
                TurnEvent::ToolCall(view) | TurnEvent::ToolCallReady(view) => {
                    st.text.clear();
                    st.said.clear();
                    st.shown = 0;
                    match st.calls.iter_mut().find(|c| c.0 == view.id) {
                        Some(c) => (c.1, c.2) = (view.title, view.status),
                        None => st.calls.push((view.id, view.title, view.status)),
                    }
                    true
                }
                TurnEvent::ToolCallUpdate {
                    id, status, title, ..
                } if status.is_some() || title.is_some() => {
                    if let Some(c) = st.calls.iter_mut().find(|c| c.0 == id) {
                        if let Some(status) = status {
                            c.2 = status;
                        }
                        if let Some(title) = title {
                            c.1 = title;
                        }
                    }
                    true
                }
                TurnEvent::Text(t) => {
                    st.text.push_str(&t);
                    st.said.push_str(&t);
                    // Whole lines, or every couple of hundred characters: not every token.
                    if t.contains('\n') || st.text.len() >= st.shown + 200 {
                        st.shown = st.text.len();
                        true
                    } else {
                        false
                    }
                }
                // Its own notes (a guard, a cut) show in its text as they did in an answer.
                TurnEvent::Notice { text, .. } => {
                    st.text.push_str(&format!("\n\n_{}_\n\n", text.trim()));
                    st.shown = st.text.len();
                    true
                }
                // Its reasoning, context use and plan are its own.
                _ => false,
            }
        };
        let text = {
            let mut st = self.state.lock();
            let text = render(&st);
            if !changed || text == st.sent {
                return;
            }
            st.sent = text.clone();
            text
        };
        self.parent.emit(
            session_id,
            TurnEvent::ToolCallUpdate {
                id: self.call_id.clone(),
                status: None,
                content: Some(vec![ToolContent::Text { text }]),
                title: None,
            },
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(text: &str, note: Option<&str>) -> ProgressState {
        let mut st = ProgressState {
            calls: vec![("s1".into(), "List src".into(), ToolStatus::Completed)],
            text: text.into(),
            said: text.into(),
            ..ProgressState::default()
        };
        if let Some(note) = note {
            st.text.push_str(&format!("\n\n_{note}_\n\n"));
        }
        st
    }

    #[test]
    fn the_last_content_shows_the_answer_once_and_words_it_does_not_hold() {
        let answer = "src holds lib.rs.";
        assert_eq!(
            ended(&state(answer, None), answer),
            "✓ List src\n\nsrc holds lib.rs."
        );
        // Its answer cut short, with the note: the answer once.
        let cut =
            format!("{answer}\n\n(The subagent stopped before it finished: it ran out of room.)");
        assert_eq!(
            ended(&state(answer, Some("cut short")), &cut)
                .matches(answer)
                .count(),
            1
        );
        // Cancelled: what it had written stays above why it stopped.
        assert_eq!(
            ended(&state("half a tho", None), "Not finished."),
            "✓ List src\n\nhalf a tho\n\nNot finished."
        );
        assert_eq!(ended(&ProgressState::default(), answer), answer);
    }
}
