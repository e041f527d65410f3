//! Answers that open with `[` or `{` stream like any other: held back only while they can
//! still become a call written as text, never once the server has returned calls in their own
//! field; a cancel keeps what was shown; a call in the text is still never shown.
//!
//! Each answer pauses at a gate the test opens only after it has seen the text before the
//! gate reach the editor, so "before the answer ends" is a fact of the script, not a timing.
//! The editors show each `agent_message_chunk` as it comes: Zed's rule (shared/clients
//! README, `acp_thread`): "chunks merge by `messageId`" into the message on screen, and a
//! cancel "sends `session/cancel`", leaving the entries shown so far.

use serde_json::{Value, json};

use crate::common::gate::Gate;
use crate::common::mock_model::{End, Piece, delta, finish, text, usage};
use crate::common::{Agent, Reply, joined, of_kind, response, session_with_env};

/// An answer that streams `before` piece by piece, waits at `gate`, then streams `after`.
fn gated(before: &[&str], gate: &Gate, after: &[&str]) -> Reply {
    let data = |v: Value| Piece::Data(v.to_string());
    let mut pieces = vec![data(delta(json!({"role": "assistant", "content": ""})))];
    pieces.extend(before.iter().map(|t| data(text(t))));
    pieces.push(Piece::Gate(gate.clone()));
    pieces.extend(after.iter().map(|t| data(text(t))));
    pieces.push(data(finish("stop")));
    pieces.push(data(usage(100, 5)));
    Reply::Stream {
        pieces,
        end: End::Done,
    }
}

/// Reads the agent's messages until the answer shown so far is `expected`; returns them.
/// With the answer held back, nothing comes while the stream waits at its gate, and the
/// read times out.
async fn until_shown(agent: &mut Agent, expected: &str) -> Vec<Value> {
    let mut seen = Vec::new();
    loop {
        let shown = joined(&seen, "agent_message_chunk");
        if shown == expected {
            return seen;
        }
        assert!(
            expected.starts_with(&shown),
            "shown {shown:?} while {expected:?} was due"
        );
        seen.push(agent.next_message().await);
    }
}

async fn start(script: Vec<Reply>) -> (crate::common::MockModel, Agent, String) {
    let (mock, _ws, agent, session, _editor) =
        session_with_env("small", script, json!({}), "ask", |_| Vec::new()).await;
    (mock, agent, session)
}

