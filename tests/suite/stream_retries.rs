//! An answer that breaks off mid-stream — a dropped connection, Anthropic's
//! `overloaded_error` event, OpenAI's `response.failed` with a server error — before any tool
//! call started is asked for again after a backoff, up to `retry.stream_retries` times, and
//! the user is not shown its text twice: what was shown stays, and the model is told to go on
//! from where it broke off. A call that started streaming is never asked for again (it could
//! run twice); retries that run out end the turn with the error, the session still usable.

use serde_json::{Value, json};

use crate::common::mock_model::{self, Reply, delta, finish, tool_call, usage};
use crate::common::{Agent, MockModel, Workspace, joined, of_kind, path_str, still_usable};

/// An agent on `mock` speaking `api` with `model`, retries fast, and `stream_retries`.
async fn agent(
    mock: &MockModel,
    api: &str,
    model: &str,
    stream_retries: u32,
) -> (Workspace, Agent, String) {
    let ws = Workspace::new();
    // Five is the default: left unsaid, as most users leave it.
    let retries = if stream_retries == 5 {
        String::new()
    } else {
        format!("stream_retries = {stream_retries}\n")
    };
    let config = ws.write(
        "config.toml",
        &format!("[retry]\nmax_attempts = 1\ninitial_delay_ms = 10\n{retries}"),
    );
    let mut env = ws.env(mock);
    env.push(("TANDEM_API".into(), api.into()));
    env.push(("TANDEM_MODEL".into(), model.into()));
    let mut agent = Agent::spawn(&env, &["--config", &path_str(&config)]);
    let session = agent.open_session(&ws.project()).await;
    (ws, agent, session)
}

/// Half an answer, then the connection drops.
fn cut() -> Reply {
    Reply::chunks(vec![mock_model::text("Half an "), mock_model::text("answ")]).dropped()
}

