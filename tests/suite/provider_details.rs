//! What providers expect of a request beyond the shape of their wire API — settings by model
//! family, the window a model list gives, cache keys, item ids, beta headers — held against
//! the mock that enforces it.

use serde_json::{Value, json};

use crate::common::anthropic_wire::betas;
use crate::common::contract::deepseek_round;
use crate::common::mock_model::Recorded;
use crate::common::{Agent, MockModel, Reply, Workspace, of_kind};

/// `ws`'s environment for an agent talking to `mock` in `api`, its default model `model`.
fn env_for(ws: &Workspace, mock: &MockModel, api: &str, model: &str) -> Vec<(String, String)> {
    let mut env = ws.env(mock);
    env.retain(|(k, _)| k != "TANDEM_MODEL");
    env.push(("TANDEM_API".into(), api.into()));
    env.push(("TANDEM_MODEL".into(), model.into()));
    env
}

fn option<'a>(options: &'a Value, id: &str) -> Option<&'a Value> {
    options.as_array()?.iter().find(|o| o["id"] == id)
}

fn ended(response: &Value) {
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
}

/// With no models in the config, the editor picks from the server's `/models`: a model of a
/// known reasoning family gets the reasoning-effort option and its request the family's
/// reasoning settings (`reasoning` with encrypted content on the Responses API, `thinking` on
/// the Messages API); a model of no such family gets neither.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_picked_from_the_servers_list_gets_its_familys_reasoning() {
    for (api, reasoning_model) in [
        ("responses", "gpt-5.1"),
        ("anthropic-messages", "claude-sonnet-4-5"),
    ] {
        let mock = MockModel::start(vec![Reply::text(&["a"]), Reply::text(&["b"])]).await;
        let listed = json!({"object": "list", "data": [
            {"id": "mock-model"}, {"id": reasoning_model}, {"id": "llama3"}]});
        mock.serve_info("/v1/models", 200, listed);
        let ws = Workspace::new();
        let mut agent = Agent::spawn(&env_for(&ws, &mock, api, "mock-model"), &[]);
        let session = agent.open_session(&ws.project()).await;

        let set = agent.set_option(&session, "model", reasoning_model).await;
        let options = &set["result"]["configOptions"];
        let effort = option(options, "reasoning_effort")
            .unwrap_or_else(|| panic!("{api}: no reasoning option for {reasoning_model}: {set}"));
        assert_eq!(effort["currentValue"], "medium");
        agent.set_option(&session, "reasoning_effort", "high").await;
        ended(&agent.prompt(&session, "think").await.0);
        let sent = &mock.requests()[0].body;
        assert_eq!(sent["model"], reasoning_model);
        if api == "responses" {
            assert_eq!(sent["reasoning"]["effort"], "high", "{sent}");
            assert_eq!(sent["include"], json!(["reasoning.encrypted_content"]));
        } else {
            assert_eq!(sent["thinking"]["type"], "enabled", "{sent}");
            assert_eq!(sent["thinking"]["budget_tokens"], 16_384);
        }

        let set = agent.set_option(&session, "model", "llama3").await;
        assert!(
            option(&set["result"]["configOptions"], "reasoning_effort").is_none(),
            "{api}: {set}"
        );
        ended(&agent.prompt(&session, "plain").await.0);
        let sent = &mock.requests()[1].body;
        assert_eq!(sent["model"], "llama3");
        assert!(sent.get("reasoning").is_none() && sent.get("thinking").is_none());
        assert!(sent.get("include").is_none(), "{sent}");
        agent.assert_valid();
    }
}

/// Mistral's `/v1/models` gives each model's window as `max_context_length`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mistrals_model_list_gives_the_window() {
    let mock = MockModel::start(vec![Reply::text(&["hi"])]).await;
    mock.serve_info(
        "/v1/models",
        200,
        json!({"object": "list", "data": [{
            "id": "mock-model", "object": "model", "created": 1_756_000_000,
            "owned_by": "mistralai", "name": "mock-model", "description": "A Mistral model",
            "capabilities": {"completion_chat": true, "function_calling": true, "vision": false},
            "max_context_length": 32768, "aliases": [], "deprecation": null,
            "default_model_temperature": 0.7, "type": "base"}]}),
    );
    let ws = Workspace::new();
    let mut agent = Agent::spawn(&ws.env(&mock), &[]);
    let session = agent.open_session(&ws.project()).await;
    let (answer, updates) = agent.prompt(&session, "hi").await;
    ended(&answer);
    let size = &of_kind(&updates, "usage_update").last().unwrap()["size"];
    assert_eq!(size, 32768, "{updates:?}");
    let usage = agent
        .request_ok("_tandem/usage", json!({"sessionId": session}))
        .await;
    assert_eq!(usage["contextWindow"], 32768, "{usage}");
}

/// Every Responses request of a session — each tool round, each prompt — carries the session
/// id as `prompt_cache_key`, so OpenAI serves them from one cache; another session's
/// requests carry its own.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_responses_request_names_its_session_as_the_cache_key() {
    let mock = MockModel::start(vec![
        Reply::tools(&[("c1", "list_dir", json!({"path": "."}))]),
        Reply::text(&["listed"]),
        Reply::text(&["other session"]),
        Reply::text(&["again"]),
    ])
    .await;
    let ws = Workspace::new();
    let mut env = env_for(&ws, &mock, "responses", "gpt-4.1");
    env.push(("TANDEM_MODE".into(), "full-access".into()));
    let mut agent = Agent::spawn(&env, &[]);
    let first = agent.open_session(&ws.project()).await;
    let second = agent.new_session(&ws.project()).await["sessionId"]
        .as_str()
        .unwrap()
        .to_string();
    ended(&agent.prompt(&first, "list").await.0);
    ended(&agent.prompt(&second, "hello").await.0);
    ended(&agent.prompt(&first, "again").await.0);
    let keys: Vec<Value> = mock
        .requests()
        .iter()
        .map(|r| r.body["prompt_cache_key"].clone())
        .collect();
    assert_eq!(
        keys,
        [json!(first), json!(first), json!(second), json!(first)],
        "{first} / {second}"
    );
    assert_ne!(first, second);
}

