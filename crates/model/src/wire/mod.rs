//! The wire APIs, one file each: chat completions ([`chat`], every OpenAI-compatible server),
//! OpenAI's Responses API ([`responses`]) and Anthropic's Messages API ([`anthropic`]).
//!
//! What they share lives here: [`Link`] (the endpoint, the HTTP client built on the first
//! request, the headers — the key, the endpoint's own, and those one request adds, merged —
//! retries through [`super::http::send`], and failures classified as for chat
//! completions) and [`drive`], which reads a capped server-sent-event stream with the
//! first-byte and idle timeouts and hands each event to the API's [`Decoder`]. Events are
//! parsed by `sse-stream`, which reads each byte once however the network splits an event.
//! The responses read at once share one bound (twice `max_response_bytes`), and the errors
//! every API reports in the same words are in `errors.rs`.

pub(crate) mod anthropic;
pub(crate) mod chat;
pub(crate) mod responses;

mod errors;
pub(crate) mod ids;
pub use errors::*;

use std::sync::Arc;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};

use futures::{Stream, StreamExt};
use serde_json::Value;

use super::http::{self, Failure};
use super::{ErrorClass, EventStream, ModelError, ModelEvent, Origin};
use crate::config::{Config, Endpoint, KeyFrom, RetryPolicy, Timeouts};
use crate::conversation::Api;

/// One server spoken to in one API: where, with which key, within which limits.
pub(crate) struct Link {
    endpoint: Endpoint,
    api: Api,
    retry: RetryPolicy,
    timeouts: Timeouts,
    max_response_bytes: u64,
    /// Built on the first request: loading TLS roots costs milliseconds that editors would
    /// otherwise wait for before `initialize` is answered.
    client: OnceLock<reqwest::Client>,
}

impl Link {
    /// A link to `config`'s endpoint in `api`; nothing is set up until the first request.
    pub(crate) fn new(config: &Config, api: Api) -> Self {
        Self {
            endpoint: config.endpoint.clone(),
            api,
            retry: config.retry,
            timeouts: config.timeouts,
            max_response_bytes: config.max_response_bytes,
            client: OnceLock::new(),
        }
    }

    /// The endpoint.
    pub(crate) fn endpoint(&self) -> &Endpoint {
        &self.endpoint
    }

    /// Where an answer to a request for `model` comes from.
    pub(crate) fn origin(&self, model: &str) -> Origin {
        Origin {
            api: self.api,
            server: self.endpoint.base_url.clone(),
            model: model.to_string(),
        }
    }

    fn client(&self) -> Result<&reqwest::Client, ModelError> {
        if let Some(client) = self.client.get() {
            return Ok(client);
        }
        // reqwest is built without a default TLS provider; ring is ours. Installing twice is harmless.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let builder = reqwest::Client::builder()
            .connect_timeout(self.timeouts.connect)
            .redirect(same_server_redirects());
        let client = without_tls_roots_for_http(builder, &self.endpoint.base_url)
            .build()
            .map_err(|e| {
                ModelError::new(
                    ErrorClass::Connection,
                    crate::platform::net::describe_reqwest(&e),
                )
            })?;
        Ok(self.client.get_or_init(|| client))
    }

    /// Posts `body` to `path` under the base URL with the key in the API's headers, and
    /// decodes the event stream that answers with `decoder`. Every request the model reads
    /// passes here, so this is where the keys tandem knows are taken out of the body
    /// (`secrets::redact_json`), whatever part of it (a file, a command's output) holds one.
    pub(crate) async fn open<D: Decoder>(
        &self,
        path: &str,
        body: Value,
        model: &str,
        decoder: D,
    ) -> Result<EventStream, ModelError> {
        self.open_with(path, body, model, &[], decoder).await
    }

