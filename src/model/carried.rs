//! Provider state that must go back to the server that sent it: reasoning a model wants to
//! see again between tool calls, the signatures and encrypted items that vouch for it, and
//! extras a server hangs on tool calls.
//!
//! Each wire API keeps its own shape in [`Carried::data`]; the conversation only remembers
//! where it came from ([`Origin`]). A request sends it back only to that same API, server
//! and model: signatures are per model, and another server would refuse or misread fields it
//! never sent. After a model switch the older messages go without it (their visible text and
//! calls stay), which every provider accepts for turns before the current one.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::config::Api;

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

/// The fields of a `reasoning_details` entry that stream in pieces.
const STREAMED: [&str; 4] = ["text", "summary", "data", "signature"];

/// Merges streamed pieces of an array of objects keyed by their `index` (OpenRouter's
/// `reasoning_details`): the content fields of the same index are joined, others (type,
/// format, id) replaced.
pub fn merge_indexed(into: &mut Vec<Value>, pieces: &[Value]) {
    for piece in pieces {
        let Some(fields) = piece.as_object() else {
            continue;
        };
        let index = fields.get("index").and_then(Value::as_u64);
        let slot = index.and_then(|i| {
            into.iter_mut()
                .find(|e| e.get("index").and_then(Value::as_u64) == Some(i))
        });
        let Some(Value::Object(existing)) = slot else {
            into.push(piece.clone());
            continue;
        };
        for (key, value) in fields {
            match (existing.get_mut(key), value) {
                (Some(Value::String(old)), Value::String(more))
                    if STREAMED.contains(&key.as_str()) =>
                {
                    old.push_str(more)
                }
                _ => {
                    existing.insert(key.clone(), value.clone());
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn state_goes_back_only_to_its_origin() {
        let origin = Origin {
            api: Api::ChatCompletions,
            server: "http://a/v1".into(),
            model: "m".into(),
        };
        let carried = Carried {
            origin: origin.clone(),
            data: json!({"x": 1}),
        };
        assert_eq!(
            Carried::for_origin(Some(&carried), &origin),
            Some(&json!({"x": 1}))
        );
        let other = Origin {
            model: "n".into(),
            ..origin
        };
        assert_eq!(Carried::for_origin(Some(&carried), &other), None);
    }

    #[test]
    fn indexed_pieces_join_their_text() {
        let mut details = Vec::new();
        merge_indexed(
            &mut details,
            &[json!({"type": "reasoning.text", "index": 0, "format": "f", "text": "Let "})],
        );
        merge_indexed(
            &mut details,
            &[
                json!({"type": "reasoning.text", "index": 0, "format": "f", "text": "me", "signature": "s1"}),
            ],
        );
        merge_indexed(
            &mut details,
            &[json!({"type": "reasoning.encrypted", "index": 1, "data": "xyz"})],
        );
        assert_eq!(
            details,
            [
                json!({"type": "reasoning.text", "index": 0, "format": "f", "text": "Let me", "signature": "s1"}),
                json!({"type": "reasoning.encrypted", "index": 1, "data": "xyz"})
            ]
        );
    }
}
