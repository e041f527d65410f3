//! Compaction's decisions, in process, over the fakes: which messages `/compact` summarizes
//! and which stay, what the next request holds, the summary's cap, compaction before a
//! request once the last usage report nears the window, and after a context-length refusal
//! (once per request, then the error stands). What crosses the boundary — the
//! `compaction_update`s an editor with the capability gets, each wire API's own overflow
//! error, the full history a reload replays — stays in tests/suite/context.rs.

use crate::model::{ErrorClass, Message, ModelError, ModelEvent, ModelRequest, Usage};
use crate::session::SessionError;
use crate::testkit::{FakeEditor, Reply, Session};
use crate::types::{CompactionStatus, FinishReason, StopReason, TurnEvent, UserPart};

/// Each message of `request` as one line: `role: text`.
fn lines(request: &ModelRequest) -> Vec<String> {
    request
        .messages
        .iter()
        .map(|m| match &**m {
            Message::System(text) => format!("system: {text}"),
            Message::User(parts) => {
                let text: Vec<_> = parts.iter().filter_map(UserPart::as_text).collect();
                format!("user: {}", text.join(" "))
            }
            Message::Assistant { text, .. } => format!("assistant: {text}"),
            Message::Tool { content, .. } => format!("tool: {content}"),
        })
        .collect()
}

/// An answer of `text` whose usage report says `prompt_tokens` were sent.
fn answer_using(text: &str, prompt_tokens: u64) -> Reply {
    Reply::Events(vec![
        ModelEvent::Text(text.into()),
        ModelEvent::Usage(Usage {
            prompt_tokens,
            completion_tokens: 10,
            ..Usage::default()
        }),
        ModelEvent::Finish(FinishReason::Stop),
    ])
}

fn too_long() -> Reply {
    Reply::Fails(ModelError::new(
        ErrorClass::ContextLength,
        "This model's maximum context length is 8192 tokens",
    ))
}

/// The user's config: one model, `small`, with a 1,000-token window.
const SMALL_WINDOW: &str = "[[models]]\nid = \"small\"\ncontext_window = 1000\n";

async fn session(replies: Vec<Reply>, config: &str) -> Session {
    Session::open(
        replies,
        FakeEditor::answering(&[]),
        config,
        &[("TANDEM_MODEL", "small")],
    )
    .await
}

#[tokio::test]
async fn compact_summarizes_the_older_turns_without_tools_and_keeps_the_last_exchange() {
    let s = session(
        vec![
            Reply::text("Paris."),
            Reply::text("About 2 million."),
            Reply::text("The user asked about Paris and its size."),
            Reply::text("Yes."),
        ],
        "",
    )
    .await;
    s.prompt("Capital of France?").await.unwrap();
    s.prompt("How many people live there?").await.unwrap();
    assert_eq!(s.prompt("/compact").await.unwrap(), StopReason::EndTurn);
    let compactions: Vec<_> = s
        .events
        .all()
        .into_iter()
        .filter_map(|e| match e {
            TurnEvent::Compaction {
                id,
                status,
                summary,
                ..
            } => Some((id, status, summary)),
            _ => None,
        })
        .collect();
    assert_eq!(compactions.len(), 2, "{compactions:?}");
    assert_eq!(compactions[0].1, CompactionStatus::InProgress);
    assert_eq!(compactions[1].1, CompactionStatus::Completed);
    assert_eq!(compactions[0].0, compactions[1].0, "one compaction");
    assert_eq!(
        compactions[1].2.as_deref(),
        Some("The user asked about Paris and its size.")
    );
    let requests = s.requests();
    let summary = &requests[2];
    assert!(summary.tools.is_empty(), "no tools for the summary");
    let asked = lines(summary);
    assert!(asked[0].contains("summarize a coding session"), "{asked:?}");
    assert_eq!(
        asked[1..3],
        ["user: Capital of France?", "assistant: Paris."]
    );
    assert!(
        asked[3].starts_with("user: Summarize the conversation above"),
        "{asked:?}"
    );
    assert_eq!(asked.len(), 4, "the last exchange is not summarized");

    s.prompt("Is it big?").await.unwrap();
    let next = lines(&s.requests()[3]);
    assert_eq!(
        next.len(),
        4,
        "system, summary + kept user, kept answer, new prompt: {next:?}"
    );
    assert!(
        next[1].contains("The user asked about Paris and its size.")
            && next[1].contains("How many people live there?"),
        "{next:?}"
    );
    assert_eq!(
        next[2..],
        ["assistant: About 2 million.", "user: Is it big?"]
    );
}

