//! Streaming chat completions against any OpenAI-compatible server, through async-openai's
//! bring-your-own-types (`byot`) calls with tandem's lenient chunk types.

use std::collections::VecDeque;
use std::sync::OnceLock;

use async_openai::config::OpenAIConfig;
use async_openai::error::OpenAIError;
use futures::future::BoxFuture;
use futures::{Stream, StreamExt};
use serde_json::Value;

use super::chunk::{Chunk, Gathered};
use super::http::{self, ConnectFailure, FirstByteTimeout, HttpFailure, NotAStream};
use super::wire::{connection_error, missing_key_error, timeout_error};

use super::{ErrorClass, EventStream, ModelClient, ModelError, ModelEvent, ModelRequest};
use crate::config::{Config, Endpoint, RetryPolicy, Timeouts};

/// A [`ModelClient`] for one OpenAI-compatible endpoint.
pub struct OpenAiClient {
    endpoint: Endpoint,
    retry: RetryPolicy,
    timeouts: Timeouts,
    max_response_bytes: u64,
    /// Built on the first request: loading TLS roots costs milliseconds that editors would
    /// otherwise wait for before `initialize` is answered.
    client: OnceLock<async_openai::Client<OpenAIConfig>>,
    /// Models the server refused `tools` for: their requests carry the tools as text.
    prompted: parking_lot::Mutex<std::collections::HashSet<String>>,
    /// Whether the server refused a `response_format`: the schema is then only asked for.
    no_format: std::sync::atomic::AtomicBool,
}

impl OpenAiClient {
    /// A client for `endpoint`; nothing is set up or sent until the first prompt.
    pub fn new(config: &Config) -> Self {
        Self {
            endpoint: config.endpoint.clone(),
            retry: config.retry,
            timeouts: config.timeouts,
            max_response_bytes: config.max_response_bytes,
            client: OnceLock::new(),
            prompted: Default::default(),
            no_format: Default::default(),
        }
    }

    /// Opens `request`; a server that refuses its `response_format` gets it again without
    /// one (the answer is still checked against the schema), and so does every later request.
    async fn open_adapted(&self, mut request: ModelRequest) -> Result<EventStream, ModelError> {
        use std::sync::atomic::Ordering;
        if self.no_format.load(Ordering::Relaxed) {
            request.response_format = None;
        }
        let had_format = request.response_format.is_some();
        match self.open_with_tools(&request).await {
            Err(e) if e.class == ErrorClass::FormatUnsupported && had_format => {
                tracing::info!(
                    "the server takes no such response_format; asking for the schema in the prompt only: {}",
                    e.message
                );
                self.no_format.store(true, Ordering::Relaxed);
                request.response_format = None;
                self.open_with_tools(&request).await
            }
            other => other,
        }
    }

    /// Opens `request`; when the server takes no tools for its model, sends it again (and
    /// every later request for that model) with the tools as text.
    async fn open_with_tools(&self, request: &ModelRequest) -> Result<EventStream, ModelError> {
        let known = !request.tools.is_empty() && self.prompted.lock().contains(&request.model);
        if known {
            return self.open_stream(&super::prompted::prompted(request)).await;
        }
        match self.open_stream(request).await {
            Err(e) if e.class == ErrorClass::ToolsUnsupported && !request.tools.is_empty() => {
                tracing::info!(model = %request.model, "the server takes no tools for this model; describing them in the prompt instead: {}", e.message);
                self.prompted.lock().insert(request.model.clone());
                self.open_stream(&super::prompted::prompted(request)).await
            }
            other => other,
        }
    }

    fn client(&self) -> Result<&async_openai::Client<OpenAIConfig>, ModelError> {
        if let Some(client) = self.client.get() {
            return Ok(client);
        }
        // reqwest is built without a default TLS provider; ring is ours. Installing twice is harmless.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let http_client = reqwest::Client::builder()
            .connect_timeout(self.timeouts.connect)
            .build()
            .map_err(|e| ModelError::new(ErrorClass::Connection, http::describe_reqwest(&e)))?;
        let key = self
            .endpoint
            .api_key
            .as_ref()
            .map(|k| k.expose().to_string())
            .unwrap_or_default();
        let config = OpenAIConfig::new()
            .with_api_base(self.endpoint.base_url.clone())
            .with_api_key(key);
        let client = async_openai::Client::with_config(config)
            .with_http_client(http_client.clone())
            .with_http_service(http::service(
                http_client,
                self.retry,
                http::ResponseLimits {
                    first_byte: self.timeouts.first_byte,
                    max_bytes: self.max_response_bytes,
                },
            ));
        // Two first requests racing may both build one; either is fine to keep.
        Ok(self.client.get_or_init(|| client))
    }

    async fn open_stream(&self, request: &ModelRequest) -> Result<EventStream, ModelError> {
        let endpoint = &self.endpoint;
        if endpoint.requires_key && endpoint.api_key.is_none() {
            return Err(missing_key_error(&endpoint.base_url, &endpoint.api_key_env));
        }
        let body = super::body::request_body(request, &self.origin(&request.model));
        tracing::debug!(model = %request.model, messages = request.messages.len(), "model request");
        let cut_off = http::CutOff::default();
        let chat = self.client()?.chat();
        let stream = http::CUT_OFF
            .scope(
                cut_off.clone(),
                chat.create_stream_byot::<Value, Chunk>(body),
            )
            .await
            .map_err(|e| self.open_error(&request.model, e))?;
        let st = StreamState {
            inner: stream,
            pending: VecDeque::new(),
            gathered: Gathered::new(self.origin(&request.model)),
            finished: false,
            done: false,
            started: false,
            timeouts: self.timeouts,
            cut_off,
            max_response_bytes: self.max_response_bytes,
            base_url: endpoint.base_url.clone(),
            model: request.model.clone(),
        };
        Ok(events(st).boxed())
    }

