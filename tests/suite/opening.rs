//! Sessions open off the dispatch loop: an editor that sends a prompt, a cancel or a mode
//! change for a session it is still loading, without waiting for the load's answer, gets
//! them handled after the load, in the order it sent them; the replay still comes before the
//! load's answer.

use std::time::Duration;

use serde_json::{Value, json};

use crate::common::mock_model::Reply;
use crate::common::{Agent, MockModel, Workspace, response};

/// A stored session with a few exchanges, made by a first process; returns its id.
async fn stored_session(mock: &MockModel, ws: &Workspace) -> String {
    let mut agent = Agent::spawn(&ws.env(mock), &[]);
    let session = agent.open_session(&ws.project()).await;
    for n in 0..3 {
        let (answer, _) = agent.prompt(&session, &format!("question {n}")).await;
        assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    }
    agent.shutdown().await;
    session
}

/// A stored session of three exchanges whose next model reply is `next`, and a new process
/// that has just been sent `session/load` for it (not yet answered): the mock, the workspace,
/// the agent, the session id, and the load's request id and answer.
async fn loading(
    next: Reply,
) -> (
    MockModel,
    Workspace,
    Agent,
    String,
    u64,
    tokio::sync::oneshot::Receiver<Value>,
) {
    let mut script: Vec<Reply> = (0..3)
        .map(|n| Reply::text(&[&format!("answer {n}")]))
        .collect();
    script.push(next);
    let mock = MockModel::start(script).await;
    let ws = Workspace::new();
    let session = stored_session(&mock, &ws).await;
    let mut agent = Agent::spawn(&ws.env(&mock), &[]);
    agent.initialize().await;
    let params = json!({"sessionId": session, "cwd": ws.project(), "mcpServers": []});
    let (load_id, loaded) = agent.start_request("session/load", params).await;
    (mock, ws, agent, session, load_id, loaded)
}

/// The position of the first stdout line that matches.
fn position(lines: &[Value], what: impl Fn(&Value) -> bool) -> usize {
    lines
        .iter()
        .position(what)
        .unwrap_or_else(|| panic!("not found in {lines:#?}"))
}

fn stdout(agent: &Agent) -> Vec<Value> {
    agent
        .stdout_lines()
        .iter()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prompt_sent_right_after_load_waits_for_it_and_the_replay_comes_first() {
    let (mock, _ws, mut agent, session, load_id, loaded) =
        loading(Reply::text(&["after the load"])).await;
    let prompted = agent.start_prompt(&session, "and now?").await;
    let loaded = response(loaded).await;
    assert!(loaded.get("error").is_none(), "{loaded}");
    let answer = response(prompted).await;
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");

    let lines = stdout(&agent);
    let load_answer = position(&lines, |m| m["id"] == load_id);
    let replayed = position(&lines, |m| {
        m["params"]["update"]["content"]["text"] == "answer 2"
    });
    let streamed = position(&lines, |m| {
        m["params"]["update"]["content"]["text"] == "after the load"
    });
    assert!(replayed < load_answer, "the replay precedes the answer");
    assert!(load_answer < streamed, "the prompt runs after the load");
    // The prompt was answered with the whole conversation behind it.
    let last = mock.requests().last().unwrap().body.clone();
    let messages = last["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 1 + 3 * 2 + 1, "{last}");
    agent.assert_valid();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancel_sent_during_a_load_reaches_the_prompt_sent_before_it() {
    // Without the cancel, this prompt would wait far longer than the test may.
    let stall = Reply::Stall(
        Duration::from_secs(120),
        Box::new(Reply::text(&["too late"])),
    );
    let (_mock, _ws, mut agent, session, _, loaded) = loading(stall).await;
    let prompted = agent.start_prompt(&session, "a long one").await;
    let mode = json!({"sessionId": session, "modeId": "read-only"});
    let (_, mode_set) = agent.start_request("session/set_mode", mode).await;
    agent
        .notify("session/cancel", json!({"sessionId": session}))
        .await;
    assert!(response(loaded).await.get("error").is_none());
    let answer = response(prompted).await;
    assert_eq!(answer["result"]["stopReason"], "cancelled", "{answer}");
    let mode_set = response(mode_set).await;
    assert!(mode_set.get("error").is_none(), "{mode_set}");
    let status = agent.request_ok("_tandem/status", json!({})).await;
    assert_eq!(status["sessions"][0]["mode"], "read-only", "{status}");
    assert!(agent.is_running());
    agent.assert_valid();
}

/// A long session loads in a task of its own: a request that needs no session (here
/// `session/list`) is answered while the load is still replaying.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_dispatch_loop_answers_while_a_long_session_loads() {
    let mock = MockModel::start(Vec::new()).await;
    let ws = Workspace::new();
    let sessions = ws.home().join("data").join("sessions");
    std::fs::create_dir_all(&sessions).unwrap();
    let at = "2026-01-01T00:00:00.000Z";
    let mut lines =
        vec![json!({"v": 1, "at": at, "type": "meta", "id": "long", "cwd": ws.project()})];
    for n in 0..10_000 {
        let question = format!("question {n}");
        lines.push(json!({"v": 1, "at": at, "type": "user", "parts": [{"text": question}]}));
        let answer = format!("answer {n}");
        lines.push(json!({"v": 1, "at": at, "type": "assistant", "text": answer}));
    }
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(sessions.join("long.jsonl"), text).unwrap();

    let mut agent = Agent::spawn(&ws.env(&mock), &[]);
    agent.initialize().await;
    let params = json!({"sessionId": "long", "cwd": ws.project(), "mcpServers": []});
    let (load_id, loaded) = agent.start_request("session/load", params).await;
    let (list_id, listed) = agent.start_request("session/list", json!({})).await;
    assert!(response(listed).await.get("error").is_none());
    assert!(response(loaded).await.get("error").is_none());
    let lines = stdout(&agent);
    let list_answer = position(&lines, |m| m["id"] == list_id);
    let load_answer = position(&lines, |m| m["id"] == load_id);
    let last_replayed = position(&lines, |m| {
        m["params"]["update"]["content"]["text"] == "answer 9999"
    });
    assert!(
        list_answer < last_replayed && last_replayed < load_answer,
        "list {list_answer}, last replayed {last_replayed}, load {load_answer}"
    );
}
