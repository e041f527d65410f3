//! The only place flags, environment variables and the TOML file are read.
//!
//! Precedence is flags > environment > config file > defaults (DESIGN.md §3). The result is
//! one immutable [`Config`] that the rest of tandem receives as an argument.
//!
//! tandem-config also keeps the stored API keys ([`credentials`]: the system keyring or a
//! 0600 file) and the redaction of every secret tandem knows ([`secrets`]). It uses
//! tandem-types and tandem-platform; the permission, model and core crates and the binary use
//! it.

// The floors below, by the names this crate's code reaches them with.
use tandem_platform as platform;
use tandem_types as types;
use tandem_types::conversation;

pub mod credentials;
mod dirs;
mod endpoint;
mod file;
pub mod hooks;
pub mod invocation;
pub(crate) mod limits;
mod mcp;
mod models;
pub mod permissions;
pub mod presets;
pub mod prices;
mod project;
mod providers;
mod resolve;
pub mod sandbox;
pub mod secrets;
mod settings;
mod stored_keys;
mod url;
pub mod web;

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use crate::conversation::Api;
use crate::types::Mode;
pub use endpoint::checked_key;
pub use limits::{LOCAL_OUTPUT_TOKENS, LoopGuard, Timeouts};
pub use mcp::ServerSpec;
pub use project::{ProjectConfig, ProjectPrograms, project};
pub use settings::Settings;
pub use url::check_url;
pub use web::{SearchProvider, SearchSettings, WebSettings};

/// Settings given on the command line; `None` means "not given".
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    /// `--config`: explicit config file path.
    pub config_file: Option<PathBuf>,
    /// `--provider`: a preset name.
    pub provider: Option<String>,
    /// `--base-url`: the OpenAI-compatible endpoint.
    pub base_url: Option<String>,
    /// `--api`: the wire API.
    pub api: Option<String>,
    /// `--model`: the default model id.
    pub model: Option<String>,
    /// `--mode`: the mode new sessions start in.
    pub mode: Option<String>,
    /// `--replay`: serve scripted model turns from this fixture instead of a server.
    pub replay: Option<PathBuf>,
    /// `--trace-wire`: record the protocol lines in this file.
    pub trace_wire: Option<PathBuf>,
    /// The mode when neither flag, environment nor file sets one (`exec` uses `read-only`).
    pub fallback_mode: Option<Mode>,
    /// `--max-turns`: most model requests one prompt may make.
    pub max_turn_requests: Option<u32>,
    /// Only `--mode` may choose the mode, not `TANDEM_MODE` or the config file (`exec`).
    pub mode_from_flag_only: bool,
    /// The keys `tandem login` stored are looked up later by the caller, not while loading
    /// (the editor's agent: the credential store can take a D-Bus round trip or a keychain
    /// prompt, and `initialize` should not wait for it). Loading again with this unset
    /// looks them up.
    pub stored_keys_later: bool,
    /// Read no config file, as if there were none (`tandem doctor`, after the file failed to
    /// load: its other checks still run).
    pub without_config_file: bool,
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
#[derive(Debug, Clone, PartialEq)]
pub struct Endpoint {
    /// Preset name, or `custom` for a bare base URL.
    pub provider: String,
    /// Base URL of the API (the part before `/chat/completions`), without a trailing slash.
    pub base_url: String,
    /// The wire API requests go out in.
    pub api: Api,
    /// The key, when one is set.
    pub api_key: Option<ApiKey>,
    /// The variable the key is (or would be) read from, for error messages.
    pub api_key_env: String,
    /// Whether the server needs a key (hosted services do, local servers don't).
    pub requires_key: bool,
    /// Where the key came from.
    pub key_from: KeyFrom,
    /// More headers every request carries (set by an editor through ACP's `providers/set`).
    pub headers: Vec<(String, String)>,
}

impl Endpoint {
    /// Whether tandem offers the editor its login for this server, and so answers a refused
    /// key as ACP's "authentication required": the server needs a key, or the key is one
    /// `tandem login` saved for it (a server of the user's own with a key), which a new login
    /// replaces. A key from the environment of a server that needs none is not a login's to
    /// change: it comes before any saved key.
    pub fn offers_login(&self) -> bool {
        self.requires_key || matches!(self.key_from, KeyFrom::Stored(_))
    }
}