    /// [`Link::open`], with `added` headers this one request needs (Anthropic's
    /// `anthropic-beta` for a feature of its model); see [`merged_headers`] for how they join
    /// the endpoint's own.
    pub(crate) async fn open_with<D: Decoder>(
        &self,
        path: &str,
        mut body: Value,
        model: &str,
        added: &[(&'static str, String)],
        decoder: D,
    ) -> Result<EventStream, ModelError> {
        let endpoint = &self.endpoint;
        if endpoint.requires_key && endpoint.api_key.is_none() {
            return Err(missing_key_error(&endpoint.base_url, &endpoint.api_key_env));
        }
        let client = self.client()?;
        crate::secrets::refresh_stored_keys();
        crate::secrets::redact_json(&mut body);
        let url = format!("{}{path}", endpoint.base_url);
        let request = client
            .post(&url)
            .headers(auth_headers(self.api, endpoint.api_key.as_ref()))
            .headers(merged_headers(&endpoint.headers, added))
            .json(&body)
            .build()
            .map_err(|e| {
                connection_error(
                    &endpoint.base_url,
                    &crate::platform::net::describe_reqwest(&e),
                    1,
                )
            })?;
        tracing::debug!(%url, model, "model request");
        let response = http::send(client, request, self.retry, self.timeouts.first_byte)
            .await
            .map_err(|f| self.failure(model, f))?;
        Ok(drive(
            response,
            decoder,
            Reading {
                timeouts: self.timeouts,
                max_bytes: self.max_response_bytes,
                base_url: endpoint.base_url.clone(),
            },
        ))
    }

    /// How this endpoint uses its API key.
    pub(crate) fn key_use(&self) -> super::error::KeyUse<'_> {
        key_use(&self.endpoint)
    }

    fn failure(&self, model: &str, failure: Failure) -> ModelError {
        let base_url = &self.endpoint.base_url;
        match failure {
            Failure::Http(f) => ModelError::from_http(
                base_url,
                model,
                self.key_use(),
                f.status,
                &f.body,
                f.attempts,
                f.retry_after,
            ),
            Failure::Connect(f) => connection_error(base_url, &f.message, f.attempts),
            Failure::FirstByte(f) => timeout_error(base_url, false, f.waited),
            Failure::NotAStream(f) => ModelError::from_json_body(base_url, model, &f.body),
            Failure::Html(page) => html_page(base_url, page.title.as_deref()),
        }
    }
}

/// The headers that carry `key` in `api`: `x-api-key` with `anthropic-version` for
/// Anthropic's Messages API, a bearer token for OpenAI's APIs. Marked sensitive, so no log or
/// debug print shows them.
pub(crate) fn auth_headers(
    api: Api,
    key: Option<&crate::config::ApiKey>,
) -> reqwest::header::HeaderMap {
    use reqwest::header::{AUTHORIZATION, HeaderValue};
    let mut headers = reqwest::header::HeaderMap::new();
    if api == Api::AnthropicMessages {
        headers.insert(
            "anthropic-version",
            HeaderValue::from_static(ANTHROPIC_VERSION),
        );
    }
    let Some(key) = key else {
        return headers;
    };
    let value = match api {
        Api::AnthropicMessages => HeaderValue::from_str(key.expose()),
        _ => HeaderValue::from_str(&format!("Bearer {}", key.expose())),
    };
    if let Ok(mut value) = value {
        value.set_sensitive(true);
        let name = match api {
            Api::AnthropicMessages => reqwest::header::HeaderName::from_static("x-api-key"),
            _ => AUTHORIZATION,
        };
        headers.insert(name, value);
    }
    headers
}

/// The headers an editor added to the endpoint (`providers/set`), marked sensitive: they may
/// carry tokens of their own. A name or value that is not a valid header is left out.
pub(crate) fn extra_headers(headers: &[(String, String)]) -> reqwest::header::HeaderMap {
    let mut map = reqwest::header::HeaderMap::new();
    for (name, value) in headers {
        let name = reqwest::header::HeaderName::from_bytes(name.as_bytes());
        let value = reqwest::header::HeaderValue::from_str(value);
        if let (Ok(name), Ok(mut value)) = (name, value) {
            value.set_sensitive(true);
            map.insert(name, value);
        }
    }
    map
}

/// The endpoint's `headers` (see [`extra_headers`]) with a request's `added` ones: a value
/// for a header the endpoint already sets joins its comma-separated list (an `anthropic-beta`
/// the user configured keeps its betas and gains the request's), unless it is there already.
pub(crate) fn merged_headers(
    headers: &[(String, String)],
    added: &[(&'static str, String)],
) -> reqwest::header::HeaderMap {
    let mut map = extra_headers(headers);
    for (name, value) in added {
        let Ok(name) = reqwest::header::HeaderName::from_bytes(name.as_bytes()) else {
            continue;
        };
        let listed: Vec<String> = map
            .get(&name)
            .and_then(|v| v.to_str().ok())
            .map(|v| v.split(',').map(|s| s.trim().to_string()).collect())
            .unwrap_or_default();
        if listed.iter().any(|v| v == value) {
            continue;
        }
        let joined = listed
            .into_iter()
            .filter(|v| !v.is_empty())
            .chain([value.clone()])
            .collect::<Vec<_>>()
            .join(",");
        if let Ok(mut value) = reqwest::header::HeaderValue::from_str(&joined) {
            value.set_sensitive(true);
            map.insert(name, value);
        }
    }
    map
}

/// The Messages API version tandem speaks.
const ANTHROPIC_VERSION: &str = "2023-06-01";

/// Redirects followed only within the server's own scheme, host and port, a few at most. A
/// redirect elsewhere would carry the key (reqwest drops `Authorization` across hosts, but not
/// Anthropic's `x-api-key`) and the whole conversation to a server the user never named.
/// `builder` without the system's root certificates when `base_url` is plain `http://`: the
/// client never speaks TLS (its redirects stay on the same scheme), and loading the roots
/// costs start-up a read of every file in the system's certificate folder.
pub(crate) fn without_tls_roots_for_http(
    builder: reqwest::ClientBuilder,
    base_url: &str,
) -> reqwest::ClientBuilder {
    if base_url
        .trim_start()
        .to_ascii_lowercase()
        .starts_with("http://")
    {
        builder.tls_certs_only(std::iter::empty())
    } else {
        builder
    }
}

pub(crate) fn same_server_redirects() -> reqwest::redirect::Policy {
    reqwest::redirect::Policy::custom(|attempt| {
        let first = attempt.previous().first();
        let same = first.is_some_and(|from| {
            from.scheme() == attempt.url().scheme()
                && from.host_str() == attempt.url().host_str()
                && from.port_or_known_default() == attempt.url().port_or_known_default()
        });
        if same && attempt.previous().len() < 5 {
            attempt.follow()
        } else {
            attempt.stop()
        }
    })
}

/// How `endpoint` uses its API key, for error messages.
pub(crate) fn key_use(endpoint: &Endpoint) -> super::error::KeyUse<'_> {
    use super::error::{KeySource, KeyUse};
    KeyUse {
        env: &endpoint.api_key_env,
        offered: endpoint.offers_login(),
        sent: endpoint.api_key.is_some(),
        from: match &endpoint.key_from {
            _ if endpoint.api_key.is_none() => KeySource::Nowhere,
            KeyFrom::Env(var) => KeySource::Env(var),
            KeyFrom::Stored(_) => KeySource::Store,
            KeyFrom::Given | KeyFrom::Nowhere => KeySource::Given,
        },
    }
}

/// Reads one API's events into model events.
pub(crate) trait Decoder: Send + 'static {
    /// The model events one server-sent event carries (`event` is its `event:` name).
    fn event(&mut self, event: Option<&str>, data: &str) -> Result<Vec<ModelEvent>, ModelError>;
    /// Whether the answer is complete, so the stream may end here.
    fn complete(&self) -> bool;
}

/// What reading a response needs to know.
struct Reading {
    timeouts: Timeouts,
    max_bytes: u64,
    base_url: String,
}

/// A response being read.
struct Read<D> {
    events:
        std::pin::Pin<Box<dyn Stream<Item = Result<sse_stream::Sse, sse_stream::Error>> + Send>>,
    decoder: D,
    reading: Reading,
    /// Set when the body passed its byte cap.
    cut: Arc<AtomicU8>,
    /// Whether any event arrived (the idle timeout applies from then on).
    started: bool,
    /// Decoded events not yet handed on.
    pending: std::collections::VecDeque<ModelEvent>,
    /// Whether the stream ended (with an error, or complete).
    done: bool,
    /// When the whole answer must be over (`timeouts.answer_secs`).
    deadline: tokio::time::Instant,
}

/// The model events of `response`'s event stream, ending with an error when the server goes
/// quiet, sends too much, breaks off before the answer is complete, or sends what `decoder`
/// cannot read.
fn drive<D: Decoder>(response: reqwest::Response, decoder: D, reading: Reading) -> EventStream {
    let cut = Arc::new(AtomicU8::new(NOT_CUT));
    let deadline = tokio::time::Instant::now() + reading.timeouts.answer;
    let bytes = capped(response, reading.max_bytes, cut.clone());
    let read = Read {
        events: Box::pin(sse_stream::SseStream::from_bytes_stream(bytes)),
        decoder,
        reading,
        cut,
        started: false,
        pending: Default::default(),
        done: false,
        deadline,
    };
    futures::stream::unfold(read, |mut read| async move {
        let item = read.next().await?;
        Some((item, read))
    })
    .boxed()
}

impl<D: Decoder> Read<D> {
    /// The next model event, or the error that ends the stream, or nothing at its end.
    async fn next(&mut self) -> Option<Result<ModelEvent, ModelError>> {
        loop {
            if let Some(event) = self.pending.pop_front() {
                return Some(Ok(event));
            }
            if self.done {
                return None;
            }
            match self.step().await {
                Ok(()) => {}
                Err(e) => {
                    self.done = true;
                    return Some(Err(e));
                }
            }
        }
    }

