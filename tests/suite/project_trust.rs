//! Nothing a cloned repository declares runs unasked: the MCP servers of a project's
//! `.tandem/config.toml` start only once the user trusted their exact definition. Every test
//! declares the in-repo test MCP server, which writes `started <pid>` to a log file the moment
//! it runs: the trace a server that should not have started would leave.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};

use crate::common::editor::{Answer, FakeEditor};
use crate::common::{Agent, MockModel, Reply, Workspace, joined, path_str, run_tandem};

const SERVER: &str = env!("CARGO_BIN_EXE_tandem-test-mcp");

/// Where the project's servers log (the user's and the editor's log elsewhere).
fn project_log(ws: &Workspace) -> PathBuf {
    ws.home().join("project-mcp.log")
}

/// Declares the test server in the project's config once per `(name, args)`, all logging to
/// [`project_log`].
fn declare(ws: &Workspace, servers: &[(&str, &[&str])]) {
    let log = path_str(&project_log(ws));
    let mut text = String::new();
    for (name, args) in servers {
        let args: Vec<String> = args.iter().map(|a| format!("{a:?}")).collect();
        text.push_str(&format!(
            "[[mcp_servers]]\nname = \"{name}\"\ncommand = \"{SERVER}\"\nargs = [{}]\nenv = {{ TANDEM_TEST_MCP_LOG = \"{log}\" }}\n\n",
            args.join(", ")
        ));
    }
    ws.write("project/.tandem/config.toml", &text);
}

/// How many times a server logging to `log` started.
fn starts(log: &Path) -> usize {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .filter(|l| l.starts_with("started "))
        .count()
}

/// Gives a server that was wrongly launched the time to leave its trace.
async fn linger() {
    tokio::time::sleep(Duration::from_millis(400)).await;
}

fn trust_file(ws: &Workspace) -> PathBuf {
    ws.home().join("data").join("trust.json")
}

/// An agent in `mode` whose editor answers permission requests from a queue.
async fn agent_in(ws: &Workspace, mock: &MockModel, mode: &str) -> (Agent, Arc<FakeEditor>) {
    let editor = FakeEditor::new();
    let mut env = ws.env(mock);
    env.push(("TANDEM_MODE".into(), mode.into()));
    let mut agent = Agent::spawn_with(&env, &[], Some(editor.clone()));
    agent.initialize().await;
    (agent, editor)
}

async fn new_session(agent: &mut Agent, ws: &Workspace) -> String {
    agent.new_session(&ws.project()).await["sessionId"]
        .as_str()
        .unwrap()
        .to_string()
}

