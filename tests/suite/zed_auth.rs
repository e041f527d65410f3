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

/// The project's own Zed entries (`agent_servers` in Zed's settings): editors/zed.json's and
/// those of README's Zed snippets, each with where it comes from. README's entries are
/// editors/zed.json's, word for word (README leaves out the npm entry, which needs the first
/// release).
fn suggested_entries() -> Vec<(String, Value)> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut documents = vec![(
        "editors/zed.json".to_string(),
        std::fs::read_to_string(root.join("editors/zed.json")).unwrap(),
    )];
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    for block in readme.split("```json").skip(1) {
        let block = block.split("```").next().unwrap();
        if block.contains("agent_servers") {
            documents.push(("README.md".to_string(), block.to_string()));
        }
    }
    assert!(documents.len() > 1, "README shows a Zed snippet");
    let mut entries = Vec::new();
    let mut zed_json = Value::Null;
    for (source, text) in documents {
        let doc: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{source}: {e}"));
        if source == "editors/zed.json" {
            zed_json = doc["agent_servers"].clone();
        }
        for (name, entry) in doc["agent_servers"].as_object().unwrap() {
            if source == "README.md" {
                assert_eq!(
                    &zed_json[name], entry,
                    "README's Zed entry \"{name}\" is not editors/zed.json's"
                );
            }
            entries.push((format!("{source} \"{name}\""), entry.clone()));
        }
    }
    entries
}

/// The tandem an entry starts: the binary under test with the entry's `args` and `env`; for
/// the npm launcher (`npx -y tandem-acp …`), with what follows the package, which the
/// launcher passes on (`spawn(binary, process.argv.slice(2), …)` in editors/npm).
fn started_by(entry: &Value) -> zed::AgentServer {
    let agent = zed::AgentServer::from_settings(entry);
    match entry["command"].as_str() {
        Some("tandem") => agent,
        Some("npx") => {
            assert_eq!(agent.args[..2], ["-y", "tandem-acp"], "{entry}");
            zed::AgentServer::tandem(&agent.args[2..], &agent.env)
        }
        other => panic!("an entry that does not start tandem: {other:?}"),
    }
}

/// The `--model` among `args`, if any.
fn model_flag(args: &[String]) -> Option<String> {
    let at = args.iter().position(|a| a == "--model")?;
    args.get(at + 1).cloned()
}

/// First run in Zed, no key anywhere, tandem configured as editors/zed.json configures it
/// (`"args": ["--mode", "ask"]`). Zed announces `auth.terminal`; tandem offers a `terminal`
/// method, which Zed runs itself, no feature flag needed, as the agent's command line with
/// the method's `args` after it: `tandem --mode ask login` (`zed::login_command` quotes the
/// rule). The login runs in Zed's terminal; once it exits 0 Zed opens the session again on the
/// same connection, and it starts.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn zeds_login_button_runs_tandem_login_and_then_the_session_starts() {
    let mock = listing_mock(vec![Reply::text(&["OK"]), Reply::text(&["hello"])]).await;
    let ws = Workspace::new();
    let env = home_only(&ws);
    let folders = [ws.project()];
    let (_, entry) = suggested_entries()
        .into_iter()
        .find(|(source, _)| source == "editors/zed.json \"tandem\"")
        .unwrap();
    let configured = zed::AgentServer::from_settings(&entry);
    assert_eq!(
        configured.args,
        ["--mode", "ask"],
        "the entry this test is about"
    );
    let mut agent_env = env.clone();
    agent_env.extend(configured.env.iter().cloned());
    let args: Vec<&str> = configured.args.iter().map(String::as_str).collect();
    let mut agent = Agent::spawn_with(&agent_env, &args, Some(zed::editor(&folders)));
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
    let login = zed::login_command(&methods[0], &configured)
        .expect("Zed runs a terminal method itself; without one, it sends `authenticate`");
    assert!(
        same_file(&login.command, &crate::common::tandem_bin()),
        "the agent's own command: {login:?}"
    );
    assert_eq!(login.args, ["--mode", "ask", "login"]);

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

