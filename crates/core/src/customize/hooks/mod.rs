//! Hooks: commands from the user's config that run at points of a session (`session_start`,
//! `user_prompt_submit`, `pre_tool_use`, `post_tool_use`, `stop`). Each gets the event as JSON
//! on stdin; what it prints can add context, and a `pre_tool_use` hook can allow, deny or ask.
//! A hook that fails, prints nonsense or runs past its time is reported and otherwise ignored.

mod process;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Deserialize;
use serde_json::{Value, json};

use crate::platform::Shell;

pub(crate) use crate::config::hooks::{Event, Hook, Hooks};
pub(crate) use crate::permission::ToolVerdict;

/// What the hooks of one event said.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Said {
    /// Text to add for the model (session start, prompt, tool result).
    pub(crate) context: Vec<String>,
    /// A hook blocked the prompt or denied the call, with its reason.
    pub(crate) blocked: Option<String>,
    /// `allow` or `ask` from a `pre_tool_use` hook.
    pub(crate) decision: Option<String>,
    /// Hooks that failed, as one line each for the user.
    pub(crate) failures: Vec<String>,
}

impl Said {
    /// The combined decision of the `pre_tool_use` hooks: a deny wins, then an ask, then an
    /// allow.
    pub(crate) fn verdict(&self) -> ToolVerdict {
        if let Some(reason) = &self.blocked {
            return ToolVerdict::Deny(reason.clone());
        }
        match self.decision.as_deref() {
            Some("ask") => ToolVerdict::Ask,
            Some("allow") => ToolVerdict::Allow,
            _ => ToolVerdict::Pass,
        }
    }

    /// The added context as one text, or `None`.
    pub(crate) fn context_text(&self) -> Option<String> {
        (!self.context.is_empty()).then(|| self.context.join("\n\n"))
    }
}

/// Where a session's hooks run and what they are told about it.
#[derive(Debug, Clone)]
pub(crate) struct HookEnv {
    /// The session.
    pub(crate) session_id: String,
    /// Its working directory, where hooks run.
    pub(crate) cwd: PathBuf,
    /// Its transcript file.
    pub(crate) transcript: PathBuf,
    /// The shell hook commands run in.
    pub(crate) shell: Shell,
}

/// Runs the hooks of `event` (for tool events, those matching `tool`) one after another,
/// each with `fields` plus the common ones on stdin; stops at the first that blocks.
async fn run_hooks(
    hooks: &Hooks,
    event: Event,
    env: &HookEnv,
    tool: Option<&str>,
    fields: Value,
) -> Said {
    let mut said = Said::default();
    let hooks: Vec<&Hook> = hooks
        .of(event)
        .iter()
        .filter(|h| match (&h.matcher, tool) {
            (Some(m), Some(tool)) => m.is_match(tool),
            _ => true,
        })
        .collect();
    if hooks.is_empty() {
        return said;
    }
    let mut input = json!({
        "event": event.name(),
        "session_id": env.session_id,
        "cwd": env.cwd,
        "transcript_path": env.transcript,
    });
    if let (Some(obj), Value::Object(extra)) = (input.as_object_mut(), fields) {
        obj.extend(extra);
    }
    let input = input.to_string();
    let mut vars = vec![
        ("TANDEM_HOOK_EVENT", event.name().to_string()),
        ("TANDEM_SESSION_ID", env.session_id.clone()),
        ("TANDEM_PROJECT_DIR", env.cwd.display().to_string()),
        ("TANDEM_TRANSCRIPT", env.transcript.display().to_string()),
    ];
    if let Some(tool) = tool {
        vars.push(("TANDEM_TOOL_NAME", tool.to_string()));
    }
    for hook in hooks {
        let exit = process::run(
            &env.shell,
            &hook.command,
            &env.cwd,
            &vars,
            &input,
            hook.timeout,
        )
        .await;
        interpret(event, hook, exit, &mut said);
        if said.blocked.is_some() {
            break;
        }
    }
    for failure in &said.failures {
        tracing::warn!(event = event.name(), session = %env.session_id, "{failure}");
    }
    said
}

/// What a hook's output may say when it prints JSON.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Output {
    decision: Option<String>,
    reason: Option<String>,
    context: Option<String>,
}

/// Folds one hook's exit into `said`: exit 0 with plain text adds context, with JSON may
/// decide; exit 2 blocks (stderr is the reason); anything else is a failure.
fn interpret(event: Event, hook: &Hook, exit: process::Exit, said: &mut Said) {
    let name = short(&hook.command);
    let (code, stdout, stderr) = match exit {
        process::Exit::Code(code, out, err) => (code, out, err),
        process::Exit::TimedOut => {
            said.failures.push(format!(
                "hook `{name}` ({}) ran longer than {} s and was stopped",
                event.name(),
                hook.timeout.as_secs_f64()
            ));
            return;
        }
        process::Exit::NotStarted(e) => {
            said.failures.push(format!(
                "hook `{name}` ({}) could not start: {e}",
                event.name()
            ));
            return;
        }
    };
    match code {
        Some(0) => {}
        Some(2) => {
            let reason = stderr.trim();
            said.blocked = Some(if reason.is_empty() {
                format!("blocked by the hook `{name}`")
            } else {
                reason.to_string()
            });
            return;
        }
        other => {
            let why =
                other.map_or_else(|| "was killed".to_string(), |c| format!("exited with {c}"));
            let detail = stderr.trim();
            said.failures.push(format!(
                "hook `{name}` ({}) {why}{}",
                event.name(),
                if detail.is_empty() {
                    String::new()
                } else {
                    format!(": {}", detail.chars().take(300).collect::<String>())
                }
            ));
            return;
        }
    }
    said_out(event, &name, stdout.trim(), said);
}

