//! Running the tool calls of one model response: read-only calls concurrently, mutating
//! calls one at a time in the model's order, each through the permission policy. Every call
//! gets exactly one result, also when it failed, was refused, or was cancelled.

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::{TurnContext, lock};
use crate::client::PermissionAnswer;
use crate::events::{ToolCallView, ToolContent, ToolKind, ToolStatus, TurnEvent};
use crate::model::{Message, ToolCall};
use crate::permission::{self, Decision, Scope};
use crate::tools::{self, ToolEnv, ToolOutput};

/// Runs `calls`; returns one `Tool` message per call, in order, and whether the turn was
/// cancelled on the way.
pub(super) async fn run_all(
    ctx: &TurnContext,
    calls: Vec<ToolCall>,
    cancel: &CancellationToken,
) -> (Vec<Message>, bool) {
    let mutating: Vec<bool> = calls
        .iter()
        .map(|c| {
            ctx.tools
                .get(&c.name)
                .is_some_and(|t| tools::mutates(t.kind()))
        })
        .collect();
    let mut results: Vec<Option<String>> = vec![None; calls.len()];
    let mut i = 0;
    while i < calls.len() && !cancel.is_cancelled() {
        if mutating[i] {
            results[i] = Some(run_one(ctx, &calls[i], cancel).await);
            i += 1;
            continue;
        }
        let end = (i..calls.len())
            .find(|&j| mutating[j])
            .unwrap_or(calls.len());
        let batch =
            futures::future::join_all(calls[i..end].iter().map(|c| run_one(ctx, c, cancel))).await;
        for (k, result) in batch.into_iter().enumerate() {
            results[i + k] = Some(result);
        }
        i = end;
    }
    let messages = calls
        .iter()
        .zip(results)
        .map(|(call, result)| Message::Tool {
            call_id: call.id.clone(),
            content: result.unwrap_or_else(|| "Not run: the user cancelled the turn.".to_string()),
        })
        .collect();
    (messages, cancel.is_cancelled())
}

fn update(
    ctx: &TurnContext,
    id: &str,
    status: Option<ToolStatus>,
    content: Option<Vec<ToolContent>>,
) {
    ctx.emit(TurnEvent::ToolCallUpdate {
        id: id.to_string(),
        status,
        content,
    });
}

/// Shows a call that could not even start, and returns what the model reads.
fn failed_early(
    ctx: &TurnContext,
    call: &ToolCall,
    title: String,
    kind: ToolKind,
    message: String,
) -> String {
    ctx.emit(TurnEvent::ToolCall(ToolCallView {
        id: call.id.clone(),
        title,
        kind,
        status: ToolStatus::Failed,
        locations: Vec::new(),
        raw_input: serde_json::from_str(&call.arguments).ok(),
        content: vec![ToolContent::Text(message.clone())],
    }));
    format!("Error: {message}")
}

