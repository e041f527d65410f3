//! What a user message is made of.

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
}
