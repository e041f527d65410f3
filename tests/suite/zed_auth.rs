//! Logging in from Zed, with a client that does what Zed does (`tests/common/zed.rs`): the
//! first run with no key, a key the model server refuses later, and how a failure's details
//! reach the user. Each rule is quoted from Zed's source where the test relies on it.

use expectrl::Expect;
use serde_json::{Value, json};

use crate::common::terminal::type_secret;
use crate::common::{
    Agent, MockModel, Reply, TEST_KEY, Workspace, joined, listing_mock, path_str, zed,
};

/// The key the user types when logging in again.
const NEW_KEY: &str = "sk-test-second-4d2e9a";

/// The environment of a user who set nothing up but their home; keys go to the file store
/// (a test must not write to the developer's own keychain).
fn home_only(ws: &Workspace) -> Vec<(String, String)> {
    let mut env = ws.base_env();
    env.push(("TANDEM_CREDENTIAL_STORE".into(), "file".into()));
    env
}

/// `tandem login --key-stdin` for the server at `base_url` with `key`, as a script would run
/// it; fails the test unless it saved.
async fn scripted_login(env: &[(String, String)], base_url: &str, key: &str) {
    let mut env = env.to_vec();
    env.push(("PATH".into(), std::env::var("PATH").unwrap_or_default()));
    let args: Vec<String> = ["login", "--base-url", base_url, "--model", "mock-model"]
        .iter()
        .map(|a| a.to_string())
        .chain(["--key-stdin".to_string()])
        .collect();
    let key = key.to_string();
    let (status, _, stderr) = tokio::task::spawn_blocking(move || {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        crate::common::run_tandem(&args, &env, Some(&key), None)
    })
    .await
    .unwrap();
    assert_eq!(status, 0, "{stderr}");
}

fn bearer(key: &str) -> Option<String> {
    Some(format!("Bearer {key}"))
}

fn same_file(a: &str, b: &str) -> bool {
    std::fs::canonicalize(a).unwrap() == std::fs::canonicalize(b).unwrap()
}

/// First run in Zed, no key anywhere. Zed announces `auth.terminal` and
/// `_meta["terminal-auth"]`; tandem offers a `terminal` method, which Zed runs itself only
/// behind its beta flag (`acp::AuthMethod::Terminal(terminal) if
/// cx.has_flag::<AcpBetaFeatureFlag>()`), so the method also carries
/// `_meta["terminal-auth"]` with tandem's own path: without it Zed would send
/// `authenticate`, which cannot log anyone in. The login runs in Zed's terminal; once it
/// exits 0 Zed opens the session again on the same connection, and it starts.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn zeds_login_button_runs_tandem_login_and_then_the_session_starts() {
    let mock = listing_mock(vec![Reply::text(&["OK"]), Reply::text(&["hello"])]).await;
    let ws = Workspace::new();
    let env = home_only(&ws);
    let folders = [ws.project()];
    let mut agent = Agent::spawn_with(&env, &[], Some(zed::editor(&folders)));
    let init = zed::initialize(&mut agent).await;
    let methods = init["authMethods"].as_array().unwrap().clone();
    assert_eq!(methods.len(), 1, "{init}");
    assert_eq!(
        methods[0]["type"], "terminal",
        "Zed announced auth.terminal"
    );
    assert_eq!(methods[0]["args"], json!(["login"]));

    // No key: "auth required", and Zed shows a button per method.
    let refused = zed::reconnect(&mut agent, &folders, None).await;
    assert_eq!(refused["error"]["code"], -32000, "{refused}");
    let login = zed::login_command(&methods[0])
        .expect("Zed finds the command to run; without it, it sends `authenticate`");
    assert!(
        same_file(&login.command, &crate::common::tandem_bin()),
        "tandem's own binary: {login:?}"
    );
    assert_eq!(login.args, ["login"]);

    let base_url = mock.base_url.clone();
    let status = zed::run_login(&login, &env, move |term| {
        term.expect("Which model server?").unwrap();
        // Down past the presets to "another OpenAI-compatible server".
        for _ in 0..10 {
            term.send("\x1b[B").unwrap();
        }
        term.send("\r").unwrap();
        term.expect("Base URL").unwrap();
        term.send(format!("{base_url}\r")).unwrap();
        term.expect("API key for").unwrap();
        type_secret(term, &format!("{TEST_KEY}\r"));
        term.expect("Which model?").unwrap();
        term.send("\r").unwrap();
        term.expect("tandem is ready").unwrap();
    })
    .await;
    assert_eq!(status, 0, "the login succeeded");

    let opened = zed::reconnect(&mut agent, &folders, None).await;
    let id = opened["result"]["sessionId"]
        .as_str()
        .unwrap_or_else(|| panic!("the session starts after the login: {opened}"))
        .to_string();
    let (response, updates) = agent.prompt(&id, "hi").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    assert_eq!(joined(&updates, "agent_message_chunk"), "hello");
    assert_eq!(mock.requests()[1].authorization(), bearer(TEST_KEY));
    agent.assert_valid();
}

