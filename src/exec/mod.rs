//! `tandem exec`: one prompt, headless. It drives the agent exactly as an editor would: the
//! same [`crate::serve`] as the stdio agent, over the same wire (an in-memory pipe instead of
//! stdin and stdout), with the same lifecycle (Ctrl-C is its shutdown: the running prompt is
//! cancelled and answers `cancelled`) and the same redaction (everything shown came over the
//! wire). It prints the streamed answer to stdout, progress and reasoning to stderr.

mod agent;
mod display;
mod steer;

use std::io::{IsTerminal, Read};
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;

use agent_client_protocol::Agent;
use agent_client_protocol::v1::schema::{
    CancelNotification, ContentBlock, Implementation, InitializeRequest, NewSessionRequest,
    PermissionOptionKind, PromptRequest, RequestPermissionOutcome, RequestPermissionRequest,
    RequestPermissionResponse, ResumeSessionRequest, SelectedPermissionOutcome, SessionId,
    SessionNotification, StopReason, TextContent,
};
use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{Client, schema::ProtocolVersion};

use crate::cli::ExecArgs;
use crate::config::{Config, ProjectPrograms};
use display::Display;

/// How a headless run ended.
enum Ended {
    Stopped(StopReason),
    TimedOut,
    /// `--output-schema`: the final answer did not validate.
    Unstructured,
}

/// Runs one prompt and returns the process exit status (see `tandem exec --help`).
pub async fn run(config: Config, args: ExecArgs) -> ExitCode {
    let display = Arc::new(Display::new(args.output, args.output_schema.is_some()));
    // A schema that cannot be used is a usage error, found before anything runs.
    let schema = match args.output_schema.as_deref().map(read_schema).transpose() {
        Ok(schema) => schema,
        Err(e) => {
            display.progress(&format!("error: {e:#}"));
            return ExitCode::from(2);
        }
    };
    // Without a key nothing can run: a configuration error, said in one line.
    if let Some(e) = crate::session::missing_key(&config) {
        display.progress(&format!("error: {}", e.message));
        return ExitCode::from(2);
    }
    // A replay fixture that cannot be read is a configuration error too.
    let model_client = match crate::model_client(&config) {
        Ok(client) => client,
        Err(e) => {
            display.progress(&format!("error: {e:#}"));
            return ExitCode::from(2);
        }
    };
    let setup = Setup {
        config,
        model_client,
        schema,
    };
    match run_inner(setup, args, &display).await {
        Ok(Ended::Stopped(stop)) => match stop {
            StopReason::EndTurn => ExitCode::SUCCESS,
            StopReason::Refusal => ExitCode::from(3),
            StopReason::MaxTokens | StopReason::MaxTurnRequests => ExitCode::from(4),
            StopReason::Cancelled => ExitCode::from(130),
            _ => ExitCode::FAILURE,
        },
        Ok(Ended::TimedOut) => ExitCode::from(5),
        Ok(Ended::Unstructured) => ExitCode::from(6),
        Err(e) => {
            display.progress(&format!("error: {e:#}"));
            ExitCode::FAILURE
        }
    }
}

/// What a run starts from, checked before anything runs.
struct Setup {
    config: Config,
    model_client: Arc<dyn crate::model::ModelClient>,
    schema: Option<serde_json::Value>,
}

async fn run_inner(setup: Setup, args: ExecArgs, display: &Arc<Display>) -> anyhow::Result<Ended> {
    let Setup {
        mut config,
        model_client,
        schema,
    } = setup;
    let (prompt, steering) = match args.input {
        crate::cli::Input::Text => (prompt_text(&args.prompt)?, None),
        crate::cli::Input::Ndjson => {
            let mut lines = steer::Steering::stdin();
            let given = args.prompt.join(" ");
            let prompt = if given.is_empty() || given == "-" {
                lines.next().await?.ok_or_else(|| {
                    anyhow::anyhow!("no prompt: stdin ended before its first line")
                })?
            } else {
                given
            };
            (prompt, Some(lines))
        }
    };
    let cwd = match args.cwd {
        Some(dir) => std::path::absolute(dir)?,
        None => std::env::current_dir()?,
    };
    let stored = args
        .session
        .as_deref()
        .is_some_and(|id| crate::store::Store::new(&config.home).exists(id));
    config.project_programs = if args.trust_project {
        ProjectPrograms::Always
    } else {
        ProjectPrograms::Never
    };
    let run = Run {
        model: config.default_model.clone(),
        mode: config.default_mode.id(),
        unstarted: (!args.trust_project).then(|| not_started(&cwd)).flatten(),
        requested: args.session.clone(),
        stored,
        cwd,
        prompt,
        steering,
        schema,
        // clap has checked that it is a positive number.
        timeout: args.timeout.map(std::time::Duration::from_secs_f64),
    };
    let (agent, editor_end) = agent::start(config, model_client, display);
    let result = converse(run, editor_end, display).await;
    display.end_answer_line();
    // Interrupted, the run ends `cancelled` whatever the connection said last (before the
    // prompt, the agent closes without answering what was asked).
    let ended = if agent.ended().await {
        Ended::Stopped(StopReason::Cancelled)
    } else {
        result.map_err(|e| anyhow::anyhow!("{}", e.message))?
    };
    let name = match &ended {
        Ended::Stopped(stop) => stop_name(*stop),
        Ended::TimedOut => "timeout",
        Ended::Unstructured => "end_turn, answer not valid against the output schema",
    };
    display.finished(name);
    Ok(ended)
}

