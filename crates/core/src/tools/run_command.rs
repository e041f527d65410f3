//! `run_command`: a shell command, in the editor's terminal when it has one (the user watches
//! it live), locally otherwise. Both kill the command on timeout or cancel, and both start it
//! in the session's sandbox (through `tandem sandbox`) unless the user turned it off, the
//! session is in `full-access` mode, or the user allowed this run outside it.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use schemars::JsonSchema;
use serde::Deserialize;

use super::command_card::{attach, hides_text, shown, visible};
use super::ending::ending;
use super::{Call, PathBase, Prepared, ToolEnv, ToolError, ToolOutput, TypedTool, text};
use crate::client::TerminalSpec;
use crate::local;
use crate::platform::sandbox::{self, Confined, Sandbox};
use crate::types::TurnEvent;
use crate::types::{Access, Effect};
use crate::types::{ToolContent, ToolKind};

/// Default and largest timeouts.
const DEFAULT_TIMEOUT_MS: u64 = 120_000;
const MAX_TIMEOUT_MS: u64 = 600_000;

/// Arguments of `run_command`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RunCommandArgs {
    /// The shell command line (run with `sh -c`).
    pub(crate) command: String,
    /// Working directory, absolute or relative to the session's (default: the session's).
    pub(crate) cwd: Option<String>,
    /// Kill the command after this many milliseconds (default 120000, at most 600000).
    pub(crate) timeout_ms: Option<u64>,
    /// Run outside the command sandbox: only after a run failed because the sandbox denied
    /// what the command needs (its result says so). The user is asked every time.
    #[serde(default)]
    pub(crate) outside_sandbox: bool,
    /// Why it must run outside the sandbox, for the user (with `outside_sandbox`).
    pub(crate) reason: Option<String>,
    /// Keep it running in the background (a dev server, a watcher): the call returns at once
    /// with an id for command_output and stop_command.
    #[serde(default)]
    pub(crate) background: bool,
}

/// Longest reason for leaving the sandbox shown to the user.
const MOST_REASON_CHARS: usize = 300;

pub(crate) struct RunCommand;

impl TypedTool for RunCommand {
    type Args = RunCommandArgs;
    const NAME: &'static str = "run_command";
    const KIND: ToolKind = ToolKind::Execute;
    const LABEL: &'static str = "Run command";
    fn description(&self) -> &str {
        "Run a shell command and return its exit code and output (stdout and stderr, bounded)."
    }
    fn prepare(&self, args: RunCommandArgs, place: &PathBase) -> Result<Prepared, ToolError> {
        if args.command.trim().is_empty() {
            return Err(ToolError::Refused(
                "run_command needs a non-empty command".into(),
            ));
        }
        let dir = match &args.cwd {
            Some(dir) => place.resolve(dir),
            None => place.cwd.clone(),
        };
        let timeout = Duration::from_millis(
            args.timeout_ms
                .unwrap_or(DEFAULT_TIMEOUT_MS)
                .clamp(1, MAX_TIMEOUT_MS),
        );
        // The whole line, every line of it: a title that showed only the first would hide
        // the rest from the user asked to allow it.
        let mut title = format!("Run `{}`", visible(&args.command));
        if dir != place.cwd {
            title.push_str(&format!(" in {}", place.display(&dir)));
        }
        if args.background {
            title.push_str(" in the background (it keeps running)");
        }
        // The model's words, shown to the user in the question: on one line, nothing hidden.
        let outside_sandbox = args.outside_sandbox.then(|| {
            let reason = args.reason.as_deref().map(str::trim).unwrap_or_default();
            match reason.is_empty() {
                true => "no reason given".to_string(),
                false => visible(reason).chars().take(MOST_REASON_CHARS).collect(),
            }
        });
        Ok(Prepared {
            title,
            locations: Vec::new(),
            access: Access::Execute {
                command: args.command.clone(),
                cwd: dir.clone(),
                outside_sandbox,
            },
            call: Box::new(CommandCall {
                command: args.command,
                dir,
                timeout,
                outside: args.outside_sandbox,
                background: args.background,
            }),
        })
    }
}

struct CommandCall {
    command: String,
    dir: PathBuf,
    timeout: Duration,
    /// The model asked to run it outside the sandbox (and, with one, the user allowed it).
    outside: bool,
    /// It keeps running in the background (run_background.rs).
    background: bool,
}