/// A key that worked is refused later (revoked, expired). Zed shows its login callout only
/// for "auth required": its prompt path has "`if err.code == acp::ErrorCode::AuthRequired {
/// return Err(anyhow!(acp::Error::auth_required())); }`" and shows any `-32603` as an error.
/// So the prompt answers `-32000`, naming the login methods. The user logs in again from
/// that callout (in the terminal: Enter for the configured server, Enter for its URL, the
/// new key, Enter for the model); Zed reopens the thread with `session/load` on the same
/// connection, and the next prompt goes out with the new key, after the whole conversation.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_key_brings_zeds_login_back_and_the_thread_goes_on() {
    let body = r#"{"error":{"message":"Incorrect API key provided","code":"invalid_api_key"}}"#;
    let mock = listing_mock(vec![
        Reply::text(&["OK"]),
        Reply::text(&["first answer"]),
        Reply::status(401, body),
        Reply::text(&["OK"]),
        Reply::text(&["after login"]),
    ])
    .await;
    let ws = Workspace::new();
    let env = home_only(&ws);
    // Logged in once, to a server of the user's own that takes a key.
    scripted_login(&env, &mock.base_url, TEST_KEY).await;
    let folders = [ws.project()];
    let mut agent = Agent::spawn_with(&env, &[], Some(zed::editor(&folders)));
    let init = zed::initialize(&mut agent).await;
    let methods = init["authMethods"].as_array().unwrap().clone();
    assert_eq!(
        methods.len(),
        1,
        "a saved key can be replaced by a login: {init}"
    );
    let id = zed::new_session(&mut agent, &folders, json!([])).await["sessionId"]
        .as_str()
        .unwrap()
        .to_string();
    let (first, _) = agent.prompt(&id, "first").await;
    assert_eq!(first["result"]["stopReason"], "end_turn", "{first}");

    let (refused, _) = agent.prompt(&id, "second").await;
    let error = &refused["error"];
    assert_eq!(error["code"], -32000, "{refused}");
    assert_eq!(error["data"]["authMethods"], json!(methods));
    assert!(
        zed::error_text(error).starts_with("Authentication required"),
        "{error}"
    );
    let message = error["message"].as_str().unwrap();
    assert!(
        message.contains("rejected the API key (401)") && message.contains("tandem login"),
        "{message}"
    );

    let login = zed::login_command(&methods[0]).expect("Zed can run the login");
    let status = zed::run_login(&login, &env, |term| {
        term.expect("Which model server?").unwrap();
        term.send("\r").unwrap();
        term.expect("Base URL").unwrap();
        term.send("\r").unwrap();
        term.expect("press Enter to keep the stored key").unwrap();
        type_secret(term, &format!("{NEW_KEY}\r"));
        term.expect("Which model?").unwrap();
        term.send("\r").unwrap();
        term.expect("tandem is ready").unwrap();
    })
    .await;
    assert_eq!(status, 0);

    let reopened = zed::reconnect(&mut agent, &folders, Some(&id)).await;
    assert!(reopened.get("result").is_some(), "{reopened}");
    let replayed = agent.drain();
    assert!(
        joined(&replayed, "agent_message_chunk").contains("first answer"),
        "the thread is whole: {replayed:?}"
    );
    let (third, updates) = agent.prompt(&id, "third").await;
    assert_eq!(third["result"]["stopReason"], "end_turn", "{third}");
    assert_eq!(joined(&updates, "agent_message_chunk"), "after login");
    let requests = mock.requests();
    assert_eq!(requests[2].authorization(), bearer(TEST_KEY));
    assert_eq!(requests[4].authorization(), bearer(NEW_KEY));
    assert!(
        requests[4].body["messages"]
            .to_string()
            .contains("first answer"),
        "the model gets the conversation so far"
    );
    agent.assert_valid();
}

