//! What the model server says about itself: the models it serves and each one's context
//! window, asked once per endpoint in the background. Each server family answers somewhere
//! else:
//! - every OpenAI-compatible server: `GET /v1/models` (vLLM adds `max_model_len`, OpenRouter
//!   `context_length`, Groq `context_window`, Mistral `max_context_length`, llama.cpp
//!   `meta.n_ctx`);
//! - llama.cpp: `GET /props` (`n_ctx`, the window it was started with);
//! - Ollama: `GET /api/ps` (the window of a loaded model) and `POST /api/show` (`num_ctx`
//!   from the Modelfile, the model's own `context_length`); without either Ollama uses its
//!   default window, whatever the model could take;
//! - LM Studio: `GET /api/v0/models` (`loaded_context_length`, `max_context_length`).
//!
//! Only `GET /models` goes to every server, with the key as its API wants it. The paths of a
//! server family go only to that family: named by its preset (`ollama`, `llamacpp`,
//! `lmstudio`), or told by the `owned_by` of its model list. A hosted preset (OpenAI,
//! Anthropic, Gemini, OpenRouter, DeepSeek, Groq) gets nothing else, and neither does any
//! server outside the user's own machine and network; an unidentified server there is asked
//! each family's path in turn.

use std::time::Duration;

use serde_json::Value;

use crate::config::Endpoint;

/// How long one probe may take when someone waits for the answer (`tandem doctor`): a local
/// server answers in milliseconds, and a server that does not know the path answers 404 at
/// once.
pub const PROBE_TIMEOUT: Duration = Duration::from_secs(3);

/// How long one probe may take in the background, where nothing waits for it: a server on
/// this machine that is busy with a long prompt on every core, or loading a model, can take
/// seconds to answer even a path it serves from memory.
pub const BACKGROUND_PROBE_TIMEOUT: Duration = Duration::from_secs(20);

/// The window Ollama gives a model when nothing sets `num_ctx` (`OLLAMA_CONTEXT_LENGTH`).
const OLLAMA_DEFAULT: u64 = 4096;

/// A context window the server reported, and where it said so.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Window {
    /// Tokens.
    pub tokens: u64,
    /// Where it came from, for `tandem doctor` and the logs.
    pub source: String,
}

/// What the server said.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Discovered {
    /// The models `GET /models` listed, in its order.
    pub models: Vec<String>,
    /// Context windows by model id.
    pub windows: Vec<(String, Window)>,
    /// Probes that failed, in words (for `tandem doctor`).
    pub failures: Vec<String>,
    /// Prices by model id, where the list gives them (OpenRouter's `pricing`).
    pub prices: Vec<(String, crate::config::Price)>,
    /// Whether asking later may tell more: something is missing because the server could
    /// not be reached, did not answer in time, or was busy (HTTP 429 or 5xx), rather than
    /// because it does not know the path.
    pub ask_again: bool,
}

impl Discovered {
    /// The window the server reported for `model`.
    pub fn window(&self, model: &str) -> Option<&Window> {
        self.windows
            .iter()
            .find(|(id, _)| id == model)
            .map(|(_, w)| w)
    }

    /// The price the server lists for `model`.
    pub(crate) fn price(&self, model: &str) -> Option<crate::config::Price> {
        self.prices
            .iter()
            .find(|(id, _)| id == model)
            .map(|(_, p)| *p)
    }

    fn set_window(&mut self, model: &str, tokens: u64, source: impl Into<String>) {
        if tokens == 0 || self.window(model).is_some() {
            return;
        }
        let source = source.into();
        self.windows
            .push((model.to_string(), Window { tokens, source }));
    }
}

/// Asks the server behind `endpoint` what it serves and how large each window of `wanted`
/// (the models tandem will use) is, each probe taking at most `timeout`.
pub async fn discover(endpoint: &Endpoint, wanted: &[String], timeout: Duration) -> Discovered {
    let mut found = ask(endpoint, wanted, timeout).await;
    let unanswered = found.models.is_empty() || wanted.iter().any(|id| found.window(id).is_none());
    found.ask_again &= unanswered;
    found
}

