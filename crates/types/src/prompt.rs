//! A prompt as the user sent it, block by block, beside what the model reads of it. A
//! reopened thread shows the blocks (mentions as the editor's chips, images, each text on
//! its own); the model's view, with mentioned files inlined as context, stays in the
//! transcript for the model.

use serde::{Deserialize, Serialize};

use super::UserPart;
use super::parts::parse_context;

/// One content block of a prompt, as the editor sent it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum PromptBlock {
    /// Text.
    Text {
        /// The text.
        text: String,
    },
    /// An image, base64-encoded.
    Image {
        /// Its MIME type.
        mime_type: String,
        /// Its bytes, base64.
        data: String,
        /// Where it came from, when the editor said.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        uri: Option<String>,
    },
    /// A resource named without its content (`resource_link`).
    Link {
        /// Where it is.
        uri: String,
        /// Its name.
        name: String,
        /// Its title, when the editor gave one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        title: Option<String>,
        /// What the editor says about it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        description: Option<String>,
        /// Its MIME type, when known.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        mime_type: Option<String>,
        /// Its size in bytes, when known.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        size: Option<i64>,
    },
    /// A resource with its text embedded (an @-mentioned file or a selection).
    Resource {
        /// Where it is (a selection's URI names its lines).
        uri: String,
        /// Its MIME type, when known.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        mime_type: Option<String>,
        /// Its text.
        text: String,
    },
    /// A resource with its bytes embedded, base64.
    Blob {
        /// Where it is.
        uri: String,
        /// Its MIME type, when known.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        mime_type: Option<String>,
        /// Its bytes, base64.
        blob: String,
    },
}

impl PromptBlock {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        PromptBlock::Text { text: text.into() }
    }

    /// What a prompt recorded without its blocks shows (one from an older tandem, or one
    /// tandem wrote itself): each part as the block it most likely came from. A mentioned
    /// file inlined as context is that resource again, a listed folder a link to it.
    pub fn of_parts(parts: &[UserPart]) -> Vec<PromptBlock> {
        parts.iter().map(Self::of_part).collect()
    }

    fn of_part(part: &UserPart) -> PromptBlock {
        match part {
            UserPart::Text(text) => match parse_context(text) {
                Some((uri, _, true)) => PromptBlock::Link {
                    uri: uri.to_string(),
                    name: last_segment(uri).to_string(),
                    title: None,
                    description: None,
                    mime_type: None,
                    size: None,
                },
                Some((uri, body, false)) => PromptBlock::Resource {
                    uri: uri.to_string(),
                    mime_type: None,
                    text: body.to_string(),
                },
                None => PromptBlock::text(text.clone()),
            },
            UserPart::Image { url } => match url
                .strip_prefix("data:")
                .and_then(|rest| rest.split_once(";base64,"))
            {
                Some((mime, data)) => PromptBlock::Image {
                    mime_type: mime.to_string(),
                    data: data.to_string(),
                    uri: None,
                },
                None => PromptBlock::Link {
                    uri: url.clone(),
                    name: url.clone(),
                    title: None,
                    description: None,
                    mime_type: None,
                    size: None,
                },
            },
            UserPart::Link {
                uri,
                name,
                description,
            } => PromptBlock::Link {
                uri: uri.clone(),
                name: name.clone(),
                title: None,
                description: description.clone(),
                mime_type: None,
                size: None,
            },
        }
    }
}

/// The last segment of a URI's path, as a name for it.
fn last_segment(uri: &str) -> &str {
    let path = uri.trim_end_matches('/');
    path.rsplit('/')
        .next()
        .filter(|s| !s.is_empty())
        .unwrap_or(uri)
}

/// A prompt as a session receives it: what the model reads, and the blocks the user sent.
#[derive(Debug, Clone, PartialEq)]
pub struct Prompt {
    /// What the model reads (links are expanded later, by the turn).
    pub parts: Vec<UserPart>,
    /// The blocks as the editor sent them.
    pub sent: Vec<PromptBlock>,
}

impl From<Vec<UserPart>> for Prompt {
    /// A prompt tandem makes itself (a script's, an action's): shown as what it says.
    fn from(parts: Vec<UserPart>) -> Self {
        let sent = PromptBlock::of_parts(&parts);
        Prompt { parts, sent }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parts::{context_text, folder_context_text};

    #[test]
    fn recorded_parts_show_as_the_blocks_they_came_from() {
        let parts = vec![
            UserPart::Text("look at".into()),
            UserPart::Text(context_text("file:///p/a.rs", "fn a() {}")),
            UserPart::Text(folder_context_text("file:///p/src/", "a.rs")),
            UserPart::Image {
                url: "data:image/png;base64,AAAA".into(),
            },
        ];
        let blocks = PromptBlock::of_parts(&parts);
        assert_eq!(blocks[0], PromptBlock::text("look at"));
        assert_eq!(
            blocks[1],
            PromptBlock::Resource {
                uri: "file:///p/a.rs".into(),
                mime_type: None,
                text: "fn a() {}".into()
            }
        );
        assert!(
            matches!(&blocks[2], PromptBlock::Link { uri, name, .. } if uri == "file:///p/src/" && name == "src")
        );
        assert!(
            matches!(&blocks[3], PromptBlock::Image { mime_type, data, .. } if mime_type == "image/png" && data == "AAAA")
        );
        // Text that only looks like context at its start stays text.
        let typed = UserPart::Text("<context uri=\"x\">\nno end".into());
        assert!(matches!(
            &PromptBlock::of_parts(&[typed])[0],
            PromptBlock::Text { .. }
        ));
    }
}
