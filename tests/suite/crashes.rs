//! tandem killed over and over, each time with the transcript's last line torn as a kill
//! mid-write leaves it: after every restart, every record the new process writes loads.
//! Before torn tails were repaired, the first record after a restart was glued onto the
//! torn line and both were skipped, so the user's next prompt vanished from history.
//! The tear here is made by the test, after the kill; `kills_mid_write.rs` has tandem die
//! inside its own `write`.

use std::time::Duration;

use serde_json::Value;

use crate::common::dice::Dice;
use crate::common::{Agent, MockModel, Reply, Workspace};

const KILLS: usize = 200;

/// Initializes `agent` and resumes `session` in it.
async fn resume(agent: &mut Agent, ws: &Workspace, session: &str) {
    agent.initialize().await;
    agent
        .request_ok(
            "session/resume",
            serde_json::json!({"sessionId": session, "cwd": ws.project(), "mcpServers": []}),
        )
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_record_is_lost_after_two_hundred_torn_kills() {
    let (mut dice, seed) = Dice::from_env("TANDEM_CRASH_SEED");
    let mock = MockModel::start(Vec::new()).await;
    let ws = Workspace::new();
    let mut session = String::new();
    let mut torn = 0;
    for i in 0..KILLS {
        mock.push(Reply::text(&[&format!("answer-{i}")]));
        let mut agent = Agent::spawn(&ws.env(&mock), &[]);
        if i == 0 {
            session = agent.open_session(&ws.project()).await;
        } else {
            resume(&mut agent, &ws, &session).await;
        }
        let (response, _) = agent.prompt(&session, &format!("prompt-{i}")).await;
        assert_eq!(
            response["result"]["stopReason"], "end_turn",
            "seed {seed}, kill {i}: {response}"
        );
        // Killed at a random moment after its answer, then its last line torn at a random
        // offset, as a kill in the middle of that line's write would leave it.
        tokio::time::sleep(Duration::from_millis(dice.below(5))).await;
        agent.kill().await;
        let path = ws.home().join(format!("data/sessions/{session}.jsonl"));
        let bytes = std::fs::read(&path).unwrap();
        let body = &bytes[..bytes.len() - 1];
        let last_start = body
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |at| at + 1);
        let cut = last_start as u64 + 1 + dice.below((bytes.len() - last_start - 2) as u64);
        std::fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .unwrap()
            .set_len(cut)
            .unwrap();
        torn += 1;
    }
    mock.push(Reply::text(&["done"]));
    let mut agent = Agent::spawn(&ws.env(&mock), &[]);
    resume(&mut agent, &ws, &session).await;
    let (response, _) = agent.prompt(&session, "last").await;
    assert_eq!(response["result"]["stopReason"], "end_turn");
    // Every prompt reached the model's history: none was glued to a torn line.
    let last = mock.requests().last().unwrap().clone();
    let prompts: Vec<String> = last.body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| crate::common::mock_model::content_text(&m["content"]))
        .collect();
    let want: Vec<String> = (0..KILLS)
        .map(|i| format!("prompt-{i}"))
        .chain(["last".to_string()])
        .collect();
    assert_eq!(prompts, want, "seed {seed}");
    // Every line of the transcript is a record; the torn tails are in the side file.
    let path = ws.home().join(format!("data/sessions/{session}.jsonl"));
    let text = std::fs::read_to_string(&path).unwrap();
    for line in text.lines() {
        assert!(
            serde_json::from_str::<Value>(line).is_ok(),
            "seed {seed}: {line}"
        );
    }
    let side =
        std::fs::read_to_string(path.with_file_name(format!("{session}.jsonl.torn"))).unwrap();
    assert_eq!(side.lines().count(), torn, "seed {seed}");
}
