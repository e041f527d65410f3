//! The model seam: what a turn sends to a chat model and what streams back.
//!
//! [`ModelClient`] is implemented by [`openai::OpenAiClient`] (any OpenAI-compatible server)
//! and [`replay::ReplayClient`] (scripted turns from a fixture, for offline runs).

pub mod accumulate;
pub mod chunk;
pub mod error;
mod http;
pub mod openai;
pub mod replay;

use futures::future::BoxFuture;
use futures::stream::BoxStream;

pub use accumulate::ToolCall;
pub use error::{ErrorClass, ModelError};

/// One message of the conversation as the model sees it.
#[derive(Debug, Clone, PartialEq)]
pub enum Message {
    /// Instructions from tandem.
    System(String),
    /// What the user sent: text and images.
    User(Vec<UserPart>),
    /// What the model answered (text only; reasoning is not sent back).
    Assistant(String),
}

/// A piece of a user message.
#[derive(Debug, Clone, PartialEq)]
pub enum UserPart {
    /// Plain text.
    Text(String),
    /// An image, as a `data:` URL or an `https:` URL.
    Image {
        /// The URL the model fetches or decodes.
        url: String,
    },
}

/// One chat-completions request.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelRequest {
    /// The model id.
    pub model: String,
    /// System prompt first, then the history.
    pub messages: Vec<Message>,
    /// `low` / `medium` / `high` for models that take it.
    pub reasoning_effort: Option<String>,
}

/// Token counts reported by the server.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Usage {
    /// Tokens of the request (the context sent).
    pub prompt_tokens: u64,
    /// Tokens generated.
    pub completion_tokens: u64,
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
    /// Whole tool calls, joined from their fragments; sent just before [`ModelEvent::Finish`].
    ToolCalls(Vec<ToolCall>),
    /// Why the model stopped (`stop`, `length`, `content_filter`, `tool_calls`, or anything else).
    Finish(String),
}

/// A stream of model events; ends after [`ModelEvent::Finish`] (and usage, if any).
pub type EventStream = BoxStream<'static, Result<ModelEvent, ModelError>>;

/// A chat model that streams.
pub trait ModelClient: Send + Sync {
    /// Opens a streaming request, retrying transient failures before the first event.
    /// Dropping the returned stream (or the future) aborts the request.
    fn open(&self, request: ModelRequest) -> BoxFuture<'_, Result<EventStream, ModelError>>;
}
