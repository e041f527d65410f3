//! Tool calls as Zed shows them, through the binary with the Zed-shaped client
//! (`tests/common/zed.rs`): a command's card never names a terminal Zed has already
//! forgotten, a rejected or cancelled call ends "Failed", and a file outside Zed's worktrees
//! is not called missing: tandem reads or writes it itself once the call is allowed. Images
//! are advertised only when a model takes them, and one left out is reported.

use std::path::PathBuf;
use std::sync::Arc;

use serde_json::{Value, json};

use crate::common::calls::tool_result;
use crate::common::editor::{Answer, FakeEditor};
use crate::common::{Agent, MockModel, Reply, Workspace, joined, path_str, response, zed};

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

/// A file next to the project, outside Zed's worktree.
fn outside(ws: &Workspace, name: &str, text: &str) -> PathBuf {
    let path = ws.project().with_file_name("outside").join(name);
    ws.write(&format!("outside/{name}"), text);
    path
}

/// Every request the model was sent, as text, to look for what must not be there.
fn everything_sent(mock: &MockModel) -> String {
    mock.requests().iter().map(|r| r.body.to_string()).collect()
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

    // The user cancels while a command runs: it is killed and released, and the card ends
    // "Failed" before the prompt's answer (Zed would mark it "Canceled" only if it were still
    // unfinished then; every client that shows status needs the end sent).
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
        "Failed"
    );
    assert_eq!(editor.params_of("terminal/release").len(), 4);
}

/// When the user picks a reject option Zed marks the card "Rejected" itself
/// (`authorize_tool_call`: "`acp::PermissionOptionKind::RejectOnce |
/// acp::PermissionOptionKind::RejectAlways => ToolCallStatus::Rejected`"), and the status the
/// agent sends afterwards replaces it (`update_fields`: "`if let Some(status) = status {
/// self.status = status.into(); }`"). tandem ends every call `completed` or `failed`, for the
/// clients that show nothing but the agent's status (CodeCompanion, agent-shell), so Zed's
/// card ends "Failed", which its thread view draws with the same red cross as "Rejected"
/// (`render_tool_call`: "`ToolCallStatus::Rejected | ToolCallStatus::Canceled |
/// ToolCallStatus::Allowed { status: acp::ToolCallStatus::Failed, .. } =>
/// Some(Icon::new(IconName::Close).color(Color::Error)`"), and the card says "Rejected by the
/// user.". The model is still told, and nothing ran.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rejected_call_ends_failed_in_zed_saying_why() {
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
    for (id, answer) in [("w", "reject_once"), ("r", "reject_always")] {
        assert_eq!(
            zed::card_status(&updates, id, Some(answer), "end_turn"),
            "Failed"
        );
        let last = crate::common::calls::call_events(&updates, id)
            .last()
            .copied()
            .unwrap()
            .clone();
        assert!(last.to_string().contains("Rejected by the user."), "{last}");
    }
    let requests = mock.requests();
    assert!(tool_result(&requests[1], "w").starts_with("Rejected"));
    assert!(tool_result(&requests[2], "r").starts_with("Rejected"));
    assert!(!ws.project().join("a.txt").exists());
    assert!(!ws.project().join("ran").exists());
    assert_eq!(zed::thread_problems(&updates), Vec::<String>::new());
}

/// Zed refuses `fs/read_text_file` outside its worktrees with `resource_not_found`
/// (`read_text_file` in `acp_thread.rs`: "`project_path_for_absolute_path(&path, cx)
/// .ok_or_else(|| acp::Error::resource_not_found(Some(path.display().to_string())))`"): the
/// file is there, so the model is not told it does not exist. The user's "no" keeps it
/// from the model; once the user allows the read, tandem reads the file itself.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_allowed_read_outside_zeds_worktrees_is_read_by_tandem() {
    let ws = Workspace::new();
    let notes = outside(&ws, "notes.txt", "far away\n");
    let read = json!({"path": path_str(&notes)});
    let mock = MockModel::start(vec![
        Reply::tools(&[("r1", "read_file", read.clone())]),
        Reply::tools(&[("r2", "read_file", read)]),
        Reply::text(&["done"]),
    ])
    .await;
    let (mut agent, session, editor) = zed_session(&ws, &mock, "ask", &[]).await;
    editor.answer_with(&[Answer::Select("reject_once"), Answer::Select("allow_once")]);
    let (answer, updates) = agent.prompt(&session, "read it").await;
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    let requests = mock.requests();
    assert!(tool_result(&requests[1], "r1").starts_with("Rejected"));
    assert!(!requests[1].body.to_string().contains("far away"));
    let allowed = tool_result(&requests[2], "r2");
    assert!(allowed.contains("far away"), "{allowed}");
    assert!(!allowed.contains("does not exist"), "{allowed}");
    // Zed was asked first (an editor may hold the file unsaved), only after the user allowed.
    assert_eq!(editor.params_of("fs/read_text_file").len(), 1);
    assert_eq!(zed::thread_problems(&updates), Vec::<String>::new());
}

