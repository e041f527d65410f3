//! Reading an answer for the calls written in it, by the forms and the rule in the
//! [module's face](super).

use serde_json::{Map, Value};

use crate::ToolCall;

/// The markers that open a marked form.
pub(super) const MARKERS: [&str; 3] = ["<tool_call>", "[TOOL_CALLS]", "<|python_tag|>"];

/// An answer split into the text the user sees and the calls it held.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// The answer before the calls (may be empty).
    pub preamble: String,
    /// The calls, in the order written, with generated ids.
    pub calls: Vec<ToolCall>,
    /// Where in the answer the calls start (the byte offset of the marker; 0 for the
    /// unmarked form, which is the whole answer).
    pub(crate) from: usize,
}

/// The calls `text` holds by the rule above, given the tools that were offered.
pub(crate) fn extract(text: &str, offered: &[String]) -> Option<Found> {
    let calls = match first_marker(text) {
        Some((at, marker)) => {
            let calls = marked(&text[at..], marker)?;
            return Some(Found {
                preamble: text[..at].trim_end().to_string(),
                calls: numbered(calls),
                from: at,
            });
        }
        None => unmarked(text.trim(), offered)?,
    };
    Some(Found {
        preamble: String::new(),
        calls: numbered(calls),
        from: 0,
    })
}

/// Gives the calls ids, in order.
fn numbered(calls: Vec<(String, String)>) -> Vec<ToolCall> {
    calls
        .into_iter()
        .enumerate()
        .map(|(n, (name, arguments))| ToolCall::new(format!("call_{n}"), name, arguments))
        .collect()
}

/// Where the first marker outside code starts, and which it is.
fn first_marker(text: &str) -> Option<(usize, &'static str)> {
    first_marker_from(text, 0)
}

/// [`first_marker`], looking only at markers that start at `from` or later (what comes
/// before is still read for code fences).
pub(super) fn first_marker_from(text: &str, mut from: usize) -> Option<(usize, &'static str)> {
    loop {
        let (at, marker) = MARKERS
            .iter()
            .filter_map(|m| text[from..].find(m).map(|at| (from + at, *m)))
            .min_by_key(|(at, _)| *at)?;
        let before = &text[..at];
        let in_fence = before.matches("```").count() % 2 == 1;
        if !in_fence && !before.ends_with('`') {
            return Some((at, marker));
        }
        from = at + marker.len();
    }
}

/// The calls of a marked form that starts `text` and must run to its end.
fn marked(text: &str, marker: &str) -> Option<Vec<(String, String)>> {
    match marker {
        "<tool_call>" => hermes(text),
        "[TOOL_CALLS]" => mistral(text),
        _ => python_tag(text),
    }
}

/// `<tool_call>{…}</tool_call>` blocks; the last may lack its closing tag (a stop token).
fn hermes(mut rest: &str) -> Option<Vec<(String, String)>> {
    let mut calls = Vec::new();
    loop {
        rest = rest.trim_start();
        if rest.is_empty() {
            break;
        }
        let body = rest.strip_prefix("<tool_call>")?;
        let (inner, after) = match body.find("</tool_call>") {
            Some(end) => (&body[..end], &body[end + "</tool_call>".len()..]),
            None => (body, ""),
        };
        calls.push(call_of(&parse_json(inner.trim())?, None)?);
        rest = after;
    }
    (!calls.is_empty()).then_some(calls)
}

/// `[TOOL_CALLS][{…}, …]` or `[TOOL_CALLS]name[ARGS]{…}`, possibly repeated.
fn mistral(mut rest: &str) -> Option<Vec<(String, String)>> {
    let mut calls = Vec::new();
    loop {
        rest = rest.trim_start();
        if rest.is_empty() {
            break;
        }
        let body = rest.strip_prefix("[TOOL_CALLS]")?.trim_start();
        if body.starts_with('[') || body.starts_with('{') {
            let (value, after) = leading_json(body)?;
            calls.extend(calls_of(&value, None)?);
            rest = after;
        } else {
            let (name, args) = body.split_once("[ARGS]")?;
            let (value, after) = leading_json(args.trim_start())?;
            calls.push((name.trim().to_string(), arguments_text(&value)?));
            rest = after;
        }
    }
    (!calls.is_empty()).then_some(calls)
}

