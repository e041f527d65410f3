//! The Windows build, end to end, under wine: the same driver, mock model and fake editor as
//! every other suite, with the agent started as `wine tandem.exe` (`TANDEM_TEST_WINE_EXE`;
//! `tests/windows/run.sh` builds the binary and runs these). Paths cross as `Z:\...`, and the
//! shell is `cmd.exe`, configured: wine's `powershell.exe` is a stub that runs nothing, so
//! the PowerShell tandem would pick on Windows cannot be tried here.
//!
//! Ignored in a plain `cargo test`: they need the Windows binary, which only the script
//! builds. The rest of the suite does not run under wine: it spells paths and shell lines
//! the Unix way throughout, and sends Unix signals.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::acp_client::Agent;
use crate::common::calls::{call_events, final_status, tool_result};
use crate::common::editor::full_caps;
use crate::common::{Reply, path_str, session_with_env, wine};

/// A session of the Windows build over the `small` fixture, with commands run by `cmd`.
async fn windows_session(
    script: Vec<Reply>,
    caps: Value,
    mode: &str,
) -> crate::common::EditorSession {
    require_wine();
    session_with_env("small", script, caps, mode, |ws| {
        let config = ws.write(
            "home/tandem.toml",
            "shell = [\"cmd.exe\", \"/D\", \"/S\", \"/C\"]\n",
        );
        vec![("TANDEM_CONFIG".to_string(), path_str(&config))]
    })
    .await
}

fn require_wine() {
    assert!(
        wine::active(),
        "set TANDEM_TEST_WINE_EXE to a tandem.exe (tests/windows/run.sh does)"
    );
}

/// A script that reads, writes, edits, lists, globs, greps and runs one command, then ends.
fn every_tool(command: &str) -> Vec<Reply> {
    vec![
        Reply::tools(&[("r", "read_file", json!({"path": "src\\lib.rs"}))]),
        Reply::tools(&[(
            "w",
            "write_file",
            json!({"path": "notes\\new.txt", "content": "line one\r\nline two\r\n"}),
        )]),
        Reply::tools(&[(
            "e",
            "edit_file",
            json!({"path": "src/lib.rs", "old_string": "Says hello.", "new_string": "Says hi."}),
        )]),
        Reply::tools(&[("l", "list_dir", json!({"path": "src"}))]),
        Reply::tools(&[("g", "glob", json!({"pattern": "src\\*.rs"}))]),
        Reply::tools(&[("s", "grep", json!({"pattern": "greeting"}))]),
        Reply::tools(&[("c", "run_command", json!({"command": command}))]),
        Reply::text(&["done"]),
    ]
}

