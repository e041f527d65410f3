//! An editor that stops answering, and a tandem told to stop: bounded waits where the editor
//! answers by itself, and an orderly shutdown (prompts cancelled, terminals released,
//! transcripts written, exit code 0) on SIGTERM and SIGINT.

use std::sync::Arc;

use nix::sys::signal::Signal;
use serde_json::json;

use crate::common::calls::{final_status, one_call, tool_result};
use crate::common::editor::{FakeEditor, full_caps};
use crate::common::{Agent, MockModel, Reply, Workspace, copy_fixture, path_str, response};

/// An agent in full-access mode over the `small` fixture whose editor never answers the
/// methods in `hanging`, with a half-second bound on editor requests.
async fn with_silent_editor(
    script: Vec<Reply>,
    hanging: &[&str],
) -> (MockModel, Workspace, Agent, String, Arc<FakeEditor>) {
    let mock = MockModel::start(script).await;
    let ws = Workspace::new();
    copy_fixture("small", &ws.project());
    let config = ws.write("config.toml", "[timeouts]\neditor_secs = 0.5\n");
    let editor = FakeEditor::new();
    editor
        .hanging
        .lock()
        .unwrap()
        .extend(hanging.iter().map(|m| m.to_string()));
    let vars = [
        ("TANDEM_MODE", "full-access".to_string()),
        ("TANDEM_CONFIG", path_str(&config)),
    ];
    let (agent, id) = editor_session(&mock, &ws, editor.clone(), &vars).await;
    (mock, ws, agent, id, editor)
}

