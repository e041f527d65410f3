//! `tandem doctor`: checks the configuration, the data directory, the shell, the command
//! sandbox, the hooks, the API key (never printing it) and the model server (`GET /models`
//! and a one-token completion), and says what to fix: one ✗ per cause, with the cause
//! underneath.

mod hooks;
mod sandbox;
mod web;

use std::io::Write;

use crate::config::{Config, KeyFrom};
use crate::model::probe::{self, ListError, Listing};

/// One check's verdict.
struct Check {
    ok: bool,
    what: String,
    fix: Option<String>,
}

fn ok(what: impl Into<String>) -> Check {
    Check {
        ok: true,
        what: what.into(),
        fix: None,
    }
}

fn bad(what: impl Into<String>, fix: impl Into<String>) -> Check {
    Check {
        ok: false,
        what: what.into(),
        fix: Some(fix.into()),
    }
}

/// Whether the shell command lines run in can be found.
fn shell(config: &Config) -> Check {
    let shell = &config.shell;
    match shell.locate() {
        Some(found) => ok(format!(
            "commands run in {} — found at {}",
            shell.describe(),
            found.display()
        )),
        None => bad(
            format!(
                "the shell {} is not installed or not on the PATH",
                shell.describe()
            ),
            "install it, or name another in the config file: shell = [\"bash\", \"-c\"]",
        ),
    }
}

/// A config file that could not be used: `config` was then loaded without it, on flags,
/// environment and defaults, and the checks that do not need it run on that.
#[derive(Debug)]
pub struct BrokenFile {
    /// Why the file could not be used.
    pub error: crate::config::ConfigError,
    /// Whether the model server was named outside the file (a flag or a variable). When it
    /// was not, its address and key may be in the file: the default server is not asked in
    /// its place, as a key meant for the user's own server must not go to another.
    pub server_given: bool,
}

/// Runs every check, prints the report on stdout, and returns whether all passed.
pub async fn run(config: &Config, broken: Option<&BrokenFile>) -> bool {
    let mut checks = vec![config_file(config, broken)];
    checks.push(data_dir(config));
    checks.push(shell(config));
    checks.push(sandbox::check(config).await);
    checks.extend(hooks::checks(config));
    checks.extend(web::checks(config).await);
    if let Some(path) = &config.replay {
        checks.push(match crate::model::client_for(config) {
            Ok(_) => ok(format!(
                "replay mode: answers come from {}, no model server is needed",
                path.display()
            )),
            Err(e) => bad(
                format!("the replay fixture cannot be used: {e}"),
                "give --replay a replay fixture that exists and can be read",
            ),
        });
    } else if broken.is_none_or(|b| b.server_given) {
        // (When the broken file may name the server, it is not asked: its check says so.)
        let (found, reachable) = key_and_models(config).await;
        checks.extend(found);
        // One ✗ per cause: a server that cannot be reached or refuses the key is not
        // asked again.
        if reachable {
            checks.push(window(config).await);
            checks.push(completion(config).await);
        }
        for provider in &config.providers {
            checks.extend(provider_checks(config, provider).await);
        }
    }
    let mut out = std::io::stdout().lock();
    let _ = writeln!(
        out,
        "tandem {} — provider {}, {}, model {}{}",
        env!("CARGO_PKG_VERSION"),
        config.endpoint.provider,
        config.endpoint.base_url,
        config.default_model,
        if broken.is_some() {
            " (without the config file, which did not load)"
        } else {
            ""
        }
    );
    for check in &checks {
        let _ = writeln!(out, "{} {}", if check.ok { "✓" } else { "✗" }, check.what);
        if let Some(fix) = &check.fix {
            let _ = writeln!(out, "    → {fix}");
        }
    }
    let all = checks.iter().all(|c| c.ok);
    let _ = writeln!(
        out,
        "{}",
        if all {
            "All checks passed."
        } else {
            "Some checks failed; see above."
        }
    );
    all
}

/// The key, model list and a one-token answer of a `[[providers]]` server, for its first
/// model; each line names the provider.
async fn provider_checks(config: &Config, provider: &crate::config::Endpoint) -> Vec<Check> {
    let name = &provider.provider;
    let Some(model) = config
        .models
        .iter()
        .find(|m| m.provider.as_deref() == Some(name.as_str()))
    else {
        return vec![bad(
            format!("provider {name}: no [[models]] entry names it"),
            format!("add a [[models]] entry with provider = \"{name}\", or remove the provider"),
        )];
    };
    let mut own = config.clone();
    own.endpoint = provider.clone();
    own.default_model = model.id.clone();
    let label = |mut check: Check| {
        check.what = format!("provider {name}: {}", check.what);
        check
    };
    let (found, reachable) = key_and_models(&own).await;
    let mut checks: Vec<Check> = found.into_iter().map(label).collect();
    if reachable {
        checks.push(label(completion(&own).await));
    }
    checks
}

