//! Edge cases of JSON-RPC itself: absurd nesting, answers to requests tandem never sent,
//! ids used twice, and requests for a session that was closed. None crash or hang tandem,
//! and the session goes on.

use serde_json::{Value, json};

use crate::common::{Reply, joined, session_with};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deeply_nested_json_is_an_error_not_a_crash() {
    let (_mock, _ws, mut agent, session) = session_with(vec![Reply::text(&["still here"])]).await;
    let depth = 100_000;
    let nested = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
    agent
        .send_line(&format!(
            r#"{{"jsonrpc":"2.0","id":5,"method":"session/prompt","params":{nested}}}"#
        ))
        .await;
    let reply = agent.next_message().await;
    assert!(reply["error"]["code"].is_i64(), "{reply}");
    // Deep but legal nesting inside a real prompt's _meta is accepted as data.
    let mut meta = json!("leaf");
    for _ in 0..100 {
        meta = json!([meta]);
    }
    let r = agent
        .request(
            "session/prompt",
            json!({"sessionId": session, "prompt": [{"type": "text", "text": "hi"}], "_meta": {"deep": meta}}),
        )
        .await;
    assert_eq!(r["result"]["stopReason"], "end_turn", "{r}");
    assert!(agent.is_running());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answers_to_requests_never_sent_are_ignored() {
    let (_mock, _ws, mut agent, session) = session_with(vec![Reply::text(&["fine"])]).await;
    agent
        .send_line(r#"{"jsonrpc":"2.0","id":424242,"result":{"outcome":"whatever"}}"#)
        .await;
    agent
        .send_line(r#"{"jsonrpc":"2.0","id":"nope","error":{"code":-32000,"message":"stray"}}"#)
        .await;
    let (response, updates) = agent.prompt(&session, "hi").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    assert_eq!(joined(&updates, "agent_message_chunk"), "fine");
    let stray: Vec<&Value> = updates
        .iter()
        .filter(|u| u.get("method").is_none())
        .collect();
    assert!(stray.is_empty(), "nothing answers a response: {stray:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reused_id_gets_an_answer_each_time() {
    let (_mock, _ws, mut agent, session) = session_with(vec![]).await;
    for mode in ["read-only", "ask"] {
        agent
            .send_line(
                &json!({"jsonrpc": "2.0", "id": 77, "method": "session/set_mode",
                        "params": {"sessionId": session, "modeId": mode}})
                .to_string(),
            )
            .await;
    }
    let mut answers = Vec::new();
    while answers.len() < 2 {
        let m = agent.next_message().await;
        if m.get("method").is_none() {
            answers.push(m);
        }
    }
    for a in &answers {
        assert_eq!(a["id"], 77, "{a}");
        assert!(a.get("result").is_some(), "{a}");
    }
    assert!(agent.is_running());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_after_session_close_are_not_found() {
    let (mock, ws, mut agent, session) = session_with(vec![Reply::text(&["new one"])]).await;
    agent
        .request_ok("session/close", json!({"sessionId": session}))
        .await;
    let cases = [
        (
            "session/prompt",
            json!({"sessionId": session, "prompt": [{"type": "text", "text": "hi"}]}),
        ),
        (
            "session/set_mode",
            json!({"sessionId": session, "modeId": "ask"}),
        ),
        ("_tandem/usage", json!({"sessionId": session})),
        ("session/close", json!({"sessionId": session})),
    ];
    for (method, params) in cases {
        let r = agent.request(method, params).await;
        assert_eq!(r["error"]["code"], -32002, "{method} -> {r}");
    }
    agent
        .notify("session/cancel", json!({"sessionId": session}))
        .await;
    assert!(
        mock.requests().is_empty(),
        "no model request for a closed session"
    );
    let fresh = agent.open_session(&ws.project()).await;
    let (response, _) = agent.prompt(&fresh, "hi").await;
    assert_eq!(response["result"]["stopReason"], "end_turn");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn blank_lines_are_skipped_and_params_may_be_left_out() {
    let (_mock, _ws, mut agent, _session) = session_with(vec![]).await;
    agent.send_line("").await;
    agent.send_line("   \t").await;
    agent
        .send_line(r#"{"jsonrpc":"2.0","id":"s","method":"_tandem/status"}"#)
        .await;
    let reply = agent.next_message().await;
    assert_eq!(reply["id"], "s", "no error for the blank lines: {reply}");
    assert!(reply["result"]["version"].is_string(), "{reply}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_invalid_request_with_an_id_does_not_hold_up_shutdown() {
    // Found by the fuzzer: the SDK answers an invalid request with id null, so tandem must
    // not count it as pending (it waited for it forever when it was an `initialize`).
    let (_mock, _ws, mut agent, _session) = session_with(vec![]).await;
    agent
        .send_line(r#"{"jsonrpc":"1.0","id":1,"method":"initialize"}"#)
        .await;
    let reply = agent.next_message().await;
    assert_eq!(reply["error"]["code"], -32600, "{reply}");
    assert_eq!(reply["id"], Value::Null);
    let started = std::time::Instant::now();
    let (status, stderr) = agent.shutdown().await;
    assert!(status.success(), "{stderr}");
    assert!(
        started.elapsed() < std::time::Duration::from_secs(5),
        "no grace period for a request that was answered"
    );
}

/// agent-shell shows every stderr line as a notice above the answer (its `Notices`
/// section): an error the editor is answered with is not also a warning on stderr.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_error_answered_to_the_editor_is_not_also_a_warning() {
    let mock = crate::common::MockModel::start(vec![Reply::status(
        400,
        r#"{"error":{"message":"the model refused the request","type":"invalid_request_error"}}"#,
    )])
    .await;
    let ws = crate::common::Workspace::new();
    // Logging as an editor starts tandem: no RUST_LOG.
    let env: Vec<(String, String)> = ws
        .env(&mock)
        .into_iter()
        .filter(|(name, _)| name != "RUST_LOG")
        .collect();
    let mut agent = crate::common::acp_client::Agent::spawn(&env, &[]);
    let session = agent.open_session(&ws.project()).await;
    let unknown = agent.request("no/such/method", json!({})).await;
    assert_eq!(unknown["error"]["code"], -32601, "{unknown}");
    let invalid = agent
        .request(
            "session/prompt",
            json!({"sessionId": session, "prompt": []}),
        )
        .await;
    assert_eq!(invalid["error"]["code"], -32602, "{invalid}");
    agent.send_line("this is not JSON").await;
    let parse = agent.next_message().await;
    assert_eq!(parse["error"]["code"], -32700, "{parse}");
    let (refused, _) = agent.prompt(&session, "hi").await;
    assert!(refused.get("error").is_some(), "{refused}");
    let (_, stderr) = agent.shutdown().await;
    let warnings: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains(" WARN ") || l.contains(" ERROR "))
        .collect();
    assert!(warnings.is_empty(), "{warnings:#?}");
}
