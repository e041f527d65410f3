//! Getting a key to tandem without environment variables: the auth methods an editor (or the
//! ACP registry's check) is offered, `tandem login` scripted and typed, and `tandem logout`.

use std::path::Path;

use serde_json::{Value, json};

#[cfg(unix)]
use crate::common::terminal::{self, type_secret};
use crate::common::{Agent, MockModel, Reply, TEST_KEY, Workspace, listing_mock, path_str};

/// The environment of a user who set nothing up but their home: the key lives in the file
/// store (a test must not write to the developer's own keychain).
pub(super) fn home_only(ws: &Workspace) -> Vec<(String, String)> {
    let mut env = ws.base_env();
    env.push(("TANDEM_CREDENTIAL_STORE".into(), "file".into()));
    env
}

/// `tandem ARGS` with `env` (and PATH), `stdin` piped in; (status, stdout, stderr).
fn tandem(env: &[(String, String)], args: &[&str], stdin: &str) -> (i32, String, String) {
    let mut env = env.to_vec();
    env.push(("PATH".into(), std::env::var("PATH").unwrap_or_default()));
    crate::common::run_tandem(args, &env, Some(stdin), None)
}

/// `tandem login --key-stdin` of the test key for `mock` (the `openai` preset at its URL,
/// model `mock-model`), in `env`.
async fn scripted_login(env: &[(String, String)], mock: &MockModel) -> (i32, String, String) {
    let args = [
        "login",
        "--provider",
        "openai",
        "--base-url",
        &mock.base_url,
        "--model",
        "mock-model",
        "--key-stdin",
    ];
    tandem_blocking(env.to_vec(), &args, &format!("{TEST_KEY}\n")).await
}

/// [`tandem`] off the runtime that serves the mock model.
pub(super) async fn tandem_blocking(
    env: Vec<(String, String)>,
    args: &[&str],
    stdin: &str,
) -> (i32, String, String) {
    let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    let stdin = stdin.to_string();
    tokio::task::spawn_blocking(move || {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        tandem(&env, &args, &stdin)
    })
    .await
    .unwrap()
}

/// `session/new` in `ws`'s project, which must be refused for want of a key (`-32000`).
async fn refused_session(agent: &mut Agent, ws: &Workspace) -> Value {
    let response = agent
        .request(
            "session/new",
            json!({"cwd": path_str(&ws.project()), "mcpServers": []}),
        )
        .await;
    assert_eq!(response["error"]["code"], -32000, "{response}");
    response
}

/// Every file under `dir` whose bytes contain `needle`, except those named `except`.
fn files_containing(dir: &Path, needle: &str, except: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.file_name().and_then(|n| n.to_str()) != Some(except) {
                let bytes = std::fs::read(&path).unwrap();
                if String::from_utf8_lossy(&bytes).contains(needle) {
                    found.push(path.display().to_string());
                }
            }
        }
    }
    found
}

/// The registry's check (its `client.py`): spawn with nothing but HOME, send its exact
/// `initialize`, parse the first line of stdout, and find an `agent` or `terminal` method.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_registry_auth_check_passes_from_an_empty_environment() {
    let ws = Workspace::new();
    let env = vec![
        ("HOME".to_string(), path_str(&ws.home())),
        ("TERM".to_string(), "dumb".to_string()),
    ];
    let mut agent = Agent::spawn(&env, &[]);
    let init = agent
        .request_ok(
            "initialize",
            json!({
                "protocolVersion": 1,
                "clientInfo": {"name": "ACP Registry Validator", "version": "1.0.0"},
                "clientCapabilities": {
                    "terminal": true,
                    "fs": {"readTextFile": true, "writeTextFile": true},
                    "_meta": {"terminal_output": true, "terminal-auth": true},
                },
            }),
        )
        .await;
    let first_line: Value = serde_json::from_str(&agent.stdout_lines()[0]).unwrap();
    assert_eq!(
        first_line["result"], init,
        "the answer is the first stdout line"
    );
    let methods = init["authMethods"].as_array().unwrap();
    assert_eq!(methods.len(), 1, "{init}");
    let method = &methods[0];
    // No `auth.terminal`: an agent method (no type, or "agent"), whose `_meta` tells a client
    // of the older convention what to run in a terminal.
    assert!(
        method.get("type").is_none() || method["type"] == "agent",
        "{method}"
    );
    let terminal = &method["_meta"]["terminal-auth"];
    assert_eq!(terminal["args"], json!(["login"]), "{method}");
    assert!(terminal["command"].as_str().unwrap().contains("tandem"));
    // A session cannot start yet: -32000, naming the same methods.
    let response = refused_session(&mut agent, &ws).await;
    assert_eq!(response["error"]["data"]["authMethods"], json!(methods));
    assert!(
        response["error"]["message"]
            .as_str()
            .unwrap()
            .contains("tandem login"),
        "{response}"
    );
    agent.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_runs_terminal_logins_is_offered_tandem_login() {
    let ws = Workspace::new();
    let mut agent = Agent::spawn(&home_only(&ws), &[]);
    let init = agent
        .initialize_with(json!({"auth": {"terminal": true}}))
        .await;
    assert_eq!(
        init["authMethods"],
        json!([{
            "type": "terminal",
            "id": "api-key",
            "name": "Log in with an API key",
            "description": init["authMethods"][0]["description"],
            "args": ["login"],
        }])
    );
    agent.shutdown().await;
}

