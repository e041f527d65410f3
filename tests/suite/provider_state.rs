//! Reasoning and signatures kept across tool calls: what a provider sent with an answer goes
//! back with that answer, to that provider and model only, through several tool rounds, a
//! reload, and a model switch, against a mock that refuses a history without it the way the
//! provider does.

use serde_json::{Value, json};

use crate::common::contract::{Contract, Issued, deepseek_round, gemini_round, openrouter_round};
use crate::common::{Agent, Reply, tool_session};

/// The assistant messages of a request, in order.
fn assistants(body: &Value) -> Vec<Value> {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "assistant")
        .cloned()
        .collect()
}

fn read(id: &str, path: &str) -> (&'static str, &'static str, Value) {
    let id: &'static str = Box::leak(id.to_string().into_boxed_str());
    (id, "read_file", json!({ "path": path }))
}

#[test]
fn the_mock_refuses_what_each_provider_refuses() {
    let history =
        |message: Value| json!({"messages": [{"role": "user", "content": "go"}, message]});
    let bare = json!({"role": "assistant", "content": null, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "read_file", "arguments": "{}"}}]});

    let mut issued = Issued::default();
    issued.note(&deepseek_round("think", &[read("c1", "a")]));
    let (status, body) = issued
        .check(Contract::DeepSeek, &history(bare.clone()))
        .unwrap();
    assert_eq!(status, 400);
    assert!(body.contains("The reasoning_content in the thinking mode must be passed back"));
    let mut kept = bare.clone();
    kept["reasoning_content"] = json!("think");
    assert!(issued.check(Contract::DeepSeek, &history(kept)).is_none());

    let mut issued = Issued::default();
    issued.note(&gemini_round(&[read("c1", "a")]));
    let (_, body) = issued
        .check(Contract::Gemini, &history(bare.clone()))
        .unwrap();
    assert!(
        body.contains("Function call is missing a thought_signature"),
        "{body}"
    );

    let mut issued = Issued::default();
    issued.note(&openrouter_round("think", &[read("c1", "a")]));
    assert!(issued.check(Contract::OpenRouter, &history(bare)).is_some());
}

