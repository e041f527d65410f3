//! The question a session's first prompt asks about the MCP servers its project declares and
//! the user has not trusted yet (held back when the session opened, session/trust.rs).
//!
//! Before the turn's first model request (where it waits for its MCP servers anyway), each
//! held server is asked about once, with a `session/request_permission` whose tool call names
//! the exact command line (program, arguments, the names of the variables it sets, where it
//! runs) or URL, and the file that declares it. The answers:
//! - allow once: it starts now, for this session only (and only while its code stays what
//!   was asked about: a change before a restart asks again);
//! - always allow: it starts, and this definition is trusted in this project from now on;
//! - reject: it does not start in this session (the user's own server of that name, if any,
//!   starts instead);
//! - always reject: the same, and this definition is never asked about again.
//!
//! A definition answered meanwhile in another session of the project is not asked again.
//! Cancelling the prompt while asking cancels the turn; the servers not yet answered stay
//! held, for the next prompt. `/permissions` shows the project's answers and `/permissions
//! untrust` forgets them (permissions_command.rs). The model never sees any of it.

use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::context::TurnContext;
use crate::mcp::{Held, Trusted};
use crate::permission::trust::{self, Declared, TrustEntry, TrustStore, Verdict};
use crate::types::{Location, ToolCallView, ToolContent, ToolKind, ToolStatus, TurnEvent};
use crate::types::{PermissionAnswer, PermissionChoice};

/// The turn was cancelled while the user was being asked.
pub(super) struct Cancelled;

/// Asks about every server the session holds back, starts the ones the user allows (or
/// trusted meanwhile), and remembers "always" answers.
pub(super) async fn ask_held(
    ctx: &TurnContext,
    cancel: &CancellationToken,
) -> Result<(), Cancelled> {
    if !ctx.role.asks_about_project_servers() {
        return Ok(());
    }
    let held = ctx.services.mcp.take_held();
    if held.is_empty() {
        return Ok(());
    }
    let mut held = held.into_iter();
    let store = TrustStore::new(&ctx.facts.config.home);
    while let Some(server) = held.next() {
        let declared = Declared::mcp_server(&server.spec, &server.source);
        // Another session of the project may have been answered meanwhile.
        let answer = match store.verdict(&ctx.facts.cwd, &declared.fingerprint) {
            Some(Verdict::Trusted) => {
                start(ctx, server, declared);
                continue;
            }
            Some(Verdict::Refused) => {
                refuse(ctx, server, trust::REFUSED);
                continue;
            }
            None => ask(ctx, &server, &declared, cancel).await,
        };
        if answer == PermissionAnswer::Cancelled {
            let why = trust::HELD.to_string();
            ctx.services.mcp.hold(server, why.clone());
            for rest in held {
                ctx.services.mcp.hold(rest, why.clone());
            }
            cancel.cancel();
            return Err(Cancelled);
        }
        settle(ctx, &store, server, declared, answer);
    }
    Ok(())
}

/// Starts `server` on the trust given to `declared`: the hub checks its files against it
/// before this start and every restart.
fn start(ctx: &TurnContext, server: Held, declared: Declared) {
    ctx.services.mcp.launch_trusted(Trusted {
        held: Held {
            changed: None,
            ..server
        },
        declared,
        asks: true,
    });
}

/// Acts on the user's `answer` about `server`.
fn settle(
    ctx: &TurnContext,
    store: &TrustStore,
    server: Held,
    declared: Declared,
    answer: PermissionAnswer,
) {
    let remember = |verdict| {
        if let Err(e) = store.remember(TrustEntry::now(&ctx.facts.cwd, &declared, verdict)) {
            tracing::warn!(
                "the answer about MCP server `{}` is not remembered: {e}",
                declared.name
            );
        }
    };
    match answer {
        PermissionAnswer::AllowOnce | PermissionAnswer::AllowAlways => {
            if answer == PermissionAnswer::AllowAlways {
                remember(Verdict::Trusted);
            }
            start(ctx, server, declared);
        }
        PermissionAnswer::RejectAlways => {
            remember(Verdict::Refused);
            refuse(ctx, server, trust::REFUSED);
        }
        _ => refuse(ctx, server, trust::DECLINED),
    }
}

/// Leaves `server` unstarted for `why`; the user's own server of its name starts instead.
fn refuse(ctx: &TurnContext, server: Held, why: &str) {
    ctx.services.mcp.decline(&server.spec.name, why.into());
    if let Some(instead) = server.instead {
        ctx.services.mcp.launch(instead);
    }
}

