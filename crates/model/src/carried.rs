//! Working with provider state (the [`Carried`] of `conversation`): reasoning a model wants
//! to see again between tool calls, the signatures and encrypted items that vouch for it, and
//! extras a server hangs on tool calls; how streamed pieces of it are merged, and how an
//! answer's parts are put back in the order the server sent them.
//!
//! Each wire API keeps its own shape in [`Carried::data`]; the conversation only remembers
//! where it came from ([`Origin`]). A request sends it back only to that same API, server
//! and model: signatures are per model, and another server would refuse or misread fields it
//! never sent. After a model switch the older messages go without it (their visible text and
//! calls stay), which every provider accepts for turns before the current one.

use serde_json::Value;

pub(crate) use crate::conversation::{Carried, Origin};

/// The fields of a `reasoning_details` entry that stream in pieces.
const STREAMED: [&str; 4] = ["text", "summary", "data", "signature"];

/// Merges streamed pieces of an array of objects keyed by their `index` (OpenRouter's
/// `reasoning_details`): the content fields of the same index are joined, others (type,
/// format, id) replaced.
pub(crate) fn merge_indexed(into: &mut Vec<Value>, pieces: &[Value]) {
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

/// One part of an answer rebuilt from its recorded order (see [`in_order`]).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Slot<'a> {
    /// A block kept verbatim (reasoning with its signature or encrypted content).
    Kept(&'a Value),
    /// A piece of the answer's text.
    Text(&'a str),
    /// One of its calls.
    Call(&'a super::ToolCall),
}

/// An answer's parts in the order the server sent them. `layout` lists them as recorded:
/// `{"type": TEXT, "bytes": n}` for the next `n` bytes of `text`, `{"type": CALL, "id": id}`
/// for the call with that id, anything else kept verbatim. Text or calls the layout does not
/// place (it never should) follow at the end, so nothing of the answer is lost.
pub(crate) fn in_order<'a>(
    layout: &'a [Value],
    text: &'a str,
    calls: &'a [super::ToolCall],
) -> Vec<Slot<'a>> {
    let mut slots = Vec::with_capacity(layout.len() + calls.len() + 1);
    let mut rest = text;
    let mut placed = vec![false; calls.len()];
    for entry in layout {
        match entry.get("type").and_then(Value::as_str) {
            Some(TEXT) => {
                let n = entry.get("bytes").and_then(Value::as_u64).unwrap_or(0) as usize;
                let n = if rest.is_char_boundary(n.min(rest.len())) {
                    n.min(rest.len())
                } else {
                    rest.len()
                };
                let (piece, after) = rest.split_at(n);
                if !piece.is_empty() {
                    slots.push(Slot::Text(piece));
                }
                rest = after;
            }
            Some(CALL) => {
                let id = entry.get("id").and_then(Value::as_str);
                if let Some(n) = calls.iter().position(|c| Some(c.id.as_str()) == id)
                    && !placed[n]
                {
                    placed[n] = true;
                    slots.push(Slot::Call(&calls[n]));
                }
            }
            _ => slots.push(Slot::Kept(entry)),
        }
    }
    if !rest.is_empty() {
        slots.push(Slot::Text(rest));
    }
    for (call, placed) in calls.iter().zip(placed) {
        if !placed {
            slots.push(Slot::Call(call));
        }
    }
    slots
}

/// An answer's parts in the order its server sent them, when its state is `origin`'s (its
/// recorded `layout`); else its text, then its calls.
pub(crate) fn answer_slots<'a>(
    text: &'a str,
    calls: &'a [super::ToolCall],
    carried: Option<&'a Carried>,
    origin: &Origin,
) -> Vec<Slot<'a>> {
    let layout = Carried::for_origin(carried, origin)
        .and_then(|d| d.get("layout"))
        .and_then(Value::as_array)
        .map_or(&[][..], Vec::as_slice);
    in_order(layout, text, calls)
}

/// Gives the calls of an answer's layout the ids of `calls`, in order (after the ids were made
/// unique, see [`crate::wire::ids::unique_ids`]).
pub(crate) fn relabel_calls(layout: &mut [Value], calls: &[super::ToolCall]) {
    let entries = layout
        .iter_mut()
        .filter(|e| e.get("type").and_then(Value::as_str) == Some(CALL));
    for (entry, call) in entries.zip(calls) {
        entry["id"] = Value::String(call.id.clone());
    }
}

/// The layout entry for `bytes` bytes of answer text.
pub(crate) fn text_entry(bytes: usize) -> Value {
    serde_json::json!({"type": TEXT, "bytes": bytes})
}

/// The layout entry for the call `id`.
pub(crate) fn call_entry(id: &str) -> Value {
    serde_json::json!({"type": CALL, "id": id})
}

/// Layout entry types that stand for the answer's own text and calls.
const TEXT: &str = "tandem.text";
const CALL: &str = "tandem.call";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conversation::Api;
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
    fn parts_come_back_in_the_order_recorded() {
        let calls = [
            super::super::ToolCall::new("a", "x", "{}"),
            super::super::ToolCall::new("b", "y", "{}"),
        ];
        let think = json!({"type": "thinking", "thinking": "t", "signature": "s"});
        let layout = [
            think.clone(),
            text_entry(5),
            call_entry("a"),
            json!({"type": "thinking", "thinking": "u", "signature": "v"}),
            text_entry(6),
        ];
        let slots = in_order(&layout, "Hello world!", &calls);
        assert_eq!(slots[0], Slot::Kept(&think));
        assert_eq!(slots[1], Slot::Text("Hello"));
        assert_eq!(slots[2], Slot::Call(&calls[0]));
        assert_eq!(slots[4], Slot::Text(" world"));
        assert_eq!(slots[5], Slot::Text("!"), "unplaced text is kept");
        assert_eq!(slots[6], Slot::Call(&calls[1]), "unplaced calls are kept");
        let layout = [text_entry(1)];
        let odd = in_order(&layout, "é!", &[]);
        assert_eq!(
            odd,
            [Slot::Text("é!")],
            "a cut inside a character takes it all"
        );
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