/// The text of the answer the editor was shown (tandem's notes left out).
fn answer(updates: &[Value]) -> String {
    of_kind(updates, "agent_message_chunk")
        .iter()
        .filter_map(|u| u["content"]["text"].as_str())
        .filter(|t| !t.trim_start().starts_with('_'))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_connection_mid_answer_is_asked_again_and_goes_on_without_repeating() {
    let mock = MockModel::start(vec![cut(), Reply::text(&["er, whole."])]).await;
    let (_ws, mut agent, session) = agent(&mock, "chat-completions", "mock-model", 5).await;
    let (response, updates) = agent.prompt(&session, "hi").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    assert_eq!(answer(&updates), "Half an answer, whole.", "{updates:?}");
    let told = joined(&updates, "agent_message_chunk");
    assert!(told.contains("asks again (try 1 of 5)"), "{told}");
    // The model read what it had said and was told to go on from there.
    let requests = mock.requests();
    assert_eq!(requests.len(), 2);
    let messages = requests[1].body["messages"].as_array().unwrap().clone();
    let n = messages.len();
    assert_eq!(messages[n - 2]["role"], "assistant");
    assert_eq!(messages[n - 2]["content"], "Half an answ");
    assert_eq!(messages[n - 1]["role"], "user");
    assert!(
        messages[n - 1]["content"]
            .as_str()
            .unwrap()
            .contains("Go on from exactly where it stopped"),
        "{}",
        messages[n - 1]
    );
    still_usable(&mock, &mut agent, &session).await;
    agent.assert_valid();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_overloaded_error_event_on_the_messages_api_is_retried() {
    let overloaded = Reply::chunks(vec![
        mock_model::text("Let me"),
        json!({"error": {"type": "overloaded_error", "message": "Overloaded"}}),
    ]);
    let mock = MockModel::start(vec![overloaded, Reply::text(&[" see: fine."])]).await;
    let (_ws, mut agent, session) =
        agent(&mock, "anthropic-messages", "claude-sonnet-4-5", 5).await;
    let (response, updates) = agent.prompt(&session, "hi").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    assert_eq!(answer(&updates), "Let me see: fine.");
    let requests = mock.requests();
    assert_eq!(requests.len(), 2);
    assert!(requests[1].path.ends_with("/messages"));
    agent.assert_valid();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_response_before_any_text_is_simply_asked_again() {
    // The mock's Responses wire sends an error chunk as `response.failed`, code
    // `server_error`, as OpenAI does.
    let failed = Reply::chunks(vec![
        json!({"error": {"message": "The server had an error while processing your request."}}),
    ]);
    let mock = MockModel::start(vec![failed, Reply::text(&["All good."])]).await;
    let (_ws, mut agent, session) = agent(&mock, "responses", "gpt-5.1", 5).await;
    let (response, updates) = agent.prompt(&session, "hi").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    assert_eq!(answer(&updates), "All good.");
    let requests = mock.requests();
    assert_eq!(requests.len(), 2);
    // Nothing had been said: the second request is the first one again.
    assert_eq!(requests[0].body["input"], requests[1].body["input"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_break_after_a_call_started_streaming_is_not_asked_again() {
    let broken = Reply::chunks(vec![
        delta(json!({"role": "assistant", "content": null})),
        tool_call(0, "call_1", "write_file", r#"{"path": "a.txt", "con"#),
    ])
    .dropped();
    let mock = MockModel::start(vec![broken]).await;
    let (_ws, mut agent, session) = agent(&mock, "chat-completions", "mock-model", 5).await;
    let (response, _) = agent.prompt(&session, "write it").await;
    assert_eq!(
        response["error"]["_meta"]["tandem"]["class"], "stream_interrupted",
        "{response}"
    );
    assert_eq!(mock.requests().len(), 1, "never asked again");
    still_usable(&mock, &mut agent, &session).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retries_that_run_out_end_the_turn_with_the_error() {
    let mock = MockModel::start(vec![cut(), cut(), cut()]).await;
    let (_ws, mut agent, session) = agent(&mock, "chat-completions", "mock-model", 2).await;
    let (response, updates) = agent.prompt(&session, "hi").await;
    let error = &response["error"];
    assert_eq!(
        error["_meta"]["tandem"]["class"], "stream_interrupted",
        "{response}"
    );
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("before the answer was complete")
    );
    assert_eq!(mock.requests().len(), 3, "the first and two more");
    let told = joined(&updates, "agent_message_chunk");
    assert!(told.contains("try 2 of 2"), "{told}");
    still_usable(&mock, &mut agent, &session).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_that_fails_then_finishes_resets_the_count() {
    // Two answers in one turn (a call between them), each breaking once: each gets its retry.
    let call = Reply::chunks(vec![
        mock_model::text("Looking."),
        tool_call(0, "call_1", "read_file", r#"{"path": "README.md"}"#),
        finish("tool_calls"),
        usage(10, 5),
    ]);
    let mock = MockModel::start(vec![cut(), call, cut(), Reply::text(&["er."])]).await;
    let (ws, mut agent, session) = agent(&mock, "chat-completions", "mock-model", 1).await;
    ws.write("project/README.md", "hello\n");
    let (response, _) = agent.prompt(&session, "hi").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    assert_eq!(mock.requests().len(), 4);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_break_inside_a_call_written_as_text_is_not_asked_again() {
    let broken = Reply::chunks(vec![mock_model::text(
        "Let me look.\n<tool_call>\n{\"name\": \"read_file\", \"argu",
    )])
    .dropped();
    let mock = MockModel::start(vec![broken]).await;
    let (_ws, mut agent, session) = agent(&mock, "chat-completions", "mock-model", 5).await;
    let (response, updates) = agent.prompt(&session, "look").await;
    assert_eq!(
        response["error"]["_meta"]["tandem"]["class"], "stream_interrupted",
        "{response}"
    );
    assert_eq!(mock.requests().len(), 1, "never asked again");
    // What was held back as a possible call is shown: the user sees what the history holds.
    assert!(answer(&updates).contains("<tool_call>"), "{updates:?}");
    still_usable(&mock, &mut agent, &session).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancel_while_waiting_to_ask_again_leaves_no_note_behind() {
    let mock = MockModel::start(vec![cut(), Reply::text(&["Fresh."])]).await;
    let ws = Workspace::new();
    let config = ws.write(
        "config.toml",
        "[retry]\nmax_attempts = 1\ninitial_delay_ms = 20000\nmax_total_secs = 30\n",
    );
    let mut agent = Agent::spawn(&ws.env(&mock), &["--config", &path_str(&config)]);
    let session = agent.open_session(&ws.project()).await;
    let running = agent.start_prompt(&session, "hi").await;
    mock.wait_for_requests(1).await;
    // The notice says a retry is coming; cancel while it waits.
    loop {
        let update = agent.next_message().await;
        if update.to_string().contains("asks again") {
            break;
        }
    }
    agent
        .notify("session/cancel", json!({"sessionId": session}))
        .await;
    let cancelled = tokio::time::timeout(crate::common::acp_client::WAIT, running)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        cancelled["result"]["stopReason"], "cancelled",
        "{cancelled}"
    );
    let (response, _) = agent.prompt(&session, "something else").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    let requests = mock.requests();
    assert_eq!(requests.len(), 2);
    let texts = crate::common::mock_model::user_texts(&requests[1].body);
    assert!(
        texts
            .iter()
            .all(|t| !t.contains("Go on from exactly where it stopped")),
        "{texts:?}"
    );
}
