//! Running the tool calls of one model response: read-only calls concurrently, mutating
//! calls one at a time in the model's order, each through the permission policy. Every call
//! gets exactly one result, also when it failed, was refused, or was cancelled, and every call
//! the editor was shown ends there `completed` or `failed` (but a background command, which
//! stays in progress while it runs). Each call's file changes are recorded write-ahead in the
//! transcript as they are made (its journal has a [`WriteAhead`] ledger); what else it did
//! (the commands it started) is recorded with its result.

use std::sync::Arc;

use futures::StreamExt;
use futures::stream::FuturesUnordered;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::context::{Step, TurnContext};
use super::outcome::CANCELLED;
use super::shown::Shown;
use crate::conversation::ToolResult;
use crate::model::ToolCall;
use crate::store::history::WriteAhead;
use crate::store::{History, Transcript};
use crate::tools::{self, Call, Ready, ToolEnv, ToolOutput, Unusable};
use crate::types::{
    Effect, Journal, Severity, ToolCallView, ToolContent, ToolKind, ToolStatus, TurnEvent,
};

/// A call's answer: what the model reads, how the editor last showed it (when it did), and
/// what the call did that is recorded with its result (file changes were recorded as they
/// were made).
pub(super) struct CallAnswer {
    pub(super) result: ToolResult,
    pub(super) view: Option<ToolCallView>,
    pub(super) effects: Vec<Effect>,
}

impl CallAnswer {
    /// Records the answer of the call the model knows as `model_id` in `history`: what it
    /// did first, then its result.
    fn record(self, history: &mut History, model_id: &str) {
        history.effects(self.effects);
        history.answer(model_id, self.result, self.view);
    }
}

/// Who runs one response's calls: the turn's context, the request's [`Step`] (whose model's
/// tools are offered) and, in the session's own turns, what starts subagents.
pub(super) struct Caller<'a> {
    /// The turn's context.
    pub(super) ctx: &'a TurnContext,
    /// The request the calls came in.
    pub(super) step: &'a Step,
    /// What runs a `task` call's subagent, when this turn may start one.
    pub(super) subagents: Option<Arc<dyn tools::Subagents>>,
}

impl Caller<'_> {
    fn find_tool(&self, name: &str) -> Option<Arc<dyn tools::Tool>> {
        self.ctx.find_tool(self.step, name)
    }

    /// `call` parsed and its paths resolved, or why it cannot run.
    fn prepare(&self, call: &ToolCall) -> Result<Ready, Unusable> {
        let ctx = self.ctx;
        ctx.services
            .tools
            .prepare(call, &ctx.facts.place(), |n| ctx.offers(self.step, n))
    }
}

/// One response's calls as the editor knows them (ids unique in the session, see
/// [`crate::store::CallIds`]), and the ids the model gave them, which their results answer.
pub(super) struct Issued {
    calls: Vec<ToolCall>,
    model_ids: Vec<String>,
    /// Per call, whether the editor was shown it while the model was writing it.
    early: Vec<bool>,
}

impl Issued {
    /// `calls` as the model made them, shown to the editor under `shown_ids`; those in
    /// `early` were shown while they streamed.
    pub(super) fn new(calls: Vec<ToolCall>, shown_ids: Vec<String>, early: &[String]) -> Self {
        let model_ids = calls.iter().map(|c| c.id.clone()).collect();
        let early = shown_ids.iter().map(|id| early.contains(id)).collect();
        let calls = calls
            .into_iter()
            .zip(shown_ids)
            .map(|(call, id)| ToolCall { id, ..call })
            .collect();
        Self {
            calls,
            model_ids,
            early,
        }
    }
}

