//! `session/cancel` during streaming: the prompt ends `cancelled` promptly, what was shown stays
//! valid, and the next prompt works with the partial answer in the history.

use std::time::{Duration, Instant};

use serde_json::json;

use crate::common::{Reply, joined, response, session_with};

fn slow_answer() -> Reply {
    let pieces: Vec<String> = (0..200).map(|i| format!("t{i} ")).collect();
    let refs: Vec<&str> = pieces.iter().map(String::as_str).collect();
    Reply::text(&refs).slow(Duration::from_millis(50))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_mid_stream_stops_the_turn_and_the_next_prompt_works() {
    let (mock, _ws, mut agent, session) =
        session_with(vec![slow_answer(), Reply::text(&["after cancel"])]).await;
    let pending = agent.start_prompt(&session, "long").await;
    // Wait until the answer is streaming.
    let first = agent.next_message().await;
    assert_eq!(
        first["params"]["update"]["sessionUpdate"],
        "agent_message_chunk"
    );
    let cancelled_at = Instant::now();
    agent
        .notify("session/cancel", json!({"sessionId": session}))
        .await;
    let response = response(pending).await;
    let latency = cancelled_at.elapsed();
    assert_eq!(response["result"]["stopReason"], "cancelled", "{response}");
    // The full answer would take 10 s; a sanity bound far above the 100 ms target.
    assert!(latency < Duration::from_secs(3), "cancel took {latency:?}");

    let shown = std::iter::once(first)
        .chain(agent.drain())
        .collect::<Vec<_>>();
    let partial = joined(&shown, "agent_message_chunk");
    assert!(
        partial.starts_with("t0 ") && !partial.contains("t199"),
        "{partial}"
    );

    let (next, updates) = agent.prompt(&session, "and now?").await;
    assert_eq!(next["result"]["stopReason"], "end_turn");
    assert_eq!(joined(&updates, "agent_message_chunk"), "after cancel");
    let second = &mock.requests()[1];
    let messages = second.body["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 4, "system, user, partial assistant, user");
    assert_eq!(messages[2]["role"], "assistant");
    assert!(partial.starts_with(messages[2]["content"].as_str().unwrap()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_while_waiting_for_the_server_stops_the_turn() {
    // The server holds the response before the first byte.
    let (mock, _ws, mut agent, session) = session_with(vec![
        Reply::text(&["never seen"]).slow(Duration::from_secs(30)),
    ])
    .await;
    let pending = agent.start_prompt(&session, "hi").await;
    // The request is at the server, which holds its answer: tandem is waiting for it.
    mock.wait_for_requests(1).await;
    agent
        .notify("session/cancel", json!({"sessionId": session}))
        .await;
    let response = response(pending).await;
    assert_eq!(response["result"]["stopReason"], "cancelled");
    assert_eq!(joined(&agent.drain(), "agent_message_chunk"), "");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_with_nothing_running_is_harmless() {
    let (_mock, _ws, mut agent, session) = session_with(vec![Reply::text(&["ok"])]).await;
    agent
        .notify("session/cancel", json!({"sessionId": session}))
        .await;
    let (response, _) = agent.prompt(&session, "hi").await;
    assert_eq!(response["result"]["stopReason"], "end_turn");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_request_for_the_prompt_cancels_the_turn() {
    let (_mock, _ws, mut agent, session) = session_with(vec![slow_answer()]).await;
    let (id, pending) = agent
        .start_request(
            "session/prompt",
            json!({"sessionId": session, "prompt": [{"type": "text", "text": "long"}]}),
        )
        .await;
    agent.next_message().await;
    agent
        .notify("$/cancel_request", json!({"requestId": id}))
        .await;
    let response = response(pending).await;
    let cancelled =
        response["result"]["stopReason"] == "cancelled" || response["error"]["code"] == -32800;
    assert!(cancelled, "{response}");
}

mod tools {
    //! Cancel while a permission request is pending, a command runs (locally and in the
    //! editor's terminal), or a file operation waits on the editor.

    use std::time::{Duration, Instant};

    use serde_json::json;

    use crate::common::editor::{Answer, full_caps};
    use crate::common::{Reply, response, tool_session};

    /// The state a call is in when the user cancels it.
    enum Until<'a> {
        /// The agent's request of this method is pending in the editor.
        Editor(&'a str),
        /// A local process whose command line holds this marker is running.
        Process(&'a str),
    }

    /// Whether a process whose command line contains `marker` is running.
    fn running(marker: &str) -> bool {
        let ps = std::process::Command::new("ps")
            .args(["-eo", "args"])
            .output()
            .unwrap();
        String::from_utf8_lossy(&ps.stdout).contains(marker)
    }

    /// Waits until a process whose command line contains `marker` runs; fails after `WAIT`.
    async fn wait_for_process(marker: &str) {
        let deadline = Instant::now() + crate::common::acp_client::WAIT;
        while !running(marker) {
            assert!(Instant::now() < deadline, "`{marker}` never started");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    async fn cancel_after(
        caps: serde_json::Value,
        mode: &str,
        call: (&str, &str, serde_json::Value),
        setup: impl FnOnce(&crate::common::editor::FakeEditor),
        until: Until<'_>,
    ) -> (
        crate::common::MockModel,
        std::sync::Arc<crate::common::editor::FakeEditor>,
        Duration,
    ) {
        let script = vec![Reply::tools(&[call]), Reply::text(&["after"])];
        let (mock, _ws, mut agent, session, editor) = tool_session(script, caps, mode).await;
        setup(&editor);
        let pending = agent.start_prompt(&session, "go").await;
        match until {
            Until::Editor(method) => editor.wait_for(method).await,
            Until::Process(marker) => wait_for_process(marker).await,
        }
        let start = Instant::now();
        agent
            .notify("session/cancel", json!({"sessionId": session}))
            .await;
        let answer = response(pending).await;
        let latency = start.elapsed();
        assert_eq!(answer["result"]["stopReason"], "cancelled", "{answer}");
        // The next prompt works, and the cancelled call has its one result.
        let (next, _) = agent.prompt(&session, "next").await;
        assert_eq!(next["result"]["stopReason"], "end_turn", "{next}");
        let messages = &mock.requests()[1].body["messages"];
        let results: Vec<_> = messages
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| m["role"] == "tool")
            .collect();
        assert_eq!(results.len(), 1, "{messages}");
        (mock, editor, latency)
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn during_a_pending_permission_request() {
        let (_, editor, latency) = cancel_after(
            json!({}),
            "ask",
            ("w", "write_file", json!({"path": "a.txt", "content": "x"})),
            |e| e.answer_with(&[Answer::Hang]),
            Until::Editor("session/request_permission"),
        )
        .await;
        assert!(latency < Duration::from_secs(3), "{latency:?}");
        assert_eq!(editor.methods(), ["session/request_permission"]);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn during_a_local_command_kills_it() {
        let marker = format!("tandem-cancel-{}", std::process::id());
        let (mock, _, latency) = cancel_after(
            json!({}),
            "full-access",
            (
                "c",
                "run_command",
                json!({"command": format!("sleep 30 && echo {marker}")}),
            ),
            |_| {},
            Until::Process(&marker),
        )
        .await;
        assert!(latency < Duration::from_secs(3), "{latency:?}");
        let result = mock.requests()[1].body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["role"] == "tool")
            .unwrap()["content"]
            .as_str()
            .unwrap()
            .to_string();
        assert!(
            result.contains("Cancelled by the user; the command was killed."),
            "{result}"
        );
        assert!(!running(&marker), "the command was killed");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn during_a_terminal_command_kills_and_releases() {
        let (_, editor, latency) = cancel_after(
            full_caps(),
            "full-access",
            ("c", "run_command", json!({"command": "sleep 30"})),
            |_| {},
            Until::Editor("terminal/wait_for_exit"),
        )
        .await;
        assert!(latency < Duration::from_secs(3), "{latency:?}");
        let methods = editor.methods();
        assert!(
            methods.contains(&"terminal/kill".to_string()),
            "{methods:?}"
        );
        assert!(
            methods.contains(&"terminal/release".to_string()),
            "{methods:?}"
        );
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn during_a_file_operation() {
        let (_, _, latency) = cancel_after(
            full_caps(),
            "ask",
            ("r", "read_file", json!({"path": "README.md"})),
            |e| e.hanging.lock().unwrap().push("fs/read_text_file".into()),
            Until::Editor("fs/read_text_file"),
        )
        .await;
        assert!(latency < Duration::from_secs(3), "{latency:?}");
    }
}