/// `<|python_tag|>{…}; {…}`, up to an end-of-message token or the end.
fn python_tag(text: &str) -> Option<Vec<(String, String)>> {
    let mut rest = text.strip_prefix("<|python_tag|>")?;
    for end in ["<|eom_id|>", "<|eot_id|>"] {
        if let Some(at) = rest.find(end) {
            if !rest[at + end.len()..].trim().is_empty() {
                return None;
            }
            rest = &rest[..at];
        }
    }
    let mut calls = Vec::new();
    loop {
        rest = rest.trim_start().trim_start_matches(';').trim_start();
        if rest.is_empty() {
            break;
        }
        let (value, after) = leading_json(rest)?;
        calls.push(call_of(&value, None)?);
        rest = after;
    }
    (!calls.is_empty()).then_some(calls)
}

/// A whole answer that is one JSON object or array naming offered tools, bare or fenced.
fn unmarked(text: &str, offered: &[String]) -> Option<Vec<(String, String)>> {
    let json = match text.strip_prefix("```") {
        Some(fenced) => {
            let (info, body) = fenced.split_once('\n')?;
            if !matches!(info.trim(), "" | "json" | "JSON") {
                return None;
            }
            body.trim_end().strip_suffix("```")?
        }
        None => text,
    };
    let json = json.trim();
    if !(json.starts_with('{') || json.starts_with('[')) {
        return None;
    }
    calls_of(&parse_json(json)?, Some(offered))
}

/// Parses all of `text` as one JSON value.
fn parse_json(text: &str) -> Option<Value> {
    serde_json::from_str(text).ok()
}

/// Parses the JSON value `text` starts with; returns it and what follows.
fn leading_json(text: &str) -> Option<(Value, &str)> {
    let mut values = serde_json::Deserializer::from_str(text).into_iter::<Value>();
    let value = values.next()?.ok()?;
    Some((value, &text[values.byte_offset()..]))
}

/// The calls of an object or an array of objects; with `offered`, each must name one.
fn calls_of(value: &Value, offered: Option<&[String]>) -> Option<Vec<(String, String)>> {
    match value {
        Value::Array(items) if !items.is_empty() => {
            items.iter().map(|item| call_of(item, offered)).collect()
        }
        Value::Object(_) => Some(vec![call_of(value, offered)?]),
        _ => None,
    }
}

/// One call from `{"name", "arguments" | "parameters"}` or `{"function": {…}}`.
fn call_of(value: &Value, offered: Option<&[String]>) -> Option<(String, String)> {
    let outer = value.as_object()?;
    let wrapped = outer.get("function").and_then(Value::as_object);
    let object = wrapped.unwrap_or(outer);
    let name = object.get("name")?.as_str()?.trim();
    if name.is_empty() || offered.is_some_and(|names| !names.iter().any(|n| n == name)) {
        return None;
    }
    if offered.is_some() {
        let outer_keys: &[&str] = match wrapped {
            Some(_) => &WRAPPER_KEYS,
            None => &CALL_KEYS,
        };
        if !only_keys(outer, outer_keys) || !only_keys(object, &CALL_KEYS) {
            return None;
        }
    }
    let arguments = match object.get("arguments").or_else(|| object.get("parameters")) {
        Some(args) => arguments_text(args)?,
        None => "{}".to_string(),
    };
    Some((name.to_string(), arguments))
}

/// The keys an unmarked call may have (so a JSON answer that happens to carry a `name` is
/// not taken for a call).
pub(super) const CALL_KEYS: [&str; 5] = ["name", "arguments", "parameters", "type", "id"];

/// The keys of an unmarked call's wrapper, `{"type": "function", "function": {…}}`.
pub(super) const WRAPPER_KEYS: [&str; 3] = ["type", "id", "function"];

/// Whether `object` has no key but `keys`.
fn only_keys(object: &Map<String, Value>, keys: &[&str]) -> bool {
    object.keys().all(|k| keys.contains(&k.as_str()))
}

