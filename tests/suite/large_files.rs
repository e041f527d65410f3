//! Large and hostile files: a minified one-line file must still be readable, window by
//! window, and every window must move on.

use serde_json::json;

use crate::common::calls::tool_result;
use crate::common::{Agent, MockModel, Reply, Workspace, tool_session};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_file_gets_past_huge_lines() {
    let script = vec![
        Reply::tools(&[
            ("one", "read_file", json!({"path": "bundle.min.js"})),
            (
                "two",
                "read_file",
                json!({"path": "bundle.min.js", "offset": 2}),
            ),
            (
                "on",
                "read_file",
                json!({"path": "bundle.min.js", "offset": 1, "limit": 1, "column": 2001}),
            ),
        ]),
        Reply::text(&["read"]),
    ];
    let (mock, ws, mut agent, session, _editor) =
        tool_session(script, json!({}), "full-access").await;
    let first_line = format!("{}{}", "a".repeat(2000), "c".repeat(3_000_000));
    let file = format!("{first_line}\n{}\nshort\n", "b".repeat(3_000_000));
    std::fs::write(ws.project().join("bundle.min.js"), file).unwrap();
    let (response, _) = agent.prompt(&session, "read it").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    let request = &mock.requests()[1];
    let one = tool_result(request, "one");
    assert!(
        one.starts_with(&"a".repeat(2000)),
        "content, not an empty window"
    );
    assert!(one.len() < 20_000, "{} bytes", one.len());
    assert!(one.contains("column=2001"), "says how to read on");
    let two = tool_result(request, "two");
    assert!(
        two.starts_with('b') && two.contains("short"),
        "offset=2 moves on"
    );
    let on = tool_result(request, "on");
    assert!(on.starts_with(&"c".repeat(2000)), "the rest of line 1");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prompt_larger_than_the_window_is_refused_before_any_request() {
    let mock = MockModel::start(vec![Reply::text(&["fine"])]).await;
    let ws = Workspace::new();
    let mut agent = Agent::spawn(&ws.env(&mock), &[]);
    let session = agent.open_session(&ws.project()).await;
    let huge = "word ".repeat(1_600_000); // 8 MB: about 2M tokens, for a 128k model
    let (response, _) = agent.prompt(&session, &huge).await;
    let error = &response["error"];
    assert_eq!(
        error["_meta"]["tandem"]["class"], "context_length",
        "{response:.300}"
    );
    let message = error["message"].as_str().unwrap();
    assert!(message.contains("nothing was sent"), "{message}");
    assert!(mock.requests().is_empty(), "no compaction, no request");
    // Nothing of it stays in the session: the next prompt goes through.
    let (response, _) = agent.prompt(&session, "a small one").await;
    assert_eq!(response["result"]["stopReason"], "end_turn");
    let request = &mock.requests()[0];
    assert!(request.body.to_string().len() < 100_000);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_large_file_travels_as_a_window_and_its_edit_as_the_changed_part() {
    let script = vec![
        Reply::tools(&[("r", "read_file", json!({"path": "big.txt", "limit": 10}))]),
        Reply::tools(&[(
            "e",
            "edit_file",
            json!({"path": "big.txt", "old_string": "line 150000\n", "new_string": "LINE 150000\n"}),
        )]),
        Reply::text(&["done"]),
    ];
    let (mock, ws, mut agent, session, editor) =
        tool_session(script, crate::common::editor::full_caps(), "full-access").await;
    let big: String = (1..=300_000).map(|i| format!("line {i}\n")).collect();
    std::fs::write(ws.project().join("big.txt"), &big).unwrap();
    let (response, updates) = agent.prompt(&session, "edit it").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    // The read asked the editor for the lines it needed, not the whole buffer.
    let reads = editor.params_of("fs/read_text_file");
    assert_eq!(reads[0]["limit"], 11, "{}", reads[0]);
    let read = tool_result(&mock.requests()[1], "r");
    assert!(
        read.starts_with("line 1\n") && read.contains("more follow: read more with offset=11"),
        "{read}"
    );
    // The edit is exact on disk, and what the editor was shown is the changed part.
    let after = std::fs::read_to_string(ws.project().join("big.txt")).unwrap();
    assert_eq!(after, big.replace("line 150000\n", "LINE 150000\n"));
    // (The write itself carries the whole file, as it must; what is shown does not.)
    let shown: usize = updates
        .iter()
        .filter(|u| u["method"] == "session/update")
        .map(|u| u.to_string().len())
        .sum();
    assert!(
        shown < 100_000,
        "{shown} bytes of updates for a {}-byte file",
        big.len()
    );
    let diff = crate::common::calls::shown_contents(&updates, "diff")
        .into_iter()
        .next()
        .expect("a diff");
    assert!(diff["oldText"].as_str().unwrap().contains("line 150000\n"));
    assert!(diff["newText"].as_str().unwrap().contains("LINE 150000\n"));
}
