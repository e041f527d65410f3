//! `tandem login` and `tandem logout`: set up a model server from a terminal, as a user who
//! installed tandem from their editor's agent list would, with no environment variables.
//!
//! A login chooses a server (a preset or a URL), takes its key without echo (none for
//! servers on the user's machine), lists the server's models to pick from, sends one
//! one-token request, and only then saves: the key in the credential store (`credentials`),
//! the server and model in the config file. A key the server refuses is never saved.

mod config_file;
mod prompt;
mod search;
mod server;
mod target;

use std::io::{IsTerminal, Read, Write};
use std::process::ExitCode;

pub(crate) use crate::config::check_url;
use crate::config::{ApiKey, Config};
use crate::credentials::KeyStore;
use crate::model::probe::{self, ListError, Listing};
pub(crate) use config_file::Settled;
pub(crate) use target::LoginTarget;

/// Why a login ended without saving.
#[derive(Debug, thiserror::Error)]
enum LoginError {
    /// Bad arguments or configuration (exit status 2).
    #[error("{0}")]
    Usage(String),
    /// The server refused the key (exit status 1).
    #[error("{0}")]
    Refused(String),
    /// The server could not be reached, or its answer failed (exit status 1).
    #[error("{0}")]
    Failed(String),
    /// The user stopped at a prompt (exit status 130).
    #[error("login stopped; nothing was saved")]
    Stopped,
}

impl LoginError {
    fn code(&self) -> ExitCode {
        match self {
            LoginError::Usage(_) => ExitCode::from(2),
            LoginError::Refused(_) | LoginError::Failed(_) => ExitCode::from(1),
            LoginError::Stopped => ExitCode::from(130),
        }
    }
}

impl From<std::io::Error> for LoginError {
    fn from(_: std::io::Error) -> Self {
        LoginError::Stopped
    }
}

/// Lines for the person at the terminal, on stderr (stdout stays free for scripts).
fn say(line: impl AsRef<str>) {
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "{}", line.as_ref());
}

/// `tandem login`: interactive on a terminal, scripted with `--key-stdin` (or when stdin is
/// not a terminal). The server comes from `--provider`/`--base-url` or the configuration.
/// With `search`, it sets up the web search provider instead (search.rs).
pub async fn login(
    config: &Config,
    key_stdin: bool,
    search: Option<(&str, Option<&str>)>,
) -> ExitCode {
    let interactive =
        !key_stdin && std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
    let done = match search {
        Some((provider, url)) => search::run(config, provider, url, key_stdin, interactive).await,
        None => run(config, key_stdin, interactive).await,
    };
    match done {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            say(format!("✗ {e}"));
            e.code()
        }
    }
}

async fn run(config: &Config, key_stdin: bool, interactive: bool) -> Result<(), LoginError> {
    let store = config
        .credentials()
        .map_err(|e| LoginError::Usage(e.to_string()))?;
    let named = config.overrides.provider.is_some() || config.overrides.base_url.is_some();
    let current = LoginTarget::of(config);
    let (mut target, keyless) = if interactive {
        server::settle(current, !named).await?
    } else {
        (current, None)
    };
    // `--api` holds for whichever server is chosen.
    if config.overrides.api.is_some() {
        target.named_api = Some(config.endpoint.api);
    }
    let (key, listing) = if interactive && !key_stdin {
        // A key stored earlier for this server can be kept by pressing Enter.
        let stored = match store.lookup(&target.base_url) {
            Ok(found) => found.map(|(key, _)| key),
            Err(e) => {
                say(format!(
                    "! the stored key cannot be read ({e}); enter it again"
                ));
                None
            }
        };
        key_by_prompt(&target, stored.as_deref(), keyless).await?
    } else {
        key_from_stdin(&target, key_stdin).await?
    };
    let models = match &listing {
        Listing::Models(models) => models.clone(),
        Listing::NotOffered(answered) => {
            say(format!(
                "! {}/models answered {answered}: the server lists no models, so it may not be an OpenAI-compatible server; the test request will tell",
                target.base_url
            ));
            Vec::new()
        }
    };
    let model = choose_model(config, &models, interactive)?;
    let trial = target.config(config, key.as_ref(), &model);
    say(format!("… sending {model} a one-token request"));
    probe::one_token(&trial)
        .await
        .map_err(|e| test_failed(&target, &listing, &e))?;
    save(config, &store, &target, key.as_ref(), &model)
}

