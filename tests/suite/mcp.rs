//! MCP servers over real stdio: tandem connects to the in-repo test server (built with the
//! official SDK), offers its tools, runs them under the permission rules, cancels them, and
//! leaves no process behind.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::acp_client::WAIT;
use crate::common::calls::{call_events, final_status, tool_result};
use crate::common::editor::{Answer, FakeEditor};
use crate::common::{Agent, MockModel, Reply, Workspace, joined, path_str, response};

const SERVER: &str = env!("CARGO_BIN_EXE_tandem-test-mcp");

pub(super) fn server(name: &str, log: &Path) -> Value {
    json!({"name": name, "command": SERVER, "args": [], "env": [{"name": "TANDEM_TEST_MCP_LOG", "value": log}]})
}

type McpSession = (
    MockModel,
    Workspace,
    Agent,
    String,
    std::sync::Arc<FakeEditor>,
);

pub(super) async fn mcp_session(script: Vec<Reply>, mode: &str, servers: Value) -> McpSession {
    mcp_session_with(script, mode, servers, &[]).await
}

/// [`mcp_session`] with more environment variables for tandem.
async fn mcp_session_with(
    script: Vec<Reply>,
    mode: &str,
    servers: Value,
    vars: &[(&str, &str)],
) -> McpSession {
    let mock = MockModel::start(script).await;
    let ws = Workspace::new();
    let editor = FakeEditor::new();
    let mut env = ws.env(&mock);
    env.push(("TANDEM_MODE".into(), mode.into()));
    env.extend(vars.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    let mut agent = Agent::spawn_with(&env, &[], Some(editor.clone()));
    agent.initialize().await;
    let result = agent
        .request_ok(
            "session/new",
            json!({"cwd": ws.project(), "mcpServers": servers}),
        )
        .await;
    agent.next_message().await; // available_commands_update
    (
        mock,
        ws,
        agent,
        result["sessionId"].as_str().unwrap().to_string(),
        editor,
    )
}

fn log_of(ws: &Workspace) -> std::path::PathBuf {
    ws.home().join("mcp.log")
}

fn read_log(ws: &Workspace) -> String {
    std::fs::read_to_string(log_of(ws)).unwrap_or_default()
}

fn alive(pid: u32) -> bool {
    std::path::Path::new(&format!("/proc/{pid}")).exists()
        && !std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .unwrap_or_default()
            .contains(") Z ")
}

fn server_pids(ws: &Workspace) -> Vec<u32> {
    read_log(ws)
        .lines()
        .filter_map(|l| l.strip_prefix("started "))
        .filter_map(|p| p.parse().ok())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_are_discovered_called_and_permissioned() {
    let script = vec![
        Reply::tools(&[
            ("e", "mcp__t__echo", json!({"text": "hi there"})),
            ("a", "mcp__t__add", json!({"a": 2, "b": 3})),
        ]),
        Reply::text(&["done"]),
        Reply::tools(&[("a2", "mcp__t__add", json!({"a": 1, "b": 1}))]),
        Reply::text(&["again"]),
    ];
    let ws_log = tempfile::tempdir().unwrap();
    let log = ws_log.path().join("log");
    let (mock, _ws, mut agent, session, editor) =
        mcp_session(script, "ask", json!([server("t", &log)])).await;
    editor.answer_with(&[Answer::Select("allow_always")]);
    let (response, updates) = agent.prompt(&session, "use the server").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    let first = &mock.requests()[0];
    let tools = first.body["tools"].as_array().unwrap();
    let echo = tools
        .iter()
        .find(|t| t["function"]["name"] == "mcp__t__echo")
        .expect("echo offered");
    assert_eq!(echo["function"]["description"], "Repeat the text.");
    assert_eq!(echo["function"]["parameters"]["required"], json!(["text"]));
    assert!(
        first
            .system_prompt()
            .contains("The echo tool repeats text exactly"),
        "server instructions join the prompt"
    );
    let second = &mock.requests()[1];
    assert_eq!(tool_result(second, "e"), "hi there");
    assert_eq!(tool_result(second, "a"), "5");
    let echo_call = call_events(&updates, "e")[1];
    assert_eq!(echo_call["title"], "Echo (t)");
    assert_eq!(echo_call["kind"], "read");
    // `other` is the default kind and may be left out.
    assert!(matches!(
        call_events(&updates, "a")[0]["kind"].as_str(),
        None | Some("other")
    ));
    // The read-only tool ran without asking; add asked once and is then remembered.
    let asked: Vec<_> = editor
        .params_of("session/request_permission")
        .iter()
        .map(|p| p["toolCall"]["toolCallId"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(asked, ["a"]);
    agent.prompt(&session, "add again").await;
    assert_eq!(
        editor.params_of("session/request_permission").len(),
        1,
        "allow_always remembered"
    );
    assert_eq!(tool_result(&mock.requests()[3], "a2"), "2");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn errors_crashes_and_read_only_mode() {
    let script = vec![
        Reply::tools(&[
            ("f", "mcp__t__fail", json!({})),
            ("k", "mcp__t__env", json!({"name": "OPENAI_API_KEY"})),
        ]),
        Reply::text(&["seen"]),
        Reply::tools(&[("c", "mcp__t__crash", json!({}))]),
        Reply::text(&["it crashed"]),
        Reply::text(&["still fine"]),
    ];
    let dir = tempfile::tempdir().unwrap();
    let (mock, _ws, mut agent, session, _editor) = mcp_session(
        script,
        "full-access",
        json!([server("t", &dir.path().join("log"))]),
    )
    .await;
    let (_, updates) = agent.prompt(&session, "try").await;
    let second = &mock.requests()[1];
    assert_eq!(
        tool_result(second, "f"),
        "Error: the fail tool always fails"
    );
    assert_eq!(final_status(&updates, "f"), "failed");
    assert_eq!(
        tool_result(second, "k"),
        "unset",
        "the server does not see tandem's key"
    );
    let (response, updates) = agent.prompt(&session, "crash it").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    assert!(tool_result(&mock.requests()[3], "c").contains("MCP server `t` is unavailable"));
    assert!(
        joined(&updates, "agent_message_chunk").contains("MCP server `t` is unavailable"),
        "the user is told"
    );
    let (response, _) = agent.prompt(&session, "and now").await;
    assert_eq!(response["result"]["stopReason"], "end_turn");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_only_mode_runs_read_only_tools_and_refuses_the_rest() {
    let script = vec![
        Reply::tools(&[
            ("e", "mcp__t__echo", json!({"text": "x"})),
            ("r", "mcp__t__add", json!({"a": 1, "b": 2})),
        ]),
        Reply::text(&["ok"]),
    ];
    let dir = tempfile::tempdir().unwrap();
    let (mock, _ws, mut agent, session, editor) = mcp_session(
        script,
        "read-only",
        json!([server("t", &dir.path().join("log"))]),
    )
    .await;
    agent.prompt(&session, "try").await;
    let second = &mock.requests()[1];
    assert_eq!(tool_result(second, "e"), "x");
    assert!(
        tool_result(second, "r").starts_with("Refused"),
        "read-only refuses tools without a read-only hint"
    );
    assert!(editor.params_of("session/request_permission").is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_fails_to_start_does_not_fail_the_session() {
    let script = vec![
        Reply::tools(&[("x", "mcp__broken__anything", json!({}))]),
        Reply::text(&["ok"]),
    ];
    let started = Instant::now();
    let (mock, _ws, mut agent, session, _editor) = mcp_session(
        script,
        "full-access",
        json!([{"name": "broken", "command": "/nonexistent/mcp-server", "args": [], "env": []}]),
    )
    .await;
    assert!(started.elapsed() < Duration::from_secs(10));
    let (response, updates) = agent.prompt(&session, "go").await;
    assert_eq!(response["result"]["stopReason"], "end_turn");
    let first = &mock.requests()[0];
    assert!(
        !first.body["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["function"]["name"].as_str().unwrap().starts_with("mcp__"))
    );
    assert!(
        tool_result(&mock.requests()[1], "x")
            .contains("MCP server `broken` is unavailable: cannot start")
    );
    assert!(joined(&updates, "agent_message_chunk").contains("MCP server `broken` is unavailable"));
    let (_, stderr) = agent.shutdown().await;
    assert!(stderr.contains("MCP server unavailable"), "{stderr}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_during_a_slow_call_notifies_the_server() {
    let script = vec![
        Reply::tools(&[("s", "mcp__t__slow", json!({"ms": 30000}))]),
        Reply::text(&["after"]),
    ];
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log");
    let (_mock, _ws, mut agent, session, _editor) =
        mcp_session(script, "full-access", json!([server("t", &log)])).await;
    let pending = agent.start_prompt(&session, "wait").await;
    // The server has the call and is working on it.
    let called = Instant::now();
    while !std::fs::read_to_string(&log)
        .unwrap_or_default()
        .contains("call slow")
    {
        assert!(called.elapsed() < WAIT, "the server never got the call");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let start = Instant::now();
    agent
        .notify("session/cancel", json!({"sessionId": session}))
        .await;
    let answer = response(pending).await;
    assert_eq!(answer["result"]["stopReason"], "cancelled");
    assert!(start.elapsed() < Duration::from_secs(3));
    for _ in 0..100 {
        if std::fs::read_to_string(&log)
            .unwrap_or_default()
            .contains("cancelled slow")
        {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!(
        "the server never saw notifications/cancelled: {}",
        std::fs::read_to_string(&log).unwrap_or_default()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_server_process_outlives_its_session_or_tandem() {
    let mock = MockModel::start(vec![Reply::text(&["a"]), Reply::text(&["b"])]).await;
    let ws = Workspace::new();
    let log = log_of(&ws);
    let mut agent = Agent::spawn(&ws.env(&mock), &[]);
    agent.initialize().await;
    let servers = json!([server("one", &log)]);
    let first = agent
        .request_ok(
            "session/new",
            json!({"cwd": ws.project(), "mcpServers": servers}),
        )
        .await;
    agent.next_message().await;
    let id = first["sessionId"].as_str().unwrap().to_string();
    agent.prompt(&id, "connect").await; // the turn waits for the server
    let pids = server_pids(&ws);
    assert_eq!(pids.len(), 1, "{}", read_log(&ws));
    agent
        .request_ok("session/close", json!({"sessionId": id}))
        .await;
    for _ in 0..100 {
        if !alive(pids[0]) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(!alive(pids[0]), "session/close stops the server");

    let second = agent
        .request_ok(
            "session/new",
            json!({"cwd": ws.project(), "mcpServers": servers}),
        )
        .await;
    agent.next_message().await;
    agent
        .prompt(second["sessionId"].as_str().unwrap(), "connect again")
        .await;
    let pids = server_pids(&ws);
    assert_eq!(pids.len(), 2);
    let (status, _) = agent.shutdown().await;
    assert!(status.success());
    for _ in 0..100 {
        if !alive(pids[1]) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the server outlived tandem");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn servers_from_config_files_merge_by_name_with_the_sessions_winning() {
    let mock = MockModel::start(vec![Reply::text(&["ok"])]).await;
    let ws = Workspace::new();
    let log = path_str(&log_of(&ws));
    ws.write(
        "home/.config/tandem/config.toml",
        &format!("[[mcp_servers]]\nname = \"user\"\ncommand = \"{SERVER}\"\n\n[[mcp_servers]]\nname = \"shared\"\ncommand = \"/nonexistent/from-user-config\"\n"),
    );
    ws.write(
        "project/.tandem/config.toml",
        &format!("[[mcp_servers]]\nname = \"proj\"\ncommand = \"{SERVER}\"\nenv = {{ TANDEM_TEST_MCP_LOG = \"{log}\" }}\n"),
    );
    // The editor allows the project's server when asked (tests/suite/project_trust.rs).
    let editor = FakeEditor::new();
    let mut agent = Agent::spawn_with(&ws.env(&mock), &[], Some(editor.clone()));
    agent.initialize().await;
    let session = agent
        .request_ok("session/new", json!({"cwd": ws.project(), "mcpServers": [{"name": "shared", "command": SERVER, "args": [], "env": []}]}))
        .await;
    agent.next_message().await;
    agent
        .prompt(session["sessionId"].as_str().unwrap(), "list")
        .await;
    let names: Vec<String> = mock.requests()[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap().to_string())
        .filter(|n| n.ends_with("__echo"))
        .collect();
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(
        sorted,
        ["mcp__proj__echo", "mcp__shared__echo", "mcp__user__echo"],
        "{names:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_streamable_http_server_works_like_a_stdio_one() {
    use tokio::io::AsyncBufReadExt;
    let mut http = tokio::process::Command::new(SERVER)
        .arg("--http")
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = tokio::io::BufReader::new(http.stdout.take().unwrap()).lines();
    let url = tokio::time::timeout(Duration::from_secs(20), lines.next_line())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert!(url.starts_with("http://127.0.0.1:"), "{url}");
    let script = vec![
        Reply::tools(&[
            ("e", "mcp__web__echo", json!({"text": "over http"})),
            ("f", "mcp__web__fail", json!({})),
        ]),
        Reply::text(&["done"]),
    ];
    let servers = json!([
        {"type": "http", "name": "web", "url": url, "headers": [{"name": "X-Test", "value": "1"}]},
    ]);
    let (mock, _ws, mut agent, session, _editor) =
        mcp_session(script, "full-access", servers).await;
    let (response, _) = agent.prompt(&session, "go").await;
    assert_eq!(response["result"]["stopReason"], "end_turn");
    let second = &mock.requests()[1];
    assert_eq!(tool_result(second, "e"), "over http");
    assert_eq!(
        tool_result(second, "f"),
        "Error: the fail tool always fails"
    );
    let _ = http.kill().await;
}

/// The entry point of `@modelcontextprotocol/server-everything`: from `TANDEM_TEST_EVERYTHING`
/// (CI installs it), or installed here with npm into `target/test-npm` on first use.
pub(super) fn everything_server() -> String {
    if let Ok(path) = std::env::var("TANDEM_TEST_EVERYTHING") {
        return path;
    }
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/test-npm");
    let entry = dir.join("node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    if !entry.exists() {
        std::fs::create_dir_all(&dir).unwrap();
        let status = std::process::Command::new("npm")
            .args(["install", "--no-audit", "--no-fund", "--prefix"])
            .arg(&dir)
            .arg("@modelcontextprotocol/server-everything@2026.8.31")
            .status()
            .expect("this test needs npm, or TANDEM_TEST_EVERYTHING pointing at server-everything's dist/index.js");
        assert!(status.success(), "npm install of server-everything failed");
    }
    path_str(&entry)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_real_third_party_server_from_npm() {
    let entry = tokio::task::spawn_blocking(everything_server)
        .await
        .unwrap();
    let script = vec![
        Reply::tools(&[
            (
                "e",
                "mcp__everything__echo",
                json!({"message": "hello everything"}),
            ),
            ("s", "mcp__everything__get-sum", json!({"a": 2, "b": 40})),
            ("i", "mcp__everything__get-tiny-image", json!({})),
        ]),
        Reply::text(&["done"]),
    ];
    let servers =
        json!([{"name": "everything", "command": "node", "args": [entry, "stdio"], "env": []}]);
    // A model that takes images: the server's tiny image reaches it.
    let (mock, _ws, mut agent, session, _editor) = mcp_session_with(
        script,
        "full-access",
        servers,
        &[("TANDEM_MODEL", "gpt-4o")],
    )
    .await;
    let (response, _) = agent.prompt(&session, "use everything").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    let offered: Vec<String> = mock.requests()[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap().to_string())
        .filter(|n| n.starts_with("mcp__everything__"))
        .collect();
    assert!(offered.len() >= 5, "{offered:?}");
    let second = &mock.requests()[1];
    assert_eq!(tool_result(second, "e"), "Echo: hello everything");
    assert!(tool_result(second, "s").contains("is 42"));
    let image = tool_result(second, "i");
    assert!(image.contains("[image 1 attached]"), "{image}");
    let given = second.body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rfind(|m| m["role"] == "user")
        .unwrap();
    assert_eq!(given["content"][0]["text"], "The images the `i` call gave:");
    let url = given["content"][1]["image_url"]["url"].as_str().unwrap();
    assert!(url.starts_with("data:image/png;base64,iVBOR"), "{url}");
    let (status, _) = agent.shutdown().await;
    assert!(status.success());
    // No node process of this server is left.
    for _ in 0..100 {
        let ps = std::process::Command::new("ps")
            .args(["-eo", "args"])
            .output()
            .unwrap();
        if !String::from_utf8_lossy(&ps.stdout).contains(&entry) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("server-everything outlived tandem");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_stops_the_mcp_servers_too() {
    let mock = MockModel::start(vec![Reply::text(&["a"])]).await;
    let ws = Workspace::new();
    let log = log_of(&ws);
    let mut agent = Agent::spawn(&ws.env(&mock), &[]);
    agent.initialize().await;
    let created = agent
        .request_ok(
            "session/new",
            json!({"cwd": ws.project(), "mcpServers": [server("one", &log)]}),
        )
        .await;
    agent.next_message().await;
    agent
        .prompt(created["sessionId"].as_str().unwrap(), "connect")
        .await;
    let pids = server_pids(&ws);
    assert_eq!(pids.len(), 1, "{}", read_log(&ws));
    let (status, stderr) = agent.stop_with(nix::sys::signal::Signal::SIGTERM).await;
    assert_eq!(status.code(), Some(0), "{stderr}");
    for _ in 0..100 {
        if !alive(pids[0]) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the server outlived tandem's SIGTERM");
}