/// Runs `issued` and answers each in `history` as soon as its result is known (its record is
/// queued at once and the transcript's writer, woken by it, writes it while the next call
/// runs, so a crash later in the turn keeps it); returns whether the turn was cancelled on the
/// way, in which case the calls not run are answered as such.
/// `refusals` holds, per call, what the model reads instead when the call must not run (see
/// [`super::guard`]).
pub(super) async fn run_all(
    caller: &Caller<'_>,
    history: &mut History,
    issued: Issued,
    refusals: Vec<Option<String>>,
    cancel: &CancellationToken,
) -> bool {
    let Issued {
        calls,
        model_ids,
        early,
    } = issued;
    let mutating: Vec<bool> = calls
        .iter()
        .map(|c| {
            // A subagent (`task`) may change things: its kind runs alone, in the model's order.
            caller
                .find_tool(&c.name)
                .is_some_and(|t| tools::mutates(t.kind()))
        })
        .collect();
    let mut done: Vec<bool> = vec![false; calls.len()];
    for (i, refusal) in refusals.into_iter().enumerate() {
        if let (Some(reason), Some(call)) = (refusal, calls.get(i)) {
            let (content, view) = refused(caller, call, reason, early[i]);
            history.answer(&model_ids[i], content.into(), view);
            done[i] = true;
        }
    }
    let mut i = 0;
    while i < calls.len() && !cancel.is_cancelled() {
        if done[i] {
            i += 1;
            continue;
        }
        if mutating[i] {
            let transcript = history.transcript();
            let answer = run_recorded(caller, &calls[i], cancel, early[i], transcript).await;
            answer.record(history, &model_ids[i]);
            done[i] = true;
            i += 1;
            continue;
        }
        let end = (i..calls.len())
            .find(|&j| mutating[j] || done[j])
            .unwrap_or(calls.len());
        // Read-only calls run together; each is answered as it finishes.
        let transcript = history.transcript().clone();
        let mut batch: FuturesUnordered<_> = (i..end)
            .map(|j| {
                let (call, early, transcript) = (&calls[j], early[j], &transcript);
                async move {
                    (
                        j,
                        run_recorded(caller, call, cancel, early, transcript).await,
                    )
                }
            })
            .collect();
        while let Some((j, answer)) = batch.next().await {
            answer.record(history, &model_ids[j]);
        }
        for flag in &mut done[i..end] {
            *flag = true;
        }
        i = end;
    }
    // A call the editor was shown while it streamed, and that the cancel kept from running,
    // ends failed there too (and so in a load's replay).
    for (i, call) in calls.iter().enumerate() {
        if !done[i] && early[i] {
            let (content, view) = refused(caller, call, CANCELLED.into(), true);
            history.answer(&model_ids[i], content.into(), view);
        }
    }
    history.close_unanswered(CANCELLED);
    cancel.is_cancelled()
}

/// Shows a call that tandem will not run (see [`super::guard`], or one a cancel kept from
/// running) as failed with `reason`, which is also what the model reads.
fn refused(
    caller: &Caller<'_>,
    call: &ToolCall,
    reason: String,
    early: bool,
) -> (String, Option<ToolCallView>) {
    let (title, kind) = match caller.prepare(call) {
        Ok(ready) => (ready.prepared.title, ready.tool.kind()),
        Err(_) => caller
            .find_tool(&call.name)
            .map_or((call.name.clone(), ToolKind::Other), |t| {
                (t.label(), t.kind())
            }),
    };
    let view = show_failed(caller.ctx, call, title, kind, reason.clone(), early);
    (reason, Some(view))
}

/// Shows a call that could not even start, and returns what the model reads.
fn failed_early(
    ctx: &TurnContext,
    call: &ToolCall,
    unusable: Unusable,
    early: bool,
) -> (String, Option<ToolCallView>) {
    if let Some(notice) = &unusable.notice {
        ctx.emit(TurnEvent::Notice {
            severity: Severity::Warning,
            text: notice.clone(),
        });
    }
    let message = unusable.message;
    let view = show_failed(
        ctx,
        call,
        unusable.title,
        unusable.kind,
        message.clone(),
        early,
    );
    (format!("Error: {message}"), Some(view))
}

/// Announces `call` as failed with `message` and returns how it was shown.
fn show_failed(
    ctx: &TurnContext,
    call: &ToolCall,
    title: String,
    kind: ToolKind,
    message: String,
    early: bool,
) -> ToolCallView {
    let view = ToolCallView {
        id: call.id.clone(),
        title,
        kind,
        status: ToolStatus::Failed,
        locations: Vec::new(),
        raw_input: echoed(&call.arguments),
        content: vec![ToolContent::Text { text: message }],
    };
    ctx.emit(shown_event(view.clone(), early));
    view
}

/// How a call is shown whole: a new `tool_call`, or every field again for one shown while it
/// streamed.
fn shown_event(view: ToolCallView, early: bool) -> TurnEvent {
    if early {
        TurnEvent::ToolCallReady(view)
    } else {
        TurnEvent::ToolCall(view)
    }
}

/// Longest arguments a failed call shows the editor whole.
const MAX_ECHOED_ARGUMENTS: usize = 2048;

/// A failed call's arguments as the editor is shown them: whole when short, else their
/// start and size (an unknown tool's megabyte of arguments is not sent back whole).
fn echoed(arguments: &str) -> Option<Value> {
    if arguments.len() <= MAX_ECHOED_ARGUMENTS {
        return serde_json::from_str(arguments).ok();
    }
    let mut end = 300;
    while !arguments.is_char_boundary(end) {
        end -= 1;
    }
    Some(serde_json::json!({
        "truncated": format!("{}…", &arguments[..end]),
        "bytes": arguments.len(),
    }))
}