/// Why the one-token request failed, in one line.
fn test_failed(
    target: &LoginTarget,
    listing: &Listing,
    e: &crate::model::ModelError,
) -> LoginError {
    let message = e.message.trim_end_matches('.');
    if matches!(listing, Listing::NotOffered(_)) && e.class == crate::model::ErrorClass::NotFound {
        return LoginError::Failed(format!(
            "{} does not look like an OpenAI-compatible server: it lists no models, and the chat request failed ({message}). The base URL is the part before /chat/completions, often ending in /v1. Nothing was saved.",
            target.base_url
        ));
    }
    LoginError::Failed(format!(
        "the test request to {} failed: {message}. Nothing was saved.",
        target.base_url
    ))
}

/// Asks for the key until the server takes it (a few tries), and returns it with the
/// server's model list.
async fn key_by_prompt(
    target: &LoginTarget,
    stored: Option<&str>,
    keyless: Option<Listing>,
) -> Result<(Option<ApiKey>, Listing), LoginError> {
    // What the server listed without a key serves a login that gives none.
    let without_key = async |keyless: Option<Listing>| match keyless {
        Some(listing) => Ok(listing),
        None => list(target, None).await,
    };
    if !target.asks_key() {
        return Ok((None, without_key(keyless).await?));
    }
    for attempt in 1..=prompt::KEY_ATTEMPTS {
        let typed = prompt::key(target, attempt, stored.is_some())?;
        let Some(text) = typed.as_deref().or(stored) else {
            if target.needs_key {
                say(format!("✗ {} needs an API key.", target.label()));
                continue;
            }
            return Ok((None, without_key(keyless).await?));
        };
        let key = checked(text)?;
        match list(target, Some(&key)).await {
            Ok(listing) => return Ok((Some(key), listing)),
            Err(LoginError::Refused(message)) => say(format!("✗ {message}")),
            Err(e) => return Err(e),
        }
    }
    Err(LoginError::Failed(format!(
        "{} refused {} keys. Nothing was saved; check the key and run `{} login` again.",
        target.label(),
        prompt::KEY_ATTEMPTS,
        crate::config::invocation::command()
    )))
}

/// The key piped in with `--key-stdin`, checked against the server.
async fn key_from_stdin(
    target: &LoginTarget,
    key_stdin: bool,
) -> Result<(Option<ApiKey>, Listing), LoginError> {
    let key = if key_stdin {
        let text = stdin_key()?;
        (!text.is_empty()).then(|| checked(&text)).transpose()?
    } else {
        None
    };
    if key.is_none() && target.needs_key {
        return Err(LoginError::Usage(format!(
            "{} needs an API key: pipe it in, e.g. `printf %s \"$KEY\" | {tandem} login --provider {} --key-stdin --model MODEL`, or run `{tandem} login` in a terminal",
            target.label(),
            target.provider.map_or("NAME", |p| p.name),
            tandem = crate::config::invocation::command()
        )));
    }
    let listing = list(target, key.as_ref()).await?;
    Ok((key, listing))
}

/// What `--key-stdin` piped in, trimmed (at most 64 KiB is read).
fn stdin_key() -> Result<String, LoginError> {
    let mut text = String::new();
    std::io::stdin()
        .take(64 * 1024)
        .read_to_string(&mut text)
        .map_err(|e| LoginError::Usage(format!("cannot read the key from stdin: {e}")))?;
    Ok(text.trim().to_string())
}

/// A key that can go into an HTTP header, protected from logs from here on.
fn checked(text: &str) -> Result<ApiKey, LoginError> {
    let key = crate::config::checked_key("the key you gave", text)
        .map_err(|e| LoginError::Usage(e.to_string()))?;
    crate::secrets::protect(key.expose(), Vec::new());
    Ok(key)
}