/// A Claude 4 model that thinks and is offered tools is sent Anthropic's interleaved-thinking
/// beta, so it may think between its tool calls; Claude 3.7 is not, nor a request without
/// tools (the summary a compaction asks for). An `anthropic-beta` the editor configured keeps
/// its betas and gains this one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_4_thinking_with_tools_asks_for_interleaved_thinking() {
    let mock = MockModel::start(vec![
        Reply::text(&["four"]),
        Reply::text(&["three"]),
        Reply::text(&["again"]),
        Reply::text(&["The summary."]),
        Reply::text(&["configured"]),
    ])
    .await;
    let ws = Workspace::new();
    let mut env = env_for(&ws, &mock, "anthropic-messages", "claude-sonnet-4-5");
    env.push((
        "TANDEM_MODELS".into(),
        "claude-sonnet-4-5,claude-3-7-sonnet-latest".into(),
    ));
    let mut agent = Agent::spawn(&env, &[]);
    let session = agent.open_session(&ws.project()).await;
    ended(&agent.prompt(&session, "hi").await.0);
    agent
        .set_option(&session, "model", "claude-3-7-sonnet-latest")
        .await;
    ended(&agent.prompt(&session, "hi").await.0);
    agent
        .set_option(&session, "model", "claude-sonnet-4-5")
        .await;
    ended(&agent.prompt(&session, "hi").await.0);
    ended(&agent.prompt(&session, "/compact").await.0);
    let requests = mock.requests();
    assert_eq!(requests.len(), 4);
    for r in &requests {
        assert!(r.path.ends_with("/messages"), "{}", r.path);
    }
    let interleaved = vec!["interleaved-thinking-2025-05-14".to_string()];
    assert_eq!(requests[0].body["thinking"]["type"], "enabled");
    assert!(
        requests[0].body["tools"]
            .as_array()
            .is_some_and(|t| !t.is_empty())
    );
    assert_eq!(betas(&requests[0]), interleaved);
    assert_eq!(requests[1].body["thinking"]["type"], "enabled");
    assert!(betas(&requests[1]).is_empty(), "Claude 3.7");
    assert_eq!(betas(&requests[2]), interleaved);
    assert!(requests[3].body.get("tools").is_none());
    assert!(betas(&requests[3]).is_empty(), "no tools");

    // The editor's own beta stays, and interleaved thinking joins it.
    agent
        .request_ok(
            "providers/set",
            json!({"providerId": "main", "apiType": "anthropic", "baseUrl": mock.base_url,
                   "headers": {"x-api-key": crate::common::TEST_KEY,
                               "anthropic-beta": "prompt-caching-2024-07-31"}}),
        )
        .await;
    let configured = agent.new_session(&ws.project()).await["sessionId"]
        .as_str()
        .unwrap()
        .to_string();
    ended(&agent.prompt(&configured, "hi").await.0);
    let last = mock.requests().last().unwrap().clone();
    assert_eq!(
        betas(&last),
        [
            "prompt-caching-2024-07-31",
            "interleaved-thinking-2025-05-14"
        ]
    );
    agent.assert_valid();
}

/// Reasoning items go back with their encrypted content and without their `rs_` ids: with
/// `store: false` nothing is stored under an id, and OpenAI refuses an input item that names
/// one (404). The transcript keeps what the server sent, so a reloaded session's items are
/// stripped on the way out too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reasoning_items_go_back_without_their_ids_also_after_a_reload() {
    let round = |thought: &str, id: &str| {
        deepseek_round(thought, &[(id, "read_file", json!({"path": "README.md"}))])
    };
    let mock = MockModel::start(vec![round("Read it first.", "t1"), Reply::text(&["Read."])]).await;
    let ws = Workspace::new();
    ws.write("project/README.md", "hello\n");
    let mut env = env_for(&ws, &mock, "responses", "o4-mini");
    env.push(("TANDEM_MODE".into(), "full-access".into()));
    let mut agent = Agent::spawn(&env, &[]);
    let session = agent.open_session(&ws.project()).await;
    let (response, _) = agent.prompt(&session, "read the readme").await;
    ended(&response);
    drop(agent);

    mock.push(round("Once more.", "t2"));
    mock.push(Reply::text(&["Read again."]));
    let mut agent = Agent::spawn(&env, &[]);
    agent.initialize().await;
    agent
        .open_stored("session/load", &session, &ws.project())
        .await;
    ended(&agent.prompt(&session, "and again").await.0);
    let requests = mock.requests();
    assert_eq!(requests.len(), 4);
    let reasoning = |r: &Recorded| -> Vec<Value> {
        r.body["input"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|i| i["type"] == "reasoning")
            .cloned()
            .collect()
    };
    for (n, expected) in [(1, 1), (2, 1), (3, 2)] {
        let items = reasoning(&requests[n]);
        assert_eq!(items.len(), expected, "request {n}: {items:?}");
        for item in items {
            assert!(item.get("id").is_none(), "request {n}: {item}");
            assert!(item["encrypted_content"].is_string(), "{item}");
        }
    }
    agent.assert_valid();
}
