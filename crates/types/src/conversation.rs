//! The conversation every layer shares, in the same words for every wire API: messages made
//! of parts (text and images from the user, an answer's text, its reasoning and its calls, a
//! call's result with the images it gave) and the provider state an answer carries back to the server that sent it
//! ([`Carried`], tagged with its [`Origin`]). Plain data with no I/O: the transcript records
//! it (`store/`), the turn builds it (`turn/`), and each wire adapter (`model/wire/`) turns it
//! into its API's request.

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::UserPart;

/// The wire API a server is spoken to in.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum Api {
    /// `POST /chat/completions`: every OpenAI-compatible server.
    #[default]
    ChatCompletions,
    /// `POST /responses`: OpenAI's Responses API (reasoning kept as encrypted items).
    Responses,
    /// `POST /messages`: Anthropic's Messages API (thinking blocks with signatures).
    AnthropicMessages,
}

impl Api {
    /// Every API, in the order the README lists them.
    pub const ALL: [Api; 3] = [Api::ChatCompletions, Api::Responses, Api::AnthropicMessages];

    /// The name used in config files, flags and `TANDEM_API`.
    pub fn name(self) -> &'static str {
        match self {
            Api::ChatCompletions => "chat-completions",
            Api::Responses => "responses",
            Api::AnthropicMessages => "anthropic-messages",
        }
    }

    /// Reads a name as [`Api::name`] writes it.
    pub fn parse(name: &str) -> Option<Api> {
        Api::ALL.into_iter().find(|a| a.name() == name.trim())
    }
}

impl fmt::Display for Api {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One message of the conversation as the model sees it.
#[derive(Debug, Clone, PartialEq)]
pub enum Message {
    /// Instructions from tandem.
    System(String),
    /// What the user sent: text and images.
    User(Vec<UserPart>),
    /// What the model answered, with the tools it called.
    Assistant {
        /// The visible answer text (may be empty when the model only called tools).
        text: String,
        /// The model's reasoning as it streamed; sent back only with `carried` of the same
        /// origin (a server that sent it as a field wants it in that field).
        reasoning: String,
        /// The calls, in the model's order; each is answered by one [`Message::Tool`].
        tool_calls: Vec<ToolCall>,
        /// What the server wants back verbatim (see [`carried`]). Boxed: most messages carry
        /// none, and every message takes the room of the largest kind.
        carried: Option<Box<Carried>>,
    },
    /// The result of one tool call.
    Tool {
        /// The call this answers.
        call_id: String,
        /// What the model reads.
        content: String,
        /// Images the call gave (a screenshot from an MCP server, an image file read), as
        /// `data:` URLs; each API puts them where it takes them (see `model/wire/`).
        images: Vec<String>,
    },
}

impl Message {
    /// An assistant message with text only.
    pub fn assistant(text: impl Into<String>) -> Message {
        Message::Assistant {
            text: text.into(),
            reasoning: String::new(),
            tool_calls: Vec::new(),
            carried: None,
        }
    }

    /// Whether the message carries images (a user's prompt, a tool result).
    pub fn holds_images(&self) -> bool {
        match self {
            Message::User(parts) => parts.iter().any(|p| matches!(p, UserPart::Image { .. })),
            Message::Tool { images, .. } => !images.is_empty(),
            _ => false,
        }
    }

    /// Replaces its images, in order, each one `drop` says to, with `note`: in its place in a
    /// user's prompt, as a line after a tool result's text.
    pub fn drop_images(&mut self, note: &str, mut drop: impl FnMut() -> bool) {
        match self {
            Message::User(parts) => {
                for part in parts.iter_mut() {
                    if matches!(part, UserPart::Image { .. }) && drop() {
                        *part = UserPart::Text(note.to_string());
                    }
                }
            }
            Message::Tool {
                content, images, ..
            } => {
                let before = images.len();
                images.retain(|_| !drop());
                for _ in images.len()..before {
                    content.push('\n');
                    content.push_str(note);
                }
            }
            _ => {}
        }
    }
}

/// What the model reads after an answer of its broke off mid-stream (the turn asks again
/// and the model goes on from there, see `turn::loop`): the message it stands alone in
/// joins the answer before it and the one after into one, for [`last_answer`].
pub const GO_ON: &str = "[tandem: the connection to the model server broke off in the middle of your last answer, after the text above. Go on from exactly where it stopped, without repeating what you already wrote.]";

/// The text of the conversation's last assistant message with any, or "": with the pieces
/// before it when it went on from an answer that broke off ([`GO_ON`]).
pub fn last_answer<M: std::borrow::Borrow<Message>>(messages: &[M]) -> std::borrow::Cow<'_, str> {
    fn text_of(m: &Message) -> Option<&str> {
        match m {
            Message::Assistant { text, .. } if !text.trim().is_empty() => Some(text.as_str()),
            _ => None,
        }
    }
    let Some(last) = messages.iter().rposition(|m| text_of(m.borrow()).is_some()) else {
        return "".into();
    };
    let mut pieces = vec![text_of(messages[last].borrow()).unwrap_or_default()];
    let mut at = last;
    // … an answer, the note alone in a user message, its continuation …
    while at >= 2
        && went_on(messages[at - 1].borrow())
        && let Some(before) = text_of(messages[at - 2].borrow())
    {
        pieces.push(before);
        at -= 2;
    }
    if pieces.len() == 1 {
        return pieces[0].into();
    }
    pieces.reverse();
    pieces.concat().into()
}

