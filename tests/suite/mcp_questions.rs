//! An MCP server's own questions reach the editor: a server's `elicitation/create` (tandem's
//! test server, and the real `server-everything` from npm with its rich form) becomes ACP
//! `elicitation/create` for an editor that advertised form elicitation, scoped to the session
//! and the MCP call; for one that did not, tandem does not offer elicitation to the server.

use serde_json::{Value, json};

use crate::common::calls::tool_result;
use crate::common::editor::FakeEditor;
use crate::common::mock_model::Reply;
use crate::common::{Agent, MockModel, Workspace, path_str};

const SERVER: &str = env!("CARGO_BIN_EXE_tandem-test-mcp");

/// A session whose editor has `caps`, with `servers`, in full-access mode.
async fn session(
    script: Vec<Reply>,
    caps: Value,
    servers: Value,
) -> (
    MockModel,
    Workspace,
    Agent,
    String,
    std::sync::Arc<FakeEditor>,
) {
    let mock = MockModel::start(script).await;
    let ws = Workspace::new();
    let editor = FakeEditor::new();
    let mut env = ws.env(&mock);
    env.push(("TANDEM_MODE".into(), "full-access".into()));
    let mut agent = Agent::spawn_with(&env, &[], Some(editor.clone()));
    agent.initialize_with(caps).await;
    let opened = agent
        .request_ok(
            "session/new",
            json!({"cwd": path_str(&ws.project()), "mcpServers": servers}),
        )
        .await;
    let id = opened["sessionId"].as_str().unwrap().to_string();
    (mock, ws, agent, id, editor)
}

fn test_server() -> Value {
    json!([{"name": "test", "command": SERVER, "args": [], "env": []}])
}

fn calling(tool: &str) -> Vec<Reply> {
    vec![
        Reply::tools(&[("m", tool, json!({}))]),
        Reply::text(&["done"]),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_servers_input_request_is_asked_in_the_editor() {
    let caps = json!({"elicitation": {"form": {}}});
    let (mock, _ws, mut agent, id, editor) =
        session(calling("mcp__test__ask"), caps, test_server()).await;
    editor.elicit_with(&[json!({"action": "accept", "content": {"name": "Ada"}})]);
    let (response, _) = agent.prompt(&id, "ask").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    let asked = editor.params_of("elicitation/create");
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert_eq!(
        asked[0]["message"],
        "MCP server `test` asks: Who is asking?"
    );
    assert_eq!(asked[0]["sessionId"], id.as_str());
    assert_eq!(asked[0]["toolCallId"], "m");
    assert_eq!(
        asked[0]["requestedSchema"]["properties"]["name"]["title"],
        "Name"
    );
    assert_eq!(tool_result(&mock.requests()[1], "m"), "hello Ada");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_elicitation_a_servers_question_is_declined() {
    let (mock, _ws, mut agent, id, editor) =
        session(calling("mcp__test__ask"), json!({}), test_server()).await;
    let (response, _) = agent.prompt(&id, "ask").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    assert!(editor.params_of("elicitation/create").is_empty());
    let result = tool_result(&mock.requests()[1], "m");
    assert!(result.starts_with("no name"), "{result}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_real_servers_elicitation_request_reaches_the_editor() {
    let entry = tokio::task::spawn_blocking(super::mcp::everything_server)
        .await
        .unwrap();
    let servers =
        json!([{"name": "everything", "command": "node", "args": [entry, "stdio"], "env": []}]);
    let caps = json!({"elicitation": {"form": {}}});
    let (mock, _ws, mut agent, id, editor) = session(
        calling("mcp__everything__trigger-elicitation-request"),
        caps,
        servers,
    )
    .await;
    editor.elicit_with(&[
        json!({"action": "accept", "content": {"name": "Ada Lovelace", "check": true}}),
    ]);
    let (response, _) = agent.prompt(&id, "ask").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    let asked = editor.params_of("elicitation/create");
    assert_eq!(asked.len(), 1, "{asked:?}");
    let schema = &asked[0]["requestedSchema"];
    assert_eq!(schema["properties"]["email"]["format"], "email", "{schema}");
    assert_eq!(asked[0]["toolCallId"], "m");
    let result = tool_result(&mock.requests()[1], "m");
    assert!(result.contains("Ada Lovelace"), "{result}");
}
