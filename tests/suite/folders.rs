//! Multi-root workspaces (ACP `additionalDirectories`): Zed sends every folder of the
//! workspace only to an agent that advertises it. The other folders are inside the workspace
//! for permissions, searches without a path cover them, their `AGENTS.md` applies, the
//! system prompt names them, and the session keeps them across processes.

use serde_json::{Value, json};

use crate::common::calls::tool_result;
use crate::common::editor::{FakeEditor, full_caps};
use crate::common::{Agent, MockModel, Reply, Workspace, assert_error, copy_fixture, path_str};

/// A second folder next to the project, with its own instructions and a file.
fn other_folder(ws: &Workspace) -> std::path::PathBuf {
    ws.write("other/AGENTS.md", "Rules of the other folder: OTHER-RULES.");
    ws.write("other/lib/extra.rs", "fn needle() {}\n");
    ws.project().parent().unwrap().join("other")
}

async fn new_session(agent: &mut Agent, ws: &Workspace, folders: Value) -> Value {
    agent
        .request(
            "session/new",
            json!({"cwd": ws.project(), "additionalDirectories": folders, "mcpServers": []}),
        )
        .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn other_folders_are_inside_the_workspace_searched_and_described() {
    let ws = Workspace::new();
    copy_fixture("small", &ws.project());
    let other = other_folder(&ws);
    let extra = path_str(&other.join("lib/extra.rs"));
    let script = vec![
        Reply::tools(&[
            ("r", "read_file", json!({"path": extra})),
            ("g", "grep", json!({"pattern": "needle"})),
            ("f", "glob", json!({"pattern": "**/*.rs"})),
            ("l", "list_dir", json!({})),
        ]),
        Reply::tools(&[(
            "w",
            "edit_file",
            json!({"path": extra, "old_string": "needle", "new_string": "pin"}),
        )]),
        Reply::text(&["Done."]),
    ];
    let mock = MockModel::start(script).await;
    let editor = FakeEditor::new();
    let mut env = ws.env(&mock);
    env.push(("TANDEM_MODE".into(), "accept-edits".into()));
    let mut agent = Agent::spawn_with(&env, &[], Some(editor.clone()));
    let init = agent.initialize_with(full_caps()).await;
    assert_eq!(
        init["agentCapabilities"]["sessionCapabilities"]["additionalDirectories"],
        json!({}),
        "{init}"
    );
    let opened = new_session(&mut agent, &ws, json!([other])).await;
    let session = opened["result"]["sessionId"].as_str().unwrap().to_string();
    let (response, _) = agent.prompt(&session, "look around the other folder").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");

    assert!(
        editor.params_of("session/request_permission").is_empty(),
        "reads and (in accept-edits) edits in the other folder are free"
    );
    assert_eq!(
        std::fs::read_to_string(other.join("lib/extra.rs")).unwrap(),
        "fn pin() {}\n"
    );
    let requests = mock.requests();
    let first = &requests[0];
    let prompt = first.system_prompt();
    assert!(
        prompt.contains(&path_str(&other.canonicalize().unwrap())),
        "{prompt}"
    );
    assert!(prompt.contains("OTHER-RULES"), "its AGENTS.md applies");
    assert!(tool_result(&requests[1], "r").contains("needle"));
    let other_file = path_str(&other.canonicalize().unwrap().join("lib/extra.rs"));
    assert!(
        tool_result(&requests[1], "g").contains(&format!("{other_file}:1:")),
        "{}",
        tool_result(&requests[1], "g")
    );
    let found = tool_result(&requests[1], "f");
    assert!(
        found.contains("src/lib.rs") && found.contains(&other_file),
        "{found}"
    );
    let listed = tool_result(&requests[1], "l");
    assert!(
        listed.contains("README.md") && listed.contains(&path_str(&other.canonicalize().unwrap())),
        "{listed}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn folders_are_checked_kept_listed_and_replaced_on_load() {
    let ws = Workspace::new();
    let other = other_folder(&ws);
    let mock = MockModel::start(vec![Reply::text(&["a"]), Reply::text(&["b"])]).await;
    let mut agent = Agent::spawn(&ws.env(&mock), &[]);
    agent.initialize().await;
    let refused = new_session(&mut agent, &ws, json!(["relative/dir"])).await;
    assert_error(&refused, -32602, "additionalDirectories");

    let opened = new_session(&mut agent, &ws, json!([other])).await;
    let session = opened["result"]["sessionId"].as_str().unwrap().to_string();
    agent.prompt(&session, "hi").await;
    let listed = agent.request_ok("session/list", json!({})).await;
    assert_eq!(
        listed["sessions"][0]["additionalDirectories"],
        json!([other])
    );
    let (status, _) = agent.shutdown().await;
    assert!(status.success());

    // A new process: loading with the folders keeps them; loading without drops them.
    let mut agent = Agent::spawn(&ws.env(&mock), &[]);
    agent.initialize().await;
    agent
        .request_ok(
            "session/load",
            json!({"sessionId": session, "cwd": ws.project(), "additionalDirectories": [other], "mcpServers": []}),
        )
        .await;
    agent.prompt(&session, "again").await;
    assert!(mock.requests()[1].system_prompt().contains("OTHER-RULES"));
    agent
        .request_ok(
            "session/resume",
            json!({"sessionId": session, "cwd": ws.project(), "mcpServers": []}),
        )
        .await;
    let listed = agent.request_ok("session/list", json!({})).await;
    assert!(
        listed["sessions"][0].get("additionalDirectories").is_none(),
        "{listed}"
    );
}