/// Whether `message` is the user message holding only [`GO_ON`].
fn went_on(message: &Message) -> bool {
    matches!(message, Message::User(parts) if parts.len() == 1 && parts[0].as_text().as_deref() == Some(GO_ON))
}

/// What one tool call gave the model: text, and the images it made, if any.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolResult {
    /// What the model reads.
    pub content: String,
    /// Images as `data:` URLs.
    pub images: Vec<String>,
}

impl From<String> for ToolResult {
    fn from(content: String) -> Self {
        Self {
            content,
            images: Vec::new(),
        }
    }
}

impl From<&str> for ToolResult {
    fn from(content: &str) -> Self {
        content.to_string().into()
    }
}

/// A `data:` URL's media type and base64 data; `None` for any other URL.
pub fn split_data_url(url: &str) -> Option<(&str, &str)> {
    url.strip_prefix("data:")?.split_once(";base64,")
}

/// A `data:` URL holding `data` (base64) of type `mime`.
pub fn data_url(mime: &str, data: &str) -> String {
    format!("data:{mime};base64,{data}")
}

/// A complete tool call the model asked for.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ToolCall {
    /// The call id the result must answer (generated when the server sent none).
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// The arguments' JSON text, as the model wrote it.
    pub arguments: String,
    /// What the server hung on the call and wants back with it (Gemini's
    /// `extra_content.google.thought_signature`); it goes back only to the origin of the
    /// message's [`super::Carried`] state. Boxed, as almost no call has it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extra: Option<Box<serde_json::Value>>,
}

impl ToolCall {
    /// A call with nothing carried.
    pub fn new(
        id: impl Into<String>,
        name: impl Into<String>,
        arguments: impl Into<String>,
    ) -> Self {
        Self {
            id: id.into(),
            name: name.into(),
            arguments: arguments.into(),
            extra: None,
        }
    }
}

/// Which API, server and model produced some provider state.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Origin {
    /// The wire API it was read from.
    pub api: Api,
    /// The server's base URL.
    pub server: String,
    /// The model id as requested.
    pub model: String,
}

/// What one response left that its server wants back, verbatim.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Carried {
    /// Where it came from; it goes back only there.
    pub origin: Origin,
    /// The API's own shape (see each adapter in `wire/`).
    pub data: Value,
}

impl Carried {
    /// This state's data when it came from `origin`, else nothing.
    pub fn for_origin<'a>(carried: Option<&'a Carried>, origin: &Origin) -> Option<&'a Value> {
        carried.filter(|c| &c.origin == origin).map(|c| &c.data)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn said(text: &str) -> Message {
        Message::Assistant {
            text: text.into(),
            reasoning: String::new(),
            tool_calls: Vec::new(),
            carried: None,
        }
    }

    fn user(text: &str) -> Message {
        Message::User(vec![UserPart::Text(text.into())])
    }

    #[test]
    fn an_answer_that_went_on_after_breaking_off_is_read_whole() {
        let messages = [
            user("hi"),
            said("Half an "),
            user(GO_ON),
            said("answ"),
            user(GO_ON),
            said("er."),
        ];
        assert_eq!(last_answer(&messages), "Half an answer.");
        // A prompt of the user's between two answers keeps them apart.
        let apart = [said("First."), user("and?"), said("Second.")];
        assert_eq!(last_answer(&apart), "Second.");
        assert_eq!(last_answer::<Message>(&[]), "");
    }
}