    /// Where a response to a request for `model` comes from.
    fn origin(&self, model: &str) -> super::Origin {
        super::Origin {
            api: crate::config::Api::ChatCompletions,
            server: self.endpoint.base_url.clone(),
            model: model.to_string(),
        }
    }

    /// How this endpoint uses its API key.
    fn key_use(&self) -> super::error::KeyUse<'_> {
        super::wire::key_use(&self.endpoint)
    }

    fn open_error(&self, model: &str, error: OpenAIError) -> ModelError {
        match error {
            OpenAIError::Boxed(boxed) => {
                if let Some(f) = boxed.downcast_ref::<HttpFailure>() {
                    return ModelError::from_http(
                        &self.endpoint.base_url,
                        model,
                        self.key_use(),
                        f.status,
                        &f.body,
                        f.attempts,
                        f.retry_after,
                    );
                }
                if let Some(f) = boxed.downcast_ref::<ConnectFailure>() {
                    return connection_error(&self.endpoint.base_url, &f.message, f.attempts);
                }
                if let Some(f) = boxed.downcast_ref::<FirstByteTimeout>() {
                    return timeout_error(&self.endpoint.base_url, false, f.waited);
                }
                if let Some(f) = boxed.downcast_ref::<NotAStream>() {
                    return ModelError::from_json_body(&self.endpoint.base_url, model, &f.body);
                }
                ModelError::new(ErrorClass::Connection, boxed.to_string())
            }
            OpenAIError::Reqwest(e) => {
                connection_error(&self.endpoint.base_url, &http::describe_reqwest(&e), 1)
            }
            OpenAIError::ApiError(api) => ModelError::from_http(
                &self.endpoint.base_url,
                model,
                self.key_use(),
                api.status_code.as_u16(),
                api.api_error.message.as_bytes(),
                1,
                None,
            ),
            other => ModelError::new(
                ErrorClass::BadRequest,
                format!(
                    "the request to the model server at {} failed: {other}",
                    self.endpoint.base_url
                ),
            ),
        }
    }
}

impl ModelClient for OpenAiClient {
    fn open(&self, request: ModelRequest) -> BoxFuture<'_, Result<EventStream, ModelError>> {
        Box::pin(self.open_adapted(request))
    }
}

struct StreamState<S> {
    inner: S,
    pending: VecDeque<ModelEvent>,
    gathered: Gathered,
    finished: bool,
    done: bool,
    started: bool,
    timeouts: Timeouts,
    cut_off: http::CutOff,
    max_response_bytes: u64,
    base_url: String,
    model: String,
}

/// Turns async-openai's chunk stream into model events, ending with an error when the server
/// sends an error object, a chunk that does not parse, or stops before `finish_reason`.
fn events<S>(state: StreamState<S>) -> impl Stream<Item = Result<ModelEvent, ModelError>> + Send
where
    S: Stream<Item = Result<Chunk, OpenAIError>> + Send + Unpin,
{
    futures::stream::unfold(state, |mut st| async move {
        loop {
            if let Some(event) = st.pending.pop_front() {
                return Some((Ok(event), st));
            }
            if st.done {
                return None;
            }
            let limit = if st.started {
                st.timeouts.idle
            } else {
                st.timeouts.first_byte
            };
            let Ok(next) = tokio::time::timeout(limit, st.inner.next()).await else {
                st.done = true;
                let e = timeout_error(&st.base_url, st.started, limit);
                return Some((Err(e), st));
            };
            st.started = true;
            match next {
                Some(Ok(chunk)) => {
                    if let Some(error) = &chunk.error {
                        st.done = true;
                        let e = ModelError::from_stream_error(&st.base_url, &st.model, error);
                        return Some((Err(e), st));
                    }
                    for event in chunk.events(&mut st.gathered) {
                        if matches!(event, ModelEvent::Finish(_)) {
                            st.finished = true;
                        }
                        st.pending.push_back(event);
                    }
                }
                Some(Err(_)) if st.cut_off.load(std::sync::atomic::Ordering::Relaxed) => {
                    st.done = true;
                    let e = super::wire::too_large(&st.base_url, st.max_response_bytes);
                    return Some((Err(e), st));
                }
                Some(Err(error)) => {
                    st.done = true;
                    let e = stream_error(&st.base_url, error);
                    return Some((Err(e), st));
                }
                None => {
                    st.done = true;
                    if !st.finished {
                        let e = ModelError::new(
                            ErrorClass::StreamInterrupted,
                            format!(
                                "the model server at {} closed the stream before the answer was complete",
                                st.base_url
                            ),
                        );
                        return Some((Err(e), st));
                    }
                }
            }
        }
    })
}

fn stream_error(base_url: &str, error: OpenAIError) -> ModelError {
    match error {
        OpenAIError::JSONDeserialize(e, content) => {
            let mut shown: String = content.chars().take(200).collect();
            if shown.len() < content.len() {
                shown.push('…');
            }
            ModelError::new(
                ErrorClass::MalformedResponse,
                format!(
                    "the model server at {base_url} sent a chunk tandem could not parse ({e}): {shown}"
                ),
            )
        }
        other => ModelError::new(
            ErrorClass::StreamInterrupted,
            format!(
                "the model server at {base_url} broke off the stream before the answer was complete: {other}"
            ),
        ),
    }
}