/// A `-32603` from a model failure reads in Zed as its details. Zed unwraps the data only
/// when it fits `#[serde(deny_unknown_fields)] struct ErrorDetails { details: Box<str> }`
/// ("`Ok(ErrorDetails { details }) => … Err(anyhow!(details))`, `Err(_) => Err(anyhow!(err))`"
/// shows the raw error). tandem's classification is still there for scripts, in the error's
/// `_meta.tandem`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_failure_shows_in_zed_as_its_details() {
    let script = (0..2)
        .map(|_| Reply::status(500, r#"{"error":{"message":"upstream exploded"}}"#))
        .collect();
    let mock = MockModel::start(script).await;
    let ws = Workspace::new();
    let config = ws.write(
        "config.toml",
        "[retry]\nmax_attempts = 2\ninitial_delay_ms = 10\nmax_total_secs = 5\n",
    );
    let folders = [ws.project()];
    let mut agent = Agent::spawn_with(
        &ws.env(&mock),
        &["--config", &path_str(&config)],
        Some(zed::editor(&folders)),
    );
    zed::initialize(&mut agent).await;
    let id = zed::new_session(&mut agent, &folders, json!([])).await["sessionId"]
        .as_str()
        .unwrap()
        .to_string();
    let (response, _) = agent.prompt(&id, "hi").await;
    let error = &response["error"];
    assert_eq!(error["code"], -32603, "{response}");
    let shown = zed::error_text(error);
    assert_eq!(
        shown,
        format!(
            "The model server at {} failed with HTTP 500 after 2 attempts: upstream exploded.",
            mock.base_url
        ),
        "{error}"
    );
    assert_eq!(
        error["_meta"]["tandem"],
        json!({"class": "server_error", "attempts": 2, "status": 500})
    );
    assert_eq!(error["data"].as_object().map(|d| d.len()), Some(1));
    crate::common::still_usable(&mock, &mut agent, &id).await;
    agent.assert_valid();
}

/// The client's login rules, checked without the binary.
#[test]
fn zeds_login_rules_as_the_client_applies_them() {
    let method = |meta: Value| json!({"type": "terminal", "id": "a", "name": "A", "_meta": meta});
    let full = method(
        json!({"terminal-auth": {"label": "l", "command": "/bin/x", "args": ["login"], "env": {"K": "v"}}}),
    );
    let login = zed::login_command(&full).unwrap();
    assert_eq!(
        (
            login.command.as_str(),
            login.args.clone(),
            login.env.clone()
        ),
        (
            "/bin/x",
            vec!["login".to_string()],
            vec![("K".into(), "v".into())]
        )
    );
    let short = method(json!({"terminal-auth": {"label": "l", "command": "/bin/x"}}));
    assert_eq!(
        zed::login_command(&short).unwrap().args,
        Vec::<String>::new()
    );
    // No label, or no _meta at all: Zed sends `authenticate` instead.
    assert_eq!(
        zed::login_command(&method(json!({"terminal-auth": {"command": "/bin/x"}}))),
        None
    );
    assert_eq!(
        zed::login_command(&json!({"type": "terminal", "id": "a", "name": "A", "args": ["login"]})),
        None
    );
}