/// `tandem login --key-stdin`, then an editor's session with no key anywhere in its
/// environment; the key is in the store and nowhere else; `tandem logout` takes it away.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scripted_login_lets_sessions_start_with_no_key_in_the_environment() {
    let mock = listing_mock(vec![Reply::text(&["OK"]), Reply::text(&["hello"])]).await;
    let ws = Workspace::new();
    let env = home_only(&ws);
    let (status, stdout, stderr) = scripted_login(&env, &mock).await;
    assert_eq!(status, 0, "{stderr}");
    assert_eq!(stdout, "", "login writes to stderr only");
    assert!(
        stderr.contains("credentials.toml"),
        "says where the key went: {stderr}"
    );
    assert!(!stderr.contains(TEST_KEY), "{stderr}");
    let test_request = &mock.requests()[0];
    assert_eq!(
        test_request.authorization().as_deref(),
        Some(format!("Bearer {TEST_KEY}").as_str())
    );
    assert_eq!(test_request.body["model"], "mock-model");
    let config = std::fs::read_to_string(ws.home().join(".config/tandem/config.toml")).unwrap();
    assert!(config.contains("provider = \"openai\""), "{config}");
    assert!(config.contains(&mock.base_url), "{config}");
    assert!(config.contains("model = \"mock-model\""), "{config}");

    // An editor starts tandem with nothing but HOME.
    let mut agent = Agent::spawn(&env, &[]);
    agent.initialize().await;
    let session = agent.new_session(&ws.project()).await["sessionId"]
        .as_str()
        .unwrap()
        .to_string();
    let (response, updates) = agent.prompt(&session, "hi").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    assert!(format!("{updates:?}").contains("hello"));
    let prompt_request = &mock.requests()[1];
    assert_eq!(
        prompt_request.authorization().as_deref(),
        Some(format!("Bearer {TEST_KEY}").as_str())
    );
    let (_, agent_stderr) = agent.shutdown().await;
    assert!(!agent_stderr.contains(TEST_KEY));

    // Only the store holds the key: not the config, transcripts, logs or anything else.
    let stored = ws.home().join(".config/tandem/credentials.toml");
    assert!(std::fs::read_to_string(&stored).unwrap().contains(TEST_KEY));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&stored).unwrap().permissions().mode();
        assert_eq!(
            mode & 0o777,
            0o600,
            "the key file is readable only by its owner"
        );
    }
    assert_eq!(
        files_containing(&ws.home(), TEST_KEY, "credentials.toml"),
        Vec::<String>::new()
    );

    // Logout removes it, and a hosted server then needs a login again.
    let (status, _, stderr) = tandem_blocking(env.clone(), &["logout"], "").await;
    assert_eq!(status, 0, "{stderr}");
    assert!(stderr.contains("removed the key"), "{stderr}");
    assert!(!stored.exists());
    assert_eq!(
        files_containing(&ws.home(), TEST_KEY, ""),
        Vec::<String>::new()
    );
    let mut agent = Agent::spawn(&env, &[]);
    agent.initialize().await;
    refused_session(&mut agent, &ws).await;
    agent.shutdown().await;
}

