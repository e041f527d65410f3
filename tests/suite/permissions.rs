//! The DESIGN.md mode table row by row, every permission outcome, remembered answers,
//! workspace escapes, and mode switches mid-session.

use std::collections::BTreeSet;

use serde_json::json;

use crate::common::calls::{call_events, final_status, tool_result};
use crate::common::editor::Answer;
use crate::common::mock_model::Recorded;
use crate::common::{Reply, Workspace, of_kind, path_str, still_usable, tool_session};

fn asked(editor: &crate::common::editor::FakeEditor) -> BTreeSet<String> {
    editor
        .params_of("session/request_permission")
        .iter()
        .map(|p| p["toolCall"]["toolCallId"].as_str().unwrap().to_string())
        .collect()
}

fn outside(ws: &Workspace) -> String {
    let dir = ws.project().parent().unwrap().join("outside");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("secret.txt"), "outside text\n").unwrap();
    path_str(&dir.canonicalize().unwrap())
}

/// One response with one call per row of the table.
fn table_calls(out: &str) -> Vec<Reply> {
    vec![
        Reply::tools(&[
            ("read_in", "read_file", json!({"path": "README.md"})),
            (
                "read_out",
                "read_file",
                json!({"path": format!("{out}/secret.txt")}),
            ),
            (
                "edit_in",
                "write_file",
                json!({"path": "in.txt", "content": "in"}),
            ),
            (
                "edit_out",
                "write_file",
                json!({"path": format!("{out}/out.txt"), "content": "out"}),
            ),
            ("run", "run_command", json!({"command": "echo ran"})),
        ]),
        Reply::text(&["done"]),
    ]
}

async fn table_row(mode: &str) -> (BTreeSet<String>, BTreeSet<String>, Recorded) {
    // The outside directory's path is only known once the workspace exists.
    let (mock, ws, mut agent, session, editor) = tool_session(vec![], json!({}), mode).await;
    let out = outside(&ws);
    for reply in table_calls(&out) {
        mock.push(reply);
    }
    let (response, _) = agent.prompt(&session, "do everything").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    let second = mock.requests()[1].clone();
    let refused: BTreeSet<String> = ["read_in", "read_out", "edit_in", "edit_out", "run"]
        .into_iter()
        .filter(|id| tool_result(&second, id).starts_with("Refused"))
        .map(String::from)
        .collect();
    // Whatever was allowed (with or without asking) really happened.
    let ran_in = ws.project().join("in.txt").exists();
    assert_eq!(ran_in, !refused.contains("edit_in"), "{mode}");
    assert_eq!(
        std::path::Path::new(&out).join("out.txt").exists(),
        !refused.contains("edit_out"),
        "{mode}"
    );
    (asked(&editor), refused, second)
}

