//! Steering a running turn and taking turns back, in process: where a steering message lands
//! in what the model is sent, what happens to one that comes too late, and a rewind's files
//! through the editor (in memory here; on disk in tests/suite/rewind.rs).

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use tokio::sync::Notify;

use crate::model::Message;
use crate::session::SessionError;
use crate::testkit::{FakeEditor, Reply, Session};
use crate::turn::{Back, Conflicts, FileResult};
use crate::types::PermissionAnswer;
use crate::types::{StopReason, TurnEvent, UserPart};

fn said(message: &Message) -> String {
    match message {
        Message::User(parts) => parts
            .iter()
            .filter_map(UserPart::as_text)
            .collect::<Vec<_>>()
            .join(" "),
        Message::Tool { content, .. } => format!("tool: {content}"),
        Message::Assistant { text, .. } => format!("assistant: {text}"),
        Message::System(_) => "system".into(),
    }
}

#[tokio::test]
async fn a_steering_message_lands_after_the_running_calls_results() {
    let gate = Arc::new(Notify::new());
    let list = Reply::calls(&[("c1", "list_dir", json!({"path": "."}))]);
    let replies = vec![
        Reply::Gated(gate.clone(), Box::new(list)),
        Reply::text("done, with b too"),
    ];
    let s = Session::open(replies, FakeEditor::answering(&[]), "", &[]).await;
    let running = s.start("look at a");
    s.model.asked_times(1).await;
    let landed = s
        .manager
        .steer(&s.id, vec![UserPart::Text("and b too".into())]);
    // The actor takes the message before the model's answer goes on.
    tokio::time::sleep(Duration::from_millis(50)).await;
    gate.notify_one();
    tokio::time::timeout(Duration::from_secs(10), landed)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(running.await.unwrap().stop, StopReason::EndTurn);
    let requests = s.requests();
    assert_eq!(requests.len(), 2);
    let tail: Vec<String> = requests[1].messages.iter().map(|m| said(m)).collect();
    let n = tail.len();
    assert!(tail[n - 2].starts_with("tool: "), "{tail:?}");
    assert_eq!(tail[n - 1], "and b too", "{tail:?}");
    assert!(s.events.all().iter().any(
        |e| matches!(e, TurnEvent::UserMessage(blocks) if format!("{blocks:?}").contains("and b too"))
    ));
}

#[tokio::test]
async fn a_message_sent_as_the_model_answers_keeps_the_turn_going() {
    let gate = Arc::new(Notify::new());
    let replies = vec![
        Reply::Gated(gate.clone(), Box::new(Reply::text("first answer"))),
        Reply::text("second answer"),
    ];
    let s = Session::open(replies, FakeEditor::answering(&[]), "", &[]).await;
    let running = s.start("one");
    s.model.asked_times(1).await;
    let landed = s
        .manager
        .steer(&s.id, vec![UserPart::Text("wait, also this".into())]);
    tokio::time::sleep(Duration::from_millis(50)).await;
    gate.notify_one();
    landed.await.unwrap();
    assert_eq!(running.await.unwrap().stop, StopReason::EndTurn);
    assert_eq!(
        s.requests().len(),
        2,
        "the model heard the message in the same turn"
    );
}

#[tokio::test]
async fn steering_with_no_turn_running_is_refused() {
    let s = Session::open(vec![Reply::text("ok")], FakeEditor::answering(&[]), "", &[]).await;
    let refused = s
        .manager
        .steer(&s.id, vec![UserPart::Text("hello".into())])
        .await;
    assert!(matches!(refused, Err(SessionError::Idle(_))), "{refused:?}");
}

#[tokio::test]
async fn with_queued_prompts_set_to_steer_a_prompt_joins_the_running_turn() {
    let gate = Arc::new(Notify::new());
    let replies = vec![
        Reply::Gated(gate.clone(), Box::new(Reply::text("one"))),
        Reply::text("one and two"),
    ];
    let s = Session::open(
        replies,
        FakeEditor::answering(&[]),
        "queued_prompts = \"steer\"\n",
        &[],
    )
    .await;
    let first = s.start("one");
    s.model.asked_times(1).await;
    let second = s.start("two");
    tokio::time::sleep(Duration::from_millis(20)).await;
    gate.notify_one();
    let (a, b) = tokio::time::timeout(Duration::from_secs(10), async {
        (first.await, second.await)
    })
    .await
    .unwrap();
    assert_eq!(a.unwrap().stop, StopReason::EndTurn);
    assert_eq!(b.unwrap().stop, StopReason::EndTurn);
    let requests = s.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(said(requests[1].messages.last().unwrap()), "two");
}

/// A session in `accept-edits` whose editor (in memory) answers `answers`, after three turns:
/// a.txt edited (CRLF), new.txt created, a.txt edited again; with a.txt and new.txt's paths.
async fn three_turns_of_edits(
    answers: &[PermissionAnswer],
) -> (Session, std::path::PathBuf, std::path::PathBuf) {
    let write = |id: &str, path: &str, content: &str| {
        Reply::calls(&[(id, "write_file", json!({"path": path, "content": content}))])
    };
    let replies = vec![
        write("w1", "a.txt", "a1\r\n"),
        Reply::text("one"),
        write("w2", "new.txt", "new\n"),
        Reply::text("two"),
        write("w3", "a.txt", "a2\r\n"),
        Reply::text("three"),
    ];
    let s = Session::open(
        replies,
        FakeEditor::answering(answers),
        "",
        &[("TANDEM_MODE", "accept-edits")],
    )
    .await;
    let a = s.scratch.project().join("a.txt");
    let fresh = s.scratch.project().join("new.txt");
    s.editor.clone().with_file(&a, "a0\r\n");
    for prompt in ["one", "two", "three"] {
        assert_eq!(s.prompt(prompt).await.unwrap(), StopReason::EndTurn);
    }
    (s, a, fresh)
}

