//! Model server failures: retried when transient, reported in the user's terms, and the
//! session stays usable after every one.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::mock_model::{self, Piece, Reply};
use crate::common::{Agent, MockModel, TEST_KEY, Workspace, joined, path_str, still_usable};

/// A workspace whose config file makes retries fast (10 ms first delay) and asks no answer
/// that broke off mid-stream again (`stream_retries.rs` tests that).
fn fast_retry_agent(ws: &Workspace, mock: &MockModel, attempts: u32) -> Agent {
    let config = ws.write(
        "config.toml",
        &format!(
            "[retry]\nmax_attempts = {attempts}\ninitial_delay_ms = 10\nmax_total_secs = 5\nstream_retries = 0\n"
        ),
    );
    Agent::spawn(&ws.env(mock), &["--config", &path_str(&config)])
}

async fn started(script: Vec<Reply>, attempts: u32) -> (MockModel, Workspace, Agent, String) {
    let mock = MockModel::start(script).await;
    let ws = Workspace::new();
    let mut agent = fast_retry_agent(&ws, &mock, attempts);
    let id = agent.open_session(&ws.project()).await;
    (mock, ws, agent, id)
}

fn error_of(response: &Value) -> &Value {
    assert!(
        response.get("result").is_none(),
        "expected an error: {response}"
    );
    &response["error"]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rate_limit_is_retried_after_the_servers_delay() {
    let limited = Reply::status(
        429,
        r#"{"error":{"message":"slow down","type":"rate_limit"}}"#,
    )
    .header("retry-after", "0.3");
    let (mock, _ws, mut agent, session) = started(vec![limited, Reply::text(&["fine"])], 4).await;
    let start = Instant::now();
    let (response, updates) = agent.prompt(&session, "hi").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    assert_eq!(joined(&updates, "agent_message_chunk"), "fine");
    assert_eq!(mock.requests().len(), 2);
    assert!(
        start.elapsed() >= Duration::from_millis(300),
        "Retry-After honoured"
    );
}

/// A rejected key is -32000 ("authentication required") where tandem offers the editor an
/// auth method (a provider that needs a key), and -32603 with the same words where it offers
/// none (a custom endpoint): a client must not look for a method that is not there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rejected_key_is_reported_at_once_as_auth_only_where_an_auth_method_exists() {
    let body = r#"{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","code":"invalid_api_key"}}"#;
    for (provider, code, class) in [("openai", -32000, "auth"), ("", -32603, "access_denied")] {
        let mock = MockModel::start(vec![Reply::status(401, body)]).await;
        let ws = Workspace::new();
        let mut env = ws.env(&mock);
        if !provider.is_empty() {
            env.push(("TANDEM_PROVIDER".into(), provider.into()));
        }
        let mut agent = Agent::spawn(&env, &[]);
        let init = agent.initialize().await;
        let offered = init["authMethods"]
            .as_array()
            .is_some_and(|m| !m.is_empty());
        assert_eq!(offered, code == -32000, "{provider:?}: {init}");
        let session = agent.new_session(&ws.project()).await["sessionId"]
            .as_str()
            .unwrap()
            .to_string();
        let (response, _) = agent.prompt(&session, "hi").await;
        let error = error_of(&response);
        assert_eq!(error["code"], code, "{provider:?}: {error}");
        let message = error["message"].as_str().unwrap();
        assert!(
            message.contains(&format!(
                "the model server at {} rejected the API key (401)",
                mock.base_url
            )),
            "{message}"
        );
        assert!(message.contains("OPENAI_API_KEY"), "{message}");
        assert_eq!(error["_meta"]["tandem"]["class"], class);
        assert_eq!(error["_meta"]["tandem"]["status"], 401);
        assert_eq!(mock.requests().len(), 1, "401 is not retried");
        still_usable(&mock, &mut agent, &session).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_errors_are_retried_then_reported() {
    let script = (0..4)
        .map(|_| Reply::status(500, "upstream exploded"))
        .collect();
    let (mock, _ws, mut agent, session) = started(script, 4).await;
    let (response, _) = agent.prompt(&session, "hi").await;
    let error = error_of(&response);
    assert_eq!(error["code"], -32603);
    assert_eq!(error["_meta"]["tandem"]["class"], "server_error");
    assert_eq!(error["_meta"]["tandem"]["attempts"], 4);
    let message = error["message"].as_str().unwrap();
    assert!(
        message.contains("failed with HTTP 500 after 4 attempts: upstream exploded"),
        "{message}"
    );
    assert_eq!(mock.requests().len(), 4);
    still_usable(&mock, &mut agent, &session).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_cut_off_mid_answer_is_an_error_not_a_success() {
    let cut = Reply::chunks(vec![mock_model::text("Half an "), mock_model::text("answ")]).dropped();
    let (mock, _ws, mut agent, session) = started(vec![cut], 1).await;
    let (response, updates) = agent.prompt(&session, "hi").await;
    assert_eq!(
        joined(&updates, "agent_message_chunk"),
        "Half an answ",
        "what arrived was shown"
    );
    let error = error_of(&response);
    assert_eq!(error["_meta"]["tandem"]["class"], "stream_interrupted");
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("before the answer was complete")
    );
    still_usable(&mock, &mut agent, &session).await;
    // The partial answer stays in the history the model sees.
    assert_eq!(
        mock.requests()[1].body["messages"][2]["content"],
        "Half an answ"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_that_ends_without_finishing_is_an_error() {
    // A clean close with [DONE] but no finish_reason: the answer is incomplete.
    let (mock, _ws, mut agent, session) =
        started(vec![Reply::chunks(vec![mock_model::text("partial")])], 1).await;
    let (response, _) = agent.prompt(&session, "hi").await;
    assert_eq!(
        error_of(&response)["_meta"]["tandem"]["class"],
        "stream_interrupted"
    );
    still_usable(&mock, &mut agent, &session).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_malformed_chunk_is_an_error() {
    let bad = Reply::Stream {
        pieces: vec![
            Piece::Data(mock_model::text("ok so far").to_string()),
            Piece::Raw("data: {\"choices\": [ {\"delta\": oops\n\n".into()),
        ],
        end: mock_model::End::Done,
    };
    let (mock, _ws, mut agent, session) = started(vec![bad], 1).await;
    let (response, _) = agent.prompt(&session, "hi").await;
    let error = error_of(&response);
    assert_eq!(error["_meta"]["tandem"]["class"], "malformed_response");
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("could not parse")
    );
    still_usable(&mock, &mut agent, &session).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_error_object_inside_a_200_stream_is_an_error() {
    let reply = Reply::chunks(vec![
        mock_model::text("Starting"),
        json!({"error": {"message": "model overloaded", "code": 529}}),
    ]);
    let (mock, _ws, mut agent, session) = started(vec![reply], 1).await;
    let (response, _) = agent.prompt(&session, "hi").await;
    let error = error_of(&response);
    // An overload is the server's failure, even when told inside a 200 stream.
    assert_eq!(error["_meta"]["tandem"]["class"], "server_error");
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("model overloaded")
    );
    still_usable(&mock, &mut agent, &session).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn context_length_errors_with_numeric_codes_are_explained() {
    let body = r#"{"object":"error","message":"This model's maximum context length is 4096 tokens. However, you requested 5000 tokens.","type":"BadRequestError","param":null,"code":400}"#;
    let (mock, _ws, mut agent, session) = started(vec![Reply::status(400, body)], 4).await;
    let (response, _) = agent.prompt(&session, "hi").await;
    let error = error_of(&response);
    assert_eq!(error["code"], -32603);
    assert_eq!(error["_meta"]["tandem"]["class"], "context_length");
    let message = error["message"].as_str().unwrap();
    assert!(
        message.starts_with("the conversation no longer fits the model's context window"),
        "{message}"
    );
    assert_eq!(mock.requests().len(), 1, "400 is not retried");
    still_usable(&mock, &mut agent, &session).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn other_client_errors_keep_the_servers_words() {
    let body = r#"{"error":{"message":"model 'nope' not found","code":404}}"#;
    let (mock, _ws, mut agent, session) = started(vec![Reply::status(404, body)], 4).await;
    let (response, _) = agent.prompt(&session, "hi").await;
    let error = error_of(&response);
    assert_eq!(error["_meta"]["tandem"]["class"], "not_found");
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("model 'nope' not found")
    );
    still_usable(&mock, &mut agent, &session).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_server_is_retried_then_reported() {
    // Bind a port, then free it: nothing listens there.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let ws = Workspace::new();
    let config = ws.write(
        "config.toml",
        "[retry]\nmax_attempts = 2\ninitial_delay_ms = 10\n",
    );
    let mut env = ws.base_env();
    env.push((
        "OPENAI_BASE_URL".into(),
        format!("http://127.0.0.1:{port}/v1"),
    ));
    env.push(("OPENAI_API_KEY".into(), TEST_KEY.into()));
    let mut agent = Agent::spawn(&env, &["--config", &path_str(&config)]);
    let id = agent.open_session(&ws.project()).await;
    let (response, _) = agent.prompt(&id, "hi").await;
    let error = error_of(&response);
    assert_eq!(error["_meta"]["tandem"]["class"], "connection");
    let message = error["message"].as_str().unwrap();
    assert!(
        message.contains("could not reach the model server")
            && message.contains("after 2 attempts"),
        "{message}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_key_is_auth_required_naming_the_variable() {
    let ws = Workspace::new();
    // The OpenAI default endpoint needs a key and none is set.
    let mut agent = Agent::spawn(&ws.base_env(), &[]);
    let init = agent.initialize().await;
    assert_eq!(init["authMethods"][0]["id"], "api-key");
    let response = agent
        .request(
            "session/new",
            json!({"cwd": ws.project(), "mcpServers": []}),
        )
        .await;
    let error = error_of(&response);
    assert_eq!(error["code"], -32000);
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("set OPENAI_API_KEY"),
        "{error}"
    );
    assert_eq!(error["_meta"]["tandem"]["class"], "missing_api_key");
    let auth = agent
        .request("authenticate", json!({"methodId": "api-key"}))
        .await;
    assert_eq!(error_of(&auth)["code"], -32000);
    // Still up and answering.
    let again = agent
        .request(
            "session/new",
            json!({"cwd": ws.project(), "mcpServers": []}),
        )
        .await;
    assert_eq!(error_of(&again)["code"], -32000);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_key_never_reaches_logs_or_stdout() {
    let mock = MockModel::start(vec![
        Reply::status(401, r#"{"error":{"message":"bad key"}}"#),
        Reply::text(&["hi"]),
    ])
    .await;
    let ws = Workspace::new();
    let mut env = ws.env(&mock);
    env.retain(|(k, _)| k != "RUST_LOG");
    env.push(("RUST_LOG".into(), "trace".into()));
    let mut agent = Agent::spawn(&env, &[]);
    let id = agent.open_session(&ws.project()).await;
    agent.prompt(&id, "one").await;
    agent.prompt(&id, "two").await;
    let stdout = agent.stdout_lines().join("\n");
    let (_, stderr) = agent.shutdown().await;
    assert!(
        stderr.contains("model request"),
        "trace logging was on: {stderr}"
    );
    assert!(!stderr.contains(TEST_KEY), "key leaked to stderr");
    assert!(!stdout.contains(TEST_KEY), "key leaked to stdout");
}

/// Some clients (toad) show only `error.data.details`: every error carries one, in words,
/// whoever raised it (a handler, the SDK, the transport), and keeps its other data.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_error_has_readable_details() {
    let body = r#"{"error":{"message":"overloaded"}}"#;
    let (_mock, ws, mut agent, session) = started(vec![Reply::status(503, body)], 1).await;
    let mut errors = Vec::new();
    let (response, _) = agent.prompt(&session, "hi").await;
    errors.push(error_of(&response).clone());
    for (method, params) in [
        ("tandem/nonsense", json!({})),
        (
            "session/prompt",
            json!({"sessionId": "ghost", "prompt": []}),
        ),
        ("session/new", json!({"cwd": 7})),
        (
            "session/load",
            json!({"sessionId": "nope", "cwd": ws.project(), "mcpServers": []}),
        ),
    ] {
        let response = agent.request(method, params).await;
        errors.push(error_of(&response).clone());
    }
    agent.send_line("{not json").await;
    errors.push(agent.next_message().await["error"].clone());
    for error in &errors {
        let details = error["data"]["details"].as_str().unwrap_or_default();
        assert!(details.len() > 8, "no readable details: {error}");
    }
    assert_eq!(
        errors[0]["_meta"]["tandem"]["class"], "server_error",
        "the classification is kept, on the error"
    );
    assert!(
        errors[0]["data"]["details"]
            .as_str()
            .unwrap()
            .contains("overloaded")
    );
}

/// -32000 means "authentication required" in ACP, and the client answers it with an auth
/// method; a provider set up without a key offers none, so its 401/403 is another error,
/// worded for what the user can do.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_keyless_provider_refused_is_not_auth_required() {
    let mock = MockModel::start(vec![Reply::status(401, r#"{"error":"no"}"#)]).await;
    let ws = Workspace::new();
    let mut env = ws.base_env();
    env.push(("TANDEM_PROVIDER".into(), "llamacpp".into()));
    env.push(("OPENAI_BASE_URL".into(), mock.base_url.clone()));
    env.push(("TANDEM_MODEL".into(), "local".into()));
    let mut agent = Agent::spawn(&env, &[]);
    let init = agent.initialize().await;
    assert_eq!(
        init["authMethods"],
        json!([]),
        "nothing to authenticate with"
    );
    let session = agent.new_session(&ws.project()).await["sessionId"]
        .as_str()
        .unwrap()
        .to_string();
    let (response, _) = agent.prompt(&session, "hi").await;
    let error = error_of(&response);
    assert_ne!(error["code"], -32000, "{error}");
    assert_eq!(error["code"], -32603);
    assert_eq!(error["_meta"]["tandem"]["class"], "access_denied");
    let message = error["message"].as_str().unwrap();
    assert!(message.contains("sent no API key"), "{message}");
    assert!(message.contains("LLAMACPP_API_KEY"), "{message}");
    still_usable(&mock, &mut agent, &session).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retry_after_given_as_an_http_date_is_honoured() {
    let at = std::time::SystemTime::now() + Duration::from_secs(2);
    let limited = Reply::status(
        429,
        r#"{"error":{"message":"slow down","type":"rate_limit"}}"#,
    )
    .header("retry-after", &httpdate::fmt_http_date(at));
    let (mock, _ws, mut agent, session) = started(vec![limited, Reply::text(&["fine"])], 4).await;
    let start = Instant::now();
    let (response, _) = agent.prompt(&session, "hi").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    assert_eq!(mock.requests().len(), 2);
    // The date has whole seconds: at least one of the two is waited, not the 10 ms policy.
    assert!(
        start.elapsed() >= Duration::from_millis(900),
        "Retry-After date honoured"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_web_page_instead_of_a_stream_says_the_base_url_is_likely_wrong() {
    let page = "<!DOCTYPE html>\n<html><head><title>Welcome to nginx!</title></head><body>hi</body></html>";
    let html = Reply::status(200, page).header("content-type", "text/html; charset=utf-8");
    let (_mock, _ws, mut agent, session) = started(vec![html, Reply::text(&["ok"])], 1).await;
    let (response, _) = agent.prompt(&session, "hi").await;
    let message = error_of(&response)["message"].as_str().unwrap().to_string();
    assert!(
        message.contains("answered with a web page (\"Welcome to nginx!\")")
            && message.contains("base URL"),
        "{message}"
    );
    assert!(!message.contains("closed the stream"), "{message}");
    // The session stays usable.
    let (response, _) = agent.prompt(&session, "again").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_that_never_ends_is_stopped_at_answer_secs() {
    let mock = MockModel::start(vec![
        // A chunk every 200 ms: never idle, never done within a second.
        Reply::text(&["drip "; 30]).slow(Duration::from_millis(200)),
        Reply::text(&["ok"]),
    ])
    .await;
    let ws = Workspace::new();
    let config = ws.write(
        "config.toml",
        "[retry]\nmax_attempts = 1\n[timeouts]\nanswer_secs = 1\nidle_secs = 5\n",
    );
    let mut agent = Agent::spawn(&ws.env(&mock), &["--config", &path_str(&config)]);
    let session = agent.open_session(&ws.project()).await;
    let (response, _) = agent.prompt(&session, "talk").await;
    let message = error_of(&response)["message"].as_str().unwrap().to_string();
    assert!(
        message.contains("still answering after") && message.contains("timeouts.answer_secs"),
        "{message}"
    );
    let (response, _) = agent.prompt(&session, "again").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
}