/// The editor's session start failed for want of a key; the user logs in in a terminal; the
/// same tandem process then authenticates and starts the session.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_login_counts_at_once_in_a_running_agent() {
    let mock = listing_mock(vec![Reply::text(&["OK"]), Reply::text(&["after login"])]).await;
    let ws = Workspace::new();
    let mut env = home_only(&ws);
    env.push(("TANDEM_PROVIDER".into(), "openai".into()));
    env.push(("OPENAI_BASE_URL".into(), mock.base_url.clone()));
    env.push(("TANDEM_MODEL".into(), "mock-model".into()));
    let mut agent = Agent::spawn(&env, &[]);
    agent.initialize().await;
    refused_session(&mut agent, &ws).await;
    let unauthenticated = agent
        .request("authenticate", json!({"methodId": "api-key"}))
        .await;
    assert_eq!(unauthenticated["error"]["code"], -32000);

    let (status, _, stderr) =
        tandem_blocking(env.clone(), &["login", "--key-stdin"], TEST_KEY).await;
    assert_eq!(status, 0, "{stderr}");

    let authenticated = agent
        .request("authenticate", json!({"methodId": "api-key"}))
        .await;
    assert_eq!(authenticated["result"], json!({}), "{authenticated}");
    let session = agent.new_session(&ws.project()).await["sessionId"]
        .as_str()
        .unwrap()
        .to_string();
    let (response, _) = agent.prompt(&session, "hi").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    assert_eq!(
        mock.requests()[1].authorization().as_deref(),
        Some(format!("Bearer {TEST_KEY}").as_str())
    );
    agent.shutdown().await;
}

/// The model server refuses the key a login saved (revoked, expired), in a client that runs
/// no terminal itself: the prompt answers "authentication required" with the login methods;
/// `authenticate` keeps saying so while that key is all there is; the user logs in again in
/// a terminal, `authenticate` succeeds, and the same session goes on with the new key.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_a_refused_key_a_new_login_serves_the_open_session() {
    let refused = r#"{"error":{"message":"Incorrect API key provided"}}"#;
    let mock = listing_mock(vec![
        Reply::text(&["OK"]),
        Reply::status(401, refused),
        Reply::text(&["OK"]),
        Reply::text(&["with the new key"]),
    ])
    .await;
    let ws = Workspace::new();
    let mut env = home_only(&ws);
    env.push(("TANDEM_PROVIDER".into(), "openai".into()));
    env.push(("OPENAI_BASE_URL".into(), mock.base_url.clone()));
    env.push(("TANDEM_MODEL".into(), "mock-model".into()));
    let (status, _, stderr) =
        tandem_blocking(env.clone(), &["login", "--key-stdin"], TEST_KEY).await;
    assert_eq!(status, 0, "{stderr}");
    let mut agent = Agent::spawn(&env, &[]);
    let init = agent.initialize().await;
    let session = agent.new_session(&ws.project()).await["sessionId"]
        .as_str()
        .unwrap()
        .to_string();
    let (response, _) = agent.prompt(&session, "hi").await;
    assert_eq!(response["error"]["code"], -32000, "{response}");
    assert_eq!(
        response["error"]["data"]["authMethods"],
        init["authMethods"]
    );
    let message = response["error"]["message"].as_str().unwrap();
    assert!(message.contains("`tandem login`"), "{message}");
    let still = agent
        .request("authenticate", json!({"methodId": "api-key"}))
        .await;
    assert_eq!(
        still["error"]["code"], -32000,
        "the refused key is all there is: {still}"
    );

    let new_key = "sk-test-renewed-0b7e";
    let (status, _, stderr) =
        tandem_blocking(env.clone(), &["login", "--key-stdin"], new_key).await;
    assert_eq!(status, 0, "{stderr}");
    let authenticated = agent
        .request("authenticate", json!({"methodId": "api-key"}))
        .await;
    assert_eq!(authenticated["result"], json!({}), "{authenticated}");
    let (response, updates) = agent.prompt(&session, "again").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    assert!(format!("{updates:?}").contains("with the new key"));
    assert_eq!(
        mock.requests()[3].authorization().as_deref(),
        Some(format!("Bearer {new_key}").as_str())
    );
    let (_, stderr) = agent.shutdown().await;
    assert!(!stderr.contains(new_key) && !stderr.contains(TEST_KEY));
}

