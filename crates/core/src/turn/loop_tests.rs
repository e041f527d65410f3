//! The turn loop's decisions, in process: a real session (actor, loop, permission chain,
//! hooks, guards) whose model and editor are fakes (crates/core/src/testkit/). Each test plays one
//! decision and checks both what the editor saw and what the model was sent.

use serde_json::json;

use crate::testkit::{FakeEditor, Reply, Session, results};
use crate::types::PermissionAnswer;
use crate::types::{StopReason, ToolStatus, TurnEvent};

/// A model that writes `note.txt` once, then says `done`.
fn writes_a_note() -> Vec<Reply> {
    vec![
        Reply::calls(&[(
            "w1",
            "write_file",
            json!({"path": "note.txt", "content": "hello\n"}),
        )]),
        Reply::text("done"),
    ]
}

/// What the model read for call `id` in its request number `n`.
fn result_of(session: &Session, n: usize, id: &str) -> String {
    let requests = session.requests();
    results(&requests[n])
        .into_iter()
        .find(|(call, _)| call == id)
        .map(|(_, content)| content)
        .unwrap_or_else(|| panic!("no result for {id} in request {n}"))
}

/// The statuses the editor was shown, last first.
fn last_status(session: &Session) -> Option<ToolStatus> {
    session
        .events
        .all()
        .into_iter()
        .rev()
        .find_map(|e| match e {
            TurnEvent::ToolCallUpdate { status, .. } => status,
            TurnEvent::ToolCall(view) | TurnEvent::ToolCallReady(view) => Some(view.status),
            _ => None,
        })
}

#[tokio::test]
async fn an_edit_in_ask_mode_waits_for_the_user_and_runs_when_allowed() {
    let editor = FakeEditor::answering(&[PermissionAnswer::AllowOnce]);
    let s = Session::open(writes_a_note(), editor, "", &[]).await;
    assert_eq!(s.prompt("write it").await.unwrap(), StopReason::EndTurn);
    let asked = s.editor.asked();
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert!(asked[0].title.contains("note.txt"), "{asked:?}");
    // An edit of a path offers to remember that path.
    assert!(
        asked[0]
            .choices
            .iter()
            .any(|c| c.answer == PermissionAnswer::AllowAlways && c.label.contains("note.txt")),
        "{asked:?}"
    );
    let path = s.scratch.project().canonicalize().unwrap().join("note.txt");
    assert_eq!(s.editor.file(&path).as_deref(), Some("hello\n"));
    assert!(!result_of(&s, 1, "w1").starts_with("Error"));
}

#[tokio::test]
async fn a_rejected_call_does_not_run_and_the_model_is_told_not_to_retry() {
    let editor = FakeEditor::answering(&[PermissionAnswer::RejectOnce]);
    let s = Session::open(writes_a_note(), editor, "", &[]).await;
    assert_eq!(s.prompt("write it").await.unwrap(), StopReason::EndTurn);
    let path = s.scratch.project().canonicalize().unwrap().join("note.txt");
    assert_eq!(s.editor.file(&path), None);
    assert!(result_of(&s, 1, "w1").starts_with("Rejected: the user declined"));
}

#[tokio::test]
async fn always_allow_covers_the_same_path_for_the_rest_of_the_session() {
    let mut replies = writes_a_note();
    replies.extend(writes_a_note());
    let editor = FakeEditor::answering(&[PermissionAnswer::AllowAlways]);
    let s = Session::open(replies, editor, "", &[]).await;
    assert_eq!(s.prompt("write it").await.unwrap(), StopReason::EndTurn);
    assert_eq!(s.prompt("again").await.unwrap(), StopReason::EndTurn);
    assert_eq!(s.editor.asked().len(), 1, "the second write is not asked");
    assert!(!result_of(&s, 3, "w1").starts_with("Error"));
}

#[tokio::test]
async fn a_deny_rule_refuses_without_asking_and_a_hook_cannot_lift_it() {
    let config = r#"
[permissions]
deny = ["write_file(note.txt)"]

[[hooks.pre_tool_use]]
command = "echo '{\"decision\": \"allow\"}'"
"#;
    let editor = FakeEditor::answering(&[PermissionAnswer::AllowOnce]);
    let s = Session::open(writes_a_note(), editor, config, &[]).await;
    assert_eq!(s.prompt("write it").await.unwrap(), StopReason::EndTurn);
    assert!(s.editor.asked().is_empty());
    let read = result_of(&s, 1, "w1");
    assert!(read.contains("deny"), "{read}");
    assert_eq!(last_status(&s), Some(ToolStatus::Failed));
}

