//! The only place flags, environment variables and the TOML file are read.
//!
//! Precedence is flags > environment > config file > defaults (DESIGN.md §3). The result is
//! one immutable [`Config`] that the rest of tandem receives as an argument.

mod dirs;
mod file;
pub mod hooks;
pub mod limits;
mod mcp;
mod models;
pub mod permissions;
pub mod presets;
mod project;
mod settings;

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::types::Mode;
use dirs::{default_config_path, default_home, home_dir, resolve_dir, user_home};
use file::FileConfig;
pub use limits::{LoopGuard, Timeouts};
pub use mcp::ServerSpec;
use models::resolve_models;
pub use presets::Preset;
pub use project::{ProjectConfig, project};
pub use settings::Settings;

/// Settings given on the command line; `None` means "not given".
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    /// `--config`: explicit config file path.
    pub config_file: Option<PathBuf>,
    /// `--provider`: a preset name.
    pub provider: Option<String>,
    /// `--base-url`: the OpenAI-compatible endpoint.
    pub base_url: Option<String>,
    /// `--model`: the default model id.
    pub model: Option<String>,
    /// `--mode`: the mode new sessions start in.
    pub mode: Option<String>,
    /// `--replay`: serve scripted model turns from this fixture instead of a server.
    pub replay: Option<PathBuf>,
    /// The mode when neither flag, environment nor file sets one (`exec` uses `read-only`).
    pub fallback_mode: Option<Mode>,
    /// `--max-turns`: most model requests one prompt may make.
    pub max_turn_requests: Option<u32>,
}

/// A secret that never prints itself.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    /// Wraps a key read from the environment.
    pub fn new(key: impl Into<String>) -> Self {
        Self(key.into())
    }
    /// The key itself, for the one place that puts it in an `Authorization` header.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey(<redacted>)")
    }
}

/// Where model requests go and how they authenticate.
#[derive(Debug, Clone)]
pub struct Endpoint {
    /// Preset name, or `custom` for a bare base URL.
    pub provider: String,
    /// Base URL of the chat-completions API, without a trailing slash.
    pub base_url: String,
    /// The key, when one is set.
    pub api_key: Option<ApiKey>,
    /// The variable the key is (or would be) read from, for error messages.
    pub api_key_env: String,
    /// Whether the server needs a key (hosted services do, local servers don't).
    pub requires_key: bool,
}

/// What tandem knows about one model it can offer.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelSpec {
    /// The id sent to the server.
    pub id: String,
    /// The label shown in the editor's model picker.
    pub name: String,
    /// Context window in tokens, reported in `usage_update.size`.
    pub context_window: u64,
    /// Whether the model takes `reasoning_effort`.
    pub reasoning_effort: bool,
    /// Whether the model takes image parts.
    pub images: bool,
}

/// A custom action (`[[actions]]`): a named prompt template or a named command.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ActionSpec {
    /// The name (also its slash command).
    pub name: String,
    /// One line for menus.
    #[serde(default)]
    pub description: Option<String>,
    /// A prompt template run as a turn (`$ARGUMENTS` is replaced).
    #[serde(default)]
    pub prompt: Option<String>,
    /// A shell command run under the permission rules.
    #[serde(default)]
    pub command: Option<String>,
}

/// Bounded retries for 429, 5xx and connection failures.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RetryPolicy {
    /// Total tries including the first.
    pub max_attempts: u32,
    /// Delay before the second try; doubles each time unless `Retry-After` says otherwise.
    pub initial_delay: Duration,
    /// Never spend longer than this waiting between tries in total.
    pub max_total: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_attempts: 4,
            initial_delay: Duration::from_millis(500),
            max_total: Duration::from_secs(30),
        }
    }
}