/// `tandem exec` with a saved key the server now refuses: a model error (exit status 1),
/// said in one line that names the way out, nothing on stdout.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exec_says_to_log_in_again_when_the_saved_key_is_refused() {
    let refused = r#"{"error":{"message":"key expired"}}"#;
    let mock = listing_mock(vec![Reply::text(&["OK"]), Reply::status(403, refused)]).await;
    let ws = Workspace::new();
    let env = home_only(&ws);
    let login = [
        "login",
        "--base-url",
        &mock.base_url,
        "--model",
        "mock-model",
        "--key-stdin",
    ];
    let (status, _, stderr) = tandem_blocking(env.clone(), &login, TEST_KEY).await;
    assert_eq!(status, 0, "{stderr}");
    let project = ws.project();
    let (status, stdout, stderr) = tokio::task::spawn_blocking(move || {
        let mut env = env;
        env.push(("PATH".into(), std::env::var("PATH").unwrap_or_default()));
        crate::common::run_tandem(&["exec", "hi"], &env, None, Some(&project))
    })
    .await
    .unwrap();
    assert_eq!(status, 1, "{stderr}");
    assert_eq!(stdout, "");
    assert!(
        stderr.contains(
            "rejected the API key (403): key expired. The key is the one `tandem login` saved: run `tandem login` to replace it."
        ),
        "{stderr}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_key_is_said_plainly_and_nothing_is_saved() {
    let mock = MockModel::start(vec![]).await;
    mock.serve_info(
        "/v1/models",
        401,
        json!({"error": {"message": "Incorrect API key provided"}}),
    );
    let ws = Workspace::new();
    let args = [
        "login",
        "--provider",
        "openai",
        "--base-url",
        &mock.base_url,
        "--key-stdin",
    ];
    let (status, _, stderr) = tandem_blocking(home_only(&ws), &args, "sk-wrong-123456").await;
    assert_eq!(status, 1, "{stderr}");
    assert!(stderr.contains("refused the key"), "{stderr}");
    assert!(stderr.contains("Incorrect API key provided"), "{stderr}");
    assert!(stderr.contains("Nothing was saved"), "{stderr}");
    assert!(!stderr.contains("sk-wrong-123456"), "{stderr}");
    assert!(
        !ws.home().join(".config/tandem").exists(),
        "nothing written"
    );
    assert!(mock.requests().is_empty(), "no completion was tried");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scripted_login_without_a_key_for_a_hosted_server_is_a_usage_error() {
    let ws = Workspace::new();
    let (status, _, stderr) =
        tandem_blocking(home_only(&ws), &["login", "--provider", "openrouter"], "").await;
    assert_eq!(status, 2, "{stderr}");
    assert!(stderr.contains("--key-stdin"), "{stderr}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_host_is_named_as_such() {
    let ws = Workspace::new();
    let args = [
        "login",
        "--base-url",
        "http://no-such-host.invalid/v1",
        "--key-stdin",
        "--model",
        "m",
    ];
    let (status, _, stderr) = tandem_blocking(home_only(&ws), &args, "sk-x").await;
    assert_eq!(status, 1, "{stderr}");
    assert!(stderr.contains("could not resolve host"), "{stderr}");
}

/// `tandem login ARGS` in a pseudo-terminal with `env` only.
#[cfg(unix)]
pub(super) fn login_terminal(env: &[(String, String)], args: &[&str]) -> terminal::Terminal {
    let args: Vec<String> = std::iter::once("login")
        .chain(args.iter().copied())
        .map(String::from)
        .collect();
    terminal::spawn(&crate::common::tandem_bin(), &args, env)
}

/// The login a person types: the server from the menu, a URL, a wrong key (refused, asked
/// again, nothing saved), then the right one and a model picked from the list.
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_interactive_login_in_a_terminal() {
    let mock = listing_mock(vec![Reply::text(&["OK"])]).await;
    let ws = Workspace::new();
    let env = home_only(&ws);
    let base_url = mock.base_url.clone();
    let mock = std::sync::Arc::new(mock);
    let flip = mock.clone();
    let home = ws.home();
    tokio::task::spawn_blocking(move || {
        use expectrl::Expect;
        let mut term = login_terminal(&env, &[]);
        term.expect("Which model server?").unwrap();
        // Down past the ten presets to "another OpenAI-compatible server".
        for _ in 0..10 {
            term.send("\x1b[B").unwrap();
        }
        term.send("\r").unwrap();
        term.expect("Base URL").unwrap();
        term.send(format!("{base_url}\r")).unwrap();
        // A wrong key: the server refuses it, the user is asked again.
        flip.serve_info("/v1/models", 401, json!({"error": {"message": "bad key"}}));
        term.expect("API key for").unwrap();
        type_secret(&mut term, "sk-wrong-999\r");
        term.expect("refused the key").unwrap();
        term.expect("attempt 2 of 3").unwrap();
        assert!(
            !home.join(".config/tandem/credentials.toml").exists(),
            "a refused key is not saved"
        );
        flip.serve_info(
            "/v1/models",
            200,
            json!({"data": [{"id": "mock-model"}, {"id": "other-model"}]}),
        );
        type_secret(&mut term, &format!("{TEST_KEY}\r"));
        term.expect("Which model?").unwrap();
        term.send("other").unwrap();
        term.send("\r").unwrap();
        term.expect("tandem is ready").unwrap();
    })
    .await
    .unwrap();
    let config = std::fs::read_to_string(ws.home().join(".config/tandem/config.toml")).unwrap();
    assert!(config.contains("model = \"other-model\""), "{config}");
    assert!(config.contains(&mock.base_url), "{config}");
    let stored =
        std::fs::read_to_string(ws.home().join(".config/tandem/credentials.toml")).unwrap();
    assert!(stored.contains(TEST_KEY) && !stored.contains("sk-wrong-999"));
    assert_eq!(mock.requests()[0].body["model"], "other-model");

    // Again, for the same server: Enter keeps the stored key.
    mock.push(Reply::text(&["OK"]));
    let env = home_only(&ws);
    let base_url = mock.base_url.clone();
    tokio::task::spawn_blocking(move || {
        use expectrl::Expect;
        let mut term = login_terminal(&env, &["--base-url", &base_url]);
        term.expect("press Enter to keep the stored key").unwrap();
        type_secret(&mut term, "\r");
        term.expect("Which model?").unwrap();
        term.send("\r").unwrap();
        term.expect("tandem is ready").unwrap();
    })
    .await
    .unwrap();
    assert_eq!(
        mock.requests()[1].authorization().as_deref(),
        Some(format!("Bearer {TEST_KEY}").as_str())
    );
}

/// Issue 31: a server URL written without a scheme. A local address is taken as http:// (the
/// request reaches the server), any other host gets one clear message, and every wrong
/// setting is reported in one form, `tandem: error: …`, never as a timestamped log line.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_url_without_a_scheme_and_other_wrong_settings_get_one_clear_message() {
    let mock = crate::common::MockModel::start(vec![crate::common::Reply::text(&["hello"])]).await;
    let ws = crate::common::Workspace::new();
    let mut env = ws.base_env();
    env.retain(|(k, _)| k != "RUST_LOG");
    let bare = mock.base_url.trim_start_matches("http://").to_string();
    let (code, out, err) = crate::common::run_tandem(
        &["exec", "--base-url", &bare, "--model", "m", "hi"],
        &env,
        None,
        Some(&ws.project()),
    );
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("hello"), "{out}");
    assert_eq!(mock.requests().len(), 1);
    for (args, needle) in [
        (
            vec!["exec", "--base-url", "api.example.com/v1", "hi"],
            "`api.example.com/v1` has no scheme: write https://api.example.com/v1",
        ),
        (
            vec!["exec", "--mode", "yolo", "hi"],
            "unknown mode `yolo` (--mode); modes:",
        ),
        (
            vec!["exec", "--provider", "olama", "hi"],
            "unknown provider `olama`; known providers:",
        ),
    ] {
        let (code, _, err) = crate::common::run_tandem(&args, &env, None, Some(&ws.project()));
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(err.starts_with("tandem: error: "), "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
        assert!(!err.contains("ERROR"), "a log line: {err}");
    }
}

/// ACP's `logout` (advertised as `auth.logout`): the key `tandem login` stored is removed, and
/// the running agent's sessions answer as when no key exists; a login in a terminal brings
/// them back. A key from the environment cannot be taken away, and the error says which.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn logout_from_the_editor_takes_the_stored_key_away_from_running_sessions() {
    let mock = listing_mock(vec![
        Reply::text(&["OK"]),
        Reply::text(&["before"]),
        Reply::text(&["OK"]),
        Reply::text(&["after a new login"]),
    ])
    .await;
    let ws = Workspace::new();
    let env = home_only(&ws);
    let (status, _, stderr) = scripted_login(&env, &mock).await;
    assert_eq!(status, 0, "{stderr}");
    let stored = ws.home().join(".config/tandem/credentials.toml");
    assert!(stored.exists());

    let mut agent = Agent::spawn(&env, &[]);
    let init = agent.initialize().await;
    assert_eq!(
        init["agentCapabilities"]["auth"]["logout"],
        json!({}),
        "{init}"
    );
    let session = agent.new_session(&ws.project()).await["sessionId"]
        .as_str()
        .unwrap()
        .to_string();
    let (r, _) = agent.prompt(&session, "hi").await;
    assert_eq!(r["result"]["stopReason"], "end_turn", "{r}");

    assert_eq!(agent.request_ok("logout", json!({})).await, json!({}));
    assert!(!stored.exists(), "the stored key is gone");
    let asked = mock.requests().len();
    let (r, _) = agent.prompt(&session, "still there?").await;
    assert_eq!(r["error"]["code"], -32000, "{r}");
    assert!(
        r["error"]["message"]
            .as_str()
            .unwrap()
            .contains("no API key"),
        "{r}"
    );
    assert_eq!(
        mock.requests().len(),
        asked,
        "nothing was sent without the key"
    );
    refused_session(&mut agent, &ws).await;

    // A login in a terminal brings the open session back.
    let (status, _, stderr) = scripted_login(&env, &mock).await;
    assert_eq!(status, 0, "{stderr}");
    let (r, updates) = agent.prompt(&session, "and now?").await;
    assert_eq!(r["result"]["stopReason"], "end_turn", "{r}");
    assert!(format!("{updates:?}").contains("after a new login"));
    agent.assert_valid();
    agent.shutdown().await;

    // With the key in the environment, logout says it cannot take it away.
    let mut agent = Agent::spawn(&ws.env(&mock), &[]);
    agent.initialize().await;
    let r = agent.request("logout", json!({})).await;
    assert_eq!(r["error"]["code"], -32600, "{r}");
    assert!(
        r["error"]["message"]
            .as_str()
            .unwrap()
            .contains("OPENAI_API_KEY"),
        "{r}"
    );
    agent.shutdown().await;
}

