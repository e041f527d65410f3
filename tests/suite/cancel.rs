//! `session/cancel` during streaming: the prompt ends `cancelled` promptly, what was shown stays
//! valid, and the next prompt works with the partial answer in the history.

use std::time::{Duration, Instant};

use serde_json::json;

use crate::common::{Reply, joined, response, session_with};

fn slow_answer() -> Reply {
    let pieces: Vec<String> = (0..200).map(|i| format!("t{i} ")).collect();
    let refs: Vec<&str> = pieces.iter().map(String::as_str).collect();
    Reply::text(&refs).slow(Duration::from_millis(50))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_mid_stream_stops_the_turn_and_the_next_prompt_works() {
    let (mock, _ws, mut agent, session) =
        session_with(vec![slow_answer(), Reply::text(&["after cancel"])]).await;
    let pending = agent.start_prompt(&session, "long").await;
    // Wait until the answer is streaming.
    let first = agent.next_message().await;
    assert_eq!(
        first["params"]["update"]["sessionUpdate"],
        "agent_message_chunk"
    );
    let cancelled_at = Instant::now();
    agent
        .notify("session/cancel", json!({"sessionId": session}))
        .await;
    let response = response(pending).await;
    let latency = cancelled_at.elapsed();
    assert_eq!(response["result"]["stopReason"], "cancelled", "{response}");
    // The full answer would take 10 s; a sanity bound far above the 100 ms target.
    assert!(latency < Duration::from_secs(3), "cancel took {latency:?}");

    let shown = std::iter::once(first)
        .chain(agent.drain())
        .collect::<Vec<_>>();
    let partial = joined(&shown, "agent_message_chunk");
    assert!(
        partial.starts_with("t0 ") && !partial.contains("t199"),
        "{partial}"
    );

    let (next, updates) = agent.prompt(&session, "and now?").await;
    assert_eq!(next["result"]["stopReason"], "end_turn");
    assert_eq!(joined(&updates, "agent_message_chunk"), "after cancel");
    let second = &mock.requests()[1];
    let messages = second.body["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 4, "system, user, partial assistant, user");
    assert_eq!(messages[2]["role"], "assistant");
    assert!(partial.starts_with(messages[2]["content"].as_str().unwrap()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_while_waiting_for_the_server_stops_the_turn() {
    // The server holds the response before the first byte.
    let (_mock, _ws, mut agent, session) = session_with(vec![
        Reply::text(&["never seen"]).slow(Duration::from_secs(30)),
    ])
    .await;
    let pending = agent.start_prompt(&session, "hi").await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    agent
        .notify("session/cancel", json!({"sessionId": session}))
        .await;
    let response = response(pending).await;
    assert_eq!(response["result"]["stopReason"], "cancelled");
    assert_eq!(joined(&agent.drain(), "agent_message_chunk"), "");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_with_nothing_running_is_harmless() {
    let (_mock, _ws, mut agent, session) = session_with(vec![Reply::text(&["ok"])]).await;
    agent
        .notify("session/cancel", json!({"sessionId": session}))
        .await;
    let (response, _) = agent.prompt(&session, "hi").await;
    assert_eq!(response["result"]["stopReason"], "end_turn");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_request_for_the_prompt_cancels_the_turn() {
    let (_mock, _ws, mut agent, session) = session_with(vec![slow_answer()]).await;
    let (id, pending) = agent
        .start_request(
            "session/prompt",
            json!({"sessionId": session, "prompt": [{"type": "text", "text": "long"}]}),
        )
        .await;
    agent.next_message().await;
    agent
        .notify("$/cancel_request", json!({"requestId": id}))
        .await;
    let response = response(pending).await;
    let cancelled =
        response["result"]["stopReason"] == "cancelled" || response["error"]["code"] == -32800;
    assert!(cancelled, "{response}");
}
