//! `_tandem/session/fork`: a new session with a copy of the history so far, which then goes
//! its own way while the original goes on unchanged.

use serde_json::{Value, json};

use crate::common::mock_model::content_text;
use crate::common::{Reply, assert_error, session_with};

/// The texts of a model request's messages, system prompt left out.
fn texts(body: &Value) -> Vec<String> {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .skip(1)
        .map(|m| content_text(&m["content"]))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fork_starts_with_the_history_and_then_diverges() {
    let script = vec![
        Reply::text(&["first answer"]),
        Reply::text(&["fork answer"]),
        Reply::text(&["original answer"]),
    ];
    let (mock, ws, mut agent, original) = session_with(script).await;
    agent.prompt(&original, "first question").await;
    agent
        .request_ok(
            "session/set_mode",
            json!({"sessionId": original, "modeId": "read-only"}),
        )
        .await;
    agent.drain();

    let forked = agent
        .request_ok("_tandem/session/fork", json!({"sessionId": original}))
        .await["sessionId"]
        .as_str()
        .unwrap()
        .to_string();
    assert_ne!(forked, original);
    // The new session is announced like a new one: its mode (kept from the source), its
    // options and its commands.
    let mut announced = Vec::new();
    while announced.len() < 3 {
        let m = agent.next_message().await;
        assert_eq!(m["params"]["sessionId"], forked.as_str(), "{m}");
        announced.push(m);
    }
    let kinds: Vec<&str> = announced
        .iter()
        .map(|m| m["params"]["update"]["sessionUpdate"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        [
            "current_mode_update",
            "config_option_update",
            "available_commands_update"
        ]
    );
    assert_eq!(
        announced[0]["params"]["update"]["currentModeId"],
        "read-only"
    );

    let (r, updates) = agent.prompt(&forked, "fork question").await;
    assert_eq!(r["result"]["stopReason"], "end_turn");
    assert_eq!(
        crate::common::joined(&updates, "agent_message_chunk"),
        "fork answer"
    );
    agent.prompt(&original, "original question").await;
    let requests = mock.requests();
    assert_eq!(
        texts(&requests[1].body),
        ["first question", "first answer", "fork question"]
    );
    let original_texts = texts(&requests[2].body);
    assert_eq!(
        original_texts[..2],
        ["first question", "first answer"],
        "the original never sees the fork's turn"
    );
    // The original started in another mode: the switch is told with the prompt where it
    // happened. The fork starts in read-only, so its system prompt says so from the start.
    assert!(
        original_texts[2].starts_with("original question\n")
            && original_texts[2].contains("switched the mode to read-only"),
        "{original_texts:?}"
    );
    assert!(
        requests[1].body["messages"][0]["content"]
            .as_str()
            .unwrap()
            .contains("Mode: read-only")
    );
    // Both are stored sessions of their own.
    let listed = agent.request_ok("session/list", json!({})).await;
    let ids: Vec<&str> = listed["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["sessionId"].as_str().unwrap())
        .collect();
    assert!(ids.contains(&forked.as_str()) && ids.contains(&original.as_str()));
    drop(ws);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forking_an_unknown_session_or_into_a_missing_directory_is_refused() {
    let (_mock, _ws, mut agent, session) = session_with(vec![]).await;
    let r = agent
        .request(
            "_tandem/session/fork",
            json!({"sessionId": "no-such-session"}),
        )
        .await;
    assert_eq!(r["error"]["code"], -32002, "{r}");
    let r = agent
        .request(
            "_tandem/session/fork",
            json!({"sessionId": session, "cwd": "/no/such/dir"}),
        )
        .await;
    assert_error(&r, -32602, "does not exist");
}

/// ACP's `session/fork` (unstable schema): advertised and served only when tandem is built
/// with `acp-session-fork`; the answer carries the new session's modes and options, and its
/// messages are checked against `schema.unstable.json`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acp_session_fork_is_served_exactly_when_built_with_it() {
    let script = vec![
        Reply::text(&["first answer"]),
        Reply::text(&["fork answer"]),
    ];
    let mock = crate::common::MockModel::start(script).await;
    let ws = crate::common::Workspace::new();
    let mut agent = crate::common::Agent::spawn(&ws.env(&mock), &[]);
    let init = agent.initialize().await;
    let fork_cap = &init["agentCapabilities"]["sessionCapabilities"]["fork"];
    let original = agent.new_session(&ws.project()).await["sessionId"]
        .as_str()
        .unwrap()
        .to_string();
    agent.prompt(&original, "first question").await;
    agent.drain();
    let r = agent
        .request(
            "session/fork",
            json!({"sessionId": original, "cwd": ws.project(), "mcpServers": []}),
        )
        .await;
    if !cfg!(feature = "acp-session-fork") {
        assert!(fork_cap.is_null(), "{init}");
        assert_eq!(r["error"]["code"], -32601, "{r}");
        agent.assert_valid();
        return;
    }
    assert_eq!(fork_cap, &json!({}), "{init}");
    let forked = r["result"]["sessionId"].as_str().unwrap().to_string();
    assert_ne!(forked, original);
    assert_eq!(r["result"]["modes"]["currentModeId"], "ask", "{r}");
    assert!(r["result"]["configOptions"].as_array().unwrap().len() >= 2);
    let commands = agent.next_message().await;
    assert_eq!(
        commands["params"]["update"]["sessionUpdate"],
        "available_commands_update"
    );
    let (r, updates) = agent.prompt(&forked, "fork question").await;
    assert_eq!(r["result"]["stopReason"], "end_turn");
    assert_eq!(
        crate::common::joined(&updates, "agent_message_chunk"),
        "fork answer"
    );
    assert_eq!(
        texts(&mock.requests()[1].body),
        ["first question", "first answer", "fork question"]
    );
    let r = agent
        .request(
            "session/fork",
            json!({"sessionId": "missing", "cwd": ws.project()}),
        )
        .await;
    assert_eq!(r["error"]["code"], -32002, "{r}");
    agent.assert_valid();
}