async fn ask(endpoint: &Endpoint, wanted: &[String], timeout: Duration) -> Discovered {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let mut found = Discovered::default();
    let builder = reqwest::Client::builder()
        .timeout(timeout)
        .redirect(super::wire::same_server_redirects());
    let Ok(client) = super::wire::without_tls_roots_for_http(builder, &endpoint.base_url).build()
    else {
        return found;
    };
    let probe = Probe {
        client,
        endpoint,
        root: root_of(&endpoint.base_url),
    };
    let list = probe
        .get(&format!("{}/models", endpoint.base_url), &mut found)
        .await;
    if let Some(list) = &list {
        read_model_list(list, &mut found);
    }
    let family = Family::of(endpoint, list.as_ref());
    if family == Family::Hosted {
        return found;
    }
    let missing = |found: &Discovered| -> Vec<String> {
        wanted
            .iter()
            .filter(|id| found.window(id).is_none())
            .cloned()
            .collect()
    };
    if missing(&found).is_empty() {
        return found;
    }
    let asks = |f: Family| family == f || family == Family::Unknown;
    if asks(Family::LlamaCpp) {
        let props = probe
            .get(&format!("{}/props", probe.root), &mut found)
            .await;
        if let Some(n_ctx) = props.as_ref().and_then(llama_cpp_window) {
            // One llama-server serves one model: its window is every model's here.
            for id in missing(&found) {
                found.set_window(&id, n_ctx, "llama.cpp GET /props (n_ctx)");
            }
            return found;
        }
    }
    if asks(Family::LmStudio) {
        let lm_studio = probe
            .get(&format!("{}/api/v0/models", probe.root), &mut found)
            .await;
        if let Some(list) = lm_studio {
            read_lm_studio(&list, &mut found);
        }
    }
    if asks(Family::Ollama) {
        for id in missing(&found) {
            ollama_window(&probe, &id, &mut found).await;
        }
    }
    found
}

/// Which server family's own paths a server is asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Family {
    /// A hosted API, or any server off the user's machine and network: `/models` only.
    Hosted,
    LlamaCpp,
    Ollama,
    LmStudio,
    /// vLLM reports its window in `/models`.
    Vllm,
    /// A local server that did not say what it is: each family's path in turn.
    Unknown,
}

impl Family {
    /// The family of `endpoint`: by its preset, else by the `owned_by` its model list
    /// gives, else unknown when it is local.
    fn of(endpoint: &Endpoint, list: Option<&Value>) -> Family {
        match endpoint.provider.as_str() {
            "llamacpp" => return Family::LlamaCpp,
            "ollama" => return Family::Ollama,
            "lmstudio" => return Family::LmStudio,
            "vllm" => return Family::Vllm,
            "custom" => {}
            _ => return Family::Hosted,
        }
        if !is_local(&endpoint.base_url) {
            return Family::Hosted;
        }
        let owners = list
            .and_then(model_entries)
            .unwrap_or_default()
            .iter()
            .filter_map(|e| e["owned_by"].as_str());
        for owner in owners {
            match owner {
                "llamacpp" => return Family::LlamaCpp,
                "library" | "ollama" => return Family::Ollama,
                "organization_owner" => return Family::LmStudio,
                "vllm" => return Family::Vllm,
                _ => {}
            }
        }
        Family::Unknown
    }
}

/// Where the probes go.
struct Probe<'a> {
    client: reqwest::Client,
    endpoint: &'a Endpoint,
    /// The server's address without the OpenAI path (`/v1`).
    root: String,
}

impl Probe<'_> {
    async fn get(&self, url: &str, found: &mut Discovered) -> Option<Value> {
        self.send(self.client.get(url), url, found).await
    }

    async fn send(
        &self,
        mut request: reqwest::RequestBuilder,
        url: &str,
        found: &mut Discovered,
    ) -> Option<Value> {
        request = request.headers(super::wire::auth_headers(
            self.endpoint.api,
            self.endpoint.api_key.as_ref(),
        ));
        let response = match request.send().await {
            Ok(response) => response,
            Err(e) => {
                found.failures.push(format!("{url}: {e}"));
                found.ask_again = true;
                return None;
            }
        };
        let status = response.status();
        if status.is_server_error() || status == reqwest::StatusCode::TOO_MANY_REQUESTS {
            found.ask_again = true;
        }
        if !status.is_success() {
            found
                .failures
                .push(format!("{url}: HTTP {}", response.status().as_u16()));
            return None;
        }
        let body = crate::platform::net::read_capped(response, super::http::MOST_LIST_BODY).await;
        serde_json::from_slice(&body).ok()
    }
}