/// Asks the user about `server`, showing the question as a tool call that ends `completed`
/// when it starts and `failed` when it does not.
async fn ask(
    ctx: &TurnContext,
    server: &Held,
    declared: &Declared,
    cancel: &CancellationToken,
) -> PermissionAnswer {
    let view = question(ctx, server, declared);
    ctx.emit(TurnEvent::ToolCall(view.clone()));
    let choices = choices();
    let answer = tokio::select! {
        answer = ctx.services.editor.request_permission(&ctx.facts.session_id, &view, &choices) => answer,
        () = cancel.cancelled() => Ok(PermissionAnswer::Cancelled),
    };
    let answer = match answer {
        Ok(answer) => answer,
        Err(e) => {
            tracing::warn!(server = %declared.name, "the editor could not ask about the project's MCP server, so it is not started: {}", e.message);
            PermissionAnswer::RejectOnce
        }
    };
    let (status, said) = match answer {
        PermissionAnswer::AllowOnce => (ToolStatus::Completed, "Started for this session."),
        PermissionAnswer::AllowAlways => (
            ToolStatus::Completed,
            "Trusted in this project: started now, and from now on while its definition stays the same.",
        ),
        PermissionAnswer::RejectOnce => (ToolStatus::Failed, "Not started in this session."),
        PermissionAnswer::RejectAlways => (
            ToolStatus::Failed,
            "Not started, and not asked about again while its definition stays the same.",
        ),
        PermissionAnswer::Cancelled => {
            (ToolStatus::Failed, "Not started: the prompt was cancelled.")
        }
    };
    // Ended either way, a reject and a cancel included: a client that shows status would
    // keep a question without one pending.
    ctx.emit(TurnEvent::ToolCallUpdate {
        id: view.id,
        status: Some(status),
        content: Some(vec![ToolContent::Text { text: said.into() }]),
        title: None,
    });
    answer
}

/// The tool call the question is shown as.
fn question(ctx: &TurnContext, server: &Held, declared: &Declared) -> ToolCallView {
    let spec = &server.spec;
    let source = server.source.display();
    let mut env: Vec<&String> = spec.env.keys().collect();
    env.sort();
    let mut headers: Vec<&String> = spec.headers.keys().collect();
    headers.sort();
    let (title, kind, runs) = match &spec.command {
        Some(_) => {
            let dir = spec
                .cwd
                .clone()
                .or_else(|| std::env::current_dir().ok())
                .map(|d| d.display().to_string())
                .unwrap_or_else(|| "tandem's working directory".into());
            let program = trust::command_line(&crate::config::ServerSpec {
                env: Default::default(),
                ..spec.clone()
            });
            let setting = match env.is_empty() {
                true => String::new(),
                false => format!(", setting {}", listed(&env)),
            };
            (
                format!(
                    "Start MCP server `{}` from {source}: {}",
                    spec.name, declared.command
                ),
                ToolKind::Execute,
                format!("It runs `{program}` in {dir} with your rights{setting}."),
            )
        }
        None => (
            format!(
                "Connect to MCP server `{}` from {source}: {}",
                spec.name, declared.command
            ),
            ToolKind::Other,
            format!("It connects to {}.", declared.command),
        ),
    };
    let again = match &server.changed {
        Some(what) => format!("Asked again: {what}.\n\n"),
        None => String::new(),
    };
    let text = format!(
        "{again}The project's {source} declares the MCP server `{}`. {runs} Its tools would be offered to the model.\n\n\
         {}\
         tandem starts nothing a project declares until you trust it. \"Always\" is remembered for this project \
         and this exact definition (a changed definition asks again); `/permissions` lists the answers and \
         `/permissions untrust` forgets them.",
        spec.name,
        coverage(declared),
    );
    ToolCallView {
        id: format!("trust-{}", uuid::Uuid::new_v4()),
        title,
        kind,
        status: ToolStatus::Pending,
        locations: vec![Location {
            path: server.source.clone(),
            line: None,
        }],
        raw_input: Some(json!({
            "name": spec.name,
            "command": spec.command,
            "args": spec.args,
            "env": env,
            "url": spec.url,
            "headers": headers,
            "declaredBy": server.source,
            "project": ctx.facts.cwd,
            "fingerprint": declared.fingerprint,
            "covers": declared.covers(),
            "notCovered": declared.uncovered,
            "changed": server.changed,
        })),
        content: vec![ToolContent::Text { text }],
    }
}

/// What the trust covers, for the question: the files checked before every start and
/// restart, and what is not covered.
fn coverage(declared: &Declared) -> String {
    let mut text = String::new();
    let covers = declared.covers();
    if !covers.is_empty() {
        let files: Vec<String> = covers.iter().map(|f| format!("`{f}`")).collect();
        text.push_str(&format!(
            "Trust covers the content of these files: {}. tandem reads them again before every start and restart, and asks again when one changed. Code they load in turn is not checked.\n\n",
            files.join(", ")
        ));
    }
    if !declared.uncovered.is_empty() {
        text.push_str("Not covered:\n");
        for note in &declared.uncovered {
            text.push_str(&format!("- {note}.\n"));
        }
        text.push('\n');
    }
    text
}

/// `` `A`, `B` `` for people.
fn listed(names: &[&String]) -> String {
    let quoted: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
    quoted.join(", ")
}

/// The four answers, each saying what it means for a project's program.
fn choices() -> Vec<PermissionChoice> {
    let choice = |answer, label: &str| PermissionChoice {
        answer,
        label: label.into(),
    };
    vec![
        choice(PermissionAnswer::AllowOnce, "Allow once (this session)"),
        choice(
            PermissionAnswer::AllowAlways,
            "Always allow (trust this definition in this project)",
        ),
        choice(PermissionAnswer::RejectOnce, "Reject (this session)"),
        choice(
            PermissionAnswer::RejectAlways,
            "Always reject (do not ask again for this definition)",
        ),
    ]
}
