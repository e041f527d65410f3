//! `run_command` with `background: true`: the command starts (in the editor's terminal when
//! it has one, locally otherwise, in the sandbox either way when there is one) and the call
//! answers after a moment with the job's id and its first output. The job belongs to the
//! session (tools/background.rs); the tool call stays in progress, showing the output as it
//! comes (the editor's terminal does that itself), and ends when the command does. Every
//! update that carries content carries all the card shows (its terminal or output, and the
//! notes after it): an editor replaces a card's content with each one.

use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use super::background::{BackgroundJob, JobHost};
use super::{ToolEnv, ToolOutput, text};
use crate::client::{ExitStatus, TerminalSpec};
use crate::platform::sandbox::Sandbox;
use crate::types::{Effect, ToolContent, ToolStatus, TurnEvent};

/// How long the call waits for the first output.
const FIRST_OUTPUT: Duration = Duration::from_millis(1500);

/// What a local job's card says while it runs.
const RUNNING: &str = "Running in the background…";

/// Starts `command` in `dir` as a background job; its card shows `notes` after its output
/// to the end (the caller adds them to the result).
pub(super) async fn start(
    command: &str,
    dir: &std::path::Path,
    env: &ToolEnv,
    sandbox: Option<&Sandbox>,
    notes: &[ToolContent],
) -> ToolOutput {
    let job = match env.scope.background.start(command) {
        Ok(job) => job,
        Err(why) => return ToolOutput::error(why),
    };
    let card = Card {
        env: env.clone(),
        notes: notes.to_vec(),
    };
    let started = if env.scope.caps.terminal {
        in_terminal(&job, dir, card, sandbox).await.map(Some)
    } else {
        locally(&job, dir, card, sandbox).map(|()| None)
    };
    let terminal = match started {
        Ok(terminal) => terminal,
        Err(why) => {
            job.finished(None);
            return ToolOutput::error(why);
        }
    };
    env.journal.note(Effect::Command {
        line: command.to_string(),
    });
    tokio::select! {
        () = tokio::time::sleep(FIRST_OUTPUT) => {}
        () = job.stop.cancelled() => {}
    }
    let first = job.read().await;
    let state = match &first.ended {
        Some(exit) => format!("It already ended: {}.", ended(exit.as_ref())),
        None => format!(
            "It keeps running in the background as `{}`: read its new output with command_output {{\"id\": \"{}\"}}, stop it with stop_command.",
            job.id, job.id
        ),
    };
    let output = if first.output.trim().is_empty() {
        "(no output yet)".to_string()
    } else {
        first.output.clone()
    };
    // What the card shows as the call answers (and what a load replays): the terminal with
    // the output so far, or the local output.
    let now = match &first.ended {
        Some(exit) => format!("Ended: {}.", ended(exit.as_ref())),
        None => format!(
            "Running in the background as `{}` when its call answered.",
            job.id
        ),
    };
    let content = match terminal {
        Some(id) => ToolContent::Terminal {
            id,
            output: Some(match first.output.trim().is_empty() {
                true => now,
                false => super::command_card::shown(&first.output, &now),
            }),
        },
        None if first.ended.is_some() => live(&job, &now),
        None => live(&job, RUNNING),
    };
    ToolOutput {
        model: format!(
            "Command: {command}\nStarted as `{}`. {state}\nFirst output:\n{output}",
            job.id
        ),
        images: Vec::new(),
        content: vec![content],
        failed: false,
        title: None,
        keeps_running: first.ended.is_none(),
    }
}

/// How a job ended, in words: as a command's end is told, or stopped.
pub(super) fn ended(exit: Option<&ExitStatus>) -> String {
    match exit {
        Some(exit) => super::ending::ending(Some(exit), false, false, Duration::ZERO),
        None => "stopped".to_string(),
    }
}

/// The job's call, as its card is updated.
struct Card {
    env: ToolEnv,
    /// Shown after the job's terminal or output, in every update that carries content.
    notes: Vec<ToolContent>,
}

impl Card {
    /// Shows `status` (once it ended), and `shown` then the notes when given (`None`: the
    /// content is unchanged).
    fn update(&self, status: Option<ToolStatus>, shown: Option<ToolContent>) {
        let content = shown.map(|shown| {
            let mut content = vec![shown];
            content.extend(self.notes.iter().cloned());
            content
        });
        self.env.scope.sink.emit(
            &self.env.scope.session_id,
            TurnEvent::ToolCallUpdate {
                id: self.env.call_id.clone(),
                status,
                content,
                title: None,
            },
        );
    }
}

