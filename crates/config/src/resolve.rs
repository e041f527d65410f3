//! Resolving flags, environment variables, the config file and defaults into one [`Config`]:
//! each setting has one function that applies the precedence (flags > environment > file >
//! defaults) and checks the value.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use super::dirs::{default_config_path, default_home, home_dir, resolve_dir, user_home};
use super::endpoint::endpoint;
use super::file::FileConfig;
use super::models::resolve_models;
use super::presets;
use super::{Config, ConfigError, Overrides, limits, permissions};
use crate::platform::Shell;
use crate::types::Mode;

/// Looks an environment variable up.
type Env<'a> = &'a dyn Fn(&str) -> Option<String>;

impl Config {
    /// Resolves the configuration from explicit sources; `env` looks variables up.
    pub fn resolve(overrides: &Overrides, env: Env<'_>) -> Result<Self, ConfigError> {
        let set = |name: &str| nonempty(env, name);
        let (file, config_file) = read_file(overrides, env)?;
        let (endpoint, preset) = endpoint(overrides, &set, &file)?;
        let replay = overrides.replay.clone();
        let default_model = default_model(overrides, &set, &file, replay.is_some());
        let (models, models_configured, providers) =
            models(&default_model, &set, &file, preset, endpoint.api)?;
        let permissions = user_permissions(&file, config_file.as_deref())?;
        Ok(Config {
            permissions,
            user_home: user_home(env),
            config_dir: default_config_path(env)
                .and_then(|p| p.parent().map(Path::to_path_buf))
                .unwrap_or_else(|| home_dir(env).join(".config").join("tandem")),
            endpoint,
            providers,
            default_model,
            models,
            models_configured,
            default_mode: default_mode(overrides, env, &file, config_file.as_deref())?,
            retry: file.retry.resolve()?,
            timeouts: file.timeouts.resolve()?,
            max_response_bytes: positive(
                file.max_response_bytes,
                limits::DEFAULT_MAX_RESPONSE_BYTES,
                "max_response_bytes must be positive",
            )?,
            loops: file.loops.resolve(&file.tool_budgets)?,
            share_api_key: file.share_api_key.unwrap_or(false),
            structured_output: file
                .structured_output
                .unwrap_or_else(|| preset.is_some_and(|p| p.structured_output)),
            home: set("TANDEM_HOME")
                .map(PathBuf::from)
                .unwrap_or_else(|| default_home(env)),
            replay,
            instructions: file.instructions.clone(),
            max_turn_requests: positive(
                overrides.max_turn_requests.or(file.max_turn_requests),
                100,
                "max_turn_requests must be at least 1",
            )?,
            max_output_tokens: file.max_output_tokens,
            mcp_servers: file.mcp_servers.clone(),
            actions: file.actions.clone(),
            eof_grace: eof_grace(env)?,
            project_programs: super::ProjectPrograms::Ask,
            max_message_bytes: max_message_bytes(env, &file)?,
            trace_wire: overrides
                .trace_wire
                .clone()
                .or_else(|| nonempty(env, "TANDEM_TRACE_WIRE").map(PathBuf::from)),
            compact_threshold: compact_threshold(&file)?,
            auto_compact: file.auto_compact.unwrap_or(true),
            skill_dirs: file
                .skill_dirs
                .iter()
                .map(|d| resolve_dir(d, config_file.as_deref(), env))
                .collect(),
            hooks: Arc::new(file.hooks.resolve()?),
            shell: shell(&file)?,
            sandbox: file.sandbox.resolve(set("TANDEM_SANDBOX"), &|dir| {
                resolve_dir(dir, config_file.as_deref(), env)
            })?,
            queued_prompts: file.queued_prompts,
            web: file.web.resolve(env)?,
            background_commands: file.background_commands.unwrap_or(4).max(1),
            config_file,
            overrides: overrides.clone(),
        })
    }
}

/// The model new sessions start with: the flag, `TANDEM_MODEL`, the file, or a default.
fn default_model(
    overrides: &Overrides,
    set: &dyn Fn(&str) -> Option<String>,
    file: &FileConfig,
    replay: bool,
) -> String {
    overrides
        .model
        .clone()
        .or_else(|| set("TANDEM_MODEL"))
        .or_else(|| file.model.clone())
        .unwrap_or_else(|| {
            if replay {
                "replay".to_string()
            } else {
                "gpt-4o-mini".to_string()
            }
        })
}

/// The models offered (and whether the user listed them), each with the API of the provider
/// it names, and the providers; an error when a model names a provider none defines.
fn models(
    default_model: &str,
    set: &dyn Fn(&str) -> Option<String>,
    file: &FileConfig,
    preset: Option<&presets::Preset>,
    api: super::Api,
) -> Result<(Vec<super::ModelSpec>, bool, Vec<super::Endpoint>), ConfigError> {
    let window = preset
        .unwrap_or(&presets::PRESETS[0])
        .default_context_window;
    let models_list = set("TANDEM_MODELS");
    let models_configured = models_list.is_some() || !file.models.is_empty();
    let mut models = resolve_models(default_model, models_list.as_deref(), file, window);
    let providers = super::providers::resolve(&file.providers, set)?;
    for model in &mut models {
        let provider = model.provider.as_deref();
        model.api = providers
            .iter()
            .find(|p| Some(p.provider.as_str()) == provider)
            .map_or(api, |p| p.api);
    }
    if let Some((model, name)) = models.iter().find_map(|m| {
        let name = m.provider.as_deref()?;
        (!providers.iter().any(|p| p.provider == name)).then_some((&m.id, name))
    }) {
        return Err(ConfigError::Invalid(format!(
            "model `{model}` names provider `{name}`, which no [[providers]] entry defines"
        )));
    }
    Ok((models, models_configured, providers))
}

