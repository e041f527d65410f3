//! CodeCompanion "opens a session for every chat, used or not" (`/work/shared/clients/
//! README.md`; `Connection:_establish_session` sends `session/new` when a chat opens), and
//! closing the chat ends tandem with "self._state.handle:kill(\"sigterm\")". Sessions that
//! never got a prompt are not listed by `session/list`, and one closed with `session/close`
//! is not kept; a session that got one is listed and kept as before. One left open when
//! tandem stops stays on disk, unlisted, since acpx makes a session ahead (`acpx sessions
//! new`) and prompts it from its next process with `session/resume`.

use std::path::Path;

use serde_json::json;

use crate::common::mock_model::Reply;
use crate::common::{Agent, MockModel, Workspace, codecompanion, zed};

/// The session ids `session/list` answers with.
async fn listed(agent: &mut Agent) -> Vec<String> {
    let list = agent.request_ok("session/list", json!({})).await;
    list["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["sessionId"].as_str().unwrap().to_string())
        .collect()
}

/// The stored transcripts, by session id.
fn stored(home: &Path) -> Vec<String> {
    let mut ids: Vec<String> = std::fs::read_dir(home.join("data/sessions"))
        .map(|dir| {
            dir.filter_map(Result::ok)
                .filter_map(|e| {
                    e.file_name()
                        .to_str()?
                        .strip_suffix(".jsonl")
                        .map(String::from)
                })
                .collect()
        })
        .unwrap_or_default();
    ids.sort();
    ids
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn codecompanion_chats_never_used_are_not_listed() {
    let ws = Workspace::new();
    let mock = MockModel::start(vec![Reply::text(&["hi"])]).await;
    let mut agent = Agent::spawn(&ws.env(&mock), &[]);
    agent.initialize().await;
    let unused = codecompanion::new_session(&mut agent, &ws.project()).await;
    let used = codecompanion::new_session(&mut agent, &ws.project()).await;
    agent.prompt(&used, "hello").await;
    assert_eq!(listed(&mut agent).await, [used.as_str()]);
    // The unused one still works while open.
    agent.set_option(&unused, "mode", "read-only").await;
    codecompanion::disconnect(agent).await;

    let mut agent = Agent::spawn(&ws.env(&mock), &[]);
    agent.initialize().await;
    assert_eq!(listed(&mut agent).await, [used]);
}

/// acpx makes a session in one process (`acpx sessions new`) and prompts it from the next
/// (`session/resume`): a session without a prompt outlives the process that made it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_made_ahead_is_resumed_by_the_next_process() {
    let ws = Workspace::new();
    let mock = MockModel::start(vec![Reply::text(&["hi"])]).await;
    let mut agent = Agent::spawn(&ws.env(&mock), &[]);
    let ahead = agent.open_session(&ws.project()).await;
    agent.shutdown().await;
    let mut agent = Agent::spawn(&ws.env(&mock), &[]);
    agent.initialize().await;
    agent
        .request_ok(
            "session/resume",
            json!({"sessionId": ahead, "cwd": ws.project(), "mcpServers": []}),
        )
        .await;
    let (response, _) = agent.prompt(&ahead, "hello").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    assert_eq!(listed(&mut agent).await, [ahead]);
}

/// Zed sends "`session/close` when the last handle to a thread is dropped"
/// (`/work/shared/clients/README.md`): a thread opened and left without a prompt is not kept.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn closing_an_unused_session_forgets_it_and_a_used_one_is_kept() {
    let ws = Workspace::new();
    let mock = MockModel::start(vec![Reply::text(&["hi"])]).await;
    let folders = [ws.project()];
    let mut agent = Agent::spawn_with(&ws.env(&mock), &[], Some(zed::editor(&folders)));
    zed::initialize(&mut agent).await;
    let mut ids = Vec::new();
    for _ in 0..2 {
        let new = zed::new_session(&mut agent, &folders, json!([])).await;
        ids.push(new["sessionId"].as_str().unwrap().to_string());
    }
    let (unused, used) = (ids[0].clone(), ids[1].clone());
    agent.prompt(&used, "hello").await;
    for id in &ids {
        agent
            .request_ok("session/close", json!({"sessionId": id}))
            .await;
    }
    assert_eq!(stored(&ws.home()), [used.as_str()]);
    assert_eq!(listed(&mut agent).await, [used.as_str()]);
    let gone = agent
        .request(
            "session/load",
            json!({"sessionId": unused, "cwd": ws.project(), "mcpServers": []}),
        )
        .await;
    assert_eq!(gone["error"]["code"], -32002, "{gone}");
    zed::load_session(&mut agent, &used, &folders, json!([])).await;
    // Deleting an open session that never got a prompt works as for any other.
    let fresh = zed::new_session(&mut agent, &folders, json!([])).await;
    agent
        .request_ok("session/delete", json!({"sessionId": fresh["sessionId"]}))
        .await;
    assert_eq!(stored(&ws.home()), [used]);
}
