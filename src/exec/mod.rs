//! `tandem exec`: one prompt, headless. It drives the agent exactly as an editor would, over
//! the same ACP code path (an in-process duplex channel), and prints the streamed answer to
//! stdout, progress and reasoning to stderr.

mod display;

use std::io::{IsTerminal, Read};
use std::process::ExitCode;
use std::sync::Arc;

use agent_client_protocol::v1::Responder;
use agent_client_protocol::v1::schema::{
    CancelNotification, ContentBlock, Implementation, InitializeRequest, NewSessionRequest,
    PermissionOptionKind, PromptRequest, RequestPermissionOutcome, RequestPermissionRequest,
    RequestPermissionResponse, SelectedPermissionOutcome, SessionNotification, StopReason,
    TextContent,
};
use agent_client_protocol::{Client, schema::ProtocolVersion};

use crate::cli::ExecArgs;
use crate::config::Config;
use crate::session::SessionManager;

/// Runs one prompt and returns the process exit status (see `tandem exec --help`).
pub async fn run(config: Config, args: ExecArgs) -> ExitCode {
    match run_inner(config, args).await {
        Ok(stop) => match stop {
            StopReason::EndTurn => ExitCode::SUCCESS,
            StopReason::Refusal => ExitCode::from(3),
            StopReason::MaxTokens | StopReason::MaxTurnRequests => ExitCode::from(4),
            StopReason::Cancelled => ExitCode::from(130),
            _ => ExitCode::FAILURE,
        },
        Err(e) => {
            display::progress(&format!("error: {e:#}"));
            ExitCode::FAILURE
        }
    }
}

async fn run_inner(config: Config, args: ExecArgs) -> anyhow::Result<StopReason> {
    let prompt = prompt_text(&args.prompt)?;
    let cwd = match args.cwd {
        Some(dir) => std::path::absolute(dir)?,
        None => std::env::current_dir()?,
    };
    let model_client = crate::model_client(&config)?;
    let model = config.default_model.clone();
    let mode = config.default_mode.id();
    let manager = Arc::new(SessionManager::new(Arc::new(config), model_client));
    let agent = crate::acp::agent(manager);

    let result = Client
        .v1()
        .name("tandem-exec")
        .on_receive_notification(
            async move |note: SessionNotification, _cx| {
                display::show(note.update);
                Ok(())
            },
            agent_client_protocol::on_receive_notification!(),
        )
        .on_receive_request(
            async move |req: RequestPermissionRequest,
                        responder: Responder<RequestPermissionResponse>,
                        _cx| { responder.respond(refuse_headless(&req)) },
            agent_client_protocol::on_receive_request!(),
        )
        .connect_with(agent, async move |cx| {
            cx.send_request(InitializeRequest::new(ProtocolVersion::V1).client_info(
                Implementation::new("tandem-exec", env!("CARGO_PKG_VERSION")),
            ))
            .block_task()
            .await?;
            let session = cx
                .send_request(NewSessionRequest::new(cwd.clone()))
                .block_task()
                .await?;
            display::progress(&format!(
                "model {model}, mode {mode}, cwd {}",
                cwd.display()
            ));
            let prompt = cx.send_request(PromptRequest::new(
                session.session_id.clone(),
                vec![ContentBlock::Text(TextContent::new(prompt))],
            ));
            let response = tokio::select! {
                response = prompt.block_task() => response?,
                _ = tokio::signal::ctrl_c() => {
                    display::progress("interrupted, cancelling");
                    cx.send_notification(CancelNotification::new(session.session_id.clone()))?;
                    return Ok(StopReason::Cancelled);
                }
            };
            Ok(response.stop_reason)
        })
        .await;
    display::end_answer_line();
    crate::mcp::kill_all();
    let stop = result.map_err(|e| anyhow::anyhow!("{}", e.message))?;
    display::progress(&format!("stopped: {}", stop_name(stop)));
    Ok(stop)
}

/// The prompt from the arguments, or from stdin when there are none (or just `-`).
fn prompt_text(args: &[String]) -> anyhow::Result<String> {
    let from_args = args.join(" ");
    let text = if from_args.is_empty() || from_args == "-" {
        if std::io::stdin().is_terminal() {
            anyhow::bail!("no prompt: pass it as an argument or pipe it on stdin");
        }
        let mut text = String::new();
        std::io::stdin().read_to_string(&mut text)?;
        text
    } else {
        from_args
    };
    if text.trim().is_empty() {
        anyhow::bail!("the prompt is empty");
    }
    Ok(text)
}

/// Nobody can answer a permission prompt in a headless run: the call is rejected, and the
/// user is told which mode would allow it.
fn refuse_headless(req: &RequestPermissionRequest) -> RequestPermissionResponse {
    let title = req
        .tool_call
        .fields
        .title
        .clone()
        .unwrap_or_else(|| "a tool call".into());
    display::progress(&format!(
        "rejected {title}: it needs permission and exec cannot ask (use --mode accept-edits or --mode full-access)"
    ));
    let reject = req
        .options
        .iter()
        .find(|o| o.kind == PermissionOptionKind::RejectOnce);
    let outcome = match reject {
        Some(option) => RequestPermissionOutcome::Selected(SelectedPermissionOutcome::new(
            option.option_id.clone(),
        )),
        None => RequestPermissionOutcome::Cancelled,
    };
    RequestPermissionResponse::new(outcome)
}

fn stop_name(stop: StopReason) -> &'static str {
    match stop {
        StopReason::EndTurn => "end_turn",
        StopReason::MaxTokens => "max_tokens",
        StopReason::MaxTurnRequests => "max_turn_requests",
        StopReason::Refusal => "refusal",
        StopReason::Cancelled => "cancelled",
        _ => "other",
    }
}
