//! The Zed-shaped client (`tests/common/zed.rs`) against the binary: a session opened the way
//! Zed opens one, with two folders, a read through Zed's `fs` and an edit it reviews, stays
//! free of anything Zed's thread would refuse. Later tests for Zed build on this client.

use serde_json::json;

use crate::common::editor::Answer;
use crate::common::{Agent, MockModel, Reply, Workspace, zed};

#[tokio::test]
async fn a_session_opened_as_zed_opens_it_reads_and_edits_cleanly() {
    let ws = Workspace::new();
    ws.write("project/notes.txt", "one\ntwo\n");
    ws.write("other/extra.txt", "three\n");
    let mock = MockModel::start(vec![
        Reply::tools(&[("c1", "read_file", json!({"path": "notes.txt"}))]),
        Reply::tools(&[(
            "c2",
            "write_file",
            json!({"path": "notes.txt", "content": "one\ntwo\nthree\n"}),
        )]),
        Reply::text(&["done"]),
    ])
    .await;
    let folders = [ws.project(), ws.project().with_file_name("other")];
    let editor = zed::editor(&folders);
    editor.answer_with(&[Answer::Select("allow_once")]);
    let mut agent = Agent::spawn_with(&ws.env(&mock), &[], Some(editor.clone()));
    let init = zed::initialize(&mut agent).await;
    assert_eq!(init["protocolVersion"], 1, "{init}");
    let session = zed::new_session(&mut agent, &folders, json!([])).await;
    let id = session["sessionId"].as_str().unwrap().to_string();
    let (response, updates) = agent.prompt(&id, "add a line").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    assert_eq!(
        std::fs::read_to_string(ws.project().join("notes.txt")).unwrap(),
        "one\ntwo\nthree\n"
    );
    assert_eq!(zed::thread_problems(&updates), Vec::<String>::new());
    assert!(editor.methods().contains(&"fs/read_text_file".to_string()));
    agent.assert_valid();
}

/// The client's own rules, checked without the binary.
#[test]
fn zeds_rules_as_the_client_applies_them() {
    let strict = json!({"code": -32603, "message": "Internal error", "data": {"details": "boom"}});
    assert_eq!(zed::error_text(&strict), "boom");
    let wide = json!({"code": -32603, "message": "Internal error", "data": {"details": "boom", "class": "x"}});
    assert!(zed::error_text(&wide).contains("\"class\""));
    let update = |content: serde_json::Value| json!({"method": "session/update", "params": {"update": {"sessionUpdate": "tool_call_update", "toolCallId": "t", "content": content}}});
    let messages = [
        json!({"method": "session/update", "params": {"update": {"sessionUpdate": "tool_call", "toolCallId": "t"}}}),
        json!({"method": "terminal/create", "params": {}}),
        update(json!([{"type": "terminal", "terminalId": "term-1"}])),
        json!({"method": "terminal/release", "params": {"terminalId": "term-1"}}),
        update(json!([{"type": "terminal", "terminalId": "term-1"}])),
    ];
    assert_eq!(zed::thread_problems(&messages).len(), 1);
    let unknown = [update(json!([]))];
    assert_eq!(
        zed::thread_problems(&unknown),
        ["Tool call not found: t".to_string()]
    );
}
