//! tandem exiting while records wait in memory for a full disk (`full_disk.rs` shows how they
//! come to wait). The exit tries them again for a few seconds: when space comes back
//! meanwhile they are written before tandem ends; when it does not, tandem says exactly what
//! is lost (which session, how many records, of what kinds) on stderr and, while the
//! connection is up, to the editor. Whatever ends it: stdin closing, a stop signal, the end
//! of a `tandem exec` run.
//!
//! Mounting needs root: CI runs as root and sets `TANDEM_TMPFS_REQUIRED=1`; elsewhere the
//! tests say why they did not run.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::tmpfs::Tiny;
use crate::common::{Agent, MockModel, Reply, Workspace, joined, path_str};

/// A prompt of more than a page.
fn long(n: &str) -> String {
    format!("prompt {n}: {}", "words ".repeat(1000))
}

/// An agent whose data directory is on `tiny`, with a session that has had "prompt one"
/// answered (on disk), then, with the disk full, `long("two")` answered (in memory only).
/// Returns the environment, the agent, the session and how many records wait.
async fn turn_on_a_full_disk(
    ws: &Workspace,
    tiny: &Tiny,
    mock: &MockModel,
) -> (Vec<(String, String)>, Agent, String, u64, PathBuf) {
    let mut env = ws.env(mock);
    env.push(("TANDEM_HOME".into(), path_str(&tiny.0.join("data"))));
    let mut agent = Agent::spawn(&env, &[]);
    let session = agent.open_session(&ws.project()).await;
    let (response, _) = agent.prompt(&session, "prompt one").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    let filler = tiny.fill();
    let (response, updates) = agent.prompt(&session, &long("two")).await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    assert!(joined(&updates, "agent_message_chunk").contains("cannot write this session"));
    let status = agent.request_ok("_tandem/status", json!({})).await;
    let waiting = status["sessions"][0]["unsaved"]["records"]
        .as_u64()
        .unwrap();
    assert!(waiting >= 2, "{status}");
    (env, agent, session, waiting, filler)
}

fn transcript(tiny: &Tiny, session: &str) -> PathBuf {
    tiny.0.join(format!("data/sessions/{session}.jsonl"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn records_a_full_disk_still_refuses_at_exit_are_named_on_stderr_and_to_the_editor() {
    let ws = Workspace::new();
    let Some(tiny) = Tiny::mount(&ws.home().join("tiny"), "256k") else {
        return;
    };
    let mock = MockModel::start(vec![
        Reply::text(&["Answer one."]),
        Reply::text(&["Answer two."]),
    ])
    .await;
    let (_env, mut agent, session, waiting, _filler) = turn_on_a_full_disk(&ws, &tiny, &mock).await;

    // A stop signal, the connection still up: the editor hears of it before tandem ends.
    let began = Instant::now();
    let pid = nix::unistd::Pid::from_raw(agent.pid() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
    let said = joined(&agent.messages_until_closed().await, "agent_message_chunk");
    let (code, stderr) = agent.dies().await;
    assert!(code.success(), "{code:?}\n{stderr}");
    let named = format!("could not write the last {waiting} records of session {session}");
    assert!(
        said.contains(&named) && said.contains("No space left on device"),
        "the editor was told: {said:?}"
    );
    assert!(
        said.contains("user ×1") && said.contains("assistant"),
        "{said}"
    );
    assert!(
        stderr.contains(&named) && stderr.contains("No space left on device"),
        "{stderr}"
    );
    // It waited for the disk first, boundedly.
    assert!(stderr.contains("waiting for the disk"), "{stderr}");
    assert!(
        began.elapsed() < Duration::from_secs(15),
        "{:?}",
        began.elapsed()
    );
    // And the loss is real: the transcript ends before the second prompt.
    let text = std::fs::read_to_string(transcript(&tiny, &session)).unwrap();
    assert!(text.contains("prompt one") && !text.contains("prompt two"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn records_held_for_a_full_disk_are_written_when_space_returns_during_the_exit() {
    let ws = Workspace::new();
    let Some(tiny) = Tiny::mount(&ws.home().join("tiny"), "256k") else {
        return;
    };
    let mock = MockModel::start(vec![
        Reply::text(&["Answer one."]),
        Reply::text(&["Answer two."]),
    ])
    .await;
    let (env, mut agent, session, _, filler) = turn_on_a_full_disk(&ws, &tiny, &mock).await;

    // The editor closes stdin; space comes back while tandem is on its way out.
    agent.close_stdin().await;
    let waited = Instant::now();
    while !agent.stderr().contains("waiting for the disk")
        && agent.is_running()
        && waited.elapsed() < Duration::from_secs(10)
    {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    std::fs::remove_file(&filler).unwrap();
    let said = joined(&agent.messages_until_closed().await, "agent_message_chunk");
    let (code, stderr) = agent.dies().await;
    assert!(code.success(), "{code:?}\n{stderr}");
    assert!(!said.contains("could not write"), "{said}");
    assert!(!stderr.contains("could not write"), "{stderr}");

    // Written whole before the exit: a new process loads both turns.
    let text = std::fs::read_to_string(transcript(&tiny, &session)).unwrap();
    for line in text.lines() {
        serde_json::from_str::<Value>(line).unwrap_or_else(|e| panic!("{e}: {line}"));
    }
    assert!(
        text.contains("prompt two") && text.contains("Answer two."),
        "the records held at exit were not written:\n{stderr}"
    );
    let mut again = Agent::spawn(&env, &[]);
    again.initialize().await;
    let (_, replayed) = again
        .open_stored("session/load", &session, &ws.project())
        .await;
    assert_eq!(
        joined(&replayed, "user_message_chunk"),
        format!("prompt one{}", long("two"))
    );
    assert_eq!(
        joined(&replayed, "agent_message_chunk"),
        "Answer one.Answer two."
    );
    again.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_exec_run_on_a_full_disk_says_what_it_could_not_write() {
    let ws = Workspace::new();
    let Some(tiny) = Tiny::mount(&ws.home().join("tiny"), "256k") else {
        return;
    };
    let mock = MockModel::start(vec![Reply::text(&["Answered."])]).await;
    let mut env = ws.env(&mock);
    env.push(("TANDEM_HOME".into(), path_str(&tiny.0.join("data"))));
    std::fs::create_dir_all(tiny.0.join("data/sessions")).unwrap();
    let _filler = tiny.fill();
    let project = ws.project();
    let (code, stdout, stderr) = tokio::task::spawn_blocking(move || {
        crate::common::run_tandem(&["exec", "hello"], &env, None, Some(&project))
    })
    .await
    .unwrap();
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("Answered."), "{stdout}");
    assert!(
        stderr.contains("could not write the last") && stderr.contains("records of session"),
        "{stderr}"
    );
    assert!(stderr.contains("user ×1"), "{stderr}");
}