/// Issue 55: Zed's login button for every entry the project suggests (editors/zed.json,
/// README's Zed snippets) and for README's advice to put `--model` in `args`. Zed runs the
/// entry's command line with the method's `args` after them, read here from tandem's own
/// `initialize` answer (`zed::login_command` quotes the rule), so tandem must take the
/// entry's flags before `login`: the login runs to its end (stdin is no terminal here, which
/// a login to a server of the user's own takes as "no key": it checks the server, sends its
/// one-token request and saves), an entry's `--model` chooses the login's model as `tandem
/// login --model` does, and `logout` after the same flags works too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn zeds_login_button_takes_the_flags_of_every_suggested_entry() {
    let mut entries = suggested_entries();
    entries.push((
        "README's `--model` in args".to_string(),
        json!({"type": "custom", "command": "tandem", "args": ["--model", "other-model"], "env": {}}),
    ));
    let mut logins = 0;
    for (source, entry) in entries {
        let started = started_by(&entry);
        let mock = listing_mock(vec![Reply::text(&["OK"]), Reply::text(&["OK"])]).await;
        let ws = Workspace::new();
        let mut env = home_only(&ws);
        // Logged in once to a server of the user's own: a login is offered, to replace it.
        scripted_login(&env, &mock.base_url, TEST_KEY).await;
        env.push(("PATH".into(), std::env::var("PATH").unwrap_or_default()));
        let mut agent_env = env.clone();
        agent_env.extend(started.env.iter().cloned());
        let args: Vec<&str> = started.args.iter().map(String::as_str).collect();
        let folders = [ws.project()];
        let mut agent = Agent::spawn_with(&agent_env, &args, Some(zed::editor(&folders)));
        let init = zed::initialize(&mut agent).await;
        agent.assert_valid();
        agent.shutdown().await;
        let run = |args: Vec<String>, env: Vec<(String, String)>| {
            tokio::task::spawn_blocking(move || {
                let args: Vec<&str> = args.iter().map(String::as_str).collect();
                crate::common::run_tandem(&args, &env, None, None)
            })
        };
        if let Some(method) = init["authMethods"].as_array().unwrap().first() {
            let login = zed::login_command(method, &started).unwrap();
            assert_eq!(login.args[..started.args.len()], started.args[..]);
            let mut login_env = env.clone();
            login_env.extend(login.env.iter().cloned());
            let shown = login.args.join(" ");
            let (status, _, stderr) = run(login.args, login_env).await.unwrap();
            assert_eq!(status, 0, "{source}: `tandem {shown}`: {stderr}");
            assert!(stderr.contains("tandem is ready"), "{source}: {stderr}");
            let model = model_flag(&started.args).unwrap_or_else(|| "mock-model".into());
            let requests = mock.requests();
            assert_eq!(requests.len(), 2, "{source}: the login's test request");
            assert_eq!(requests[1].body["model"], model.as_str(), "{source}");
            let config =
                std::fs::read_to_string(ws.home().join(".config/tandem/config.toml")).unwrap();
            assert!(
                config.contains(&format!("model = \"{model}\"")),
                "{source}: {config}"
            );
            logins += 1;
        } else {
            // A preset that takes no key (Ollama): Zed shows no login button.
            assert!(
                started
                    .args
                    .windows(2)
                    .any(|w| w == ["--provider", "ollama"]),
                "{source}: no login offered: {init}"
            );
        }
        let mut args = started.args.clone();
        args.push("logout".into());
        let shown = args.join(" ");
        let (status, _, stderr) = run(args, env.clone()).await.unwrap();
        assert_eq!(status, 0, "{source}: `tandem {shown}`: {stderr}");
    }
    assert!(logins >= 4, "{logins} of the entries were logged in with");
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

    let login = zed::login_command(&methods[0], &zed::AgentServer::tandem(&[], &[]))
        .expect("Zed can run the login");
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
    let configured = zed::AgentServer {
        command: "/bin/agent".into(),
        args: vec!["--acp".into(), "--verbose".into()],
        env: vec![
            ("BASE".into(), "1".into()),
            ("SHARED".into(), "agent".into()),
        ],
    };
    // A terminal method: the configured command line, then the method's; its env over the
    // configured one; its `_meta` unread.
    let terminal = json!({"type": "terminal", "id": "a", "name": "Log in", "args": ["/auth"],
        "env": {"SHARED": "method"},
        "_meta": {"terminal-auth": {"label": "l", "command": "/bin/other", "args": ["x"]}}});
    let login = zed::login_command(&terminal, &configured).unwrap();
    assert_eq!(
        (
            login.label.as_str(),
            login.command.as_str(),
            login.args.clone()
        ),
        (
            "Log in",
            "/bin/agent",
            vec!["--acp".to_string(), "--verbose".into(), "/auth".into()]
        )
    );
    assert_eq!(
        login.env.last(),
        Some(&("SHARED".to_string(), "method".to_string()))
    );
    let bare = json!({"type": "terminal", "id": "a", "name": "A"});
    assert_eq!(
        zed::login_command(&bare, &configured).unwrap().args,
        ["--acp", "--verbose"]
    );

    // Any other type: only `_meta["terminal-auth"]`, whole.
    let method = |meta: Value| json!({"id": "a", "name": "A", "_meta": meta});
    let full = method(
        json!({"terminal-auth": {"label": "l", "command": "/bin/x", "args": ["login"], "env": {"K": "v"}}}),
    );
    let login = zed::login_command(&full, &configured).unwrap();
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
        zed::login_command(&short, &configured).unwrap().args,
        Vec::<String>::new()
    );
    // No label, or no _meta at all: Zed sends `authenticate` instead.
    assert_eq!(
        zed::login_command(
            &method(json!({"terminal-auth": {"command": "/bin/x"}})),
            &configured
        ),
        None
    );
    assert_eq!(
        zed::login_command(&json!({"id": "a", "name": "A"}), &configured),
        None
    );
}
