//! Steering a running turn, in process: where a steering message lands in what the model is
//! sent, and what happens to one that comes too late or that a hook blocks. (Taking turns
//! back is in turn/rewind/tests.rs.)

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use tokio::sync::Notify;

use crate::model::Message;
use crate::session::SessionError;
use crate::testkit::{FakeEditor, Reply, Session};
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
