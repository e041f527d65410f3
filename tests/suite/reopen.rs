//! Reopening a stored thread in a real editor's client: what the user sent comes back as
//! they sent it (mentions as Zed's chips, texts apart), the chosen model is kept, and no
//! state update reaches the client before the answer that opens the session.

use serde_json::{Value, json};

use crate::common::mock_model::Reply;
use crate::common::{Agent, MockModel, Workspace, agent_shell, zed};

/// agent-shell "prints a mode update that arrives before `session/load`'s answer as 'Session
/// mode: nil'" (`/work/shared/clients/README.md`): it has no session yet to apply it to. The
/// answer carries the mode and the options; nothing about them may come before it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_state_update_comes_before_an_openings_answer() {
    let ws = Workspace::new();
    let mock = MockModel::start(vec![Reply::text(&["ok"])]).await;
    let mut env = ws.env(&mock);
    env.push(("TANDEM_MODE".into(), "accept-edits".into()));
    let mut agent = Agent::spawn(&env, &[]);
    agent_shell::initialize(&mut agent).await;
    let before = agent.stdout_lines().len();
    let new = agent_shell::new_session(&mut agent, &ws.project()).await;
    let session = new["sessionId"].as_str().unwrap().to_string();
    agent.prompt(&session, "hello").await;
    let lines = agent.stdout_lines()[before..].to_vec();
    assert_eq!(state_before_answer(&lines), Vec::<String>::new(), "new");
    agent.shutdown().await;

    let mut agent = Agent::spawn(&ws.env(&mock), &[]);
    agent_shell::initialize(&mut agent).await;
    for method in ["session/load", "session/resume"] {
        let before = agent.stdout_lines().len();
        let (answer, notices) =
            agent_shell::open_stored(&mut agent, method, &session, &ws.project()).await;
        assert_eq!(notices, Vec::<String>::new(), "{method}");
        let lines = agent.stdout_lines()[before..].to_vec();
        assert_eq!(
            state_before_answer(&lines),
            Vec::<String>::new(),
            "{method}"
        );
        assert_eq!(answer["modes"]["currentModeId"], "accept-edits", "{answer}");
        let mode = answer["configOptions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|o| o["id"] == "mode")
            .unwrap();
        assert_eq!(mode["currentValue"], "accept-edits");
    }
}

/// The kinds of the state updates (mode, options, commands) among `lines` that came before
/// the first answer.
fn state_before_answer(lines: &[String]) -> Vec<String> {
    let mut early = Vec::new();
    for line in lines {
        let message: Value = serde_json::from_str(line).unwrap();
        if message.get("result").is_some() || message.get("error").is_some() {
            return early;
        }
        let kind = message["params"]["update"]["sessionUpdate"]
            .as_str()
            .unwrap_or_default();
        if matches!(
            kind,
            "current_mode_update" | "config_option_update" | "available_commands_update"
        ) {
            early.push(kind.to_string());
        }
    }
    panic!("no answer among {lines:?}");
}

/// With no `[[models]]` in the config, the model picker lists what the server's `/v1/models`
/// serves. Zed "replaces its state with the answer's `configOptions`" after
/// `set_config_option`, and when it reopens a thread it takes them from the load's answer
/// (`/work/shared/clients/README.md`): the chosen model must be the one there, and the one
/// the next prompt goes to.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_chosen_from_the_servers_list_is_kept_on_reopen() {
    let ws = Workspace::new();
    let mock = MockModel::start(vec![Reply::text(&["one"]), Reply::text(&["two"])]).await;
    let models = json!({"object": "list", "data": [{"id": "mock-model"}, {"id": "other-model"}]});
    mock.serve_info("/v1/models", 200, models);
    let folders = [ws.project()];
    let mut agent = Agent::spawn_with(&ws.env(&mock), &[], Some(zed::editor(&folders)));
    zed::initialize(&mut agent).await;
    let new = zed::new_session(&mut agent, &folders, json!([])).await;
    let session = new["sessionId"].as_str().unwrap().to_string();
    assert_eq!(model_option(&new)["currentValue"], "mock-model");
    let set = agent.set_option(&session, "model", "other-model").await;
    assert_eq!(model_option(&set["result"])["currentValue"], "other-model");
    agent.prompt(&session, "first").await;
    agent.shutdown().await;

    let mut agent = Agent::spawn_with(&ws.env(&mock), &[], Some(zed::editor(&folders)));
    zed::initialize(&mut agent).await;
    let (loaded, _) = zed::load_session(&mut agent, &session, &folders, json!([])).await;
    let picker = model_option(&loaded);
    assert_eq!(picker["currentValue"], "other-model", "{picker}");
    assert!(
        picker["options"]
            .as_array()
            .unwrap()
            .iter()
            .any(|o| o["value"] == "other-model")
    );
    agent.prompt(&session, "second").await;
    let requests = mock.requests();
    assert_eq!(requests[0].body["model"], "other-model");
    assert_eq!(requests[1].body["model"], "other-model");
}

fn model_option(answer: &Value) -> &Value {
    answer["configOptions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["id"] == "model")
        .unwrap()
}
