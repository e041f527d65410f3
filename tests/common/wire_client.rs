//! A client for the mock's Anthropic Messages and OpenAI Responses wires, for tests that
//! drive the mock directly: requests, SSE events, refusals.

use std::time::Duration;

use serde_json::{Value, json};

use super::mock_model::{self, MockModel, Reply, llamacpp};

/// The headers the Messages API requires.
pub(crate) const ANTHROPIC: &[(&str, &str)] =
    &[("anthropic-version", "2023-06-01"), ("x-api-key", "k")];

/// POSTs `body` as JSON to the mock's `path` (`/messages`, `/responses`) with `headers`.
pub(crate) async fn send(
    mock: &MockModel,
    path: &str,
    headers: &[(&str, &str)],
    body: &Value,
) -> reqwest::Response {
    // reqwest is built without a TLS provider of its own; tandem's is ring.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let mut request = reqwest::Client::new()
        .post(format!("{}{path}", mock.base_url))
        .header("content-type", "application/json")
        .body(body.to_string());
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    request.send().await.unwrap()
}

/// The SSE events of a body (whole events only), checking each `event:` line names its
/// data's `type` and that no `[DONE]` is sent.
pub(crate) fn events(text: &str) -> Vec<Value> {
    assert!(!text.contains("[DONE]"), "{text}");
    let whole = &text[..text.rfind("\n\n").map_or(0, |end| end + 2)];
    whole
        .split("\n\n")
        .filter(|block| !block.trim().is_empty())
        .map(|block| {
            let (event, data) = block.split_once('\n').unwrap();
            let data: Value = serde_json::from_str(data.strip_prefix("data: ").unwrap()).unwrap();
            assert_eq!(
                event.strip_prefix("event: "),
                data["type"].as_str(),
                "{block}"
            );
            data
        })
        .collect()
}

/// The events of the 200 answer to `body`.
pub(crate) async fn accepted(
    mock: &MockModel,
    path: &str,
    headers: &[(&str, &str)],
    body: &Value,
) -> Vec<Value> {
    let response = send(mock, path, headers, body).await;
    let status = response.status().as_u16();
    let text = response.text().await.unwrap();
    assert_eq!(status, 200, "{text}");
    events(&text)
}

/// Checks `body` is refused with `status`, error type `kind` and exactly `message`, in the
/// API's error shape.
pub(crate) async fn refused(
    mock: &MockModel,
    path: &str,
    headers: &[(&str, &str)],
    body: &Value,
    (status, kind, message): (u16, &str, &str),
) {
    let response = send(mock, path, headers, body).await;
    assert_eq!(response.status().as_u16(), status);
    let error: Value = serde_json::from_str(&response.text().await.unwrap()).unwrap();
    assert_eq!(error["error"]["type"], kind, "{error}");
    assert_eq!(error["error"]["message"], message, "{error}");
    if path == "/messages" {
        assert_eq!(error["type"], "error");
    } else {
        assert!(error["error"]["code"].is_null() && error["error"].get("param").is_some());
    }
}

/// The events' kinds, space-separated, runs of one kind once: a block's or item's start as
/// `start:TYPE`/`added:TYPE`, an Anthropic delta by its delta type, `response.` left out.
pub(crate) fn shape(events: &[Value]) -> String {
    let mut labels: Vec<String> = events
        .iter()
        .map(|e| {
            let kind = e["type"].as_str().unwrap();
            match kind {
                "content_block_start" => format!("start:{}", e["content_block"]["type"]),
                "content_block_delta" => e["delta"]["type"].as_str().unwrap().to_string(),
                "response.output_item.added" => format!("added:{}", e["item"]["type"]),
                _ => kind.trim_start_matches("response.").to_string(),
            }
            .replace('"', "")
        })
        .collect();
    labels.dedup();
    labels.join(" ")
}

/// The joined `field` (a JSON pointer) of the events of type `kind`.
pub(crate) fn join(events: &[Value], kind: &str, field: &str) -> String {
    events
        .iter()
        .filter(|e| e["type"] == kind)
        .filter_map(|e| e.pointer(field).and_then(Value::as_str))
        .collect()
}

/// The text an answer streamed, on either API.
pub(crate) fn answer_text(events: &[Value]) -> String {
    join(events, "content_block_delta", "/delta/text")
        + &join(events, "response.output_text.delta", "/delta")
}

/// Reads `response` until its body so far satisfies `done` (10 s at most).
pub(crate) async fn read_until(
    response: &mut reqwest::Response,
    body: &mut String,
    done: impl Fn(&str) -> bool,
) {
    while !done(body) {
        let chunk = tokio::time::timeout(Duration::from_secs(10), response.chunk()).await;
        let chunk = chunk.unwrap().unwrap().unwrap();
        body.push_str(&String::from_utf8_lossy(&chunk));
    }
}

/// The reasoning every [`round`] streams.
pub(crate) const THOUGHT: &str = "Let me think.";

/// [`THOUGHT`] in two pieces (both field names), a text, two tool calls `call_1` (one token
/// per chunk, as llama.cpp sends them) and `call_2` (whole), `tool_calls`, usage 300/40 with
/// 100 cached.
pub(crate) fn round() -> Reply {
    let mut chunks = vec![
        mock_model::reasoning_content("Let me "),
        mock_model::reasoning("think."),
        mock_model::text("Reading."),
    ];
    chunks.extend(llamacpp::tool_call(
        "call_1",
        "read_file",
        r#"{"path":"a.txt"}"#,
    ));
    let args = r#"{"path":"b.txt"}"#;
    chunks.push(mock_model::tool_call(1, "call_2", "read_file", args));
    chunks.push(mock_model::finish("tool_calls"));
    chunks.push(llamacpp::usage(300, 40, 100));
    Reply::chunks(chunks)
}

/// A Messages API request body with these messages.
pub(crate) fn messages(list: Vec<Value>) -> Value {
    json!({"model": "claude-mock", "max_tokens": 2048, "messages": list})
}