/// Where the API key was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeyFrom {
    /// No key.
    Nowhere,
    /// This environment variable.
    Env(String),
    /// `tandem login`'s store.
    Stored(crate::credentials::KeyStore),
    /// Given to `tandem login`, which is trying it before saving it.
    Given,
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
    /// Whether the user's config set the window; otherwise what the server reports wins
    /// over the model family table and the provider's default.
    pub window_configured: bool,
    /// Whether the model takes `reasoning_effort`.
    pub reasoning_effort: bool,
    /// Whether the model takes image parts.
    pub images: bool,
    /// How the model edits files.
    pub edit_tool: EditTool,
    /// The `[[providers]]` entry whose server serves it; `None`: the default server.
    pub provider: Option<String>,
    /// Most tokens one answer may take, when the config or the model table says (sent as
    /// `max_tokens`; the Messages API, which needs one, asks for 8,192 otherwise).
    pub max_output_tokens: Option<u32>,
    /// The wire API its server is spoken to in.
    pub api: Api,
    /// What its tokens cost, when the config says (or, for the default server's models, the
    /// server's model list: OpenRouter's `pricing`).
    pub price: Option<Price>,
}

pub use prices::{Price, PriceSource};

/// How a model is offered file edits: `apply_patch` (the V4A format GPT models are trained
/// on) instead of `edit_file` and `write_file`, or those two.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EditTool {
    /// `apply_patch`.
    ApplyPatch,
    /// `edit_file` and `write_file`.
    EditFile,
}

impl EditTool {
    /// Whether a model that edits this way is offered the tool `name`.
    pub fn offers(self, name: &str) -> bool {
        match self {
            EditTool::ApplyPatch => !matches!(name, "edit_file" | "write_file"),
            EditTool::EditFile => name != "apply_patch",
        }
    }
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
    /// How many times an answer that broke off mid-stream (a dropped connection, a server
    /// overloaded mid-answer) before any tool call started is asked for again.
    pub stream_retries: u32,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_attempts: 4,
            initial_delay: Duration::from_millis(500),
            max_total: Duration::from_secs(30),
            // As codex does; opencode retries without a cap.
            stream_retries: 5,
        }
    }
}

/// Everything tandem needs to run, resolved once at start-up.
#[derive(Debug, Clone)]
pub struct Config {
    /// The model server.
    pub endpoint: Endpoint,
    /// Other servers, by the names `[[providers]]` gives them (see `providers.rs`).
    pub providers: Vec<Endpoint>,
    /// The model new sessions start with.
    pub default_model: String,
    /// Every model offered to the editor; always contains `default_model`.
    pub models: Vec<ModelSpec>,
    /// Whether `TANDEM_MODELS` or `[[models]]` chose the models; otherwise the editor is
    /// offered the models the server lists.
    pub models_configured: bool,
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
    pub(crate) share_api_key: bool,
    /// Data directory (`TANDEM_HOME`).
    pub home: PathBuf,
    /// The user's config directory (`$XDG_CONFIG_HOME/tandem`): `AGENTS.md`, `agents/`,
    /// `commands/`, `skills/`.
    pub config_dir: PathBuf,
    /// Replay fixture used instead of a model server.
    pub replay: Option<PathBuf>,
    /// Extra instructions appended to the system prompt.
    pub instructions: Option<String>,
    /// Most model requests one prompt may make (tool loops included).
    pub max_turn_requests: u32,
    /// Most tokens one answer may take for a model whose own limit is not known (the file's
    /// top-level `max_output_tokens`; `Some(0)`: ask for no limit). Unset, a local server's
    /// models get [`LOCAL_OUTPUT_TOKENS`] or a quarter of their window, whichever is less
    /// (see `model::profile`).
    pub max_output_tokens: Option<u32>,
    /// Share of the context window at which the conversation is compacted (0 < x <= 1).
    pub compact_threshold: f64,
    /// Whether sessions start with automatic compaction on (`auto_compact`, default true;
    /// each session may switch it).
    pub(crate) auto_compact: bool,
    /// How long requests may run after stdin ends before prompts are cancelled
    /// (`TANDEM_EOF_GRACE_SECS`).
    pub eof_grace: Duration,
    /// Longest JSON-RPC line read from stdin; longer ones are refused and discarded
    /// (`TANDEM_MAX_MESSAGE_BYTES`, `max_message_bytes`).
    pub max_message_bytes: usize,
    /// Where the wire trace goes, when one is asked for (`--trace-wire`, `TANDEM_TRACE_WIRE`).
    pub trace_wire: Option<PathBuf>,
    /// What sessions do with the programs a project declares: ask (editors), or what
    /// `tandem exec` says (none, or all with `--trust-project`).
    pub project_programs: ProjectPrograms,
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
    /// The shell command lines run in (`shell = [...]`, else the system's: `sh -c`, or
    /// PowerShell or `cmd /C` on Windows).
    pub shell: crate::platform::Shell,
    /// Whether and how commands run in the sandbox (`[sandbox]`, `TANDEM_SANDBOX`).
    pub sandbox: sandbox::SandboxSettings,
    /// How the web tools reach the web (`[web]`).
    pub web: WebSettings,
    /// Most background commands one session runs at once (`background_commands`, 4).
    pub background_commands: usize,
    /// What a prompt sent while a turn runs does (`queued_prompts`).
    pub queued_prompts: QueuedPrompts,
    /// The command line's settings this was resolved from, to resolve again after
    /// `tandem login`.
    pub overrides: Overrides,
}

