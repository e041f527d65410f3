//! What some clients write that the ACP SDK would refuse, put right before the SDK reads it
//! (the relay applies it to every incoming request, relay.rs).
//!
//! `initialize` with `"protocolVersion": "1"` (a string, as some hand-written clients send
//! it) is negotiated like the number: the SDK's version type takes only numbers, and would
//! answer "Invalid params" to a client that meant version 1. Only a whole number in a string
//! counts; anything else (`"abc"`, `"1.0"`, `-1`) is left for the SDK to refuse.

use agent_client_protocol::{RawJsonRpcParams, RawJsonRpcRequest};
use serde_json::Value;

/// Rewrites `request` in place when it is an `initialize` whose `protocolVersion` is a number
/// written as a string; says whether it did.
pub(super) fn normalise(request: &mut RawJsonRpcRequest) -> bool {
    if &*request.method != "initialize" {
        return false;
    }
    let Some(RawJsonRpcParams::Object(params)) = request.params.as_mut() else {
        return false;
    };
    let Some(version) = params.get_mut("protocolVersion") else {
        return false;
    };
    let Some(number) = version.as_str().and_then(whole_number) else {
        return false;
    };
    *version = Value::from(number);
    true
}

/// `text` as a protocol version number: decimal digits only (surrounding spaces allowed),
/// within the range the protocol's version type holds.
fn whole_number(text: &str) -> Option<u16> {
    let text = text.trim();
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::normalise;
    use agent_client_protocol::{RawJsonRpcMessage, RawJsonRpcParams, RawJsonRpcRequest};
    use serde_json::json;

    fn request(message: serde_json::Value) -> RawJsonRpcRequest {
        match serde_json::from_value(message).unwrap() {
            RawJsonRpcMessage::Request(request) => request,
            other => panic!("not a request: {other:?}"),
        }
    }

    fn initialize(version: serde_json::Value) -> RawJsonRpcRequest {
        request(json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
               "params": {"protocolVersion": version, "clientCapabilities": {}}}))
    }

    fn version(request: &RawJsonRpcRequest) -> serde_json::Value {
        match &request.params {
            Some(RawJsonRpcParams::Object(params)) => params["protocolVersion"].clone(),
            _ => serde_json::Value::Null,
        }
    }

    #[test]
    fn a_version_number_in_a_string_becomes_the_number() {
        let mut message = initialize(json!("1"));
        assert!(normalise(&mut message));
        assert_eq!(version(&message), json!(1));
        let mut message = initialize(json!(" 2 "));
        assert!(normalise(&mut message));
        assert_eq!(version(&message), json!(2));
    }

    #[test]
    fn anything_else_is_left_alone() {
        for given in [
            json!(1),
            json!("abc"),
            json!("-1"),
            json!("1.0"),
            json!(""),
            json!("99999999"),
            json!(null),
        ] {
            let mut message = initialize(given.clone());
            assert!(!normalise(&mut message), "{given}");
            assert_eq!(version(&message), given);
        }
        let mut other = request(json!({"jsonrpc": "2.0", "id": 1, "method": "session/new",
                               "params": {"protocolVersion": "1"}}));
        assert!(!normalise(&mut other));
    }
}
