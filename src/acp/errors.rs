//! Core errors to JSON-RPC errors, in one place, and the shape every error answer leaves in.
//!
//! Every error tandem answers carries a human-readable `data.details`: some clients (toad)
//! show only that field, and without it the user reads "tandem returned an error". Errors come
//! from tandem's handlers and from the ACP SDK (unknown methods, bad params), so they are
//! completed by [`finish`], which the relay applies to every outgoing frame (relay.rs): typed,
//! before the frame is serialized. The same place bounds what an error echoes: a 1 MB bad line
//! gets a short error back, not itself. (Errors about lines that never became messages are the
//! transport's, which builds their details itself.)
//!
//! A `_meta` member of the data (tandem's classification of a model failure, see
//! [`model_error`]) is moved onto the error object itself: Zed reads a `-32603`'s data only
//! when it is exactly `{"details": …}` ("deny_unknown_fields" on its struct), so nothing else
//! may sit beside the details there.

use agent_client_protocol::schema::MaybeUndefined;
use agent_client_protocol::v1::schema as acp;
use agent_client_protocol::{
    Error, RawJsonRpcError, RawJsonRpcMessage, RawJsonRpcResponse, TransportFrame,
};
use serde_json::{Value, json};

use crate::model::ModelError;
use crate::session::SessionError;

/// The JSON-RPC error for a failed session request.
pub(crate) fn session_error(error: SessionError) -> Error {
    match error {
        SessionError::NotFound(id) => {
            let e: Error = acp::Error::session_not_found(id.clone()).into();
            Error::new(e.code, format!("unknown session `{id}`")).data(e.data)
        }
        SessionError::Idle(_)
        | SessionError::Subagent { .. }
        | SessionError::NotSteerable
        | SessionError::NotDelivered
        | SessionError::SteerRefused(_)
        | SessionError::InUse(_) => Error::new(Error::invalid_request().code, error.to_string()),
        SessionError::InvalidParams(message) => invalid_params(message),
        SessionError::Option(e) => invalid_params(e.to_string()),
        SessionError::Model(e) => model_error(&e),
        SessionError::Internal(message) => Error::new(Error::internal_error().code, message),
        SessionError::Store(e) => Error::new(Error::internal_error().code, e.to_string()),
    }
}

/// `-32602` with a message that says what is wrong.
pub(crate) fn invalid_params(message: impl Into<String>) -> Error {
    Error::new(Error::invalid_params().code, message)
}

/// A model failure: `-32000` when credentials must be fixed, `-32603` otherwise. What kind
/// of failure it was (`class`, `attempts`, and `status` and `retryAfterSecs` when the server
/// gave them) goes in `_meta.tandem`, for scripts; `data` keeps only what clients show (its
/// `details`, added on the way out): Zed shows a `-32603`'s details only when `data` is
/// exactly `{"details": …}` (a struct that denies unknown fields), and the raw error
/// otherwise. The SDK's error type has no `_meta` of its own, so it travels as `data._meta`
/// and [`finish`] lifts it onto the error object.
pub(crate) fn model_error(e: &ModelError) -> Error {
    let code = if e.class.is_auth() {
        Error::auth_required().code
    } else {
        Error::internal_error().code
    };
    let mut about = json!({ "class": e.class.as_str(), "attempts": e.attempts });
    if let Some(status) = e.status {
        about["status"] = json!(status);
    }
    if let Some(after) = e.retry_after {
        about["retryAfterSecs"] = json!(after.as_secs_f64());
    }
    Error::new(code, e.message.clone()).data(json!({ "_meta": { "tandem": about } }))
}

/// `error` with the login methods in its `data.authMethods` when it is "authentication
/// required" (`-32000`), so an editor can offer them right where the request failed.
pub(crate) fn with_auth_methods(error: Error, methods: &[acp::AuthMethod]) -> Error {
    if error.code != Error::auth_required().code || methods.is_empty() {
        return error;
    }
    let mut data = error.data.clone().unwrap_or_else(|| json!({}));
    if let Some(object) = data.as_object_mut() {
        object.insert("authMethods".into(), json!(methods));
    }
    error.data(data)
}

/// Longest string an error carries whole; longer ones keep their start and their size.
const MAX_ECHO: usize = 400;

/// Completes `frame` when it is an error answer: `data.details` added when missing (the
/// data's other fields stay; data that was a string becomes the details), `data._meta` moved
/// onto the error object, and every long string cut to [`MAX_ECHO`] bytes with its size. Any
/// other frame is left as it is.
pub(crate) fn finish(frame: &mut TransportFrame) {
    if let TransportFrame::Single(RawJsonRpcMessage::Response(RawJsonRpcResponse::Error {
        error,
        ..
    })) = frame
    {
        complete(error);
    }
}

fn complete(error: &mut RawJsonRpcError) {
    let text = error.message.clone();
    let data = std::mem::take(&mut error.data);
    let data = match data {
        MaybeUndefined::Value(Value::Object(mut data)) => {
            if let Some(meta) = data.remove("_meta") {
                error.extra.insert("_meta".into(), meta);
            }
            if !data.get("details").is_some_and(Value::is_string) {
                data.insert("details".into(), Value::String(sentence(&text)));
            }
            Value::Object(data)
        }
        MaybeUndefined::Value(Value::String(more)) => {
            let details = format!("{}: {more}", text.trim_end_matches('.'));
            json!({ "details": sentence(&details) })
        }
        MaybeUndefined::Value(other) if !other.is_null() => {
            json!({ "details": sentence(&text), "value": other })
        }
        _ => json!({ "details": sentence(&text) }),
    };
    error.data = MaybeUndefined::Value(data);
    bound_str(&mut error.message);
    if let MaybeUndefined::Value(data) = &mut error.data {
        bound(data);
    }
    error.extra.values_mut().for_each(bound);
}

/// Cuts every string in `value` longer than [`MAX_ECHO`] bytes, saying how long it was.
fn bound(value: &mut Value) {
    match value {
        Value::String(text) => bound_str(text),
        Value::Array(items) => items.iter_mut().for_each(bound),
        Value::Object(fields) => fields.values_mut().for_each(bound),
        _ => {}
    }
}

fn bound_str(text: &mut String) {
    if text.len() <= MAX_ECHO {
        return;
    }
    let mut end = MAX_ECHO;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    *text = format!("{}… [{} bytes in all]", &text[..end], text.len());
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

    fn finished(line: &str) -> Value {
        let message: RawJsonRpcMessage = serde_json::from_str(line).unwrap();
        let mut frame = TransportFrame::Single(message);
        finish(&mut frame);
        serde_json::from_str(&frame.to_json().unwrap()).unwrap()
    }

    fn details(line: &str) -> Value {
        finished(line)["error"]["data"].clone()
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
        let out = finished(
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"the model server failed","data":{"_meta":{"tandem":{"class":"server_error","attempts":4}}}}}"#,
        );
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
        let out = finished(&line).to_string();
        assert!(out.len() < 2_000, "{} bytes", out.len());
        assert!(out.contains("bytes in all]"), "{out}");
    }

    #[test]
    fn other_frames_and_given_details_pass_unchanged() {
        for line in [
            r#"{"jsonrpc":"2.0","method":"session/update","params":{"error":"x"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{"stopReason":"end_turn"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m","data":{"details":"Mine."}}}"#,
        ] {
            assert_eq!(finished(line), serde_json::from_str::<Value>(line).unwrap());
        }
    }
}
