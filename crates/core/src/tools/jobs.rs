//! `command_output` and `stop_command`: the model's handles on its background commands
//! (tools/background.rs). Neither asks: reading what an allowed command wrote, or stopping
//! it, changes nothing the user did not already allow.

use futures::future::BoxFuture;
use schemars::JsonSchema;
use serde::Deserialize;

use super::background::Reading;
use super::run_background::ended;
use super::{Call, PathBase, Prepared, ToolEnv, ToolError, ToolOutput, TypedTool};
use crate::types::{Access, ToolKind};

/// Arguments of both tools.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct JobArgs {
    /// The background command's id (`bg-1`), as run_command gave it
    pub(crate) id: String,
}

/// `command_output`.
pub(crate) struct CommandOutput;

impl TypedTool for CommandOutput {
    type Args = JobArgs;
    const NAME: &'static str = "command_output";
    const KIND: ToolKind = ToolKind::Read;
    const LABEL: &'static str = "Command output";

    fn description(&self) -> &str {
        "A background command's new output since the last read, and its exit status once it has ended."
    }

    fn prepare(&self, args: JobArgs, _place: &PathBase) -> Result<Prepared, ToolError> {
        Ok(Prepared {
            title: format!("Output of {}", args.id.trim()),
            locations: Vec::new(),
            access: Access::Free,
            call: Box::new(JobCall {
                id: args.id,
                stop: false,
            }),
        })
    }
}

/// `stop_command`.
pub(crate) struct StopCommand;

impl TypedTool for StopCommand {
    type Args = JobArgs;
    const NAME: &'static str = "stop_command";
    const KIND: ToolKind = ToolKind::Execute;
    const LABEL: &'static str = "Stop command";

    fn description(&self) -> &str {
        "Stop a background command (and everything it started); returns its last output."
    }

    fn prepare(&self, args: JobArgs, _place: &PathBase) -> Result<Prepared, ToolError> {
        Ok(Prepared {
            title: format!("Stop {}", args.id.trim()),
            locations: Vec::new(),
            access: Access::Free,
            call: Box::new(JobCall {
                id: args.id,
                stop: true,
            }),
        })
    }
}

struct JobCall {
    id: String,
    stop: bool,
}

impl Call for JobCall {
    fn run(self: Box<Self>, env: ToolEnv) -> BoxFuture<'static, ToolOutput> {
        Box::pin(async move {
            let Some(job) = env.scope.background.find(&self.id) else {
                let known: Vec<String> = env
                    .scope
                    .background
                    .list()
                    .into_iter()
                    .map(|j| j.id)
                    .collect();
                return ToolOutput::error(format!(
                    "no background command `{}` in this session{}",
                    self.id.trim(),
                    if known.is_empty() {
                        String::new()
                    } else {
                        format!(" (there are: {})", known.join(", "))
                    }
                ));
            };
            if self.stop {
                // What it wrote up to now, then stopped.
                let before = job.read().await;
                let was_running = before.ended.is_none();
                job.halt().await;
                let state = if was_running {
                    "Stopped.".to_string()
                } else {
                    format!(
                        "It had already ended: {}.",
                        ended(before.ended.clone().flatten().as_ref())
                    )
                };
                return ToolOutput::text(format!(
                    "{} (`{}`): {state}\n{}",
                    job.command,
                    job.id,
                    described(&before)
                ));
            }
            let reading = job.read().await;
            let state = match &reading.ended {
                Some(exit) => format!("It has ended: {}.", ended(exit.as_ref())),
                None => "It is still running.".to_string(),
            };
            ToolOutput::text(format!(
                "{} (`{}`): {state}\n{}",
                job.command,
                job.id,
                described(&reading)
            ))
        })
    }
}

/// A reading's output for the model.
fn described(reading: &Reading) -> String {
    let mut out = String::new();
    if reading.dropped > 0 {
        out.push_str(&format!("[{} earlier bytes left out]\n", reading.dropped));
    }
    if reading.output.trim().is_empty() {
        out.push_str("No new output.");
    } else {
        out.push_str("New output:\n");
        out.push_str(&reading.output);
    }
    out
}