/// The whole command as the user reviews it before allowing it: fenced, every line.
fn reviewed(command: &str, dir: &std::path::Path) -> ToolContent {
    let longest = command.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest.max(2) + 1);
    let shown: String = command
        .trim_end_matches('\n')
        .chars()
        .map(|c| match hides_text(c) {
            true => format!("\\u{{{:x}}}", c as u32),
            false => c.to_string(),
        })
        .collect();
    ToolContent::Text {
        text: format!("{fence}sh\n{shown}\n{fence}\nin {}", dir.display()),
    }
}

fn result(
    command: &str,
    ending: String,
    output: &str,
    failed: bool,
    content: Vec<ToolContent>,
) -> ToolOutput {
    // Both runners already bound the output (head and tail locally, the editor by
    // outputByteLimit); this is only a safety net against an editor that ignores the limit.
    let output = text::cap(output, text::MAX_RESULT_BYTES);
    let shown = if output.trim().is_empty() {
        "(no output)".to_string()
    } else {
        output
    };
    ToolOutput {
        model: format!("Command: {command}\n{ending}\nOutput:\n{shown}"),
        images: Vec::new(),
        content,
        failed,
        title: None,
        keeps_running: false,
    }
}

impl CommandCall {
    /// The sandbox the command runs in, if any, and a note for the user the first time in a
    /// session that this system cannot sandbox.
    async fn confinement(&self, env: &ToolEnv) -> (Option<Arc<Sandbox>>, Option<String>) {
        let Some(sandbox) = env.sandbox.as_ref().filter(|_| !self.outside) else {
            return (None, None);
        };
        match sandbox.enter().await {
            Confined::In(sandbox) => (Some(sandbox), None),
            Confined::Not { why, first } => (None, first.then(|| sandbox::unconfined(&why))),
        }
    }

    /// What the editor's terminal runs: the line in the shell, inside the sandbox when there
    /// is one (the editor starts tandem's own `sandbox` subcommand, which becomes the command).
    fn terminal_spec(&self, env: &ToolEnv, sandbox: Option<&Sandbox>) -> TerminalSpec {
        let (command, args) = env.scope.shell.terminal_line(&self.command);
        let (command, args) = match sandbox {
            Some(sandbox) => sandbox.wrap(command, args),
            None => (command, args),
        };
        TerminalSpec {
            command,
            args,
            cwd: self.dir.clone(),
            output_byte_limit: text::MAX_COMMAND_BYTES as u64,
        }
    }

    async fn in_terminal(
        self,
        env: ToolEnv,
        sandbox: Option<&Sandbox>,
        notes: &[ToolContent],
    ) -> ToolOutput {
        let spec = self.terminal_spec(&env, sandbox);
        let session = env.scope.session_id.as_str();
        let terminal = match env.scope.client.create_terminal(session, &spec).await {
            Ok(id) => {
                env.journal.note(Effect::Command {
                    line: self.command.clone(),
                });
                id
            }
            Err(e) => {
                return ToolOutput::error(format!(
                    "the editor could not start a terminal: {}",
                    e.message
                ));
            }
        };
        attach(&env, &self.command, &terminal, notes);
        let (mut timed_out, mut cancelled) = (false, false);
        let exit = tokio::select! {
            exit = env.scope.client.wait_for_terminal_exit(session, &terminal) => exit.ok(),
            () = tokio::time::sleep(self.timeout) => { timed_out = true; None }
            () = env.cancel.cancelled() => { cancelled = true; None }
        };
        if exit.is_none()
            && let Err(e) = env.scope.client.kill_terminal(session, &terminal).await
        {
            tracing::warn!(%terminal, "terminal/kill failed: {e}");
        }
        let output = if cancelled {
            // The user is waiting for the turn to stop; do not wait on more output.
            None
        } else {
            env.scope
                .client
                .terminal_output(session, &terminal)
                .await
                .ok()
        };
        if let Err(e) = env.scope.client.release_terminal(session, &terminal).await {
            tracing::warn!(%terminal, "terminal/release failed: {e}");
        }
        let exit = exit.or_else(|| output.as_ref().and_then(|o| o.exit.clone()));
        let mut text = output
            .as_ref()
            .map(|o| o.output.clone())
            .unwrap_or_default();
        if output.as_ref().is_some_and(|o| o.truncated) {
            text.insert_str(0, "[… earlier output dropped by the editor …]\n");
        } else if text.len() > text::MAX_COMMAND_BYTES {
            // The editor ignored outputByteLimit: bounded here as a local run is.
            text = crate::local::head_and_tail(&text, text::MAX_COMMAND_BYTES);
        }
        let failed = cancelled || timed_out || exit.as_ref().is_none_or(|e| e.code != Some(0));
        let ending = ending(exit.as_ref(), timed_out, cancelled, self.timeout);
        let content = vec![ToolContent::Terminal {
            id: terminal,
            output: Some(shown(&text, &ending)),
        }];
        result(&self.command, ending, &text, failed, content)
    }