fn status_of(exit: Option<&ExitStatus>) -> ToolStatus {
    match exit {
        Some(ExitStatus { code: Some(0), .. }) => ToolStatus::Completed,
        _ => ToolStatus::Failed,
    }
}

/// Starts the job in a terminal of the editor's; its id.
async fn in_terminal(
    job: &Arc<BackgroundJob>,
    dir: &std::path::Path,
    card: Card,
    sandbox: Option<&Sandbox>,
) -> Result<String, String> {
    let env = &card.env;
    let (program, args) = env.scope.shell.terminal_line(&job.command);
    let (program, args) = match sandbox {
        Some(sandbox) => sandbox.wrap(program, args),
        None => (program, args),
    };
    let spec = TerminalSpec {
        command: program,
        args,
        cwd: dir.to_path_buf(),
        output_byte_limit: text::MAX_COMMAND_BYTES as u64,
    };
    let session = env.scope.session_id.clone();
    let client = env.scope.client.clone();
    let terminal = client
        .create_terminal(&session, &spec)
        .await
        .map_err(|e| format!("the editor could not start a terminal: {}", e.message))?;
    super::command_card::attach(env, &job.command, &terminal, &card.notes);
    job.placed(JobHost::Terminal {
        client: client.clone(),
        session: session.clone(),
        terminal: terminal.clone(),
    });
    // The session ended while the editor made the terminal: stop it now.
    if job.stop.is_cancelled() {
        job.halt().await;
        return Err("the session ended before the command started".into());
    }
    let job = job.clone();
    let id = terminal.clone();
    tokio::spawn(async move {
        let exit = tokio::select! {
            exit = client.wait_for_terminal_exit(&session, &terminal) => exit.ok(),
            () = job.stop.cancelled() => None,
        };
        job.finished(exit.clone());
        let status = Some(status_of(exit.as_ref()));
        // The terminal again while the editor still has it (a stop releases it, and an
        // editor drops an update that names a released terminal); the card keeps it anyway.
        job.while_placed(|placed| {
            let shown = placed.then(|| ToolContent::Terminal {
                id: terminal.clone(),
                output: None,
            });
            card.update(status, shown);
        });
    });
    Ok(id)
}

fn locally(
    job: &Arc<BackgroundJob>,
    dir: &std::path::Path,
    card: Card,
    sandbox: Option<&Sandbox>,
) -> Result<(), String> {
    let env = &card.env;
    let mut started = match sandbox {
        Some(sandbox) => {
            let (program, args) = env.scope.shell.line(&job.command);
            sandbox.command(program, args)
        }
        None => env.scope.shell.tied_command(&job.command),
    };
    crate::secrets::scrub(&mut started);
    started.current_dir(dir).stdin(Stdio::null());
    let cannot = |e: std::io::Error| format!("cannot run the command in {}: {e}", dir.display());
    let mut output = crate::platform::Merged::attach(&mut started).map_err(cannot)?;
    let mut child = crate::platform::Group::spawn(started).map_err(cannot)?;
    job.placed(JobHost::Local);
    let job = job.clone();
    tokio::spawn(async move {
        let mut shown = tokio::time::interval(crate::local::LIVE_EVERY * 4);
        let mut open = true;
        let mut fresh = false;
        let status = loop {
            tokio::select! {
                chunk = output.next(), if open => match chunk {
                    Some(Ok(bytes)) => { job.wrote(&bytes); fresh = true; }
                    None | Some(Err(_)) => open = false,
                },
                _ = shown.tick(), if fresh => {
                    fresh = false;
                    card.update(None, Some(live(&job, RUNNING)));
                }
                status = child.wait(), if !open => break status.ok(),
                () = job.stop.cancelled() => break None,
            }
        };
        if status.is_none() {
            child.kill();
            let _ = child.wait().await;
        }
        let exit = status.map(|s| ExitStatus {
            code: s.code().and_then(|c| u32::try_from(c).ok()),
            signal: crate::platform::exit_signal(&s).map(|s| format!("signal {s}")),
        });
        job.finished(exit.clone());
        let how = format!("Ended: {}.", ended(exit.as_ref()));
        card.update(Some(status_of(exit.as_ref())), Some(live(&job, &how)));
    });
    Ok(())
}

/// A local job's latest output, fenced, with a line saying where it is.
fn live(job: &BackgroundJob, state: &str) -> ToolContent {
    let tail = job.tail(text::MAX_RESULT_BYTES);
    let longest = tail.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest.max(2) + 1);
    ToolContent::Text {
        text: format!(
            "{fence}\n{}\n{fence}\n{state} (`{}`)",
            tail.trim_end(),
            job.id
        ),
    }
}
