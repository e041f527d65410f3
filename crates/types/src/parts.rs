//! What a user message is made of.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

/// A piece of a user message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UserPart {
    /// Plain text.
    Text(String),
    /// An image, as a `data:` URL or an `https:` URL.
    Image {
        /// The URL the model fetches or decodes.
        url: String,
    },
    /// A resource the editor named without its content (`resource_link`): an @-mentioned
    /// file or folder, or anything else with a URI. A turn replaces a small file or a folder
    /// inside the workspace with its content; the rest reads as a reference.
    Link {
        /// Where it is.
        uri: String,
        /// Its name.
        name: String,
        /// What the editor says about it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        description: Option<String>,
    },
}

impl UserPart {
    /// The text the model reads for this part; `None` for an image.
    pub fn as_text(&self) -> Option<Cow<'_, str>> {
        match self {
            UserPart::Text(text) => Some(Cow::Borrowed(text)),
            UserPart::Image { .. } => None,
            UserPart::Link {
                uri,
                name,
                description,
            } => {
                let mut text = format!("[Referenced: {name}]({uri})");
                if let Some(d) = description.as_deref().filter(|d| !d.is_empty()) {
                    text.push_str(&format!(" — {d}"));
                }
                Some(Cow::Owned(text))
            }
        }
    }
}

/// How the content of a mentioned file is put in the prompt for the model.
pub fn context_text(uri: &str, body: &str) -> String {
    format!("<context uri=\"{uri}\">\n{body}\n</context>")
}

/// How the listing of a mentioned folder is put in the prompt for the model.
pub fn folder_context_text(uri: &str, listing: &str) -> String {
    format!("<context uri=\"{uri}\" kind=\"folder\">\n{listing}\n</context>")
}

/// The other way round: the URI, the body and whether it is a folder's listing, when `text`
/// is exactly what [`context_text`] or [`folder_context_text`] make.
pub fn parse_context(text: &str) -> Option<(&str, &str, bool)> {
    let rest = text.strip_prefix("<context uri=\"")?;
    let (uri, rest) = rest.split_once('"')?;
    let (body, folder) = match rest.strip_prefix(">\n") {
        Some(body) => (body, false),
        None => (rest.strip_prefix(" kind=\"folder\">\n")?, true),
    };
    Some((uri, body.strip_suffix("\n</context>")?, folder))
}
