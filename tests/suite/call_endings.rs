//! Every tool call ends `completed` or `failed`, whatever way it ends: clients that show the
//! agent's status keep a spinner or a pending badge on a call that never gets there
//! (CodeCompanion puts a new call in the chat with "status = tool_call.status or
//! \"in_progress\"" and updates its line with each status it is sent, `acp/handler.lua`).
//! Driven over real stdio: a call the user rejected, one cancelled while it waits for an
//! answer and the call after it that the cancel kept from running, one cancelled while it
//! runs, calls refused by a rule and by a hook, calls with unusable arguments, and a
//! subagent's calls (rejected, run, cancelled while asked); then the same session loaded in a
//! second process.

use std::collections::BTreeSet;

use serde_json::{Value, json};

use crate::common::calls::{call_events, last_statuses, unfinished};
use crate::common::editor::{Answer, FakeEditor};
use crate::common::mock_model::{finish, tool_call, usage};
use crate::common::{Agent, Reply, install_user_config, response, session_in};

/// What the editor advertises: subagents as sessions of their own, so a subagent's calls are
/// tool calls the editor follows (under the child's session id).
fn caps() -> Value {
    json!({"subagents": {}})
}

/// One response whose calls are `calls` (id, tool, raw arguments, sent as they are).
fn raw_calls(calls: &[(&str, &str, &str)]) -> Reply {
    let mut chunks: Vec<Value> = calls
        .iter()
        .enumerate()
        .map(|(i, (id, name, args))| tool_call(i as u32, id, name, args))
        .collect();
    chunks.push(finish("tool_calls"));
    chunks.push(usage(200, 20));
    Reply::chunks(chunks)
}

/// What the model says, in the order it is asked.
fn script() -> Vec<Reply> {
    let task = |description: &str| json!({"description": description, "prompt": "Do what the description says"});
    vec![
        // 1: rejected by the user.
        Reply::tools(&[(
            "rejected",
            "write_file",
            json!({"path": "a.txt", "content": "a\n"}),
        )]),
        Reply::text(&["ok"]),
        // 2: cancelled while the user is asked; the next call never runs.
        Reply::tools(&[
            (
                "asked",
                "write_file",
                json!({"path": "b.txt", "content": "b\n"}),
            ),
            (
                "next",
                "write_file",
                json!({"path": "c.txt", "content": "c\n"}),
            ),
        ]),
        // 3: cancelled while it runs.
        Reply::tools(&[("running", "run_command", json!({"command": "sleep 30"}))]),
        // 4: refused by a rule, by a hook, and unusable arguments (not what the tool takes,
        // not JSON at all).
        raw_calls(&[
            (
                "ruled",
                "write_file",
                &json!({"path": "locked/x.txt", "content": "x"}).to_string(),
            ),
            (
                "hooked",
                "run_command",
                &json!({"command": "rm -rf target"}).to_string(),
            ),
            ("unfit", "edit_file", &json!({"path": "a.txt"}).to_string()),
            ("garbled", "edit_file", "{\"path\": \"a.txt\", "),
        ]),
        Reply::text(&["ok"]),
        // 5: a subagent whose write is rejected and whose read runs.
        Reply::tools(&[("t1", "task", task("Write d.txt, read src/lib.rs"))]),
        Reply::tools(&[
            (
                "s1",
                "write_file",
                json!({"path": "d.txt", "content": "d\n"}),
            ),
            ("s2", "read_file", json!({"path": "src/lib.rs"})),
        ]),
        Reply::text(&["the write was refused"]),
        Reply::text(&["done"]),
        // 6: a subagent cancelled while its command waits for the user.
        Reply::tools(&[("t2", "task", task("Run echo hi"))]),
        Reply::tools(&[("s3", "run_command", json!({"command": "echo hi"}))]),
    ]
}

/// Reads messages into `seen` until one satisfies `done`.
async fn read_until(agent: &mut Agent, seen: &mut Vec<Value>, done: impl Fn(&Value) -> bool) {
    loop {
        let message = agent.next_message().await;
        let found = done(&message);
        seen.push(message);
        if found {
            return;
        }
    }
}

/// Whether `message` asks the user about the call `id`.
fn asks_about(message: &Value, id: &str) -> bool {
    message["method"] == "session/request_permission"
        && message["params"]["toolCall"]["toolCallId"] == id
}

/// Starts a prompt, reads until `moment`, cancels it, and returns what came (the answer is
/// `cancelled`).
async fn cancel_at(
    agent: &mut Agent,
    session: &str,
    seen: &mut Vec<Value>,
    moment: impl Fn(&Value) -> bool,
) {
    let pending = agent.start_prompt(session, "go").await;
    read_until(agent, seen, moment).await;
    agent
        .notify("session/cancel", json!({"sessionId": session}))
        .await;
    let answer = response(pending).await;
    assert_eq!(answer["result"]["stopReason"], "cancelled", "{answer}");
    seen.extend(agent.drain());
}