/// An agent for `mock` in `ws` with `vars` set, whose editor is `editor` with every
/// capability, and a session in the project.
async fn editor_session(
    mock: &MockModel,
    ws: &Workspace,
    editor: Arc<FakeEditor>,
    vars: &[(&str, String)],
) -> (Agent, String) {
    let mut env = ws.env(mock);
    env.extend(vars.iter().map(|(k, v)| (k.to_string(), v.clone())));
    let mut agent = Agent::spawn_with(&env, &[], Some(editor));
    agent.initialize_with(full_caps()).await;
    let id = agent.new_session(&ws.project()).await["sessionId"]
        .as_str()
        .unwrap()
        .to_string();
    (agent, id)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_editor_that_never_answers_a_read_is_given_up_on() {
    let (mock, _ws, mut agent, session, _editor) = with_silent_editor(
        one_call("r", "read_file", json!({"path": "README.md"})),
        &["fs/read_text_file"],
    )
    .await;
    let (response, updates) = agent.prompt(&session, "read").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    let result = tool_result(&mock.requests()[1], "r");
    assert!(
        result.contains("did not answer fs/read_text_file") && result.contains("editor_secs"),
        "{result}"
    );
    assert_eq!(final_status(&updates, "r"), "failed");
    // The editor is told the read was given up on, so it can stop working on it.
    let read = updates
        .iter()
        .find(|m| m["method"] == "fs/read_text_file")
        .expect("the read was sent");
    let cancels: Vec<_> = updates
        .iter()
        .filter(|m| m["method"] == "$/cancel_request")
        .collect();
    assert_eq!(cancels.len(), 1, "{cancels:?}");
    assert_eq!(cancels[0]["params"]["requestId"], read["id"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_editor_that_never_creates_the_terminal_is_given_up_on() {
    let (mock, _ws, mut agent, session, _editor) = with_silent_editor(
        one_call("t", "run_command", json!({"command": "echo hi"})),
        &["terminal/create"],
    )
    .await;
    let (response, updates) = agent.prompt(&session, "run").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    let result = tool_result(&mock.requests()[1], "t");
    assert!(
        result.contains("did not answer terminal/create"),
        "{result}"
    );
    assert_eq!(final_status(&updates, "t"), "failed");
    // The session goes on.
    mock.push(Reply::text(&["still here"]));
    let (again, _) = agent.prompt(&session, "again").await;
    assert_eq!(again["result"]["stopReason"], "end_turn");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_mid_command_cancels_releases_the_terminal_and_exits_cleanly() {
    let (_mock, ws, mut agent, session, editor) = with_silent_editor(
        one_call("t", "run_command", json!({"command": "sleep 30"})),
        &[],
    )
    .await;
    let prompt = agent.start_prompt(&session, "wait").await;
    editor.wait_for("terminal/wait_for_exit").await;
    let (status, stderr) = agent.stop_with(Signal::SIGTERM).await;
    assert_eq!(status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("SIGTERM"), "{stderr}");
    let answer = response(prompt).await;
    assert_eq!(answer["result"]["stopReason"], "cancelled", "{answer}");
    let methods = editor.methods();
    for method in ["terminal/kill", "terminal/release"] {
        assert!(methods.iter().any(|m| m == method), "{method}: {methods:?}");
    }
    // The transcript holds the prompt and the cancelled command's result.
    let transcript = std::fs::read_to_string(
        ws.home()
            .join("data/sessions")
            .join(format!("{session}.jsonl")),
    )
    .unwrap();
    assert!(transcript.contains("wait"), "{transcript}");
    assert!(transcript.contains("Cancelled by the user"), "{transcript}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigint_while_idle_exits_at_once_with_code_0() {
    let (_mock, _ws, agent, _session, _editor) = with_silent_editor(Vec::new(), &[]).await;
    let started = std::time::Instant::now();
    let (status, stderr) = agent.stop_with(Signal::SIGINT).await;
    assert_eq!(status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("SIGINT"), "{stderr}");
    assert!(
        started.elapsed() < std::time::Duration::from_secs(5),
        "no grace period when nothing runs"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_editor_answer_over_the_size_limit_fails_the_call_at_once() {
    let mock = MockModel::start(one_call("r", "read_file", json!({"path": "big.txt"}))).await;
    let ws = Workspace::new();
    copy_fixture("small", &ws.project());
    let line = "x".repeat(99);
    let big: String = (0..3000).map(|_| format!("{line}\n")).collect();
    std::fs::write(ws.project().join("big.txt"), big).unwrap();
    // Long enough that waiting it out would show: the answer must fail the read by itself.
    let config = ws.write("config.toml", "[timeouts]\neditor_secs = 30\n");
    let vars = [
        ("TANDEM_MODE", "full-access".to_string()),
        ("TANDEM_CONFIG", path_str(&config)),
        ("TANDEM_MAX_MESSAGE_BYTES", "100000".to_string()),
    ];
    let (mut agent, session) = editor_session(&mock, &ws, FakeEditor::new(), &vars).await;
    let (response, updates) = agent.prompt(&session, "read the big file").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    let result = tool_result(&mock.requests()[1], "r");
    assert!(
        result.contains("over tandem's limit of 100000") && result.contains("max_message_bytes"),
        "{result}"
    );
    assert!(!result.contains("did not answer"), "{result}");
    assert_eq!(final_status(&updates, "r"), "failed");
    // Nothing was sent back to the editor about its answer: an answer gets no answer.
    assert!(
        !updates
            .iter()
            .any(|m| m.get("error").is_some() && m.get("method").is_none()),
        "{updates:?}"
    );
    agent.assert_valid();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_editor_that_leaves_during_a_permission_request_is_not_waited_for() {
    let mock = MockModel::start(vec![
        Reply::tools(&[(
            "w",
            "write_file",
            json!({"path": "left.txt", "content": "never\n"}),
        )]),
        Reply::text(&["Could not ask; left it."]),
    ])
    .await;
    let ws = Workspace::new();
    copy_fixture("small", &ws.project());
    let editor = FakeEditor::new();
    editor
        .hanging
        .lock()
        .unwrap()
        .push("session/request_permission".to_string());
    let vars = [("TANDEM_MODE", "ask".to_string())];
    let (mut agent, session) = editor_session(&mock, &ws, editor.clone(), &vars).await;
    let _answer = agent.start_prompt(&session, "write a file").await;
    for _ in 0..200 {
        if editor
            .methods()
            .iter()
            .any(|m| m == "session/request_permission")
        {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    }
    assert!(
        editor
            .methods()
            .iter()
            .any(|m| m == "session/request_permission")
    );
    // The editor goes away with the question open. The default grace is five minutes; the
    // question fails at once, the model hears why and answers, and tandem exits.
    let (status, _) = agent.shutdown().await;
    assert!(status.success());
    let result = tool_result(&mock.requests()[1], "w");
    assert!(result.contains("closed the connection"), "{result}");
    assert!(!ws.project().join("left.txt").exists());
}
