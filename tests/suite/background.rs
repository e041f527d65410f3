//! Background commands: `run_command` with `background: true` starts a command that outlives
//! its call (and a cancelled turn), `command_output` reads what it wrote, `stop_command` stops
//! it and all it started, and closing the session stops whatever is left, locally and in the
//! editor's terminals; so does every way tandem ends (SIGTERM, the end of input).

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::calls::tool_result;
use crate::common::real_server::free_port;
use crate::common::{Reply, tool_session};

/// A command no other run shares: `sleep` for a long time, with this process's id in it.
fn long_sleep(n: u32) -> String {
    format!("sleep {}{n}", std::process::id())
}

/// Whether any process's command line holds `marker`.
pub(super) fn running(marker: &str) -> bool {
    std::fs::read_dir("/proc").unwrap().flatten().any(|entry| {
        std::fs::read(entry.path().join("cmdline")).is_ok_and(|cmd| {
            String::from_utf8_lossy(&cmd)
                .replace('\0', " ")
                .contains(marker)
        })
    })
}

pub(super) async fn until(what: &str, check: impl Fn() -> bool) {
    let start = Instant::now();
    while !check() {
        assert!(start.elapsed() < Duration::from_secs(15), "{what}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn background(command: &str) -> Value {
    json!({"command": command, "background": true})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_runs_in_the_background_answers_and_is_stopped() {
    let marker = long_sleep(1);
    let port = free_port();
    let serve = format!("python3 -u -m http.server {port} --bind 127.0.0.1");
    let script = vec![
        Reply::tools(&[("r", "run_command", background(&serve))]),
        Reply::text(&["started"]),
        Reply::tools(&[("o", "command_output", json!({"id": "bg-1"}))]),
        Reply::tools(&[("s", "stop_command", json!({"id": "bg-1"}))]),
        Reply::text(&["stopped"]),
        Reply::tools(&[("l", "run_command", background(&marker))]),
        Reply::text(&["left running"]),
    ];
    let (mock, _ws, mut agent, session, _editor) =
        tool_session(script, json!({}), "full-access").await;
    let (answer, updates) = agent.prompt(&session, "start the server").await;
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    let started = tool_result(&mock.requests()[1], "r");
    assert!(started.contains("Started as `bg-1`"), "{started}");
    assert!(
        started.contains("keeps running in the background"),
        "{started}"
    );
    // The call stays in progress in the editor while the server runs.
    let statuses: Vec<&Value> = updates
        .iter()
        .map(|u| &u["params"]["update"])
        .filter(|u| u["toolCallId"] == "r" && u.get("status").is_some())
        .map(|u| &u["status"])
        .collect();
    assert!(!statuses.contains(&&json!("completed")), "{statuses:?}");

    // It answers a request after the turn ended.
    let address = format!("127.0.0.1:{port}");
    until("the server listens", || {
        std::net::TcpStream::connect(&address).is_ok()
    })
    .await;
    let page = tokio::task::spawn_blocking(move || {
        use std::io::{Read, Write};
        let mut s = std::net::TcpStream::connect(&address).unwrap();
        s.write_all(b"GET /from-the-test HTTP/1.0\r\n\r\n").unwrap();
        let mut out = String::new();
        let _ = s.read_to_string(&mut out);
        out
    })
    .await
    .unwrap();
    assert!(page.starts_with("HTTP/1.0 404"), "{page}");

    let (answer, updates) = agent.prompt(&session, "read it, then stop it").await;
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    let requests = mock.requests();
    let output = tool_result(&requests[3], "o");
    assert!(output.contains("It is still running"), "{output}");
    assert!(output.contains("/from-the-test"), "{output}");
    let stopped = tool_result(&requests[4], "s");
    assert!(stopped.contains("Stopped."), "{stopped}");
    until("the server is gone", || !running(&serve)).await;
    assert!(std::net::TcpStream::connect(format!("127.0.0.1:{port}")).is_err());
    // Its call ended when it did: the process's end is noticed by the job's own watcher,
    // so its update may follow the turn's answer by a moment on a busy machine.
    let ended = |u: &Value| {
        u["params"]["update"]["toolCallId"] == "r" && u["params"]["update"]["status"] == "failed"
    };
    let mut updates = updates;
    let waited = Instant::now();
    while !updates.iter().any(ended) {
        assert!(waited.elapsed() < Duration::from_secs(15), "{updates:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
        updates.extend(agent.drain());
    }

    // `_tandem/status` lists them; closing the session stops what is left.
    agent.prompt(&session, "leave one running").await;
    until("sleep runs", || running(&marker)).await;
    let status = agent.request_ok("_tandem/status", json!({})).await;
    let listed = &status["sessions"][0]["backgroundCommands"];
    assert_eq!(listed[0]["id"], "bg-1");
    assert_eq!(listed[0]["running"], false);
    assert_eq!(listed[1]["command"], marker.as_str());
    assert_eq!(listed[1]["running"], true);
    agent
        .request_ok("session/close", json!({"sessionId": session}))
        .await;
    until("closing stopped it", || !running(&marker)).await;
    agent.assert_valid();
}

/// In an editor with terminals, the command runs in one the user watches; the editor's
/// output is what command_output reads; closing the session kills and releases it. A turn's
/// cancel leaves it running.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_the_editors_terminal_and_a_cancelled_turn_leaves_it_running() {
    let marker = long_sleep(2);
    let script = vec![
        Reply::tools(&[(
            "r",
            "run_command",
            background(&format!("echo first words; {marker}")),
        )]),
        Reply::text(&["started"]),
        Reply::tools(&[("o", "command_output", json!({"id": "bg-1"}))]),
        Reply::text(&["read"]),
    ];
    let (mock, _ws, mut agent, session, editor) =
        tool_session(script, json!({"terminal": true}), "full-access").await;
    agent.prompt(&session, "start").await;
    assert_eq!(editor.params_of("terminal/create").len(), 1);
    assert!(
        editor.params_of("terminal/release").is_empty(),
        "kept for the user"
    );
    until("it runs", || running(&marker)).await;
    agent.prompt(&session, "read").await;
    let output = tool_result(&mock.requests()[3], "o");
    assert!(
        output.contains("first words") && output.contains("still running"),
        "{output}"
    );
    // A prompt cancelled meanwhile does not stop it.
    mock.push(Reply::text(&["slow"; 100]).slow(Duration::from_millis(50)));
    let pending = agent.start_prompt(&session, "something else").await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    agent
        .notify("session/cancel", json!({"sessionId": session}))
        .await;
    crate::common::response(pending).await;
    assert!(running(&marker), "a cancelled turn leaves it");
    agent
        .request_ok("session/close", json!({"sessionId": session}))
        .await;
    until("closing stopped it", || !running(&marker)).await;
    until("the terminal is released", || {
        editor.params_of("terminal/release").len() == 1
    })
    .await;
    agent.assert_valid();
}

/// A background command left running in the editor's terminal: the mock and workspace to
/// keep, the agent, its editor and the command's marker.
async fn left_in_a_terminal(
    n: u32,
) -> (
    crate::common::MockModel,
    crate::common::Workspace,
    crate::common::Agent,
    std::sync::Arc<crate::common::editor::FakeEditor>,
    String,
) {
    let marker = long_sleep(n);
    let script = vec![
        Reply::tools(&[("r", "run_command", background(&marker))]),
        Reply::text(&["started"]),
    ];
    let (mock, ws, mut agent, session, editor) =
        tool_session(script, json!({"terminal": true}), "full-access").await;
    agent.prompt(&session, "start").await;
    assert_eq!(editor.params_of("terminal/create").len(), 1);
    until("it runs", || running(&marker)).await;
    (mock, ws, agent, editor, marker)
}

/// The terminal was killed, then released, once each (`stderr` is the agent's).
fn killed_and_released(editor: &crate::common::editor::FakeEditor, stderr: &str) {
    let ending: Vec<String> = editor
        .methods()
        .into_iter()
        .filter(|m| m == "terminal/kill" || m == "terminal/release")
        .collect();
    assert_eq!(ending, ["terminal/kill", "terminal/release"], "{stderr}");
    let kill = &editor.params_of("terminal/kill")[0];
    assert_eq!(kill["terminalId"], "term-1", "{kill}");
}

/// SIGTERM: the editor, still there, is asked to kill and release the terminal before tandem
/// exits.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_kills_and_releases_the_editors_terminal() {
    let (_mock, _ws, agent, editor, marker) = left_in_a_terminal(3).await;
    let (status, stderr) = agent.stop_with(nix::sys::signal::Signal::SIGTERM).await;
    assert!(status.success(), "{status}\n{stderr}");
    killed_and_released(&editor, &stderr);
    until("the editor killed it", || !running(&marker)).await;
}

/// The end of input: no answer can come back, but the editor may still read, so the kill and
/// the release are written all the same (and tandem does not wait for answers).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_end_of_input_still_kills_and_releases_the_editors_terminal() {
    let (_mock, _ws, mut agent, editor, marker) = left_in_a_terminal(4).await;
    let started = Instant::now();
    agent.close_stdin().await;
    let (status, stderr) = agent.dies().await;
    assert!(status.success(), "{status}\n{stderr}");
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    killed_and_released(&editor, &stderr);
    until("the editor killed it", || !running(&marker)).await;
}

/// The end of input while a command runs in the foreground in the editor's terminal: waiting
/// for its exit fails at once (no answer can come), and it is killed and released all the
/// same, not left running in the editor.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_end_of_input_kills_a_foreground_command_in_the_editors_terminal_too() {
    let marker = long_sleep(5);
    let script = vec![
        Reply::tools(&[("r", "run_command", json!({"command": marker}))]),
        Reply::text(&["after"]),
    ];
    let (_mock, _ws, mut agent, session, editor) =
        tool_session(script, json!({"terminal": true}), "full-access").await;
    let _pending = agent.start_prompt(&session, "run it").await;
    until("it runs", || running(&marker)).await;
    // tandem has the terminal's id (it waits for its exit): the editor answered its creation.
    editor.wait_for("terminal/wait_for_exit").await;
    agent.close_stdin().await;
    let (status, stderr) = agent.dies().await;
    assert!(status.success(), "{status}\n{stderr}");
    killed_and_released(&editor, &stderr);
    until("the editor killed it", || !running(&marker)).await;
}