/// The arguments as JSON object text: an object, or a string holding one.
fn arguments_text(args: &Value) -> Option<String> {
    match args {
        Value::Object(_) => Some(args.to_string()),
        Value::String(text) => match parse_json(text)? {
            object @ Value::Object(_) => Some(object.to_string()),
            _ => None,
        },
        Value::Null => Some("{}".to_string()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn offered() -> Vec<String> {
        vec!["read_file".into(), "run_command".into()]
    }

    fn names(found: &Found) -> Vec<(&str, &str)> {
        found
            .calls
            .iter()
            .map(|c| (c.name.as_str(), c.arguments.as_str()))
            .collect()
    }

    #[test]
    fn hermes_blocks_after_a_preamble_are_calls() {
        let text = "I'll look.\n<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a\"}}\n</tool_call>\n<tool_call>{\"name\":\"run_command\",\"arguments\":\"{\\\"command\\\":\\\"ls\\\"}\"}</tool_call>\n";
        let found = extract(text, &offered()).unwrap();
        assert_eq!(found.preamble, "I'll look.");
        assert_eq!(
            names(&found),
            [
                ("read_file", r#"{"path":"a"}"#),
                ("run_command", r#"{"command":"ls"}"#)
            ]
        );
        assert_eq!(found.calls[1].id, "call_1");
    }

    #[test]
    fn an_unclosed_last_block_is_a_call() {
        let text = "<tool_call>{\"name\": \"read_file\", \"arguments\": {\"path\": \"a\"}}";
        assert_eq!(extract(text, &offered()).unwrap().calls.len(), 1);
    }

    #[test]
    fn mistral_both_forms() {
        let text = "[TOOL_CALLS][{\"name\": \"read_file\", \"arguments\": {\"path\": \"a\"}}]";
        assert_eq!(
            names(&extract(text, &offered()).unwrap()),
            [("read_file", r#"{"path":"a"}"#)]
        );
        let text = "[TOOL_CALLS]read_file[ARGS]{\"path\": \"b\"}[TOOL_CALLS]run_command[ARGS]{\"command\": \"ls\"}";
        assert_eq!(
            names(&extract(text, &offered()).unwrap()),
            [
                ("read_file", r#"{"path":"b"}"#),
                ("run_command", r#"{"command":"ls"}"#)
            ]
        );
    }

    #[test]
    fn llama_python_tag_and_bare_json() {
        let text = "<|python_tag|>{\"name\": \"read_file\", \"parameters\": {\"path\": \"a\"}}; {\"name\": \"run_command\", \"parameters\": {\"command\": \"ls\"}}<|eom_id|>";
        assert_eq!(extract(text, &offered()).unwrap().calls.len(), 2);
        let text = "  {\"name\": \"read_file\", \"parameters\": {\"path\": \"a\"}}\n";
        assert_eq!(
            names(&extract(text, &offered()).unwrap()),
            [("read_file", r#"{"path":"a"}"#)]
        );
        let text = "{\"type\": \"function\", \"function\": {\"name\": \"read_file\", \"arguments\": {\"path\": \"a\"}}}";
        assert_eq!(extract(text, &offered()).unwrap().calls.len(), 1);
    }

    #[test]
    fn a_call_after_a_quoted_one_is_found() {
        let text = "Example:\n```\n<tool_call>{}</tool_call>\n```\nNow:\n<tool_call>{\"name\": \"read_file\", \"arguments\": {}}</tool_call>";
        let found = extract(text, &offered()).unwrap();
        assert!(found.preamble.ends_with("Now:"));
        assert_eq!(found.calls.len(), 1);
    }

    #[test]
    fn a_fenced_object_naming_an_offered_tool() {
        let text = "```json\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a\"}}\n```";
        assert_eq!(extract(text, &offered()).unwrap().calls.len(), 1);
    }

    #[test]
    fn quoted_calls_are_left_alone() {
        for text in [
            // Text after the block: an explanation, not a call.
            "Write <tool_call>{\"name\": \"read_file\", \"arguments\": {}}</tool_call> to call it.",
            // Inside a code fence or backticks.
            "Like this:\n```\n<tool_call>{\"name\": \"read_file\", \"arguments\": {}}</tool_call>\n```",
            "The tag is `<tool_call>` and it wraps JSON.",
            "```\n<tool_call>{}</tool_call>\n```\nthen <tool_call>{\"name\": \"x\"}</tool_call> and more",
            // JSON that is not the whole answer, or names no offered tool.
            "Call it so: {\"name\": \"read_file\", \"arguments\": {}}",
            "```json\n{\"name\": \"read_file\", \"arguments\": {}}\n```\nThat reads a file.",
            "{\"name\": \"delete_everything\", \"arguments\": {}}",
            "{\"name\": \"read_file\", \"arguments\": {}, \"version\": 2}",
            // A wrapper with more than a call's wrapping.
            "{\"user\": \"a\", \"function\": {\"name\": \"read_file\", \"arguments\": {}}}",
            "```rust\n{\"name\": \"read_file\"}\n```",
            // Not JSON inside the block.
            "<tool_call>read_file please</tool_call>",
        ] {
            assert_eq!(extract(text, &offered()), None, "{text}");
        }
    }
}