/// The models of an OpenAI-style `GET /models` answer: `{"data": [...]}`, with
/// `"data": null` for Ollama's empty list, or a bare array as some hosts send; `None` when
/// the answer is no such list.
pub(crate) fn model_entries(list: &Value) -> Option<&[Value]> {
    match list {
        Value::Array(entries) => Some(entries),
        Value::Object(object) => match object.get("data")? {
            Value::Array(entries) => Some(entries),
            Value::Null => Some(&[]),
            _ => None,
        },
        _ => None,
    }
}

/// `GET /models`: ids, and the window fields some servers add.
fn read_model_list(list: &Value, found: &mut Discovered) {
    let Some(entries) = model_entries(list) else {
        return;
    };
    for entry in entries {
        let Some(id) = entry["id"].as_str() else {
            continue;
        };
        found.models.push(id.to_string());
        for (field, source) in [
            ("max_model_len", "GET /models (max_model_len)"),
            ("context_length", "GET /models (context_length)"),
            ("context_window", "GET /models (context_window)"),
            (
                "loaded_context_length",
                "GET /models (loaded_context_length)",
            ),
            // Mistral's window; after the loaded window of a server that gives both.
            ("max_context_length", "GET /models (max_context_length)"),
        ] {
            if let Some(tokens) = entry[field].as_u64() {
                found.set_window(id, tokens, source);
            }
        }
        if let Some(tokens) = entry["meta"]["n_ctx"].as_u64() {
            found.set_window(id, tokens, "llama.cpp GET /models (meta.n_ctx)");
        }
        if let Some(price) = listed_price(&entry["pricing"]) {
            found.prices.push((id.to_string(), price));
        }
    }
}

/// OpenRouter's `pricing`: US dollars per token, as decimal strings.
fn listed_price(pricing: &Value) -> Option<crate::config::Price> {
    let per_million = |key: &str| {
        let v = &pricing[key];
        v.as_str()
            .and_then(|s| s.parse::<f64>().ok())
            .or_else(|| v.as_f64())
            .filter(|p| p.is_finite() && *p >= 0.0)
            .map(|p| p * 1_000_000.0)
    };
    Some(crate::config::Price {
        input: per_million("prompt")?,
        output: per_million("completion")?,
        cached_input: per_million("input_cache_read"),
        source: crate::config::PriceSource::Server,
    })
}

/// llama.cpp's `/props`: the window each slot has.
fn llama_cpp_window(props: &Value) -> Option<u64> {
    props["default_generation_settings"]["n_ctx"]
        .as_u64()
        .or_else(|| props["n_ctx"].as_u64())
}

/// LM Studio's model list: the loaded window, else the model's largest.
fn read_lm_studio(list: &Value, found: &mut Discovered) {
    for entry in list["data"].as_array().into_iter().flatten() {
        let Some(id) = entry["id"].as_str() else {
            continue;
        };
        if let Some(tokens) = entry["loaded_context_length"].as_u64() {
            found.set_window(
                id,
                tokens,
                "LM Studio GET /api/v0/models (loaded_context_length)",
            );
        } else if let Some(tokens) = entry["max_context_length"].as_u64() {
            found.set_window(
                id,
                tokens,
                "LM Studio GET /api/v0/models (max_context_length)",
            );
        }
    }
}