fn set(ids: &[&str]) -> BTreeSet<String> {
    ids.iter().map(|s| s.to_string()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ask_mode_asks_for_everything_but_reads_inside() {
    let (asked, refused, second) = table_row("ask").await;
    assert_eq!(asked, set(&["read_out", "edit_in", "edit_out", "run"]));
    assert!(refused.is_empty());
    assert_eq!(tool_result(&second, "read_out"), "outside text\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn accept_edits_mode_edits_inside_freely() {
    let (asked, refused, _) = table_row("accept-edits").await;
    assert_eq!(asked, set(&["read_out", "edit_out", "run"]));
    assert!(refused.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_only_mode_refuses_changes_without_asking() {
    let (asked, refused, second) = table_row("read-only").await;
    assert_eq!(asked, set(&["read_out"]));
    assert_eq!(refused, set(&["edit_in", "edit_out", "run"]));
    assert!(tool_result(&second, "run").contains("read-only mode"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn full_access_mode_never_asks() {
    let (asked, refused, second) = table_row("full-access").await;
    assert!(asked.is_empty());
    assert!(refused.is_empty());
    assert!(tool_result(&second, "run").contains("ran"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rejections_tell_the_model_and_end_the_card_failed() {
    let script = vec![
        Reply::tools(&[("w1", "write_file", json!({"path": "a.txt", "content": "1"}))]),
        Reply::tools(&[("w2", "write_file", json!({"path": "a.txt", "content": "2"}))]),
        Reply::tools(&[("w3", "write_file", json!({"path": "a.txt", "content": "3"}))]),
        Reply::tools(&[("w4", "write_file", json!({"path": "a.txt", "content": "4"}))]),
        Reply::text(&["ok"]),
    ];
    let (mock, ws, mut agent, session, editor) = tool_session(script, json!({}), "ask").await;
    editor.answer_with(&[
        Answer::Select("reject_once"),
        Answer::Select("reject_always"),
    ]);
    let (_, updates) = agent.prompt(&session, "write").await;
    let requests = mock.requests();
    assert!(tool_result(&requests[1], "w1").starts_with("Rejected: the user declined"));
    assert!(tool_result(&requests[2], "w2").starts_with("Rejected: the user declined"));
    // reject_always: the same write is refused without asking, twice.
    assert!(tool_result(&requests[3], "w3").contains("always reject"));
    assert!(tool_result(&requests[4], "w4").contains("always reject"));
    assert_eq!(asked(&editor), set(&["w1", "w2"]));
    assert!(!ws.project().join("a.txt").exists());
    // Every card ends failed (a client that shows status would keep a rejected one pending):
    // w1 and w2 keep what they showed and say why nothing happened; w3 and w4 were refused
    // without asking.
    let failed: Vec<&serde_json::Value> = updates
        .iter()
        .filter(|u| u["params"]["update"]["status"] == "failed")
        .map(|u| &u["params"]["update"]["toolCallId"])
        .collect();
    assert_eq!(
        failed,
        [&json!("w1"), &json!("w2"), &json!("w3"), &json!("w4")]
    );
    for id in ["w1", "w2"] {
        let last = call_events(&updates, id).last().copied().unwrap().clone();
        assert_eq!(last["status"], "failed", "{last}");
        assert_eq!(last["content"][0]["type"], "diff", "{last}");
        assert!(last.to_string().contains("Rejected by the user."), "{last}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn allow_always_is_remembered_for_the_tool_and_scope() {
    let script = vec![
        Reply::tools(&[("r1", "run_command", json!({"command": "echo one"}))]),
        Reply::tools(&[("r2", "run_command", json!({"command": "echo one"}))]),
        Reply::tools(&[("r3", "run_command", json!({"command": "echo one two"}))]),
        Reply::tools(&[(
            "w1",
            "write_file",
            json!({"path": "../escape.txt", "content": "x"}),
        )]),
        Reply::tools(&[(
            "w2",
            "write_file",
            json!({"path": "../escape.txt", "content": "y"}),
        )]),
        Reply::tools(&[(
            "w3",
            "write_file",
            json!({"path": "../other.txt", "content": "z"}),
        )]),
        Reply::text(&["ok"]),
    ];
    let (mock, _ws, mut agent, session, editor) = tool_session(script, json!({}), "ask").await;
    editor.answer_with(&[
        Answer::Select("allow_always"),
        Answer::Select("allow_once"),
        Answer::Select("allow_always"),
        Answer::Select("allow_once"),
    ]);
    agent.prompt(&session, "go").await;
    // "echo one" remembered exactly (echo has no subcommands, so more words are another
    // command); the path grant covers that path only.
    assert_eq!(asked(&editor), set(&["r1", "r3", "w1", "w3"]));
    assert!(tool_result(&mock.requests()[2], "r2").contains("one"));
}

/// Calls run in the model's order (reads next to each other run together): a cancelled
/// question stops the turn, a call before it keeps its real result and every call after it is
/// "Not run" — also a read, which never runs ahead of an earlier write.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_permission_cancels_the_turn() {
    let script = vec![
        Reply::tools(&[
            ("r1", "read_file", json!({"path": "README.md"})),
            ("w", "write_file", json!({"path": "a.txt", "content": "1"})),
            ("r2", "read_file", json!({"path": "README.md"})),
        ]),
        Reply::text(&["after"]),
    ];
    let (mock, ws, mut agent, session, editor) = tool_session(script, json!({}), "ask").await;
    editor.answer_with(&[Answer::Cancelled]);
    let (response, _) = agent.prompt(&session, "write").await;
    assert_eq!(response["result"]["stopReason"], "cancelled", "{response}");
    assert!(!ws.project().join("a.txt").exists());
    // The history stays whole: the next request answers every call.
    let (next, _) = agent.prompt(&session, "next").await;
    assert_eq!(next["result"]["stopReason"], "end_turn");
    let second = &mock.requests()[1];
    let readme = std::fs::read_to_string(ws.project().join("README.md")).unwrap();
    let first_line = readme.lines().next().unwrap();
    assert!(
        tool_result(second, "r1").contains(first_line),
        "{}",
        tool_result(second, "r1")
    );
    for call in ["w", "r2"] {
        assert_eq!(
            tool_result(second, call),
            "Not run: the user cancelled the turn.",
            "{call}"
        );
    }
}

/// Issue 32: an editor that answers the permission request with an error. The call does not
/// run, the model reads that the editor could not ask, the card fails, the turn goes on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_editor_error_for_the_permission_question_runs_nothing() {
    let script = vec![
        Reply::tools(&[("w", "write_file", json!({"path": "a.txt", "content": "1"}))]),
        Reply::text(&["after"]),
    ];
    let (mock, ws, mut agent, session, editor) = tool_session(script, json!({}), "ask").await;
    editor.answer_with(&[Answer::Error]);
    let (response, updates) = agent.prompt(&session, "write").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    assert!(!ws.project().join("a.txt").exists());
    assert_eq!(final_status(&updates, "w"), "failed");
    let result = tool_result(&mock.requests()[1], "w");
    assert!(
        result.contains("the editor could not ask the user for permission"),
        "{result}"
    );
    still_usable(&mock, &mut agent, &session).await;
    agent.assert_valid();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn escapes_through_dot_dot_and_symlinks_ask_even_in_accept_edits() {
    let (mock, ws, mut agent, session, editor) =
        tool_session(vec![], json!({}), "accept-edits").await;
    let out = outside(&ws);
    std::os::unix::fs::symlink(&out, ws.project().join("link")).unwrap();
    mock.push(Reply::tools(&[
        (
            "dots",
            "write_file",
            json!({"path": "src/../../outside/a.txt", "content": "a"}),
        ),
        (
            "link",
            "write_file",
            json!({"path": "link/b.txt", "content": "b"}),
        ),
        (
            "inside",
            "write_file",
            json!({"path": "src/../c.txt", "content": "c"}),
        ),
        // Not there yet: judged by the nearest existing parent (the symlink, so outside).
        (
            "deep",
            "write_file",
            json!({"path": "link/new/dir/d.txt", "content": "d"}),
        ),
        (
            "new_inside",
            "write_file",
            json!({"path": "new/dir/e.txt", "content": "e"}),
        ),
        // The project's name in other case: a different directory on this file system (a
        // case-insensitive one canonicalises to the real name); never taken as inside.
        (
            "case",
            "write_file",
            json!({"path": format!("{}/f.txt", crate::common::path_str(&ws.project()).to_uppercase()), "content": "f"}),
        ),
    ]));
    mock.push(Reply::text(&["ok"]));
    editor.answer_with(&vec![Answer::Select("reject_once"); 4]);
    agent.prompt(&session, "write").await;
    assert_eq!(asked(&editor), set(&["dots", "link", "deep", "case"]));
    assert!(ws.project().join("new/dir/e.txt").exists());
    let link_call = editor.params_of("session/request_permission")[1].clone();
    assert_eq!(
        link_call["toolCall"]["locations"][0]["path"],
        format!("{out}/b.txt"),
        "the real target is shown"
    );
    assert!(!std::path::Path::new(&out).join("a.txt").exists());
    assert!(ws.project().join("c.txt").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mode_switch_applies_at_the_next_tool_call() {
    let script = vec![
        Reply::tools(&[("w1", "write_file", json!({"path": "a.txt", "content": "1"}))]),
        Reply::text(&["first"]),
        Reply::tools(&[("w2", "write_file", json!({"path": "b.txt", "content": "2"}))]),
        Reply::text(&["second"]),
    ];
    let (mock, ws, mut agent, session, _editor) =
        tool_session(script, json!({}), "full-access").await;
    agent.prompt(&session, "one").await;
    assert!(ws.project().join("a.txt").exists());
    agent
        .request_ok(
            "session/set_mode",
            json!({"sessionId": session, "modeId": "read-only"}),
        )
        .await;
    let updates = agent.drain();
    assert_eq!(
        of_kind(&updates, "current_mode_update")[0]["currentModeId"],
        "read-only"
    );
    agent.prompt(&session, "two").await;
    assert!(!ws.project().join("b.txt").exists());
    assert!(tool_result(&mock.requests()[3], "w2").starts_with("Refused"));
}
