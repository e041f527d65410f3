//! One process writes a session at a time: two binaries on one data directory. A second
//! editor window (or `tandem exec --session`) that asks to load, resume or continue a
//! session another tandem process has open is refused with a clear error instead of
//! appending a second history to the same file; it may still fork it, and once the first
//! process lets go, it opens.

use serde_json::json;

use crate::common::{Agent, MockModel, Reply, Workspace};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_process_cannot_open_a_session_the_first_has_open() {
    let mock = MockModel::start(vec![
        Reply::text(&["First answer."]),
        Reply::text(&["From the fork."]),
        Reply::text(&["Second window."]),
    ])
    .await;
    let ws = Workspace::new();
    let env = ws.env(&mock);
    let mut first = Agent::spawn(&env, &[]);
    let session = first.open_session(&ws.project()).await;
    let (response, _) = first.prompt(&session, "hello").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");

    let mut second = Agent::spawn(&env, &[]);
    second.initialize().await;
    for method in ["session/load", "session/resume"] {
        let answer = second
            .request(
                method,
                json!({"sessionId": session, "cwd": ws.project(), "mcpServers": []}),
            )
            .await;
        let message = answer["error"]["message"].as_str().unwrap_or_default();
        assert_eq!(answer["error"]["code"], -32600, "{method}: {answer}");
        assert!(
            message.contains("open in another tandem process") && message.contains("fork"),
            "{method}: {message}"
        );
    }
    // `tandem exec --session` is refused the same way, and writes nothing.
    let before =
        std::fs::read_to_string(ws.home().join(format!("data/sessions/{session}.jsonl"))).unwrap();
    let (project, vars, id) = (ws.project(), env.clone(), session.clone());
    let (code, _, stderr) = tokio::task::spawn_blocking(move || {
        let args = ["exec", "--session", id.as_str(), "hi"];
        crate::common::run_tandem(&args, &vars, None, Some(&project))
    })
    .await
    .unwrap();
    assert_ne!(code, 0);
    assert!(
        stderr.contains("open in another tandem process"),
        "{stderr}"
    );
    let after =
        std::fs::read_to_string(ws.home().join(format!("data/sessions/{session}.jsonl"))).unwrap();
    assert_eq!(before, after, "the refused opener wrote nothing");

    // A fork reads it and goes on from a copy.
    let forked = second
        .request_ok(
            "session/fork",
            json!({"sessionId": session, "cwd": ws.project(), "mcpServers": []}),
        )
        .await;
    let copy = forked["sessionId"].as_str().unwrap().to_string();
    second.drain();
    let (response, _) = second.prompt(&copy, "from here").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");

    // Once the first window closes it, the second opens the session and goes on.
    first
        .request_ok("session/close", json!({"sessionId": session}))
        .await;
    second
        .open_stored("session/load", &session, &ws.project())
        .await;
    let (response, _) = second.prompt(&session, "my turn").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    second.assert_valid();
    // And the first one cannot take it back while the second has it.
    let answer = first
        .request(
            "session/load",
            json!({"sessionId": session, "cwd": ws.project(), "mcpServers": []}),
        )
        .await;
    assert_eq!(answer["error"]["code"], -32600, "{answer}");
    let (status, _) = first.shutdown().await;
    assert!(status.success());
}