#[tokio::test]
async fn a_hook_that_denies_refuses_a_call_the_mode_would_allow() {
    let config = r#"
[[hooks.pre_tool_use]]
matcher = "list_dir"
command = "echo '{\"decision\": \"deny\", \"reason\": \"not today\"}'"
"#;
    let replies = vec![
        Reply::calls(&[("l1", "list_dir", json!({"path": "."}))]),
        Reply::text("ok"),
    ];
    let s = Session::open(replies, FakeEditor::answering(&[]), config, &[]).await;
    assert_eq!(s.prompt("look").await.unwrap(), StopReason::EndTurn);
    assert_eq!(result_of(&s, 1, "l1"), "Denied by a hook: not today");
}

#[tokio::test]
async fn a_hook_that_asks_asks_even_in_full_access() {
    let config = r#"
mode = "full-access"

[[hooks.pre_tool_use]]
command = "echo '{\"decision\": \"ask\"}'"
"#;
    let replies = vec![
        Reply::calls(&[("l1", "list_dir", json!({"path": "."}))]),
        Reply::text("ok"),
    ];
    let editor = FakeEditor::answering(&[PermissionAnswer::AllowOnce]);
    let s = Session::open(replies, editor, config, &[]).await;
    assert_eq!(s.prompt("look").await.unwrap(), StopReason::EndTurn);
    assert_eq!(s.editor.asked().len(), 1);
}

#[tokio::test]
async fn read_only_mode_refuses_an_edit_without_asking() {
    let editor = FakeEditor::answering(&[PermissionAnswer::AllowOnce]);
    let s = Session::open(writes_a_note(), editor, "mode = \"read-only\"\n", &[]).await;
    assert_eq!(s.prompt("write it").await.unwrap(), StopReason::EndTurn);
    assert!(s.editor.asked().is_empty());
    assert!(result_of(&s, 1, "w1").contains("read-only"));
}

#[tokio::test]
async fn an_editor_that_cannot_ask_fails_the_call_not_the_turn() {
    // No answer scripted: the fake editor answers the question with an error.
    let s = Session::open(writes_a_note(), FakeEditor::answering(&[]), "", &[]).await;
    assert_eq!(s.prompt("write it").await.unwrap(), StopReason::EndTurn);
    let read = result_of(&s, 1, "w1");
    assert!(
        read.starts_with("Error: the editor could not ask the user"),
        "{read}"
    );
}

#[tokio::test]
async fn the_same_batch_a_third_time_is_not_run() {
    let again = |id| Reply::calls(&[(id, "list_dir", json!({"path": "."}))]);
    let replies = vec![again("g1"), again("g2"), again("g3"), Reply::text("stop")];
    let s = Session::open(replies, FakeEditor::answering(&[]), "", &[]).await;
    assert_eq!(s.prompt("look").await.unwrap(), StopReason::EndTurn);
    assert!(!result_of(&s, 1, "g1").contains("you already made"));
    assert!(!result_of(&s, 2, "g2").contains("you already made"));
    let third = result_of(&s, 3, "g3");
    assert!(third.contains("you already made"), "{third}");
    let usage = s.manager.live()[0].totals;
    assert_eq!(usage.repeats_blocked, 1);
}

#[tokio::test]
async fn calls_past_a_tools_budget_are_refused_and_counted() {
    let config = "[tool_budgets]\nlist_dir = 1\n";
    let replies = vec![
        Reply::calls(&[
            ("a", "list_dir", json!({"path": "."})),
            ("b", "list_dir", json!({"path": "src"})),
        ]),
        Reply::text("ok"),
    ];
    let s = Session::open(replies, FakeEditor::answering(&[]), config, &[]).await;
    assert_eq!(s.prompt("look").await.unwrap(), StopReason::EndTurn);
    assert!(!result_of(&s, 1, "a").contains("budget"));
    assert!(result_of(&s, 1, "b").contains("its budget"));
    assert_eq!(s.manager.live()[0].totals.budget_refusals, 1);
}

#[tokio::test]
async fn every_call_gets_exactly_one_result_whatever_became_of_it() {
    let replies = vec![
        Reply::calls(&[
            ("ok", "list_dir", json!({"path": "."})),
            ("unknown", "no_such_tool", json!({})),
            ("broken", "read_file", json!({"nopath": 1})),
            (
                "asked",
                "write_file",
                json!({"path": "x.txt", "content": "x"}),
            ),
        ]),
        Reply::text("done"),
    ];
    let editor = FakeEditor::answering(&[PermissionAnswer::RejectOnce]);
    let s = Session::open(replies, editor, "", &[]).await;
    assert_eq!(s.prompt("go").await.unwrap(), StopReason::EndTurn);
    let ids: Vec<String> = results(&s.requests()[1])
        .into_iter()
        .map(|(id, _)| id)
        .collect();
    assert_eq!(ids, ["ok", "unknown", "broken", "asked"]);
}