/// `tandem login --key-stdin` of `key` for a server of the user's own (`mock`'s URL, no
/// preset), model `mock-model`; fails the test unless it saved.
async fn login_to_own_server(env: &[(String, String)], mock: &MockModel, key: &str) {
    let args = [
        "login",
        "--base-url",
        &mock.base_url,
        "--model",
        "mock-model",
        "--key-stdin",
    ];
    let (status, _, stderr) = tandem_blocking(env.to_vec(), &args, key).await;
    assert_eq!(status, 0, "{stderr}");
}

/// `tandem logout` in a terminal of its own; fails the test unless it removed a key.
async fn logout_in_a_terminal(env: &[(String, String)]) {
    let (status, _, stderr) = tandem_blocking(env.to_vec(), &["logout"], "").await;
    assert_eq!(status, 0, "{stderr}");
    assert!(stderr.contains("removed the key"), "{stderr}");
}

/// A user who logged in to a server of their own (`mock`) and out again: the config file
/// still names the server, no key is stored for it. Takes the first of `mock`'s replies.
async fn logged_out_of(env: &[(String, String)], mock: &MockModel) {
    login_to_own_server(env, mock, TEST_KEY).await;
    logout_in_a_terminal(env).await;
}

/// Makes the login stamp of `ws`'s config directory impossible to write (a directory stands
/// at its name), so that only what the agent is told, or a refused request, can bring it the
/// news of a login.
fn without_a_login_stamp(ws: &Workspace) {
    std::fs::create_dir_all(ws.home().join(".config/tandem/.login-stamp")).unwrap();
}

