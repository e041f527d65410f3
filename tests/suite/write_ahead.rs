//! Write-ahead changes over real stdio (issue 53): tandem is SIGKILLed at every step of a
//! file change and of an `/undo`, on disk and through an editor's writes, and the next
//! process's `session/load` must leave the transcript and the files agreeing: a change that
//! was made is one `/undo` takes back, one that was not is dropped, a rewind killed part-way
//! is completed (its turn never shown as standing with some of its files put back), and a
//! file someone else changed meanwhile is reported and never overwritten.
//!
//! The on-disk steps are reached with the `test-pauses` feature (`TANDEM_TEST_PAUSE` stops
//! tandem at a named step and says so on stderr); the editor's steps need no hook: the
//! editor's `fs/write_text_file` is held, and the test plays the editor (writing the file
//! or not, answering or not) before it kills tandem.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};

use crate::common::acp_client::response;
use crate::common::editor::{Answer, FakeEditor, full_caps};
use crate::common::tmpfs::Tiny;
use crate::common::{Agent, MockModel, Reply, Workspace};

/// A window wide enough that a 3 MB write is neither refused nor compacted.
const WIDE_WINDOW: &str = "[[models]]\nid = \"mock-model\"\ncontext_window = 100000000\n";

/// An agent on `ws` and `mock` whose editor has `caps`, in `mode`, paused at `pause`.
async fn start(
    ws: &Workspace,
    mock: &MockModel,
    caps: Value,
    mode: &str,
    pause: Option<&str>,
) -> (Agent, Arc<FakeEditor>) {
    let editor = FakeEditor::new();
    let mut env = ws.env(mock);
    env.push(("TANDEM_MODE".into(), mode.into()));
    if let Some(point) = pause {
        env.push(("TANDEM_TEST_PAUSE".into(), point.into()));
    }
    let mut agent = Agent::spawn_with(&env, &[], Some(editor.clone()));
    agent.initialize_with(caps).await;
    (agent, editor)
}

/// A workspace with a wide window and `files` (name, text) in its project.
fn workspace(files: &[(&str, &str)]) -> Workspace {
    let ws = Workspace::new();
    ws.write("home/.config/tandem/config.toml", WIDE_WINDOW);
    for (name, text) in files {
        ws.write(&format!("project/{name}"), text);
    }
    ws
}

async fn new_session(agent: &mut Agent, ws: &Workspace) -> String {
    agent.new_session(&ws.project()).await["sessionId"]
        .as_str()
        .unwrap()
        .to_string()
}

/// A new process loads `id`: the agent, and what the load replayed (as one JSON text, which
/// holds notices however the editor is shown them) with the replayed user prompts.
async fn reload(
    ws: &Workspace,
    mock: &MockModel,
    caps: Value,
    id: &str,
) -> (Agent, String, Vec<String>) {
    let (mut agent, _editor) = start(ws, mock, caps, "accept-edits", None).await;
    let (_, replayed) = agent.open_stored("session/load", id, &ws.project()).await;
    let prompts = replayed
        .iter()
        .filter(|u| u["params"]["update"]["sessionUpdate"] == "user_message_chunk")
        .filter_map(|u| u["params"]["update"]["content"]["text"].as_str())
        .map(str::to_string)
        .collect();
    (agent, Value::from(replayed).to_string(), prompts)
}

