//! Subagents through the `task` tool: a conversation of their own (system prompt, tool
//! subset, model), shown to the editor as one tool call whose content follows their work,
//! answered to the parent model with the final answer only, stored with the parent's
//! transcript, and stopped by `session/cancel`.

use std::time::Duration;

use serde_json::{Value, json};

use crate::common::calls::{call_events, final_status, tool_result};
use crate::common::{Reply, response, session_in};

fn names(request: &crate::common::mock_model::Recorded) -> Vec<String> {
    request.body["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .map(|t| t["function"]["name"].as_str().unwrap().to_string())
                .collect()
        })
        .unwrap_or_default()
}

/// The `scout` example (fixtures/workspaces/extend/.tandem/agents/scout.md): its own prompt,
/// its four tools, its model; the editor sees one `task` call.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subagent_works_with_its_own_tools_and_model_in_one_call() {
    let script = vec![
        // The parent hands the task over.
        Reply::tools(&[(
            "t1",
            "task",
            json!({"agent": "scout", "description": "Map the crate", "prompt": "What is in src/?"}),
        )]),
        // The scout: a tool it may not use, then one it may, then its answer.
        Reply::tools(&[("s1", "run_command", json!({"command": "ls"}))]),
        Reply::tools(&[("s2", "list_dir", json!({"path": "src"}))]),
        Reply::text(&["src/lib.rs holds `add`; ", "nothing else."]),
        // The parent answers from the report.
        Reply::text(&["The crate has one file."]),
        // A later prompt: the parent's history holds the task call and its answer only.
        Reply::text(&["ok"]),
    ];
    let (mock, ws, mut agent, session, editor) =
        session_in("extend", script, json!({}), "ask", |_| {}).await;
    let (response, updates) = agent.prompt(&session, "what is in this crate?").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    let requests = mock.requests();
    assert_eq!(requests.len(), 5);

    // The parent is offered `task`, listing the built-in and the project's subagents.
    let parent_tools = names(&requests[0]);
    assert!(
        parent_tools.contains(&"task".to_string()),
        "{parent_tools:?}"
    );
    let task = requests[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["function"]["name"] == "task")
        .unwrap()
        .clone();
    let description = task["function"]["description"].as_str().unwrap();
    assert!(description.contains("- general: "), "{description}");
    assert!(
        description.contains("- scout: Maps an unfamiliar part"),
        "{description}"
    );

    // The scout's requests: its model, its prompt, its tools (no `task`), the task as the
    // only user message.
    for sub in &requests[1..4] {
        assert_eq!(sub.body["model"], "small-model");
        assert!(
            sub.system_prompt().starts_with("You are a scout."),
            "{}",
            sub.system_prompt()
        );
        assert_eq!(names(sub), ["read_file", "list_dir", "glob", "grep"]);
        assert_eq!(sub.body["messages"][1]["content"], "What is in src/?");
    }
    let refused = tool_result(&requests[2], "s1");
    assert!(refused.contains("unknown tool `run_command`"), "{refused}");
    let listed = tool_result(&requests[3], "s2");
    assert!(listed.contains("lib.rs"), "{listed}");

    // The parent model reads only the final answer.
    assert_eq!(requests[4].body["model"], "mock-model");
    assert_eq!(
        tool_result(&requests[4], "t1"),
        "src/lib.rs holds `add`; nothing else."
    );

    // The editor: one tool call, updated as the scout worked; the scout's own calls are not
    // separate tool calls.
    let events = call_events(&updates, "t1");
    assert_eq!(events[0]["sessionUpdate"], "tool_call");
    assert_eq!(events[0]["title"], "Subagent task");
    assert_eq!(events[1]["title"], "scout: Map the crate");
    let texts: Vec<String> = events
        .iter()
        .filter_map(|e| {
            e["content"][0]["content"]["text"]
                .as_str()
                .map(String::from)
        })
        .collect();
    assert!(
        texts
            .iter()
            .any(|t| t.contains("List src") && !t.contains("nothing else")),
        "progress while it works: {texts:?}"
    );
    let last = texts.last().unwrap();
    assert!(
        last.contains("✗ run_command") || last.contains("✗ Unknown tool"),
        "{last}"
    );
    assert!(last.contains("✓ List src"), "{last}");
    assert!(
        last.ends_with("src/lib.rs holds `add`; nothing else."),
        "{last}"
    );
    assert_eq!(final_status(&updates, "t1"), "completed");
    for id in ["s1", "s2"] {
        assert!(
            call_events(&updates, id).is_empty(),
            "{id} shown on its own"
        );
    }
    assert!(editor.params_of("session/request_permission").is_empty());

    // Stored with the parent's transcript, apart from its history.
    let transcript = std::fs::read_to_string(
        ws.home()
            .join("data/sessions")
            .join(format!("{session}.jsonl")),
    )
    .unwrap();
    let nested: Vec<Value> = transcript
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|l| l["type"] == "subagent")
        .collect();
    assert!(nested.len() >= 6, "{transcript}");
    assert!(
        nested
            .iter()
            .all(|l| l["call_id"] == "t1" && l["agent"] == "scout")
    );
    assert_eq!(nested[0]["record"]["type"], "user");
    agent.prompt(&session, "thanks").await;
    let history = mock.requests()[5].body["messages"].to_string();
    assert!(history.contains("src/lib.rs holds `add`; nothing else."));
    assert!(!history.contains("What is in src/?") || history.contains("\"task\""));
    assert!(
        !history.contains("\"s2\""),
        "the scout's calls stay out: {history}"
    );
    agent.assert_valid();
}

