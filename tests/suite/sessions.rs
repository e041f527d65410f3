//! Sessions that last: transcripts survive restarts and crashes; load, resume, list, close
//! and delete work across processes.

use std::time::Duration;

use serde_json::{Value, json};

use crate::common::calls::tool_result;
use crate::common::{Agent, MockModel, Reply, Workspace, joined, of_kind};

fn kinds(updates: &[Value]) -> Vec<String> {
    updates
        .iter()
        .map(|u| {
            u["params"]["update"]["sessionUpdate"]
                .as_str()
                .unwrap_or("?")
                .to_string()
        })
        .collect()
}

async fn first_process(mock: &MockModel, ws: &Workspace) -> String {
    crate::common::copy_fixture("small", &ws.project());
    let mut env = ws.env(mock);
    env.push(("TANDEM_MODE".into(), "accept-edits".into()));
    let mut agent = Agent::spawn(&env, &[]);
    let session = agent.open_session(&ws.project()).await;
    let (response, updates) = agent
        .prompt(&session, "Add a farewell note\nwith details")
        .await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    let titles = of_kind(&updates, "session_info_update");
    assert_eq!(titles.len(), 1, "a title after the first exchange");
    assert_eq!(titles[0]["title"], "Add a farewell note");
    let (status, _) = agent.shutdown().await;
    assert!(status.success());
    session
}