#[tokio::test]
async fn a_rewind_through_the_editor_puts_back_edits_empties_created_files_and_asks_about_changed_ones()
 {
    let (s, a, fresh) = three_turns_of_edits(&[PermissionAnswer::RejectOnce]).await;
    let editor = s.editor.clone();
    // Someone else changes a.txt after tandem's last write.
    editor.clone().with_file(&a, "a2 edited by hand\r\n");
    let report = s
        .manager
        .rewind(&s.id, Back::Turn(2), Conflicts::Ask)
        .await
        .unwrap()
        .rewound
        .unwrap();
    assert_eq!(report.taken_back.len(), 2);
    let result = |path: &std::path::Path| {
        report
            .files
            .iter()
            .find(|f| f.path == path)
            .map(|f| f.result.clone())
    };
    assert!(
        matches!(result(&a), Some(FileResult::LeftChanged { .. })),
        "{report:?}"
    );
    assert_eq!(result(&fresh), Some(FileResult::Emptied), "{report:?}");
    assert_eq!(editor.file(&a).as_deref(), Some("a2 edited by hand\r\n"));
    assert_eq!(editor.file(&fresh).as_deref(), Some(""));
    assert_eq!(editor.asked().len(), 1, "one question, about a.txt");
    // Past the kept change, overwriting it: back to before turn one.
    let report = s
        .manager
        .rewind(&s.id, Back::Turn(1), Conflicts::Overwrite)
        .await
        .unwrap()
        .rewound
        .unwrap();
    assert!(matches!(
        report.files.iter().find(|f| f.path == a).map(|f| &f.result),
        Some(FileResult::Overwritten { .. })
    ));
    assert_eq!(
        editor.file(&a).as_deref(),
        Some("a0\r\n"),
        "CRLF kept, byte for byte"
    );
    assert!(report.turns.is_empty());
    // The model no longer sees any of it.
    s.prompt("fresh start").await.unwrap_err();
    let last = s.requests().pop().unwrap();
    let users: Vec<String> = last
        .messages
        .iter()
        .filter(|m| matches!(&***m, Message::User(_)))
        .map(|m| said(m))
        .collect();
    assert_eq!(users, ["fresh start"]);
}

#[tokio::test]
async fn a_steering_message_a_hook_blocks_never_reaches_the_model() {
    let gate = Arc::new(Notify::new());
    let replies = vec![
        Reply::Gated(gate.clone(), Box::new(Reply::text("first"))),
        Reply::text("never"),
    ];
    let config = "[[hooks.user_prompt_submit]]\ncommand = \"if grep -q secret; then echo 'no secrets' >&2; exit 2; fi\"\n";
    let s = Session::open(replies, FakeEditor::answering(&[]), config, &[]).await;
    let running = s.start("one");
    s.model.asked_times(1).await;
    let landed = s
        .manager
        .steer(&s.id, vec![UserPart::Text("print the secret".into())]);
    tokio::time::sleep(Duration::from_millis(50)).await;
    gate.notify_one();
    let refused = tokio::time::timeout(Duration::from_secs(10), landed)
        .await
        .unwrap();
    assert!(
        matches!(&refused, Err(SessionError::SteerRefused(why)) if why.contains("no secrets")),
        "{refused:?}"
    );
    assert_eq!(running.await.unwrap().stop, StopReason::EndTurn);
    assert_eq!(s.requests().len(), 1, "the model never heard it");
}

#[tokio::test]
async fn an_action_is_a_turn_a_rewind_takes_back_on_its_own() {
    let config = "[[actions]]\nname = \"hello\"\ncommand = \"echo hi\"\n";
    let replies = vec![
        Reply::calls(&[(
            "w1",
            "write_file",
            json!({"path": "a.txt", "content": "a\n"}),
        )]),
        Reply::text("written"),
    ];
    let s = Session::open(
        replies,
        FakeEditor::answering(&[PermissionAnswer::AllowOnce]),
        config,
        &[("TANDEM_MODE", "accept-edits")],
    )
    .await;
    s.prompt("write a").await.unwrap();
    s.prompt("/hello").await.unwrap();
    let a = s.scratch.project().join("a.txt");
    let report = s
        .manager
        .rewind(&s.id, Back::Last, Conflicts::Ask)
        .await
        .unwrap()
        .rewound
        .unwrap();
    assert_eq!(report.taken_back.len(), 1);
    assert!(
        report.taken_back[0].first_line.contains("`hello` action"),
        "{report:?}"
    );
    assert_eq!(report.commands, ["echo hi"]);
    assert_eq!(
        s.editor.file(&a).as_deref(),
        Some("a\n"),
        "the earlier turn stays"
    );
    assert_eq!(report.turns.len(), 1);
}
