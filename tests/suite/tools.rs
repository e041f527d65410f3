//! Every tool, with and without the editor's capability, against the scripted model.

use serde_json::{Value, json};

use crate::common::editor::full_caps;
use crate::common::mock_model::Recorded;
use crate::common::{Reply, of_kind, tool_session};

/// The content of the `tool` message answering `call_id` in a recorded request.
fn tool_result(request: &Recorded, call_id: &str) -> String {
    request.body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool" && m["tool_call_id"] == call_id)
        .unwrap_or_else(|| panic!("no result for {call_id} in {}", request.body))["content"]
        .as_str()
        .unwrap()
        .to_string()
}

/// The `tool_call` and its updates for `id`, in order.
fn call_events<'a>(updates: &'a [Value], id: &str) -> Vec<&'a Value> {
    updates
        .iter()
        .map(|u| &u["params"]["update"])
        .filter(|u| u["toolCallId"] == id)
        .collect()
}

/// The last status a call reached.
fn final_status(updates: &[Value], id: &str) -> String {
    call_events(updates, id)
        .iter()
        .rev()
        .find_map(|u| u["status"].as_str())
        .unwrap_or("none")
        .to_string()
}

fn one_call(id: &str, name: &str, args: Value) -> Vec<Reply> {
    vec![Reply::tools(&[(id, name, args)]), Reply::text(&["done"])]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_file_locally_shows_the_call_and_returns_the_text() {
    let (mock, ws, mut agent, session, editor) = tool_session(
        one_call("c1", "read_file", json!({"path": "src/lib.rs"})),
        json!({}),
        "ask",
    )
    .await;
    let (response, updates) = agent.prompt(&session, "read lib").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    let events = call_events(&updates, "c1");
    assert_eq!(events[0]["sessionUpdate"], "tool_call");
    assert_eq!(events[0]["title"], "Read src/lib.rs");
    assert_eq!(events[0]["kind"], "read");
    // `pending` is the default status and may be left out.
    assert!(
        matches!(events[0]["status"].as_str(), None | Some("pending")),
        "{}",
        events[0]
    );
    assert_eq!(events[0]["rawInput"], json!({"path": "src/lib.rs"}));
    let path = ws.project().canonicalize().unwrap().join("src/lib.rs");
    assert_eq!(events[0]["locations"][0]["path"], path.to_str().unwrap());
    assert_eq!(events[1]["status"], "in_progress");
    assert_eq!(events.last().unwrap()["status"], "completed");
    assert!(
        events.last().unwrap()["content"][0]["content"]["text"]
            .as_str()
            .unwrap()
            .contains("Says hello.")
    );
    let result = tool_result(&mock.requests()[1], "c1");
    assert_eq!(
        result,
        std::fs::read_to_string(ws.project().join("src/lib.rs")).unwrap()
    );
    assert!(
        editor.methods().is_empty(),
        "no fs capability: read from disk"
    );
    // The tools were offered to the model.
    let tools: Vec<_> = mock.requests()[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        tools,
        [
            "read_file",
            "write_file",
            "edit_file",
            "run_command",
            "list_dir",
            "glob",
            "grep",
            "update_plan"
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_file_through_the_editor_sees_unsaved_buffers() {
    let (mock, ws, mut agent, session, editor) = tool_session(
        one_call("c1", "read_file", json!({"path": "src/main.rs"})),
        full_caps(),
        "ask",
    )
    .await;
    let path = ws.project().canonicalize().unwrap().join("src/main.rs");
    editor.buffers.lock().unwrap().insert(
        path.display().to_string(),
        "fn main() { /* unsaved */ }\n".into(),
    );
    agent.prompt(&session, "read main").await;
    assert_eq!(
        tool_result(&mock.requests()[1], "c1"),
        "fn main() { /* unsaved */ }\n"
    );
    assert_eq!(
        editor.params_of("fs/read_text_file")[0]["path"],
        path.to_str().unwrap()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_failures_are_results_the_model_can_act_on() {
    let script = vec![
        Reply::tools(&[
            ("missing", "read_file", json!({"path": "nope.rs"})),
            ("binary", "read_file", json!({"path": "logo.bin"})),
            ("dir", "read_file", json!({"path": "src"})),
        ]),
        Reply::text(&["ok"]),
    ];
    let (mock, _ws, mut agent, session, _editor) = tool_session(script, json!({}), "ask").await;
    let (_, updates) = agent.prompt(&session, "read").await;
    let second = &mock.requests()[1];
    assert_eq!(
        tool_result(second, "missing"),
        "Error: nope.rs does not exist"
    );
    assert!(tool_result(second, "binary").contains("logo.bin is a binary file (17 bytes)"));
    assert!(tool_result(second, "dir").contains("is a directory"));
    for id in ["missing", "binary", "dir"] {
        assert_eq!(final_status(&updates, id), "failed");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_editors_not_found_error_becomes_a_result() {
    let (mock, _ws, mut agent, session, _editor) = tool_session(
        one_call("c1", "read_file", json!({"path": "ghost.rs"})),
        full_caps(),
        "ask",
    )
    .await;
    let (response, _) = agent.prompt(&session, "read").await;
    assert_eq!(response["result"]["stopReason"], "end_turn");
    assert_eq!(
        tool_result(&mock.requests()[1], "c1"),
        "Error: ghost.rs does not exist"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn long_files_are_windowed_with_a_note() {
    let (mock, ws, mut agent, session, _editor) = tool_session(
        vec![
            Reply::tools(&[
                ("a", "read_file", json!({"path": "big.txt"})),
                (
                    "b",
                    "read_file",
                    json!({"path": "big.txt", "offset": 2990, "limit": 5}),
                ),
            ]),
            Reply::text(&["ok"]),
        ],
        json!({}),
        "ask",
    )
    .await;
    let big: String = (1..=3000).map(|i| format!("line {i}\n")).collect();
    std::fs::write(ws.project().join("big.txt"), big).unwrap();
    agent.prompt(&session, "read big").await;
    let second = &mock.requests()[1];
    let a = tool_result(second, "a");
    assert!(a.starts_with("line 1\n") && a.contains("line 2000\n") && !a.contains("line 2001\n"));
    assert!(
        a.ends_with("[showing lines 1-2000 of 3000; read more with offset=2001]\n"),
        "{}",
        &a[a.len() - 100..]
    );
    assert_eq!(
        tool_result(second, "b"),
        "line 2990\nline 2991\nline 2992\nline 2993\nline 2994\n[showing lines 2990-2994 of 3000; read more with offset=2995]\n"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn write_file_locally_creates_with_a_diff() {
    let (mock, ws, mut agent, session, editor) = tool_session(
        one_call(
            "w",
            "write_file",
            json!({"path": "src/new.rs", "content": "pub fn new() {}\n"}),
        ),
        json!({}),
        "accept-edits",
    )
    .await;
    let (_, updates) = agent.prompt(&session, "write").await;
    assert_eq!(
        std::fs::read_to_string(ws.project().join("src/new.rs")).unwrap(),
        "pub fn new() {}\n"
    );
    let last = *call_events(&updates, "w").last().unwrap();
    assert_eq!(last["status"], "completed");
    let diff = &last["content"][0];
    assert_eq!(diff["type"], "diff");
    assert_eq!(diff["newText"], "pub fn new() {}\n");
    assert!(
        diff.get("oldText").is_none_or(Value::is_null),
        "new file: no oldText"
    );
    assert!(diff["path"].as_str().unwrap().ends_with("src/new.rs"));
    assert_eq!(
        tool_result(&mock.requests()[1], "w"),
        "Created src/new.rs (1 lines)."
    );
    assert!(
        editor.methods().is_empty(),
        "accept-edits inside the workspace: no prompt"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn edits_through_the_editor_are_reviewed_as_diffs() {
    let (mock, ws, mut agent, session, editor) = tool_session(
        one_call(
            "e",
            "edit_file",
            json!({"path": "src/lib.rs", "old_string": "Hello", "new_string": "Hi"}),
        ),
        full_caps(),
        "ask",
    )
    .await;
    let (_, updates) = agent.prompt(&session, "edit").await;
    let methods = editor.methods();
    assert_eq!(
        methods,
        [
            "fs/read_text_file",
            "session/request_permission",
            "fs/write_text_file"
        ]
    );
    let asked = &editor.params_of("session/request_permission")[0];
    assert_eq!(asked["toolCall"]["toolCallId"], "e");
    let diff = &asked["toolCall"]["content"][0];
    assert_eq!(diff["type"], "diff");
    assert!(diff["oldText"].as_str().unwrap().contains("Hello, {name}!"));
    assert!(diff["newText"].as_str().unwrap().contains("Hi, {name}!"));
    let options: Vec<_> = asked["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["optionId"].as_str().unwrap())
        .collect();
    assert_eq!(
        options,
        ["allow_once", "allow_always", "reject_once", "reject_always"]
    );
    assert!(
        std::fs::read_to_string(ws.project().join("src/lib.rs"))
            .unwrap()
            .contains("format!(\"Hi, {name}!\")")
    );
    assert_eq!(final_status(&updates, "e"), "completed");
    assert_eq!(
        tool_result(&mock.requests()[1], "e"),
        "Edited src/lib.rs at line 3 (1 replacement)."
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failing_edits_go_back_to_the_model_without_asking() {
    let script = vec![
        Reply::tools(&[
            (
                "absent",
                "edit_file",
                json!({"path": "src/lib.rs", "old_string": "Howdy", "new_string": "Hi"}),
            ),
            (
                "twice",
                "edit_file",
                json!({"path": "src/lib.rs", "old_string": "// TODO", "new_string": "// DONE"}),
            ),
            (
                "all",
                "edit_file",
                json!({"path": "src/lib.rs", "old_string": "// TODO", "new_string": "// DONE", "replace_all": true}),
            ),
            (
                "nofile",
                "edit_file",
                json!({"path": "src/ghost.rs", "old_string": "a", "new_string": "b"}),
            ),
        ]),
        Reply::text(&["ok"]),
    ];
    let (mock, ws, mut agent, session, editor) = tool_session(script, json!({}), "ask").await;
    let (_, updates) = agent.prompt(&session, "edit").await;
    let second = &mock.requests()[1];
    assert!(tool_result(second, "absent").contains("old_string was not found in src/lib.rs"));
    assert!(tool_result(second, "twice").contains("appears 2 times"));
    assert!(tool_result(second, "nofile").contains("does not exist; use write_file"));
    assert_eq!(
        tool_result(second, "all"),
        "Edited src/lib.rs at line 11 (2 replacements)."
    );
    assert_eq!(final_status(&updates, "absent"), "failed");
    assert_eq!(
        editor.params_of("session/request_permission").len(),
        1,
        "only the valid edit asked"
    );
    let text = std::fs::read_to_string(ws.project().join("src/lib.rs")).unwrap();
    assert!(text.contains("// DONE: add a test") && !text.contains("TODO"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_command_locally_returns_exit_code_and_output() {
    let script = vec![
        Reply::tools(&[
            (
                "ok",
                "run_command",
                json!({"command": "echo hi; echo err >&2"}),
            ),
            ("bad", "run_command", json!({"command": "ls missing-dir"})),
        ]),
        Reply::text(&["ok"]),
    ];
    let (mock, _ws, mut agent, session, _editor) =
        tool_session(script, json!({}), "full-access").await;
    let (_, updates) = agent.prompt(&session, "run").await;
    let second = &mock.requests()[1];
    let ok = tool_result(second, "ok");
    assert!(
        ok.starts_with("Command: echo hi; echo err >&2\nExit code: 0\nOutput:\n"),
        "{ok}"
    );
    assert!(ok.contains("hi") && ok.contains("err"));
    assert!(tool_result(second, "bad").contains("Exit code: 2"));
    assert_eq!(final_status(&updates, "ok"), "completed");
    assert_eq!(final_status(&updates, "bad"), "failed");
    let first = call_events(&updates, "ok")[0];
    assert_eq!(first["title"], "Run `echo hi; echo err >&2`");
    assert_eq!(first["kind"], "execute");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_command_in_the_editors_terminal() {
    let (mock, _ws, mut agent, session, editor) = tool_session(
        one_call("t", "run_command", json!({"command": "echo from-terminal"})),
        full_caps(),
        "full-access",
    )
    .await;
    let (_, updates) = agent.prompt(&session, "run").await;
    let methods = editor.methods();
    assert_eq!(
        methods,
        [
            "terminal/create",
            "terminal/wait_for_exit",
            "terminal/output",
            "terminal/release"
        ]
    );
    let create = &editor.params_of("terminal/create")[0];
    assert_eq!(create["command"], "sh");
    assert_eq!(create["args"], json!(["-c", "echo from-terminal"]));
    let embedded = call_events(&updates, "t")
        .iter()
        .any(|u| u["content"][0] == json!({"type": "terminal", "terminalId": "term-1"}));
    assert!(
        embedded,
        "the terminal is embedded in the tool call: {updates:?}"
    );
    let result = tool_result(&mock.requests()[1], "t");
    assert!(
        result.contains("Exit code: 0") && result.contains("from-terminal"),
        "{result}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn commands_past_their_timeout_are_killed() {
    let script = one_call(
        "slow",
        "run_command",
        json!({"command": "echo started; sleep 30", "timeout_ms": 300}),
    );
    let (mock, _ws, mut agent, session, _editor) =
        tool_session(script, json!({}), "full-access").await;
    let start = std::time::Instant::now();
    agent.prompt(&session, "run").await;
    assert!(start.elapsed() < std::time::Duration::from_secs(15));
    let result = tool_result(&mock.requests()[1], "slow");
    assert!(
        result.contains("Timed out after 0.3 s; the command was killed.")
            && result.contains("started"),
        "{result}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn terminal_commands_past_their_timeout_are_killed_and_released() {
    let script = one_call(
        "slow",
        "run_command",
        json!({"command": "sleep 30", "timeout_ms": 300}),
    );
    let (mock, _ws, mut agent, session, editor) =
        tool_session(script, full_caps(), "full-access").await;
    agent.prompt(&session, "run").await;
    assert_eq!(
        editor.methods(),
        [
            "terminal/create",
            "terminal/wait_for_exit",
            "terminal/kill",
            "terminal/output",
            "terminal/release"
        ]
    );
    assert!(tool_result(&mock.requests()[1], "slow").contains("Timed out"));
}

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
        call_events(&updates, "todo")[0]["title"],
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
async fn editor_errors_become_tool_results() {
    let (mock, _ws, mut agent, session, editor) = tool_session(
        one_call("w", "write_file", json!({"path": "x.txt", "content": "x"})),
        full_caps(),
        "full-access",
    )
    .await;
    editor
        .failing
        .lock()
        .unwrap()
        .push("fs/write_text_file".into());
    let (response, updates) = agent.prompt(&session, "write").await;
    assert_eq!(response["result"]["stopReason"], "end_turn");
    assert!(
        tool_result(&mock.requests()[1], "w")
            .contains("the editor refused the write: fs/write_text_file failed in the editor")
    );
    assert_eq!(final_status(&updates, "w"), "failed");
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
