//! Chat completions (`POST {base}/chat/completions`): every OpenAI-compatible server.
//!
//! The body is built by [`crate::body`] and the chunks read by
//! [`crate::chunk`], which are lenient about what real servers send. Two refusals are
//! met by asking again another way, for that request and every later one: a server that takes
//! no `tools` for a model gets them described in the prompt ([`crate::quirks::prompted`]), and
//! one that refuses a `response_format` gets the schema only asked for (the answer is still
//! checked against it).

mod accumulate;
mod body;
mod chunk;

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};

use futures::future::BoxFuture;

use super::{Decoder, Link};
use crate::config::Config;
use crate::conversation::Api;
use crate::dialect::Dialect;
use crate::{ErrorClass, EventStream, ModelClient, ModelError, ModelEvent, ModelRequest, Origin};
use chunk::{Chunk, Gathered};

/// A [`ModelClient`] for one OpenAI-compatible endpoint.
pub(crate) struct ChatClient {
    link: Link,
    /// Models the server refused `tools` for: their requests carry the tools as text.
    prompted: parking_lot::Mutex<HashSet<String>>,
    /// Whether the server refused a `response_format`: the schema is then only asked for.
    no_format: AtomicBool,
    /// Whether the server refused the reasoning it sent coming back (a strict server that
    /// streams `reasoning` but takes no such property on input): answers then go back without
    /// their state.
    no_state: AtomicBool,
}

impl ChatClient {
    /// A client for `config`'s endpoint; nothing is set up or sent until the first prompt.
    pub(crate) fn new(config: &Config) -> Self {
        Self {
            link: Link::new(config, Api::ChatCompletions),
            prompted: Default::default(),
            no_format: AtomicBool::new(false),
            no_state: AtomicBool::new(false),
        }
    }

    /// Opens `request`; a server that refuses its `response_format` gets it again without
    /// one, and so does every later request.
    async fn open_adapted(&self, mut request: ModelRequest) -> Result<EventStream, ModelError> {
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
        let prompted = || crate::quirks::prompted::prompted(request);
        let known = !request.tools.is_empty() && self.prompted.lock().contains(&request.model);
        if known {
            return self.open_stream(&prompted()).await;
        }
        match self.open_stream(request).await {
            Err(e) if e.class == ErrorClass::ToolsUnsupported && !request.tools.is_empty() => {
                tracing::info!(model = %request.model, "the server takes no tools for this model; describing them in the prompt instead: {}", e.message);
                self.prompted.lock().insert(request.model.clone());
                self.open_stream(&prompted()).await
            }
            other => other,
        }
    }

    /// Opens `request`; a server that refuses the state sent back gets the request again
    /// without it, and so does every later one.
    async fn open_stream(&self, request: &ModelRequest) -> Result<EventStream, ModelError> {
        if self.no_state.load(Ordering::Relaxed) {
            return self.open_plain(&stateless(request), false).await;
        }
        let carries = request.messages.iter().any(|m| {
            matches!(
                &**m,
                crate::Message::Assistant {
                    carried: Some(_),
                    ..
                }
            )
        });
        let placeholder = self.dialect(&request.model).adds_placeholders();
        match self.open_plain(request, true).await {
            Err(e) if (carries || placeholder) && refuses_state(&e) => {
                tracing::info!(
                    "the server takes no reasoning back; sending answers without it: {}",
                    e.message
                );
                self.no_state.store(true, Ordering::Relaxed);
                self.open_plain(&stateless(request), false).await
            }
            other => other,
        }
    }

    /// The rules of this server for `model`.
    fn dialect(&self, model: &str) -> Dialect {
        Dialect::of(Api::ChatCompletions, &self.link.endpoint().base_url, model)
    }

    /// Opens `request` as it is; `reasoning`: whether reasoning may be sent back at all
    /// (false once the server refused it: then not even an empty placeholder goes).
    async fn open_plain(
        &self,
        request: &ModelRequest,
        reasoning: bool,
    ) -> Result<EventStream, ModelError> {
        let origin = self.link.origin(&request.model);
        let mut dialect = self.dialect(&request.model);
        if !reasoning {
            dialect = dialect.without_reasoning();
        }
        let body = body::request_body(request, &origin, &dialect);
        let base_url = &self.link.endpoint().base_url;
        let decoder = Decode::new(origin, base_url, &request.model);
        self.link
            .open("/chat/completions", body, &request.model, decoder)
            .await
    }
}

impl ModelClient for ChatClient {
    fn open(&self, request: ModelRequest) -> BoxFuture<'_, Result<EventStream, ModelError>> {
        Box::pin(self.open_adapted(request))
    }
}

/// `request` with no provider state on its answers.
fn stateless(request: &ModelRequest) -> ModelRequest {
    let mut plain = request.clone();
    for message in &mut plain.messages {
        if let crate::Message::Assistant {
            carried: Some(_), ..
        } = &**message
            && let crate::Message::Assistant { carried, .. } = std::sync::Arc::make_mut(message)
        {
            *carried = None;
        }
    }
    plain
}

/// Whether `error` is a server refusing a reasoning property on an input message.
fn refuses_state(error: &ModelError) -> bool {
    let m = error.message.to_ascii_lowercase();
    // "Unrecognized request argument: reasoning_effort" is about the request, not a message.
    let about_messages = m.replace("reasoning_effort", "");
    error.status == Some(400)
        && (about_messages.contains("reasoning") || about_messages.contains("extra_content"))
        && [
            "unsupported",
            "not supported",
            "unrecognized",
            "unknown",
            "not allowed",
            "extra",
        ]
        .iter()
        .any(|w| m.contains(w))
}

/// Reads chat-completions chunks.
struct Decode {
    gathered: Gathered,
    base_url: String,
    model: String,
    finished: bool,
}

impl Decode {
    fn new(origin: Origin, base_url: &str, model: &str) -> Self {
        Self {
            gathered: Gathered::new(origin),
            base_url: base_url.to_string(),
            model: model.to_string(),
            finished: false,
        }
    }
}

impl Decoder for Decode {
    fn event(&mut self, _event: Option<&str>, data: &str) -> Result<Vec<ModelEvent>, ModelError> {
        let chunk: Chunk =
            serde_json::from_str(data).map_err(|e| super::unreadable(&self.base_url, &e, data))?;
        if let Some(error) = &chunk.error {
            return Err(ModelError::from_stream_error(
                &self.base_url,
                &self.model,
                error,
            ));
        }
        let events = chunk.events(&mut self.gathered);
        if events.iter().any(|e| matches!(e, ModelEvent::Finish(_))) {
            self.finished = true;
        }
        Ok(events)
    }

    fn complete(&self) -> bool {
        self.finished
    }
}