#[tokio::test]
async fn the_summary_is_capped_as_every_answer_is() {
    let replies = ["Paris.", "About 2 million.", "The user asked about Paris."];
    let s = session(
        replies.into_iter().map(Reply::text).collect(),
        "max_output_tokens = 300\n",
    )
    .await;
    s.prompt("Capital of France?").await.unwrap();
    s.prompt("How many people live there?").await.unwrap();
    s.prompt("/compact").await.unwrap();
    let requests = s.requests();
    assert!(lines(&requests[2])[0].contains("summarize a coding session"));
    for request in &requests {
        assert_eq!(request.max_tokens, Some(300), "{:?}", lines(request));
    }
}

#[tokio::test]
async fn compact_with_nothing_older_than_the_last_exchange_changes_nothing() {
    let s = session(vec![Reply::text("Paris."), Reply::text("Yes.")], "").await;
    s.prompt("Capital of France?").await.unwrap();
    assert_eq!(s.prompt("/compact").await.unwrap(), StopReason::EndTurn);
    assert_eq!(s.requests().len(), 1, "no summary was asked for");
    s.prompt("Is it big?").await.unwrap();
    let next = lines(&s.requests()[1]);
    assert_eq!(
        next[1..],
        [
            "user: Capital of France?",
            "assistant: Paris.",
            "user: Is it big?"
        ]
    );
}

#[tokio::test]
async fn a_usage_report_near_the_window_compacts_before_the_next_request() {
    let s = session(
        vec![
            answer_using("First answer.", 900),
            Reply::text("Summary of the first exchange."),
            Reply::text("Second answer."),
        ],
        SMALL_WINDOW,
    )
    .await;
    s.prompt("First question").await.unwrap();
    assert_eq!(
        s.prompt("Second question").await.unwrap(),
        StopReason::EndTurn
    );
    let requests = s.requests();
    assert_eq!(requests.len(), 3, "answer, summary, answer");
    assert!(
        lines(&requests[1])
            .last()
            .unwrap()
            .starts_with("user: Summarize the conversation above")
    );
    let third = lines(&requests[2]);
    assert_eq!(third.len(), 2, "{third:?}");
    assert!(
        third[1].contains("Summary of the first exchange.")
            && third[1].ends_with("Second question"),
        "{third:?}"
    );
    assert!(s.events.text().ends_with("Second answer."));
}

#[tokio::test]
async fn a_usage_report_well_inside_the_window_compacts_nothing() {
    let s = session(
        vec![
            answer_using("First answer.", 300),
            Reply::text("Second answer."),
        ],
        SMALL_WINDOW,
    )
    .await;
    s.prompt("First question").await.unwrap();
    s.prompt("Second question").await.unwrap();
    let requests = s.requests();
    assert_eq!(requests.len(), 2, "no summary between");
    assert_eq!(lines(&requests[1]).len(), 4);
}

#[tokio::test]
async fn a_context_length_refusal_compacts_once_and_retries_then_a_second_one_stands() {
    let s = session(
        vec![
            Reply::text("First answer."),
            too_long(),
            Reply::text("Short summary."),
            Reply::text("Second answer."),
        ],
        "",
    )
    .await;
    s.prompt("First question").await.unwrap();
    assert_eq!(
        s.prompt("Second question").await.unwrap(),
        StopReason::EndTurn
    );
    assert!(s.events.text().ends_with("Second answer."));
    let requests = s.requests();
    assert_eq!(requests.len(), 4, "refused, summary, retried");
    assert_eq!(
        lines(&requests[1])[1..],
        [
            "user: First question",
            "assistant: First answer.",
            "user: Second question"
        ],
        "the refused request held the whole conversation"
    );
    assert!(lines(&requests[3])[1].contains("Short summary."));

    // Refused again after compacting: reported, not retried forever.
    for reply in [too_long(), Reply::text("Another summary."), too_long()] {
        s.model.push(reply);
    }
    let third = s.prompt("Third question").await;
    assert!(
        matches!(&third, Err(SessionError::Model(e)) if e.class == ErrorClass::ContextLength),
        "{third:?}"
    );
    assert_eq!(s.requests().len(), 7, "one compaction, one retry");
    // The session goes on.
    s.model.push(Reply::text("Still here."));
    assert_eq!(
        s.prompt("Fourth question").await.unwrap(),
        StopReason::EndTurn
    );
    assert!(s.events.text().ends_with("Still here."));
}