/// Waits until tandem says it stopped at `point`.
async fn paused_at(agent: &Agent, point: &str) {
    let marker = format!("test pause reached: {point}");
    for _ in 0..800 {
        if agent.stderr().contains(&marker) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!(
        "tandem never stopped at {point}:\n{}",
        tail(&agent.stderr())
    );
}

fn tail(text: &str) -> &str {
    let mut start = text.len().saturating_sub(4000);
    while !text.is_char_boundary(start) {
        start += 1;
    }
    &text[start..]
}

/// The text a slash command answered with.
async fn slash(agent: &mut Agent, session: &str, line: &str) -> String {
    let (response, updates) = agent.prompt(session, line).await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    crate::common::joined(&updates, "agent_message_chunk")
}

fn write(id: &str, path: &str, content: &str) -> (String, String, Value) {
    (
        id.to_string(),
        "write_file".to_string(),
        json!({"path": path, "content": content}),
    )
}

fn calls(calls: &[(String, String, Value)]) -> Reply {
    let calls: Vec<(&str, &str, Value)> = calls
        .iter()
        .map(|(id, name, args)| (id.as_str(), name.as_str(), args.clone()))
        .collect();
    Reply::tools(&calls)
}

/// `n` bytes of lines, each starting with `tag`.
fn big(tag: &str, n: usize) -> String {
    let mut text = String::with_capacity(n + 64);
    let mut i = 0;
    while text.len() < n {
        text.push_str(&format!("{tag} line {i}: the quick brown fox\n"));
        i += 1;
    }
    text
}

fn read(path: &Path) -> Option<String> {
    std::fs::read_to_string(path).ok()
}

fn transcript(ws: &Workspace, id: &str) -> PathBuf {
    ws.home().join(format!("data/sessions/{id}.jsonl"))
}

/// Every change the transcript records ahead, each with its outcomes' results: the
/// transcript and the files agree only when each has exactly one.
fn outcomes(ws: &Workspace, id: &str) -> Vec<(String, Vec<String>)> {
    let text = std::fs::read_to_string(transcript(ws, id)).unwrap();
    let records: Vec<Value> = text
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .map(|r| {
            if r["type"] == "subagent" {
                r["record"].clone()
            } else {
                r
            }
        })
        .collect();
    records
        .iter()
        .filter(|r| r["type"] == "file_intent")
        .map(|intent| {
            let results = records
                .iter()
                .filter(|r| r["type"] == "file_outcome" && r["id"] == intent["id"])
                .map(|r| r["outcome"]["result"].as_str().unwrap_or("?").to_string())
                .collect();
            (intent["path"].as_str().unwrap_or("").to_string(), results)
        })
        .collect()
}

/// Where a write is killed.
#[derive(Clone, Copy, Debug, PartialEq)]
enum WriteStep {
    /// While the user is asked, before anything is recorded.
    BeforeIntent,
    /// The intent is written; the file is not touched yet.
    Intended,
    /// The file is written; its outcome is not recorded yet.
    Written,
    /// The outcome is queued; the call's result is not.
    Settled,
    /// The turn was answered.
    Answered,
}

/// SIGKILL at every step of a `write_file` of a 3 MB file on disk: after a restart the
/// file holds what the transcript says, the load says what it found, and `/undo` puts a
/// change that was made back.
#[cfg(feature = "test-pauses")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_step_of_a_write_on_disk_killed_leaves_a_change_undo_can_take_back() {
    use WriteStep::*;
    let before = big("before", 3 << 20);
    let after = big("after", 3 << 20);
    for step in [BeforeIntent, Intended, Written, Settled, Answered] {
        let mock = MockModel::start(vec![
            calls(&[write("w1", "big.txt", &after)]),
            Reply::text(&["rewritten"]),
        ])
        .await;
        let ws = workspace(&[("big.txt", &before)]);
        let path = ws.project().join("big.txt");
        let pause = match step {
            Intended => Some("write-intended"),
            Written => Some("write-written"),
            Settled => Some("write-settled"),
            BeforeIntent | Answered => None,
        };
        let (mut agent, editor) = start(&ws, &mock, json!({}), "ask", pause).await;
        if step == BeforeIntent {
            editor.answer_with(&[Answer::Hang]);
        }
        let id = new_session(&mut agent, &ws).await;
        let answered = agent.start_prompt(&id, "rewrite big.txt").await;
        match (step, pause) {
            (BeforeIntent, _) => editor.wait_for("session/request_permission").await,
            (_, Some(point)) => paused_at(&agent, point).await,
            (_, None) => {
                let r = response(answered).await;
                assert_eq!(r["result"]["stopReason"], "end_turn", "{r}");
            }
        }
        agent.kill().await;
        let made = matches!(step, Written | Settled | Answered);
        assert_eq!(
            read(&path).as_deref() == Some(after.as_str()),
            made,
            "{step:?}"
        );

        let (mut agent, shown, _) = reload(&ws, &mock, json!({}), &id).await;
        let found = shown.contains("It looked at them as the session opened");
        match step {
            Intended => assert!(shown.contains("the change was not made"), "{step:?}"),
            Written => assert!(shown.contains("the change was made"), "{step:?}"),
            // The outcome was written, or is found made (the writer may not have had it).
            Settled => assert!(!found || shown.contains("the change was made"), "{step:?}"),
            BeforeIntent | Answered => assert!(!found, "{step:?}: nothing was half done"),
        }
        let expected: &[&str] = match step {
            BeforeIntent => &[],
            Intended => &["not_made"],
            Written | Settled | Answered => &["done"],
        };
        let recorded: Vec<Vec<String>> = outcomes(&ws, &id).into_iter().map(|(_, r)| r).collect();
        let expected: Vec<Vec<String>> = expected.iter().map(|r| vec![r.to_string()]).collect();
        assert_eq!(
            recorded, expected,
            "{step:?}: each change recorded ahead has one outcome"
        );
        let undone = slash(&mut agent, &id, "/undo").await;
        assert_eq!(
            read(&path).as_deref(),
            Some(before.as_str()),
            "{step:?}: /undo leaves big.txt as it was before the turn: {undone}"
        );
        if made {
            assert!(undone.contains("big.txt: put back"), "{step:?}: {undone}");
        }
        agent.shutdown().await;
    }
}

