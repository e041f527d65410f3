//! The `task` tool: a subagent works on a task in a conversation of its own (its system
//! prompt, its tools, maybe its model) under the session's mode and permissions. The editor
//! sees one tool call whose content follows the subagent's work; the parent model reads only
//! the subagent's final answer. The subagent's records go into the parent's transcript,
//! wrapped so they stay out of the parent's history.

use std::collections::HashSet;
use std::sync::Arc;

use parking_lot::Mutex;

use futures::future::BoxFuture;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::TurnContext;
use crate::customize::agents::{AgentDef, GENERAL};
use crate::model::ToolCall;
use crate::store::History;
use crate::types::StopReason;
use crate::types::{EventSink, ToolCallView, ToolContent, ToolKind, ToolStatus, TurnEvent};
use crate::types::{ToolSpec, UserPart};

/// The tool's name.
pub const TOOL: &str = "task";
/// Most characters of the subagent's latest text shown while it works.
const TEXT_TAIL: usize = 600;

/// What a subagent may do.
pub struct Scope {
    /// Its definition.
    pub agent: AgentDef,
    /// The tools it may call (`None`: all but `task`).
    allowed: Option<HashSet<String>>,
}

impl Scope {
    /// Whether the subagent may call `name` (never `task`: subagents do not nest).
    pub fn allows(&self, name: &str) -> bool {
        name != TOOL && self.allowed.as_ref().is_none_or(|a| a.contains(name))
    }
}

/// The `task` tool as the model sees it, listing the subagents.
pub fn spec(agents: &[AgentDef]) -> ToolSpec {
    let mut description = String::from(
        "Hand a self-contained task to a subagent. It works on it alone with its own tools, \
         under the session's mode and permissions, and returns only its final answer, so put \
         everything it needs in `prompt`. Use it for research across many files or a \
         multi-step job whose details you do not need to keep. Subagents:",
    );
    for agent in agents {
        description.push_str(&format!("\n- {}: {}", agent.name, agent.description));
    }
    let names: Vec<&str> = agents.iter().map(|a| a.name.as_str()).collect();
    ToolSpec {
        name: TOOL.into(),
        description,
        parameters: json!({
            "type": "object",
            "properties": {
                "agent": {
                    "type": "string",
                    "enum": names,
                    "description": format!("Which subagent (default `{GENERAL}`)"),
                },
                "description": {
                    "type": "string",
                    "description": "A short title for the task (3-8 words)",
                },
                "prompt": {
                    "type": "string",
                    "description": "The task, complete and self-contained",
                },
            },
            "required": ["description", "prompt"],
            "additionalProperties": false,
        }),
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TaskArgs {
    agent: Option<String>,
    description: String,
    prompt: String,
}

/// Runs a `task` call: returns what the parent model reads and how the call was last shown.
/// (A named, boxed future: a subagent's turn runs tool calls, which is how it was started,
/// and the compiler needs the recursion broken somewhere.)
pub(super) fn run<'a>(
    ctx: &'a TurnContext,
    call: &'a ToolCall,
    cancel: &'a CancellationToken,
) -> BoxFuture<'a, (String, Option<ToolCallView>)> {
    Box::pin(run_task(ctx, call, cancel))
}

