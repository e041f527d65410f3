//! What real clients showed wrong across turns and reloads: tool call ids that repeat when
//! the model server numbers calls per response (or sends none), commands replayed as
//! references to terminals that are gone, calls replayed in the order they finished, and a
//! `/compact` prompt missing from the replay.

use std::time::Duration;

use serde_json::{Value, json};

use crate::common::calls::tool_result;
use crate::common::editor::{FakeEditor, full_caps};
use crate::common::mock_model::{delta, finish, usage};
use crate::common::{Agent, MockModel, Reply, Workspace, copy_fixture, of_kind};

/// A response calling `name` with no call id at all, like llama.cpp without `--jinja`.
fn call_without_id(name: &str, args: Value) -> Reply {
    Reply::chunks(vec![
        delta(json!({"tool_calls": [{"index": 0, "type": "function",
                     "function": {"name": name, "arguments": args.to_string()}}]})),
        finish("tool_calls"),
        usage(200, 20),
    ])
}

/// Ends `agent` cleanly and loads `session` in a new process: the replayed updates.
async fn reloaded(agent: Agent, ws: &Workspace, mock: &MockModel, session: &str) -> Vec<Value> {
    let (status, _) = agent.shutdown().await;
    assert!(status.success());
    let mut agent = Agent::spawn(&ws.env(mock), &[]);
    agent.initialize().await;
    let (_, updates) = agent
        .open_stored("session/load", session, &ws.project())
        .await;
    updates
}

/// Every `tool_call` id in `updates`, in order.
fn call_ids(updates: &[Value]) -> Vec<String> {
    of_kind(updates, "tool_call")
        .iter()
        .map(|c| c["toolCallId"].as_str().unwrap().to_string())
        .collect()
}

/// An editor with fs and terminal in a copy of the `small` fixture, in full-access mode.
async fn editor_session(
    mock: &MockModel,
    ws: &Workspace,
) -> (Agent, String, std::sync::Arc<FakeEditor>) {
    let editor = FakeEditor::new();
    let mut env = ws.env(mock);
    env.push(("TANDEM_MODE".into(), "full-access".into()));
    let mut agent = Agent::spawn_with(&env, &[], Some(editor.clone()));
    agent.initialize_with(full_caps()).await;
    let session = agent.new_session(&ws.project()).await["sessionId"]
        .as_str()
        .unwrap()
        .to_string();
    (agent, session, editor)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tool_call_ids_stay_unique_across_turns_and_reloads_whatever_the_server_sends() {
    let script = vec![
        // Turn 1: no ids at all.
        call_without_id("read_file", json!({"path": "README.md"})),
        Reply::text(&["Read it."]),
        // Turn 2: no ids again.
        call_without_id("list_dir", json!({"path": "src"})),
        Reply::text(&["Listed."]),
        // Turn 3: a provider that numbers per response, twice in one response.
        Reply::tools(&[
            (
                "functions.read_file:0",
                "read_file",
                json!({"path": "README.md"}),
            ),
            (
                "functions.read_file:0",
                "read_file",
                json!({"path": "src/lib.rs"}),
            ),
        ]),
        Reply::text(&["Read both."]),
    ];
    let mock = MockModel::start(script).await;
    let ws = Workspace::new();
    copy_fixture("small", &ws.project());
    let (mut agent, session, _editor) = editor_session(&mock, &ws).await;
    let mut live = Vec::new();
    for prompt in ["read", "list", "read two"] {
        let (response, updates) = agent.prompt(&session, prompt).await;
        assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
        live.extend(call_ids(&updates));
    }
    assert_eq!(live.len(), 4, "{live:?}");
    let mut unique = live.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(
        unique.len(),
        4,
        "ACP ids are unique for the session: {live:?}"
    );

    // The model keeps the ids it gave: the server's own, and `call_0` where it gave none.
    let requests = mock.requests();
    assert!(tool_result(&requests[1], "call_0").contains("A tiny project"));
    assert!(!tool_result(&requests[3], "call_0").is_empty());
    let calls: Vec<&str> = requests[5].body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["tool_call_id"].as_str())
        .collect();
    assert_eq!(calls.len(), 4);
    assert_eq!(
        calls[2..],
        ["functions.read_file:0", "call_1"],
        "a repeat within one response gets its own id"
    );

    // A reload shows every call under the id it had live.
    let updates = reloaded(agent, &ws, &mock, &session).await;
    assert_eq!(call_ids(&updates), live);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reload_shows_command_output_as_text_and_calls_in_the_order_made() {
    let script = vec![
        Reply::tools(&[(
            "cmd",
            "run_command",
            json!({"command": "echo from-the-terminal; exit 3"}),
        )]),
        // The read goes through the editor (slowed down below), the listing is local: the
        // listing finishes first.
        Reply::tools(&[
            ("slow", "read_file", json!({"path": "README.md"})),
            ("fast", "list_dir", json!({"path": "src"})),
        ]),
        Reply::text(&["Done."]),
    ];
    let mock = MockModel::start(script).await;
    let ws = Workspace::new();
    copy_fixture("small", &ws.project());
    let (mut agent, session, editor) = editor_session(&mock, &ws).await;
    editor.delay("fs/read_text_file", Duration::from_millis(400));
    let (response, updates) = agent.prompt(&session, "run and read").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    let live_terminal = updates
        .iter()
        .any(|u| u["params"]["update"]["content"][0]["type"] == "terminal");
    assert!(
        live_terminal,
        "live, the command ran in the editor's terminal"
    );

    let updates = reloaded(agent, &ws, &mock, &session).await;
    assert_eq!(
        call_ids(&updates),
        ["cmd", "slow", "fast"],
        "the order the model made them"
    );
    let calls = of_kind(&updates, "tool_call");
    let content = &calls[0]["content"];
    assert_eq!(content.as_array().unwrap().len(), 1, "{content}");
    assert_eq!(
        content[0]["type"], "content",
        "no terminal reference: {content}"
    );
    let text = content[0]["content"]["text"].as_str().unwrap();
    assert!(text.contains("from-the-terminal"), "{text}");
    assert!(text.contains("Exit code: 3"), "{text}");
    assert_eq!(calls[0]["status"], "failed");
    assert!(
        !serde_json::to_string(&updates)
            .unwrap()
            .contains("\"terminal\""),
        "no terminal anywhere in the replay"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reload_shows_the_compact_prompt_and_its_note() {
    let script = vec![
        Reply::text(&["One."]),
        Reply::text(&["Two."]),
        Reply::text(&["The user asked two things; both were answered."]),
    ];
    let mock = MockModel::start(script).await;
    let ws = Workspace::new();
    let mut agent = Agent::spawn(&ws.env(&mock), &[]);
    let session = agent.open_session(&ws.project()).await;
    for prompt in ["first", "second", "/compact"] {
        let (response, _) = agent.prompt(&session, prompt).await;
        assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    }

    let updates = reloaded(agent, &ws, &mock, &session).await;
    let users: Vec<&str> = of_kind(&updates, "user_message_chunk")
        .iter()
        .map(|u| u["content"]["text"].as_str().unwrap())
        .collect();
    assert_eq!(users, ["first", "second", "/compact"]);
    let last_user = updates
        .iter()
        .rposition(|u| u["params"]["update"]["sessionUpdate"] == "user_message_chunk")
        .unwrap();
    let after = &updates[last_user + 1]["params"]["update"];
    assert_eq!(after["sessionUpdate"], "agent_message_chunk");
    assert!(
        after["content"]["text"]
            .as_str()
            .unwrap()
            .contains("compacted"),
        "{after}"
    );
}