/// Everything tandem needs to run, resolved once at start-up.
#[derive(Debug, Clone)]
pub struct Config {
    /// The model server.
    pub endpoint: Endpoint,
    /// The model new sessions start with.
    pub default_model: String,
    /// Every model offered to the editor; always contains `default_model`.
    pub models: Vec<ModelSpec>,
    /// The mode new sessions start in.
    pub default_mode: Mode,
    /// Retry behaviour for model requests.
    pub retry: RetryPolicy,
    /// Timeouts for the model server and the editor.
    pub timeouts: Timeouts,
    /// Most bytes one model response may take on the wire (`max_response_bytes`).
    pub max_response_bytes: u64,
    /// Guards against a model that repeats itself or overuses a tool.
    pub loops: LoopGuard,
    /// Whether commands and MCP servers tandem starts may inherit its API key variable
    /// (`share_api_key`; off by default).
    pub share_api_key: bool,
    /// Data directory (`TANDEM_HOME`).
    pub home: PathBuf,
    /// The user's config directory (`$XDG_CONFIG_HOME/tandem`): `AGENTS.md`, `commands/`.
    pub config_dir: PathBuf,
    /// Replay fixture used instead of a model server.
    pub replay: Option<PathBuf>,
    /// Extra instructions appended to the system prompt.
    pub instructions: Option<String>,
    /// Most model requests one prompt may make (tool loops included).
    pub max_turn_requests: u32,
    /// Share of the context window at which the conversation is compacted (0 < x <= 1).
    pub compact_threshold: f64,
    /// How long requests may run after stdin ends before prompts are cancelled
    /// (`TANDEM_EOF_GRACE_SECS`).
    pub eof_grace: Duration,
    /// Longest JSON-RPC line read from stdin; longer ones are refused and discarded
    /// (`TANDEM_MAX_MESSAGE_BYTES`, `max_message_bytes`).
    pub max_message_bytes: usize,
    /// Custom actions from the user's config file (`[[actions]]`).
    pub actions: Vec<ActionSpec>,
    /// MCP servers from the user's config file (`[[mcp_servers]]`).
    pub mcp_servers: Vec<ServerSpec>,
    /// The config file that was read, if any.
    pub config_file: Option<PathBuf>,
    /// Extra folders of skills (`skill_dirs`; `~/` and paths relative to the config file
    /// resolved).
    pub skill_dirs: Vec<PathBuf>,
    /// Hooks from the user's config file (`[hooks]`).
    pub hooks: std::sync::Arc<hooks::Hooks>,
    /// Permission rules from the user's config file (`[permissions]`).
    pub permissions: Vec<permissions::Rule>,
    /// The user's home directory, when known: `~/` in rules, and a session opened there is
    /// not a project.
    pub user_home: Option<PathBuf>,
    /// Whether model requests may carry `response_format: json_schema` (`structured_output`;
    /// by default the provider preset's answer, off for a custom endpoint).
    pub structured_output: bool,
}

/// A configuration that cannot be used, with what to fix.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file exists but is not valid TOML for tandem.
    #[error("cannot parse config file {path}: {message}")]
    Parse { path: PathBuf, message: String },
    /// The file could not be read.
    #[error("cannot read config file {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    /// A value is not one tandem knows.
    #[error("{0}")]
    Invalid(String),
}

impl Config {
    /// The environment variables that carry the API key, which the processes tandem starts
    /// must not inherit: the preset's, `OPENAI_API_KEY`, and any other set to the same value.
    /// Empty without a key, or when the user shares it (`share_api_key`).
    pub fn key_vars(&self) -> Vec<String> {
        let Some(key) = &self.endpoint.api_key else {
            return Vec::new();
        };
        if self.share_api_key {
            return Vec::new();
        }
        let key = key.expose();
        let mut vars = vec![
            self.endpoint.api_key_env.clone(),
            "OPENAI_API_KEY".to_string(),
        ];
        vars.extend(
            std::env::vars_os()
                .filter(|(_, v)| v.to_str().is_some_and(|v| v.trim() == key))
                .filter_map(|(k, _)| k.into_string().ok()),
        );
        vars.sort();
        vars.dedup();
        vars
    }

    /// Resolves the configuration from the process environment.
    pub fn load(overrides: &Overrides) -> Result<Self, ConfigError> {
        Self::resolve(overrides, &|name| std::env::var(name).ok())
    }