/// The mode lets reads outside the project run unasked (`full-access`); a deny rule still
/// keeps a file from the model, and tandem's own read of a file Zed refused is no way
/// around it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deny_rule_still_holds_where_tandem_reads_for_zed() {
    let ws = Workspace::new();
    let notes = outside(&ws, "notes.txt", "far away\n");
    let secret = outside(&ws, "secret.txt", "hunter2\n");
    ws.write(
        "home/.config/tandem/config.toml",
        &format!(
            "[permissions]\ndeny = [\"read_file({})\"]\n",
            path_str(&secret)
        ),
    );
    let mock = MockModel::start(vec![
        Reply::tools(&[
            ("n", "read_file", json!({"path": path_str(&notes)})),
            ("s", "read_file", json!({"path": path_str(&secret)})),
        ]),
        Reply::text(&["done"]),
    ])
    .await;
    let (mut agent, session, editor) = zed_session(&ws, &mock, "full-access", &[]).await;
    let (answer, _) = agent.prompt(&session, "read both").await;
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    let requests = mock.requests();
    assert!(tool_result(&requests[1], "n").contains("far away"));
    assert!(tool_result(&requests[1], "s").starts_with("Refused by the rule"));
    assert!(!everything_sent(&mock).contains("hunter2"));
    let asked: Vec<Value> = editor.params_of("fs/read_text_file");
    assert!(
        asked.iter().all(|p| p["path"] != path_str(&secret)),
        "{asked:?}"
    );
}

/// Zed refuses a write outside its worktrees too (`write_text_file` in `acp_thread.rs`:
/// "`.context(\"invalid path\")?`", an internal error). tandem asks before an edit outside the
/// project; once the user allows it, tandem reads and writes the file itself, and the card
/// shows the change. Before that, nothing of the file was read for the model.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_allowed_edit_outside_zeds_worktrees_is_made_by_tandem() {
    let ws = Workspace::new();
    let notes = outside(&ws, "notes.txt", "one\ntwo\n");
    let new = ws.project().with_file_name("outside").join("new.txt");
    let mock = MockModel::start(vec![
        Reply::tools(&[(
            "e",
            "edit_file",
            json!({"path": path_str(&notes), "old_string": "two", "new_string": "three"}),
        )]),
        Reply::tools(&[(
            "w",
            "write_file",
            json!({"path": path_str(&new), "content": "fresh\n"}),
        )]),
        Reply::text(&["done"]),
    ])
    .await;
    let (mut agent, session, editor) = zed_session(&ws, &mock, "ask", &[]).await;
    let (answer, updates) = agent.prompt(&session, "edit outside").await;
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    let requests = mock.requests();
    let edited = tool_result(&requests[1], "e");
    assert!(edited.starts_with("Edited"), "{edited}");
    assert!(tool_result(&requests[2], "w").starts_with("Created"));
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), "one\nthree\n");
    assert_eq!(std::fs::read_to_string(&new).unwrap(), "fresh\n");
    // Each was asked about (an edit outside the project asks in `ask`), once, the edit with
    // a note instead of a diff, since nothing of the file was read before the user allowed it.
    let asked = editor.params_of("session/request_permission");
    assert_eq!(asked.len(), 2);
    let note = asked[0]["toolCall"]["content"].to_string();
    assert!(note.contains("would not open"), "{note}");
    assert!(!note.contains("two"), "{note}");
    let diffs = crate::common::calls::shown_contents(&updates, "diff");
    assert!(
        diffs.iter().any(|d| d["newText"] == "one\nthree\n"),
        "{diffs:?}"
    );
    assert_eq!(zed::thread_problems(&updates), Vec::<String>::new());
}

/// Zed lets the user paste an image only when the agent says it takes them
/// (`MessageEditor::supports_images` in `crates/agent_ui/src/message_editor.rs`:
/// "`self.read(cx).prompt_capabilities.borrow().image`"). tandem says so when one of the
/// models it offers takes images, and not for a model it does not know to.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn images_are_advertised_only_when_a_model_takes_them() {
    let mock = MockModel::start(vec![]).await;
    for (models, image) in [
        (None, false),
        (Some("gpt-4o"), true),
        (Some("mock-model,gpt-4o"), true),
    ] {
        let ws = Workspace::new();
        let mut env = ws.env(&mock);
        if let Some(list) = models {
            env.push(("TANDEM_MODELS".into(), list.into()));
        }
        let mut agent = Agent::spawn_with(&env, &[], Some(zed::editor(&[ws.project()])));
        let init = zed::initialize(&mut agent).await;
        assert_eq!(
            init["agentCapabilities"]["promptCapabilities"]["image"], image,
            "{models:?}: {init}"
        );
        agent.shutdown().await;
    }
}

/// An image sent to a model that does not take it (an editor that ignores the capability, a
/// switch to another model) is left out for the model, and the user is told so in the turn.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_image_the_model_cannot_take_is_reported_to_the_user() {
    let ws = Workspace::new();
    let mock = MockModel::start(vec![Reply::text(&["I read your words"])]).await;
    let (mut agent, session, _) = zed_session(&ws, &mock, "ask", &[]).await;
    let answer = agent
        .request(
            "session/prompt",
            json!({"sessionId": session, "prompt": [
                {"type": "text", "text": "What is this?"},
                {"type": "image", "data": crate::common::images::PIXEL_PNG, "mimeType": "image/png"}
            ]}),
        )
        .await;
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    let shown = joined(&agent.drain(), "agent_message_chunk");
    assert!(shown.contains("mock-model"), "{shown}");
    assert!(shown.contains("image"), "{shown}");
    assert!(shown.ends_with("I read your words"), "{shown}");
    let sent = mock.requests()[0].last_user_text();
    assert!(sent.contains("image omitted"), "{sent}");
}