/// The editor writes the file, and tandem is killed before the editor's answer arrives (or
/// before the editor wrote it): after a restart the load says which, and `/undo` puts a
/// change that was made back. On a build that records changes after making them, the change
/// the editor made is one `/undo` knows nothing of.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kill_while_the_editor_writes_leaves_a_change_undo_can_take_back() {
    for editor_wrote in [false, true] {
        let mock = MockModel::start(vec![
            calls(&[write("w1", "notes.txt", "after\n")]),
            Reply::text(&["written"]),
        ])
        .await;
        let ws = workspace(&[("notes.txt", "before\n")]);
        let path = ws.project().join("notes.txt");
        let (mut agent, editor) = start(&ws, &mock, full_caps(), "accept-edits", None).await;
        editor
            .hanging
            .lock()
            .unwrap()
            .push("fs/write_text_file".into());
        let id = new_session(&mut agent, &ws).await;
        let _answered = agent.start_prompt(&id, "rewrite notes").await;
        editor.wait_for("fs/write_text_file").await;
        if editor_wrote {
            let asked = editor.params_of("fs/write_text_file");
            std::fs::write(&path, asked[0]["content"].as_str().unwrap()).unwrap();
        }
        agent.kill().await;

        let (mut agent, shown, _) = reload(&ws, &mock, full_caps(), &id).await;
        let said = if editor_wrote {
            "the change was made"
        } else {
            "the change was not made"
        };
        assert!(
            shown.contains(said),
            "editor wrote: {editor_wrote}: {shown}"
        );
        let undone = slash(&mut agent, &id, "/undo").await;
        assert_eq!(
            read(&path).as_deref(),
            Some("before\n"),
            "editor wrote: {editor_wrote}: {undone}"
        );
        agent.shutdown().await;
    }
}

/// Files of a turn that writes three and creates one.
const TURN_FILES: &[(&str, &str)] = &[("a.txt", "a0\n"), ("b.txt", "b0\n"), ("c.txt", "c0\n")];