/// Runs one call through the policy; returns what the model reads.
async fn run_one(ctx: &TurnContext, call: &ToolCall, cancel: &CancellationToken) -> String {
    let Some(tool) = ctx.tools.get(&call.name) else {
        let message = format!(
            "unknown tool `{}`; the tools are: {}",
            call.name,
            ctx.tools.names()
        );
        return failed_early(
            ctx,
            call,
            format!("Unknown tool `{}`", call.name),
            ToolKind::Think,
            message,
        );
    };
    let args: Value = if call.arguments.trim().is_empty() {
        Value::Object(Default::default())
    } else {
        match serde_json::from_str(&call.arguments) {
            Ok(v) => v,
            Err(e) => {
                let shown: String = call.arguments.chars().take(200).collect();
                let message = format!(
                    "the arguments of {} are not valid JSON ({e}): {shown}. Send the call again with complete JSON arguments.",
                    call.name
                );
                return failed_early(ctx, call, call.name.clone(), tool.kind(), message);
            }
        }
    };
    let prepared = match tool.prepare(args.clone(), &ctx.cwd) {
        Ok(p) => p,
        Err(message) => return failed_early(ctx, call, call.name.clone(), tool.kind(), message),
    };
    let mut view = ToolCallView {
        id: call.id.clone(),
        title: prepared.title,
        kind: tool.kind(),
        status: ToolStatus::Pending,
        locations: prepared.locations,
        raw_input: Some(args),
        content: Vec::new(),
    };
    let announced = tool.announced();
    if announced {
        ctx.emit(TurnEvent::ToolCall(view.clone()));
    }
    let show = |status: Option<ToolStatus>, content: Option<Vec<ToolContent>>| {
        if announced {
            update(ctx, &call.id, status, content);
        }
    };

    // The mode is read now: a switch mid-turn applies from the next tool call.
    let mode = lock(&ctx.settings).mode;
    let scope = Scope::of(tool.name(), &prepared.access);
    let roots = [ctx.cwd.clone()];
    let decision = lock(&ctx.grants).apply(
        permission::decide(mode, &prepared.access, &roots),
        scope.as_ref(),
    );
    let env = ToolEnv {
        session_id: ctx.session_id.clone(),
        cwd: ctx.cwd.clone(),
        client: ctx.client.clone(),
        caps: ctx.caps,
        sink: ctx.sink.clone(),
        call_id: call.id.clone(),
        cancel: cancel.clone(),
    };
    let mut work = prepared.call;
    match decision {
        Decision::Allow => {}
        Decision::Refuse(reason) => {
            show(
                Some(ToolStatus::Failed),
                Some(vec![ToolContent::Text(reason.clone())]),
            );
            return reason;
        }
        Decision::Ask => {
            let preview = match work.preview(&env).await {
                Ok(content) => content,
                Err(out) => {
                    show(Some(ToolStatus::Failed), Some(out.content));
                    return out.model;
                }
            };
            if !preview.is_empty() {
                show(None, Some(preview.clone()));
            }
            view.content = preview;
            let answer = tokio::select! {
                answer = ctx.client.request_permission(&ctx.session_id, &view) => answer,
                () = cancel.cancelled() => Ok(PermissionAnswer::Cancelled),
            };
            match answer {
                Ok(PermissionAnswer::AllowOnce) => {}
                Ok(PermissionAnswer::AllowAlways) => {
                    if let Some(scope) = scope {
                        lock(&ctx.grants).remember(scope, true);
                    }
                }
                Ok(answer @ (PermissionAnswer::RejectOnce | PermissionAnswer::RejectAlways)) => {
                    if let (PermissionAnswer::RejectAlways, Some(scope)) = (answer, scope) {
                        lock(&ctx.grants).remember(scope, false);
                    }
                    show(
                        Some(ToolStatus::Failed),
                        Some(vec![ToolContent::Text("Rejected by the user.".into())]),
                    );
                    return "Rejected: the user declined this tool call. Do not retry it unchanged; ask the user how to proceed or try another approach.".into();
                }
                Ok(PermissionAnswer::Cancelled) => {
                    cancel.cancel();
                    show(Some(ToolStatus::Failed), None);
                    return "Not run: the user cancelled the turn.".into();
                }
                Err(e) => {
                    let message = format!(
                        "the editor could not ask the user for permission: {}",
                        e.message
                    );
                    show(
                        Some(ToolStatus::Failed),
                        Some(vec![ToolContent::Text(message.clone())]),
                    );
                    return format!("Error: {message}");
                }
            }
        }
    }

    show(Some(ToolStatus::InProgress), None);
    let output = if tools::mutates(tool.kind()) {
        // Edits and commands stop themselves on cancel (a command is killed and released).
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
    show(Some(status), Some(output.content));
    if cancel.is_cancelled() && output.failed {
        return format!("{}\n(The user cancelled the turn.)", output.model);
    }
    output.model
}
