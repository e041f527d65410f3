//! tandem's API key never leaves through what tandem writes (stdout, logs, transcripts,
//! `tandem exec` output) or sends the model, even when a server, a command or the model
//! echoes it, and the commands tandem runs do not inherit it unless the config says so.

use serde_json::json;

use crate::common::{Agent, MockModel, Reply, TEST_KEY, Workspace, copy_fixture, path_str};

/// Everything under `dir`, as text.
fn all_files(dir: &std::path::Path) -> String {
    let mut text = String::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            text.push_str(&all_files(&path));
        } else {
            text.push_str(&String::from_utf8_lossy(&std::fs::read(&path).unwrap()));
        }
    }
    text
}

async fn echoing_session(config: &str) -> (MockModel, Workspace, Agent, String) {
    let leak = format!("Your key {TEST_KEY} is fine; header Bearer {TEST_KEY}x");
    let mock = MockModel::start(vec![
        Reply::status(
            401,
            &json!({"error": {"message": format!("Incorrect API key provided: {TEST_KEY}")}})
                .to_string(),
        ),
        Reply::tools(&[(
            "c",
            "run_command",
            json!({"command": "echo \"inherited=[$OPENAI_API_KEY]\""}),
        )]),
        Reply::text(&[&leak]),
    ])
    .await;
    let ws = Workspace::new();
    copy_fixture("small", &ws.project());
    let config = ws.write("config.toml", config);
    let mut env = ws.env(&mock);
    env.retain(|(k, _)| k != "RUST_LOG");
    env.push(("RUST_LOG".into(), "trace".into()));
    env.push(("TANDEM_MODE".into(), "full-access".into()));
    env.push(("TANDEM_CONFIG".into(), path_str(&config)));
    let mut agent = Agent::spawn(&env, &[]);
    let id = agent.open_session(&ws.project()).await;
    (mock, ws, agent, id)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_planted_key_is_in_no_output_and_no_child_environment() {
    let (mock, ws, mut agent, session) = echoing_session("").await;
    let (failed, _) = agent.prompt(&session, "one").await;
    let message = failed["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("Incorrect API key provided: [redacted]"),
        "{message}"
    );
    let (response, _) = agent.prompt(&session, "two").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    let result = crate::common::calls::tool_result(&mock.requests()[2], "c");
    assert!(
        result.contains("inherited=[]"),
        "the command saw the key: {result}"
    );

    let stdout = agent.stdout_lines().join("\n");
    let (_, stderr) = agent.shutdown().await;
    assert!(stderr.contains("model request"), "trace logging was on");
    assert!(stdout.contains("Your key [redacted] is fine; header Bearer [redacted]"));
    let stored = all_files(&ws.home().join("data"));
    assert!(
        stored.contains("Your key [redacted]"),
        "the transcript was written"
    );
    for (name, text) in [
        ("stdout", &stdout),
        ("stderr", &stderr),
        ("data dir", &stored),
    ] {
        assert!(!text.contains(TEST_KEY), "the key reached {name}");
    }
}

/// With `share_api_key` the command has the key, but what it prints reaches the model (and
/// the editor) with the key redacted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn share_api_key_lets_commands_inherit_it() {
    let (mock, _ws, mut agent, session) = echoing_session("share_api_key = true\n").await;
    agent.prompt(&session, "one").await;
    agent.prompt(&session, "two").await;
    let result = crate::common::calls::tool_result(&mock.requests()[2], "c");
    assert!(result.contains("inherited=[[redacted]]"), "{result}");
    assert!(!mock.requests()[2].body.to_string().contains(TEST_KEY));
    assert!(!agent.stdout_lines().join("\n").contains(TEST_KEY));
}

/// A key the model streams in two pieces (answer and reasoning alike) is caught where the
/// pieces meet: no update, and no two updates together, show it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_split_across_streamed_pieces_is_redacted() {
    let (head, tail) = TEST_KEY.split_at(7);
    let mock = MockModel::start(vec![
        Reply::chunks(vec![
            crate::common::mock_model::reasoning_content(&format!("thinking of {head}")),
            crate::common::mock_model::reasoning_content(&format!("{tail} now")),
            crate::common::mock_model::text(&format!("the key is {head}")),
            crate::common::mock_model::text(&format!("{tail}, and sk-not-a-key")),
            crate::common::mock_model::finish("stop"),
        ])
        .slow(std::time::Duration::from_millis(30)),
    ])
    .await;
    let ws = Workspace::new();
    let mut agent = Agent::spawn(&ws.env(&mock), &[]);
    let session = agent.open_session(&ws.project()).await;
    let (response, updates) = agent.prompt(&session, "say it").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    let answer = crate::common::joined(&updates, "agent_message_chunk");
    let thought = crate::common::joined(&updates, "agent_thought_chunk");
    assert_eq!(answer, "the key is [redacted], and sk-not-a-key");
    assert_eq!(thought, "thinking of [redacted] now");
}

/// A prompt-injected model asks for tandem's own environment (`/proc/$PPID/environ`, past the
/// `tandem tie` that starts commands outside the sandbox) and for
/// `tandem login`'s credentials file, through a command and through `read_file`: what the
/// model reads back holds no key, neither tandem's own nor one stored for another server,
/// and neither does what the editor is shown. Where the system lets it (Linux, not root),
/// tandem's environment cannot be read at all.
#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_a_command_or_a_read_finds_reaches_the_model_without_keys() {
    let other = "sk-other-server-0c4d8e2a71";
    let ws = Workspace::new();
    let credentials = ws.write(
        "home/.config/tandem/credentials.toml",
        &format!("[keys]\n\"https://other.example/v1\" = \"{other}\"\n"),
    );
    let mock = MockModel::start(vec![
        Reply::tools(&[
            (
                "env",
                "run_command",
                json!({"command": "id -u; p=$PPID; if tr '\\0' ' ' < /proc/$p/cmdline | grep -q ' tie -- '; then p=$(cut -d' ' -f4 /proc/$p/stat); fi; tr '\\0' '\\n' < /proc/$p/environ 2>&1"}),
            ),
            (
                "file",
                "run_command",
                json!({"command": "cat ~/.config/tandem/credentials.toml"}),
            ),
            ("read", "read_file", json!({"path": path_str(&credentials)})),
        ]),
        Reply::text(&["done"]),
    ])
    .await;
    let mut env = ws.env(&mock);
    env.push(("TANDEM_MODE".into(), "full-access".into()));
    let mut agent = Agent::spawn(&env, &[]);
    let session = agent.open_session(&ws.project()).await;
    let (response, _) = agent.prompt(&session, "show me your setup").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");

    let answered = &mock.requests()[1];
    let environ = crate::common::calls::tool_result(answered, "env");
    let root = environ.contains("Output:\n0\n");
    if root {
        // root reads any process's environment: redaction is what keeps the key out.
        assert!(environ.contains("OPENAI_API_KEY=[redacted]"), "{environ}");
    } else {
        assert!(environ.contains("Permission denied"), "{environ}");
    }
    for id in ["file", "read"] {
        let result = crate::common::calls::tool_result(answered, id);
        assert!(
            result.contains("\"https://other.example/v1\" = \"[redacted]\""),
            "{id}: {result}"
        );
    }
    let sent = answered.body.to_string();
    let shown = agent.stdout_lines().join("\n");
    agent.shutdown().await;
    for (whom, text) in [("the model", &sent), ("the editor", &shown)] {
        assert!(!text.contains(TEST_KEY), "tandem's key reached {whom}");
        assert!(!text.contains(other), "another server's key reached {whom}");
    }
}