#[tokio::test]
async fn a_failed_model_request_answers_the_prompt_with_its_error_and_the_session_goes_on() {
    let replies = vec![Reply::server_error("overloaded"), Reply::text("back")];
    let s = Session::open(replies, FakeEditor::answering(&[]), "", &[]).await;
    let failed = s.prompt("hi").await.unwrap_err();
    assert!(failed.to_string().contains("overloaded"), "{failed}");
    assert_eq!(s.prompt("again").await.unwrap(), StopReason::EndTurn);
    assert!(s.events.text().ends_with("back"));
}

#[tokio::test]
async fn a_linked_file_reaches_the_model_as_the_editor_has_it_unsaved() {
    let s = Session::open(
        vec![Reply::text("seen")],
        FakeEditor::answering(&[]),
        "",
        &[],
    )
    .await;
    let path = s.scratch.project().canonicalize().unwrap().join("draft.md");
    std::fs::write(&path, "saved on disk\n").unwrap();
    let _ = s.editor.clone().with_file(&path, "typed but not saved\n");
    let link = crate::types::UserPart::Link {
        uri: url::Url::from_file_path(&path).unwrap().to_string(),
        name: "draft.md".into(),
        description: None,
    };
    let parts = vec![crate::types::UserPart::Text("look at".into()), link];
    assert_eq!(
        s.manager.prompt(&s.id, parts).await.unwrap(),
        StopReason::EndTurn
    );
    let sent = format!("{:?}", s.requests()[0].messages.last().unwrap());
    assert!(sent.contains("typed but not saved"), "{sent}");
    assert!(!sent.contains("saved on disk"), "{sent}");
}

/// An answer that starts well, then repeats one sentence and never ends.
fn a_looping_answer() -> Reply {
    let mut events = vec![crate::model::ModelEvent::Text("Sure. ".into())];
    for _ in 0..400 {
        events.push(crate::model::ModelEvent::Text(
            "I will help you with that. ".into(),
        ));
    }
    Reply::Hangs(events)
}

#[tokio::test]
async fn an_answer_that_repeats_itself_is_stopped_with_the_reason_and_the_session_goes_on() {
    let s = Session::open(
        vec![a_looping_answer(), Reply::text("fine")],
        FakeEditor::answering(&[]),
        "",
        &[],
    )
    .await;
    let stop = tokio::time::timeout(std::time::Duration::from_secs(10), s.prompt("hello"))
        .await
        .expect("the looping answer was stopped")
        .unwrap();
    assert_eq!(stop, StopReason::MaxTokens);
    let notices: Vec<String> = s
        .events
        .all()
        .into_iter()
        .filter_map(|e| match e {
            TurnEvent::Notice { text, .. } => Some(text),
            _ => None,
        })
        .collect();
    assert_eq!(notices.len(), 1, "{notices:?}");
    assert!(
        notices[0].starts_with("The model kept repeating the same 27 bytes of text, so tandem stopped its answer there."),
        "{notices:?}"
    );
    assert!(notices[0].contains("`[loops] stop_repeated_text = false`"));
    // What streamed stays the answer: the model sees it, and the session goes on.
    assert_eq!(s.prompt("again").await.unwrap(), StopReason::EndTurn);
    let last = s.requests().pop().unwrap();
    let answered = last
        .messages
        .iter()
        .find_map(|m| match &**m {
            crate::model::Message::Assistant { text, .. } => Some(text.clone()),
            _ => None,
        })
        .unwrap();
    // (All of it was waiting at once, so all of it streamed before the look.)
    assert!(answered.starts_with("Sure. I will help you with that. "));
}

#[tokio::test]
async fn with_the_check_off_a_repeating_answer_runs_to_its_end() {
    let mut events = vec![crate::model::ModelEvent::Text("Sure. ".into())];
    for _ in 0..200 {
        events.push(crate::model::ModelEvent::Text("ha ".into()));
    }
    events.push(crate::model::ModelEvent::Finish(
        crate::types::FinishReason::Stop,
    ));
    let s = Session::open(
        vec![Reply::Events(events)],
        FakeEditor::answering(&[]),
        "[loops]\nstop_repeated_text = false\n",
        &[],
    )
    .await;
    assert_eq!(s.prompt("laugh").await.unwrap(), StopReason::EndTurn);
    assert_eq!(s.events.text().len(), "Sure. ".len() + 600);
    let notices = s
        .events
        .all()
        .into_iter()
        .filter(|e| matches!(e, TurnEvent::Notice { .. }))
        .count();
    assert_eq!(notices, 0);
}
