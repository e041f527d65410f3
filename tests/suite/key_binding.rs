//! A key goes only to the server it was stored for, and a preset named by flag or environment
//! is the server used: after `tandem login` to a URL of the user's own, `--provider ollama`
//! means Ollama's own URL (for a run, a login and what that login saves), and the stored key
//! stays with the URL it was stored for.
//!
//! A preset's server listens on a fixed loopback port; a second mock model plays it there
//! through a forwarder. When the port is taken (a real server runs on this machine), the
//! checks that need the mock there are skipped and say so; the old server is still checked
//! to hear nothing.

use serde_json::json;

use crate::common::mock_model::Recorded;
use crate::common::{MockModel, Reply, TEST_KEY, Workspace};

/// The environment of a user who set nothing up but their home, keys in the file store.
fn home_only(ws: &Workspace) -> Vec<(String, String)> {
    let mut env = ws.base_env();
    env.push(("TANDEM_CREDENTIAL_STORE".into(), "file".into()));
    env.push(("PATH".into(), std::env::var("PATH").unwrap_or_default()));
    env
}

/// `tandem ARGS` with `env` and `stdin`, off the runtime that serves the mocks.
async fn tandem(
    ws: &Workspace,
    env: &[(String, String)],
    args: &[&str],
    stdin: &str,
) -> (i32, String, String) {
    let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    let (env, stdin, cwd) = (env.to_vec(), stdin.to_string(), ws.project());
    tokio::task::spawn_blocking(move || {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        crate::common::run_tandem(&args, &env, Some(&stdin), Some(&cwd))
    })
    .await
    .unwrap()
}

/// A mock that lists `mock-model` and answers `script`.
async fn listing_mock(script: Vec<Reply>) -> MockModel {
    let mock = MockModel::start(script).await;
    mock.serve_info(
        "/v1/models",
        200,
        json!({"object": "list", "data": [{"id": "mock-model"}]}),
    );
    mock
}

/// The user's first login: a server at a URL of their own (`old`), with the test key.
async fn logged_in_to(ws: &Workspace, old: &MockModel) {
    let args = [
        "login",
        "--base-url",
        &old.base_url,
        "--model",
        "mock-model",
        "--key-stdin",
    ];
    let (status, _, stderr) = tandem(ws, &home_only(ws), &args, TEST_KEY).await;
    assert_eq!(status, 0, "{stderr}");
    assert_eq!(old.requests().len(), 1, "the login's test request");
}

/// The key a request carried (a bare `Bearer` carries none).
fn key_sent(request: &Recorded) -> Option<String> {
    let header = request.authorization()?;
    let token = header.trim_start_matches("Bearer").trim();
    (!token.is_empty()).then(|| token.to_string())
}

/// A loopback port forwarded to a mock while this lives.
struct Forward(tokio::task::JoinHandle<()>);