/// Prompts, waits until `before` is shown while the answer waits at its gate, then lets it
/// end; returns every update of the turn.
async fn shown_before_the_gate(
    agent: &mut Agent,
    session: &str,
    prompt: &str,
    before: &[&str],
    gate: &Gate,
) -> Vec<Value> {
    let pending = agent.start_prompt(session, prompt).await;
    let mut updates = until_shown(agent, &before.concat()).await;
    gate.open();
    let done = response(pending).await;
    assert_eq!(done["result"]["stopReason"], "end_turn", "{done}");
    updates.extend(agent.drain());
    updates
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bracketed_answer_from_a_server_with_native_tools_streams_before_it_ends() {
    let gate = Gate::new();
    let before = ["[1, 2", ", 3, ", "5, 8, "];
    let (mock, mut agent, session) = start(vec![gated(&before, &gate, &["13]"])]).await;
    let updates =
        shown_before_the_gate(&mut agent, &session, "Fibonacci as JSON", &before, &gate).await;
    assert!(mock.requests()[0].body["tools"].is_array(), "tools offered");
    assert_eq!(
        joined(&updates, "agent_message_chunk"),
        "[1, 2, 3, 5, 8, 13]"
    );
    agent.assert_valid();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn once_the_server_returned_a_call_in_its_field_a_call_shaped_answer_streams_as_text() {
    // The user asks for the calls as JSON: written as text, this answer would be a call; from
    // a server that returned the model's last call in `tool_calls`, it is the answer.
    let gate = Gate::new();
    let before = [
        "[{\"name\": \"read_file\", ",
        "\"arguments\": {\"path\": \"README.md\"}}",
    ];
    let script = vec![
        Reply::tools(&[("c1", "read_file", json!({"path": "README.md"}))]),
        Reply::text(&["Read it."]),
        gated(&before, &gate, &["]"]),
    ];
    let (mock, mut agent, session) = start(script).await;
    let (first, updates) = agent.prompt(&session, "read the readme").await;
    assert_eq!(first["result"]["stopReason"], "end_turn", "{first}");
    assert_eq!(of_kind(&updates, "tool_call").len(), 1);
    let updates = shown_before_the_gate(
        &mut agent,
        &session,
        "the calls you made, as JSON",
        &before,
        &gate,
    )
    .await;
    assert_eq!(mock.requests().len(), 3, "the answer ran nothing");
    assert!(of_kind(&updates, "tool_call").is_empty());
    assert_eq!(
        joined(&updates, "agent_message_chunk"),
        before.concat() + "]"
    );
    agent.assert_valid();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prompted_model_s_json_answer_streams_and_its_call_shows_nothing() {
    // llama.cpp without --jinja takes no tools: they go in the prompt, and the model's calls
    // come back as text, so its answers are watched.
    let refusal = r#"{"error":{"code":500,"message":"tools param requires --jinja flag","type":"server_error"}}"#;
    let gate = Gate::new();
    let before = ["{\"users\": ", "[{\"name\": \"ada\", ", "\"id\": 1}, "];
    let call = [
        "{\"name\": \"re",
        "ad_file\", \"argu",
        "ments\": {\"path\": \"README.md\"}}",
    ];
    let script = vec![
        Reply::status(500, refusal),
        gated(&before, &gate, &["{\"name\": \"bob\", \"id\": 2}]}"]),
        Reply::text(&call),
        Reply::text(&["done"]),
    ];
    let (mock, mut agent, session) = start(script).await;
    let updates =
        shown_before_the_gate(&mut agent, &session, "users as JSON", &before, &gate).await;
    let requests = mock.requests();
    assert!(requests[1].body.get("tools").is_none(), "prompted");
    assert!(requests[1].system_prompt().contains("## Tools"));
    assert!(joined(&updates, "agent_message_chunk").ends_with("\"bob\", \"id\": 2}]}"));

    // A call in the form the prompt asks for, streamed in pieces: it runs, none of it shown.
    let (done, updates) = agent.prompt(&session, "read the readme").await;
    assert_eq!(done["result"]["stopReason"], "end_turn", "{done}");
    assert_eq!(of_kind(&updates, "tool_call").len(), 1);
    assert_eq!(joined(&updates, "agent_message_chunk"), "done");
    assert_eq!(mock.requests().len(), 4);
    agent.assert_valid();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancel_mid_answer_keeps_what_was_shown_of_a_bracketed_answer() {
    let gate = Gate::new();
    let before = ["[link", "](https://example.com) and ", "more "];
    let (_mock, mut agent, session) = start(vec![gated(&before, &gate, &["never sent"])]).await;
    let pending = agent.start_prompt(&session, "a link").await;
    let mut updates = until_shown(&mut agent, &before.concat()).await;
    agent
        .notify("session/cancel", json!({"sessionId": session}))
        .await;
    let done = response(pending).await;
    assert_eq!(done["result"]["stopReason"], "cancelled", "{done}");
    gate.open();
    updates.extend(agent.drain());
    assert_eq!(joined(&updates, "agent_message_chunk"), before.concat());
    agent.assert_valid();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn text_held_as_a_possible_call_is_shown_when_a_call_arrives_in_its_field() {
    // The server left the model's words beside the call it read: they are text, shown as soon
    // as the call starts, before the call's card and before the answer ends.
    let gate = Gate::new();
    let words = "{\"name\": \"read_file\"} ";
    let data = |v: Value| Piece::Data(v.to_string());
    let pieces = vec![
        data(delta(json!({"role": "assistant", "content": ""}))),
        data(text(words)),
        data(crate::common::mock_model::tool_call(
            0,
            "c1",
            "read_file",
            &json!({"path": "README.md"}).to_string(),
        )),
        Piece::Gate(gate.clone()),
        data(finish("tool_calls")),
        data(usage(100, 5)),
    ];
    let script = vec![
        Reply::Stream {
            pieces,
            end: End::Done,
        },
        Reply::text(&["done"]),
    ];
    let (mock, mut agent, session) = start(script).await;
    let pending = agent.start_prompt(&session, "read the readme").await;
    let mut updates = until_shown(&mut agent, words).await;
    gate.open();
    let done = response(pending).await;
    assert_eq!(done["result"]["stopReason"], "end_turn", "{done}");
    updates.extend(agent.drain());
    let kind = |u: &Value| u["params"]["update"]["sessionUpdate"].clone();
    let text_at = updates
        .iter()
        .position(|u| kind(u) == "agent_message_chunk");
    let card_at = updates.iter().position(|u| kind(u) == "tool_call");
    assert!(text_at < card_at && text_at.is_some(), "{updates:?}");
    assert_eq!(mock.requests().len(), 2, "the call ran");
    assert_eq!(
        joined(&updates, "agent_message_chunk"),
        format!("{words}done")
    );
    agent.assert_valid();
}
