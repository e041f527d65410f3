//! Speaking to a running turn over real stdio (issue 37): `_tandem/session/steer` lands at
//! the loop's next request boundary, after the running calls' results; prompts sent while a
//! turn runs wait and run in order with their own responses; a cancel answers them all; and
//! `tandem exec --input ndjson` steers with stdin's later lines.

use std::io::Write;
use std::process::Stdio;

use serde_json::{Value, json};

use crate::common::acp_client::{assert_error, response};
use crate::common::gate::Gate;
use crate::common::mock_model::{Piece, content_text};
use crate::common::{MockModel, Reply, Workspace, joined, session_with};

/// `reply`, held back until `gate` opens.
fn gated(reply: Reply, gate: &Gate) -> Reply {
    match reply {
        Reply::Stream { mut pieces, end } => {
            pieces.insert(0, Piece::Gate(gate.clone()));
            Reply::Stream { pieces, end }
        }
        other => other,
    }
}

/// (role, text) of each message of a chat completions request, system prompt left out.
fn said(body: &Value) -> Vec<(String, String)> {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .skip(1)
        .map(|m| {
            (
                m["role"].as_str().unwrap().to_string(),
                content_text(&m["content"]),
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_steering_message_lands_after_the_tool_results_of_the_running_step() {
    let gate = Gate::new();
    let list = Reply::tools(&[("c1", "list_dir", json!({"path": "."}))]);
    let script = vec![gated(list, &gate), Reply::text(&["looked at both"])];
    let (mock, _ws, mut agent, id) = session_with(script).await;
    let prompt = agent.start_prompt(&id, "look at a").await;
    mock.wait_for_requests(1).await;
    let (_, steered) = agent
        .start_request(
            "_tandem/session/steer",
            json!({"sessionId": id, "prompt": [{"type": "text", "text": "and at b too"}]}),
        )
        .await;
    // The message reaches the session before the model's answer goes on (one arriving later
    // lands at the next boundary, a request later, which this script does not cover).
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    gate.open();
    let steered = response(steered).await;
    assert_eq!(steered["result"], json!({}), "{steered}");
    let done = response(prompt).await;
    assert_eq!(done["result"]["stopReason"], "end_turn", "{done}");
    let updates = agent.drain();
    let requests = mock.requests();
    assert_eq!(requests.len(), 2);
    let messages = said(&requests[1].body);
    let n = messages.len();
    assert_eq!(messages[n - 2].0, "tool", "{messages:?}");
    assert_eq!(
        messages[n - 1],
        ("user".into(), "and at b too".into()),
        "{messages:?}"
    );
    assert_eq!(joined(&updates, "user_message_chunk"), "and at b too");
    assert_eq!(joined(&updates, "agent_message_chunk"), "looked at both");
    agent.assert_valid();

    // A reload shows the message where it landed.
    let listed = agent
        .request_ok(
            "_tandem/session/export",
            json!({"sessionId": id, "format": "json"}),
        )
        .await;
    assert!(
        listed["content"]
            .as_str()
            .unwrap()
            .contains("\"within_turn\": true")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn steering_with_no_running_turn_is_refused_and_the_session_goes_on() {
    let (mock, _ws, mut agent, id) = session_with(Vec::new()).await;
    let r = agent
        .request(
            "_tandem/session/steer",
            json!({"sessionId": id, "prompt": [{"type": "text", "text": "hello?"}]}),
        )
        .await;
    assert_error(&r, -32600, "no running turn");
    let r = agent
        .request(
            "_tandem/session/steer",
            json!({"sessionId": id, "prompt": []}),
        )
        .await;
    assert_error(&r, -32602, "at least one content block");
    crate::common::still_usable(&mock, &mut agent, &id).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prompts_sent_while_a_turn_runs_run_in_order_with_their_own_responses() {
    let gate = Gate::new();
    let script = vec![
        gated(Reply::text(&["one done"]), &gate),
        Reply::text(&["two done"]),
        Reply::text(&["three done"]),
    ];
    let (mock, _ws, mut agent, id) = session_with(script).await;
    let first = agent.start_prompt(&id, "one").await;
    mock.wait_for_requests(1).await;
    let second = agent.start_prompt(&id, "two").await;
    let third = agent.start_prompt(&id, "three").await;
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    assert_eq!(mock.requests().len(), 1, "the others wait");
    gate.open();
    for r in [
        response(first).await,
        response(second).await,
        response(third).await,
    ] {
        assert_eq!(r["result"]["stopReason"], "end_turn", "{r}");
    }
    let requests = mock.requests();
    let last: Vec<String> = requests.iter().map(|r| r.last_user_text()).collect();
    assert_eq!(last, ["one", "two", "three"]);
    assert_eq!(said(&requests[2].body)[3].1, "two done");
    agent.assert_valid();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancel_answers_the_running_turn_and_every_queued_prompt_cancelled() {
    let gate = Gate::new();
    let script = vec![
        gated(Reply::text(&["never"]), &gate),
        Reply::text(&["after"]),
    ];
    let (mock, _ws, mut agent, id) = session_with(script).await;
    let first = agent.start_prompt(&id, "one").await;
    mock.wait_for_requests(1).await;
    let second = agent.start_prompt(&id, "two").await;
    let (_, steer) = agent
        .start_request(
            "_tandem/session/steer",
            json!({"sessionId": id, "prompt": [{"type": "text", "text": "also"}]}),
        )
        .await;
    // Both reach the session before the cancel does.
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    agent
        .notify("session/cancel", json!({"sessionId": id}))
        .await;
    for r in [response(first).await, response(second).await] {
        assert_eq!(r["result"]["stopReason"], "cancelled", "{r}");
    }
    assert_error(&response(steer).await, -32600, "not sent");
    gate.open();
    let (r, _) = agent.prompt(&id, "again").await;
    assert_eq!(r["result"]["stopReason"], "end_turn");
    assert_eq!(mock.requests().last().unwrap().last_user_text(), "again");
    agent.assert_valid();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exec_steers_with_the_later_lines_of_ndjson_input() {
    let gate = Gate::new();
    let list = Reply::tools(&[("c1", "list_dir", json!({"path": "."}))]);
    let script = vec![gated(list, &gate), Reply::text(&["both listed"])];
    let mock = MockModel::start(script).await;
    let ws = Workspace::new();
    let mut child = std::process::Command::new(crate::common::tandem_bin())
        .args(["exec", "--input", "ndjson"])
        .env_clear()
        .envs(ws.env(&mock))
        .current_dir(ws.project())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    writeln!(stdin, "{}", json!({"prompt": "list this folder"})).unwrap();
    mock.wait_for_requests(1).await;
    writeln!(stdin, "{}", json!({"prompt": "then say both"})).unwrap();
    stdin.flush().unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    gate.open();
    let out = tokio::task::spawn_blocking(move || {
        drop(stdin);
        child.wait_with_output().unwrap()
    })
    .await
    .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "both listed");
    let requests = mock.requests();
    assert_eq!(requests[0].last_user_text(), "list this folder");
    let messages = said(&requests[1].body);
    assert_eq!(messages.last().unwrap().1, "then say both", "{messages:?}");
}
