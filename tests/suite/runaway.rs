//! A model that repeats itself or overuses a tool: blocked repeats with a steering result,
//! then a request without tools; per-tool budgets; all shown to the editor and counted in
//! `_tandem/usage`.

use serde_json::{Value, json};

use crate::common::calls::{final_status, tool_result};
use crate::common::{Agent, MockModel, Reply, Workspace, copy_fixture, joined, path_str};

async fn started(script: Vec<Reply>, config: &str) -> (MockModel, Workspace, Agent, String) {
    let mock = MockModel::start(script).await;
    let ws = Workspace::new();
    copy_fixture("small", &ws.project());
    let config = ws.write("config.toml", config);
    let mut env = ws.env(&mock);
    env.push(("TANDEM_CONFIG".into(), path_str(&config)));
    let mut agent = Agent::spawn(&env, &[]);
    let id = agent.open_session(&ws.project()).await;
    (mock, ws, agent, id)
}

async fn usage(agent: &mut Agent, session: &str) -> Value {
    agent
        .request_ok("_tandem/usage", json!({"sessionId": session}))
        .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn repeated_calls_are_answered_for_the_model_then_tools_are_withdrawn() {
    let read = || json!({"path": "README.md"});
    let mut script: Vec<Reply> = (1..=6)
        .map(|i| Reply::tools(&[(&*format!("c{i}"), "read_file", read())]))
        .collect();
    script.push(Reply::text(&["Here is my answer."]));
    let (mock, _ws, mut agent, session) = started(script, "").await;
    let (response, updates) = agent.prompt(&session, "read the readme").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    let requests = mock.requests();
    assert_eq!(requests.len(), 7);
    // The first two run; the third and later are answered without running.
    assert!(tool_result(&requests[2], "c2").contains("small"), "ran");
    let third = tool_result(&requests[3], "c3");
    assert!(
        third.contains("already made this exact call") && third.contains("2 times in a row"),
        "{third}"
    );
    assert_eq!(final_status(&updates, "c3"), "failed");
    let sixth = tool_result(&requests[6], "c6");
    assert!(sixth.contains("Tools are now switched off"), "{sixth}");
    // Tools go with every request until the sixth repeat, and not after it.
    for r in &requests[..6] {
        assert!(r.body["tools"].is_array(), "tools offered");
    }
    assert!(
        requests[6].body.get("tools").is_none(),
        "{}",
        requests[6].body
    );
    let shown = joined(&updates, "agent_message_chunk");
    assert!(
        shown.contains("same tool calls 3 times in a row"),
        "{shown}"
    );
    assert!(shown.contains("tools are switched off"), "{shown}");
    assert!(shown.ends_with("Here is my answer."));
    let counts = usage(&mut agent, &session).await;
    assert_eq!(counts["repeatsBlocked"], 4, "{counts}");
    assert_eq!(counts["toolsWithdrawn"], 1, "{counts}");
    // The next prompt starts afresh: tools are back.
    mock.push(Reply::text(&["ok"]));
    agent.prompt(&session, "again").await;
    assert!(mock.requests()[7].body["tools"].is_array());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_past_a_tools_budget_are_refused() {
    let batch = Reply::tools(&[
        ("a", "read_file", json!({"path": "README.md"})),
        ("b", "read_file", json!({"path": "notes"})),
        ("c", "read_file", json!({"path": "src/lib.rs"})),
        ("d", "list_directory", json!({"path": "."})),
    ]);
    let (mock, _ws, mut agent, session) = started(
        vec![batch, Reply::text(&["done"])],
        "[tool_budgets]\nread_file = 2\n",
    )
    .await;
    let (response, updates) = agent.prompt(&session, "read").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    let second = &mock.requests()[1];
    assert!(!tool_result(second, "a").contains("budget"));
    assert!(!tool_result(second, "b").contains("budget"));
    let refused = tool_result(second, "c");
    assert!(
        refused.contains("budget") && refused.contains("`read_file`"),
        "{refused}"
    );
    assert!(!tool_result(second, "d").contains("budget"));
    assert_eq!(final_status(&updates, "c"), "failed");
    assert!(joined(&updates, "agent_message_chunk").contains("past their budget"));
    assert_eq!(usage(&mut agent, &session).await["budgetRefusals"], 1);
}
