//! A full disk loses nothing the user saw finish: with `TANDEM_HOME` on a tiny tmpfs that is
//! filled up mid-session, every prompt is still answered, the user is told the session
//! cannot be written (a notice on the turn, `unsaved` in `_tandem/status`), and once space
//! comes back the records kept in memory are written in order, with no half record for the
//! next one to join: a second process loads every acknowledged turn.
//!
//! Mounting needs root: CI runs as root and sets `TANDEM_TMPFS_REQUIRED=1`; elsewhere the
//! test says why it did not run.

use std::process::Command;

use serde_json::{Value, json};

use crate::common::tmpfs::Tiny;
use crate::common::{Agent, MockModel, Reply, Workspace, joined, path_str};

/// A prompt of more than a page.
fn long(n: &str) -> String {
    format!("prompt {n}: {}", "words ".repeat(1000))
}

/// A mock answering `replies`, an agent whose data directory is on `tiny`, and a session
/// that has had "prompt one" answered.
async fn first_turn(
    ws: &Workspace,
    tiny: &Tiny,
    replies: Vec<Reply>,
) -> (MockModel, Vec<(String, String)>, Agent, String) {
    let mock = MockModel::start(replies).await;
    let mut env = ws.env(&mock);
    env.push(("TANDEM_HOME".into(), path_str(&tiny.0.join("data"))));
    let mut agent = Agent::spawn(&env, &[]);
    let session = agent.open_session(&ws.project()).await;
    let (response, _) = agent.prompt(&session, "prompt one").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    (mock, env, agent, session)
}

async fn status(agent: &mut Agent) -> Value {
    agent.request_ok("_tandem/status", json!({})).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_disk_keeps_every_acknowledged_turn_and_writes_it_when_space_returns() {
    let ws = Workspace::new();
    let Some(tiny) = Tiny::mount(&ws.home().join("tiny"), "256k") else {
        return;
    };
    let answers = [
        "Answer one.",
        "Answer two.",
        "Answer three.",
        "Answer four.",
        "Answer five.",
    ];
    let replies = answers.iter().map(|a| Reply::text(&[a])).collect();
    let (_mock, env, mut agent, session) = first_turn(&ws, &tiny, replies).await;

    let filler = tiny.fill();
    for n in ["two", "three", "four"] {
        // Longer than a page: the file's last page has no room for it.
        let (response, updates) = agent.prompt(&session, &long(n)).await;
        assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
        let said = joined(&updates, "agent_message_chunk");
        assert!(
            said.contains("cannot write this session to disk")
                && said.contains("No space left on device"),
            "{said}"
        );
    }
    let unsaved = &status(&mut agent).await["sessions"][0]["unsaved"];
    assert!(unsaved["records"].as_u64().unwrap() >= 6, "{unsaved}");
    // An export meanwhile holds the turns still waiting for the disk.
    let exported = agent
        .request_ok(
            "_tandem/session/export",
            json!({"sessionId": session, "format": "json"}),
        )
        .await;
    let content = exported["content"].as_str().unwrap();
    assert!(content.contains("prompt four") && content.contains("Answer four."));

    // Space comes back: the next record takes the backlog with it, in order.
    std::fs::remove_file(&filler).unwrap();
    let (response, updates) = agent.prompt(&session, "prompt five").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    assert!(!joined(&updates, "agent_message_chunk").contains("cannot write"));
    assert!(
        status(&mut agent).await["sessions"][0]
            .get("unsaved")
            .is_none()
    );
    let (code, _) = agent.shutdown().await;
    assert!(code.success());

    // Every line is one whole record, and a second process loads every turn, in order.
    let file = tiny.0.join(format!("data/sessions/{session}.jsonl"));
    let text = std::fs::read_to_string(&file).unwrap();
    for line in text.lines() {
        serde_json::from_str::<Value>(line).unwrap_or_else(|e| panic!("{e}: {line}"));
    }
    let mut again = Agent::spawn(&env, &[]);
    again.initialize().await;
    let (_, replayed) = again
        .open_stored("session/load", &session, &ws.project())
        .await;
    let prompts = joined(&replayed, "user_message_chunk");
    let sent = [
        "prompt one".to_string(),
        long("two"),
        long("three"),
        long("four"),
    ];
    assert_eq!(prompts, format!("{}prompt five", sent.concat()));
    let said = joined(&replayed, "agent_message_chunk");
    let mut at = 0;
    for answer in answers {
        at += said[at..]
            .find(answer)
            .unwrap_or_else(|| panic!("{answer} missing or out of order in {said}"));
    }
    again.assert_valid();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_only_data_directory_still_loads_a_session() {
    let ws = Workspace::new();
    let Some(tiny) = Tiny::mount(&ws.home().join("tiny"), "256k") else {
        return;
    };
    let replies = vec![Reply::text(&["Written."]), Reply::text(&["Read back."])];
    let (_mock, env, agent, session) = first_turn(&ws, &tiny, replies).await;
    let (code, _) = agent.shutdown().await;
    assert!(code.success());

    let remounted = Command::new("mount")
        .args(["-o", "remount,ro"])
        .arg(&tiny.0)
        .status()
        .unwrap();
    assert!(remounted.success());
    let mut again = Agent::spawn(&env, &[]);
    again.initialize().await;
    let (_, replayed) = again
        .open_stored("session/load", &session, &ws.project())
        .await;
    assert_eq!(joined(&replayed, "user_message_chunk"), "prompt one");
    assert_eq!(joined(&replayed, "agent_message_chunk"), "Written.");
    // It can go on, told that nothing of it can be written.
    let (response, updates) = again.prompt(&session, "prompt two").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    let said = joined(&updates, "agent_message_chunk");
    assert!(
        said.contains("cannot write this session to disk") && said.contains("Read-only"),
        "{said}"
    );
    again.assert_valid();
}