/// The ids among `last` (see [`last_statuses`]).
fn ids(last: &std::collections::BTreeMap<(String, String), String>) -> BTreeSet<String> {
    last.keys().map(|(_, id)| id.clone()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_tool_call_ends_completed_or_failed_live_and_after_a_load() {
    let (mock, ws, mut agent, session, editor) =
        session_in("extend", script(), caps(), "ask", |ws| {
            // The example hooks (a `pre_tool_use` hook denies `rm -rf`), and a deny rule.
            install_user_config(ws);
            let config = ws.home().join(".config/tandem/config.toml");
            let mut text = std::fs::read_to_string(&config).unwrap();
            text.push_str("\n[permissions]\ndeny = [\"edit_file(locked/**)\"]\n");
            std::fs::write(&config, text).unwrap();
        })
        .await;
    editor.answer_with(&[
        Answer::Select("reject_once"),
        Answer::Hang,
        Answer::Select("allow_once"),
        Answer::Select("reject_once"),
        Answer::Hang,
    ]);
    let mut seen = Vec::new();

    let (answer, updates) = agent.prompt(&session, "write a").await;
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    seen.extend(updates);
    cancel_at(&mut agent, &session, &mut seen, |m| asks_about(m, "asked")).await;
    cancel_at(&mut agent, &session, &mut seen, |m| {
        m["params"]["update"]["toolCallId"] == "running"
            && m["params"]["update"]["status"] == "in_progress"
    })
    .await;
    let (answer, updates) = agent.prompt(&session, "refused ones").await;
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    seen.extend(updates);
    let (answer, updates) = agent.prompt(&session, "delegate").await;
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    seen.extend(updates);
    cancel_at(&mut agent, &session, &mut seen, |m| asks_about(m, "t2/s3")).await;
    seen.extend(agent.drain());

    // Each ending happened as meant.
    let requests = mock.requests();
    let read = |id: &str| {
        let request = requests
            .iter()
            .find(|r| {
                r.body
                    .to_string()
                    .contains(&format!("\"tool_call_id\":\"{id}\""))
            })
            .unwrap_or_else(|| panic!("no request answers {id}"));
        crate::common::calls::tool_result(request, id)
    };
    assert!(read("rejected").starts_with("Rejected"));
    assert!(
        read("ruled").contains("edit_file(locked/**)"),
        "{}",
        read("ruled")
    );
    assert!(read("hooked").starts_with("Denied by a hook"));
    assert!(read("unfit").contains("old_string"), "{}", read("unfit"));
    assert!(
        read("garbled").contains("not valid JSON"),
        "{}",
        read("garbled")
    );
    assert!(read("s1").starts_with("Rejected"));
    assert!(!ws.project().join("b.txt").exists() && !ws.project().join("c.txt").exists());

    // Live: every call the editor was shown, on the session and on the subagents' sessions,
    // ended `completed` or `failed`.
    let live = last_statuses(&seen);
    let expected = [
        "rejected", "asked", "next", "running", "ruled", "hooked", "unfit", "garbled", "t1",
        "t1/s1", "t1/s2", "t2", "t2/s3",
    ];
    let shown = ids(&live);
    for id in expected {
        assert!(shown.contains(id), "{id} was shown: {shown:?}");
    }
    assert_eq!(unfinished(&live), Vec::<String>::new());
    // The cards say why nothing happened.
    let on = |id: &str| call_events(&seen, id).last().unwrap().to_string();
    assert!(
        on("rejected").contains("Rejected by the user."),
        "{}",
        on("rejected")
    );
    assert!(
        on("asked").contains("Not run: the turn was cancelled."),
        "{}",
        on("asked")
    );
    assert!(
        live.iter()
            .any(|((_, id), status)| id == "t1/s2" && status == "completed"),
        "{live:?}"
    );
    agent.assert_valid();

    // A second process loads the session: the replay ends them all too (a subagent's own
    // calls live in its task call's answer, not as calls of their own).
    agent.shutdown().await;
    let editor = FakeEditor::new();
    let mut env = ws.env(&mock);
    env.push(("TANDEM_MODE".into(), "ask".into()));
    let mut second = Agent::spawn_with(&env, &[], Some(editor));
    second.initialize_with(caps()).await;
    let (_, replayed) = second
        .open_stored("session/load", &session, &ws.project())
        .await;
    let replay = last_statuses(&replayed);
    let shown = ids(&replay);
    for id in [
        "rejected", "asked", "next", "running", "ruled", "hooked", "unfit", "garbled", "t1", "t2",
    ] {
        assert!(shown.contains(id), "{id} was replayed: {shown:?}");
    }
    assert_eq!(unfinished(&replay), Vec::<String>::new());
    second.assert_valid();
}
