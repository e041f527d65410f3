//! Nothing a command starts outlives it, its session or tandem (Linux): a sandboxed command
//! runs as the child of the first process of a PID namespace of its own, which the kernel
//! empties when that process ends, and the sandbox is killed with tandem, SIGKILL included;
//! outside the sandbox, `tandem tie` reaps and kills what the command leaves when tandem dies.

use std::time::{Duration, Instant};

use serde_json::json;

use crate::common::calls::tool_result;
use crate::common::{Reply, session_with_env, tool_session};
use crate::suite::sandbox::sandbox_here;

/// A `sleep` no other run shares: its length holds this process's id and `n`.
fn marked_sleep(n: u32) -> String {
    format!("sleep {}.{n}7", std::process::id())
}

/// Whether any process's command line holds `marker`.
fn running(marker: &str) -> bool {
    std::fs::read_dir("/proc").unwrap().flatten().any(|entry| {
        std::fs::read(entry.path().join("cmdline")).is_ok_and(|cmd| {
            String::from_utf8_lossy(&cmd)
                .replace('\0', " ")
                .contains(marker)
        })
    })
}

/// Waits up to ten seconds for `check`; whether it came true.
async fn within_ten_seconds(check: impl Fn() -> bool) -> bool {
    let start = Instant::now();
    while !check() {
        if start.elapsed() > Duration::from_secs(10) {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    true
}

/// Starts a quiet background command in a session (sandboxed unless `sandbox` says `off`),
/// kills tandem with SIGKILL, and says whether the command was gone within ten seconds.
async fn outlives_a_killed_tandem(n: u32, sandbox: &str) -> bool {
    let marker = marked_sleep(n);
    let script = vec![
        Reply::tools(&[(
            "bg",
            "run_command",
            json!({"command": marker, "background": true}),
        )]),
        Reply::text(&["left running"]),
    ];
    let env = vec![("TANDEM_SANDBOX".to_string(), sandbox.to_string())];
    let (_mock, _ws, mut agent, session, _editor) =
        session_with_env("small", script, json!({}), "ask", move |_| env).await;
    let (answer, _) = agent.prompt(&session, "start it").await;
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    assert!(
        within_ten_seconds(|| running(&marker)).await,
        "never started"
    );
    let pid = nix::unistd::Pid::from_raw(agent.pid() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGKILL).unwrap();
    !within_ten_seconds(|| !running(&marker)).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_background_command_dies_with_tandem_even_when_tandem_is_killed() {
    if !sandbox_here() {
        return;
    }
    assert!(
        !outlives_a_killed_tandem(1, "workspace-write").await,
        "a sandboxed background command outlived tandem's SIGKILL"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn outside_the_sandbox_too_a_background_command_dies_with_a_killed_tandem() {
    assert!(
        !outlives_a_killed_tandem(4, "off").await,
        "an unsandboxed background command outlived tandem's SIGKILL"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_a_command_sends_off_with_setsid_or_nohup_ends_with_it() {
    if !sandbox_here() {
        return;
    }
    let (setsid, nohup) = (marked_sleep(2), marked_sleep(3));
    let line = format!(
        "setsid {setsid} </dev/null >/dev/null 2>&1 & nohup {nohup} </dev/null >/dev/null 2>&1 & echo sent"
    );
    let script = vec![
        Reply::tools(&[("fg", "run_command", json!({"command": line}))]),
        Reply::text(&["done"]),
    ];
    let (mock, _ws, mut agent, session, _editor) = tool_session(script, json!({}), "ask").await;
    let (answer, _) = agent.prompt(&session, "send them off").await;
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    let result = tool_result(&mock.requests()[1], "fg");
    assert!(result.contains("sent"), "{result}");
    assert!(
        within_ten_seconds(|| !running(&setsid) && !running(&nohup)).await,
        "a process the command sent off outlived it"
    );
    // The session and tandem go on.
    assert!(agent.pid() > 0);
}