    /// Resolves the configuration from explicit sources; `env` looks variables up.
    pub fn resolve(
        overrides: &Overrides,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Self, ConfigError> {
        let env_nonempty = |name: &str| env(name).filter(|v| !v.trim().is_empty());
        let config_file = overrides
            .config_file
            .clone()
            .or_else(|| env_nonempty("TANDEM_CONFIG").map(PathBuf::from));
        let (file, config_file) = match config_file {
            Some(path) => (FileConfig::read(&path)?, Some(path)),
            None => {
                let default = default_config_path(env);
                match default {
                    Some(path) if path.is_file() => (FileConfig::read(&path)?, Some(path)),
                    _ => (FileConfig::default(), None),
                }
            }
        };

        let provider_name = overrides
            .provider
            .clone()
            .or_else(|| env_nonempty("TANDEM_PROVIDER"))
            .or_else(|| file.provider.clone());
        let preset = match &provider_name {
            Some(name) => Some(presets::preset(name).ok_or_else(|| {
                ConfigError::Invalid(format!(
                    "unknown provider `{name}`; known providers: {}",
                    presets::preset_names()
                ))
            })?),
            None => None,
        };
        let openai = presets::PRESETS[0];
        let explicit_base = overrides
            .base_url
            .clone()
            .or_else(|| env_nonempty("OPENAI_BASE_URL"))
            .or_else(|| file.base_url.clone());
        let base_url = explicit_base
            .clone()
            .unwrap_or_else(|| preset.unwrap_or(&openai).base_url.to_string())
            .trim_end_matches('/')
            .to_string();
        let api_key_env = file
            .api_key_env
            .clone()
            .unwrap_or_else(|| preset.unwrap_or(&openai).api_key_env.to_string());
        // A preset's own variable first, then OPENAI_API_KEY, which every compatible client honours.
        let api_key = match env_nonempty(&api_key_env) {
            Some(key) => Some((api_key_env.as_str(), key)),
            None => env_nonempty("OPENAI_API_KEY").map(|key| ("OPENAI_API_KEY", key)),
        };
        let api_key = match api_key {
            Some((var, key)) => Some(checked_key(var, &key)?),
            None => None,
        };
        let requires_key = match preset {
            Some(p) => p.requires_key,
            // No preset: the OpenAI default needs a key; a custom endpoint is the user's call.
            None => explicit_base.is_none() || base_url == openai.base_url,
        };
        let endpoint = Endpoint {
            provider: preset.map_or_else(
                || {
                    if explicit_base.is_some() {
                        "custom".to_string()
                    } else {
                        "openai".to_string()
                    }
                },
                |p| p.name.to_string(),
            ),
            base_url,
            api_key,
            api_key_env,
            requires_key,
        };

        let replay = overrides.replay.clone();
        let default_model = overrides
            .model
            .clone()
            .or_else(|| env_nonempty("TANDEM_MODEL"))
            .or_else(|| file.model.clone())
            .unwrap_or_else(|| {
                if replay.is_some() {
                    "replay".to_string()
                } else {
                    "gpt-4o-mini".to_string()
                }
            });
        let window = preset.unwrap_or(&openai).default_context_window;
        let models = resolve_models(
            &default_model,
            env_nonempty("TANDEM_MODELS").as_deref(),
            &file,
            window,
        );

        let mode_name = overrides
            .mode
            .clone()
            .or_else(|| env_nonempty("TANDEM_MODE"))
            .or_else(|| file.mode.clone());
        let default_mode = match mode_name {
            Some(name) => Mode::parse(&name).ok_or_else(|| {
                ConfigError::Invalid(format!(
                    "unknown mode `{name}`; modes: {}",
                    Mode::ALL.map(Mode::id).join(", ")
                ))
            })?,
            None => overrides.fallback_mode.unwrap_or(Mode::Ask),
        };

        let retry = file.retry.resolve()?;
        let timeouts = file.timeouts.resolve()?;
        let loops = file.loops.resolve(&file.tool_budgets)?;
        let max_response_bytes = match file.max_response_bytes {
            Some(0) => {
                return Err(ConfigError::Invalid(
                    "max_response_bytes must be positive".into(),
                ));
            }
            Some(n) => n,
            None => limits::DEFAULT_MAX_RESPONSE_BYTES,
        };
        let home = env_nonempty("TANDEM_HOME")
            .map(PathBuf::from)
            .unwrap_or_else(|| default_home(env));

        let config_dir = default_config_path(env)
            .and_then(|p| p.parent().map(Path::to_path_buf))
            .unwrap_or_else(|| home_dir(env).join(".config").join("tandem"));
        let permissions = match &config_file {
            Some(path) => permissions::parse_all(&file.permissions, path)
                .map_err(|e| ConfigError::Invalid(format!("{}: {e}", path.display())))?,
            None => Vec::new(),
        };
        Ok(Config {
            permissions,
            user_home: user_home(env),
            config_dir,
            endpoint,
            default_model,
            models,
            default_mode,
            retry,
            timeouts,
            max_response_bytes,
            loops,
            share_api_key: file.share_api_key.unwrap_or(false),
            structured_output: file
                .structured_output
                .unwrap_or_else(|| preset.is_some_and(|p| p.structured_output)),
            home,
            replay,
            instructions: file.instructions.clone(),
            max_turn_requests: match overrides.max_turn_requests.or(file.max_turn_requests) {
                Some(0) => {
                    return Err(ConfigError::Invalid(
                        "max_turn_requests must be at least 1".into(),
                    ));
                }
                Some(n) => n,
                None => 100,
            },
            mcp_servers: file.mcp_servers.clone(),
            actions: file.actions.clone(),
            eof_grace: match env_nonempty("TANDEM_EOF_GRACE_SECS") {
                Some(v) => Duration::from_secs_f64(parse_env(
                    "TANDEM_EOF_GRACE_SECS",
                    &v,
                    |s: &f64| s.is_finite() && *s >= 0.0,
                    "a number of seconds",
                )?),
                None => limits::DEFAULT_EOF_GRACE,
            },
            max_message_bytes: match env_nonempty("TANDEM_MAX_MESSAGE_BYTES") {
                Some(v) => Some(parse_env(
                    "TANDEM_MAX_MESSAGE_BYTES",
                    &v,
                    |n: &u64| *n > 0,
                    "a positive number of bytes",
                )?),
                None => file.max_message_bytes,
            }
            .map_or(Ok(limits::DEFAULT_MAX_MESSAGE_BYTES), |n| match n {
                0 => Err(ConfigError::Invalid(
                    "max_message_bytes must be positive".into(),
                )),
                n => Ok(n),
            })?
            .try_into()
            .unwrap_or(usize::MAX),
            compact_threshold: match file.compact_threshold {
                Some(t) if t > 0.0 && t <= 1.0 => t,
                Some(_) => {
                    return Err(ConfigError::Invalid(
                        "compact_threshold must be a share of the context window, above 0 and at most 1".into(),
                    ));
                }
                None => 0.85,
            },
            skill_dirs: file
                .skill_dirs
                .iter()
                .map(|d| resolve_dir(d, config_file.as_deref(), env))
                .collect(),
            hooks: std::sync::Arc::new(
                file.hooks
                    .resolve()
                    .map_err(|e| ConfigError::Invalid(e.to_string()))?,
            ),
            config_file,
        })
    }

    /// The spec of a configured model.
    pub fn model(&self, id: &str) -> Option<&ModelSpec> {
        self.models.iter().find(|m| m.id == id)
    }
}

/// A key goes into an `Authorization` header: surrounding whitespace (a trailing newline from
/// `$(cat keyfile)`) is dropped, and what a header cannot carry (control or non-ASCII
/// characters) is refused with a clear message.
/// An environment variable's value parsed as `T`, or a configuration error saying what it must be.
fn parse_env<T: std::str::FromStr>(
    name: &str,
    value: &str,
    valid: impl Fn(&T) -> bool,
    what: &str,
) -> Result<T, ConfigError> {
    value
        .trim()
        .parse::<T>()
        .ok()
        .filter(|v| valid(v))
        .ok_or_else(|| ConfigError::Invalid(format!("{name} must be {what}, got `{value}`")))
}

fn checked_key(var: &str, key: &str) -> Result<ApiKey, ConfigError> {
    let key = key.trim();
    if key.chars().any(|c| c.is_control() || !c.is_ascii()) {
        return Err(ConfigError::Invalid(format!(
            "the API key in {var} contains control or non-ASCII characters and cannot be sent in an HTTP header"
        )));
    }
    Ok(ApiKey::new(key))
}

#[cfg(test)]
mod tests;
