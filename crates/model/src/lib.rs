//! The model seam: what a turn sends to a chat model and what streams back.
//!
//! [`ModelClient`] is implemented once per wire API — [`wire::chat::ChatClient`] (chat
//! completions, any OpenAI-compatible server), [`wire::responses::ResponsesClient`] (OpenAI's
//! Responses API) and [`wire::anthropic::AnthropicClient`] (Anthropic's Messages API) — and by
//! [`replay::ReplayClient`] (scripted turns from a fixture, for offline runs). Whatever a
//! server sends that it wants back travels with the answer as [`Carried`] state.
//!
//! tandem-model uses tandem-types, tandem-platform and tandem-config; the core crate drives it
//! through [`ModelClient`], and the binary builds the client the configuration asks for.

// The floors below, by the names this crate's code reaches them with.
use tandem_config as config;
use tandem_config::secrets;
use tandem_platform as platform;
use tandem_types as types;
use tandem_types::conversation;

pub(crate) mod carried;
pub(crate) mod dialect;
pub mod discover;
pub(crate) mod error;
mod error_body;
pub(crate) mod excerpt;
pub(crate) mod http;
pub mod probe;
pub mod profile;
pub mod quirks;
pub mod replay;
pub(crate) mod router;
pub mod wire;

use futures::future::BoxFuture;
use futures::stream::BoxStream;

pub use crate::conversation::{Carried, Message, Origin, ToolCall};
pub use error::{ErrorClass, ModelError};

use crate::types::{FinishReason, ToolSpec, UserPart};

/// One chat-completions request.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelRequest {
    /// The model id.
    pub model: String,
    /// System prompt first, then the history: shared with the conversation they come from,
    /// so a request copies none of it.
    pub messages: Vec<std::sync::Arc<Message>>,
    /// `low` / `medium` / `high` for models that take it.
    pub reasoning_effort: Option<String>,
    /// Tools offered; empty means none.
    pub tools: Vec<ToolSpec>,
    /// Most tokens to generate (`tandem doctor` asks for one); `None` leaves it to the server.
    pub max_tokens: Option<u32>,
    /// A JSON Schema the answer must follow, sent as `response_format` (servers that take it).
    pub response_format: Option<serde_json::Value>,
    /// What ties this request to the others of its conversation in the server's prompt
    /// cache: the session id for a session's requests (sent as the Responses API's
    /// `prompt_cache_key`, so OpenAI routes them to one cache); `None` for one-off requests
    /// (a login or doctor check).
    pub cache_key: Option<String>,
}

/// Token counts reported by the server.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Usage {
    /// Tokens of the request (the context sent).
    pub prompt_tokens: u64,
    /// Tokens generated.
    pub completion_tokens: u64,
    /// Of the prompt tokens, how many the server served from its cache.
    pub cached_tokens: u64,
    /// Of the completion tokens, how many were reasoning.
    pub reasoning_tokens: u64,
    /// What the request cost in US dollars, when the server says (OpenRouter's `usage.cost`).
    pub cost: Option<f64>,
}

/// Something the model produced, in stream order.
#[derive(Debug, Clone, PartialEq)]
pub enum ModelEvent {
    /// A piece of the visible answer.
    Text(String),
    /// A piece of the model's reasoning.
    Reasoning(String),
    /// Final token counts.
    Usage(Usage),
    /// A tool call began: its name is known, its arguments are still streaming.
    CallStarted {
        /// The call id.
        id: String,
        /// The tool's name.
        name: String,
    },
    /// Whole tool calls, joined from their fragments; sent just before [`ModelEvent::Finish`].
    ToolCalls(Vec<ToolCall>),
    /// State the server wants back with this response; sent before [`ModelEvent::Finish`].
    Carried(Carried),
    /// Why the model stopped.
    Finish(FinishReason),
}

/// A stream of model events; ends after [`ModelEvent::Finish`] (and usage, if any).
pub type EventStream = BoxStream<'static, Result<ModelEvent, ModelError>>;

/// A chat model that streams.
pub trait ModelClient: Send + Sync {
    /// Opens a streaming request, retrying transient failures before the first event.
    /// Dropping the returned stream (or the future) aborts the request.
    fn open(&self, request: ModelRequest) -> BoxFuture<'_, Result<EventStream, ModelError>>;
}

/// The model client `config` asks for: the replay fixture or the HTTP endpoint.
pub fn client_for(
    config: &crate::config::Config,
) -> Result<std::sync::Arc<dyn ModelClient>, ModelError> {
    if let Some(path) = &config.replay {
        return Ok(std::sync::Arc::new(replay::ReplayClient::load(path)?));
    }
    let default = endpoint_client(config);
    if config.providers.is_empty() {
        return Ok(default);
    }
    Ok(std::sync::Arc::new(router::Router::new(config, default)))
}

/// The client for `config`'s endpoint, in its API.
fn endpoint_client(config: &crate::config::Config) -> std::sync::Arc<dyn ModelClient> {
    use crate::conversation::Api;
    match config.endpoint.api {
        Api::ChatCompletions => std::sync::Arc::new(wire::chat::ChatClient::new(config)),
        Api::Responses => std::sync::Arc::new(wire::responses::ResponsesClient::new(config)),
        Api::AnthropicMessages => {
            std::sync::Arc::new(wire::anthropic::AnthropicClient::new(config))
        }
    }
}