/// What one run asks of the agent.
struct Run {
    model: String,
    mode: &'static str,
    /// The note about the project's MCP servers this run does not start.
    unstarted: Option<String>,
    /// `--session`, and whether it names a stored session.
    requested: Option<String>,
    stored: bool,
    cwd: std::path::PathBuf,
    prompt: String,
    /// `--input ndjson`: stdin's later lines, which steer the turn.
    steering: Option<steer::Steering>,
    schema: Option<serde_json::Value>,
    timeout: Option<std::time::Duration>,
}

/// Acts as the editor over `editor_end`: opens the session, sends the prompt, shows what
/// streams and refuses what would need asking.
async fn converse(
    run: Run,
    editor_end: agent::EditorEnd,
    display: &Arc<Display>,
) -> Result<Ended, agent_client_protocol::Error> {
    let (shown, refusing) = (display.clone(), display.clone());
    Client
        .v1()
        .name("tandem-exec")
        .on_receive_notification(
            async move |note: SessionNotification, _cx| {
                shown.show(note);
                Ok(())
            },
            agent_client_protocol::on_receive_notification!(),
        )
        .on_receive_request(
            async move |req: RequestPermissionRequest,
                        responder: Responder<RequestPermissionResponse>,
                        _cx| { responder.respond(refuse_headless(&req, &refusing)) },
            agent_client_protocol::on_receive_request!(),
        )
        .connect_with(editor_end, async move |cx| {
            let session_id =
                open_session(&cx, run.requested.as_deref(), run.stored, &run.cwd).await?;
            display.started(&session_id.0);
            display.progress(&format!(
                "session {}, model {}, mode {}, cwd {}",
                session_id.0,
                run.model,
                run.mode,
                run.cwd.display()
            ));
            if let Some(note) = &run.unstarted {
                display.progress(note);
            }
            let one = OnePrompt {
                session_id,
                prompt: run.prompt,
                steering: run.steering,
                schema: run.schema.as_ref(),
                timeout: run.timeout,
            };
            prompt_until_done(&cx, one, display).await
        })
        .await
}

/// What to say when the project in `cwd` declares MCP servers that this run does not start.
fn not_started(cwd: &Path) -> Option<String> {
    let servers = crate::config::project(cwd).mcp_servers;
    if servers.is_empty() {
        return None;
    }
    let names: Vec<String> = servers.iter().map(|s| format!("`{}`", s.name)).collect();
    Some(format!(
        "{} MCP server(s) declared by {} not started ({}): tandem exec starts a project's programs only with --trust-project",
        servers.len(),
        cwd.join(".tandem").join("config.toml").display(),
        names.join(", ")
    ))
}

/// Initializes the connection and opens the session: `--session` continues a stored session
/// (without replaying it), or starts one with that id; without it, a new session.
async fn open_session(
    cx: &ConnectionTo<Agent>,
    requested: Option<&str>,
    stored: bool,
    cwd: &Path,
) -> Result<SessionId, agent_client_protocol::Error> {
    cx.send_request(
        InitializeRequest::new(ProtocolVersion::V1).client_info(Implementation::new(
            "tandem-exec",
            env!("CARGO_PKG_VERSION"),
        )),
    )
    .block_task()
    .await?;
    Ok(match (requested, stored) {
        (Some(id), true) => {
            cx.send_request(ResumeSessionRequest::new(id.to_string(), cwd.to_path_buf()))
                .block_task()
                .await?;
            SessionId::new(id.to_string())
        }
        (requested, _) => {
            let mut request = NewSessionRequest::new(cwd.to_path_buf());
            if let Some(id) = requested {
                let meta = serde_json::json!({"tandem": {"sessionId": id}});
                request = request.meta(meta.as_object().cloned());
            }
            cx.send_request(request).block_task().await?.session_id
        }
    })
}

