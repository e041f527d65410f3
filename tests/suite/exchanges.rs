//! Whole exchanges as the editor sees them, as snapshots (`snapshots/`): a permission request
//! for an edit, and a session's replay after a reload. A change to what tandem sends shows as
//! a reviewed diff of the whole message, not as the few JSON paths a hand-written assertion
//! picks. Session and message ids, the workspace's paths and times are named, not kept.

use serde_json::{Value, json};

use crate::common::editor::{Answer, full_caps};
use crate::common::{Agent, Reply, Workspace, tool_session};

/// `value` with what differs from run to run named instead: the workspace's folder, the
/// session id, and timestamps.
fn named(value: &Value, ws: &Workspace, session: &str) -> Value {
    let root = ws.project().parent().unwrap().to_string_lossy().to_string();
    let canonical = ws
        .project()
        .parent()
        .unwrap()
        .canonicalize()
        .unwrap()
        .to_string_lossy()
        .to_string();
    let text = value
        .to_string()
        .replace(&canonical, "[ws]")
        .replace(&root, "[ws]")
        .replace(session, "[session]");
    let mut value: Value = serde_json::from_str(&text).unwrap();
    name_volatile(&mut value);
    value
}

/// Replaces every time and every message id (new ones each run) with a name.
fn name_volatile(value: &mut Value) {
    match value {
        Value::Object(fields) => {
            for (key, field) in fields.iter_mut() {
                match key.as_str() {
                    "updatedAt" | "createdAt" | "timestamp" => *field = json!("[time]"),
                    "messageId" => *field = json!("[message]"),
                    _ => name_volatile(field),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(name_volatile),
        _ => {}
    }
}

/// One prompt: the model reads a file, edits another (asked about in `ask` mode, allowed
/// once), and answers.
fn read_edit_answer() -> Vec<Reply> {
    vec![
        Reply::tools(&[("read", "read_file", json!({"path": "README.md"}))]),
        Reply::tools(&[(
            "edit",
            "edit_file",
            json!({"path": "src/lib.rs", "old_string": "Hello, {name}!", "new_string": "Hello there, {name}!"}),
        )]),
        Reply::text(&["Read it and changed the greeting."]),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_edits_permission_request_as_the_editor_receives_it() {
    let (_mock, ws, mut agent, session, editor) =
        tool_session(read_edit_answer(), full_caps(), "ask").await;
    editor.answer_with(&[Answer::Select("allow_once")]);
    let (response, _) = agent.prompt(&session, "greet better").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    let asked = editor.params_of("session/request_permission");
    assert_eq!(asked.len(), 1, "only the edit asks: {asked:?}");
    insta::assert_json_snapshot!(
        "permission_request_for_an_edit",
        named(&asked[0], &ws, &session)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sessions_replay_after_a_reload() {
    let (mock, ws, mut agent, session, editor) =
        tool_session(read_edit_answer(), full_caps(), "ask").await;
    editor.answer_with(&[Answer::Select("allow_once")]);
    let (response, _) = agent.prompt(&session, "greet better").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    let (status, _) = agent.shutdown().await;
    assert!(status.success());

    let mut agent = Agent::spawn(&ws.env(&mock), &[]);
    agent.initialize().await;
    let (loaded, updates) = agent
        .open_stored("session/load", &session, &ws.project())
        .await;
    assert!(loaded.get("error").is_none(), "{loaded}");
    let shown: Vec<Value> = updates
        .iter()
        .map(|u| named(&u["params"], &ws, &session))
        .collect();
    insta::assert_json_snapshot!("replay_of_a_read_an_edit_and_an_answer", shown);
}
