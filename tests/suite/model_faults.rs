//! A model server that stalls, trickles, floods or answers with the wrong thing: each case
//! ends in a clear error (or a whole answer) and the session keeps working.

use std::time::Duration;

use futures::StreamExt;
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
            "{extra}\n[retry]\nmax_attempts = 1\nstream_retries = 0\n[timeouts]\nfirst_byte_secs = {timeout_secs}\nidle_secs = {timeout_secs}\n"
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
    // The flood repeats itself: the repetition check would stop it first (see below).
    let (mock, ws, mut agent, session) = started(
        vec![endless],
        "max_response_bytes = 1048576\n[loops]\nstop_repeated_text = false",
    )
    .await;
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

/// A small model that loops on one phrase is stopped with the reason long before any other
/// limit, the editor told why, and the session goes on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_that_repeats_itself_is_stopped_and_the_editor_told_why() {
    let endless = Reply::Stream {
        pieces: vec![Piece::Data(mock_model::text("Hello! ").to_string())],
        end: End::Flood("I am here to help. "),
    };
    let (mock, _ws, mut agent, session) = started(vec![endless], "").await;
    let (response, updates) = agent.prompt(&session, "hi").await;
    assert_eq!(response["result"]["stopReason"], "max_tokens", "{response}");
    let said = joined(&updates, "agent_message_chunk");
    assert!(said.starts_with("Hello! I am here to help. "), "{said}");
    assert!(
        said.contains(
            "The model kept repeating the same 19 bytes of text, so tandem stopped its answer there."
        ),
        "{said}"
    );
    assert!(said.len() < 64 * 1024, "{} bytes", said.len());
    still_usable(&mock, &mut agent, &session).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_huge_single_chunk_arrives_whole() {
    let big = "x".repeat(8 * 1024 * 1024);
    let reply = Reply::chunks(vec![
        mock_model::text(&big),
        mock_model::finish("stop"),
        mock_model::usage(10, 10),
    ]);
    // Parsing 8 MiB in a debug build takes a while: not what these timeouts are about. One
    // letter repeated is what the repetition check stops, so it is off here.
    let (mock, _ws, mut agent, session) =
        started_with(vec![reply], "[loops]\nstop_repeated_text = false", 60.0).await;
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
    // Four floods at once on a loaded 2-core machine: the timeouts are not what is tested.
    let (mock, ws, mut agent, first) = started_with(
        (0..4).map(|_| endless()).collect(),
        "max_response_bytes = 1048576\n[loops]\nstop_repeated_text = false",
        10.0,
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

/// A body that never ends, counting what it managed to send; the count is final once the
/// reader hung up (the stream is dropped).
fn endless_body(sent: std::sync::Arc<EndlessCount>) -> axum::body::Body {
    struct Counted(std::sync::Arc<EndlessCount>);
    impl Drop for Counted {
        fn drop(&mut self) {
            self.0
                .done
                .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        }
    }
    let piece = bytes::Bytes::from(vec![b' '; 64 * 1024]);
    let guard = Counted(sent);
    let stream = futures::stream::repeat(piece).map(move |piece| {
        let n = piece.len() as u64;
        guard
            .0
            .bytes
            .fetch_add(n, std::sync::atomic::Ordering::SeqCst);
        Ok::<_, std::io::Error>(piece)
    });
    axum::body::Body::from_stream(stream)
}

/// What an endless body sent, and how many such bodies were given up on.
#[derive(Default)]
struct EndlessCount {
    bytes: std::sync::atomic::AtomicU64,
    done: std::sync::atomic::AtomicU64,
}

/// Bodies tandem reads whole (the model list discovery asks for, an error's body) are read
/// only up to a cap: a server that never stops sending them fills neither tandem's memory nor
/// its time. Before, discovery read an endless `/models` for its whole 3 s timeout (hundreds
/// of MiB, all held) and an endless 500 body was read forever, so the prompt never ended.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn endless_model_lists_and_error_bodies_are_read_only_up_to_a_cap() {
    use axum::http::{StatusCode, header};
    use axum::routing::{get, post};
    let list = std::sync::Arc::new(EndlessCount::default());
    let error = std::sync::Arc::new(EndlessCount::default());
    let (l, e) = (list.clone(), error.clone());
    let app = axum::Router::new()
        .route(
            "/v1/models",
            get(move || {
                let l = l.clone();
                async move {
                    (
                        [(header::CONTENT_TYPE, "application/json")],
                        endless_body(l),
                    )
                }
            }),
        )
        .route(
            "/v1/chat/completions",
            post(move || {
                let e = e.clone();
                async move {
                    (
                        StatusCode::INTERNAL_SERVER_ERROR,
                        [(header::CONTENT_TYPE, "text/plain")],
                        endless_body(e),
                    )
                }
            }),
        );
    let base_url = mock_model::serve_local(app).await;
    let ws = Workspace::new();
    let config = ws.write("config.toml", "[retry]\nmax_attempts = 1\n");
    let mut env = ws.base_env();
    env.push(("OPENAI_BASE_URL".into(), base_url));
    env.push(("OPENAI_API_KEY".into(), crate::common::TEST_KEY.into()));
    env.push(("TANDEM_MODEL".into(), "m".into()));
    let mut agent = Agent::spawn(&env, &["--config", &path_str(&config)]);
    let session = agent.open_session(&ws.project()).await;
    let (response, _) = tokio::time::timeout(Duration::from_secs(60), agent.prompt(&session, "hi"))
        .await
        .expect("the prompt must end although the error body never does");
    let (class, message) = error_class(&response);
    assert_eq!(class, "server_error", "{response}");
    assert!(message.contains("500"), "{message}");
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    for (what, count) in [("the model list", &list), ("the error body", &error)] {
        while count.done.load(std::sync::atomic::Ordering::SeqCst) == 0 {
            assert!(
                tokio::time::Instant::now() < deadline,
                "tandem never stopped reading {what}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        // The caps are 16 MiB (a list) and 1 MiB (an error); sockets hold a few MiB more.
        let sent = count.bytes.load(std::sync::atomic::Ordering::SeqCst);
        assert!(
            sent < 40 << 20,
            "{what}: {} MiB sent before tandem hung up",
            sent >> 20
        );
    }
    drop(agent);
}
