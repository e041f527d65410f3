//! Bad input from the editor gets the right JSON-RPC error; the process and the session stay up.

use serde_json::json;

use crate::common::{
    Agent, MockModel, Reply, Workspace, assert_error, joined, response, session_with,
};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_json_is_a_parse_error_and_nothing_is_lost() {
    let (mock, _ws, mut agent, session) = session_with(vec![Reply::text(&["still here"])]).await;
    agent
        .send_line("{\"jsonrpc\": \"2.0\", \"id\": 99, \"method\": ")
        .await;
    // The request is cut off, but its id is there: the error answers it, so the editor's
    // request does not wait forever.
    let error = agent.next_message().await;
    assert_eq!(error["error"]["code"], -32700);
    assert_eq!(error["id"], 99);
    agent.send_line("not json at all").await;
    let error = agent.next_message().await;
    assert_eq!(error["error"]["code"], -32700);
    assert_eq!(error["id"], serde_json::Value::Null, "no id to be sure of");
    // A lone surrogate makes the line invalid JSON; its id is still answered.
    agent
        .send_line(&format!(
            r#"{{"jsonrpc":"2.0","id":98,"method":"session/prompt","params":{{"sessionId":"{session}","prompt":[{{"type":"text","text":"\ud800"}}]}}}}"#
        ))
        .await;
    let error = agent.next_message().await;
    assert_eq!(
        (error["id"].clone(), error["error"]["code"].clone()),
        (json!(98), json!(-32700)),
        "{error}"
    );
    // A megabyte of garbage gets a short error, not itself echoed back.
    agent
        .send_line(&format!("{{garbage {}", "z".repeat(1_000_000)))
        .await;
    let error = agent.next_message().await;
    assert_eq!(error["error"]["code"], -32700);
    let size = error.to_string().len();
    assert!(
        size < 4_000,
        "a {size}-byte error: {}",
        &error.to_string()[..500]
    );
    let (response, updates) = agent.prompt(&session, "ok?").await;
    assert_eq!(response["result"]["stopReason"], "end_turn");
    assert_eq!(joined(&updates, "agent_message_chunk"), "still here");
    assert_eq!(mock.requests().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oversized_lines_and_invalid_utf8_get_errors_and_the_session_goes_on() {
    let mock = MockModel::start(vec![Reply::text(&["still here"])]).await;
    let ws = Workspace::new();
    let mut env = ws.env(&mock);
    env.push(("TANDEM_MAX_MESSAGE_BYTES".into(), "4096".into()));
    let mut agent = Agent::spawn(&env, &[]);
    let session = agent.open_session(&ws.project()).await;

    // A prompt of 5 MB, far over the limit: refused without an id, nothing reaches the model.
    let huge = json!({"jsonrpc": "2.0", "id": 900, "method": "session/prompt",
        "params": {"sessionId": session, "prompt": [{"type": "text", "text": "x".repeat(5_000_000)}]}});
    agent.send_line(&huge.to_string()).await;
    let error = agent.next_message().await;
    assert_eq!(error["error"]["code"], -32600);
    assert_eq!(error["id"], 900, "the id is read from the line's head");
    let data = error["error"]["data"]["details"].as_str().unwrap();
    assert!(data.contains("over the limit of 4096"), "{data}");

    // Invalid UTF-8 inside an otherwise fine request.
    let mut bad =
        br#"{"jsonrpc":"2.0","id":901,"method":"session/list","params":{"cwd":"/"#.to_vec();
    bad.extend_from_slice(&[0xff, 0xfe]);
    bad.extend_from_slice(br#""}}"#);
    agent.send_bytes(&bad).await;
    let error = agent.next_message().await;
    assert_eq!(error["error"]["code"], -32700);
    assert_eq!(error["id"], 901);
    assert!(
        error["error"]["data"]["details"]
            .as_str()
            .unwrap()
            .contains("UTF-8")
    );

    let (response, updates) = agent.prompt(&session, "ok?").await;
    assert_eq!(response["result"]["stopReason"], "end_turn");
    assert_eq!(joined(&updates, "agent_message_chunk"), "still here");
    assert_eq!(mock.requests().len(), 1);
    assert!(
        !agent.stderr().contains(&"x".repeat(5000)),
        "the big line was not logged"
    );
    agent.assert_valid();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_methods_are_method_not_found() {
    let (_mock, _ws, mut agent, session) = session_with(vec![]).await;
    let r = agent
        .request("session/frobnicate", json!({"sessionId": session}))
        .await;
    assert_eq!(r["error"]["code"], -32601);
    let r = agent.request("_tandem/does-not-exist", json!({})).await;
    assert_eq!(r["error"]["code"], -32601);
    // Unknown notifications are ignored without a reply.
    agent.notify("_tandem/whatever", json!({})).await;
    let r = agent.request("session/frobnicate", json!({})).await;
    assert_eq!(r["error"]["code"], -32601);
    assert!(agent.drain().is_empty(), "no reply to a notification");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wrong_params_are_invalid_params() {
    let (_mock, ws, mut agent, session) = session_with(vec![]).await;
    let cases = [
        ("session/new", json!({"cwd": 42, "mcpServers": []})),
        ("session/new", json!({})),
        ("session/prompt", json!({"sessionId": session})),
        (
            "session/prompt",
            json!({"sessionId": session, "prompt": "not a list"}),
        ),
        (
            "session/prompt",
            json!({"sessionId": session, "prompt": []}),
        ),
        (
            "session/prompt",
            json!({"sessionId": session, "prompt": [{"type": "audio", "data": "AA==", "mimeType": "audio/wav"}]}),
        ),
        (
            "session/set_mode",
            json!({"sessionId": session, "modeId": "yolo"}),
        ),
        (
            "session/set_config_option",
            json!({"sessionId": session, "configId": "mode"}),
        ),
    ];
    for (method, params) in cases {
        let r = agent.request(method, params.clone()).await;
        assert_eq!(r["error"]["code"], -32602, "{method} {params} -> {r}");
        assert!(!r["error"]["message"].as_str().unwrap().is_empty());
    }
    // Relative and missing working directories are explained.
    let r = agent
        .request(
            "session/new",
            json!({"cwd": "relative/dir", "mcpServers": []}),
        )
        .await;
    assert_error(&r, -32602, "absolute");
    let missing = ws.project().join("nope");
    let r = agent
        .request("session/new", json!({"cwd": missing, "mcpServers": []}))
        .await;
    assert_error(&r, -32602, "does not exist");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_sessions_are_not_found() {
    let (mock, _ws, mut agent, session) = session_with(vec![Reply::text(&["fine"])]).await;
    let ghost = "00000000-0000-0000-0000-000000000000";
    let cases = [
        (
            "session/prompt",
            json!({"sessionId": ghost, "prompt": [{"type": "text", "text": "hi"}]}),
        ),
        (
            "session/set_mode",
            json!({"sessionId": ghost, "modeId": "ask"}),
        ),
        (
            "session/set_config_option",
            json!({"sessionId": ghost, "configId": "mode", "value": "ask"}),
        ),
    ];
    for (method, params) in cases {
        let r = agent.request(method, params).await;
        assert_eq!(r["error"]["code"], -32002, "{method} -> {r}");
        assert_eq!(r["error"]["data"]["sessionId"], ghost);
    }
    agent
        .notify("session/cancel", json!({"sessionId": ghost}))
        .await;
    let (response, _) = agent.prompt(&session, "real").await;
    assert_eq!(response["result"]["stopReason"], "end_turn");
    assert_eq!(
        mock.requests().len(),
        1,
        "no model request for the unknown session"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_prompt_while_one_runs_waits_and_the_first_finishes_first() {
    let slow = Reply::text(&["a", "b", "c"]).slow(std::time::Duration::from_millis(200));
    let (mock, _ws, mut agent, session) = session_with(vec![slow, Reply::text(&["two"])]).await;
    let first = agent.start_prompt(&session, "one").await;
    let second = agent.start_prompt(&session, "two").await;
    let first = response(first).await;
    assert_eq!(first["result"]["stopReason"], "end_turn");
    let second = response(second).await;
    assert_eq!(second["result"]["stopReason"], "end_turn", "{second}");
    let requests = mock.requests();
    assert_eq!(requests.len(), 2);
    // The second waited for the first to end: its request carries the first's whole answer.
    // (Counting requests when the first answer arrives raced the second's start.)
    let history = requests[1].body["messages"].to_string();
    assert!(history.contains("abc"), "{history}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_before_initialize_are_refused_then_work() {
    let mock = MockModel::start(vec![]).await;
    let ws = Workspace::new();
    let mut agent = Agent::spawn(&ws.env(&mock), &[]);
    let r = agent
        .request(
            "session/new",
            json!({"cwd": ws.project(), "mcpServers": []}),
        )
        .await;
    assert_eq!(r["error"]["code"], -32600);
    agent.initialize().await;
    agent.new_session(&ws.project()).await;
}