fn first_script() -> Vec<Reply> {
    vec![
        Reply::chunks(vec![
            crate::common::mock_model::reasoning_content("Check the notes first."),
            crate::common::mock_model::text("Looking."),
            crate::common::mock_model::tool_call(
                0,
                "r",
                "read_file",
                r#"{"path": "notes/todo.txt"}"#,
            ),
            crate::common::mock_model::tool_call(
                1,
                "p",
                "update_plan",
                r#"{"entries": [{"content": "Write the note", "status": "in_progress"}]}"#,
            ),
            crate::common::mock_model::finish("tool_calls"),
        ]),
        Reply::tools(&[(
            "w",
            "write_file",
            json!({"path": "notes/bye.txt", "content": "bye\n"}),
        )]),
        Reply::text(&["Added notes/bye.txt."]),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_is_listed_loaded_with_replay_and_continued_by_a_new_process() {
    let mock = MockModel::start(first_script()).await;
    let ws = Workspace::new();
    let session = first_process(&mock, &ws).await;

    let mut agent = Agent::spawn(&ws.env(&mock), &[]);
    let init = agent.initialize().await;
    assert_eq!(init["agentCapabilities"]["loadSession"], true);
    let list = agent.request_ok("session/list", json!({})).await;
    assert_eq!(list["sessions"][0]["sessionId"], session.as_str());
    assert_eq!(list["sessions"][0]["title"], "Add a farewell note");
    assert!(
        list["sessions"][0]["updatedAt"]
            .as_str()
            .unwrap()
            .ends_with('Z')
    );

    let (loaded, updates) = agent
        .open_stored("session/load", &session, &ws.project())
        .await;
    assert_eq!(loaded["modes"]["currentModeId"], "accept-edits", "{loaded}");
    let k = kinds(&updates);
    assert_eq!(
        k[..3],
        [
            "user_message_chunk",
            "agent_thought_chunk",
            "agent_message_chunk"
        ],
        "{k:?}"
    );
    // The plan and the read ran together; their order follows completion.
    let mut middle = k[3..6].to_vec();
    middle.sort();
    assert_eq!(middle, ["plan", "tool_call", "tool_call"], "{k:?}");
    // The mode and options are in the answer, not updates before it.
    assert_eq!(
        k[6..],
        ["agent_message_chunk", "available_commands_update"],
        "{k:?}"
    );
    let u = |i: usize| &updates[i]["params"]["update"];
    assert_eq!(u(0)["content"]["text"], "Add a farewell note\nwith details");
    assert_eq!(u(1)["content"]["text"], "Check the notes first.");
    let calls = of_kind(&updates, "tool_call");
    assert_eq!(calls[0]["toolCallId"], "r");
    assert_eq!(calls[0]["status"], "completed");
    assert!(
        calls[0]["content"][0]["content"]["text"]
            .as_str()
            .unwrap()
            .contains("write the greeting")
    );
    assert_eq!(
        of_kind(&updates, "plan")[0]["entries"][0]["content"],
        "Write the note"
    );
    assert_eq!(calls[1]["toolCallId"], "w");
    assert_eq!(calls[1]["content"][0]["type"], "diff");
    assert_eq!(u(6)["content"]["text"], "Added notes/bye.txt.");

    // Continue: the model gets the whole history.
    mock.push(Reply::text(&["Still here."]));
    let (response, _) = agent.prompt(&session, "and now?").await;
    assert_eq!(response["result"]["stopReason"], "end_turn");
    let request = &mock.requests()[3];
    let roles: Vec<_> = request.body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(
        roles,
        [
            "system",
            "user",
            "assistant",
            "tool",
            "tool",
            "assistant",
            "tool",
            "assistant",
            "user"
        ]
    );
    assert!(tool_result(request, "r").contains("write the greeting"));
    assert_eq!(
        tool_result(request, "w"),
        "Created notes/bye.txt (1 lines)."
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resume_restores_without_replay() {
    let mock = MockModel::start(first_script()).await;
    let ws = Workspace::new();
    let session = first_process(&mock, &ws).await;
    let mut agent = Agent::spawn(&ws.env(&mock), &[]);
    agent.initialize().await;
    let (resumed, updates) = agent
        .open_stored("session/resume", &session, &ws.project())
        .await;
    assert_eq!(resumed["modes"]["currentModeId"], "accept-edits");
    assert_eq!(
        kinds(&updates),
        ["available_commands_update"],
        "no replay on resume"
    );
    mock.push(Reply::text(&["ok"]));
    agent.prompt(&session, "more").await;
    assert_eq!(
        mock.requests()[3].body["messages"]
            .as_array()
            .unwrap()
            .len(),
        9
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_filters_by_cwd_and_pages_newest_first() {
    // Only sessions that got a prompt are listed.
    let mock = MockModel::start(vec![Reply::text(&["ok"]); 52]).await;
    let ws = Workspace::new();
    let other = ws.project().join("other");
    std::fs::create_dir_all(&other).unwrap();
    let mut agent = Agent::spawn(&ws.env(&mock), &[]);
    agent.initialize().await;
    let mut ids = Vec::new();
    for i in 0..52 {
        let cwd = if i % 2 == 0 {
            ws.project()
        } else {
            other.clone()
        };
        let id = agent.new_session(&cwd).await["sessionId"]
            .as_str()
            .unwrap()
            .to_string();
        agent.prompt(&id, "hi").await;
        ids.push(id);
        if i == 50 {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
    let first = agent.request_ok("session/list", json!({})).await;
    assert_eq!(first["sessions"].as_array().unwrap().len(), 50);
    assert_eq!(
        first["sessions"][0]["sessionId"],
        ids[51].as_str(),
        "newest first"
    );
    let cursor = first["nextCursor"]
        .as_str()
        .expect("a next page")
        .to_string();
    let second = agent
        .request_ok("session/list", json!({"cursor": cursor}))
        .await;
    assert_eq!(second["sessions"].as_array().unwrap().len(), 2);
    assert!(second.get("nextCursor").is_none_or(Value::is_null));
    let filtered = agent
        .request_ok("session/list", json!({"cwd": other}))
        .await;
    let sessions = filtered["sessions"].as_array().unwrap();
    assert_eq!(sessions.len(), 26);
    assert!(sessions.iter().all(|s| s["cwd"] == other.to_str().unwrap()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn close_and_delete() {
    let mock = MockModel::start(vec![Reply::text(&["hi"])]).await;
    let ws = Workspace::new();
    let mut agent = Agent::spawn(&ws.env(&mock), &[]);
    let session = agent.open_session(&ws.project()).await;
    agent.prompt(&session, "hello").await;
    agent
        .request_ok("session/close", json!({"sessionId": session}))
        .await;
    let gone = agent
        .request(
            "session/prompt",
            json!({"sessionId": session, "prompt": [{"type": "text", "text": "x"}]}),
        )
        .await;
    assert_eq!(
        gone["error"]["code"], -32002,
        "closed sessions are not in memory"
    );
    // Still stored: it can be opened again, then deleted for good.
    agent
        .request_ok(
            "session/resume",
            json!({"sessionId": session, "cwd": ws.project()}),
        )
        .await;
    agent
        .request_ok("session/delete", json!({"sessionId": session}))
        .await;
    let list = agent.request_ok("session/list", json!({})).await;
    assert_eq!(list["sessions"], json!([]));
    for method in ["session/load", "session/resume"] {
        let r = agent
            .request(
                method,
                json!({"sessionId": session, "cwd": ws.project(), "mcpServers": []}),
            )
            .await;
        assert_eq!(r["error"]["code"], -32002, "{method}: {r}");
    }
    for method in ["session/close", "session/delete"] {
        let r = agent
            .request(method, json!({"sessionId": "no-such-session"}))
            .await;
        assert_eq!(r["error"]["code"], -32002, "{method}: {r}");
    }
    let r = agent
        .request(
            "session/load",
            json!({"sessionId": "../../etc/passwd", "cwd": ws.project(), "mcpServers": []}),
        )
        .await;
    assert_eq!(r["error"]["code"], -32002);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_process_killed_mid_turn_leaves_a_loadable_session() {
    let mock = MockModel::start(vec![Reply::chunks(vec![
        crate::common::mock_model::text("Running the slow thing."),
        crate::common::mock_model::tool_call(
            0,
            "slow",
            "run_command",
            r#"{"command": "sleep 30"}"#,
        ),
        crate::common::mock_model::finish("tool_calls"),
    ])])
    .await;
    let ws = Workspace::new();
    let mut env = ws.env(&mock);
    env.push(("TANDEM_MODE".into(), "full-access".into()));
    let mut agent = Agent::spawn(&env, &[]);
    let session = agent.open_session(&ws.project()).await;
    let _pending = agent.start_prompt(&session, "do the slow thing").await;
    loop {
        let m = agent.next_message().await;
        if m["params"]["update"]["status"] == "in_progress" {
            break;
        }
    }
    agent.kill().await;

    let mut agent = Agent::spawn(&ws.env(&mock), &[]);
    agent.initialize().await;
    let (_, updates) = agent
        .open_stored("session/load", &session, &ws.project())
        .await;
    assert_eq!(joined(&updates, "user_message_chunk"), "do the slow thing");
    assert_eq!(
        joined(&updates, "agent_message_chunk"),
        "Running the slow thing."
    );
    let call = of_kind(&updates, "tool_call");
    assert_eq!(call[0]["toolCallId"], "slow");
    assert_eq!(call[0]["status"], "failed", "shown as interrupted");
    mock.push(Reply::text(&["Sorry about that."]));
    let (response, _) = agent.prompt(&session, "what happened?").await;
    assert_eq!(response["result"]["stopReason"], "end_turn");
    assert!(tool_result(&mock.requests()[1], "slow").starts_with("Not run: tandem stopped"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_corrupt_line_is_skipped_with_a_warning() {
    let mock = MockModel::start(vec![Reply::text(&["one"]), Reply::text(&["two"])]).await;
    let ws = Workspace::new();
    let mut agent = Agent::spawn(&ws.env(&mock), &[]);
    let session = agent.open_session(&ws.project()).await;
    agent.prompt(&session, "first").await;
    agent.prompt(&session, "second").await;
    agent.shutdown().await;
    let path = ws
        .home()
        .join("data/sessions")
        .join(format!("{session}.jsonl"));
    let text = std::fs::read_to_string(&path).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    lines.insert(3, "{\"v\":1,\"type\":\"assistant\",\"text\":"); // torn
    lines.push("\u{0}\u{1} garbage");
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    // Another file that is garbage from the first line does not hide this one.
    std::fs::write(ws.home().join("data/sessions/broken.jsonl"), "nope\n").unwrap();

    let mut agent = Agent::spawn(&ws.env(&mock), &[]);
    agent.initialize().await;
    let list = agent.request_ok("session/list", json!({})).await;
    assert_eq!(list["sessions"].as_array().unwrap().len(), 1);
    let (_, updates) = agent
        .open_stored("session/load", &session, &ws.project())
        .await;
    assert_eq!(joined(&updates, "agent_message_chunk"), "onetwo");
    let (_, stderr) = agent.shutdown().await;
    assert!(
        stderr.contains("skipping a torn or corrupt transcript line"),
        "{stderr}"
    );
}

/// Deleting (or closing) a session while its prompt streams cancels the prompt, which
/// answers `cancelled` rather than an error, and the deleted transcript stays deleted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delete_or_close_mid_prompt_ends_it_cancelled() {
    let slow = || {
        let pieces: Vec<String> = (0..100).map(|i| format!("word{i} ")).collect();
        let pieces: Vec<&str> = pieces.iter().map(String::as_str).collect();
        Reply::text(&pieces).slow(Duration::from_millis(50))
    };
    let mock = MockModel::start(vec![slow(), slow()]).await;
    let ws = Workspace::new();
    let mut agent = Agent::spawn(&ws.env(&mock), &[]);
    agent.initialize().await;
    let mut sessions = Vec::new();
    for _ in 0..2 {
        sessions.push(
            agent.new_session(&ws.project()).await["sessionId"]
                .as_str()
                .unwrap()
                .to_string(),
        );
    }
    let stored = |session: &str| ws.home().join(format!("data/sessions/{session}.jsonl"));
    let mut closed = Vec::new();
    for (method, session) in ["session/delete", "session/close"]
        .into_iter()
        .zip(sessions)
    {
        let pending = agent.start_prompt(&session, "talk for a while").await;
        // The prompt streams: a first piece of its answer has reached the editor.
        loop {
            let m = agent.next_message().await;
            if m["params"]["sessionId"] == session.as_str()
                && m["params"]["update"]["sessionUpdate"] == "agent_message_chunk"
            {
                break;
            }
        }
        agent
            .request_ok(method, json!({"sessionId": session}))
            .await;
        let answer = crate::common::response(pending).await;
        assert_eq!(
            answer["result"]["stopReason"], "cancelled",
            "{method}: {answer}"
        );
        // The prompt answers once its transcript is written: nothing is left to bring it back.
        assert_eq!(
            stored(&session).exists(),
            method == "session/close",
            "{method}"
        );
        closed.push((method, session));
    }
    assert!(agent.is_running());
    // Once tandem has exited, every writer it had is done: the deleted one stayed deleted.
    let (status, _) = agent.shutdown().await;
    assert!(status.success());
    for (method, session) in closed {
        assert_eq!(
            stored(&session).exists(),
            method == "session/close",
            "{method}"
        );
    }
}
