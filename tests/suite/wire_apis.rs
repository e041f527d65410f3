//! The binary over Anthropic's Messages API and OpenAI's Responses API, against the mock that
//! speaks both and refuses what the real servers refuse: thinking blocks and reasoning items
//! sent back in order with their signatures and encrypted content through several tool
//! rounds, keys in each API's own header, cache breakpoints, a reload, and errors.

use serde_json::{Value, json};

use crate::common::contract::deepseek_round;
use crate::common::mock_model::Recorded;
use crate::common::{Agent, MockModel, Reply, TEST_KEY, Workspace, fnv_hex, session_with_env};

fn read(id: &str, path: &str) -> (&'static str, &'static str, Value) {
    let id: &'static str = Box::leak(id.to_string().into_boxed_str());
    (id, "read_file", json!({ "path": path }))
}

/// A session over `api` with a reasoning model, its answers `script`.
async fn session(
    api: &str,
    model: &str,
    script: Vec<Reply>,
) -> (MockModel, Workspace, Agent, String) {
    let vars = vec![
        ("TANDEM_API".to_string(), api.to_string()),
        ("TANDEM_MODEL".to_string(), model.to_string()),
    ];
    let (mock, ws, agent, session, _editor) =
        session_with_env("small", script, json!({}), "ask", |_| vars).await;
    (mock, ws, agent, session)
}

/// Three rounds of thinking and reading, then an answer.
fn rounds() -> Vec<Reply> {
    vec![
        deepseek_round("First the readme.", &[read("t1", "README.md")]),
        deepseek_round(
            "Now the sources.",
            &[read("t2", "src/lib.rs"), read("t3", "src/main.rs")],
        ),
        deepseek_round("One more look.", &[read("t4", "README.md")]),
        Reply::text(&["All read."]),
    ]
}

async fn finishes(agent: &mut Agent, session: &str, text: &str) -> Vec<Value> {
    let (response, updates) = agent.prompt(session, text).await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    updates
}