/// `_tandem/status`'s entry for `session`.
async fn status_of(agent: &mut Agent, session: &str) -> Value {
    let status = agent.request_ok("_tandem/status", json!({})).await;
    status["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["sessionId"] == session)
        .cloned()
        .unwrap_or_else(|| panic!("{session} in {status}"))
}

/// The state `_tandem/status` gives the MCP server `name` of `session`.
async fn state_of(agent: &mut Agent, session: &str, name: &str) -> String {
    let status = status_of(agent, session).await;
    status["mcpServers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == name)
        .map(|s| s["state"].as_str().unwrap().to_string())
        .unwrap_or_else(|| panic!("no server {name} in {status}"))
}

/// The permission requests the editor got so far.
fn questions(editor: &FakeEditor) -> Vec<Value> {
    editor.params_of("session/request_permission")
}

/// The tool names the model was offered in request `n`.
fn offered(mock: &MockModel, n: usize) -> Vec<String> {
    mock.requests()[n].body["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .map(|t| t["function"]["name"].as_str().unwrap().to_string())
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_project_server_waits_for_the_first_prompt_and_starts_once_allowed() {
    let mock = MockModel::start(vec![
        Reply::text(&["one"]),
        Reply::text(&["two"]),
        Reply::text(&["three"]),
    ])
    .await;
    let ws = Workspace::new();
    declare(&ws, &[("proj", &[])]);
    let (mut agent, editor) = agent_in(&ws, &mock, "read-only").await;
    let session = new_session(&mut agent, &ws).await;
    assert_eq!(state_of(&mut agent, &session, "proj").await, "held");
    linger().await;
    assert_eq!(starts(&project_log(&ws)), 0, "nothing runs at session/new");
    // A slash command that does not ask the model does not ask this either.
    let (_, updates) = agent.prompt(&session, "/permissions").await;
    let shown = joined(&updates, "agent_message_chunk");
    assert!(
        shown.contains("- waiting: MCP server `proj` (asked at the next prompt)"),
        "{shown}"
    );
    assert!(questions(&editor).is_empty());

    editor.answer_with(&[Answer::Select("allow_once")]);
    let (response, updates) = agent.prompt(&session, "hello").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    let asked = questions(&editor);
    assert_eq!(asked.len(), 1, "{asked:?}");
    let title = asked[0]["toolCall"]["title"].as_str().unwrap();
    assert!(
        title.contains("`proj`") && title.contains(SERVER),
        "{title}"
    );
    assert!(title.contains(".tandem/config.toml"), "{title}");
    assert!(title.contains("(sets TANDEM_TEST_MCP_LOG)"), "{title}");
    let options: Vec<&str> = asked[0]["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["optionId"].as_str().unwrap())
        .collect();
    assert_eq!(
        options,
        ["allow_once", "allow_always", "reject_once", "reject_always"]
    );
    let why = asked[0]["toolCall"]["content"].to_string();
    assert!(why.contains("declares the MCP server `proj`"), "{why}");
    // The editor saw the question as a call that ended when the server started.
    let shown = crate::common::of_kind(&updates, "tool_call_update");
    assert!(
        shown.iter().any(|u| u["status"] == "completed"),
        "{updates:?}"
    );
    assert_eq!(starts(&project_log(&ws)), 1);
    assert!(offered(&mock, 0).contains(&"mcp__proj__echo".to_string()));
    assert!(
        !mock.requests()[0]
            .body
            .to_string()
            .contains("declares the MCP server"),
        "the model never sees the question"
    );
    // Asked once per session.
    agent.prompt(&session, "again").await;
    assert_eq!(questions(&editor).len(), 1);
    // "Once" is this session: another one asks again.
    let other = new_session(&mut agent, &ws).await;
    assert_eq!(state_of(&mut agent, &other, "proj").await, "held");
    editor.answer_with(&[Answer::Select("reject_once")]);
    let (_, third) = agent.prompt(&other, "third").await;
    assert_eq!(questions(&editor).len(), 2);
    // The question ends failed, saying what came of it: a client that shows status would
    // keep a card without one pending (Zed's "Rejected" becomes "Failed", the same red cross).
    let question = questions(&editor)[1]["toolCall"]["toolCallId"].clone();
    let id = question.as_str().unwrap();
    assert_eq!(
        crate::common::zed::card_status(&third, id, Some("reject_once"), "end_turn"),
        "Failed"
    );
    let last = crate::common::calls::call_events(&third, id)
        .last()
        .copied()
        .unwrap()
        .clone();
    assert!(
        last.to_string().contains("Not started in this session."),
        "{last}"
    );
    assert_eq!(state_of(&mut agent, &other, "proj").await, "not_started");
    assert!(!offered(&mock, 2).contains(&"mcp__proj__echo".to_string()));
    assert_eq!(starts(&project_log(&ws)), 1);
    assert!(
        !trust_file(&ws).exists(),
        "a one-time answer is not remembered"
    );
    agent.assert_valid();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn always_allow_is_remembered_and_a_changed_definition_asks_again() {
    let mock = MockModel::start(vec![Reply::text(&["one"]), Reply::text(&["two"])]).await;
    let ws = Workspace::new();
    declare(&ws, &[("proj", &[])]);
    let (mut agent, editor) = agent_in(&ws, &mock, "ask").await;
    let session = new_session(&mut agent, &ws).await;
    editor.answer_with(&[Answer::Select("allow_always")]);
    agent.prompt(&session, "hello").await;
    assert_eq!(starts(&project_log(&ws)), 1);
    let remembered = std::fs::read_to_string(trust_file(&ws)).unwrap();
    assert!(remembered.contains("\"trusted\""), "{remembered}");
    agent.shutdown().await;

    // A new process, a new session: it starts at once, and nobody is asked.
    let (mut agent, editor) = agent_in(&ws, &mock, "ask").await;
    let session = new_session(&mut agent, &ws).await;
    for _ in 0..100 {
        if starts(&project_log(&ws)) == 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(
        starts(&project_log(&ws)),
        2,
        "started when the session opened"
    );
    let trust = status_of(&mut agent, &session).await["projectTrust"].clone();
    assert_eq!(trust[0]["verdict"], "trusted", "{trust}");
    assert_eq!(trust[0]["name"], "proj");
    assert!(
        trust[0]["command"].as_str().unwrap().contains(SERVER),
        "{trust}"
    );
    agent.prompt(&session, "hello again").await;
    assert!(questions(&editor).is_empty());
    assert!(offered(&mock, 1).contains(&"mcp__proj__echo".to_string()));

    // The same name with another argument is another definition.
    declare(&ws, &[("proj", &["--changed"])]);
    let changed = new_session(&mut agent, &ws).await;
    assert_eq!(state_of(&mut agent, &changed, "proj").await, "held");
    linger().await;
    assert_eq!(starts(&project_log(&ws)), 2);
    agent.assert_valid();
}

/// A project's server runs in the project (`./tools/mcp.sh` is the project's file wherever
/// tandem was started), and an edit of the script a trusted definition names asks again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_trusted_servers_script_runs_in_the_project_and_an_edit_asks_again() {
    let mock = MockModel::start(vec![Reply::text(&["one"])]).await;
    let ws = Workspace::new();
    let log = path_str(&project_log(&ws));
    let script =
        |extra: &str| format!("#!/bin/sh\npwd > '{log}.pwd'\n{extra}exec '{SERVER}' \"$@\"\n");
    let path = ws.write("project/tools/mcp.sh", &script(""));
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    ws.write(
        "project/.tandem/config.toml",
        &format!(
            "[[mcp_servers]]\nname = \"proj\"\ncommand = \"./tools/mcp.sh\"\nenv = {{ TANDEM_TEST_MCP_LOG = \"{log}\" }}\n"
        ),
    );
    let (mut agent, editor) = agent_in(&ws, &mock, "ask").await;
    let session = new_session(&mut agent, &ws).await;
    editor.answer_with(&[Answer::Select("allow_always")]);
    agent.prompt(&session, "hello").await;
    assert_eq!(starts(&project_log(&ws)), 1);
    let ran_in = std::fs::read_to_string(format!("{log}.pwd")).unwrap();
    assert_eq!(
        std::path::Path::new(ran_in.trim()).canonicalize().unwrap(),
        ws.project().canonicalize().unwrap()
    );
    // The model (or a pull) changes the script: the trusted definition no longer covers it.
    std::fs::write(&path, script("echo changed >&2\n")).unwrap();
    let again = new_session(&mut agent, &ws).await;
    assert_eq!(state_of(&mut agent, &again, "proj").await, "held");
    linger().await;
    assert_eq!(starts(&project_log(&ws)), 1);
    agent.assert_valid();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn always_reject_is_remembered_and_the_users_own_server_starts_instead() {
    let mock = MockModel::start(vec![Reply::text(&["one"]), Reply::text(&["two"])]).await;
    let ws = Workspace::new();
    let user_log = ws.home().join("user-mcp.log");
    ws.write(
        "home/.config/tandem/config.toml",
        &format!(
            "[[mcp_servers]]\nname = \"shared\"\ncommand = \"{SERVER}\"\nenv = {{ TANDEM_TEST_MCP_LOG = \"{}\" }}\n",
            path_str(&user_log)
        ),
    );
    // The project redefines the user's `shared`, and adds one of its own.
    declare(&ws, &[("shared", &[]), ("proj", &[])]);
    let (mut agent, editor) = agent_in(&ws, &mock, "full-access").await;
    let session = new_session(&mut agent, &ws).await;
    assert_eq!(state_of(&mut agent, &session, "shared").await, "held");
    editor.answer_with(&[
        Answer::Select("reject_always"),
        Answer::Select("reject_once"),
    ]);
    agent.prompt(&session, "hello").await;
    assert_eq!(questions(&editor).len(), 2);
    assert_eq!(starts(&project_log(&ws)), 0, "rejected: never started");
    assert_eq!(starts(&user_log), 1, "the user's own `shared` instead");
    let tools = offered(&mock, 0);
    assert!(
        tools.contains(&"mcp__shared__echo".to_string()),
        "{tools:?}"
    );
    assert!(
        !tools.iter().any(|t| t.starts_with("mcp__proj__")),
        "{tools:?}"
    );
    assert_eq!(state_of(&mut agent, &session, "proj").await, "not_started");

    // Next session: the refused definition is not asked about again, the other one is.
    let second = new_session(&mut agent, &ws).await;
    let state = state_of(&mut agent, &second, "shared").await;
    assert!(state == "connecting" || state == "ready", "{state}");
    editor.answer_with(&[Answer::Select("reject_once")]);
    agent.prompt(&second, "hello").await;
    let asked = questions(&editor);
    assert_eq!(asked.len(), 3, "{asked:?}");
    assert!(
        asked[2]["toolCall"]["title"]
            .as_str()
            .unwrap()
            .contains("`proj`")
    );
    assert_eq!(starts(&project_log(&ws)), 0);
    let trust = status_of(&mut agent, &second).await["projectTrust"].clone();
    assert_eq!(trust.as_array().unwrap().len(), 1, "{trust}");
    assert_eq!(trust[0]["verdict"], "refused");
    assert_eq!(trust[0]["name"], "shared");
    agent.assert_valid();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn loading_resuming_and_forking_hold_project_servers_too() {
    let mock = MockModel::start(vec![Reply::text(&["one"]), Reply::text(&["two"])]).await;
    let ws = Workspace::new();
    let (mut agent, editor) = agent_in(&ws, &mock, "ask").await;
    // The session starts before the project declares anything (a pull brought it in).
    let session = new_session(&mut agent, &ws).await;
    agent.prompt(&session, "hello").await;
    agent
        .request_ok("session/close", json!({"sessionId": session}))
        .await;
    declare(&ws, &[("proj", &[])]);

    for method in ["session/load", "session/resume"] {
        agent.open_stored(method, &session, &ws.project()).await;
        assert_eq!(
            state_of(&mut agent, &session, "proj").await,
            "held",
            "{method}"
        );
        agent
            .request_ok("session/close", json!({"sessionId": session}))
            .await;
    }
    let fork = agent
        .request_ok("_tandem/session/fork", json!({"sessionId": session}))
        .await;
    let fork = fork["sessionId"].as_str().unwrap().to_string();
    assert_eq!(state_of(&mut agent, &fork, "proj").await, "held");
    linger().await;
    assert_eq!(starts(&project_log(&ws)), 0, "no opening starts it");
    assert!(
        questions(&editor).is_empty(),
        "nobody is asked before a prompt"
    );

    editor.answer_with(&[Answer::Select("allow_once")]);
    let (response, _) = agent.prompt(&fork, "in the fork").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    assert_eq!(questions(&editor).len(), 1);
    assert_eq!(starts(&project_log(&ws)), 1);
    agent.assert_valid();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_the_question_cancels_the_prompt_and_asks_again_next_time() {
    let mock = MockModel::start(vec![Reply::text(&["after"])]).await;
    let ws = Workspace::new();
    declare(&ws, &[("proj", &[])]);
    let (mut agent, editor) = agent_in(&ws, &mock, "ask").await;
    let session = new_session(&mut agent, &ws).await;
    editor.answer_with(&[Answer::Cancelled]);
    let (response, _) = agent.prompt(&session, "hello").await;
    assert_eq!(response["result"]["stopReason"], "cancelled", "{response}");
    assert!(mock.requests().is_empty(), "nothing was sent");
    assert_eq!(state_of(&mut agent, &session, "proj").await, "held");
    editor.answer_with(&[Answer::Select("allow_once")]);
    let (response, updates) = agent.prompt(&session, "again").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    assert_eq!(joined(&updates, "agent_message_chunk"), "after");
    assert_eq!(questions(&editor).len(), 2);
    assert_eq!(starts(&project_log(&ws)), 1);
    agent.assert_valid();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_editor_server_of_the_same_name_wins_without_a_question() {
    let mock = MockModel::start(vec![Reply::text(&["ok"])]).await;
    let ws = Workspace::new();
    declare(&ws, &[("proj", &[])]);
    let editor_log = ws.home().join("editor-mcp.log");
    let editor = FakeEditor::new();
    let mut agent = Agent::spawn_with(&ws.env(&mock), &[], Some(editor.clone()));
    agent.initialize().await;
    let servers = json!([{"name": "proj", "command": SERVER, "args": [],
        "env": [{"name": "TANDEM_TEST_MCP_LOG", "value": path_str(&editor_log)}]}]);
    let session = agent
        .request_ok(
            "session/new",
            json!({"cwd": ws.project(), "mcpServers": servers}),
        )
        .await["sessionId"]
        .as_str()
        .unwrap()
        .to_string();
    agent.prompt(&session, "hello").await;
    assert!(questions(&editor).is_empty());
    assert_eq!(starts(&editor_log), 1);
    assert_eq!(starts(&project_log(&ws)), 0);
    agent.assert_valid();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn trust_is_listed_and_revoked_with_permissions_untrust() {
    let mock = MockModel::start(vec![Reply::text(&["ok"])]).await;
    let ws = Workspace::new();
    declare(&ws, &[("proj", &[])]);
    let (mut agent, editor) = agent_in(&ws, &mock, "ask").await;
    let session = new_session(&mut agent, &ws).await;
    editor.answer_with(&[Answer::Select("allow_always")]);
    agent.prompt(&session, "hello").await;

    let (_, updates) = agent.prompt(&session, "/permissions").await;
    let shown = joined(&updates, "agent_message_chunk");
    assert!(
        shown.contains("- trusted MCP server `proj`") && shown.contains(SERVER),
        "{shown}"
    );
    assert!(shown.contains("/permissions untrust"), "{shown}");
    let (_, updates) = agent.prompt(&session, "/permissions untrust").await;
    let shown = joined(&updates, "agent_message_chunk");
    assert!(shown.contains("Forgot 1 trust answer(s)"), "{shown}");
    assert!(shown.contains("- none trusted or refused"), "{shown}");
    let trust = status_of(&mut agent, &session).await["projectTrust"].clone();
    assert_eq!(trust, json!([]));
    let remembered = std::fs::read_to_string(trust_file(&ws)).unwrap();
    assert!(!remembered.contains("proj"), "{remembered}");
    // The next session asks again.
    let other = new_session(&mut agent, &ws).await;
    assert_eq!(state_of(&mut agent, &other, "proj").await, "held");
    agent.assert_valid();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_corrupt_trust_file_is_reported_and_asks_again() {
    let mock = MockModel::start(vec![Reply::text(&["ok"])]).await;
    let ws = Workspace::new();
    declare(&ws, &[("proj", &[])]);
    ws.write("home/data/trust.json", "{ this is not json");
    let (mut agent, editor) = agent_in(&ws, &mock, "ask").await;
    let session = new_session(&mut agent, &ws).await;
    assert_eq!(state_of(&mut agent, &session, "proj").await, "held");
    editor.answer_with(&[Answer::Select("allow_always")]);
    let (response, _) = agent.prompt(&session, "hello").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    assert_eq!(starts(&project_log(&ws)), 1);
    let remembered = std::fs::read_to_string(trust_file(&ws)).unwrap();
    assert!(remembered.contains("\"trusted\""), "{remembered}");
    let aside = ws.home().join("data").join("trust.json.corrupt");
    assert_eq!(
        std::fs::read_to_string(aside).unwrap(),
        "{ this is not json"
    );
    let (status, stderr) = agent.shutdown().await;
    assert!(status.success());
    assert!(stderr.contains("project trust file is corrupt"), "{stderr}");
}

/// `tandem exec` in the project, off the runtime that serves the mock model.
async fn exec(ws: &Workspace, mock: &MockModel, args: &[&str]) -> (i32, String, String) {
    let mut env = ws.env(mock);
    env.retain(|(k, _)| k != "RUST_LOG");
    let mut all = vec!["exec".to_string()];
    all.extend(args.iter().map(|a| a.to_string()));
    let project = ws.project();
    tokio::task::spawn_blocking(move || {
        let args: Vec<&str> = all.iter().map(String::as_str).collect();
        run_tandem(&args, &env, None, Some(&project))
    })
    .await
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exec_starts_project_servers_only_with_trust_project() {
    let mock = MockModel::start(vec![
        Reply::text(&["read-only"]),
        Reply::text(&["full-access"]),
        Reply::text(&["trusted"]),
    ])
    .await;
    let ws = Workspace::new();
    declare(&ws, &[("proj", &[]), ("other", &[])]);
    for (n, mode) in ["read-only", "full-access"].into_iter().enumerate() {
        let (code, stdout, stderr) = exec(&ws, &mock, &["--mode", mode, "hello"]).await;
        assert_eq!(code, 0, "{stderr}");
        assert_eq!(stdout.trim(), mode);
        assert_eq!(starts(&project_log(&ws)), 0, "{mode}: {stderr}");
        assert!(!offered(&mock, n).iter().any(|t| t.starts_with("mcp__")));
        let said: Vec<&str> = stderr
            .lines()
            .filter(|l| l.contains("MCP server(s) declared by"))
            .collect();
        assert_eq!(said.len(), 1, "said once: {stderr}");
        assert!(
            said[0].contains("2 MCP server(s)")
                && said[0].contains("`proj`, `other`")
                && said[0].contains("--trust-project"),
            "{stderr}"
        );
    }
    let (code, _, stderr) = exec(&ws, &mock, &["--trust-project", "hello"]).await;
    assert_eq!(code, 0, "{stderr}");
    // Both started and were offered: what the model was given, not the servers' own log,
    // which a server slow to start under load may not have written before exec ended.
    let tools = offered(&mock, 2);
    for server in ["proj", "other"] {
        assert!(
            tools.contains(&format!("mcp__{server}__echo")),
            "{server} started: {tools:?} {stderr}"
        );
    }
    assert!(!stderr.contains("not started"), "{stderr}");
    assert!(
        !trust_file(&ws).exists(),
        "--trust-project remembers nothing"
    );
}

/// Declares the server `proj`: `command` with `args`, logging to [`project_log`].
fn declare_command(ws: &Workspace, command: &str, args: &[&str]) {
    let log = path_str(&project_log(ws));
    let args: Vec<String> = args.iter().map(|a| format!("{a:?}")).collect();
    ws.write(
        "project/.tandem/config.toml",
        &format!(
            "[[mcp_servers]]\nname = \"proj\"\ncommand = \"{command}\"\nargs = [{}]\nenv = {{ TANDEM_TEST_MCP_LOG = \"{log}\" }}\n",
            args.join(", ")
        ),
    );
}

/// Where a changed entry file leaves its trace when it runs.
fn changed_trace(ws: &Workspace) -> PathBuf {
    ws.home().join("changed-code-ran")
}

/// Trusts `proj` for good, changes the file `entry` (written by `write(ws, changed)`), and
/// checks that the next session holds it and asks again, naming the change.
async fn trusted_then_changed(ws: &Workspace, write: fn(&Workspace, bool), entry: &str) {
    let mock = MockModel::start(vec![Reply::text(&["one"]), Reply::text(&["two"])]).await;
    write(ws, false);
    let (mut agent, editor) = agent_in(ws, &mock, "ask").await;
    let session = new_session(&mut agent, ws).await;
    editor.answer_with(&[Answer::Select("allow_always")]);
    agent.prompt(&session, "hello").await;
    assert_eq!(starts(&project_log(ws)), 1, "trusted and started");
    let first = questions(&editor).remove(0);
    agent.shutdown().await;

    // The code the module (or folder) name stands for changes; the definition does not.
    write(ws, true);
    let (mut agent, editor) = agent_in(ws, &mock, "ask").await;
    let session = new_session(&mut agent, ws).await;
    assert_eq!(state_of(&mut agent, &session, "proj").await, "held");
    linger().await;
    assert_eq!(starts(&project_log(ws)), 1, "not started unasked");
    assert!(!changed_trace(ws).exists(), "the changed code did not run");
    editor.answer_with(&[Answer::Select("reject_once")]);
    agent.prompt(&session, "hello again").await;
    let asked = questions(&editor);
    assert_eq!(asked.len(), 1, "asked again: {asked:?}");
    let text = asked[0]["toolCall"]["content"].to_string();
    assert!(text.contains("changed since you trusted it"), "{text}");
    assert!(!changed_trace(ws).exists());
    assert_eq!(starts(&project_log(ws)), 1);
    // The first question said what trust would cover.
    let covers = first["toolCall"]["rawInput"]["covers"].to_string();
    assert!(covers.contains(entry), "{entry} is covered: {covers}");
    let text = first["toolCall"]["content"].to_string();
    assert!(text.contains("Trust covers the content of"), "{text}");
    agent.assert_valid();
}

/// `python3 -m srv`: the module file `srv.py` is what runs, so trust covers it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_trusted_python_module_that_changes_asks_again() {
    fn write(ws: &Workspace, changed: bool) {
        let trace = match changed {
            true => format!(
                "open({:?}, 'w').write('ran')\n",
                path_str(&changed_trace(ws))
            ),
            false => String::new(),
        };
        ws.write(
            "project/srv.py",
            &format!("import os, sys\n{trace}os.execv({SERVER:?}, [{SERVER:?}] + sys.argv[1:])\n"),
        );
    }
    let ws = Workspace::new();
    declare_command(&ws, "python3", &["-m", "srv"]);
    trusted_then_changed(&ws, write, "srv.py").await;
}

/// `node tools`: the folder's package.json `main` is what runs, so trust covers it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_trusted_node_folder_whose_main_changes_asks_again() {
    fn write(ws: &Workspace, changed: bool) {
        let trace = match changed {
            true => format!(
                "require('fs').writeFileSync({:?}, 'ran');\n",
                path_str(&changed_trace(ws))
            ),
            false => String::new(),
        };
        ws.write("project/tools/package.json", r#"{"main": "server.js"}"#);
        ws.write(
            "project/tools/server.js",
            &format!(
                "{trace}const child = require('child_process').spawn({SERVER:?}, process.argv.slice(2), {{ stdio: 'inherit' }});\n\
                 child.on('exit', (code) => process.exit(code ?? 1));\n"
            ),
        );
    }
    let ws = Workspace::new();
    declare_command(&ws, "node", &["tools"]);
    trusted_then_changed(&ws, write, "tools/server.js").await;
}

/// The model edits a trusted server's script (allowed in accept-edits) and crashes the
/// server: tandem does not start the edited code again without asking.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_trusted_server_edited_then_crashed_is_not_restarted_unasked() {
    let ws = Workspace::new();
    let trace = path_str(&changed_trace(&ws));
    let script = |extra: &str| format!("#!/bin/sh\n{extra}exec '{SERVER}' \"$@\"\n");
    let edited = script(&format!("echo ran > '{trace}'\n"));
    ws.write("project/tools/mcp.sh", &script(""));
    declare_command(&ws, "sh", &["tools/mcp.sh"]);
    let mock = MockModel::start(vec![
        Reply::tools(&[(
            "w",
            "write_file",
            json!({"path": "tools/mcp.sh", "content": edited}),
        )]),
        Reply::tools(&[("c", "mcp__proj__crash", json!({}))]),
        Reply::text(&["crashed"]),
        Reply::text(&["later"]),
    ])
    .await;
    let (mut agent, editor) = agent_in(&ws, &mock, "accept-edits").await;
    let session = new_session(&mut agent, &ws).await;
    // The trust question, then the MCP call (which asks in accept-edits).
    editor.answer_with(&[Answer::Select("allow_once"), Answer::Select("allow_once")]);
    let (response, first) = agent.prompt(&session, "edit it and crash it").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    let on_disk = std::fs::read_to_string(ws.project().join("tools/mcp.sh")).unwrap();
    assert_eq!(on_disk, edited, "the model's edit was written");
    assert_eq!(questions(&editor).len(), 2);
    // Time for a restart (it would come within a second).
    let mut state = String::new();
    for _ in 0..30 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        state = state_of(&mut agent, &session, "proj").await;
        if state == "held" || starts(&project_log(&ws)) > 1 {
            break;
        }
    }
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert!(
        !changed_trace(&ws).exists(),
        "the edited script did not run"
    );
    assert_eq!(starts(&project_log(&ws)), 1, "not restarted");
    assert_eq!(state, "held");

    // The next prompt tells what happened and asks again, naming the edit.
    editor.answer_with(&[Answer::Select("reject_once")]);
    let (_, updates) = agent.prompt(&session, "and now").await;
    let asked = questions(&editor);
    assert_eq!(asked.len(), 3, "asked again: {asked:?}");
    let text = asked[2]["toolCall"]["content"].to_string();
    assert!(text.contains("`tools/mcp.sh` changed"), "{text}");
    let told = serde_json::to_string(&[first, updates]).unwrap();
    assert!(
        told.contains(
            "MCP server `proj` was not started: `tools/mcp.sh` changed since you trusted it"
        ),
        "{told}"
    );
    assert!(!changed_trace(&ws).exists());
    assert_eq!(starts(&project_log(&ws)), 1);
    assert_eq!(state_of(&mut agent, &session, "proj").await, "not_started");
    agent.assert_valid();
}
