//! A model server that stalls, trickles, floods or answers with the wrong thing: each case
//! ends in a clear error (or a whole answer) and the session keeps working.

use std::time::Duration;

use serde_json::{Value, json};

use crate::common::mock_model::{self, End, Piece, Reply};
use crate::common::{Agent, MockModel, Workspace, joined, path_str, still_usable};

/// A session whose config gives the server half a second to start and to pause, one try.
async fn started(script: Vec<Reply>, extra: &str) -> (MockModel, Workspace, Agent, String) {
    started_with(script, extra, 0.5).await
}

async fn started_with(
    script: Vec<Reply>,
    extra: &str,
    timeout_secs: f64,
) -> (MockModel, Workspace, Agent, String) {
    let mock = MockModel::start(script).await;
    let ws = Workspace::new();
    let config = ws.write(
        "config.toml",
        &format!(
            "{extra}\n[retry]\nmax_attempts = 1\n[timeouts]\nfirst_byte_secs = {timeout_secs}\nidle_secs = {timeout_secs}\n"
        ),
    );
    let mut agent = Agent::spawn(&ws.env(&mock), &["--config", &path_str(&config)]);
    let id = agent.open_session(&ws.project()).await;
    (mock, ws, agent, id)
}

fn error_class(response: &Value) -> (&str, &str) {
    let error = &response["error"];
    assert!(error.is_object(), "expected an error: {response}");
    (
        error["_meta"]["tandem"]["class"].as_str().unwrap_or(""),
        error["message"].as_str().unwrap_or(""),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_sends_no_headers_times_out() {
    let stalled = Reply::Stall(Duration::from_secs(30), Box::new(Reply::text(&["late"])));
    let (mock, _ws, mut agent, session) = started(vec![stalled], "").await;
    let (response, _) = agent.prompt(&session, "hi").await;
    let (class, message) = error_class(&response);
    assert_eq!(class, "timeout", "{response}");
    assert!(message.contains("did not start answering"), "{message}");
    assert!(message.contains("first_byte_secs"), "{message}");
    still_usable(&mock, &mut agent, &session).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_that_opens_but_never_sends_a_chunk_times_out() {
    let silent = Reply::Stream {
        pieces: Vec::new(),
        end: End::Hang,
    };
    let (mock, _ws, mut agent, session) = started(vec![silent], "").await;
    let (response, _) = agent.prompt(&session, "hi").await;
    let (class, message) = error_class(&response);
    assert_eq!(class, "timeout", "{response}");
    assert!(message.contains("did not start answering"), "{message}");
    still_usable(&mock, &mut agent, &session).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_that_goes_quiet_keeps_its_partial_answer() {
    let quiet = Reply::Stream {
        pieces: vec![Piece::Data(mock_model::text("Half an").to_string())],
        end: End::Hang,
    };
    let (mock, _ws, mut agent, session) = started(vec![quiet], "").await;
    let (response, updates) = agent.prompt(&session, "hi").await;
    let (class, message) = error_class(&response);
    assert_eq!(class, "timeout", "{response}");
    assert!(message.contains("idle_secs"), "{message}");
    assert_eq!(joined(&updates, "agent_message_chunk"), "Half an");
    still_usable(&mock, &mut agent, &session).await;
    assert_eq!(mock.requests()[1].body["messages"][2]["content"], "Half an");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_loris_stream_is_cut_off_even_though_bytes_keep_coming() {
    // One byte every 100 ms for 3 s: the connection is never idle, but no chunk completes
    // within the half-second idle limit. Were only bytes watched, the answer would finish.
    let mut pieces = vec![Piece::Raw(
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"".into(),
    )];
    for _ in 0..30 {
        pieces.push(Piece::Delay(Duration::from_millis(100)));
        pieces.push(Piece::Raw("a".into()));
    }
    pieces.push(Piece::Raw("\"}}]}\n\n".into()));
    pieces.push(Piece::Data(mock_model::finish("stop").to_string()));
    let loris = Reply::Stream {
        pieces,
        end: End::Done,
    };
    let (mock, _ws, mut agent, session) = started(vec![loris], "").await;
    let (response, _) = agent.prompt(&session, "hi").await;
    assert_eq!(error_class(&response).0, "timeout", "{response}");
    still_usable(&mock, &mut agent, &session).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_response_that_never_ends_is_cut_at_max_response_bytes() {
    let endless = Reply::Stream {
        pieces: Vec::new(),
        end: End::Flood("spam "),
    };
    let (mock, ws, mut agent, session) =
        started(vec![endless], "max_response_bytes = 1048576").await;
    let (response, updates) = agent.prompt(&session, "hi").await;
    let (class, message) = error_class(&response);
    assert_eq!(class, "response_too_large", "{response}");
    assert!(message.contains("max_response_bytes"), "{message}");
    let shown = joined(&updates, "agent_message_chunk");
    assert!(shown.starts_with("spam spam"), "what arrived was shown");
    assert!(shown.len() < 1_048_576, "{} bytes of text", shown.len());
    still_usable(&mock, &mut agent, &session).await;
    // Only the runaway answer's end is kept: the model is not sent the rest again, and the
    // transcript does not hold it.
    let kept = mock.requests()[1].body["messages"][2]["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        kept.starts_with("[… this answer ran past max_response_bytes and was cut off;")
            && kept.ends_with("spam ")
            && kept.len() < 5 * 1024,
        "{} bytes kept",
        kept.len()
    );
    let stored = ws.home().join(format!("data/sessions/{session}.jsonl"));
    let size = std::fs::metadata(&stored).unwrap().len();
    assert!(size < 64 * 1024, "{size} bytes of transcript");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_huge_single_chunk_arrives_whole() {
    let big = "x".repeat(8 * 1024 * 1024);
    let reply = Reply::chunks(vec![
        mock_model::text(&big),
        mock_model::finish("stop"),
        mock_model::usage(10, 10),
    ]);
    // Parsing 8 MiB in a debug build takes a while: not what these timeouts are about.
    let (mock, _ws, mut agent, session) = started_with(vec![reply], "", 60.0).await;
    let (response, updates) = agent.prompt(&session, "hi").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    assert_eq!(joined(&updates, "agent_message_chunk"), big);
    still_usable(&mock, &mut agent, &session).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_empty_response_is_an_incomplete_answer() {
    let empty = Reply::Stream {
        pieces: Vec::new(),
        end: End::Done,
    };
    let (mock, _ws, mut agent, session) = started(vec![empty], "").await;
    let (response, _) = agent.prompt(&session, "hi").await;
    let (class, message) = error_class(&response);
    assert_eq!(class, "stream_interrupted", "{response}");
    assert!(message.contains("before the answer was complete"));
    still_usable(&mock, &mut agent, &session).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_200_with_an_error_body_reports_the_servers_words() {
    let body = json!({"error": {"message": "model is loading", "type": "unavailable"}});
    let (mock, _ws, mut agent, session) =
        started(vec![Reply::status(200, &body.to_string())], "").await;
    let (response, _) = agent.prompt(&session, "hi").await;
    let (class, message) = error_class(&response);
    assert_eq!(class, "stream_error", "{response}");
    assert!(message.contains("model is loading"), "{message}");
    assert!(message.contains("instead of a stream"), "{message}");
    // A JSON body without an error: a server that ignored `stream: true`.
    mock.push(Reply::status(200, r#"{"choices":[]}"#));
    let (response, _) = agent.prompt(&session, "hi").await;
    let (class, message) = error_class(&response);
    assert_eq!(class, "malformed_response", "{response}");
    assert!(message.contains("stream: true"), "{message}");
    still_usable(&mock, &mut agent, &session).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn runaway_answers_at_once_are_bounded_together() {
    let endless = || Reply::Stream {
        pieces: Vec::new(),
        end: End::Flood("spam "),
    };
    let (mock, ws, mut agent, first) = started(
        (0..4).map(|_| endless()).collect(),
        "max_response_bytes = 1048576",
    )
    .await;
    let mut sessions = vec![first];
    for _ in 0..3 {
        sessions.push(agent.open_session(&ws.project()).await);
    }
    let mut answers = Vec::new();
    for session in &sessions {
        answers.push(agent.start_prompt(session, "hi").await);
    }
    let mut together = 0;
    for answer in answers {
        let response = crate::common::response(answer).await;
        let (class, message) = error_class(&response);
        assert_eq!(class, "response_too_large", "{response}");
        together += usize::from(message.contains("at once passed 2097152 bytes together"));
    }
    // Four answers at once pass twice max_response_bytes before each passes it alone.
    assert!(
        together >= 1,
        "no answer was stopped for the process's bound"
    );
    // Their bytes are given back: an ordinary answer goes through afterwards.
    mock.push(Reply::text(&["recovered"]));
    let (response, _) = agent.prompt(&sessions[0], "again").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
}
