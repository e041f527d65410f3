//! tandem killed while it forks a large session (tens of MB), at random moments, round after
//! round. A fork's copy is written under a partial name and renamed into place only when it
//! is whole and synced, so after every kill:
//!
//! - no transcript in `sessions/` is a partial copy (each is the source or a whole fork);
//! - a new process lists no partial copy, cannot open one by its id, and has removed the
//!   partial files the killed ones left;
//! - a fork that completed loads whole (every prompt replayed).
//!
//! One round also starts a second tandem while the first is still writing its fork: the
//! second's start must leave a fork in progress alone. Replay a run's moments with
//! `TANDEM_FORK_KILL_SEED`; `--nocapture` shows where the kills landed.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::dice::Dice;
use crate::common::{Agent, MockModel, Reply, Workspace, joined, path_str};

/// The large session: this many prompts, each answered with this many bytes.
const PROMPTS: usize = 240;
const ANSWER: usize = 100 * 1024;
/// Kill rounds.
const ROUNDS: usize = 8;

/// The data directory's sessions.
fn sessions(ws: &Workspace) -> PathBuf {
    ws.home().join("data/sessions")
}

/// The names in the sessions directory.
fn names(ws: &Workspace) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(sessions(ws))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// Lines of a transcript file.
fn line_count(path: &Path) -> usize {
    std::fs::read_to_string(path).unwrap().lines().count()
}

