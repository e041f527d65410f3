//! What a session costs: each request at its own model's price, or the server's own figure
//! (OpenRouter's `usage.cost`) when it gives one; told in `usage_update.cost` as the session
//! goes, in `_tandem/usage`, and per turn in the prompt's answer (`usage`, unstable in ACP).

use serde_json::{Value, json};

use crate::common::mock_model::{self, Reply};
use crate::common::{Agent, MockModel, Workspace, of_kind};

/// An answer of `text` whose usage chunk reports `prompt`/`completion` tokens, and `cost`
/// when given.
fn answer(text: &str, prompt: u64, completion: u64, cost: Option<f64>) -> Reply {
    let mut usage = mock_model::usage(prompt, completion);
    if let Some(cost) = cost {
        usage["usage"]["cost"] = json!(cost);
    }
    Reply::chunks(vec![
        mock_model::text(text),
        mock_model::finish("stop"),
        usage,
    ])
}

async fn started(script: Vec<Reply>) -> (MockModel, Workspace, Agent, String) {
    let mock = MockModel::start(script).await;
    let ws = Workspace::new();
    ws.write(
        "home/.config/tandem/config.toml",
        "[[models]]\nid = \"mock-model\"\nprice = { input = 2.0, output = 10.0 }\n\n[[models]]\nid = \"unpriced\"\n",
    );
    let mut agent = Agent::spawn(&ws.env(&mock), &[]);
    let id = agent.open_session(&ws.project()).await;
    (mock, ws, agent, id)
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-12
}

fn cost_of(updates: &[Value]) -> Option<f64> {
    of_kind(updates, "usage_update").last().unwrap()["cost"]["amount"].as_f64()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_request_is_costed_at_its_own_models_price_or_the_servers_figure() {
    let (_mock, _ws, mut agent, id) = started(vec![
        answer("one", 1000, 100, None),
        answer("two", 1000, 100, Some(0.5)),
        answer("three", 1000, 100, None),
    ])
    .await;
    // 1000 in at $2/M and 100 out at $10/M.
    let first = 1000.0 * 2.0 / 1e6 + 100.0 * 10.0 / 1e6;
    let (response, updates) = agent.prompt(&id, "one").await;
    assert!(close(cost_of(&updates).unwrap(), first), "{updates:#?}");
    let update = of_kind(&updates, "usage_update").last().copied().unwrap();
    assert_eq!(update["cost"]["currency"], "USD");
    let turn = &response["result"]["usage"];
    assert_eq!(turn["inputTokens"], 1000, "{response}");
    assert_eq!(turn["outputTokens"], 100);
    assert_eq!(turn["totalTokens"], 1100);

    // The server's own figure wins over the price.
    let (_, updates) = agent.prompt(&id, "two").await;
    assert!(close(cost_of(&updates).unwrap(), first + 0.5));

    // A model with no price: its request is left out, and said to be.
    agent.set_option(&id, "model", "unpriced").await;
    let (_, updates) = agent.prompt(&id, "three").await;
    assert!(close(cost_of(&updates).unwrap(), first + 0.5));
    let usage = agent
        .request_ok("_tandem/usage", json!({"sessionId": id}))
        .await;
    assert!(
        close(usage["costUsd"].as_f64().unwrap(), first + 0.5),
        "{usage}"
    );
    assert_eq!(usage["unpricedRequests"], 1);
    assert_eq!(usage["requests"], 3);
    agent.assert_valid();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_any_price_no_cost_is_claimed() {
    let (_mock, _ws, mut agent, id) = started(vec![answer("one", 10, 1, None)]).await;
    agent.set_option(&id, "model", "unpriced").await;
    let (response, updates) = agent.prompt(&id, "one").await;
    assert!(cost_of(&updates).is_none(), "{updates:#?}");
    assert_eq!(response["result"]["usage"]["totalTokens"], 11);
    let usage = agent
        .request_ok("_tandem/usage", json!({"sessionId": id}))
        .await;
    assert!(usage.get("costUsd").is_none(), "{usage}");
    assert_eq!(usage["unpricedRequests"], 1);
}

/// A vendor's well-known model at the vendor's own API is priced from the built-in table (and
/// says so); the same model id at any other server is not.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_vendors_listed_model_is_priced_from_the_built_in_table_only_at_its_api() {
    let price_at = |base_url: &'static str| async move {
        let ws = Workspace::new();
        let mut env = ws.base_env();
        env.push(("OPENAI_BASE_URL".into(), base_url.into()));
        env.push(("OPENAI_API_KEY".into(), "sk-test-not-a-real-key".into()));
        env.push(("TANDEM_MODEL".into(), "gpt-4o-mini".into()));
        let mut agent = Agent::spawn(&env, &[]);
        agent.open_session(&ws.project()).await;
        let status = agent.request_ok("_tandem/status", json!({})).await;
        agent.assert_valid();
        status["sessions"][0]["profile"]["price"].clone()
    };
    let at_openai = price_at("https://api.openai.com/v1").await;
    assert_eq!(at_openai["input"], 0.15, "{at_openai}");
    assert_eq!(at_openai["cachedInput"], 0.075);
    assert_eq!(at_openai["output"], 0.6);
    assert!(
        at_openai["source"]
            .as_str()
            .unwrap()
            .starts_with("built-in (vendor prices as of 20"),
        "{at_openai}"
    );
    let elsewhere = price_at("http://127.0.0.1:9/v1").await;
    assert!(elsewhere.is_null(), "{elsewhere}");
}

/// Cached prompt tokens are read wherever the server reports them: OpenAI's
/// `prompt_tokens_details.cached_tokens`, DeepSeek's `prompt_cache_hit_tokens` (beside
/// `prompt_cache_miss_tokens`), Moonshot's (Kimi's) `cached_tokens` at the top of `usage`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cached_tokens_count_in_each_providers_usage_shape() {
    let with = |text: &str, usage: Value| {
        Reply::chunks(vec![
            mock_model::text(text),
            mock_model::finish("stop"),
            json!({"id": "chatcmpl-mock", "object": "chat.completion.chunk", "created": 0,
                   "model": "mock", "choices": [], "usage": usage}),
        ])
    };
    let (_mock, _ws, mut agent, id) = started(vec![
        with(
            "deepseek",
            json!({"prompt_tokens": 1000, "completion_tokens": 10, "total_tokens": 1010,
                   "prompt_cache_hit_tokens": 600, "prompt_cache_miss_tokens": 400}),
        ),
        with(
            "kimi",
            json!({"prompt_tokens": 1000, "completion_tokens": 10, "total_tokens": 1010,
                   "cached_tokens": 300}),
        ),
        with(
            "openai",
            json!({"prompt_tokens": 1000, "completion_tokens": 10, "total_tokens": 1010,
                   "prompt_tokens_details": {"cached_tokens": 100}}),
        ),
    ])
    .await;
    for (prompt, total) in [("deepseek", 600), ("kimi", 900), ("openai", 1000)] {
        let (response, _) = agent.prompt(&id, prompt).await;
        assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
        let usage = agent
            .request_ok("_tandem/usage", json!({"sessionId": id}))
            .await;
        assert_eq!(usage["cachedTokens"], total, "after {prompt}: {usage}");
    }
}