/// The server's models, asked with `key`: a refusal means a wrong key.
async fn list(target: &LoginTarget, key: Option<&ApiKey>) -> Result<Listing, LoginError> {
    say(format!("… asking {} for its models", target.base_url));
    probe::list_models(&target.base_url, target.api(), key)
        .await
        .map_err(|e| match e {
            ListError::Refused { .. } if key.is_some() => LoginError::Refused(format!(
                "{} refused the key ({e}). Nothing was saved.",
                target.label()
            )),
            ListError::Refused { .. } => LoginError::Failed(format!(
                "{} needs an API key ({e}). Nothing was saved.",
                target.label()
            )),
            ListError::Unreachable(cause) => LoginError::Failed(format!(
                "cannot reach {}: {cause}. {}Nothing was saved.",
                target.base_url,
                target.start_hint()
            )),
            ListError::Failed { .. } => {
                LoginError::Failed(format!("{}: {e}. Nothing was saved.", target.base_url))
            }
            ListError::NotCompatible { .. } => LoginError::Failed(format!(
                "{}/models answered {e}. Nothing was saved.",
                target.base_url
            )),
        })
}

/// `--model`, else a pick from the list (on a terminal), else the configured model when the
/// server has it (or lists nothing).
fn choose_model(
    config: &Config,
    models: &[String],
    interactive: bool,
) -> Result<String, LoginError> {
    if let Some(model) = &config.overrides.model {
        if !models.is_empty() && !models.contains(model) {
            say(format!(
                "! the server does not list {model}; trying it anyway"
            ));
        }
        return Ok(model.clone());
    }
    if interactive {
        return Ok(prompt::model(models, &config.default_model)?);
    }
    if models.is_empty() || models.contains(&config.default_model) {
        return Ok(config.default_model.clone());
    }
    Err(LoginError::Usage(format!(
        "the server does not have {}; choose a model with --model: {}",
        config.default_model,
        models
            .iter()
            .take(12)
            .cloned()
            .collect::<Vec<_>>()
            .join(", ")
    )))
}

/// Stores the key and writes the server and model to the config file.
fn save(
    config: &Config,
    store: &crate::credentials::Credentials,
    target: &LoginTarget,
    key: Option<&ApiKey>,
    model: &str,
) -> Result<(), LoginError> {
    if let Some(key) = key {
        let place = store
            .save(&target.base_url, key.expose())
            .map_err(|e| LoginError::Failed(format!("cannot store the key: {e}")))?;
        match &place {
            KeyStore::Keyring => say(format!("✓ key saved in {place}")),
            KeyStore::File(_) => say(format!(
                "✓ key saved in {place}: no system credential store answers here"
            )),
        }
    }
    let path = config
        .config_file
        .clone()
        .unwrap_or_else(|| config.config_dir.join("config.toml"));
    let choice = Settled {
        provider: target.provider.map(|p| p.name.to_string()),
        base_url: (target.provider.map(|p| p.base_url) != Some(target.base_url.as_str()))
            .then(|| target.base_url.clone()),
        model: model.to_string(),
    };
    config_file::write(&path, &choice).map_err(|e| LoginError::Failed(e.to_string()))?;
    // Agents already running read the setup again at their next request.
    crate::credentials::stamp::touch(&config.config_dir);
    say(format!(
        "✓ {} now names {} and the model {model}",
        path.display(),
        target.label()
    ));
    // `logout` removes a stored key; with none stored there is nothing for it to do.
    let undo = if key.is_some() {
        "; `{tandem} logout` removes the key"
    } else {
        ""
    };
    say(crate::config::invocation::spell(&format!(
        "tandem is ready: your editor's next tandem session uses them, and so do open ones on this server (no restart needed). `{{tandem}} doctor` checks the setup{undo}."
    )));
    Ok(())
}

/// `tandem logout`: removes the key stored for the configured server.
pub fn logout(config: &Config) -> ExitCode {
    let store = match config.credentials() {
        Ok(store) => store,
        Err(e) => {
            say(format!("✗ {e}"));
            return ExitCode::from(2);
        }
    };
    let server = &config.endpoint.base_url;
    match store.remove(server) {
        Ok(places) if places.is_empty() => say(format!("No key is stored for {server}.")),
        Ok(places) => {
            for place in places {
                say(format!("✓ removed the key for {server} from {place}"));
            }
        }
        Err(e) => {
            say(format!("✗ {e}"));
            return ExitCode::from(1);
        }
    }
    if let crate::config::KeyFrom::Env(var) = &config.endpoint.key_from {
        say(format!(
            "! {var} is still set in this environment, and tandem uses it"
        ));
    }
    ExitCode::SUCCESS
}
