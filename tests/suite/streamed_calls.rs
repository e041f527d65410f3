//! Calls shown as they stream: the editor sees a call (pending, titled by its tool's label)
//! as soon as its name arrives, then its arguments and diff when it is complete; a cancel
//! while the call is still being written ends the turn and records nothing half-made. Over
//! chat completions and Anthropic's Messages API alike.

use serde_json::{Value, json};

use crate::common::gate::Gate;
use crate::common::mock_model::{Piece, Reply, delta, finish, usage};
use crate::common::{Agent, response, session_with_env};

/// A `write_file` call whose arguments stop at `gate` halfway, then an answer.
fn gated_write(gate: &Gate) -> Vec<Reply> {
    let args =
        json!({"path": "notes.md", "content": "# Notes\nwritten while streaming\n"}).to_string();
    let (a, b) = args.split_at(args.len() / 2);
    let call = |extra: Value| delta(json!({"tool_calls": [extra]}));
    let pieces = vec![
        Piece::Data(
            call(json!({"index": 0, "id": "w1", "type": "function",
            "function": {"name": "write_file", "arguments": a}}))
            .to_string(),
        ),
        Piece::Gate(gate.clone()),
        Piece::Data(call(json!({"index": 0, "function": {"arguments": b}})).to_string()),
        Piece::Data(finish("tool_calls").to_string()),
        Piece::Data(usage(200, 20).to_string()),
    ];
    vec![
        Reply::Stream {
            pieces,
            end: crate::common::mock_model::End::Done,
        },
        Reply::text(&["written"]),
    ]
}

async fn start(
    api: &str,
    script: Vec<Reply>,
) -> (
    crate::common::MockModel,
    crate::common::Workspace,
    Agent,
    String,
) {
    let vars = vec![("TANDEM_API".to_string(), api.to_string())];
    let (mock, ws, agent, session, _editor) =
        session_with_env("small", script, json!({}), "accept-edits", |_| vars).await;
    (mock, ws, agent, session)
}

/// Reads the agent's messages until a `tool_call` arrives; returns it.
async fn first_call(agent: &mut Agent) -> Value {
    loop {
        let message = agent.next_message().await;
        if message["params"]["update"]["sessionUpdate"] == "tool_call" {
            return message["params"]["update"].clone();
        }
    }
}

async fn shown_before_its_arguments_are_complete(api: &str) {
    let gate = Gate::new();
    let (_mock, ws, mut agent, session) = start(api, gated_write(&gate)).await;
    let pending = agent.start_prompt(&session, "write notes").await;
    let call = first_call(&mut agent).await;
    // The tool's label, not its name: CodeCompanion would show "Edit: write_file".
    assert_eq!(call["title"], "Write file", "{api}: {call}");
    assert_eq!(call["kind"], "edit");
    assert_eq!(call["status"], "pending", "{call}");
    assert!(
        !ws.project().join("notes.md").exists(),
        "nothing written yet"
    );
    let id = call["toolCallId"].clone();
    gate.open();
    let done = response(pending).await;
    assert_eq!(done["result"]["stopReason"], "end_turn", "{api}: {done}");
    let updates = agent.drain();
    let whole = updates
        .iter()
        .map(|u| &u["params"]["update"])
        .find(|u| {
            u["toolCallId"] == id
                && u["sessionUpdate"] == "tool_call_update"
                && u["title"].is_string()
        })
        .unwrap_or_else(|| panic!("{api}: the call shown whole: {updates:?}"));
    assert_eq!(whole["title"], "Write notes.md");
    assert_eq!(whole["rawInput"]["path"], "notes.md");
    assert!(
        updates
            .iter()
            .all(|u| u["params"]["update"]["sessionUpdate"] != "tool_call"),
        "{api}: one tool_call for the call, then updates"
    );
    assert_eq!(
        std::fs::read_to_string(ws.project().join("notes.md")).unwrap(),
        "# Notes\nwritten while streaming\n"
    );
    agent.assert_valid();
}

async fn cancelled_while_it_streams(api: &str) {
    let gate = Gate::new();
    let mut script = gated_write(&gate);
    script.truncate(1);
    // The next answer reuses the model's id for another call, as servers that number calls
    // per response do.
    script.push(Reply::tools(&[(
        "w1",
        "read_file",
        json!({"path": "README.md"}),
    )]));
    script.push(Reply::text(&["after"]));
    let (mock, ws, mut agent, session) = start(api, script).await;
    let pending = agent.start_prompt(&session, "write notes").await;
    let call = first_call(&mut agent).await;
    agent
        .notify("session/cancel", json!({"sessionId": session}))
        .await;
    let done = response(pending).await;
    assert_eq!(done["result"]["stopReason"], "cancelled", "{api}: {done}");
    let updates = agent.drain();
    let last = updates
        .iter()
        .map(|u| &u["params"]["update"])
        .rfind(|u| u["toolCallId"] == call["toolCallId"])
        .unwrap_or_else(|| panic!("{api}: the cut-off call is settled: {updates:?}"));
    assert_eq!(last["status"], "failed", "{api}: {last}");
    assert!(!ws.project().join("notes.md").exists());
    gate.open();

    // Nothing half-made was recorded: the next request has no call of it, and the editor's
    // id for the cut-off call stays taken.
    let (next, updates) = agent.prompt(&session, "and now?").await;
    assert_eq!(next["result"]["stopReason"], "end_turn", "{api}: {next}");
    let body = mock.requests()[1].body.to_string();
    assert!(
        !body.contains("notes.md") && !body.contains("write_file\",\"arguments"),
        "{api}: {body}"
    );
    let reused = crate::common::of_kind(&updates, "tool_call");
    assert_eq!(reused[0]["toolCallId"], "w1-2", "{api}: {reused:?}");
    let transcript =
        std::fs::read_to_string(ws.home().join(format!("data/sessions/{session}.jsonl"))).unwrap();
    assert!(!transcript.contains("write_file"), "{transcript}");
    // A reload gives the calls the ids the live session gave.
    drop(agent);
    let mut env = ws.env(&mock);
    env.push(("TANDEM_API".into(), api.into()));
    let mut agent = Agent::spawn(&env, &[]);
    agent.initialize().await;
    let (_, replayed) = agent
        .open_stored("session/load", &session, &ws.project())
        .await;
    let ids: Vec<&Value> = crate::common::of_kind(&replayed, "tool_call")
        .iter()
        .map(|c| &c["toolCallId"])
        .collect();
    assert_eq!(ids, [&json!("w1-2")], "{api}");
    agent.assert_valid();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_is_shown_before_its_arguments_are_complete() {
    shown_before_its_arguments_are_complete("chat-completions").await;
    shown_before_its_arguments_are_complete("anthropic-messages").await;
    shown_before_its_arguments_are_complete("responses").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancel_while_a_call_streams_records_nothing_of_it() {
    cancelled_while_it_streams("chat-completions").await;
    cancelled_while_it_streams("anthropic-messages").await;
    cancelled_while_it_streams("responses").await;
}