/// Runs a prompt whose answers are `rounds` then a closing text, under `contract`; returns
/// the requests the mock saw.
async fn rounds(
    contract: Contract,
    rounds: Vec<Reply>,
) -> (
    crate::common::MockModel,
    crate::common::Workspace,
    Agent,
    String,
) {
    let n = rounds.len();
    let mut script = rounds;
    script.push(Reply::text(&["done"]));
    let (mock, ws, mut agent, session, _editor) = tool_session(script, json!({}), "ask").await;
    mock.enforce(contract);
    let (response, _) = agent.prompt(&session, "look at the project").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    let requests = mock.requests();
    assert_eq!(
        requests.len(),
        n + 1,
        "one request per round and one to finish"
    );
    agent.assert_valid();
    (mock, ws, agent, session)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deepseek_thinking_gets_its_reasoning_back_through_every_tool_round() {
    let (mock, ws, agent, session) = rounds(
        Contract::DeepSeek,
        vec![
            deepseek_round("First the readme.", &[read("r1", "README.md")]),
            deepseek_round(
                "Now the sources.",
                &[read("r2", "src/lib.rs"), read("r3", "src/main.rs")],
            ),
            deepseek_round("One more look.", &[read("r4", "README.md")]),
        ],
    )
    .await;
    let last = mock.requests().pop().unwrap();
    let said: Vec<Value> = assistants(&last.body)
        .iter()
        .map(|m| m["reasoning_content"].clone())
        .collect();
    assert_eq!(
        said,
        [
            json!("First the readme."),
            json!("Now the sources."),
            json!("One more look.")
        ]
    );

    // A reload in a new process continues with the reasoning still attached.
    drop(agent);
    mock.push(deepseek_round("Again.", &[read("r5", "README.md")]));
    mock.push(Reply::text(&["ok"]));
    let mut agent = Agent::spawn(&ws.env(&mock), &[]);
    agent.initialize().await;
    agent
        .open_stored("session/load", &session, &ws.project())
        .await;
    let (response, _) = agent.prompt(&session, "and again").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    let last = mock.requests().pop().unwrap();
    let kept = assistants(&last.body);
    assert_eq!(kept[0]["reasoning_content"], "First the readme.");
    assert_eq!(kept.last().unwrap()["reasoning_content"], "Again.");
    agent.assert_valid();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gemini_thought_signatures_come_back_on_their_calls() {
    let (mock, _ws, _agent, _session) = rounds(
        Contract::Gemini,
        vec![
            gemini_round(&[read("g1", "README.md"), read("g2", "src/lib.rs")]),
            gemini_round(&[read("g3", "src/main.rs")]),
            gemini_round(&[read("g4", "README.md")]),
        ],
    )
    .await;
    let last = mock.requests().pop().unwrap();
    let calls: Vec<Value> = assistants(&last.body)
        .iter()
        .flat_map(|m| m["tool_calls"].as_array().unwrap().clone())
        .collect();
    assert_eq!(calls.len(), 4);
    assert_eq!(
        calls[0]["extra_content"]["google"]["thought_signature"],
        "sig-g1-Cq0BAXLI"
    );
    assert!(
        calls[1].get("extra_content").is_none(),
        "only what was sent comes back"
    );
    assert_eq!(
        calls[3]["extra_content"]["google"]["thought_signature"],
        "sig-g4-Cq0BAXLI"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn openrouter_reasoning_details_come_back_unchanged() {
    let (mock, _ws, _agent, _session) = rounds(
        Contract::OpenRouter,
        vec![
            openrouter_round("Reading the readme first.", &[read("o1", "README.md")]),
            openrouter_round("Then the library.", &[read("o2", "src/lib.rs")]),
        ],
    )
    .await;
    let last = mock.requests().pop().unwrap();
    let first = &assistants(&last.body)[0];
    assert_eq!(first["reasoning"], "Reading the readme first.");
    assert_eq!(
        first["reasoning_details"],
        json!([
            {"type": "reasoning.text", "index": 0, "format": "anthropic-claude-v1",
             "text": "Reading the readme first.", "signature": "EqQBCkgIBhABGAIiQ"},
            {"type": "reasoning.encrypted", "index": 1, "format": "anthropic-claude-v1",
             "data": "RXJyb3IgZGVjcnlwdGluZw=="}
        ])
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_model_is_not_sent_the_first_ones_state() {
    let script = vec![
        deepseek_round("Mine alone.", &[read("d1", "README.md")]),
        Reply::text(&["read it"]),
        Reply::text(&["hello from the other"]),
    ];
    let mut env_models = Vec::new();
    let (mock, _ws, mut agent, session, _editor) =
        crate::common::session_with_env("small", script, json!({}), "ask", |_| {
            env_models.push((
                "TANDEM_MODELS".to_string(),
                "mock-model,other-model".to_string(),
            ));
            env_models.clone()
        })
        .await;
    let (response, _) = agent.prompt(&session, "read").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    let switched = agent.set_option(&session, "model", "other-model").await;
    assert!(switched.get("result").is_some(), "{switched}");
    let (response, _) = agent.prompt(&session, "hi").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    let last = mock.requests().pop().unwrap();
    assert_eq!(last.body["model"], "other-model");
    let first = &assistants(&last.body)[0];
    assert!(first.get("reasoning_content").is_none(), "{first}");
    assert_eq!(first["tool_calls"][0]["id"], "d1", "the call itself stays");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_version_1_transcript_loads_and_continues() {
    let script = vec![
        deepseek_round("Check again.", &[read("n1", "README.md")]),
        Reply::text(&["Still milk."]),
    ];
    let (mock, ws, mut agent, _session, _editor) = tool_session(script, json!({}), "ask").await;
    let stored = ws.home().join("data/sessions/v1-tools.jsonl");
    std::fs::copy(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/transcripts/v1-tools.jsonl"),
        &stored,
    )
    .unwrap();
    let (_, updates) = agent
        .open_stored("session/load", "v1-tools", &ws.project())
        .await;
    assert_eq!(
        crate::common::joined(&updates, "agent_thought_chunk"),
        "I should read the readme first.It lists one item."
    );
    assert_eq!(
        crate::common::joined(&updates, "agent_message_chunk"),
        "Let me look.The notes say: buy milk."
    );
    assert_eq!(
        crate::common::of_kind(&updates, "tool_call")[0]["toolCallId"],
        "call_a"
    );

    let (response, _) = agent.prompt("v1-tools", "and now?").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    let first = &mock.requests()[0].body;
    let messages = first["messages"].as_array().unwrap();
    let roles: Vec<&str> = messages
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(
        roles,
        ["system", "user", "assistant", "tool", "assistant", "user"]
    );
    assert_eq!(messages[2]["tool_calls"][0]["id"], "call_a");
    assert_eq!(messages[3]["content"], "# Notes\nbuy milk\n");
    assert!(
        messages[2].get("reasoning_content").is_none(),
        "version 1 kept no provider state, so none goes back"
    );

    // The file now holds both versions; it loads again, with the new turn's state.
    let text = std::fs::read_to_string(&stored).unwrap();
    assert!(
        text.contains("\"v\":1") && text.contains("\"v\":2"),
        "{text}"
    );
    drop(agent);
    mock.push(Reply::text(&["ok"]));
    let mut agent = Agent::spawn(&ws.env(&mock), &[]);
    agent.initialize().await;
    agent
        .open_stored("session/load", "v1-tools", &ws.project())
        .await;
    let (response, _) = agent.prompt("v1-tools", "once more").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    let last = mock.requests().pop().unwrap();
    let kept = assistants(&last.body);
    assert_eq!(kept[2]["reasoning_content"], "Check again.");
    agent.assert_valid();
}