impl Drop for Forward {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Forwards `port` on 127.0.0.1 (a preset's fixed port) to `mock`; `None` when the port is
/// taken.
async fn play_preset(port: u16, mock: &MockModel) -> Option<Forward> {
    let listener = match tokio::net::TcpListener::bind(("127.0.0.1", port)).await {
        Ok(listener) => listener,
        Err(e) => {
            use std::io::Write;
            let _ = writeln!(
                std::io::stderr().lock(),
                "SKIPPED the checks against a mock on port {port}: {e}"
            );
            return None;
        }
    };
    let upstream = mock
        .base_url
        .trim_start_matches("http://")
        .trim_end_matches("/v1")
        .to_string();
    Some(Forward(tokio::spawn(async move {
        while let Ok((mut inbound, _)) = listener.accept().await {
            let upstream = upstream.clone();
            tokio::spawn(async move {
                if let Ok(mut outbound) = tokio::net::TcpStream::connect(upstream).await {
                    let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                }
            });
        }
    })))
}

/// The first and third cases: after a login to a server of the user's own,
/// `--provider ollama` runs against Ollama's URL with no key (the stored one belongs to the
/// old server), a hosted preset with no key of its own is refused before anything is sent,
/// and `tandem login --provider ollama` checks Ollama and saves the preset without the old URL.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_preset_named_by_flag_is_its_own_server_and_gets_no_other_servers_key() {
    let old = listing_mock(vec![Reply::text(&["OK"])]).await;
    let ws = Workspace::new();
    logged_in_to(&ws, &old).await;
    let preset = listing_mock(vec![Reply::text(&["from ollama"]), Reply::text(&["OK"])]).await;
    let forward = play_preset(11434, &preset).await;
    let env = home_only(&ws);

    let args = [
        "exec",
        "--provider",
        "ollama",
        "--model",
        "mock-model",
        "hi",
    ];
    let (status, stdout, stderr) = tandem(&ws, &env, &args, "").await;
    assert_eq!(
        old.requests().len(),
        1,
        "the old server was asked: {stderr}"
    );
    let note = format!(
        "the config file's base_url ({}) is not used: --provider ollama names its own server",
        old.base_url
    );
    assert!(stderr.contains(&note), "{stderr}");
    if forward.is_some() {
        assert_eq!(status, 0, "{stderr}");
        assert_eq!(stdout.trim(), "from ollama", "{stderr}");
        assert_eq!(
            key_sent(&preset.requests()[0]),
            None,
            "none is stored for Ollama"
        );
    }

    // A hosted preset needs a key, and the one stored for the old server is not its.
    let args = ["exec", "--provider", "openrouter", "--model", "m", "hi"];
    let (status, _, stderr) = tandem(&ws, &env, &args, "").await;
    assert_ne!(status, 0, "{stderr}");
    assert!(
        stderr.contains("no API key for the model server at https://openrouter.ai/api/v1"),
        "{stderr}"
    );
    assert_eq!(
        old.requests().len(),
        1,
        "the old server was asked: {stderr}"
    );

    // Logging in to the preset talks to the preset and saves it without the old URL.
    let args = ["login", "--provider", "ollama", "--key-stdin"];
    let (status, _, stderr) = tandem(&ws, &env, &args, "").await;
    assert!(
        stderr.contains("asking http://localhost:11434/v1 for its models"),
        "{stderr}"
    );
    assert_eq!(
        old.requests().len(),
        1,
        "the old server was asked: {stderr}"
    );
    if forward.is_some() {
        assert_eq!(status, 0, "{stderr}");
        let config = std::fs::read_to_string(ws.home().join(".config/tandem/config.toml")).unwrap();
        assert!(config.contains("provider = \"ollama\""), "{config}");
        assert!(!config.contains("base_url"), "the old URL stayed: {config}");
        assert_eq!(key_sent(&preset.requests()[1]), None);
    }
    // The old server's key is still there, for the old server only.
    let keys = std::fs::read_to_string(ws.home().join(".config/tandem/credentials.toml")).unwrap();
    let keys: toml::Table = toml::from_str(&keys).unwrap();
    assert_eq!(
        keys["keys"].as_table().unwrap().keys().collect::<Vec<_>>(),
        [&old.base_url]
    );
}

/// The second case: `tandem login --provider llamacpp` asks llama.cpp's own URL for
/// its models, not the server of the previous login.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_login_to_a_local_preset_asks_that_preset() {
    let old = listing_mock(vec![Reply::text(&["OK"]), Reply::text(&["OK"])]).await;
    let ws = Workspace::new();
    logged_in_to(&ws, &old).await;
    let preset = listing_mock(vec![Reply::text(&["OK"])]).await;
    let forward = play_preset(8080, &preset).await;

    let args = ["login", "--provider", "llamacpp"];
    let (status, _, stderr) = tandem(&ws, &home_only(&ws), &args, "").await;
    assert!(
        stderr.contains("asking http://localhost:8080/v1 for its models"),
        "{stderr}"
    );
    assert_eq!(
        old.requests().len(),
        1,
        "the old server was asked: {stderr}"
    );
    if forward.is_some() {
        assert_eq!(status, 0, "{stderr}");
        assert_eq!(preset.requests()[0].body["model"], "mock-model");
        assert_eq!(key_sent(&preset.requests()[0]), None);
        let config = std::fs::read_to_string(ws.home().join(".config/tandem/config.toml")).unwrap();
        assert!(config.contains("provider = \"llamacpp\""), "{config}");
        assert!(!config.contains("base_url"), "the old URL stayed: {config}");
    }
}

/// Issue 55: `OPENAI_BASE_URL` chooses the server from the environment, and by design the
/// config file's `api` goes with the file's server, so it is not used; one warning says so,
/// once, however often the running agent reads its configuration again (`authenticate`
/// makes it), and requests go out in the server's own API.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_files_api_left_unused_by_an_environment_url_is_said_once() {
    let mock = listing_mock(vec![Reply::text(&["in chat completions"])]).await;
    let ws = Workspace::new();
    std::fs::create_dir_all(ws.home().join(".config/tandem")).unwrap();
    std::fs::write(
        ws.home().join(".config/tandem/config.toml"),
        "base_url = \"http://127.0.0.1:9/v1\"\napi = \"anthropic-messages\"\nmodel = \"mock-model\"\n",
    )
    .unwrap();
    let mut env = home_only(&ws);
    env.push(("OPENAI_BASE_URL".into(), mock.base_url.clone()));
    env.push(("OPENAI_API_KEY".into(), TEST_KEY.into()));
    let mut agent = crate::common::Agent::spawn(&env, &[]);
    agent.initialize().await;
    for _ in 0..2 {
        let answer = agent
            .request("authenticate", json!({"methodId": "api-key"}))
            .await;
        assert_eq!(answer["result"], json!({}), "{answer}");
    }
    let session = agent.new_session(&ws.project()).await["sessionId"]
        .as_str()
        .unwrap()
        .to_string();
    let (response, _) = agent.prompt(&session, "hi").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    assert!(
        mock.requests()[0].path.ends_with("/chat/completions"),
        "{:?}",
        mock.requests()[0].path
    );
    agent.assert_valid();
    let (_, stderr) = agent.shutdown().await;
    let note = "the config file's api (anthropic-messages) is not used: OPENAI_BASE_URL chooses the server, and the file's API goes with the file's server; to name this server's API, give TANDEM_API or --api";
    assert_eq!(stderr.matches(note).count(), 1, "{stderr}");
}
