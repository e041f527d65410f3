//! Subagents as sessions of their own, for an editor that advertised `subagents`: announced
//! on the parent with `subagent_update` before anything names the child, handed the task as a
//! `session_message`, working under the child's id (messages, tool calls, permission
//! questions), idle at the end with its stop reason and usage; `session/cancel` naming the
//! child stops it alone. An editor that did not advertise it never sees any of that.

use std::time::Duration;

use serde_json::{Value, json};

use crate::common::calls::{call_events, final_status, tool_result};
use crate::common::{Reply, assert_error, response, session_in};

/// What the editor advertises: subagent sessions, and nothing else of note.
fn takes_subagents() -> Value {
    json!({"subagents": {}})
}

/// The `subagent_update`s the editor was sent, in order.
fn subagent_updates(messages: &[Value]) -> Vec<&Value> {
    messages
        .iter()
        .filter(|m| m["params"]["update"]["sessionUpdate"] == "subagent_update")
        .collect()
}

/// The messages that carry `session` as their `sessionId` (updates and requests).
fn about<'a>(messages: &'a [Value], session: &str) -> Vec<&'a Value> {
    messages
        .iter()
        .filter(|m| m["params"]["sessionId"] == session)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subagent_works_in_a_child_session_the_editor_can_follow() {
    let script = vec![
        Reply::tools(&[(
            "t1",
            "task",
            json!({"description": "Write notes", "prompt": "Write notes.md saying hi"}),
        )]),
        Reply::tools(&[(
            "s1",
            "write_file",
            json!({"path": "notes.md", "content": "hi\n"}),
        )]),
        Reply::text(&["Wrote ", "notes.md."]),
        Reply::text(&["Done."]),
    ];
    let (mock, ws, mut agent, session, editor) =
        session_in("extend", script, takes_subagents(), "ask", |_| {}).await;
    editor.answer_with(&[crate::common::editor::Answer::Select("allow_once")]);
    let (answer, messages) = agent.prompt(&session, "write notes").await;
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");

    // Announced on the parent, before any message names the child.
    let updates = subagent_updates(&messages);
    assert_eq!(updates.len(), 3, "{updates:#?}");
    let announced = &updates[0]["params"];
    assert_eq!(announced["sessionId"], session.as_str());
    let child = announced["update"]["sessionId"]
        .as_str()
        .unwrap()
        .to_string();
    assert_ne!(child, session);
    assert_eq!(announced["update"]["title"], "general: Write notes");
    assert!(announced["update"]["description"].as_str().unwrap().len() > 10);
    assert_eq!(announced["update"]["capabilities"], json!({"cancel": {}}));
    let cwd = announced["update"]["cwd"].as_str().unwrap();
    assert_eq!(
        std::path::Path::new(cwd),
        ws.project().canonicalize().unwrap()
    );
    let first_naming_child = messages
        .iter()
        .position(|m| m.to_string().contains(&child))
        .unwrap();
    assert_eq!(&messages[first_naming_child], updates[0]);

    // The task, as a message from the parent on the child.
    let on_child = about(&messages, &child);
    let task = &on_child[0]["params"]["update"];
    assert_eq!(task["sessionUpdate"], "session_message");
    assert_eq!(task["senderSessionId"], session.as_str());
    assert_eq!(task["recipientSessionId"], child.as_str());
    assert_eq!(task["content"][0]["text"], "Write notes.md saying hi");
    assert_eq!(updates[1]["params"]["update"]["state"]["state"], "running");

    // Its work under its own id: the tool call, the permission question, its answer.
    let child_updates: Vec<Value> = on_child.iter().map(|m| (*m).clone()).collect();
    assert_eq!(final_status(&child_updates, "t1/s1"), "completed");
    assert!(call_events(&messages_on(&messages, &session), "t1/s1").is_empty());
    let asked = editor.params_of("session/request_permission");
    assert_eq!(asked.len(), 1);
    assert_eq!(asked[0]["sessionId"], child.as_str());
    let said: String = on_child
        .iter()
        .filter(|m| m["params"]["update"]["sessionUpdate"] == "agent_message_chunk")
        .map(|m| m["params"]["update"]["content"]["text"].as_str().unwrap())
        .collect();
    assert_eq!(said, "Wrote notes.md.");
    assert_eq!(
        std::fs::read_to_string(ws.project().join("notes.md")).unwrap(),
        "hi\n"
    );

    // Idle at the end, with how it ended and what it spent.
    let idle = &updates[2]["params"]["update"]["state"];
    assert_eq!(idle["state"], "idle");
    assert_eq!(idle["stopReason"], "end_turn");
    assert!(idle["usage"]["totalTokens"].as_u64().unwrap() > 0, "{idle}");

    // The parent: its `task` call ends with the answer, which is what its model reads.
    let parent = messages_on(&messages, &session);
    assert_eq!(final_status(&parent, "t1"), "completed");
    let requests = mock.requests();
    assert_eq!(tool_result(&requests[3], "t1"), "Wrote notes.md.");
    // The parent's own answer stays on the parent.
    assert!(
        parent
            .iter()
            .any(|m| m["params"]["update"]["content"]["text"] == "Done.")
    );

    // The child was only while it worked: a prompt naming it now is an unknown session.
    let refused = agent
        .request(
            "session/prompt",
            json!({"sessionId": child, "prompt": [{"type": "text", "text": "hi"}]}),
        )
        .await;
    assert_error(&refused, -32002, "unknown session");
    agent.assert_valid();
}