/// Which config file was read, or where tandem looked for one.
fn config_file(config: &Config, broken: Option<&BrokenFile>) -> Check {
    if let Some(broken) = broken {
        let server = if broken.server_given {
            "the model server named by your flags or environment is checked too"
        } else {
            "the model server is not asked, as its address and key may be in the file (give --base-url or --provider to check one now)"
        };
        return bad(
            broken.error.to_string(),
            format!(
                "fix the file (sessions cannot start until it loads); the checks below ran without it, on flags, environment and defaults; {server}"
            ),
        );
    }
    match &config.config_file {
        Some(path) => ok(format!("config file {} parses", path.display())),
        None => ok(format!(
            "no config file at {}; using flags, environment and defaults (`{} login` writes one)",
            config.config_dir.join("config.toml").display(),
            crate::config::invocation::command()
        )),
    }
}

fn data_dir(config: &Config) -> Check {
    let dir = config.home.join("sessions");
    let probe = dir.join(".doctor-probe");
    // Made as the store makes it: private to the user.
    let writable = crate::platform::private::dir(&config.home)
        .and_then(|()| crate::platform::private::dir(&dir))
        .and_then(|()| std::fs::write(&probe, b"ok"))
        .and_then(|()| std::fs::remove_file(&probe));
    match writable {
        Ok(()) => ok(format!(
            "data directory {} is writable",
            config.home.display()
        )),
        Err(e) => bad(
            format!(
                "data directory {} is not writable: {e}",
                config.home.display()
            ),
            "set TANDEM_HOME to a directory you can write, or fix its permissions",
        ),
    }
}

fn api_key(config: &Config) -> Check {
    let endpoint = &config.endpoint;
    match (&endpoint.key_from, endpoint.requires_key) {
        (KeyFrom::Env(var), _) => ok(format!("an API key is set in {var} (not shown)")),
        (KeyFrom::Stored(place), _) => ok(format!(
            "an API key is stored for {} in {place} (not shown)",
            endpoint.base_url
        )),
        (KeyFrom::Nowhere | KeyFrom::Given, true) => bad(
            format!("no API key: {} needs one", endpoint.base_url),
            format!(
                "run `{tandem} login`, or set {} in the environment tandem runs in; or use a model on this machine, with no key: `{tandem} login --provider ollama` (or llamacpp, lmstudio, vllm)",
                endpoint.api_key_env,
                tandem = crate::config::invocation::command()
            ),
        ),
        (KeyFrom::Nowhere | KeyFrom::Given, false) => ok(format!(
            "no API key set ({}) or stored: none is sent to {} (tandem was not told it needs one; a server on your own machine needs none)",
            endpoint.api_key_env, endpoint.base_url
        )),
    }
}

/// The API key and the server's model list, and whether the server answered (so that the
/// checks after them can say something new). Without a key a hosted server can only refuse,
/// so it is not asked; a server tandem sent no key to that refuses gets one ✗ saying it wants
/// a key, not a ✓ for needing none before it.
async fn key_and_models(config: &Config) -> (Vec<Check>, bool) {
    let key = api_key(config);
    if !key.ok {
        return (vec![key], false);
    }
    let (listed, answer) = models(config).await;
    let keyless = matches!(config.endpoint.key_from, KeyFrom::Nowhere | KeyFrom::Given);
    match answer {
        Answer::Refused if keyless => (vec![listed], false),
        Answer::Answered => (vec![key, listed], true),
        Answer::Refused | Answer::Unreached => (vec![key, listed], false),
    }
}

/// How the server met the model-list request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Answer {
    /// It answered (a list, no list, or an error of its own).
    Answered,
    /// It refused the key, or the request without one (401, 403).
    Refused,
    /// It could not be reached, or is not an OpenAI-compatible server.
    Unreached,
}