/// Folds what a hook that exited 0 printed into `said`: plain text is context, a JSON object
/// may add context and decide.
fn said_out(event: Event, name: &str, text: &str, said: &mut Said) {
    if text.is_empty() {
        return;
    }
    if !text.starts_with('{') {
        said.context.push(text.to_string());
        return;
    }
    let output: Output = match serde_json::from_str(text) {
        Ok(output) => output,
        Err(e) => {
            said.failures.push(format!(
                "hook `{name}` ({}) printed JSON tandem cannot read: {e}",
                event.name()
            ));
            return;
        }
    };
    if let Some(context) = output.context.filter(|c| !c.trim().is_empty()) {
        said.context.push(context);
    }
    let reason = output.reason.unwrap_or_default();
    match (event, output.decision.as_deref()) {
        (_, None) => {}
        (Event::PreToolUse, Some("deny")) | (Event::UserPromptSubmit, Some("block")) => {
            said.blocked = Some(if reason.trim().is_empty() {
                format!("blocked by the hook `{name}`")
            } else {
                reason
            });
        }
        (Event::PreToolUse, Some(d @ ("allow" | "ask"))) => {
            // An ask from any hook outweighs an allow from another.
            if said.decision.as_deref() != Some("ask") {
                said.decision = Some(d.to_string());
            }
        }
        (_, Some(other)) => said.failures.push(format!(
            "hook `{name}` ({}) gave the decision `{other}`, which this event does not take",
            event.name()
        )),
    }
}

/// A command shortened for messages.
fn short(command: &str) -> String {
    let line = command.lines().next().unwrap_or_default().trim();
    if line.chars().count() > 60 {
        format!("{}…", line.chars().take(60).collect::<String>())
    } else {
        line.to_string()
    }
}

/// The hooks and the place of one session, shared by its turns.
#[derive(Debug, Clone)]
pub(crate) struct SessionHooks {
    /// The configured hooks.
    pub(crate) hooks: Arc<Hooks>,
    /// Where they run.
    pub(crate) env: HookEnv,
}

impl SessionHooks {
    /// Hooks for the session `id` in `cwd`, recorded in `transcript`, run in `shell`.
    pub(crate) fn new(
        hooks: Arc<Hooks>,
        shell: Shell,
        id: &str,
        cwd: &Path,
        transcript: &Path,
    ) -> Self {
        Self {
            hooks,
            env: HookEnv {
                session_id: id.to_string(),
                cwd: cwd.to_path_buf(),
                transcript: transcript.to_path_buf(),
                shell,
            },
        }
    }

    /// Runs `event`'s hooks for this session.
    pub(crate) async fn run(&self, event: Event, tool: Option<&str>, fields: Value) -> Said {
        if !self.hooks.any(event) {
            return Said::default();
        }
        run_hooks(&self.hooks, event, &self.env, tool, fields).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::hooks::HooksSpec;

    fn hooks(toml_text: &str) -> Hooks {
        toml::from_str::<HooksSpec>(toml_text)
            .unwrap()
            .resolve()
            .unwrap()
    }

    fn env(dir: &Path) -> HookEnv {
        HookEnv {
            session_id: "s1".into(),
            cwd: dir.to_path_buf(),
            transcript: dir.join("t.jsonl"),
            shell: Shell::system(),
        }
    }

    #[tokio::test]
    async fn decisions_context_and_failures() {
        let dir = tempfile::tempdir().unwrap();
        let h = hooks(
            r#"
            [[pre_tool_use]]
            matcher = "run_command|write_file"
            command = "echo '{\"decision\":\"ask\"}'"
            [[pre_tool_use]]
            command = "cat > input.json; echo 'no secrets' >&2; exit 2"
            [[pre_tool_use]]
            command = "echo never"
            [[user_prompt_submit]]
            command = "echo \"ctx for $TANDEM_SESSION_ID\""
            [[user_prompt_submit]]
            command = "exit 7"
            [[user_prompt_submit]]
            command = "sleep 5"
            timeout_secs = 0.2
            "#,
        );
        let said = run_hooks(
            &h,
            Event::PreToolUse,
            &env(dir.path()),
            Some("read_file"),
            json!({"tool_name": "read_file"}),
        )
        .await;
        assert_eq!(said.verdict(), ToolVerdict::Deny("no secrets".into()));
        let input: Value =
            serde_json::from_str(&std::fs::read_to_string(dir.path().join("input.json")).unwrap())
                .unwrap();
        assert_eq!(input["event"], "pre_tool_use");
        assert_eq!(input["tool_name"], "read_file");
        assert_eq!(input["session_id"], "s1");

        let said = run_hooks(
            &h,
            Event::UserPromptSubmit,
            &env(dir.path()),
            None,
            json!({}),
        )
        .await;
        assert_eq!(said.context_text().as_deref(), Some("ctx for s1"));
        assert_eq!(said.failures.len(), 2, "{said:?}");
        assert!(said.failures[0].contains("exited with 7"));
        assert!(said.failures[1].contains("longer than 0.2 s"));
    }

    #[test]
    fn bad_configs_are_refused() {
        for bad in [
            "[[stop]]\ncommand = \"\"",
            "[[stop]]\ncommand = \"x\"\nmatcher = \"a\"",
            "[[pre_tool_use]]\ncommand = \"x\"\nmatcher = \"(\"",
            "[[pre_tool_use]]\ncommand = \"x\"\ntimeout_secs = 0",
        ] {
            let spec: HooksSpec = toml::from_str(bad).unwrap();
            assert!(spec.resolve().is_err(), "{bad}");
        }
        assert!(toml::from_str::<HooksSpec>("[[on_start]]\ncommand = \"x\"").is_err());
    }
}
