//! The loop around the tools: searching, plans, bad calls, the one-result-per-call
//! invariant, concurrency, and the request cap.

use serde_json::json;

use crate::common::calls::{call_events, final_status, one_call, tool_result};
use crate::common::editor::full_caps;
use crate::common::{Reply, of_kind, tool_session};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn listing_globbing_and_grepping_respect_gitignore_and_binaries() {
    let script = vec![
        Reply::tools(&[
            ("ls", "list_dir", json!({"path": "."})),
            ("rs", "glob", json!({"pattern": "**/*.rs"})),
            ("logs", "glob", json!({"pattern": "*.log"})),
            ("todo", "grep", json!({"pattern": "TODO"})),
            (
                "ci",
                "grep",
                json!({"pattern": "write the", "case_insensitive": true, "glob": "*.txt"}),
            ),
            ("bad", "grep", json!({"pattern": "("})),
        ]),
        Reply::text(&["ok"]),
    ];
    let (mock, _ws, mut agent, session, _editor) = tool_session(script, json!({}), "ask").await;
    let (_, updates) = agent.prompt(&session, "look around").await;
    let second = &mock.requests()[1];
    assert_eq!(
        tool_result(second, "ls"),
        ".gitignore\nREADME.md\nbuild.log\nlogo.bin\nnotes/\nsrc/"
    );
    assert_eq!(tool_result(second, "rs"), "src/lib.rs\nsrc/main.rs");
    assert_eq!(tool_result(second, "logs"), "No files matched.");
    assert_eq!(
        tool_result(second, "todo"),
        "src/lib.rs:11: // TODO: add a test\nsrc/lib.rs:12: // TODO: document the crate"
    );
    assert_eq!(
        tool_result(second, "ci"),
        "notes/todo.txt:1: - write the greeting\nnotes/todo.txt:2: - Write the farewell"
    );
    assert!(tool_result(second, "bad").contains("invalid regular expression"));
    assert_eq!(call_events(&updates, "todo")[0]["kind"], "search");
    assert_eq!(
        call_events(&updates, "todo")[1]["title"],
        "Search `TODO` in ."
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn update_plan_is_sent_as_a_plan() {
    let plan = json!({"entries": [
        {"content": "Read the code", "status": "completed"},
        {"content": "Fix the bug", "status": "in_progress", "priority": "high"},
        {"content": "Run tests", "status": "pending", "priority": "low"}
    ]});
    let (mock, _ws, mut agent, session, _editor) =
        tool_session(one_call("p", "update_plan", plan), json!({}), "ask").await;
    let (_, updates) = agent.prompt(&session, "plan").await;
    let plans = of_kind(&updates, "plan");
    assert_eq!(plans.len(), 1);
    assert_eq!(
        plans[0]["entries"][1],
        json!({"content": "Fix the bug", "status": "in_progress", "priority": "high"})
    );
    assert_eq!(plans[0]["entries"][0]["priority"], "medium");
    assert!(
        call_events(&updates, "p").is_empty(),
        "a plan is not shown as a tool call"
    );
    assert_eq!(
        tool_result(&mock.requests()[1], "p"),
        "Plan updated (3 entries)."
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_tools_and_broken_arguments_are_told_to_the_model() {
    let reply = Reply::chunks(vec![
        crate::common::mock_model::tool_call(0, "u", "delete_everything", "{}"),
        crate::common::mock_model::tool_call(1, "j", "read_file", "{\"path\": \"src/li"),
        crate::common::mock_model::tool_call(2, "a", "read_file", "{\"file\": \"x\"}"),
        crate::common::mock_model::finish("tool_calls"),
    ]);
    let (mock, _ws, mut agent, session, _editor) =
        tool_session(vec![reply, Reply::text(&["sorry"])], json!({}), "ask").await;
    let (response, updates) = agent.prompt(&session, "go").await;
    assert_eq!(response["result"]["stopReason"], "end_turn");
    let second = &mock.requests()[1];
    assert!(
        tool_result(second, "u")
            .contains("unknown tool `delete_everything`; the tools are: read_file")
    );
    assert!(tool_result(second, "j").contains("not valid JSON"));
    assert!(tool_result(second, "a").contains("invalid arguments for read_file"));
    for id in ["u", "j", "a"] {
        assert_eq!(final_status(&updates, id), "failed");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_tools_huge_arguments_are_not_echoed_whole() {
    let huge = json!({ "blob": "q".repeat(1_000_000) }).to_string();
    let reply = Reply::chunks(vec![
        crate::common::mock_model::tool_call(0, "u", "upload_everything", &huge),
        crate::common::mock_model::finish("tool_calls"),
    ]);
    let (_mock, _ws, mut agent, session, _editor) =
        tool_session(vec![reply, Reply::text(&["sorry"])], json!({}), "ask").await;
    let (response, updates) = agent.prompt(&session, "go").await;
    assert_eq!(response["result"]["stopReason"], "end_turn");
    let shown: usize = call_events(&updates, "u")
        .iter()
        .map(|u| u.to_string().len())
        .sum();
    assert!(shown < 10_000, "{shown} bytes went to the editor");
    let raw = &call_events(&updates, "u")[0]["rawInput"];
    assert_eq!(raw["bytes"], huge.len(), "{raw}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_call_in_history_has_exactly_one_result() {
    let script = vec![
        Reply::tools(&[
            ("a", "read_file", json!({"path": "README.md"})),
            ("b", "list_dir", json!({"path": "src"})),
        ]),
        Reply::tools(&[("c", "grep", json!({"pattern": "fn"}))]),
        Reply::text(&["done"]),
        Reply::text(&["again"]),
    ];
    let (mock, _ws, mut agent, session, _editor) = tool_session(script, json!({}), "ask").await;
    agent.prompt(&session, "one").await;
    agent.prompt(&session, "two").await;
    let last = &mock.requests()[3].body["messages"];
    let roles: Vec<_> = last
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(
        roles,
        [
            "system",
            "user",
            "assistant",
            "tool",
            "tool",
            "assistant",
            "tool",
            "assistant",
            "user"
        ]
    );
    assert_eq!(last[3]["tool_call_id"], "a");
    assert_eq!(last[4]["tool_call_id"], "b");
    assert_eq!(last[6]["tool_call_id"], "c");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_only_calls_run_together_and_edits_one_at_a_time() {
    let script = vec![
        Reply::tools(&[
            ("r1", "read_file", json!({"path": "README.md"})),
            ("r2", "read_file", json!({"path": "src/main.rs"})),
            ("r3", "read_file", json!({"path": "src/lib.rs"})),
            ("w1", "write_file", json!({"path": "a.txt", "content": "a"})),
            ("w2", "write_file", json!({"path": "b.txt", "content": "b"})),
        ]),
        Reply::text(&["ok"]),
    ];
    let (mock, _ws, mut agent, session, editor) =
        tool_session(script, full_caps(), "full-access").await;
    editor.delay("fs/read_text_file", std::time::Duration::from_millis(300));
    editor.delay("fs/write_text_file", std::time::Duration::from_millis(200));
    agent.prompt(&session, "go").await;
    assert_eq!(
        editor.peak("fs/read_text_file"),
        3,
        "the three reads overlapped"
    );
    assert_eq!(
        editor.peak("fs/write_text_file"),
        1,
        "writes ran one at a time"
    );
    let writes: Vec<_> = editor
        .params_of("fs/write_text_file")
        .iter()
        .map(|p| p["content"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(writes, ["a", "b"], "in the model's order");
    // Results come back in the model's order too.
    let ids: Vec<_> = mock.requests()[1].body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["tool_call_id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(ids, ["r1", "r2", "r3", "w1", "w2"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_that_never_stops_calling_tools_hits_the_request_cap() {
    let mock = crate::common::MockModel::start(vec![]).await;
    for i in 0..5 {
        mock.push(Reply::tools(&[(
            &format!("c{i}"),
            "list_dir",
            json!({"path": "."}),
        )]));
    }
    let ws = crate::common::Workspace::new();
    let config = ws.write("config.toml", "max_turn_requests = 3\n");
    let mut agent = crate::common::Agent::spawn(
        &ws.env(&mock),
        &["--config", &crate::common::path_str(&config)],
    );
    let session = agent.open_session(&ws.project()).await;
    let (response, _) = agent.prompt(&session, "loop").await;
    assert_eq!(
        response["result"]["stopReason"], "max_turn_requests",
        "{response}"
    );
    assert_eq!(mock.requests().len(), 3);
    // The history is whole: the next prompt's request answers every call.
    mock.push(Reply::text(&["ok"]));
    agent.prompt(&session, "stop").await;
    let last = &mock.requests()[3].body["messages"];
    let tool_results = last
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .count();
    assert_eq!(tool_results, 3);
}