/// The key a request carried (a bare `Bearer` carries none).
fn key_sent(request: &crate::common::mock_model::Recorded) -> Option<String> {
    let header = request.authorization()?;
    let token = header.trim_start_matches("Bearer").trim();
    (!token.is_empty()).then(|| token.to_string())
}

/// Issue 55: an agent started after `tandem logout`, on a server of the user's own that takes
/// requests without a key, sends none. A `tandem login` in a terminal (another process, the
/// same config directory and key store) then reaches it: the open session's next prompt
/// carries the new key, with no restart and nothing said to the agent; a `tandem logout`
/// after it reaches it the same way, and the next prompt carries no key.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_login_and_a_logout_in_a_terminal_reach_a_running_agent() {
    let mock = listing_mock(vec![
        Reply::text(&["OK"]),
        Reply::text(&["OK"]),
        Reply::text(&["with the key"]),
        Reply::text(&["without a key"]),
    ])
    .await;
    let ws = Workspace::new();
    let env = home_only(&ws);
    logged_out_of(&env, &mock).await;
    let mut agent = Agent::spawn(&env, &[]);
    agent.initialize().await;
    let session = agent.new_session(&ws.project()).await["sessionId"]
        .as_str()
        .unwrap()
        .to_string();

    let new_key = "sk-test-logged-in-later-5c1d";
    login_to_own_server(&env, &mock, new_key).await;
    let (response, updates) = agent.prompt(&session, "hi").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    assert!(format!("{updates:?}").contains("with the key"));
    assert_eq!(
        key_sent(&mock.requests()[2]).as_deref(),
        Some(new_key),
        "the login reached the running agent"
    );

    logout_in_a_terminal(&env).await;
    let (response, _) = agent.prompt(&session, "again").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    assert_eq!(
        key_sent(&mock.requests()[3]),
        None,
        "the logout reached the running agent"
    );
    agent.assert_valid();
    let (_, stderr) = agent.shutdown().await;
    assert!(!stderr.contains(new_key), "{stderr}");
}

