//! An MCP server that dies is brought back: its tools are withdrawn from the model while it
//! is down, the user is told once when it goes and once when it is back, and its tools work
//! again afterwards.

use std::time::Duration;

use serde_json::json;

use super::mcp::{mcp_session, server};
use crate::common::calls::tool_result;
use crate::common::{Reply, joined};

fn tool_names(request: &crate::common::mock_model::Recorded) -> Vec<String> {
    request.body["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .filter_map(|t| t["function"]["name"].as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dead_server_is_restarted_and_its_tools_come_back() {
    let script = vec![
        Reply::tools(&[("c", "mcp__t__crash", json!({}))]),
        Reply::text(&["it crashed"]),
        Reply::text(&["while it was down"]),
        Reply::tools(&[("e", "mcp__t__echo", json!({"text": "alive again"}))]),
        Reply::text(&["back"]),
    ];
    let dir = tempfile::tempdir().unwrap();
    let (mock, _ws, mut agent, session, _editor) = mcp_session(
        script,
        "full-access",
        json!([server("t", &dir.path().join("log"))]),
    )
    .await;
    let (response, _) = agent.prompt(&session, "crash it").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    assert!(tool_names(&mock.requests()[0]).contains(&"mcp__t__echo".to_string()));
    // Wait until the server has been started again and has listed its tools.
    let log = dir.path().join("log");
    let mut back = false;
    for _ in 0..100 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let starts = std::fs::read_to_string(&log)
            .unwrap_or_default()
            .matches("started")
            .count();
        let status = agent
            .request_ok("_tandem/status", json!({"sessionId": session}))
            .await;
        if starts >= 2 && status.to_string().contains("\"ready\"") {
            back = true;
            break;
        }
    }
    assert!(back, "the server was started again");
    let mut told = String::new();
    for prompt in ["meanwhile", "use it again"] {
        let (response, updates) = agent.prompt(&session, prompt).await;
        assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
        told.push_str(&joined(&updates, "agent_message_chunk"));
    }
    // Told once that it went, and once that it is back.
    assert_eq!(told.matches("MCP server `t` stopped").count(), 1, "{told}");
    assert_eq!(told.matches("MCP server `t` is back").count(), 1, "{told}");
    let requests = mock.requests();
    assert!(tool_names(&requests[3]).contains(&"mcp__t__echo".to_string()));
    assert_eq!(tool_result(&requests[4], "e"), "alive again");
}