/// A session whose first turn ("make them") changes a, b and c and creates new.txt.
async fn turn_of_four(
    caps: Value,
    pause: Option<&str>,
) -> (MockModel, Workspace, Agent, Arc<FakeEditor>, String) {
    let mock = MockModel::start(vec![
        calls(&[
            write("w1", "a.txt", "a1\n"),
            write("w2", "b.txt", "b1\n"),
            write("w3", "c.txt", "c1\n"),
            write("w4", "new.txt", "n1\n"),
        ]),
        Reply::text(&["made"]),
    ])
    .await;
    let ws = workspace(TURN_FILES);
    let (mut agent, editor) = start(&ws, &mock, caps, "accept-edits", pause).await;
    let id = new_session(&mut agent, &ws).await;
    let (r, _) = agent.prompt(&id, "make them").await;
    assert_eq!(r["result"]["stopReason"], "end_turn", "{r}");
    assert_eq!(files(&ws), ["a1\n", "b1\n", "c1\n", "n1\n"]);
    (mock, ws, agent, editor, id)
}

/// What a, b, c and new.txt hold (`-` for no file).
fn files(ws: &Workspace) -> Vec<String> {
    ["a.txt", "b.txt", "c.txt", "new.txt"]
        .iter()
        .map(|name| read(&ws.project().join(name)).unwrap_or_else(|| "-".into()))
        .collect()
}

/// After a restart, the rewind of "make them" that was killed part-way is complete: the
/// turn is out of the conversation, every file is as it was before it, and a second `/undo`
/// finds nothing to take back.
async fn assert_completed(ws: &Workspace, mock: &MockModel, caps: Value, id: &str, step: &str) {
    let (mut agent, shown, prompts) = reload(ws, mock, caps, id).await;
    assert!(
        !prompts.iter().any(|p| p == "make them"),
        "{step}: the turn is not shown as standing: {prompts:?}"
    );
    assert_eq!(files(ws), ["a0\n", "b0\n", "c0\n", "-"], "{step}");
    assert!(
        shown.contains("is complete now"),
        "{step}: the load says it completed the rewind: {shown}"
    );
    let again = slash(&mut agent, id, "/undo").await;
    assert!(again.contains("nothing to rewind"), "{step}: {again}");
    agent.shutdown().await;
}

/// SIGKILL at every step of an on-disk `/undo` of a turn that changed four files: after a
/// restart the rewind is completed (or, killed before it was recorded, the turn stands with
/// all its files), never the turn shown standing with some files put back.
#[cfg(feature = "test-pauses")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_step_of_an_undo_on_disk_killed_is_completed_on_load() {
    let steps = [
        "rewind-decided",
        "rewind-intended",
        "rewind-restored#1",
        "rewind-restored#2",
        "rewind-restored#3",
        "rewind-restored#4",
        "answered",
    ];
    for step in steps {
        let pause = (step != "answered").then_some(step);
        let (mock, ws, mut agent, _editor, id) = turn_of_four(json!({}), pause).await;
        let undone = agent.start_prompt(&id, "/undo").await;
        match pause {
            Some(point) => paused_at(&agent, point).await,
            None => {
                let r = response(undone).await;
                assert_eq!(r["result"]["stopReason"], "end_turn", "{r}");
            }
        }
        agent.kill().await;
        if step == "rewind-decided" {
            // Nothing was recorded or touched: the turn stands, with every file it wrote.
            assert_eq!(files(&ws), ["a1\n", "b1\n", "c1\n", "n1\n"], "{step}");
            let (mut agent, shown, prompts) = reload(&ws, &mock, json!({}), &id).await;
            assert!(prompts.iter().any(|p| p == "make them"), "{step}");
            assert!(!shown.contains("It looked at them"), "{step}");
            slash(&mut agent, &id, "/undo").await;
            assert_eq!(files(&ws), ["a0\n", "b0\n", "c0\n", "-"], "{step}");
            agent.shutdown().await;
        } else if step == "answered" {
            let (agent, shown, prompts) = reload(&ws, &mock, json!({}), &id).await;
            assert!(prompts.is_empty() && !shown.contains("It looked at them"));
            assert_eq!(files(&ws), ["a0\n", "b0\n", "c0\n", "-"], "{step}");
            agent.shutdown().await;
        } else {
            assert_completed(&ws, &mock, json!({}), &id, step).await;
        }
    }
}

