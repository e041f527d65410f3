//! Editors answer the same request in their own ways: a missing file is -32002 in Zed, but
//! -32603 "No such file or directory" from the Python SDK's default client. tandem must
//! still create the new file, show it as new, and never take a file that is there for a
//! missing one.

use serde_json::json;

use crate::common::calls::{final_status, one_call, tool_result};
use crate::common::editor::full_caps;
use crate::common::tool_session;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_file_is_created_when_the_editor_answers_the_read_with_any_error() {
    let (mock, ws, mut agent, session, editor) = tool_session(
        one_call(
            "w",
            "write_file",
            json!({"path": "docs/new.md", "content": "# New\n"}),
        ),
        full_caps(),
        "accept-edits",
    )
    .await;
    std::fs::create_dir_all(ws.project().join("docs")).unwrap();
    // The fake editor answers every read with -32603, as the Python SDK does a missing file.
    editor
        .failing
        .lock()
        .unwrap()
        .push("fs/read_text_file".into());
    let (response, updates) = agent.prompt(&session, "write").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    assert_eq!(final_status(&updates, "w"), "completed");
    assert_eq!(
        std::fs::read_to_string(ws.project().join("docs/new.md")).unwrap(),
        "# New\n"
    );
    assert!(tool_result(&mock.requests()[1], "w").starts_with("Created docs/new.md"));
    // Shown as a new file: a diff with no old text at all, not an edit of an empty file.
    let diffs = crate::common::calls::shown_contents(&updates, "diff");
    assert!(!diffs.is_empty());
    for diff in diffs {
        assert!(diff["oldText"].is_null(), "{diff}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_that_is_there_is_never_overwritten_as_new_when_the_read_fails() {
    let (mock, ws, mut agent, session, editor) = tool_session(
        one_call(
            "w",
            "write_file",
            json!({"path": "README.md", "content": "gone\n"}),
        ),
        full_caps(),
        "accept-edits",
    )
    .await;
    editor
        .failing
        .lock()
        .unwrap()
        .push("fs/read_text_file".into());
    let before = std::fs::read_to_string(ws.project().join("README.md")).unwrap();
    let (response, updates) = agent.prompt(&session, "write").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    assert_eq!(final_status(&updates, "w"), "failed");
    assert!(
        tool_result(&mock.requests()[1], "w").contains("the editor said: fs/read_text_file failed"),
        "{}",
        tool_result(&mock.requests()[1], "w")
    );
    assert_eq!(
        std::fs::read_to_string(ws.project().join("README.md")).unwrap(),
        before
    );
    assert!(editor.params_of("fs/write_text_file").is_empty());
}