    /// Reads one server-sent event into `pending`; marks the end.
    async fn step(&mut self) -> Result<(), ModelError> {
        let r = &self.reading;
        let limit = if self.started {
            r.timeouts.idle
        } else {
            r.timeouts.first_byte
        };
        let left = self
            .deadline
            .saturating_duration_since(tokio::time::Instant::now());
        let Ok(next) = tokio::time::timeout(limit.min(left), self.events.next()).await else {
            if left <= limit {
                return Err(ModelError::new(
                    ErrorClass::Timeout,
                    format!(
                        "the model server at {} was still answering after {:?} (timeouts.answer_secs); tandem stopped the answer",
                        r.base_url, r.timeouts.answer
                    ),
                ));
            }
            return Err(timeout_error(&r.base_url, self.started, limit));
        };
        self.started = true;
        match next {
            Some(Ok(sse)) => {
                // `[DONE]` ends OpenAI's chat streams; gateways put it after other APIs' too.
                if let Some(data) = sse.data.as_deref().filter(|d| d.trim() != "[DONE]") {
                    let events = self.decoder.event(sse.event.as_deref(), data)?;
                    self.pending.extend(events);
                }
                Ok(())
            }
            Some(Err(_)) if self.cut.load(Ordering::Relaxed) == CUT_RESPONSE => {
                Err(too_large(&r.base_url, r.max_bytes))
            }
            Some(Err(_)) if self.cut.load(Ordering::Relaxed) == CUT_TOGETHER => {
                Err(too_large_together(&r.base_url, r.max_bytes))
            }
            Some(Err(error)) => Err(broken_off(&r.base_url, &error.to_string())),
            None if self.decoder.complete() => {
                self.done = true;
                Ok(())
            }
            None => Err(ModelError::new(
                ErrorClass::StreamInterrupted,
                format!(
                    "the model server at {} closed the stream before the answer was complete",
                    r.base_url
                ),
            )),
        }
    }
}

/// Why a body was cut (see [`capped`]).
const NOT_CUT: u8 = 0;
const CUT_RESPONSE: u8 = 1;
const CUT_TOGETHER: u8 = 2;

/// The bytes of every response this process is reading, together: however many answers run
/// away at once (eight sessions, each endless), what they hold is bounded by the process,
/// not only by each response.
static IN_FLIGHT: AtomicU64 = AtomicU64::new(0);

/// One response's share of [`IN_FLIGHT`], given back when its body is dropped.
struct Share(u64);

impl Drop for Share {
    fn drop(&mut self) {
        IN_FLIGHT.fetch_sub(self.0, Ordering::Relaxed);
    }
}

/// The body as a stream of byte pieces that fails once more than `max_bytes` arrived, or once
/// the responses read together pass twice that, setting `cut` so the failure is told as
/// "too large" rather than "broken off".
fn capped(
    response: reqwest::Response,
    max_bytes: u64,
    cut: Arc<AtomicU8>,
) -> impl Stream<Item = Result<bytes::Bytes, std::io::Error>> + Send + 'static {
    let mut share = Share(0);
    let together = max_bytes.saturating_mul(2);
    response.bytes_stream().map(move |piece| {
        // The whole share is moved in (not only its number), so it is given back with the body.
        let share = &mut share;
        let piece = piece.map_err(std::io::Error::other)?;
        let n = piece.len() as u64;
        share.0 = share.0.saturating_add(n);
        let total = IN_FLIGHT.fetch_add(n, Ordering::Relaxed).saturating_add(n);
        let why = if share.0 > max_bytes {
            CUT_RESPONSE
        } else if total > together {
            CUT_TOGETHER
        } else {
            return Ok(piece);
        };
        cut.store(why, Ordering::Relaxed);
        Err(std::io::Error::other("the response is too large"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_requests_header_joins_the_list_the_endpoint_sets() {
        let beta = || {
            vec![(
                "anthropic-beta",
                "interleaved-thinking-2025-05-14".to_string(),
            )]
        };
        let map = merged_headers(&[], &beta());
        assert_eq!(map["anthropic-beta"], "interleaved-thinking-2025-05-14");
        let configured = vec![
            (
                "Anthropic-Beta".to_string(),
                "prompt-caching-2024-07-31".to_string(),
            ),
            ("X-Route".to_string(), "blue".to_string()),
        ];
        let map = merged_headers(&configured, &beta());
        assert_eq!(
            map["anthropic-beta"],
            "prompt-caching-2024-07-31,interleaved-thinking-2025-05-14"
        );
        assert_eq!(map["x-route"], "blue");
        let already = vec![(
            "anthropic-beta".to_string(),
            "interleaved-thinking-2025-05-14, other-2025-01-01".to_string(),
        )];
        let map = merged_headers(&already, &beta());
        assert_eq!(
            map["anthropic-beta"],
            "interleaved-thinking-2025-05-14, other-2025-01-01"
        );
    }
}
