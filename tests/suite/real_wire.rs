//! The Responses and Messages APIs against real servers: llama-server serves `/v1/responses`
//! and `/v1/messages` beside chat completions, and the LiteLLM proxy in front of it serves
//! both too. A plain turn and a tool turn over each; assertions are about the protocol, never
//! about the tiny model's wording.

use serde_json::{Value, json};

use crate::common::editor::FakeEditor;
use crate::common::real_server::{Kind, PATIENCE, Server, Turn, not_for, turn};
use crate::common::{Agent, Workspace, joined, of_kind};

const WHY: &str = "its server speaks chat completions only";

/// An agent on `server` speaking `api`, its editor reading and writing files, with a session
/// in the turn's project.
async fn agent(
    ws: &Workspace,
    turn: &Turn,
    server: &Server,
    api: &str,
) -> (Agent, std::sync::Arc<FakeEditor>, String) {
    let mut env = super::real_model::env(ws, server);
    env.push(("TANDEM_API".into(), api.into()));
    let editor = FakeEditor::new();
    let mut agent = Agent::spawn_with(&env, &[], Some(editor.clone())).patient(PATIENCE);
    agent
        .initialize_with(json!({"fs": {"readTextFile": true, "writeTextFile": true}}))
        .await;
    let session = agent.new_session(&turn.project()).await["sessionId"]
        .as_str()
        .unwrap()
        .to_string();
    (agent, editor, session)
}

/// The record types of `session`'s transcript, in order.
fn recorded(ws: &Workspace, session: &str) -> Vec<String> {
    let path = ws
        .home()
        .join("data/sessions")
        .join(format!("{session}.jsonl"));
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["type"]
                .as_str()
                .unwrap_or("")
                .to_string()
        })
        .collect()
}

/// A plain answer streams in pieces over `api`, and the server's usage is counted.
async fn plain_turn(api: &str) {
    if not_for(&[Kind::LlamaCppPython], WHY) {
        return;
    }
    let turn = turn().await;
    let server = turn.server().await;
    let ws = Workspace::new();
    let (mut agent, _editor, session) = agent(&ws, &turn, &server, api).await;
    let (answer, updates) = agent
        .prompt(&session, "Say hello in one short sentence.")
        .await;
    let reason = answer["result"]["stopReason"].as_str().unwrap_or_default();
    assert!(matches!(reason, "end_turn" | "max_tokens"), "{answer}");
    let pieces = of_kind(&updates, "agent_message_chunk").len();
    assert!(pieces >= 2, "streamed, not one block: {updates:?}");
    let said = joined(&updates, "agent_message_chunk");
    assert!(!said.trim().is_empty());
    let usage = agent
        .request_ok("_tandem/usage", json!({"sessionId": session}))
        .await;
    // An answer stopped for repeating itself is dropped before the server's usage comes;
    // any other answer brings the server's count.
    if !said.contains("The model kept repeating") {
        let input = usage["inputTokens"].as_u64().unwrap();
        assert!(input > 50, "{usage} / {answer} / {said}");
    }
    agent.assert_valid();
}

/// The model's read goes through the editor over `api`, and its result goes back in a
/// second request that the server accepts.
async fn tool_turn(api: &str) {
    if not_for(&[Kind::LlamaCppPython], WHY) {
        return;
    }
    let turn = turn().await;
    let server = turn.server().await;
    let ws = Workspace::new();
    turn.write("notes.txt", "buy eggs\n");
    let (mut agent, editor, session) = agent(&ws, &turn, &server, api).await;
    let (answer, updates) = agent.prompt(&session, "Read the file notes.txt").await;
    assert!(answer.get("result").is_some(), "{answer}");
    assert!(
        !editor.params_of("fs/read_text_file").is_empty(),
        "the model's read_file call reached the editor: {:?} / {updates:?}",
        editor.methods()
    );
    let kinds = recorded(&ws, &session);
    let result_at = kinds
        .iter()
        .position(|k| k == "tool_result")
        .expect("a tool result");
    assert!(
        kinds[result_at..].iter().any(|k| k == "assistant"),
        "the server took the result and answered: {kinds:?}"
    );
    agent.assert_valid();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs llama.cpp and SmolLM2: tests/real-model/setup.sh, then cargo test --locked --all-features --test all -- --ignored suite::real"]
async fn responses_plain_turn() {
    plain_turn("responses").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs llama.cpp and SmolLM2: tests/real-model/setup.sh, then cargo test --locked --all-features --test all -- --ignored suite::real"]
async fn responses_tool_turn() {
    tool_turn("responses").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs llama.cpp and SmolLM2: tests/real-model/setup.sh, then cargo test --locked --all-features --test all -- --ignored suite::real"]
async fn messages_plain_turn() {
    plain_turn("anthropic-messages").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs llama.cpp and SmolLM2: tests/real-model/setup.sh, then cargo test --locked --all-features --test all -- --ignored suite::real"]
async fn messages_tool_turn() {
    tool_turn("anthropic-messages").await;
}
