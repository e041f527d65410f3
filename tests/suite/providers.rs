//! ACP's unstable `providers/*` (feature `acp-providers`, on in the tests): the editor lists
//! tandem's one model endpoint, `main`, and points new sessions at a server of its own, with
//! the key in the header its API reads and any other headers; `main` cannot be disabled.

use serde_json::json;

use crate::common::mock_model::Reply;
use crate::common::{Agent, MockModel, Workspace, assert_error};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_editor_lists_and_sets_the_model_server_for_new_sessions() {
    let first = MockModel::start(vec![Reply::text(&["from the first"])]).await;
    let second = MockModel::start(vec![Reply::text(&["from the second"])]).await;
    let ws = Workspace::new();
    let mut agent = Agent::spawn(&ws.env(&first), &[]);
    let init = agent.initialize().await;
    assert_eq!(init["agentCapabilities"]["providers"], json!({}), "{init}");
    let listed = agent.request_ok("providers/list", json!({})).await;
    let main = &listed["providers"][0];
    assert_eq!(main["providerId"], "main");
    assert_eq!(main["required"], true);
    assert_eq!(main["current"]["apiType"], "openai");
    assert_eq!(main["current"]["baseUrl"], first.base_url);
    let before = agent.open_session(&ws.project()).await;

    let base = second.base_url.clone();
    agent
        .request_ok(
            "providers/set",
            json!({"providerId": "main", "apiType": "openai", "baseUrl": base,
                   "headers": {"Authorization": "Bearer sk-editor-0123456789abcdef", "X-Route": "blue"}}),
        )
        .await;
    let listed = agent.request_ok("providers/list", json!({})).await;
    assert_eq!(listed["providers"][0]["current"]["baseUrl"], base.as_str());
    let after = agent.open_session(&ws.project()).await;
    let (response, _) = agent.prompt(&after, "hello").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    let sent = &second.requests()[0];
    assert_eq!(
        sent.authorization().as_deref(),
        Some("Bearer sk-editor-0123456789abcdef")
    );
    assert_eq!(sent.headers["x-route"], "blue");
    // A session opened before keeps its server.
    agent.prompt(&before, "hello").await;
    assert_eq!(first.requests().len(), 1);
    agent.assert_valid();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_tandem_cannot_take_is_refused_and_changes_nothing() {
    let mock = MockModel::start(vec![]).await;
    let ws = Workspace::new();
    let mut agent = Agent::spawn(&ws.env(&mock), &[]);
    agent.initialize().await;
    let set = |id: &str, api: &str, url: &str| json!({"providerId": id, "apiType": api, "baseUrl": url, "headers": {}});
    let cases = [
        (set("main", "bedrock", "https://example.com"), "apiType"),
        (set("main", "openai", "not a url"), "baseUrl"),
        (set("main", "openai", "file:///etc/passwd"), "http(s)"),
        (
            set("other", "openai", "https://example.com"),
            "unknown provider",
        ),
    ];
    for (params, needle) in cases {
        let answer = agent.request("providers/set", params).await;
        assert_error(&answer, -32602, needle);
    }
    let answer = agent
        .request("providers/disable", json!({"providerId": "main"}))
        .await;
    assert_error(&answer, -32602, "required");
    let listed = agent.request_ok("providers/list", json!({})).await;
    assert_eq!(listed["providers"][0]["current"]["baseUrl"], mock.base_url);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_users_own_key_never_goes_to_the_editors_server() {
    let first = MockModel::start(vec![Reply::text(&["first"])]).await;
    let second = MockModel::start(vec![Reply::text(&["second"])]).await;
    let ws = Workspace::new();
    let mut agent = Agent::spawn(&ws.env(&first), &[]);
    agent.initialize().await;
    let before = agent.open_session(&ws.project()).await;
    // No key among the editor's headers; one that names the user's key's variable is only
    // a header.
    agent
        .request_ok(
            "providers/set",
            json!({"providerId": "main", "apiType": "anthropic", "baseUrl": second.base_url,
                   "headers": {"Authorization": "Bearer not-for-anthropic", "X-Route": "green"}}),
        )
        .await;
    let after = agent.open_session(&ws.project()).await;
    agent.prompt(&after, "hello").await;
    let sent = &second.requests()[0];
    assert!(sent.path.ends_with("/messages"), "{}", sent.path);
    for (name, value) in &sent.headers {
        let value = value.to_str().unwrap_or_default();
        assert!(
            !value.contains(crate::common::TEST_KEY),
            "the user's key went to the editor's server in {name}"
        );
    }
    assert!(sent.headers.get("x-api-key").is_none());
    assert_eq!(sent.headers["x-route"], "green");
    // The session opened before still sends the user's key to the user's server.
    agent.prompt(&before, "hello").await;
    let own = first.requests()[0].authorization().unwrap_or_default();
    assert!(own.contains(crate::common::TEST_KEY), "{own}");
}
