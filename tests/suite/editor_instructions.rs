//! ACP's `systemPrompt`: an editor's own instructions for a session, added after tandem's
//! (`append`, the one mode tandem advertises); anything tandem cannot apply is refused with
//! `-32602` before a session opens.

use serde_json::{Value, json};

use crate::common::mock_model::Reply;
use crate::common::{Agent, MockModel, Workspace, assert_error, path_str};

fn system_prompt(text: &str) -> Value {
    json!({"mode": "append", "content": [{"type": "text", "text": text}]})
}

async fn started() -> (MockModel, Workspace, Agent) {
    let mock = MockModel::start(vec![Reply::text(&["ok"]), Reply::text(&["ok"])]).await;
    let ws = Workspace::new();
    let mut agent = Agent::spawn(&ws.env(&mock), &[]);
    let init = agent.initialize().await;
    assert_eq!(
        init["agentCapabilities"]["sessionCapabilities"]["systemPrompt"],
        json!({}),
        "append only: {init}"
    );
    (mock, ws, agent)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_editors_system_prompt_follows_tandems_own_instructions() {
    let (mock, ws, mut agent) = started().await;
    let opened = agent
        .request_ok(
            "session/new",
            json!({"cwd": path_str(&ws.project()), "mcpServers": [],
                   "systemPrompt": system_prompt("Answer in French.")}),
        )
        .await;
    let id = opened["sessionId"].as_str().unwrap().to_string();
    agent.prompt(&id, "hello").await;
    let system = mock.requests()[0].system_prompt();
    let at = system
        .find("Answer in French.")
        .expect("the editor's words");
    assert!(
        system.find("You are tandem").is_some_and(|own| own < at),
        "after tandem's own: {system}"
    );
    assert!(agent.shutdown().await.0.success());

    // A load takes the prompt it is sent, and one without it has none.
    let mut again = Agent::spawn(&ws.env(&mock), &[]);
    again.initialize().await;
    let params = json!({"sessionId": id, "cwd": path_str(&ws.project()), "mcpServers": []});
    again.open_stored_with("session/load", params).await;
    mock.push(Reply::text(&["ok"]));
    again.prompt(&id, "again").await;
    let last = mock.requests().last().unwrap().system_prompt();
    assert!(!last.contains("Answer in French."), "{last}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_system_prompt_tandem_cannot_apply_is_refused_before_a_session_opens() {
    let (_mock, ws, mut agent) = started().await;
    let cwd = path_str(&ws.project());
    for bad in [
        json!({"mode": "override", "content": [{"type": "text", "text": "x"}]}),
        json!({"mode": "_custom", "content": [{"type": "text", "text": "x"}]}),
        json!({"mode": "append", "content": []}),
        json!({"mode": "append", "content": [{"type": "image", "data": "AAAA", "mimeType": "image/png"}]}),
    ] {
        let answer = agent
            .request(
                "session/new",
                json!({"cwd": cwd, "mcpServers": [], "systemPrompt": bad}),
            )
            .await;
        assert_error(&answer, -32602, "systemPrompt");
    }
    let listed = agent.request_ok("session/list", json!({})).await;
    assert_eq!(listed["sessions"], json!([]), "nothing was opened");
    // The connection goes on.
    let opened = agent
        .request_ok("session/new", json!({"cwd": cwd, "mcpServers": []}))
        .await;
    assert!(opened["sessionId"].is_string());
}