/// The built-in `general` subagent runs under the session's mode: its edit asks the editor,
/// like the parent's would.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_general_subagent_asks_permission_like_the_parent() {
    let script = vec![
        Reply::tools(&[(
            "t1",
            "task",
            json!({"description": "Write notes", "prompt": "Write notes.md saying hi"}),
        )]),
        Reply::tools(&[(
            "s1",
            "write_file",
            json!({"path": "notes.md", "content": "hi\n"}),
        )]),
        Reply::text(&["Wrote notes.md."]),
        Reply::text(&["Done."]),
    ];
    let (mock, ws, mut agent, session, editor) =
        session_in("extend", script, json!({}), "ask", |_| {}).await;
    editor.answer_with(&[crate::common::editor::Answer::Select("allow_once")]);
    let (response, updates) = agent.prompt(&session, "write notes").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    let requests = mock.requests();
    assert!(
        requests[1]
            .system_prompt()
            .starts_with("You are a subagent of tandem")
    );
    assert!(
        !names(&requests[1]).contains(&"task".to_string()),
        "no nesting"
    );
    let asked = editor.params_of("session/request_permission");
    assert_eq!(asked.len(), 1);
    // The subagent's own call id, under its task's: never one of the session's ids.
    assert_eq!(asked[0]["toolCall"]["toolCallId"], "t1/s1");
    assert_eq!(
        std::fs::read_to_string(ws.project().join("notes.md")).unwrap(),
        "hi\n"
    );
    assert_eq!(tool_result(&requests[3], "t1"), "Wrote notes.md.");
    assert_eq!(final_status(&updates, "t1"), "completed");
    // An unknown subagent is a failed call the model can correct.
    mock.push(Reply::tools(&[(
        "t2",
        "task",
        json!({"agent": "nobody", "description": "x", "prompt": "y"}),
    )]));
    mock.push(Reply::text(&["sorry"]));
    let (_, updates) = agent.prompt(&session, "again").await;
    assert_eq!(final_status(&updates, "t2"), "failed");
    let result = tool_result(mock.requests().last().unwrap(), "t2");
    assert!(result.contains("unknown subagent `nobody`"), "{result}");
    assert!(result.contains("general, scout"), "{result}");
    agent.assert_valid();
}

/// `session/cancel` reaches the subagent: its request stops, the prompt ends `cancelled`, the
/// task call ends `failed` (a client that shows status would keep it running otherwise), and
/// the session answers the next prompt.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_reaches_a_working_subagent() {
    let pieces: Vec<String> = (0..200).map(|i| format!("w{i} ")).collect();
    let refs: Vec<&str> = pieces.iter().map(String::as_str).collect();
    let script = vec![
        Reply::tools(&[(
            "t1",
            "task",
            json!({"description": "Long job", "prompt": "Work for a long time"}),
        )]),
        Reply::text(&refs).slow(Duration::from_millis(50)),
    ];
    let (mock, _ws, mut agent, session, _editor) =
        session_in("extend", script, json!({}), "ask", |_| {}).await;
    let pending = agent.start_prompt(&session, "start the job").await;
    // Wait until the subagent's words show in the task call.
    loop {
        let m = agent.next_message().await;
        let text = m["params"]["update"]["content"][0]["content"]["text"]
            .as_str()
            .unwrap_or("");
        if text.contains("w1") {
            break;
        }
    }
    let cancelled_at = std::time::Instant::now();
    agent
        .notify("session/cancel", json!({"sessionId": session}))
        .await;
    let r = response(pending).await;
    assert_eq!(r["result"]["stopReason"], "cancelled", "{r}");
    assert!(cancelled_at.elapsed() < Duration::from_secs(3));
    let updates = agent.drain();
    assert_eq!(final_status(&updates, "t1"), "failed", "{updates:?}");
    assert_eq!(mock.requests().len(), 2, "nothing asked after the cancel");
    crate::common::still_usable(&mock, &mut agent, &session).await;
    // The parent's history: the task call answered as cancelled.
    let last = mock.requests().last().unwrap().clone();
    assert!(tool_result(&last, "t1").contains("cancelled"));
    agent.assert_valid();
}
