//! Clients without a terminal (agent-shell, CodeCompanion) run commands through tandem's
//! local fallback: they see the output while the command runs, not only when it ends.

use serde_json::json;

use crate::common::calls::{call_events, one_call, tool_result};
use crate::common::tool_session;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_local_command_streams_its_output_while_it_runs() {
    let (mock, _ws, mut agent, session, _editor) = tool_session(
        one_call(
            "c",
            "run_command",
            json!({"command": "echo first-line; sleep 1; echo second-line"}),
        ),
        json!({}),
        "full-access",
    )
    .await;
    let (response, updates) = agent.prompt(&session, "run").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    let texts: Vec<String> = call_events(&updates, "c")
        .iter()
        .filter_map(|u| u["content"][0]["content"]["text"].as_str())
        .map(String::from)
        .collect();
    let running = texts
        .iter()
        .position(|t| t.contains("first-line") && !t.contains("second-line"))
        .unwrap_or_else(|| panic!("no update while it ran: {texts:?}"));
    assert!(texts[running].contains("Running"), "{}", texts[running]);
    let last = texts.last().unwrap();
    assert!(
        last.contains("second-line") && last.contains("Exit code: 0"),
        "{last}"
    );
    assert!(tool_result(&mock.requests()[1], "c").contains("first-line\nsecond-line"));
}