/// A stored session with [`PROMPTS`] exchanges of [`ANSWER`] bytes each: one real exchange
/// through tandem, its records then copied (with other texts) to make the rest. Returns its
/// id and how many lines its transcript has.
async fn large_session(ws: &Workspace, env: &[(String, String)]) -> (String, usize) {
    let mut agent = Agent::spawn(env, &[]);
    let session = agent.open_session(&ws.project()).await;
    let (r, _) = agent.prompt(&session, "prompt 0").await;
    assert_eq!(r["result"]["stopReason"], "end_turn", "{r}");
    let (code, _) = agent.shutdown().await;
    assert!(code.success());
    let path = sessions(ws).join(format!("{session}.jsonl"));
    let text = std::fs::read_to_string(&path).unwrap();
    let kind = |line: &str| {
        serde_json::from_str::<Value>(line).unwrap()["type"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let lines: Vec<&str> = text.lines().collect();
    let user = lines.iter().position(|l| kind(l) == "user").unwrap();
    let assistant = lines.iter().position(|l| kind(l) == "assistant").unwrap();
    assert!(user < assistant, "{text}");
    let filler = "lorem ipsum dolor sit amet ".repeat(ANSWER / 27);
    let mut out = String::with_capacity(PROMPTS * (ANSWER + 1024));
    for line in &lines[..user] {
        out.push_str(line);
        out.push('\n');
    }
    for i in 0..PROMPTS {
        out.push_str(&lines[user].replace("prompt 0", &format!("prompt {i}")));
        out.push('\n');
        for line in &lines[user + 1..=assistant] {
            out.push_str(&line.replace("answer 0", &format!("answer {i} {filler}")));
            out.push('\n');
        }
    }
    for line in &lines[assistant + 1..] {
        out.push_str(line);
        out.push('\n');
    }
    std::fs::write(&path, &out).unwrap();
    assert!(out.len() > 20 << 20, "{} bytes", out.len());
    (session, out.lines().count())
}

/// Checks what a kill left in the sessions directory: every transcript but `source` is a
/// whole fork (at least `lines` lines); returns the partial files left, and how many whole forks.
fn after_kill(ws: &Workspace, source: &str, lines: usize, seed: u64) -> (Vec<String>, usize) {
    let mut partial = Vec::new();
    let mut whole = 0;
    for name in names(ws) {
        if name.starts_with(".fork-") {
            partial.push(name);
            continue;
        }
        let Some(id) = name.strip_suffix(".jsonl") else {
            continue;
        };
        if id == source {
            continue;
        }
        // Whole: every record of the source (opening it may have added a record or two).
        let n = line_count(&sessions(ws).join(&name));
        assert!(
            n >= lines,
            "{name} is a partial copy ({n} of {lines} lines) under a session's name (seed {seed})"
        );
        whole += 1;
    }
    (partial, whole)
}

/// The prompts a load of `session` replays.
async fn replayed_prompts(agent: &mut Agent, ws: &Workspace, session: &str) -> usize {
    let (_, replayed) = agent
        .open_stored("session/load", session, &ws.project())
        .await;
    joined(&replayed, "user_message_chunk")
        .matches("prompt ")
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_killed_fork_leaves_no_partial_session_and_the_next_start_removes_its_leftovers() {
    let ws = Workspace::new();
    let mock = MockModel::start(vec![Reply::text(&["answer 0"])]).await;
    let env = ws.env(&mock);
    let (source, lines) = large_session(&ws, &env).await;
    let (mut dice, seed) = Dice::from_env("TANDEM_FORK_KILL_SEED");

    // One fork to its end: how long one takes, and that it is whole.
    let mut agent = Agent::spawn(&env, &[]).patient(Duration::from_secs(120));
    agent.initialize().await;
    let began = Instant::now();
    let forked = agent
        .request_ok("_tandem/session/fork", json!({"sessionId": source}))
        .await["sessionId"]
        .as_str()
        .unwrap()
        .to_string();
    let took = began.elapsed();
    assert!(line_count(&sessions(&ws).join(format!("{forked}.jsonl"))) >= lines);
    agent.kill().await;

    let mut killed_mid_write = 0;
    let mut completed = vec![forked];
    for round in 0..ROUNDS {
        let mut agent = Agent::spawn(&env, &[]);
        agent.initialize().await;
        let (_, answer) = agent
            .start_request("_tandem/session/fork", json!({"sessionId": source}))
            .await;
        // Anywhere from before the copy starts to a little after a fork usually ends.
        let delay = Duration::from_micros(dice.below(took.as_micros() as u64 * 11 / 10));
        tokio::time::sleep(delay).await;
        agent.kill().await;
        if let Ok(Ok(answer)) = tokio::time::timeout(Duration::ZERO, answer).await
            && let Some(id) = answer["result"]["sessionId"].as_str()
        {
            completed.push(id.to_string());
        }
        let (partial, _) = after_kill(&ws, &source, lines, seed);
        killed_mid_write += usize::from(!partial.is_empty());
        #[allow(clippy::print_stderr)]
        {
            eprintln!(
                "round {round}: killed {delay:?} into a fork that takes {took:?}; left {partial:?}"
            );
        }

        // The next start: the partial files are gone, none is listed or opens.
        let mut again = Agent::spawn(&env, &[]);
        again.initialize().await;
        let left: Vec<String> = names(&ws)
            .into_iter()
            .filter(|n| n.starts_with(".fork-"))
            .collect();
        assert!(
            left.is_empty(),
            "left after a restart: {left:?} (seed {seed})"
        );
        let listed = again.request_ok("session/list", json!({})).await;
        for s in listed["sessions"].as_array().unwrap() {
            let id = s["sessionId"].as_str().unwrap();
            let file = sessions(&ws).join(format!("{id}.jsonl"));
            assert!(line_count(&file) >= lines, "{id} listed (seed {seed})");
        }
        for name in &partial {
            // `.fork-<uuid>-<random>.partial`: the id the fork would have had.
            let id = &name[".fork-".len()..".fork-".len() + 36];
            let r = again
                .request(
                    "session/resume",
                    json!({"sessionId": id, "cwd": path_str(&ws.project()), "mcpServers": []}),
                )
                .await;
            assert!(r.get("error").is_some(), "a partial fork opened: {r}");
        }
        again.shutdown().await;
    }
    #[allow(clippy::print_stderr)]
    {
        eprintln!(
            "{killed_mid_write} of {ROUNDS} kills left a partial file (all removed at the next start), seed {seed}"
        );
    }

    // A fork in progress is another live process's: a tandem starting meanwhile leaves it.
    let mut writer = Agent::spawn(&env, &[]).patient(Duration::from_secs(120));
    writer.initialize().await;
    let (_, answer) = writer
        .start_request("_tandem/session/fork", json!({"sessionId": source}))
        .await;
    let waited = Instant::now();
    while !names(&ws).iter().any(|n| n.starts_with(".fork-")) && waited.elapsed() < took * 2 {
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    let mut starting = Agent::spawn(&env, &[]);
    starting.initialize().await;
    let answer = tokio::time::timeout(Duration::from_secs(120), answer)
        .await
        .unwrap()
        .unwrap();
    let id = answer["result"]["sessionId"]
        .as_str()
        .unwrap_or_else(|| panic!("the fork in progress failed: {answer}"));
    assert!(line_count(&sessions(&ws).join(format!("{id}.jsonl"))) >= lines);
    completed.push(id.to_string());
    starting.shutdown().await;
    writer.shutdown().await;

    // Every fork that completed loads whole.
    let mut agent = Agent::spawn(&env, &[]).patient(Duration::from_secs(120));
    agent.initialize().await;
    let last = completed.last().unwrap().clone();
    assert_eq!(replayed_prompts(&mut agent, &ws, &last).await, PROMPTS);
    for id in &completed {
        let file = sessions(&ws).join(format!("{id}.jsonl"));
        assert!(line_count(&file) >= lines, "{id}");
    }
    agent.shutdown().await;
}
