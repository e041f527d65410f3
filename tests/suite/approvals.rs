//! What the user sees when asked, as CodeCompanion shows it (`tests/common/codecompanion.rs`,
//! [`approval`]): a question about a change opens with its diff, on every path that asks with
//! one (`edit_file`, `write_file` over a file and a new one, a write an ask rule asks about,
//! `apply_patch`, `/undo`'s question about a file changed by hand), its notes after it; and a
//! call is named for people from its first `tool_call` (the tool's label, "Edit file", while
//! its arguments stream, `status: "pending"`) to its question (the title CodeCompanion asks
//! with is the call's human title).

use std::collections::HashMap;

use serde_json::{Value, json};

use crate::common::calls::{call_events, final_status};
use crate::common::codecompanion::{Approval, approval};
use crate::common::editor::{Answer, FakeEditor};
use crate::common::{Agent, MockModel, Reply, Workspace, path_str, session_with_env};

/// `name` in the project, as the agent names it in locations.
fn in_project(ws: &Workspace, name: &str) -> String {
    path_str(&ws.project().canonicalize().unwrap().join(name))
}

/// The permission requests the editor was asked, in order.
fn asked(editor: &FakeEditor) -> Vec<Value> {
    editor.params_of("session/request_permission")
}

/// The diff CodeCompanion shows of `name` going to `new`.
fn diff_of(ws: &Workspace, name: &str, new: &str, shown: &Approval) -> bool {
    matches!(shown, Approval::Diff { path, new: n, .. } if *path == in_project(ws, name) && n == new)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn questions_about_edits_writes_and_undo_open_with_the_diff() {
    let script = vec![
        Reply::tools(&[(
            "edit",
            "edit_file",
            json!({"path": "greeting.txt", "old_string": "hello", "new_string": "hi"}),
        )]),
        Reply::text(&["edited"]),
        Reply::tools(&[
            (
                "overwrite",
                "write_file",
                json!({"path": "greeting.txt", "content": "bye\n"}),
            ),
            (
                "create",
                "write_file",
                json!({"path": "new.txt", "content": "new\n"}),
            ),
        ]),
        Reply::text(&["written"]),
        Reply::tools(&[(
            "ruled",
            "write_file",
            json!({"path": "ruled.txt", "content": "ruled\n"}),
        )]),
        Reply::text(&["written"]),
    ];
    let (_mock, ws, mut agent, session, editor) =
        session_with_env("small", script, json!({}), "ask", |ws| {
            ws.write("project/greeting.txt", "hello\n");
            ws.write("project/ruled.txt", "r\n");
            ws.write(
                "home/.config/tandem/config.toml",
                "[permissions]\nask = [\"edit_file(ruled.txt)\"]\n",
            );
            Vec::new()
        })
        .await;
    editor.answer_with(&[
        Answer::Select("allow_once"),
        Answer::Select("allow_once"),
        Answer::Select("allow_once"),
        Answer::Select("allow_once"),
        Answer::Select("reject_once"),
    ]);
    for prompt in ["edit", "write", "write ruled"] {
        let (answer, _) = agent.prompt(&session, prompt).await;
        assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    }
    // Changed by hand: `/undo` asks before putting the last turn's version back.
    std::fs::write(ws.project().join("ruled.txt"), "by hand\n").unwrap();
    let (answer, _) = agent.prompt(&session, "/undo").await;
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");

    let asked = asked(&editor);
    let ids: Vec<&str> = asked
        .iter()
        .map(|p| p["toolCall"]["toolCallId"].as_str().unwrap())
        .collect();
    assert_eq!(ids.len(), 5, "{ids:?}");
    assert_eq!(ids[..4], ["edit", "overwrite", "create", "ruled"]);
    assert!(ids[4].starts_with("rewind-"), "{ids:?}");
    let shown: Vec<Approval> = asked.iter().map(approval).collect();
    for (i, (name, new)) in [
        ("greeting.txt", "hi\n"),
        ("greeting.txt", "bye\n"),
        ("new.txt", "new\n"),
        ("ruled.txt", "ruled\n"),
        ("ruled.txt", "r\n"),
    ]
    .into_iter()
    .enumerate()
    {
        assert!(
            diff_of(&ws, name, new, &shown[i]),
            "{}: {:?}",
            ids[i],
            shown[i]
        );
    }
    // The notes come after the diff: why "always" is not offered, what `/undo` asks.
    let note = |i: usize| asked[i]["toolCall"]["content"][1]["content"]["text"].clone();
    assert!(
        note(3).as_str().unwrap().contains("asks every time"),
        "{}",
        asked[3]
    );
    assert!(
        note(4)
            .as_str()
            .unwrap()
            .contains("changed after tandem last wrote it"),
        "{}",
        asked[4]
    );
    assert_eq!(
        std::fs::read_to_string(ws.project().join("ruled.txt")).unwrap(),
        "by hand\n",
        "left as it is"
    );
    agent.assert_valid();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_patch_question_opens_with_the_first_diff_it_has() {
    // A file too large to show as a diff comes first in the patch: its note may not open the
    // question, and CodeCompanion names the diff by the first location.
    let patch = "*** Begin Patch\n*** Delete File: big.txt\n*** Update File: small.txt\n-s\n+S\n*** End Patch\n";
    let mock = MockModel::start(vec![
        Reply::tools(&[("patch", "apply_patch", json!({"input": patch}))]),
        Reply::text(&["patched"]),
    ])
    .await;
    let ws = Workspace::new();
    ws.write(
        "project/big.txt",
        &"a line of the big file\n".repeat(15_000),
    );
    ws.write("project/small.txt", "s\n");
    let editor = FakeEditor::new();
    let mut env = ws.env(&mock);
    env.retain(|(k, _)| k != "TANDEM_MODEL");
    env.push(("TANDEM_MODEL".into(), "gpt-4.1".into()));
    let mut agent = Agent::spawn_with(&env, &[], Some(editor.clone()));
    let session = agent.open_session(&ws.project()).await;
    let (answer, _) = agent.prompt(&session, "patch").await;
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    let asked = asked(&editor);
    assert_eq!(asked.len(), 1);
    let shown = approval(&asked[0]);
    assert!(diff_of(&ws, "small.txt", "S\n", &shown), "{shown:?}");
    let call = &asked[0]["toolCall"];
    let notes: Vec<&str> = call["content"].as_array().unwrap()[1..]
        .iter()
        .filter_map(|c| c["content"]["text"].as_str())
        .collect();
    assert!(
        notes.iter().any(|n| n.contains("too large to show"))
            && notes.contains(&"Deletes big.txt."),
        "{call}"
    );
    assert!(!ws.project().join("big.txt").exists());
    assert_eq!(
        std::fs::read_to_string(ws.project().join("small.txt")).unwrap(),
        "S\n"
    );
    agent.assert_valid();
}

/// CodeCompanion's chat line for a call is the call as its updates made it
/// (`merge_tool_call`: "for k, v in pairs(incoming or {}) do … out[k] = v"), and its question
/// is asked with the request's title ([`approval`]). Every call is shown by its tool's label
/// while it streams ("Edit file", never `edit_file`), pending; the question, and the line the
/// user reads above it, carry the call's human title.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_is_named_for_people_from_its_first_update_to_its_question() {
    let script = vec![
        Reply::tools(&[
            (
                "edit",
                "edit_file",
                json!({"path": "greeting.txt", "old_string": "hello", "new_string": "hi"}),
            ),
            ("run", "run_command", json!({"command": "echo hi"})),
            ("unfit", "edit_file", json!({"path": "greeting.txt"})),
        ]),
        Reply::text(&["done"]),
    ];
    let (_mock, _ws, mut agent, session, editor) =
        session_with_env("small", script, json!({}), "ask", |ws| {
            ws.write("project/greeting.txt", "hello\n");
            Vec::new()
        })
        .await;
    editor.answer_with(&[Answer::Select("allow_once"), Answer::Select("allow_once")]);
    let (answer, messages) = agent.prompt(&session, "go").await;
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");

    for (id, label, kind) in [
        ("edit", "Edit file", "edit"),
        ("run", "Run command", "execute"),
        ("unfit", "Edit file", "edit"),
    ] {
        let first = call_events(&messages, id)[0];
        assert_eq!(first["sessionUpdate"], "tool_call", "{first}");
        assert_eq!(first["title"], label, "{first}");
        assert_eq!(first["status"], "pending", "{first}");
        assert_eq!(first["kind"], kind, "{first}");
    }
    // Unusable arguments: failed, still under the tool's label.
    assert_eq!(final_status(&messages, "unfit"), "failed");
    let titles: Vec<&str> = call_events(&messages, "unfit")
        .iter()
        .filter_map(|u| u["title"].as_str())
        .collect();
    assert!(titles.iter().all(|t| *t == "Edit file"), "{titles:?}");

    // At each question, the line CodeCompanion shows and the question carry the human title.
    let mut lines: HashMap<String, String> = HashMap::new();
    let mut questions = Vec::new();
    for message in &messages {
        let update = &message["params"]["update"];
        if let (Some(id), Some(title)) = (update["toolCallId"].as_str(), update["title"].as_str()) {
            lines.insert(id.to_string(), title.to_string());
        }
        if message["method"] == "session/request_permission" {
            let params = &message["params"];
            let id = params["toolCall"]["toolCallId"].as_str().unwrap();
            questions.push((id.to_string(), lines[id].clone(), approval(params)));
        }
    }
    assert_eq!(questions.len(), 2, "{questions:?}");
    let (edit, run) = (&questions[0], &questions[1]);
    assert_eq!(
        (edit.0.as_str(), edit.1.as_str()),
        ("edit", "Edit greeting.txt")
    );
    assert!(matches!(edit.2, Approval::Diff { .. }), "{edit:?}");
    assert_eq!((run.0.as_str(), run.1.as_str()), ("run", "Run `echo hi`"));
    assert_eq!(run.2, Approval::Question("Execute: Run `echo hi` ?".into()));
    agent.assert_valid();
}
