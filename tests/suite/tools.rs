//! The file and command tools, with and without the editor's capability.

use serde_json::{Value, json};

use crate::common::calls::{call_events, final_status, one_call, tool_result};
use crate::common::editor::full_caps;
use crate::common::{Reply, tool_session};

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
    // Shown as soon as its name arrived, titled by the tool's label, then whole once complete.
    assert_eq!(events[0]["sessionUpdate"], "tool_call");
    assert_eq!(events[0]["title"], "Read file");
    assert_eq!(events[0]["kind"], "read");
    assert!(events[0].get("rawInput").is_none(), "{}", events[0]);
    assert_eq!(events[1]["sessionUpdate"], "tool_call_update");
    assert_eq!(events[1]["title"], "Read src/lib.rs");
    assert_eq!(events[1]["kind"], "read");
    // `pending` is the schema's default, said outright: CodeCompanion shows a call without a
    // status as running.
    assert_eq!(events[0]["status"], "pending", "{}", events[0]);
    assert_eq!(events[1]["rawInput"], json!({"path": "src/lib.rs"}));
    let path = ws.project().canonicalize().unwrap().join("src/lib.rs");
    assert_eq!(events[1]["locations"][0]["path"], path.to_str().unwrap());
    assert_eq!(events[2]["status"], "in_progress");
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
            "update_plan",
            "ask_user",
            "web_fetch",
            "task"
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
async fn fifos_and_devices_are_never_read_locally_or_by_the_editor() {
    for caps in [json!({}), full_caps()] {
        let script = vec![
            Reply::tools(&[
                ("fifo", "read_file", json!({"path": "pipe"})),
                ("device", "read_file", json!({"path": "/dev/zero"})),
            ]),
            Reply::text(&["ok"]),
        ];
        let (mock, ws, mut agent, session, editor) =
            tool_session(script, caps.clone(), "full-access").await;
        let fifo = ws.project().join("pipe");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        let (response, _) = agent.prompt(&session, "read them").await;
        assert_eq!(response["result"]["stopReason"], "end_turn", "{caps}");
        let second = &mock.requests()[1];
        assert!(
            tool_result(second, "fifo").contains("is a FIFO (named pipe)"),
            "{caps}: {}",
            tool_result(second, "fifo")
        );
        assert!(tool_result(second, "device").contains("is a device file"));
        assert!(editor.params_of("fs/read_text_file").is_empty(), "{caps}");
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
    assert!(tool_result(second, "absent").contains("src/lib.rs: old_string was not found"));
    assert!(
        tool_result(second, "twice").contains("matches 2 places (lines 11 and 12) exactly"),
        "{}",
        tool_result(second, "twice")
    );
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
    let first = call_events(&updates, "ok")[1];
    assert_eq!(first["title"], "Run `echo hi; echo err >&2`");
    assert_eq!(first["rawInput"]["command"], "echo hi; echo err >&2");
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
    // A plain line starts as itself, so the terminal's header reads as the user's command.
    let create = &editor.params_of("terminal/create")[0];
    assert_eq!(create["command"], "echo");
    assert_eq!(create["args"], json!(["from-terminal"]));
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
        json!({"command": "sleep 30 && echo late", "timeout_ms": 300}),
    );
    let (mock, _ws, mut agent, session, editor) =
        tool_session(script, full_caps(), "full-access").await;
    agent.prompt(&session, "run").await;
    // A line that needs the shell is given to it whole.
    let create = &editor.params_of("terminal/create")[0];
    assert_eq!(create["command"], "sh");
    assert_eq!(create["args"], json!(["-c", "sleep 30 && echo late"]));
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
async fn huge_command_output_is_bounded_with_a_note() {
    let (mock, _ws, mut agent, session, _editor) = tool_session(
        one_call("big", "run_command", json!({"command": "seq 1 200000"})),
        json!({}),
        "full-access",
    )
    .await;
    agent.prompt(&session, "run").await;
    let result = tool_result(&mock.requests()[1], "big");
    assert!(result.len() < 40 * 1024, "{} bytes", result.len());
    assert!(result.contains("\n1\n2\n3\n"), "the head is kept");
    assert!(result.trim_end().ends_with("200000"), "the tail is kept");
    assert!(
        result.contains("bytes of output omitted"),
        "and the cut is said"
    );
}

/// An editor that ignores `outputByteLimit` (the fake one does) sends all of a long output:
/// tandem keeps 30 KiB of its head and tail, as README promises and as a local run does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_terminal_that_ignores_the_output_limit_is_bounded_head_and_tail() {
    let command = "i=0; while [ $i -lt 4000 ]; do echo \"line $i of the output\"; i=$((i+1)); done";
    let (mock, _ws, mut agent, session, _editor) = tool_session(
        one_call("t", "run_command", json!({ "command": command })),
        full_caps(),
        "full-access",
    )
    .await;
    let (response, _) = agent.prompt(&session, "run").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    let result = tool_result(&mock.requests()[1], "t");
    assert!(
        result.contains("line 0 of the output") && result.contains("line 3999 of the output"),
        "head and tail kept"
    );
    assert!(
        result.contains("bytes of output omitted"),
        "{}",
        &result[..200]
    );
    assert!(result.len() < 32 * 1024, "{}", result.len());
}