fn header(r: &Recorded, name: &str) -> Option<String> {
    r.headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(String::from)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn messages_thinking_goes_back_signed_through_every_tool_round() {
    let (mock, ws, mut agent, session) =
        session("anthropic-messages", "claude-sonnet-4-5", rounds()).await;
    let updates = finishes(&mut agent, &session, "look at the project").await;
    assert_eq!(
        crate::common::joined(&updates, "agent_thought_chunk"),
        "First the readme.Now the sources.One more look."
    );
    let requests = mock.requests();
    assert_eq!(requests.len(), 4);
    for r in &requests {
        assert!(r.path.ends_with("/v1/messages"), "{}", r.path);
        assert_eq!(header(r, "x-api-key").as_deref(), Some(TEST_KEY));
        assert_eq!(
            header(r, "anthropic-version").as_deref(),
            Some("2023-06-01")
        );
        assert!(
            r.authorization().is_none(),
            "the key goes in x-api-key only"
        );
        assert_eq!(r.body["thinking"]["type"], "enabled");
        assert!(r.body["max_tokens"].as_u64() > r.body["thinking"]["budget_tokens"].as_u64());
        assert!(
            r.body["messages"]
                .as_array()
                .unwrap()
                .iter()
                .all(|m| m["role"] != "system")
        );
    }
    let last = &requests[3].body;
    let answers: Vec<&Value> = last["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "assistant")
        .collect();
    for (answer, thought) in
        answers
            .iter()
            .zip(["First the readme.", "Now the sources.", "One more look."])
    {
        let first = &answer["content"][0];
        assert_eq!(first["type"], "thinking");
        assert_eq!(first["thinking"], thought);
        assert_eq!(first["signature"], format!("sig-{}", fnv_hex(thought)));
    }
    // The fixed start and the moving end are cache breakpoints; the mock allows four.
    assert!(
        last["system"][0]["cache_control"].is_object(),
        "{}",
        last["system"]
    );
    let messages = last["messages"].as_array().unwrap();
    let end = messages.last().unwrap()["content"]
        .as_array()
        .unwrap()
        .last()
        .unwrap();
    assert!(end["cache_control"].is_object(), "{end}");

    // A reload in a new process goes on with the signed thinking still attached.
    drop(agent);
    mock.push(deepseek_round("Again.", &[read("t5", "README.md")]));
    mock.push(Reply::text(&["ok"]));
    let mut agent = Agent::spawn(
        &reload_env(&ws, &mock, "anthropic-messages", "claude-sonnet-4-5"),
        &[],
    );
    agent.initialize().await;
    agent
        .open_stored("session/load", &session, &ws.project())
        .await;
    finishes(&mut agent, &session, "and again").await;
    assert_eq!(mock.requests().len(), 6, "the mock took every request");
    agent.assert_valid();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn responses_reasoning_items_go_back_encrypted_through_every_tool_round() {
    let (mock, ws, mut agent, session) = session("responses", "o4-mini", rounds()).await;
    let updates = finishes(&mut agent, &session, "look at the project").await;
    assert_eq!(
        crate::common::joined(&updates, "agent_thought_chunk"),
        "First the readme.Now the sources.One more look."
    );
    let requests = mock.requests();
    assert_eq!(requests.len(), 4);
    for r in &requests {
        assert!(r.path.ends_with("/v1/responses"), "{}", r.path);
        assert_eq!(r.authorization(), Some(format!("Bearer {TEST_KEY}")));
        assert_eq!(r.body["store"], false);
        assert_eq!(r.body["include"], json!(["reasoning.encrypted_content"]));
        assert!(r.body["instructions"].as_str().unwrap().len() > 100);
    }
    let input = requests[3].body["input"].as_array().unwrap().clone();
    let kinds: Vec<&str> = input.iter().map(|i| i["type"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        [
            "message",
            "reasoning",
            "function_call",
            "function_call_output",
            "reasoning",
            "function_call",
            "function_call",
            "function_call_output",
            "function_call_output",
            "reasoning",
            "function_call",
            "function_call_output"
        ]
    );
    assert_eq!(
        input[1]["encrypted_content"],
        format!("enc-{}", fnv_hex("First the readme."))
    );

    drop(agent);
    mock.push(deepseek_round("Again.", &[read("t5", "README.md")]));
    mock.push(Reply::text(&["ok"]));
    let mut agent = Agent::spawn(&reload_env(&ws, &mock, "responses", "o4-mini"), &[]);
    agent.initialize().await;
    agent
        .open_stored("session/load", &session, &ws.project())
        .await;
    finishes(&mut agent, &session, "and again").await;
    assert_eq!(mock.requests().len(), 6);
    agent.assert_valid();
}

fn reload_env(ws: &Workspace, mock: &MockModel, api: &str, model: &str) -> Vec<(String, String)> {
    let mut env = ws.env(mock);
    env.retain(|(k, _)| k != "TANDEM_MODEL");
    env.push(("TANDEM_API".into(), api.into()));
    env.push(("TANDEM_MODEL".into(), model.into()));
    env
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_apis_refusal_is_a_clear_error_and_the_session_goes_on() {
    for (api, path, body) in [
        (
            "anthropic-messages",
            "/v1/messages",
            r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens > 200000 maximum"}}"#,
        ),
        (
            "responses",
            "/v1/responses",
            r#"{"error":{"message":"Your organization must be verified to use the model `o3`.","type":"invalid_request_error","param":null,"code":null}}"#,
        ),
    ] {
        let script = vec![Reply::status(403, body), Reply::text(&["fine"])];
        let (mock, _ws, mut agent, session) = session(api, "some-model", script).await;
        let (response, _) = agent.prompt(&session, "hi").await;
        let message = response["error"]["message"].as_str().unwrap_or_default();
        let said = if api == "responses" {
            "organization must be verified"
        } else {
            "prompt is too long"
        };
        assert!(message.contains(said), "{api}: {response}");
        assert!(mock.requests()[0].path.ends_with(path));
        let updates = finishes(&mut agent, &session, "again").await;
        assert_eq!(
            crate::common::joined(&updates, "agent_message_chunk"),
            "fine"
        );
        agent.assert_valid();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn models_on_two_servers_side_by_side_each_with_its_own_api_and_key() {
    let local = MockModel::start(vec![Reply::text(&["from the local one"])]).await;
    let hosted = MockModel::start(vec![Reply::text(&["from the hosted one"])]).await;
    let ws = Workspace::new();
    ws.write(
        "home/.config/tandem/config.toml",
        &format!(
            "[[providers]]\nname = \"hosted\"\nbase_url = \"{}\"\napi = \"anthropic-messages\"\napi_key_env = \"HOSTED_KEY\"\n\n\
             [[models]]\nid = \"mock-model\"\n\n[[models]]\nid = \"claude-sonnet-4-5\"\nprovider = \"hosted\"\n",
            hosted.base_url
        ),
    );
    let mut env = ws.env(&local);
    env.push(("HOSTED_KEY".into(), "sk-hosted-0123456789".into()));
    let mut agent = Agent::spawn(&env, &[]);
    let session = agent.open_session(&ws.project()).await;
    let updates = finishes(&mut agent, &session, "hi local").await;
    assert_eq!(
        crate::common::joined(&updates, "agent_message_chunk"),
        "from the local one"
    );
    let switched = agent
        .set_option(&session, "model", "claude-sonnet-4-5")
        .await;
    assert!(switched.get("result").is_some(), "{switched}");
    let updates = finishes(&mut agent, &session, "hi hosted").await;
    assert_eq!(
        crate::common::joined(&updates, "agent_message_chunk"),
        "from the hosted one"
    );

    assert_eq!(
        local.requests().len(),
        1,
        "the local server got only its model's request"
    );
    let sent = &hosted.requests()[0];
    assert!(sent.path.ends_with("/v1/messages"), "{}", sent.path);
    assert_eq!(
        header(sent, "x-api-key").as_deref(),
        Some("sk-hosted-0123456789")
    );
    assert!(sent.authorization().is_none());
    assert!(
        !sent.body.to_string().contains(TEST_KEY),
        "the default key stays home"
    );
    let local_sent = &local.requests()[0];
    assert_eq!(
        local_sent.authorization(),
        Some(format!("Bearer {TEST_KEY}"))
    );
    // The conversation goes on: the local model's answer is in the hosted one's history.
    assert!(
        sent.body["messages"]
            .to_string()
            .contains("from the local one")
    );
    agent.assert_valid();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redirect_to_another_server_takes_neither_the_key_nor_the_conversation() {
    let elsewhere = MockModel::start(vec![Reply::text(&["stolen"])]).await;
    let target = format!("{}/messages", elsewhere.base_url);
    let script = vec![
        Reply::status(307, "").header("location", &target),
        Reply::text(&["fine"]),
    ];
    let (mock, _ws, mut agent, session) =
        session("anthropic-messages", "claude-sonnet-4-5", script).await;
    let (response, _) = agent.prompt(&session, "a secret plan").await;
    assert!(response.get("error").is_some(), "{response}");
    assert!(
        elsewhere.requests().is_empty(),
        "nothing reached the other server"
    );
    assert!(elsewhere.asked().is_empty());
    assert_eq!(mock.requests().len(), 1);
    let updates = finishes(&mut agent, &session, "again").await;
    assert_eq!(
        crate::common::joined(&updates, "agent_message_chunk"),
        "fine"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_models_output_limit_goes_with_each_of_its_requests() {
    let mock = MockModel::start(vec![Reply::text(&["short"])]).await;
    let ws = Workspace::new();
    ws.write(
        "home/.config/tandem/config.toml",
        "[[models]]\nid = \"mock-model\"\nmax_output_tokens = 500\n",
    );
    let mut agent = Agent::spawn(&ws.env(&mock), &[]);
    let session = agent.open_session(&ws.project()).await;
    finishes(&mut agent, &session, "hi").await;
    assert_eq!(mock.requests()[0].body["max_tokens"], 500);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_shows_the_models_profile_and_usage_its_cost() {
    let mock = MockModel::start(vec![Reply::text(&["one"]), Reply::text(&["two"])]).await;
    // The server's list prices the model (OpenRouter's form: dollars per token).
    mock.serve_info(
        "/v1/models",
        200,
        json!({"data": [{"id": "listed-model", "pricing": {"prompt": "0.000002", "completion": "0.00001"}}]}),
    );
    let ws = Workspace::new();
    ws.write(
        "home/.config/tandem/config.toml",
        "[[models]]\nid = \"mock-model\"\nmax_output_tokens = 900\nprice = { input = 3.0, output = 15.0, cached_input = 0.3 }\n\n[[models]]\nid = \"listed-model\"\n",
    );
    let mut agent = Agent::spawn(&ws.env(&mock), &[]);
    let session = agent.open_session(&ws.project()).await;
    finishes(&mut agent, &session, "hi").await;
    let status = agent.request_ok("_tandem/status", json!({})).await;
    let profile = &status["sessions"][0]["profile"];
    assert_eq!(profile["api"], "chat-completions", "{profile}");
    assert_eq!(profile["maxOutputTokens"], 900);
    assert_eq!(
        profile["price"],
        json!({"input": 3.0, "cachedInput": 0.3, "output": 15.0, "source": "config"})
    );
    assert!(profile["stateKept"].as_str().unwrap().contains("reasoning"));
    let usage = agent
        .request_ok("_tandem/usage", json!({"sessionId": session}))
        .await;
    // Reply::text reports 100 prompt tokens and one per piece.
    let cost = usage["costUsd"].as_f64().unwrap();
    assert!((cost - (100.0 * 3.0 + 15.0) / 1e6).abs() < 1e-12, "{usage}");

    agent.set_option(&session, "model", "listed-model").await;
    finishes(&mut agent, &session, "again").await;
    let status = agent.request_ok("_tandem/status", json!({})).await;
    let price = &status["sessions"][0]["profile"]["price"];
    assert!(
        (price["input"].as_f64().unwrap() - 2.0).abs() < 1e-9,
        "{price}"
    );
    assert!(
        (price["output"].as_f64().unwrap() - 10.0).abs() < 1e-9,
        "{price}"
    );
    assert_eq!(price["source"], "server");
    agent.assert_valid();
}
