//! The session actor, in process: one prompt at a time, settings changed between and during
//! turns, cancel and close at any moment, and the title after the first exchange.

use std::time::Duration;

use serde_json::json;

use crate::client::PermissionAnswer;
use crate::model::ModelEvent;
use crate::session::SessionError;
use crate::testkit::{FakeEditor, Reply, Session};
use crate::types::{Mode, StopReason, TurnEvent};

#[tokio::test]
async fn a_second_prompt_while_one_runs_is_refused_and_the_first_goes_on() {
    let half = Reply::Hangs(vec![ModelEvent::Text("working".into())]);
    let s = Session::open(vec![half], FakeEditor::answering(&[]), "", &[]).await;
    let first = s.start("one");
    s.model.asked_times(1).await;
    let second = s.prompt("two").await;
    assert!(matches!(second, Err(SessionError::Busy(_))), "{second:?}");
    s.manager.cancel(&s.id).unwrap();
    let first = tokio::time::timeout(Duration::from_secs(10), first).await;
    assert_eq!(first.unwrap().unwrap().stop, StopReason::Cancelled);
}

#[tokio::test]
async fn a_cancel_with_nothing_running_changes_nothing() {
    let s = Session::open(
        vec![Reply::text("fine")],
        FakeEditor::answering(&[]),
        "",
        &[],
    )
    .await;
    s.manager.cancel(&s.id).unwrap();
    assert_eq!(s.prompt("hi").await.unwrap(), StopReason::EndTurn);
}

#[tokio::test]
async fn a_mode_switch_applies_to_the_next_call_and_is_told() {
    let write = |id| Reply::calls(&[(id, "write_file", json!({"path": "n.txt", "content": "x"}))]);
    let replies = vec![
        write("a"),
        Reply::text("one"),
        write("b"),
        Reply::text("two"),
    ];
    let editor = FakeEditor::answering(&[PermissionAnswer::AllowOnce]);
    let s = Session::open(replies, editor, "", &[]).await;
    assert_eq!(s.prompt("write").await.unwrap(), StopReason::EndTurn);
    s.manager.set_mode(&s.id, "accept-edits").await.unwrap();
    assert_eq!(s.manager.live()[0].settings.mode, Mode::AcceptEdits);
    assert!(
        s.events
            .all()
            .iter()
            .any(|e| matches!(e, TurnEvent::ModeChanged(Mode::AcceptEdits)))
    );
    assert_eq!(s.prompt("write again").await.unwrap(), StopReason::EndTurn);
    assert_eq!(
        s.editor.asked().len(),
        1,
        "accept-edits writes without asking"
    );
    let unknown = s.manager.set_mode(&s.id, "yolo").await;
    assert!(matches!(unknown, Err(SessionError::InvalidParams(_))));
}

#[tokio::test]
async fn closing_mid_turn_answers_the_prompt_cancelled() {
    let half = Reply::Hangs(vec![ModelEvent::Text("working".into())]);
    let s = Session::open(vec![half], FakeEditor::answering(&[]), "", &[]).await;
    let running = s.start("one");
    s.model.asked_times(1).await;
    s.manager.close(&s.id).await.unwrap();
    let ran = tokio::time::timeout(Duration::from_secs(10), running).await;
    assert_eq!(ran.unwrap().unwrap().stop, StopReason::Cancelled);
    assert!(matches!(
        s.prompt("after").await,
        Err(SessionError::NotFound(_))
    ));
}

#[tokio::test]
async fn the_first_exchange_titles_the_session() {
    let s = Session::open(
        vec![Reply::text("sure"), Reply::text("again")],
        FakeEditor::answering(&[]),
        "",
        &[],
    )
    .await;
    s.prompt("Fix the parser bug").await.unwrap();
    s.prompt("and the tests").await.unwrap();
    let titles: Vec<String> = s
        .events
        .all()
        .into_iter()
        .filter_map(|e| match e {
            TurnEvent::Title(t) => Some(t),
            _ => None,
        })
        .collect();
    assert_eq!(titles, ["Fix the parser bug"]);
}