/// The messages carrying `session` as their `sessionId`, owned.
fn messages_on(messages: &[Value], session: &str) -> Vec<Value> {
    about(messages, session).into_iter().cloned().collect()
}

/// `session/cancel` naming the child stops the child alone: the parent's turn goes on, its
/// model is told the user stopped the subagent, and the child goes idle `cancelled`. Any
/// other request naming the child while it works is refused, saying whose it is.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_the_child_session_stops_only_the_subagent() {
    let pieces: Vec<String> = (0..200).map(|i| format!("w{i} ")).collect();
    let refs: Vec<&str> = pieces.iter().map(String::as_str).collect();
    let script = vec![
        Reply::tools(&[(
            "t1",
            "task",
            json!({"description": "Long job", "prompt": "Work for a long time"}),
        )]),
        Reply::text(&refs).slow(Duration::from_millis(50)),
        Reply::text(&["The parent goes on."]),
    ];
    let (mock, _ws, mut agent, session, _editor) =
        session_in("extend", script, takes_subagents(), "ask", |_| {}).await;
    let pending = agent.start_prompt(&session, "start the job").await;
    let mut seen = Vec::new();
    let child = loop {
        let m = agent.next_message().await;
        seen.push(m.clone());
        let update = &m["params"]["update"];
        if update["sessionUpdate"] == "agent_message_chunk"
            && update["content"]["text"]
                .as_str()
                .unwrap_or("")
                .contains("w1")
        {
            break m["params"]["sessionId"].as_str().unwrap().to_string();
        }
    };
    assert_ne!(child, session);

    let refused = agent
        .request(
            "session/set_mode",
            json!({"sessionId": child, "modeId": "full-access"}),
        )
        .await;
    assert_error(&refused, -32600, "subagent");
    assert!(
        refused.to_string().contains(&session),
        "names the parent: {refused}"
    );

    agent
        .notify("session/cancel", json!({"sessionId": child}))
        .await;
    let answer = response(pending).await;
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    seen.extend(agent.drain());
    let requests = mock.requests();
    assert_eq!(requests.len(), 3, "the parent asked its model again");
    let told = tool_result(&requests[2], "t1");
    assert!(
        told.starts_with("The user stopped this subagent before it finished."),
        "{told}"
    );
    assert!(told.contains("w1"), "what it had written: {told}");
    let updates = subagent_updates(&seen);
    let idle = &updates.last().unwrap()["params"]["update"]["state"];
    assert_eq!(idle["state"], "idle");
    assert_eq!(idle["stopReason"], "cancelled");
    assert_eq!(final_status(&messages_on(&seen, &session), "t1"), "failed");
    agent.assert_valid();
}

/// An editor that did not advertise `subagents` gets none of it: the subagent's work shows
/// in its `task` call, and nothing carries another session's id.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_editor_without_subagents_sees_one_call_and_one_session() {
    let script = vec![
        Reply::tools(&[(
            "t1",
            "task",
            json!({"description": "Look", "prompt": "Say what you see"}),
        )]),
        Reply::text(&["I see a crate."]),
        Reply::text(&["Done."]),
    ];
    let (_mock, _ws, mut agent, session, _editor) =
        session_in("extend", script, json!({}), "ask", |_| {}).await;
    let (answer, messages) = agent.prompt(&session, "look").await;
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    for m in &messages {
        assert_eq!(m["params"]["sessionId"], session.as_str(), "{m}");
        let kind = m["params"]["update"]["sessionUpdate"]
            .as_str()
            .unwrap_or("");
        assert!(
            ![
                "subagent_update",
                "session_message",
                "session_message_chunk"
            ]
            .contains(&kind),
            "{m}"
        );
    }
    let shown = call_events(&messages, "t1");
    let last = shown
        .iter()
        .rev()
        .find_map(|e| e["content"][0]["content"]["text"].as_str())
        .unwrap();
    assert!(last.ends_with("I see a crate."), "{last}");
    agent.assert_valid();
}