    async fn locally(self, env: ToolEnv, sandbox: Option<&Sandbox>) -> ToolOutput {
        // The editor has no terminal to watch, so the output is shown as it comes.
        let live = |latest: &str| {
            env.scope.sink.emit(
                &env.scope.session_id,
                TurnEvent::ToolCallUpdate {
                    id: env.call_id.clone(),
                    status: None,
                    content: Some(vec![ToolContent::Text {
                        text: shown(latest, "Running…"),
                    }]),
                    title: None,
                },
            );
        };
        let started = match sandbox {
            Some(sandbox) => {
                let (program, args) = env.scope.shell.line(&self.command);
                sandbox.command(program, args)
            }
            None => env.scope.shell.tied_command(&self.command),
        };
        let run = match local::run_command(
            started,
            &self.dir,
            (self.timeout, text::MAX_COMMAND_BYTES),
            &env.cancel,
            Some(&live),
        )
        .await
        {
            Ok(run) => {
                env.journal.note(Effect::Command {
                    line: self.command.clone(),
                });
                run
            }
            Err(e) => {
                return ToolOutput::error(format!(
                    "cannot run the command in {}: {e}",
                    self.dir.display()
                ));
            }
        };
        let ending = ending(
            run.exit.as_ref(),
            run.timed_out,
            run.cancelled,
            self.timeout,
        );
        let failed = run.exit.as_ref().is_none_or(|e| e.code != Some(0));
        let text = shown(&run.output, &ending);
        result(
            &self.command,
            ending,
            &run.output,
            failed,
            vec![ToolContent::Text { text }],
        )
    }
}

impl Call for CommandCall {
    fn preview<'a>(
        &'a mut self,
        _env: &'a ToolEnv,
    ) -> BoxFuture<'a, Result<Vec<ToolContent>, ToolOutput>> {
        let content = vec![reviewed(&self.command, &self.dir)];
        Box::pin(async move { Ok(content) })
    }

    fn run(self: Box<Self>, env: ToolEnv) -> BoxFuture<'static, ToolOutput> {
        Box::pin(async move {
            let (sandbox, note) = self.confinement(&env).await;
            // Shown with the editor's terminal while the command runs, and in the result.
            let notes: Vec<ToolContent> = note
                .map(|text| ToolContent::Text { text })
                .into_iter()
                .collect();
            let dir = self.dir.clone();
            let mut out = if self.background {
                let sandbox = sandbox.as_deref();
                super::run_background::start(&self.command, &self.dir, &env, sandbox, &notes).await
            } else if env.scope.caps.terminal {
                self.in_terminal(env, sandbox.as_deref(), &notes).await
            } else {
                self.locally(env, sandbox.as_deref()).await
            };
            // The system's "Permission denied" reads like the project's problem; say when it
            // was the sandbox's, and how to ask the user to leave it.
            if let Some(sandbox) = &sandbox
                && out.failed
                && let Some(why) = sandbox::explain(sandbox.policy(), &dir, &out.model)
            {
                out.model.push_str("\n\n");
                out.model.push_str(&why);
                out.content.push(ToolContent::Text { text: why });
            }
            out.content.extend(notes);
            out
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_line_of_a_command_is_shown() {
        assert_eq!(
            visible("echo hi $'\\'\ntouch PWNED\n#'"),
            "echo hi $'\\' ⏎ touch PWNED ⏎ #'"
        );
        assert_eq!(visible("a\rb\u{b}c\n"), "a␍b\\u{b}c");
        assert_eq!(visible("ls \u{202e}fdp.exe"), "ls \\u{202e}fdp.exe");
        let ToolContent::Text { text } = reviewed("a ```b```\nc", std::path::Path::new("/ws"))
        else {
            panic!()
        };
        assert_eq!(text, "````sh\na ```b```\nc\n````\nin /ws");
    }
}