/// What a `session/prompt` sent while the session's turn runs does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum QueuedPrompts {
    /// It waits, and runs as its own turn once the running one ends.
    #[default]
    Queue,
    /// It steers the running turn: the model reads it at its next request, and the prompt
    /// is answered when that turn ends.
    Steer,
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
    /// A permission rule in the file does not parse.
    #[error("{path}: {source}")]
    Rule {
        path: PathBuf,
        source: permissions::RuleError,
    },
    /// The `[hooks]` table names a bad matcher, an empty command or a bad timeout.
    #[error(transparent)]
    Hooks(#[from] hooks::HookConfigError),
    /// A value is not one tandem knows.
    #[error("{0}")]
    Invalid(String),
}

impl Config {
    /// The environment variables that carry the API key, which the processes tandem starts
    /// must not inherit: the preset's, `OPENAI_API_KEY`, and any other set to the same value.
    /// Empty without a key, or when the user shares it (`share_api_key`).
    pub fn key_vars(&self) -> Vec<String> {
        if self.share_api_key {
            return Vec::new();
        }
        let mut vars = Vec::new();
        for endpoint in std::iter::once(&self.endpoint).chain(&self.providers) {
            let Some(key) = &endpoint.api_key else {
                continue;
            };
            let key = key.expose();
            vars.push(endpoint.api_key_env.clone());
            if endpoint.provider == self.endpoint.provider {
                vars.push("OPENAI_API_KEY".to_string());
            }
            vars.extend(
                std::env::vars_os()
                    .filter(|(_, v)| v.to_str().is_some_and(|v| v.trim() == key))
                    .filter_map(|(k, _)| k.into_string().ok()),
            );
        }
        vars.retain(|v| !v.is_empty());
        vars.sort();
        vars.dedup();
        vars
    }

    /// Resolves the configuration from the process environment; a server without a key in
    /// the environment (the default one, or a `[[providers]]` entry's) gets the one
    /// `tandem login` stored for its URL.
    pub fn load(overrides: &Overrides) -> Result<Self, ConfigError> {
        let mut config = Self::resolve(overrides, &|name| std::env::var(name).ok())?;
        if config.replay.is_some() || overrides.stored_keys_later {
            return Ok(config);
        }
        config.look_up_stored_keys()?;
        Ok(config)
    }

    /// Registers every key in use (the default server's and each provider's) for redaction,
    /// and the variables that carry them as hidden from child processes.
    pub fn protect_keys(&self) {
        let mut hidden = self.key_vars();
        // The search provider's key, like a model key: never to the model, nor to commands.
        let search_key = self
            .web
            .search
            .as_ref()
            .and_then(|s| s.api_key().map(|key| (key, s.api_key_env.clone())));
        if let Some((_, var)) = &search_key {
            hidden.push(var.clone());
        }
        for endpoint in std::iter::once(&self.endpoint).chain(&self.providers) {
            if let Some(key) = &endpoint.api_key {
                crate::secrets::protect(key.expose(), hidden.clone());
            }
        }
        if let Some((key, _)) = search_key {
            crate::secrets::protect(key, hidden);
        }
    }

    /// `tandem login`'s key stores for this configuration (`TANDEM_CREDENTIAL_STORE`).
    pub fn credentials(&self) -> Result<crate::credentials::Credentials, ConfigError> {
        let choice = crate::credentials::StoreChoice::parse(
            std::env::var("TANDEM_CREDENTIAL_STORE").ok().as_deref(),
        )
        .map_err(|e| ConfigError::Invalid(e.to_string()))?;
        Ok(crate::credentials::Credentials::new(
            &self.config_dir,
            choice,
        ))
    }

    /// The spec of a configured model.
    pub fn model(&self, id: &str) -> Option<&ModelSpec> {
        self.models.iter().find(|m| m.id == id)
    }

    /// The server that serves model `id`: its provider's, else the default one.
    pub fn endpoint_for(&self, id: &str) -> &Endpoint {
        self.model(id)
            .and_then(|m| m.provider.as_deref())
            .and_then(|name| self.providers.iter().find(|p| p.provider == name))
            .unwrap_or(&self.endpoint)
    }
}

#[cfg(test)]
mod tests;
