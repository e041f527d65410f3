//! The session actor, in process: one prompt at a time (the next ones wait their turn),
//! settings changed between and during turns, cancel and close at any moment, and the title
//! after the first exchange. Steering and rewinds are in steer_tests.rs.

use std::time::Duration;

use serde_json::json;

use crate::model::ModelEvent;
use crate::session::SessionError;
use crate::testkit::{FakeEditor, Reply, Session};
use crate::types::PermissionAnswer;
use crate::types::{Mode, StopReason, TurnEvent};

#[tokio::test]
async fn prompts_sent_while_one_runs_wait_and_run_in_order_with_their_own_answers() {
    let gate = std::sync::Arc::new(tokio::sync::Notify::new());
    let replies = vec![
        Reply::Gated(gate.clone(), Box::new(Reply::text("one done"))),
        Reply::text("two done"),
        Reply::text("three done"),
    ];
    let s = Session::open(replies, FakeEditor::answering(&[]), "", &[]).await;
    let first = s.start("one");
    s.model.asked_times(1).await;
    let (second, third) = (s.start("two"), s.start("three"));
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(
        s.requests().len(),
        1,
        "the queued prompts wait for the running turn"
    );
    gate.notify_one();
    let all = tokio::time::timeout(Duration::from_secs(10), async {
        (first.await, second.await, third.await)
    })
    .await
    .unwrap();
    for ran in [all.0, all.1, all.2] {
        assert_eq!(ran.unwrap().stop, StopReason::EndTurn);
    }
    let requests = s.requests();
    assert_eq!(requests.len(), 3);
    let last = crate::conversation::last_answer(&requests[2].messages[1..]);
    assert_eq!(last, "two done", "each turn saw the one before it");
}

#[tokio::test]
async fn a_cancel_answers_the_running_turn_and_every_queued_prompt_cancelled() {
    let half = Reply::Hangs(vec![ModelEvent::Text("working".into())]);
    let s = Session::open(
        vec![half, Reply::text("later")],
        FakeEditor::answering(&[]),
        "",
        &[],
    )
    .await;
    let first = s.start("one");
    s.model.asked_times(1).await;
    let (second, third) = (s.start("two"), s.start("three"));
    tokio::time::sleep(Duration::from_millis(20)).await;
    s.manager.cancel(&s.id).unwrap();
    let all = tokio::time::timeout(Duration::from_secs(10), async {
        (first.await, second.await, third.await)
    })
    .await
    .unwrap();
    for ran in [all.0, all.1, all.2] {
        assert_eq!(ran.unwrap().stop, StopReason::Cancelled);
    }
    assert_eq!(s.requests().len(), 1, "nothing queued ran");
    assert_eq!(s.prompt("after").await.unwrap(), StopReason::EndTurn);
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