fn assert_every_tool(mock_requests: &[crate::common::mock_model::Recorded], updates: &[Value]) {
    for id in ["r", "w", "e", "l", "g", "s", "c"] {
        assert_eq!(final_status(updates, id), "completed", "{id}: {updates:?}");
    }
    let result = |i: usize, id: &str| tool_result(&mock_requests[i], id);
    assert!(result(1, "r").contains("Says hello."), "{}", result(1, "r"));
    assert!(result(4, "l").contains("lib.rs"), "{}", result(4, "l"));
    let globbed = result(5, "g");
    assert!(
        globbed.contains("lib.rs") && globbed.contains("main.rs"),
        "{globbed}"
    );
    assert!(result(6, "s").contains("greeting"), "{}", result(6, "s"));
    let ran = result(7, "c");
    assert!(ran.contains("hello from cmd"), "{ran}");
    // Titles and locations name Windows paths, without a `\\?\` prefix.
    let read = call_events(updates, "r");
    // The call is shown as soon as it starts streaming; its location comes with its arguments.
    let location = read
        .iter()
        .find_map(|event| event["locations"][0]["path"].as_str())
        .unwrap_or_default();
    assert!(
        location.starts_with("Z:\\") && location.ends_with("src\\lib.rs"),
        "{location}"
    );
    assert!(!location.contains("\\\\?\\"), "{location}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the Windows build under wine: tests/windows/run.sh"]
async fn local_tools_and_a_command_run_on_windows() {
    let (mock, ws, mut agent, session, editor) =
        windows_session(every_tool("echo hello from cmd"), json!({}), "full-access").await;
    let (response, updates) = agent.prompt(&session, "use every tool").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    assert_every_tool(&mock.requests(), &updates);
    let project = ws.project();
    assert_eq!(
        std::fs::read_to_string(project.join("notes/new.txt")).unwrap(),
        "line one\r\nline two\r\n"
    );
    assert!(
        std::fs::read_to_string(project.join("src/lib.rs"))
            .unwrap()
            .contains("Says hi.")
    );
    assert!(
        editor.methods().is_empty(),
        "no editor capabilities: all local"
    );
    agent.assert_valid();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the Windows build under wine: tests/windows/run.sh"]
async fn the_editors_files_and_terminal_serve_the_windows_build() {
    let (mock, ws, mut agent, session, editor) = windows_session(
        every_tool("echo hello from cmd"),
        full_caps(),
        "full-access",
    )
    .await;
    let (response, updates) = agent.prompt(&session, "use every tool").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    assert_every_tool(&mock.requests(), &updates);
    let methods = editor.methods();
    for method in ["fs/read_text_file", "fs/write_text_file", "terminal/create"] {
        assert!(
            methods.iter().any(|m| m == method),
            "{method} not in {methods:?}"
        );
    }
    assert!(
        std::fs::read_to_string(ws.project().join("src/lib.rs"))
            .unwrap()
            .contains("Says hi.")
    );
    agent.assert_valid();
}

/// Linux processes whose command line holds `marker` (wine runs each Windows process as one).
fn processes_with(marker: &str) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        let text = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        if text.contains(marker) && !text.contains("cargo") {
            found.push(text);
        }
    }
    found
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the Windows build under wine: tests/windows/run.sh"]
async fn cancelling_a_running_command_ends_its_process_tree() {
    require_wine();
    let marker = format!("tandem-wine-{}", std::process::id());
    // cmd starts a second cmd, which starts ping: three processes, two levels down.
    let command = format!("cmd /c \"ping -n 120 127.0.0.1 > nul & rem {marker}\"");
    let script = vec![
        Reply::tools(&[("c", "run_command", json!({"command": command}))]),
        Reply::text(&["after"]),
    ];
    let (_mock, _ws, mut agent, session, _editor) =
        windows_session(script, json!({}), "full-access").await;
    let pending = agent.start_prompt(&session, "run it").await;
    let started = Instant::now();
    while processes_with(&marker).is_empty() {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the command never started"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    agent
        .notify("session/cancel", json!({"sessionId": session}))
        .await;
    let response = crate::common::acp_client::response(pending).await;
    assert_eq!(response["result"]["stopReason"], "cancelled", "{response}");
    let stopped = Instant::now();
    while !processes_with(&marker).is_empty() {
        assert!(
            stopped.elapsed() < Duration::from_secs(30),
            "still running: {:?}",
            processes_with(&marker)
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    agent.assert_valid();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the Windows build under wine: tests/windows/run.sh"]
async fn a_session_loads_in_a_second_process() {
    let (_mock, ws, mut agent, session, _editor) =
        windows_session(vec![Reply::text(&["first answer"])], json!({}), "ask").await;
    let (response, _) = agent.prompt(&session, "first question").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    let env = ws.base_env();
    agent.shutdown().await;

    let mut second = Agent::spawn(&env, &["--replay", &path_str(&fixture("demo/hello.json"))]);
    second.initialize().await;
    let (result, updates) = second
        .open_stored("session/load", &session, &ws.project())
        .await;
    assert!(result.get("modes").is_some(), "{result}");
    let text: Vec<String> = updates
        .iter()
        .filter_map(|u| u["params"]["update"]["content"]["text"].as_str())
        .map(String::from)
        .collect();
    assert!(text.iter().any(|t| t == "first question"), "{text:?}");
    assert!(text.iter().any(|t| t == "first answer"), "{text:?}");
    second.assert_valid();
}

/// The Windows build reads this machine's addresses its own way (`GetAdaptersAddresses`,
/// which wine answers from the host's interfaces): a service on the host's own interface
/// address is refused in full-access, before any connection is made.
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the Windows build under wine: tests/windows/run.sh"]
async fn web_fetch_refuses_this_machines_own_address_on_windows() {
    let Some(service) = super::web::own_service().await else {
        return;
    };
    let script = vec![
        Reply::tools(&[("a", "web_fetch", json!({"url": service.url}))]),
        Reply::text(&["refused"]),
    ];
    let (mock, _ws, mut agent, session, _editor) =
        windows_session(script, json!({}), "full-access").await;
    let (response, _) = agent.prompt(&session, "read the local service").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    // Windows names the interface its own way.
    super::web::assert_refused_unreached(&tool_result(&mock.requests()[1], "a"), &service, false);
    agent.assert_valid();
}

fn fixture(name: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(name)
}