/// The one prompt of the run and what bounds it.
struct OnePrompt<'a> {
    session_id: SessionId,
    prompt: String,
    /// What steers the turn while it runs (`--input ndjson`).
    steering: Option<steer::Steering>,
    /// `--output-schema`: the answer must validate against it.
    schema: Option<&'a serde_json::Value>,
    /// `--timeout`: cancel the prompt after this long.
    timeout: Option<std::time::Duration>,
}

/// Sends the prompt and waits for its end, cancelling it on timeout (and then still waiting
/// for the turn to stop). Ctrl-C is the agent's shutdown: the prompt then ends `cancelled`.
async fn prompt_until_done(
    cx: &ConnectionTo<Agent>,
    one: OnePrompt<'_>,
    display: &Display,
) -> Result<Ended, agent_client_protocol::Error> {
    let OnePrompt {
        session_id,
        prompt,
        mut steering,
        schema,
        timeout,
    } = one;
    let mut request = PromptRequest::new(
        session_id.clone(),
        vec![ContentBlock::Text(TextContent::new(prompt))],
    );
    if let Some(schema) = schema {
        let meta = serde_json::json!({"tandem": {"outputSchema": schema}});
        request = request.meta(meta.as_object().cloned());
    }
    let prompt = cx.send_request(request);
    let deadline = async {
        match timeout {
            Some(t) => tokio::time::sleep(t).await,
            None => std::future::pending().await,
        }
    };
    let prompt = prompt.block_task();
    tokio::pin!(prompt);
    let cancel = |why: &str| {
        display.progress(why);
        cx.send_notification(CancelNotification::new(session_id.clone()))
    };
    // stdin's later lines go to the running turn; its end ends nothing.
    let steered = async {
        if let Some(lines) = steering.as_mut() {
            lines.steer(cx, &session_id, display).await;
        }
        // Never ready: only the prompt's end (or the deadline) ends the wait.
        std::future::pending::<Ended>().await
    };
    tokio::pin!(steered);
    let ended = tokio::select! {
        ended = &mut steered => ended,
        response = &mut prompt => {
            let response = response?;
            match (schema, response.stop_reason) {
                (Some(_), StopReason::EndTurn) => structured(response.meta.as_ref(), display),
                (_, stop) => Ended::Stopped(stop),
            }
        }
        () = deadline => {
            cancel("timed out, cancelling")?;
            let _ = prompt.await;
            Ended::TimedOut
        }
    };
    Ok(ended)
}

/// The `--output-schema` file, checked to be a JSON Schema before anything runs.
fn read_schema(path: &std::path::Path) -> anyhow::Result<serde_json::Value> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| anyhow::anyhow!("cannot read the output schema {}: {e}", path.display()))?;
    let schema: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| anyhow::anyhow!("the output schema {} is not JSON: {e}", path.display()))?;
    crate::output_schema::OutputSchema::new(schema.clone())
        .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    Ok(schema)
}

/// Shows the structured answer a prompt ended with (its `_meta.tandem`), or why there is none.
fn structured(
    meta: Option<&serde_json::Map<String, serde_json::Value>>,
    display: &Display,
) -> Ended {
    let tandem = meta.and_then(|m| m.get("tandem"));
    match tandem.and_then(|t| t.get("structuredOutput")) {
        Some(value) => {
            display.structured_output(value);
            Ended::Stopped(StopReason::EndTurn)
        }
        None => {
            let error = tandem
                .and_then(|t| t.get("structuredOutputError"))
                .and_then(|e| e.as_str())
                .unwrap_or("the model gave no final answer");
            display.structured_failure(error);
            Ended::Unstructured
        }
    }
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
fn refuse_headless(req: &RequestPermissionRequest, display: &Display) -> RequestPermissionResponse {
    let title = req
        .tool_call
        .fields
        .title
        .clone()
        .unwrap_or_else(|| "a tool call".into());
    if req
        .options
        .iter()
        .any(|o| o.option_id.0.as_ref() == "decline")
    {
        // A question from `ask_user`: no mode answers it.
        display.progress(&format!(
            "not answered: {title} (nobody can answer a question in a headless run; the model was told)"
        ));
    } else {
        display.progress(&format!(
            "rejected {title}: it needs permission and exec cannot ask (use --mode accept-edits or --mode full-access, or an allow rule under [permissions] in your config file)"
        ));
    }
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

/// How `tandem exec` names the way a prompt ended: tandem's own spelling of it.
fn stop_name(stop: StopReason) -> &'static str {
    crate::acp::convert::stop_reason_of(stop).map_or("other", |s| s.as_str())
}
