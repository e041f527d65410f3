//! A recording proxy in front of a real model server: forwards every request, returns the
//! server's answer unchanged, and keeps each chat request's body with the server's own
//! `timings` (llama.cpp: `prompt_n` tokens processed, `cache_n` reused from its cache).

use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use serde_json::Value;

use super::mock_model::serve_local;

/// One chat request and what the server said of it.
#[derive(Debug, Clone)]
pub(crate) struct Exchange {
    pub body: Value,
    pub status: u16,
    /// `timings` from the answer (the last chunk that carries it), if any.
    pub timings: Option<Value>,
    /// The server's answer when it refused the request (any status but 200), as it sent it.
    pub refusal: Option<String>,
}

impl Exchange {
    /// Tokens processed for this request.
    pub(crate) fn processed(&self) -> u64 {
        self.timings
            .as_ref()
            .and_then(|t| t["prompt_n"].as_u64())
            .unwrap_or(0)
    }
    /// Tokens of the whole prompt (processed + reused).
    pub(crate) fn prompt_tokens(&self) -> u64 {
        self.processed()
            + self
                .timings
                .as_ref()
                .and_then(|t| t["cache_n"].as_u64())
                .unwrap_or(0)
    }
}

pub(crate) struct Proxy {
    pub base_url: String,
    seen: Arc<Mutex<Vec<Exchange>>>,
}

impl Proxy {
    /// Starts a proxy to `upstream` (`http://host:port`, no path).
    pub(crate) async fn start(upstream: String) -> Proxy {
        let seen: Arc<Mutex<Vec<Exchange>>> = Arc::default();
        let log = seen.clone();
        // reqwest is built without a TLS provider of its own; tandem's is ring.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let client = reqwest::Client::new();
        let app = axum::Router::new().fallback(
            move |method: Method, uri: Uri, headers: HeaderMap, body: Bytes| {
                let (client, log, upstream) = (client.clone(), log.clone(), upstream.clone());
                async move { forward(client, log, upstream, method, uri, headers, body).await }
            },
        );
        let base_url = serve_local(app).await;
        Proxy { base_url, seen }
    }

    /// The model requests so far (chat completions, Messages, Responses), in order.
    pub(crate) fn exchanges(&self) -> Vec<Exchange> {
        self.seen.lock().unwrap().clone()
    }
}

async fn forward(
    client: reqwest::Client,
    log: Arc<Mutex<Vec<Exchange>>>,
    upstream: String,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let url = format!(
        "{upstream}{}",
        uri.path_and_query().map_or("", |p| p.as_str())
    );
    let method = reqwest::Method::from_bytes(method.as_str().as_bytes()).unwrap();
    let mut request = client.request(method, url).body(body.to_vec());
    if let Some(kind) = headers.get("content-type") {
        request = request.header("content-type", kind.to_str().unwrap_or(""));
    }
    let Ok(answer) = request.send().await else {
        return StatusCode::BAD_GATEWAY.into_response();
    };
    let status = answer.status().as_u16();
    let kind = answer
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("application/json")
        .to_string();
    let bytes = answer.bytes().await.unwrap_or_default();
    let path = uri.path();
    if ["/chat/completions", "/messages", "/responses"]
        .iter()
        .any(|api| path.ends_with(api))
    {
        let text = String::from_utf8_lossy(&bytes);
        let timings = text
            .lines()
            .filter_map(|l| l.strip_prefix("data: ").or(Some(l)))
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter_map(|v| v.get("timings").cloned())
            .next_back();
        log.lock().unwrap().push(Exchange {
            body: serde_json::from_slice(&body).unwrap_or(Value::Null),
            status,
            timings,
            refusal: (status != 200).then(|| text.into_owned()),
        });
    }
    (
        StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_GATEWAY),
        [("content-type", kind)],
        bytes,
    )
        .into_response()
}
