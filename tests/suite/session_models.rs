//! agent-shell (Emacs) "reads only the older `models` field of session answers and switches
//! with `session/set_model`" (`/work/shared/clients/README.md`; the request as `acp.el`'s
//! `acp-make-session-set-model-request` builds it: "(sessionId . …) (modelId . …)"). Without
//! `models` it shows "No session models available". tandem offers both that API and its
//! `model` config option, which stays the main path; a switch through either shows in both.

use serde_json::{Value, json};

use crate::common::mock_model::Reply;
use crate::common::{Agent, MockModel, Workspace, agent_shell, assert_error, of_kind};

async fn agent_with_models(script: Vec<Reply>) -> (MockModel, Workspace, Agent) {
    let mock = MockModel::start(script).await;
    let ws = Workspace::new();
    let mut env = ws.env(&mock);
    env.push(("TANDEM_MODELS".into(), "mock-model,other-model".into()));
    (mock, ws, Agent::spawn(&env, &[]))
}

fn model_option(options: &Value) -> &Value {
    options
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["id"] == "model")
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn agent_shell_sees_the_models_and_switches_with_set_model() {
    let (mock, ws, mut agent) = agent_with_models(vec![Reply::text(&["hi"])]).await;
    agent_shell::initialize(&mut agent).await;
    let new = agent_shell::new_session(&mut agent, &ws.project()).await;
    let session = new["sessionId"].as_str().unwrap().to_string();
    let (current, ids) = agent_shell::models(&new).expect("session models available");
    assert_eq!(current, "mock-model");
    assert_eq!(ids, ["mock-model", "other-model"]);
    agent.drain();

    let switched = agent_shell::set_model(&mut agent, &session, "other-model").await;
    assert_eq!(switched["result"], json!({}), "{switched}");
    // Clients that follow config options are told too.
    let updates = agent.drain();
    let options = of_kind(&updates, "config_option_update");
    assert_eq!(options.len(), 1, "{updates:?}");
    assert_eq!(
        model_option(&options[0]["configOptions"])["currentValue"],
        "other-model"
    );
    agent.prompt(&session, "hello").await;
    assert_eq!(mock.requests()[0].body["model"], "other-model");

    let refused = agent_shell::set_model(&mut agent, &session, "gpt-99").await;
    assert_error(&refused, -32602, "mock-model, other-model");
    let unknown = agent_shell::set_model(&mut agent, "no-such-session", "other-model").await;
    assert_eq!(unknown["error"]["code"], -32002, "{unknown}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_switch_through_the_config_option_shows_in_the_models_of_a_reopened_session() {
    let (_mock, ws, mut agent) = agent_with_models(vec![Reply::text(&["hi"])]).await;
    agent.initialize().await;
    let session = agent.new_session(&ws.project()).await["sessionId"]
        .as_str()
        .unwrap()
        .to_string();
    let set = agent.set_option(&session, "model", "other-model").await;
    assert_eq!(
        model_option(&set["result"]["configOptions"])["currentValue"],
        "other-model"
    );
    agent.prompt(&session, "hello").await;
    for method in ["session/resume", "session/load"] {
        let (answer, _) =
            agent_shell::open_stored(&mut agent, method, &session, &ws.project()).await;
        let (current, _) = agent_shell::models(&answer).expect("session models available");
        assert_eq!(current, "other-model", "{method}: {answer}");
        assert_eq!(
            model_option(&answer["configOptions"])["currentValue"],
            "other-model"
        );
    }
}
