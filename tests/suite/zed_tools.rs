//! Tool calls as Zed shows them, through the binary with the Zed-shaped client
//! (`tests/common/zed.rs`): a command's card never names a terminal Zed has already
//! forgotten, and a rejected call keeps Zed's "Rejected".

use std::sync::Arc;

use serde_json::json;

use crate::common::calls::tool_result;
use crate::common::editor::{Answer, FakeEditor};
use crate::common::{Agent, MockModel, Reply, Workspace, response, zed};

/// An agent started as Zed starts it (in `mode`, with `extra` variables), its session over
/// the project folder (Zed's only worktree), and Zed's editor.
async fn zed_session(
    ws: &Workspace,
    mock: &MockModel,
    mode: &str,
    extra: &[(&str, &str)],
) -> (Agent, String, Arc<FakeEditor>) {
    let folders = [ws.project()];
    let editor = zed::editor(&folders);
    let mut env = ws.env(mock);
    env.push(("TANDEM_MODE".into(), mode.into()));
    env.extend(extra.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    let mut agent = Agent::spawn_with(&env, &[], Some(editor.clone()));
    zed::initialize(&mut agent).await;
    let session = zed::new_session(&mut agent, &folders, json!([])).await;
    let id = session["sessionId"].as_str().unwrap().to_string();
    (agent, id, editor)
}

/// Zed forgets a terminal on `terminal/release` (`release_terminal` in `acp_thread.rs`:
/// "`self.terminals.remove(&terminal_id).context(\"Terminal not found\")?`"), and content that
/// names a terminal it does not know fails the whole update (`ToolCallContent::from_acp`:
/// "`.ok_or_else(|| anyhow::anyhow!(\"Terminal with id `{}` not found\", terminal_id))`"), so the
/// card would keep its running state. On every way a command ends (exit 0, an error, a
/// timeout that kills it, the user's cancel) no update names the terminal after its
/// release, and the card ends as Zed should show it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_card_never_names_its_terminal_after_the_release() {
    let mock = MockModel::start(vec![
        Reply::tools(&[("ok", "run_command", json!({"command": "echo fine"}))]),
        Reply::tools(&[(
            "bad",
            "run_command",
            json!({"command": "echo broken; exit 3"}),
        )]),
        Reply::tools(&[(
            "slow",
            "run_command",
            json!({"command": "sleep 20", "timeout_ms": 300}),
        )]),
        Reply::text(&["done"]),
    ])
    .await;
    let ws = Workspace::new();
    let (mut agent, session, editor) = zed_session(&ws, &mock, "full-access", &[]).await;
    let (answer, updates) = agent.prompt(&session, "run them").await;
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    assert_eq!(zed::thread_problems(&updates), Vec::<String>::new());
    for (id, status) in [("ok", "Completed"), ("bad", "Failed"), ("slow", "Failed")] {
        assert_eq!(
            zed::card_status(&updates, id, None, "end_turn"),
            status,
            "{id}"
        );
    }
    let requests = mock.requests();
    assert!(tool_result(&requests[1], "ok").contains("fine"));
    assert!(tool_result(&requests[2], "bad").contains("Exit code: 3"));
    assert!(tool_result(&requests[3], "slow").contains("Timed out"));
    assert_eq!(editor.params_of("terminal/release").len(), 3);

    // The user cancels while a command runs: it is killed and released, and the card is
    // Zed's "Canceled", not overwritten.
    mock.push(Reply::tools(&[(
        "long",
        "run_command",
        json!({"command": "sleep 30"}),
    )]));
    let pending = agent.start_prompt(&session, "once more").await;
    for _ in 0..400 {
        if editor.params_of("terminal/create").len() == 4 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    }
    assert_eq!(editor.params_of("terminal/create").len(), 4);
    agent
        .notify("session/cancel", json!({"sessionId": session}))
        .await;
    let answer = response(pending).await;
    assert_eq!(answer["result"]["stopReason"], "cancelled", "{answer}");
    // The whole session's messages: Zed's terminal map spans the thread.
    let mut updates = updates;
    updates.extend(agent.drain());
    assert_eq!(zed::thread_problems(&updates), Vec::<String>::new());
    assert_eq!(
        zed::card_status(&updates, "long", None, "cancelled"),
        "Canceled"
    );
    assert_eq!(editor.params_of("terminal/release").len(), 4);
}

/// When the user picks a reject option Zed marks the card "Rejected" itself
/// (`authorize_tool_call`: "`acp::PermissionOptionKind::RejectOnce |
/// acp::PermissionOptionKind::RejectAlways => ToolCallStatus::Rejected`"), and any status the
/// agent sends afterwards replaces it (`update_fields`: "`if let Some(status) = status {
/// self.status = status.into(); }`"). A rejected edit and a rejected command stay "Rejected";
/// the model is still told, and nothing ran.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rejected_call_stays_rejected_in_zed() {
    let ws = Workspace::new();
    let mock = MockModel::start(vec![
        Reply::tools(&[(
            "w",
            "write_file",
            json!({"path": "a.txt", "content": "x\n"}),
        )]),
        Reply::tools(&[("r", "run_command", json!({"command": "touch ran"}))]),
        Reply::text(&["ok"]),
    ])
    .await;
    let (mut agent, session, editor) = zed_session(&ws, &mock, "ask", &[]).await;
    editor.answer_with(&[
        Answer::Select("reject_once"),
        Answer::Select("reject_always"),
    ]);
    let (answer, updates) = agent.prompt(&session, "write and run").await;
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    assert_eq!(
        zed::card_status(&updates, "w", Some("reject_once"), "end_turn"),
        "Rejected"
    );
    assert_eq!(
        zed::card_status(&updates, "r", Some("reject_always"), "end_turn"),
        "Rejected"
    );
    let requests = mock.requests();
    assert!(tool_result(&requests[1], "w").starts_with("Rejected"));
    assert!(tool_result(&requests[2], "r").starts_with("Rejected"));
    assert!(!ws.project().join("a.txt").exists());
    assert!(!ws.project().join("ran").exists());
    assert_eq!(zed::thread_problems(&updates), Vec::<String>::new());
}
