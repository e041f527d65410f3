//! `tandem exec`: one prompt, headless. It drives the agent exactly as an editor would, over
//! the same ACP code path (an in-process duplex channel), and prints the streamed answer to
//! stdout, progress and reasoning to stderr.

use std::io::{IsTerminal, Read, Write};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use agent_client_protocol::v1::schema::{
    CancelNotification, ContentBlock, Implementation, InitializeRequest, NewSessionRequest,
    PromptRequest, SessionNotification, SessionUpdate, StopReason, TextContent,
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
            eprint_line(&format!("tandem: error: {e:#}"));
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
    let manager = Arc::new(SessionManager::new(Arc::new(config), model_client));
    let agent = crate::acp::agent(manager);

    let result = Client
        .v1()
        .name("tandem-exec")
        .on_receive_notification(
            async move |note: SessionNotification, _cx| {
                show(note.update);
                Ok(())
            },
            agent_client_protocol::on_receive_notification!(),
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
            eprint_line(&format!("tandem: model {model}, cwd {}", cwd.display()));
            let prompt = cx.send_request(PromptRequest::new(
                session.session_id.clone(),
                vec![ContentBlock::Text(TextContent::new(prompt))],
            ));
            let response = tokio::select! {
                response = prompt.block_task() => response?,
                _ = tokio::signal::ctrl_c() => {
                    eprint_line("tandem: interrupted, cancelling");
                    cx.send_notification(CancelNotification::new(session.session_id.clone()))?;
                    return Ok(StopReason::Cancelled);
                }
            };
            Ok(response.stop_reason)
        })
        .await;
    end_answer_line();
    let stop = result.map_err(|e| anyhow::anyhow!("{}", e.message))?;
    eprint_line(&format!("tandem: stopped: {}", stop_name(stop)));
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

/// Whether the last answer (stdout) or reasoning (stderr) text ended mid-line.
static ANSWER_OPEN: AtomicBool = AtomicBool::new(false);
static THOUGHT_OPEN: AtomicBool = AtomicBool::new(false);

fn show(update: SessionUpdate) {
    match update {
        SessionUpdate::AgentMessageChunk(chunk) => {
            if let ContentBlock::Text(t) = chunk.content {
                ANSWER_OPEN.store(
                    !t.text.ends_with('\n'),
                    std::sync::atomic::Ordering::Relaxed,
                );
                let mut out = std::io::stdout().lock();
                let _ = out.write_all(t.text.as_bytes());
                let _ = out.flush();
            }
        }
        SessionUpdate::AgentThoughtChunk(chunk) => {
            if let ContentBlock::Text(t) = chunk.content {
                THOUGHT_OPEN.store(!t.text.ends_with('\n'), Ordering::Relaxed);
                let mut err = std::io::stderr().lock();
                let _ = err.write_all(t.text.as_bytes());
                let _ = err.flush();
            }
        }
        SessionUpdate::UsageUpdate(u) => {
            end_answer_line();
            eprint_line(&format!("tandem: context {} / {} tokens", u.used, u.size));
        }
        _ => {}
    }
}

/// Ends the answer with a newline so the shell prompt does not run into it.
fn end_answer_line() {
    if ANSWER_OPEN.swap(false, Ordering::Relaxed) {
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(b"\n");
        let _ = out.flush();
    }
}

/// Ends the reasoning with a newline before anything else is written.
fn end_thought_line() {
    if THOUGHT_OPEN.swap(false, Ordering::Relaxed) {
        let mut err = std::io::stderr().lock();
        let _ = err.write_all(b"\n");
    }
}

fn eprint_line(line: &str) {
    end_thought_line();
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "{line}");
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