/// Ollama: the window of the loaded model, else `num_ctx` from its Modelfile, else the
/// default Ollama will really use (however large a window the model could take).
async fn ollama_window(probe: &Probe<'_>, id: &str, found: &mut Discovered) {
    let ps_url = format!("{}/api/ps", probe.root);
    let loaded = probe.get(&ps_url, found).await;
    let loaded_window = loaded.as_ref().and_then(|ps| {
        ps["models"].as_array()?.iter().find_map(|m| {
            let name = m["name"].as_str().or_else(|| m["model"].as_str())?;
            (name == id || name == format!("{id}:latest")).then(|| m["context_length"].as_u64())?
        })
    });
    if let Some(tokens) = loaded_window {
        found.set_window(id, tokens, "Ollama GET /api/ps (context_length, as loaded)");
        return;
    }
    let show_url = format!("{}/api/show", probe.root);
    let request = probe
        .client
        .post(&show_url)
        .json(&serde_json::json!({ "model": id }));
    let Some(show) = probe.send(request, &show_url, found).await else {
        return;
    };
    let num_ctx = show["parameters"].as_str().and_then(|text| {
        text.lines().find_map(|line| {
            let mut words = line.split_whitespace();
            (words.next() == Some("num_ctx")).then(|| words.next()?.parse::<u64>().ok())?
        })
    });
    if let Some(tokens) = num_ctx {
        found.set_window(id, tokens, "Ollama POST /api/show (num_ctx)");
        return;
    }
    let trained = show["model_info"].as_object().and_then(|info| {
        info.iter()
            .find(|(key, _)| key.ends_with(".context_length"))
            .and_then(|(_, v)| v.as_u64())
    });
    let tokens = trained.map_or(OLLAMA_DEFAULT, |t| t.min(OLLAMA_DEFAULT));
    let source = match trained {
        Some(t) if t > OLLAMA_DEFAULT => format!(
            "Ollama's default window (the model takes {t}; raise it with OLLAMA_CONTEXT_LENGTH)"
        ),
        _ => "Ollama POST /api/show (context_length)".to_string(),
    };
    found.set_window(id, tokens, source);
}

/// `http://host:port/v1` -> `http://host:port`.
fn root_of(base_url: &str) -> String {
    let trimmed = base_url.trim_end_matches('/');
    trimmed.strip_suffix("/v1").unwrap_or(trimmed).to_string()
}

/// Whether the server runs on this machine or the local network, where the
/// server-specific probes make sense (a hosted API gets only `GET /models`).
pub fn is_local(base_url: &str) -> bool {
    let Ok(url) = reqwest::Url::parse(base_url) else {
        return false;
    };
    let Some(host) = url.host_str() else {
        return false;
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    match host.parse::<std::net::IpAddr>() {
        Ok(std::net::IpAddr::V4(ip)) => ip.is_loopback() || ip.is_private() || ip.is_link_local(),
        Ok(std::net::IpAddr::V6(ip)) => ip.is_loopback() || ip.is_unique_local(),
        Err(_) => host == "localhost" || host.ends_with(".local") || !host.contains('.'),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn model_lists_of_each_family() {
        let mut found = Discovered::default();
        read_model_list(
            &json!({"data": [
                {"id": "qwen", "max_model_len": 32768},
                {"id": "or/model", "context_length": 131072},
                {"id": "gguf", "meta": {"n_ctx": 4096, "n_ctx_train": 8192}},
                {"id": "mistral-large-latest", "object": "model", "owned_by": "mistralai",
                 "max_context_length": 131072},
                {"id": "plain"}
            ]}),
            &mut found,
        );
        assert_eq!(
            found.models,
            ["qwen", "or/model", "gguf", "mistral-large-latest", "plain"]
        );
        assert_eq!(found.window("mistral-large-latest").unwrap().tokens, 131072);
        assert_eq!(found.window("qwen").unwrap().tokens, 32768);
        assert_eq!(found.window("or/model").unwrap().tokens, 131072);
        assert_eq!(found.window("gguf").unwrap().tokens, 4096);
        assert!(found.window("plain").is_none());
        read_lm_studio(
            &json!({"data": [{"id": "plain", "loaded_context_length": 8192, "max_context_length": 32768}]}),
            &mut found,
        );
        assert_eq!(found.window("plain").unwrap().tokens, 8192);
        assert_eq!(
            llama_cpp_window(&json!({"default_generation_settings": {"n_ctx": 2048}})),
            Some(2048)
        );
    }

    #[test]
    fn roots_and_local_servers() {
        assert_eq!(
            root_of("http://localhost:11434/v1/"),
            "http://localhost:11434"
        );
        assert!(is_local("http://127.0.0.1:8080/v1"));
        assert!(is_local("http://192.168.1.20:8000/v1"));
        assert!(is_local("http://gpu-box:8000/v1"));
        assert!(!is_local("https://api.openai.com/v1"));
    }
}