/// Issue 55: `authenticate` is the editor saying a login may have happened, so the agent
/// reads the store again even when nothing else told it of one (here the login stamp cannot
/// be written): after a `tandem login` in a terminal, `authenticate` answers `{}` and a new
/// session's prompt carries the key.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn authenticate_reads_the_store_again() {
    let mock = listing_mock(vec![
        Reply::text(&["OK"]),
        Reply::text(&["OK"]),
        Reply::text(&["authenticated"]),
    ])
    .await;
    let ws = Workspace::new();
    without_a_login_stamp(&ws);
    let env = home_only(&ws);
    logged_out_of(&env, &mock).await;
    let mut agent = Agent::spawn(&env, &[]);
    agent.initialize().await;

    let new_key = "sk-test-told-to-look-8e2f";
    login_to_own_server(&env, &mock, new_key).await;
    let authenticated = agent
        .request("authenticate", json!({"methodId": "api-key"}))
        .await;
    assert_eq!(authenticated["result"], json!({}), "{authenticated}");
    let session = agent.new_session(&ws.project()).await["sessionId"]
        .as_str()
        .unwrap()
        .to_string();
    let (response, _) = agent.prompt(&session, "hi").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    assert_eq!(key_sent(&mock.requests()[2]).as_deref(), Some(new_key));
    agent.assert_valid();
    agent.shutdown().await;
}

/// Issue 55: a server that refuses a request sent without a key gets an answer naming
/// `tandem login`; after a login nobody told the agent of (the login stamp cannot be
/// written), the next refusal makes the agent read the store again, and the request goes
/// once more, with the key found, in the same prompt.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refusal_without_a_key_names_tandem_login_and_reads_the_store_again() {
    let needs = r#"{"error":{"message":"Missing bearer token"}}"#;
    let mock = listing_mock(vec![
        Reply::text(&["OK"]),
        Reply::status(401, needs),
        Reply::text(&["OK"]),
        Reply::status(401, needs),
        Reply::text(&["with the key found"]),
    ])
    .await;
    let ws = Workspace::new();
    without_a_login_stamp(&ws);
    let env = home_only(&ws);
    logged_out_of(&env, &mock).await;
    let mut agent = Agent::spawn(&env, &[]);
    agent.initialize().await;
    let session = agent.new_session(&ws.project()).await["sessionId"]
        .as_str()
        .unwrap()
        .to_string();

    let (response, _) = agent.prompt(&session, "hi").await;
    let message = response["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("refused the request (401)") && message.contains("run `tandem login`"),
        "{response}"
    );

    let new_key = "sk-test-found-on-refusal-3a9b";
    login_to_own_server(&env, &mock, new_key).await;
    let (response, updates) = agent.prompt(&session, "again").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    assert!(format!("{updates:?}").contains("with the key found"));
    let requests = mock.requests();
    assert_eq!(key_sent(&requests[3]), None, "nothing told the agent");
    assert_eq!(key_sent(&requests[4]).as_deref(), Some(new_key));
    agent.assert_valid();
    agent.shutdown().await;
}