async fn run_task(
    ctx: &TurnContext,
    call: &ToolCall,
    cancel: &CancellationToken,
) -> (String, Option<ToolCallView>) {
    let raw: Value = serde_json::from_str(&call.arguments).unwrap_or(Value::Null);
    let args: TaskArgs = match serde_json::from_value(raw.clone()) {
        Ok(args) => args,
        Err(e) => {
            let message = format!("invalid arguments for task: {e}");
            return super::calls::failed_early(ctx, call, "Task".into(), ToolKind::Other, message);
        }
    };
    let name = args.agent.as_deref().unwrap_or(GENERAL);
    let Some(agent) = ctx.extras.agent(name).cloned() else {
        let names: Vec<&str> = ctx.extras.agents.iter().map(|a| a.name.as_str()).collect();
        let message = format!(
            "unknown subagent `{name}`; the subagents are: {}",
            names.join(", ")
        );
        return super::calls::failed_early(ctx, call, "Task".into(), ToolKind::Other, message);
    };
    let view = ToolCallView {
        id: call.id.clone(),
        title: format!("{}: {}", agent.name, args.description.trim()),
        kind: ToolKind::Other,
        status: ToolStatus::Pending,
        locations: Vec::new(),
        raw_input: Some(raw.clone()),
        content: Vec::new(),
    };
    ctx.emit(TurnEvent::ToolCall(view.clone()));
    if let crate::customize::hooks::ToolVerdict::Deny(reason) =
        super::hooked::before_tool(ctx, call, &raw, cancel).await
    {
        let message = format!("Denied by a hook: {reason}");
        return finish(ctx, view, ToolStatus::Failed, message.clone(), message);
    }
    let progress = Arc::new(Progress {
        parent: ctx.sink.clone(),
        call_id: call.id.clone(),
        state: Mutex::default(),
    });
    ctx.emit(TurnEvent::ToolCallUpdate {
        id: call.id.clone(),
        status: Some(ToolStatus::InProgress),
        content: None,
    });

    let mut history = History::new(ctx.transcript.nested(&call.id, &agent.name));
    let mut sub = ctx.clone();
    sub.sink = progress.clone();
    sub.usage = Arc::new(tokio::sync::watch::channel(None).0);
    // The answer format is the parent's business.
    sub.output = None;
    sub.subagent = Some(Arc::new(Scope {
        allowed: agent.tools.as_ref().map(|t| t.iter().cloned().collect()),
        agent: agent.clone(),
    }));
    history.push_user(vec![UserPart::Text(args.prompt.clone())]);
    tracing::info!(session = %ctx.session_id, agent = %agent.name, call = %call.id, "subagent started");
    let outcome = super::run_turn(sub, history, cancel.clone()).await;
    let answer = super::hooked::last_answer(outcome.history.messages())
        .trim()
        .to_string();
    let (status, model) = match &outcome.result {
        Ok(StopReason::Cancelled) => (
            ToolStatus::Failed,
            "Not finished: the user cancelled the turn.".to_string(),
        ),
        Ok(StopReason::Refusal) => (
            ToolStatus::Failed,
            format!("The subagent refused the task. {answer}"),
        ),
        Ok(StopReason::EndTurn) if !answer.is_empty() => (ToolStatus::Completed, answer.clone()),
        Ok(StopReason::EndTurn) => (
            ToolStatus::Completed,
            "The subagent finished without an answer.".to_string(),
        ),
        Ok(StopReason::MaxTokens | StopReason::MaxTurnRequests) => (
            ToolStatus::Completed,
            format!("{answer}\n\n(The subagent stopped before it finished: it ran out of room.)"),
        ),
        Err(e) => (
            ToolStatus::Failed,
            format!("Error: the subagent's model request failed: {e}"),
        ),
    };
    tracing::info!(session = %ctx.session_id, agent = %agent.name, call = %call.id, ?status, "subagent ended");
    let shown = format!("{}\n\n{model}", progress.render());
    let extra = super::hooked::after_tool(
        ctx,
        call,
        &raw,
        &crate::tools::ToolOutput {
            model: model.clone(),
            content: Vec::new(),
            failed: status == ToolStatus::Failed,
        },
    )
    .await
    .unwrap_or_default();
    finish(ctx, view, status, shown, format!("{model}{extra}"))
}

/// Shows the call's final state; returns what the model reads and the view.
fn finish(
    ctx: &TurnContext,
    mut view: ToolCallView,
    status: ToolStatus,
    shown: String,
    model: String,
) -> (String, Option<ToolCallView>) {
    let content = vec![ToolContent::Text { text: shown }];
    ctx.emit(TurnEvent::ToolCallUpdate {
        id: view.id.clone(),
        status: Some(status),
        content: Some(content.clone()),
    });
    view.status = status;
    view.content = content;
    (model, Some(view))
}

/// The subagent's work so far, as the `task` call's content.
#[derive(Default)]
struct ProgressState {
    /// Its tool calls: id, title, status.
    calls: Vec<(String, String, ToolStatus)>,
    /// What it said since its last tool call.
    text: String,
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
    fn render(&self) -> String {
        render(&self.state.lock())
    }
}

/// The `task` call's content for the work so far.
fn render(st: &ProgressState) -> String {
    let mut out = String::new();
    for (_, title, status) in &st.calls {
        let mark = match status {
            ToolStatus::Completed => "✓",
            ToolStatus::Failed => "✗",
            ToolStatus::Pending | ToolStatus::InProgress => "…",
        };
        out.push_str(&format!("{mark} {title}\n"));
    }
    let text = st.text.trim();
    if !text.is_empty() {
        let chars = text.chars().count();
        if chars > TEXT_TAIL {
            let tail: String = text.chars().skip(chars - TEXT_TAIL).collect();
            out.push_str(&format!("\n…{tail}\n"));
        } else {
            out.push_str(&format!("\n{text}\n"));
        }
    }
    if out.is_empty() {
        out.push_str("Working…");
    }
    out.trim_end().to_string()
}

impl EventSink for Progress {
    fn emit(&self, session_id: &str, event: TurnEvent) {
        let changed = {
            let mut st = self.state.lock();
            match event {
                TurnEvent::ToolCall(view) => {
                    st.text.clear();
                    st.shown = 0;
                    match st.calls.iter_mut().find(|c| c.0 == view.id) {
                        Some(c) => c.2 = view.status,
                        None => st.calls.push((view.id, view.title, view.status)),
                    }
                    true
                }
                TurnEvent::ToolCallUpdate {
                    id,
                    status: Some(status),
                    ..
                } => {
                    if let Some(c) = st.calls.iter_mut().find(|c| c.0 == id) {
                        c.2 = status;
                    }
                    true
                }
                TurnEvent::Text(t) => {
                    st.text.push_str(&t);
                    // Whole lines, or every couple of hundred characters: not every token.
                    if t.contains('\n') || st.text.len() >= st.shown + 200 {
                        st.shown = st.text.len();
                        true
                    } else {
                        false
                    }
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
            },
        );
    }
}
