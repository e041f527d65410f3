//! Model and mode switches through config options and modes take effect on the next request.

use std::time::Duration;

use serde_json::{Value, json};

use crate::common::{
    Agent, MockModel, Reply, Workspace, assert_error, filling_the_window, of_kind, path_str,
    response, small_window,
};

async fn agent_with_models(script: Vec<Reply>) -> (MockModel, Workspace, Agent, String) {
    let mock = MockModel::start(script).await;
    let ws = Workspace::new();
    let mut env = ws.env(&mock);
    env.push((
        "TANDEM_MODELS".into(),
        "mock-model,o3-mini,other-model".into(),
    ));
    let mut agent = Agent::spawn(&env, &[]);
    let id = agent.open_session(&ws.project()).await;
    (mock, ws, agent, id)
}

fn option<'a>(options: &'a Value, id: &str) -> Option<&'a Value> {
    options.as_array().unwrap().iter().find(|o| o["id"] == id)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn switching_the_model_changes_the_next_request() {
    let (mock, _ws, mut agent, session) =
        agent_with_models(vec![Reply::text(&["a"]), Reply::text(&["b"])]).await;
    agent.prompt(&session, "first").await;
    let result = agent.set_option(&session, "model", "other-model").await["result"].clone();
    assert_eq!(
        option(&result["configOptions"], "model").unwrap()["currentValue"],
        "other-model"
    );
    agent.prompt(&session, "second").await;
    let requests = mock.requests();
    assert_eq!(requests[0].body["model"], "mock-model");
    assert_eq!(requests[1].body["model"], "other-model");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reasoning_effort_is_offered_and_sent_for_models_that_take_it() {
    let (mock, _ws, mut agent, session) =
        agent_with_models(vec![Reply::text(&["a"]), Reply::text(&["b"])]).await;
    let result = agent.set_option(&session, "model", "o3-mini").await["result"].clone();
    let effort = option(&result["configOptions"], "reasoning_effort").expect("offered for o3-mini");
    assert_eq!(effort["category"], "thought_level");
    assert_eq!(effort["currentValue"], "medium");
    let result = agent.set_option(&session, "reasoning_effort", "high").await["result"].clone();
    assert_eq!(
        option(&result["configOptions"], "reasoning_effort").unwrap()["currentValue"],
        "high"
    );
    agent.prompt(&session, "think hard").await;
    assert_eq!(mock.requests()[0].body["reasoning_effort"], "high");
    // Back to a model without it: the option disappears and nothing is sent.
    let result = agent.set_option(&session, "model", "mock-model").await["result"].clone();
    assert!(option(&result["configOptions"], "reasoning_effort").is_none());
    agent.prompt(&session, "plain").await;
    assert!(mock.requests()[1].body.get("reasoning_effort").is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mode_through_config_option_announces_the_mode_and_reaches_the_model() {
    let (mock, _ws, mut agent, session) = agent_with_models(vec![Reply::text(&["a"])]).await;
    let result = agent.set_option(&session, "mode", "read-only").await["result"].clone();
    assert_eq!(
        option(&result["configOptions"], "mode").unwrap()["currentValue"],
        "read-only"
    );
    let updates = agent.drain();
    let mode = of_kind(&updates, "current_mode_update");
    assert_eq!(mode.len(), 1, "{updates:?}");
    assert_eq!(mode[0]["currentModeId"], "read-only");
    agent.prompt(&session, "hi").await;
    assert!(
        mock.requests()[0]
            .system_prompt()
            .contains("Mode: read-only")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn set_mode_updates_the_config_options_and_reaches_the_model() {
    let (mock, _ws, mut agent, session) = agent_with_models(vec![Reply::text(&["a"])]).await;
    let result = agent
        .request_ok(
            "session/set_mode",
            json!({"sessionId": session, "modeId": "full-access"}),
        )
        .await;
    assert_eq!(result, json!({}));
    let updates = agent.drain();
    let options = of_kind(&updates, "config_option_update");
    assert_eq!(options.len(), 1, "{updates:?}");
    assert_eq!(
        option(&options[0]["configOptions"], "mode").unwrap()["currentValue"],
        "full-access"
    );
    agent.prompt(&session, "hi").await;
    assert!(
        mock.requests()[0]
            .system_prompt()
            .contains("Mode: full-access")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_option_ids_and_values_say_what_exists() {
    let (_mock, _ws, mut agent, session) = agent_with_models(vec![]).await;
    let r = agent.set_option(&session, "temperature", "hot").await;
    assert_error(&r, -32602, "mode, model");
    let r = agent.set_option(&session, "model", "gpt-99").await;
    assert_error(&r, -32602, "mock-model, o3-mini, other-model");
    let r = agent
        .request(
            "session/set_config_option",
            json!({"sessionId": session, "configId": "mode", "type": "boolean", "value": true}),
        )
        .await;
    assert_eq!(r["error"]["code"], -32602, "{r}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_switch_during_a_turn_applies_to_the_next_request() {
    let slow = Reply::text(&["x", "y", "z"]).slow(Duration::from_millis(150));
    let (mock, _ws, mut agent, session) = agent_with_models(vec![slow, Reply::text(&["b"])]).await;
    let running = agent.start_prompt(&session, "one").await;
    agent.next_message().await;
    let switched = agent.set_option(&session, "model", "other-model").await;
    assert!(switched.get("error").is_none(), "{switched}");
    let first = response(running).await;
    assert_eq!(first["result"]["stopReason"], "end_turn");
    agent.prompt(&session, "two").await;
    let requests = mock.requests();
    assert_eq!(requests[0].body["model"], "mock-model");
    assert_eq!(requests[1].body["model"], "other-model");
}

/// A session on a 1,000-token window whose first answer reports 900 tokens in use (automatic
/// compaction would summarize before the second request), its editor showing on/off options.
async fn near_the_window() -> (MockModel, Workspace, Agent, Value) {
    let mock = MockModel::start(filling_the_window(vec![Reply::text(&["Second answer."])])).await;
    let ws = Workspace::new();
    let mut agent = showing_booleans(&ws, &mock).await;
    let opened = agent.new_session(&ws.project()).await;
    (mock, ws, agent, opened)
}

/// tandem on a [`small_window`] model, initialized by an editor that shows on/off options.
async fn showing_booleans(ws: &Workspace, mock: &MockModel) -> Agent {
    let mut env = ws.env(mock);
    env.push(("TANDEM_CONFIG".into(), path_str(&small_window(ws))));
    let mut agent = Agent::spawn(&env, &[]);
    agent
        .initialize_with(json!({"session": {"configOptions": {"boolean": {}}}}))
        .await;
    agent
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn automatic_compaction_is_a_switch_for_editors_that_show_booleans() {
    let (mock, ws, mut agent, opened) = near_the_window().await;
    let id = opened["sessionId"].as_str().unwrap().to_string();
    let auto = option(&opened["configOptions"], "auto_compact").expect("offered");
    assert_eq!(auto["type"], "boolean");
    assert_eq!(auto["currentValue"], true);
    let answer = agent
        .request_ok(
            "session/set_config_option",
            json!({"sessionId": id, "configId": "auto_compact", "type": "boolean", "value": false}),
        )
        .await;
    assert_eq!(
        option(&answer["configOptions"], "auto_compact").unwrap()["currentValue"],
        false
    );
    agent.prompt(&id, "First question").await;
    let (response, updates) = agent.prompt(&id, "Second question").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    assert_eq!(mock.requests().len(), 2, "no summary was asked for");
    assert!(of_kind(&updates, "compaction_update").is_empty());
    // A wrong value is refused and changes nothing.
    let wrong = agent
        .request(
            "session/set_config_option",
            json!({"sessionId": id, "configId": "mode", "type": "boolean", "value": true}),
        )
        .await;
    assert_error(&wrong, -32602, "mode");
    assert!(agent.shutdown().await.0.success());

    // The switch is part of the session: a load keeps it off.
    let mut again = showing_booleans(&ws, &mock).await;
    let (loaded, _) = again.open_stored("session/load", &id, &ws.project()).await;
    assert_eq!(
        option(&loaded["configOptions"], "auto_compact").unwrap()["currentValue"],
        false
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_the_switch_on_or_no_boolean_support_a_full_window_is_compacted() {
    let (mock, _ws, mut agent, opened) = near_the_window().await;
    let id = opened["sessionId"].as_str().unwrap().to_string();
    agent.prompt(&id, "First question").await;
    mock.push(Reply::text(&["Third."]));
    agent.prompt(&id, "Second question").await;
    assert_eq!(mock.requests().len(), 3, "summary, then the question");

    // An editor that shows no booleans is not offered the switch.
    let (_mock, ws, mut agent, _session) = agent_with_models(vec![]).await;
    let opened = agent.new_session(&ws.project()).await;
    assert!(option(&opened["configOptions"], "auto_compact").is_none());
}
