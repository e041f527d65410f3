//! Cancelling a turn at each await that can take long: the prompt answers `cancelled`
//! promptly, every call the model made has exactly one result, and the session goes on.

use std::time::Duration;

use serde_json::json;

use crate::model::ModelEvent;
use crate::session::Ran;
use crate::testkit::{FakeEditor, Reply, Session, results};
use crate::types::StopReason;

/// Cancels the running turn of `s`, and waits (bounded) for its prompt's answer.
async fn cancel(
    s: &Session,
    running: impl Future<Output = Result<Ran, crate::session::SessionError>>,
) -> StopReason {
    s.manager.cancel(&s.id).unwrap();
    let ran = tokio::time::timeout(Duration::from_secs(20), running)
        .await
        .expect("a cancelled turn answers promptly");
    ran.unwrap().stop
}

/// Checks that `s` answers the next prompt, and returns what the model read in it.
async fn goes_on(s: &Session) -> Vec<(String, String)> {
    assert_eq!(s.prompt("again").await.unwrap(), StopReason::EndTurn);
    results(s.requests().last().unwrap())
}

#[tokio::test]
async fn while_the_model_has_not_answered_yet() {
    let s = Session::open(
        vec![Reply::Stalls, Reply::text("back")],
        FakeEditor::answering(&[]),
        "",
        &[],
    )
    .await;
    let running = s.start("hi");
    s.model.asked_times(1).await;
    assert_eq!(cancel(&s, running).await, StopReason::Cancelled);
    goes_on(&s).await;
}

#[tokio::test]
async fn while_the_answer_streams_and_what_was_said_is_kept() {
    let half = Reply::Hangs(vec![ModelEvent::Text("Half an ".into())]);
    let s = Session::open(
        vec![half, Reply::text("back")],
        FakeEditor::answering(&[]),
        "",
        &[],
    )
    .await;
    let running = s.start("hi");
    s.model.asked_times(1).await;
    assert_eq!(cancel(&s, running).await, StopReason::Cancelled);
    goes_on(&s).await;
    let kept = s.requests()[1].messages.iter().any(
        |m| matches!(&**m, crate::model::Message::Assistant { text, .. } if text == "Half an "),
    );
    assert!(kept, "the partial answer is part of the conversation");
}

#[tokio::test]
async fn while_the_user_is_asked_and_the_call_is_answered_once() {
    let replies = vec![
        Reply::calls(&[
            ("w", "write_file", json!({"path": "a.txt", "content": "a"})),
            ("w2", "write_file", json!({"path": "b.txt", "content": "b"})),
        ]),
        Reply::text("back"),
    ];
    let s = Session::open(replies, FakeEditor::silent(), "", &[]).await;
    let running = s.start("write");
    s.editor.asked_times(1).await;
    assert_eq!(cancel(&s, running).await, StopReason::Cancelled);
    let read = goes_on(&s).await;
    let ids: Vec<&str> = read.iter().map(|(id, _)| id.as_str()).collect();
    assert_eq!(ids, ["w", "w2"], "{read:?}");
    assert!(
        read.iter().all(|(_, r)| r.contains("cancelled")),
        "{read:?}"
    );
    // The one question asked; the second call was never put to the user.
    assert_eq!(s.editor.asked().len(), 1);
}

#[cfg(unix)]
#[tokio::test]
async fn while_a_command_runs_and_it_is_killed() {
    let replies = vec![
        Reply::calls(&[("c", "run_command", json!({"command": "sleep 60"}))]),
        Reply::text("back"),
    ];
    let config = "mode = \"full-access\"\n";
    let s = Session::open(replies, FakeEditor::answering(&[]), config, &[]).await;
    let running = s.start("wait");
    s.model.asked_times(1).await;
    // Give the command a moment to start.
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(cancel(&s, running).await, StopReason::Cancelled);
    let read = goes_on(&s).await;
    assert_eq!(read.len(), 1, "{read:?}");
}

#[cfg(unix)]
#[tokio::test]
async fn while_a_prompt_hook_runs() {
    let config = "[[hooks.user_prompt_submit]]\ncommand = \"sleep 60\"\n";
    let s = Session::open(
        vec![Reply::text("back")],
        FakeEditor::answering(&[]),
        config,
        &[],
    )
    .await;
    let running = s.start("hi");
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(cancel(&s, running).await, StopReason::Cancelled);
    assert!(s.requests().is_empty(), "the model was never asked");
}
