//! The `[hooks]` table of the user's config file, checked into [`Hooks`]: which command runs
//! at which point of a session. Running them is customize/hooks' job.

use std::time::Duration;

use serde::Deserialize;

/// How long a hook may run unless its `timeout_secs` says otherwise.
pub(crate) const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// One hook as written in the config file.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct HookSpec {
    /// The shell command (`sh -c`).
    pub(crate) command: String,
    /// For tool events: a regular expression the whole tool name must match (`*` or absent:
    /// every tool).
    pub(crate) matcher: Option<String>,
    /// Seconds before the hook is killed (default 30).
    pub(crate) timeout_secs: Option<f64>,
}

/// The `[hooks]` table: a list of hooks per event.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct HooksSpec {
    /// When a session starts (new, loaded, resumed or forked).
    #[serde(default)]
    pub(crate) session_start: Vec<HookSpec>,
    /// When the user sends a prompt, before the model sees it.
    #[serde(default)]
    pub(crate) user_prompt_submit: Vec<HookSpec>,
    /// Before a tool call runs (after its arguments are checked).
    #[serde(default)]
    pub(crate) pre_tool_use: Vec<HookSpec>,
    /// After a tool call ran.
    #[serde(default)]
    pub(crate) post_tool_use: Vec<HookSpec>,
    /// When a prompt's turn ends.
    #[serde(default)]
    pub(crate) stop: Vec<HookSpec>,
}

/// Why the hooks configuration is wrong.
#[derive(Debug, thiserror::Error)]
#[error("hooks.{event}: {message}")]
pub struct HookConfigError {
    event: &'static str,
    message: String,
}

/// A checked hook, ready to run.
#[derive(Debug, Clone)]
pub struct Hook {
    /// The shell command.
    pub command: String,
    /// Which tools it runs for (tool events only); `None`: all.
    pub matcher: Option<regex::Regex>,
    /// How long it may run.
    pub timeout: Duration,
}

/// The configured hooks, checked.
#[derive(Debug, Clone, Default)]
pub struct Hooks {
    by_event: [Vec<Hook>; 5],
}

/// The points a hook can run at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// A session opened.
    SessionStart,
    /// A prompt arrived.
    UserPromptSubmit,
    /// A tool call is about to run.
    PreToolUse,
    /// A tool call ran.
    PostToolUse,
    /// A turn ended.
    Stop,
}

impl Event {
    /// Every event, in the order a session meets them.
    pub const ALL: [Event; 5] = [
        Event::SessionStart,
        Event::UserPromptSubmit,
        Event::PreToolUse,
        Event::PostToolUse,
        Event::Stop,
    ];

    /// The name used in the config, on stdin and in `TANDEM_HOOK_EVENT`.
    pub fn name(self) -> &'static str {
        match self {
            Event::SessionStart => "session_start",
            Event::UserPromptSubmit => "user_prompt_submit",
            Event::PreToolUse => "pre_tool_use",
            Event::PostToolUse => "post_tool_use",
            Event::Stop => "stop",
        }
    }
    fn index(self) -> usize {
        self as usize
    }
}

impl Hooks {
    /// The hooks configured for `event`, in the config's order.
    pub fn of(&self, event: Event) -> &[Hook] {
        &self.by_event[event.index()]
    }

    /// Whether any hook is configured for `event`.
    pub fn any(&self, event: Event) -> bool {
        !self.of(event).is_empty()
    }
}

impl HooksSpec {
    /// Checks the matchers and timeouts.
    pub fn resolve(&self) -> Result<Hooks, HookConfigError> {
        let lists = [
            (Event::SessionStart, &self.session_start),
            (Event::UserPromptSubmit, &self.user_prompt_submit),
            (Event::PreToolUse, &self.pre_tool_use),
            (Event::PostToolUse, &self.post_tool_use),
            (Event::Stop, &self.stop),
        ];
        let mut hooks = Hooks::default();
        for (event, specs) in lists {
            for spec in specs {
                let error = |message: String| HookConfigError {
                    event: event.name(),
                    message,
                };
                if spec.command.trim().is_empty() {
                    return Err(error("`command` is empty".into()));
                }
                let tool_event = matches!(event, Event::PreToolUse | Event::PostToolUse);
                let matcher = match spec.matcher.as_deref().map(str::trim) {
                    None | Some("" | "*") => None,
                    Some(_) if !tool_event => {
                        return Err(error("`matcher` only applies to tool events".into()));
                    }
                    Some(pattern) => Some(
                        regex::Regex::new(&format!("^(?:{pattern})$"))
                            .map_err(|e| error(format!("invalid matcher `{pattern}`: {e}")))?,
                    ),
                };
                let timeout = match spec.timeout_secs {
                    None => DEFAULT_TIMEOUT,
                    Some(s) if s.is_finite() && s > 0.0 => Duration::from_secs_f64(s),
                    Some(_) => {
                        return Err(error("`timeout_secs` must be a positive number".into()));
                    }
                };
                hooks.by_event[event.index()].push(Hook {
                    command: spec.command.clone(),
                    matcher,
                    timeout,
                });
            }
        }
        Ok(hooks)
    }
}
