//! One tandem process serving 50 sessions with prompts running at once against the mock
//! model: every stream complete, in order, and only in its own session.

use std::collections::HashMap;
use std::time::Duration;

use serde_json::Value;

use crate::common::mock_model::Reply;
use crate::common::{Agent, MockModel, Workspace, response};

const SESSIONS: usize = 50;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifty_sessions_prompting_at_once_keep_their_streams_apart() {
    let echo = Reply::Echo {
        pieces: 20,
        pause: Duration::from_millis(2),
    };
    let mock = MockModel::start(vec![echo; SESSIONS]).await;
    let ws = Workspace::new();
    let mut agent = Agent::spawn(&ws.env(&mock), &[]);
    let mut sessions = Vec::new();
    for _ in 0..SESSIONS {
        sessions.push(agent.open_session(&ws.project()).await);
    }
    agent.drain();
    // Each session's words are its own, long enough to come back in 20 pieces.
    let words = |i: usize| format!("session {i} says {}", format!("word-{i} ").repeat(12));
    let mut pending = Vec::new();
    for (i, id) in sessions.iter().enumerate() {
        pending.push((i, agent.start_prompt(id, &words(i)).await));
    }
    for (i, rx) in pending {
        let answer = response(rx).await;
        assert_eq!(
            answer["result"]["stopReason"], "end_turn",
            "session {i}: {answer}"
        );
    }
    // Every update of a prompt goes out before its answer, and all answers are in: the
    // updates are all here (any sent late would be missing and fail the check below).
    let mut text: HashMap<String, String> = HashMap::new();
    let mut chunks: HashMap<String, usize> = HashMap::new();
    for update in agent.drain() {
        let params = &update["params"];
        if params["update"]["sessionUpdate"] != "agent_message_chunk" {
            continue;
        }
        let session = params["sessionId"].as_str().unwrap().to_string();
        *chunks.entry(session.clone()).or_default() += 1;
        text.entry(session)
            .or_default()
            .push_str(params["update"]["content"]["text"].as_str().unwrap_or(""));
    }
    for (i, id) in sessions.iter().enumerate() {
        assert_eq!(
            text.get(id).map(String::as_str),
            Some(words(i).as_str()),
            "session {i}"
        );
        // Pieces that queue up while the machine is busy may be merged; never more updates
        // than pieces (streaming::paced_pieces_go_out_one_by_one checks the unmerged case).
        let len = words(i).chars().count();
        let pieces = len.div_ceil(len.div_ceil(20));
        assert!(
            (1..=pieces).contains(&chunks[id]),
            "session {i}: {} updates",
            chunks[id]
        );
    }
    assert_eq!(mock.requests().len(), SESSIONS);
    let models: Vec<Value> = mock
        .requests()
        .iter()
        .map(|r| r.body["model"].clone())
        .collect();
    assert!(models.iter().all(|m| m == "mock-model"));
    assert!(agent.is_running());
}