/// The `fs/write_text_file` requests of an `/undo`, as they come: each answered by the test
/// playing the editor (the file written, then the answer), until the `stop`-th (0-based),
/// which is held, written first when `write_it`.
async fn play_editor_writes(agent: &mut Agent, stop: usize, write_it: bool) {
    let mut seen = 0;
    loop {
        let message = tokio::time::timeout(Duration::from_secs(20), agent.next_message())
            .await
            .expect("the editor is asked to write");
        if message["method"] != "fs/write_text_file" {
            continue;
        }
        let params = &message["params"];
        let path = PathBuf::from(params["path"].as_str().unwrap());
        let content = params["content"].as_str().unwrap();
        if seen == stop {
            if write_it {
                std::fs::write(&path, content).unwrap();
            }
            return;
        }
        std::fs::write(&path, content).unwrap();
        let answer = json!({"jsonrpc": "2.0", "id": message["id"], "result": {}});
        agent.send_line(&answer.to_string()).await;
        seen += 1;
    }
}

/// SIGKILL between the editor's writes of an `/undo` (its 1st, 2nd or 3rd write asked for,
/// made or not): after a restart the rewind is completed, never the turn shown standing with
/// some of its files put back. On a build that records a rewind after applying it, the turn
/// stands with a, or a and b, put back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kill_between_the_editors_writes_of_an_undo_is_completed_on_load() {
    for stop in 0..3 {
        let write_it = stop % 2 == 1;
        let (mock, ws, mut agent, editor, id) = turn_of_four(full_caps(), None).await;
        editor
            .hanging
            .lock()
            .unwrap()
            .push("fs/write_text_file".into());
        let _undone = agent.start_prompt(&id, "/undo").await;
        play_editor_writes(&mut agent, stop, write_it).await;
        agent.kill().await;
        let step = format!("the editor's write {} of 3 (made: {write_it})", stop + 1);
        assert_completed(&ws, &mock, full_caps(), &id, &step).await;
    }
}

/// A file someone else changed while tandem was stopped mid-change is reported on load and
/// never overwritten: neither by the load, nor by a later `/undo` of its turn. The same for
/// a file an `/undo` killed part-way had not put back yet: the rewind is recorded as only
/// partly applied, and its turn is out of the conversation.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_changed_by_someone_else_meanwhile_is_reported_not_overwritten() {
    // A write: the editor is asked, someone else writes the file, tandem is killed.
    let mock = MockModel::start(vec![
        calls(&[write("w1", "notes.txt", "tandem's\n")]),
        Reply::text(&["written"]),
    ])
    .await;
    let ws = workspace(&[("notes.txt", "before\n")]);
    let path = ws.project().join("notes.txt");
    let (mut agent, editor) = start(&ws, &mock, full_caps(), "accept-edits", None).await;
    editor
        .hanging
        .lock()
        .unwrap()
        .push("fs/write_text_file".into());
    let id = new_session(&mut agent, &ws).await;
    let _answered = agent.start_prompt(&id, "rewrite notes").await;
    editor.wait_for("fs/write_text_file").await;
    std::fs::write(&path, "someone else's\n").unwrap();
    agent.kill().await;

    let (mut agent, shown, _) = reload(&ws, &mock, full_caps(), &id).await;
    assert!(
        shown.contains("someone else changed it"),
        "the load reports it: {shown}"
    );
    assert_eq!(read(&path).as_deref(), Some("someone else's\n"));
    let undone = slash(&mut agent, &id, "/undo").await;
    assert_eq!(
        read(&path).as_deref(),
        Some("someone else's\n"),
        "never overwritten: {undone}"
    );
    assert!(undone.contains("notes.txt: **not put back**"), "{undone}");
    agent.shutdown().await;

    // An /undo: killed as the editor is asked to put a.txt back, while b.txt is changed by
    // someone else.
    let (mock, ws, mut agent, editor, id) = turn_of_four(full_caps(), None).await;
    editor
        .hanging
        .lock()
        .unwrap()
        .push("fs/write_text_file".into());
    let _undone = agent.start_prompt(&id, "/undo").await;
    play_editor_writes(&mut agent, 0, false).await;
    std::fs::write(ws.project().join("b.txt"), "mine\n").unwrap();
    agent.kill().await;
    let (mut agent, shown, prompts) = reload(&ws, &mock, full_caps(), &id).await;
    assert!(shown.contains("only partly applied"), "{shown}");
    assert!(shown.contains("b.txt`: **left as it is**"), "{shown}");
    assert_eq!(files(&ws), ["a0\n", "mine\n", "c0\n", "-"]);
    assert!(!prompts.iter().any(|p| p == "make them"), "{prompts:?}");
    let again = slash(&mut agent, &id, "/undo").await;
    assert!(again.contains("nothing to rewind"), "{again}");
    assert_eq!(read(&ws.project().join("b.txt")).as_deref(), Some("mine\n"));
    agent.shutdown().await;
}