/// Runs one call: the registry prepares it (or says what the model reads instead), the
/// editor is shown it, [`permit`](super::permit::permit) decides (hooks, rules, mode, and
/// the user when asked), and then it runs; its file changes are recorded ahead in the
/// session's transcript.
pub(super) async fn run_one(
    caller: &Caller<'_>,
    call: &ToolCall,
    cancel: &CancellationToken,
    early: bool,
) -> CallAnswer {
    let transcript = &caller.ctx.services.transcript;
    run_recorded(caller, call, cancel, early, transcript).await
}

/// [`run_one`], recording its file changes ahead in `transcript` (a subagent's is its
/// parent's, nested).
async fn run_recorded(
    caller: &Caller<'_>,
    call: &ToolCall,
    cancel: &CancellationToken,
    early: bool,
    transcript: &Transcript,
) -> CallAnswer {
    let journal = Journal::write_ahead(Arc::new(WriteAhead::new(transcript.clone())));
    let (result, view) = run_noted(caller, call, cancel, early, journal.clone()).await;
    CallAnswer {
        result,
        view,
        effects: journal.take(),
    }
}

/// [`run_one`], noting what the call does in `journal`.
async fn run_noted(
    caller: &Caller<'_>,
    call: &ToolCall,
    cancel: &CancellationToken,
    early: bool,
    journal: Journal,
) -> (ToolResult, Option<ToolCallView>) {
    let ctx = caller.ctx;
    let Ready {
        tool,
        args,
        prepared,
    } = match caller.prepare(call) {
        Ok(ready) => ready,
        Err(unusable) => {
            let (content, view) = failed_early(ctx, call, unusable, early);
            return (content.into(), view);
        }
    };
    let view = ToolCallView {
        id: call.id.clone(),
        title: prepared.title,
        kind: tool.kind(),
        status: ToolStatus::Pending,
        locations: prepared.locations,
        raw_input: Some(args.clone()),
        content: Vec::new(),
    };
    let announced = tool.announced();
    if announced {
        ctx.emit(shown_event(view.clone(), early));
    }
    let mut shown = Shown::new(ctx, view, announced);
    let env = ToolEnv {
        scope: ctx.tool_scope(),
        call_id: call.id.clone(),
        cancel: cancel.clone(),
        subagents: caller.subagents.clone(),
        permitted: false,
        // The mode is read as the policy reads it: `full-access` runs commands unconfined.
        sandbox: match ctx.mode() {
            crate::types::Mode::FullAccess => None,
            _ => ctx.services.policy.sandbox.clone(),
        },
        journal,
    };
    let mut work = prepared.call;
    if let Err(super::permit::Refusal(model)) = super::permit::permit(
        ctx,
        call,
        &args,
        &prepared.access,
        &mut work,
        &env,
        &mut shown,
    )
    .await
    {
        return shown.done(model);
    }
    execute(caller, call, &args, tool.kind(), work, env, shown).await
}

/// Runs a permitted call and its `post_tool_use` hooks; returns what the model reads.
async fn execute(
    caller: &Caller<'_>,
    call: &ToolCall,
    args: &Value,
    kind: ToolKind,
    work: Box<dyn Call>,
    env: ToolEnv,
    mut shown: Shown<'_>,
) -> (ToolResult, Option<ToolCallView>) {
    let ctx = caller.ctx;
    let cancel = env.cancel.clone();
    let env = ToolEnv {
        permitted: true,
        ..env
    };
    shown.update(Some(ToolStatus::InProgress), None);
    let output = if tools::mutates(kind) {
        // Edits, commands and subagents stop themselves on cancel (a command is killed and
        // released).
        work.run(env).await
    } else {
        tokio::select! {
            out = work.run(env) => out,
            () = cancel.cancelled() => ToolOutput::error("cancelled by the user"),
        }
    };
    let status = if output.failed {
        ToolStatus::Failed
    } else {
        ToolStatus::Completed
    };
    let extra = if cancel.is_cancelled() {
        None
    } else {
        super::hooks::after_tool(ctx, call, args, &output).await
    };
    if let Some(title) = output.title {
        shown.retitle(title);
    }
    if cancel.is_cancelled() && output.failed {
        // Ended failed like any other call: a client that shows status would keep it running.
        shown.update(Some(status), Some(output.content));
        return shown.done(format!("{}\n(The user cancelled the turn.)", output.model));
    }
    if output.keeps_running && !output.failed {
        // A background command's call stays in progress in the editor (its job reports how
        // it ends); a load replays it as started.
        shown.leave(status, Some(output.content));
    } else {
        shown.update(Some(status), Some(output.content));
    }
    let spec = &caller.step.spec;
    if let Some(note) = super::estimate::call_images_left_out(output.images.len(), spec) {
        ctx.emit(TurnEvent::Notice {
            severity: Severity::Info,
            text: note,
        });
    }
    shown.done(ToolResult {
        content: format!("{}{}", output.model, extra.unwrap_or_default()),
        images: output.images,
    })
}
