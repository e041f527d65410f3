//! Every error tandem answers carries a human-readable `data.details`: some clients (toad)
//! show only that field, and without it the user reads "tandem returned an error". Errors
//! come from tandem's handlers, from the ACP SDK (unknown methods, bad params) and from the
//! transport itself, so they are completed here, on the way out, whoever made them. The same
//! place bounds what an error echoes: a 1 MB bad line gets a short error back, not itself.
//!
//! A `_meta` member of the data (tandem's classification of a model failure, see
//! `acp/errors.rs`) is moved onto the error object itself: Zed reads a `-32603`'s data only
//! when it is exactly `{"details": …}` ("deny_unknown_fields" on its struct), so nothing else
//! may sit beside the details there.

use serde_json::{Value, json};

/// Longest string an error carries whole; longer ones keep their start and their size.
const MAX_ECHO: usize = 400;

/// `line` with `data.details` added to its error when it is an error answer without one,
/// and every long string in the error cut to [`MAX_ECHO`] bytes with its size; any other line
/// unchanged. The data's other fields stay; data that was a string becomes the details.
pub(super) fn with_details(line: String) -> String {
    // Notifications and requests (every streamed chunk) are never errors; the SDK writes
    // their `method` right after `jsonrpc`, so they pass without parsing.
    if line.starts_with(r#"{"jsonrpc":"2.0","method":"#) || !line.contains(r#""error":"#) {
        return line;
    }
    let Ok(mut message) = serde_json::from_str::<Value>(&line) else {
        return line;
    };
    let Some(error) = message.get_mut("error").and_then(Value::as_object_mut) else {
        return line;
    };
    let text = error
        .get("message")
        .and_then(Value::as_str)
        .unwrap_or("error")
        .to_string();
    let meta = error
        .get_mut("data")
        .and_then(Value::as_object_mut)
        .and_then(|data| data.remove("_meta"));
    let moved = meta.is_some();
    if let Some(meta) = meta {
        error.insert("_meta".into(), meta);
    }
    match error.get_mut("data") {
        Some(Value::Object(data)) => {
            if !data.get("details").is_some_and(Value::is_string) {
                data.insert("details".into(), Value::String(sentence(&text)));
            } else if !moved && line.len() <= 2 * MAX_ECHO {
                return line;
            }
        }
        Some(Value::String(more)) => {
            let details = format!("{}: {more}", text.trim_end_matches('.'));
            error.insert("data".into(), json!({ "details": sentence(&details) }));
        }
        Some(other) if !other.is_null() => {
            let kept = other.take();
            error.insert(
                "data".into(),
                json!({ "details": sentence(&text), "value": kept }),
            );
        }
        _ => {
            error.insert("data".into(), json!({ "details": sentence(&text) }));
        }
    }
    if let Some(error) = message.get_mut("error") {
        bound(error);
    }
    message.to_string()
}

/// Cuts every string in `value` longer than [`MAX_ECHO`] bytes, saying how long it was.
fn bound(value: &mut Value) {
    match value {
        Value::String(text) if text.len() > MAX_ECHO => {
            let mut end = MAX_ECHO;
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            *text = format!("{}… [{} bytes in all]", &text[..end], text.len());
        }
        Value::Array(items) => items.iter_mut().for_each(bound),
        Value::Object(fields) => fields.values_mut().for_each(bound),
        _ => {}
    }
}

/// `text` as a sentence: a capital first letter and a closing full stop.
fn sentence(text: &str) -> String {
    let text = text.trim();
    let mut chars = text.chars();
    let mut out = match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect::<String>(),
        None => return "Error.".into(),
    };
    if !out.ends_with(['.', '!', '?']) {
        out.push('.');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn details(line: &str) -> Value {
        let out: Value = serde_json::from_str(&with_details(line.to_string())).unwrap();
        out["error"]["data"].clone()
    }

    #[test]
    fn every_kind_of_error_data_gets_details_and_keeps_the_rest() {
        let data = details(
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"the model server failed","data":{"class":"server_error"}}}"#,
        );
        assert_eq!(data["class"], "server_error");
        assert_eq!(data["details"], "The model server failed.");
        let data = details(
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found"}}"#,
        );
        assert_eq!(data["details"], "Method not found.");
        let data = details(
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error","data":"line 1 is not UTF-8"}}"#,
        );
        assert_eq!(data["details"], "Parse error: line 1 is not UTF-8.");
        let data = details(
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"bad","data":[1]}}"#,
        );
        assert_eq!(
            (data["details"].as_str(), &data["value"]),
            (Some("Bad."), &json!([1]))
        );
    }

    #[test]
    fn data_meta_moves_onto_the_error_leaving_details_alone() {
        let line = r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"the model server failed","data":{"_meta":{"tandem":{"class":"server_error","attempts":4}}}}}"#;
        let out: Value = serde_json::from_str(&with_details(line.to_string())).unwrap();
        assert_eq!(
            out["error"]["data"],
            json!({"details": "The model server failed."})
        );
        assert_eq!(out["error"]["_meta"]["tandem"]["class"], "server_error");
        assert_eq!(out["error"]["_meta"]["tandem"]["attempts"], 4);
    }

    #[test]
    fn an_error_never_echoes_a_long_input_whole() {
        let junk = "x".repeat(1_000_000);
        let line = json!({"jsonrpc": "2.0", "id": null,
            "error": {"code": -32700, "message": "Parse error", "data": junk}})
        .to_string();
        let out = with_details(line);
        assert!(out.len() < 2_000, "{} bytes", out.len());
        assert!(out.contains("bytes in all]"), "{out}");
    }

    #[test]
    fn other_lines_and_given_details_pass_unchanged() {
        for line in [
            r#"{"jsonrpc":"2.0","method":"session/update","params":{"error":"x"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{"stopReason":"end_turn"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m","data":{"details":"Mine."}}}"#,
        ] {
            assert_eq!(with_details(line.to_string()), line);
        }
    }
}