/// With the session's transcript on a full disk, tandem makes no change it could not
/// record: a `write_file` fails and says why (the file untouched), and a `/rewind` that
/// would put a file back touches nothing; once space comes back both work, and a reload
/// finds nothing half done (the refused rewind is not applied later).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_change_the_transcript_cannot_record_is_not_made() {
    let ws = workspace(&[("a.txt", "a0\n"), ("b.txt", "b0\n")]);
    let Some(tiny) = Tiny::mount(&ws.home().join("tiny"), "256k") else {
        return;
    };
    let mock = MockModel::start(vec![
        calls(&[write("w1", "a.txt", "a1\n")]),
        Reply::text(&["one"]),
        calls(&[write("w2", "b.txt", "b1\n")]),
        Reply::text(&["two"]),
    ])
    .await;
    let mut env = ws.env(&mock);
    env.push(("TANDEM_MODE".into(), "accept-edits".into()));
    env.push((
        "TANDEM_HOME".into(),
        crate::common::path_str(&tiny.0.join("data")),
    ));
    let mut agent = Agent::spawn(&env, &[]);
    let id = agent.open_session(&ws.project()).await;
    agent.prompt(&id, "change a").await;
    let (a, b) = (ws.project().join("a.txt"), ws.project().join("b.txt"));
    assert_eq!(read(&a).as_deref(), Some("a1\n"));

    let filler = tiny.fill();
    // Longer than a page: the transcript's last page has no room for it.
    let long = format!("change b {}", "please ".repeat(1000));
    let (_, updates) = agent.prompt(&id, &long).await;
    assert_eq!(read(&b).as_deref(), Some("b0\n"), "not changed");
    let shown = Value::from(updates).to_string();
    assert!(
        shown.contains("tandem left it unchanged") && shown.contains("No space left on device"),
        "the user is told why: {shown}"
    );
    let told = mock.requests()[3].body.to_string();
    assert!(told.contains("tandem left it unchanged"), "and the model");
    let said = slash(&mut agent, &id, "/rewind 1").await;
    assert!(said.contains("Nothing was rewound"), "{said}");
    assert_eq!(read(&a).as_deref(), Some("a1\n"), "no file touched");

    std::fs::remove_file(&filler).unwrap();
    let said = slash(&mut agent, &id, "/rewind 1").await;
    assert!(said.contains("Went back to before turn 1"), "{said}");
    assert_eq!(read(&a).as_deref(), Some("a0\n"));
    agent.shutdown().await;

    std::fs::write(&a, "edited since\n").unwrap();
    let mut again = Agent::spawn(&env, &[]);
    again.initialize().await;
    let (_, replayed) = again.open_stored("session/load", &id, &ws.project()).await;
    assert!(
        !Value::from(replayed)
            .to_string()
            .contains("It looked at them")
    );
    assert_eq!(
        read(&a).as_deref(),
        Some("edited since\n"),
        "nothing applied late"
    );
    again.shutdown().await;
}