/// The server's model list, and how the server answered.
async fn models(config: &Config) -> (Check, Answer) {
    let endpoint = &config.endpoint;
    let url = format!("{}/models", endpoint.base_url);
    match probe::list_models(&endpoint.base_url, endpoint.api, endpoint.api_key.as_ref()).await {
        Err(ListError::Unreachable(cause)) => (
            bad(
                format!("cannot reach {url}: {cause}"),
                unreachable_fix(config),
            ),
            Answer::Unreached,
        ),
        Err(e @ ListError::Refused { .. }) => {
            let tandem = crate::config::invocation::command();
            let fix = match &endpoint.key_from {
                KeyFrom::Env(var) => format!(
                    "the server rejected the key from {var}: correct it, or unset it to use the one `{tandem} login` saves"
                ),
                KeyFrom::Stored(_) => {
                    format!("the server rejected the stored key: run `{tandem} login` again")
                }
                KeyFrom::Nowhere | KeyFrom::Given => {
                    let what = format!(
                        "no API key, and GET {url} was refused without one: {e}"
                    );
                    let fix = format!(
                        "this server wants a key: run `{tandem} login` (it asks for the key, tests it and stores it), or set {} in the environment tandem runs in",
                        endpoint.api_key_env
                    );
                    return (bad(what, fix), Answer::Refused);
                }
            };
            (bad(format!("GET {url}: {e}"), fix), Answer::Refused)
        }
        Err(e @ ListError::Failed { .. }) => (
            bad(format!("GET {url}: {e}"), "see the server's logs"),
            Answer::Answered,
        ),
        Err(ListError::NotCompatible { answered, suggest }) => (
            bad(
                format!(
                    "GET {url} answered {answered}: this does not look like an OpenAI-compatible server's API"
                ),
                match suggest {
                    Some(v1) => format!(
                        "{v1}/models does list models: use {v1} as the base URL (--base-url, OPENAI_BASE_URL, base_url in the config file, or `{} login`)",
                        crate::config::invocation::command()
                    ),
                    None => "the base URL is the part before /chat/completions, often ending in /v1; check it, and that this address is the model server".into(),
                },
            ),
            Answer::Unreached,
        ),
        Ok(Listing::NotOffered(answered)) => (
            ok(format!(
                "GET {url} answered {answered}: the server lists no models; the completion check below tells whether chat works"
            )),
            Answer::Answered,
        ),
        Ok(Listing::Models(ids)) if ids.contains(&config.default_model) => (
            ok(format!(
                "GET {url}: {}, including {}",
                count_models(ids.len()),
                config.default_model
            )),
            Answer::Answered,
        ),
        Ok(Listing::Models(ids)) => (
            bad(
                format!(
                    "GET {url}: {}, but not {}",
                    count_models(ids.len()),
                    config.default_model
                ),
                format!(
                    "choose one the server has (--model / TANDEM_MODEL / `{} login`): {}",
                    crate::config::invocation::command(),
                    ids.iter().take(8).cloned().collect::<Vec<_>>().join(", ")
                ),
            ),
            Answer::Answered,
        ),
    }
}

/// What to do about a server that does not answer.
fn unreachable_fix(config: &Config) -> String {
    format!(
        "{}The URL comes from --base-url, OPENAI_BASE_URL, the provider preset or the config file.",
        crate::login::LoginTarget::of(config).start_hint()
    )
}

/// The default model's context window: what the server reports and where, against what the
/// config says; and whether the model picker lists the server's models.
async fn window(config: &Config) -> Check {
    let model = &config.default_model;
    let found = crate::model::discover::discover(
        &config.endpoint,
        std::slice::from_ref(model),
        crate::model::discover::PROBE_TIMEOUT,
    )
    .await;
    let picker = if !config.models_configured && !found.models.is_empty() {
        format!(
            "; the editor's model picker lists the server's {}",
            count_models(found.models.len())
        )
    } else {
        String::new()
    };
    let configured = config.model(model).filter(|m| m.window_configured);
    match (configured, found.window(model)) {
        (Some(spec), Some(server)) if server.tokens < spec.context_window => bad(
            format!(
                "context window of {model}: the config says {} tokens, but the server uses {} ({})",
                spec.context_window, server.tokens, server.source
            ),
            "raise the server's window, or lower context_window in the config: past the server's window, prompts are cut or refused",
        ),
        (Some(spec), _) => ok(format!(
            "context window of {model}: {} tokens, from the config{picker}",
            spec.context_window
        )),
        (None, Some(server)) => ok(format!(
            "context window of {model}: {} tokens, reported by the server: {}{picker}",
            server.tokens, server.source
        )),
        (None, None) => ok(format!(
            "context window of {model}: {} tokens, assumed (the server does not report it; set context_window under [[models]] if that is wrong){picker}",
            config.model(model).map_or(0, |m| m.context_window)
        )),
    }
}

async fn completion(config: &Config) -> Check {
    match probe::one_token(config).await {
        Ok(()) => ok(format!(
            "a one-token chat completion with {} works",
            config.default_model
        )),
        Err(e) => {
            let fix = completion_fix(config, &e);
            bad(format!("the chat completion failed: {e}"), fix)
        }
    }
}

/// What to do about a chat completion that failed, by the kind of failure.
fn completion_fix(config: &Config, error: &crate::model::ModelError) -> String {
    use crate::model::ErrorClass;
    match error.class {
        ErrorClass::NotFound => format!(
            "the server has no chat endpoint at {}/chat/completions, or no model {}: the base URL is the part before /chat/completions (often ending in /v1), and the model one the server lists",
            config.endpoint.base_url, config.default_model
        ),
        ErrorClass::Auth | ErrorClass::AccessDenied | ErrorClass::MissingApiKey => format!(
            "the server wants another key: run `{} login`",
            crate::config::invocation::command()
        ),
        ErrorClass::Connection | ErrorClass::Timeout => unreachable_fix(config),
        ErrorClass::ToolsUnsupported | ErrorClass::FormatUnsupported => {
            "the server needs another setting for this model; the message names it".into()
        }
        ErrorClass::MalformedResponse | ErrorClass::StreamInterrupted => {
            "the server's answer was not an OpenAI-compatible chat completion stream: check that the base URL is the model server's API".into()
        }
        _ => "the server's logs say more about why it failed".into(),
    }
}

/// "1 model", "12 models".
fn count_models(n: usize) -> String {
    if n == 1 {
        "1 model".to_string()
    } else {
        format!("{n} models")
    }
}
