//! `tandem doctor`: checks the configuration, the data directory, the API key (never printing
//! it) and the model server (`GET /models` and a one-token completion), and says what to fix.

use std::io::Write;
use std::time::Duration;

use futures::StreamExt;

use crate::config::Config;
use crate::model::{Message, ModelRequest};
use crate::types::UserPart;

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

/// Runs every check, prints the report on stdout, and returns whether all passed.
pub async fn run(config: &Config) -> bool {
    let mut checks = vec![ok(match &config.config_file {
        Some(path) => format!("config file {} parses", path.display()),
        None => "no config file; using flags, environment and defaults".to_string(),
    })];
    checks.push(data_dir(config));
    checks.push(shell(config));
    if config.replay.is_some() {
        checks.push(ok(
            "replay mode: answers come from the fixture, no model server is needed",
        ));
    } else {
        checks.push(api_key(config));
        checks.push(models(config).await);
        checks.push(window(config).await);
        checks.push(completion(config).await);
    }
    let mut out = std::io::stdout().lock();
    let _ = writeln!(
        out,
        "tandem {} — provider {}, {}, model {}",
        env!("CARGO_PKG_VERSION"),
        config.endpoint.provider,
        config.endpoint.base_url,
        config.default_model
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

fn data_dir(config: &Config) -> Check {
    let dir = config.home.join("sessions");
    let probe = dir.join(".doctor-probe");
    let writable = std::fs::create_dir_all(&dir)
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
    let var = &config.endpoint.api_key_env;
    match (&config.endpoint.api_key, config.endpoint.requires_key) {
        (Some(_), _) => ok(format!(
            "an API key is set ({var} or OPENAI_API_KEY; not shown)"
        )),
        (None, true) => bad(
            format!("no API key: {} needs one", config.endpoint.base_url),
            format!("set {var} in the environment tandem runs in"),
        ),
        (None, false) => ok(format!(
            "no API key set ({var}); {} does not need one",
            config.endpoint.base_url
        )),
    }
}

async fn models(config: &Config) -> Check {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let url = format!("{}/models", config.endpoint.base_url);
    let client = match reqwest::Client::builder()
        .timeout(Duration::from_secs(15))
        .build()
    {
        Ok(c) => c,
        Err(e) => {
            return bad(
                format!("cannot build an HTTP client: {e}"),
                "this is a bug; please report it",
            );
        }
    };
    let mut request = client.get(&url);
    if let Some(key) = &config.endpoint.api_key {
        request = request.bearer_auth(key.expose());
    }
    let response = match request.send().await {
        Ok(r) => r,
        Err(e) => {
            return bad(
                format!("cannot reach {url}: {e}"),
                "check the base URL (--base-url / OPENAI_BASE_URL / provider) and that the server runs",
            );
        }
    };
    let status = response.status();
    let body = response.bytes().await.unwrap_or_default();
    if !status.is_success() {
        let hint = match status.as_u16() {
            401 | 403 => format!("the server rejected the key: check {}", config.endpoint.api_key_env),
            404 => "this server has no /models endpoint; the completion check below still tells whether chat works".into(),
            _ => "see the server's logs".into(),
        };
        return bad(format!("GET {url} answered HTTP {status}"), hint);
    }
    let ids: Vec<String> = serde_json::from_slice::<serde_json::Value>(&body)
        .ok()
        .and_then(|v| v["data"].as_array().cloned())
        .unwrap_or_default()
        .iter()
        .filter_map(|m| m["id"].as_str().map(String::from))
        .collect();
    if ids.iter().any(|id| id == &config.default_model) {
        ok(format!(
            "GET {url}: {} models, including {}",
            ids.len(),
            config.default_model
        ))
    } else {
        bad(
            format!(
                "GET {url}: {} models, but not {}",
                ids.len(),
                config.default_model
            ),
            format!(
                "choose one the server has (--model / TANDEM_MODEL): {}",
                ids.iter().take(8).cloned().collect::<Vec<_>>().join(", ")
            ),
        )
    }
}

/// The default model's context window: what the server reports and where, against what the
/// config says; and whether the model picker lists the server's models.
async fn window(config: &Config) -> Check {
    let model = &config.default_model;
    let found =
        crate::model::discover::discover(&config.endpoint, std::slice::from_ref(model)).await;
    let picker = if !config.models_configured && !found.models.is_empty() {
        format!(
            "; the editor's model picker lists the server's {} models",
            found.models.len()
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
    let client = match crate::model_client(config) {
        Ok(c) => c,
        Err(e) => {
            return bad(
                format!("cannot set up the model client: {e}"),
                "check the configuration",
            );
        }
    };
    let request = ModelRequest {
        model: config.default_model.clone(),
        messages: vec![Message::User(vec![UserPart::Text("Reply with OK.".into())])],
        reasoning_effort: None,
        tools: Vec::new(),
        max_tokens: Some(1),
        response_format: None,
    };
    let result = async {
        let mut stream = client.open(request).await?;
        while let Some(event) = stream.next().await {
            event?;
        }
        Ok::<(), crate::model::ModelError>(())
    };
    match tokio::time::timeout(Duration::from_secs(60), result).await {
        Ok(Ok(())) => ok(format!(
            "a one-token chat completion with {} works",
            config.default_model
        )),
        Ok(Err(e)) => bad(
            format!("the chat completion failed: {e}"),
            "the message says what the server answered",
        ),
        Err(_) => bad(
            "the chat completion did not finish within 60 s",
            "check that the server is not overloaded",
        ),
    }
}