/// The permission rules of the user's config file (none without one).
fn user_permissions(
    file: &FileConfig,
    config_file: Option<&Path>,
) -> Result<Vec<permissions::Rule>, ConfigError> {
    match config_file {
        Some(path) => {
            permissions::parse_all(&file.permissions, path).map_err(|source| ConfigError::Rule {
                path: path.to_path_buf(),
                source,
            })
        }
        None => Ok(Vec::new()),
    }
}

/// The shell command lines run in: the file's `shell = [...]`, else the system's.
fn shell(file: &FileConfig) -> Result<Shell, ConfigError> {
    match &file.shell {
        None => Ok(Shell::system()),
        Some(words) => Shell::configured(words).ok_or_else(|| {
            ConfigError::Invalid(
                "shell must name a program and the arguments before the command line, e.g. \
                 shell = [\"bash\", \"-c\"]"
                    .into(),
            )
        }),
    }
}

/// `name`'s value, unless it is unset or blank.
fn nonempty(env: Env<'_>, name: &str) -> Option<String> {
    env(name).filter(|v| !v.trim().is_empty())
}

/// The config file (`--config`, `TANDEM_CONFIG`, or the default path when it exists) and
/// where it was read from; an empty one when there is none.
fn read_file(
    overrides: &Overrides,
    env: Env<'_>,
) -> Result<(FileConfig, Option<PathBuf>), ConfigError> {
    if overrides.without_config_file {
        return Ok((FileConfig::default(), None));
    }
    let named = overrides
        .config_file
        .clone()
        .or_else(|| nonempty(env, "TANDEM_CONFIG").map(PathBuf::from));
    Ok(match named {
        Some(path) => (FileConfig::read(&path)?, Some(path)),
        None => match default_config_path(env) {
            Some(path) if path.is_file() => (FileConfig::read(&path)?, Some(path)),
            _ => (FileConfig::default(), None),
        },
    })
}

/// The mode sessions start in; an unknown one is an error that says where it was given.
fn default_mode(
    overrides: &Overrides,
    env: Env<'_>,
    file: &FileConfig,
    file_path: Option<&Path>,
) -> Result<Mode, ConfigError> {
    let flag = overrides
        .mode
        .clone()
        .map(|name| (name, "--mode".to_string()));
    let named = if overrides.mode_from_flag_only {
        flag
    } else {
        flag.or_else(|| nonempty(env, "TANDEM_MODE").map(|name| (name, "TANDEM_MODE".into())))
            .or_else(|| {
                let path = file_path.map_or("the config file".into(), |p| p.display().to_string());
                file.mode
                    .clone()
                    .map(|name| (name, format!("`mode` in {path}")))
            })
    };
    match named {
        Some((name, given)) => Mode::parse(&name).ok_or_else(|| {
            ConfigError::Invalid(format!(
                "unknown mode `{name}` ({given}); modes: {}",
                Mode::ALL.map(Mode::id).join(", ")
            ))
        }),
        None => Ok(overrides.fallback_mode.unwrap_or(Mode::Ask)),
    }
}

/// A count that must be positive when given, else `default`.
fn positive<T: PartialEq + Default>(
    value: Option<T>,
    default: T,
    error: &str,
) -> Result<T, ConfigError> {
    match value {
        Some(n) if n == T::default() => Err(ConfigError::Invalid(error.into())),
        Some(n) => Ok(n),
        None => Ok(default),
    }
}

/// How long in-flight requests may run after stdin ends (`TANDEM_EOF_GRACE_SECS`).
fn eof_grace(env: Env<'_>) -> Result<Duration, ConfigError> {
    Ok(match nonempty(env, "TANDEM_EOF_GRACE_SECS") {
        Some(v) => Duration::from_secs_f64(parse_env(
            "TANDEM_EOF_GRACE_SECS",
            &v,
            |s: &f64| s.is_finite() && *s >= 0.0,
            "a number of seconds",
        )?),
        None => limits::DEFAULT_EOF_GRACE,
    })
}

/// The longest line read from stdin (`TANDEM_MAX_MESSAGE_BYTES`, else the file's).
fn max_message_bytes(env: Env<'_>, file: &FileConfig) -> Result<usize, ConfigError> {
    let bytes = match nonempty(env, "TANDEM_MAX_MESSAGE_BYTES") {
        Some(v) => Some(parse_env(
            "TANDEM_MAX_MESSAGE_BYTES",
            &v,
            |n: &u64| *n > 0,
            "a positive number of bytes",
        )?),
        None => file.max_message_bytes,
    };
    let bytes = positive(
        bytes,
        limits::DEFAULT_MAX_MESSAGE_BYTES,
        "max_message_bytes must be positive",
    )?;
    Ok(bytes.try_into().unwrap_or(usize::MAX))
}

/// The share of the context window past which the conversation is compacted.
fn compact_threshold(file: &FileConfig) -> Result<f64, ConfigError> {
    match file.compact_threshold {
        Some(t) if t > 0.0 && t <= 1.0 => Ok(t),
        Some(_) => Err(ConfigError::Invalid(
            "compact_threshold must be a share of the context window, above 0 and at most 1".into(),
        )),
        None => Ok(0.85),
    }
}

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
