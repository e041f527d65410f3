//! `initialize`, `authenticate` and `session/new` as an editor performs them.

use serde_json::json;

use crate::common::{Agent, MockModel, Reply, Workspace, response};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn initialize_reports_tandem_and_honest_capabilities() {
    let mock = MockModel::start(vec![]).await;
    let ws = Workspace::new();
    let mut agent = Agent::spawn(&ws.env(&mock), &[]);
    let init = agent.initialize().await;
    assert_eq!(init["protocolVersion"], 1);
    assert_eq!(init["agentInfo"]["name"], "tandem");
    assert_eq!(init["agentInfo"]["title"], "tandem");
    assert_eq!(init["agentInfo"]["version"], env!("CARGO_PKG_VERSION"));
    let caps = &init["agentCapabilities"];
    assert_eq!(caps["loadSession"], true);
    for method in ["list", "resume", "close", "delete"] {
        assert!(
            caps["sessionCapabilities"][method].is_object(),
            "{method}: {caps}"
        );
    }
    // mock-model is not known to take images (zed_tools.rs has the models that do).
    assert_eq!(caps["promptCapabilities"]["image"], false);
    assert_eq!(caps["promptCapabilities"]["embeddedContext"], true);
    assert_eq!(caps["promptCapabilities"]["audio"], false);
    assert_eq!(
        caps["mcpCapabilities"]["http"], true,
        "streamable HTTP MCP servers work"
    );
    assert_eq!(
        caps["mcpCapabilities"]["sse"], true,
        "so does the old HTTP+SSE transport"
    );
    // A custom endpoint needs no key, so no auth method is advertised.
    assert_eq!(init["authMethods"], json!([]));
    let (status, stderr) = agent.shutdown().await;
    assert!(
        status.success(),
        "clean exit when stdin closes; stderr:\n{stderr}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_newer_protocol_version_is_answered_with_v1() {
    let mock = MockModel::start(vec![]).await;
    let ws = Workspace::new();
    let mut agent = Agent::spawn(&ws.env(&mock), &[]);
    let init = agent
        .request_ok(
            "initialize",
            json!({"protocolVersion": 7, "clientCapabilities": {}}),
        )
        .await;
    assert_eq!(init["protocolVersion"], 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hosted_provider_advertises_and_checks_the_key() {
    let ws = Workspace::new();
    let mut env = ws.base_env();
    env.push(("TANDEM_PROVIDER".into(), "groq".into()));
    env.push(("GROQ_API_KEY".into(), "gsk-present".into()));
    let mut agent = Agent::spawn(&env, &[]);
    let init = agent.initialize().await;
    assert_eq!(init["authMethods"][0]["id"], "api-key");
    assert!(
        init["authMethods"][0]["description"]
            .as_str()
            .unwrap()
            .contains("GROQ_API_KEY")
    );
    let ok = agent
        .request("authenticate", json!({"methodId": "api-key"}))
        .await;
    assert_eq!(ok["result"], json!({}));
    let bad = agent
        .request("authenticate", json!({"methodId": "oauth"}))
        .await;
    assert_eq!(bad["error"]["code"], -32602);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_new_returns_modes_and_config_options() {
    let mock = MockModel::start(vec![]).await;
    let ws = Workspace::new();
    let mut env = ws.env(&mock);
    env.push(("TANDEM_MODELS".into(), "mock-model,o3-mini".into()));
    let mut agent = Agent::spawn(&env, &[]);
    agent.initialize().await;
    let session = agent.new_session(&ws.project()).await;
    assert!(!session["sessionId"].as_str().unwrap().is_empty());
    assert_eq!(session["modes"]["currentModeId"], "ask");
    let modes: Vec<_> = session["modes"]["availableModes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap())
        .collect();
    assert_eq!(modes, ["ask", "accept-edits", "read-only", "full-access"]);
    let options = session["configOptions"].as_array().unwrap();
    assert_eq!(
        options.len(),
        2,
        "mock-model takes no reasoning_effort: {options:?}"
    );
    assert_eq!(options[0]["id"], "mode");
    assert_eq!(options[0]["category"], "mode");
    assert_eq!(options[0]["currentValue"], "ask");
    assert_eq!(options[1]["id"], "model");
    assert_eq!(options[1]["category"], "model");
    assert_eq!(options[1]["currentValue"], "mock-model");
    let models: Vec<_> = options[1]["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["value"].as_str().unwrap())
        .collect();
    assert_eq!(models, ["mock-model", "o3-mini"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_sessions_are_independent() {
    let mock = MockModel::start(vec![Reply::text(&["answer-a-4410"]), Reply::text(&["B1"])]).await;
    let ws = Workspace::new();
    let mut agent = Agent::spawn(&ws.env(&mock), &[]);
    agent.initialize().await;
    let a = agent.new_session(&ws.project()).await["sessionId"]
        .as_str()
        .unwrap()
        .to_string();
    let b = agent.new_session(&ws.project()).await["sessionId"]
        .as_str()
        .unwrap()
        .to_string();
    assert_ne!(a, b);
    // History: each session's request holds its own conversation only.
    agent.prompt(&a, "alpha-5521").await;
    agent.prompt(&b, "beta-8830").await;
    // (Found by content: the mock also records tandem's look at the server's model list.)
    let bodies: Vec<String> = mock.requests().iter().map(|r| r.body.to_string()).collect();
    let b_request = bodies.iter().find(|b| b.contains("beta-8830")).unwrap();
    assert!(!b_request.contains("alpha-5521") && !b_request.contains("answer-a-4410"));
    // Mode: switching one leaves the other.
    agent.set_option(&a, "mode", "read-only").await;
    let status = agent.request_ok("_tandem/status", json!({})).await;
    let mode_of = |id: &str| {
        status["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["sessionId"] == id)
            .map(|s| s["mode"].clone())
            .unwrap()
    };
    assert_eq!(mode_of(&a), "read-only");
    assert_eq!(mode_of(&b), "ask");
    // Cancel: cancelling one session's turn leaves the other's to finish.
    mock.push(Reply::Stall(
        std::time::Duration::from_secs(30),
        Box::new(Reply::text(&["late"])),
    ));
    mock.push(Reply::text(&["B2"]));
    let stalled = agent.start_prompt(&a, "hold-on-7731").await;
    // b's prompt goes out once a's request has taken the stalling reply.
    mock.wait_until("a's prompt", |requests| {
        requests
            .iter()
            .any(|r| r.body.to_string().contains("hold-on-7731"))
    })
    .await;
    let running = agent.start_prompt(&b, "go on").await;
    agent
        .notify("session/cancel", json!({"sessionId": a}))
        .await;
    assert_eq!(response(stalled).await["result"]["stopReason"], "cancelled");
    assert_eq!(response(running).await["result"]["stopReason"], "end_turn");
    agent.assert_valid();
}

#[test]
fn the_schema_check_catches_bad_messages() {
    use crate::common::acp_client::schema_violations;
    let good = json!({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s",
        "update": {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "hi"}}}});
    assert!(
        schema_violations(&good).is_empty(),
        "{:?}",
        schema_violations(&good)
    );
    let bad_kind = json!({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s",
        "update": {"sessionUpdate": "bogus"}}});
    assert!(!schema_violations(&bad_kind).is_empty());
    let bad_usage = json!({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s",
        "update": {"sessionUpdate": "usage_update", "used": -1, "size": 10}}});
    assert!(!schema_violations(&bad_usage).is_empty());
    let no_version = json!({"id": 1, "result": {}});
    assert!(!schema_violations(&no_version).is_empty());
    let unknown_method = json!({"jsonrpc": "2.0", "method": "session/bogus", "params": {}});
    assert!(!schema_violations(&unknown_method).is_empty());
    // Responses are checked against the answered method's result type.
    use crate::common::acp_client::schema_violations_for;
    let bad_stop = json!({"jsonrpc": "2.0", "id": 3, "result": {"stopReason": "tired"}});
    assert!(!schema_violations_for(&bad_stop, Some("session/prompt")).is_empty());
    let good_stop = json!({"jsonrpc": "2.0", "id": 3, "result": {"stopReason": "end_turn"}});
    assert!(schema_violations_for(&good_stop, Some("session/prompt")).is_empty());
}

/// Some clients write the protocol version as a string: `"1"` is version 1, answered with
/// the number; nonsense is still refused, saying what is wrong.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_protocol_version_written_as_a_string_is_negotiated_like_the_number() {
    let mock = MockModel::start(vec![]).await;
    let ws = Workspace::new();
    for (version, answer) in [("1", 1), ("7", 1)] {
        let mut agent = Agent::spawn(&ws.env(&mock), &[]);
        let init = agent
            .request_ok(
                "initialize",
                json!({"protocolVersion": version, "clientCapabilities": {}}),
            )
            .await;
        assert_eq!(init["protocolVersion"], json!(answer), "{version}: {init}");
        let session = agent.new_session(&ws.project()).await;
        assert!(session["sessionId"].is_string(), "{session}");
        agent.assert_valid();
    }
    for nonsense in [json!("abc"), json!(-1), json!("-1"), json!("1.5")] {
        let mut agent = Agent::spawn(&ws.env(&mock), &[]);
        let refused = agent
            .request(
                "initialize",
                json!({"protocolVersion": nonsense, "clientCapabilities": {}}),
            )
            .await;
        assert_eq!(refused["error"]["code"], -32602, "{nonsense}: {refused}");
        let details = refused["error"]["data"]["details"].as_str().unwrap();
        assert!(details.contains("protocolVersion"), "{details}");
        assert!(agent.is_running());
    }
}

/// Without `RUST_LOG`, stderr says only what went wrong: editors may show every line of it
/// (agent-shell prints each as a notice), so a start, a prompt and a cancel print nothing.
/// `-v` brings tandem's progress back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stderr_stays_quiet_through_a_start_a_prompt_and_a_cancel_unless_asked() {
    let pieces: Vec<String> = (0..100).map(|i| format!("t{i} ")).collect();
    let refs: Vec<&str> = pieces.iter().map(String::as_str).collect();
    let slow = || crate::common::Reply::text(&refs).slow(std::time::Duration::from_millis(50));
    let mock = MockModel::start(vec![crate::common::Reply::text(&["hi"]), slow(), slow()]).await;
    let ws = Workspace::new();
    let env: Vec<_> = ws
        .env(&mock)
        .into_iter()
        .filter(|(name, _)| name != "RUST_LOG")
        .collect();
    for (args, quiet) in [(&[][..], true), (&["-v"][..], false)] {
        let mut agent = Agent::spawn(&env, args);
        let id = agent.open_session(&ws.project()).await;
        if quiet {
            let (done, _) = agent.prompt(&id, "hello").await;
            assert_eq!(done["result"]["stopReason"], "end_turn", "{done}");
        }
        let pending = agent.start_prompt(&id, "long").await;
        agent.next_message().await;
        agent
            .notify("session/cancel", json!({"sessionId": id}))
            .await;
        let cancelled = crate::common::response(pending).await;
        assert_eq!(
            cancelled["result"]["stopReason"], "cancelled",
            "{cancelled}"
        );
        let (status, stderr) = agent.shutdown().await;
        assert!(status.success(), "{stderr}");
        if quiet {
            assert_eq!(stderr, "", "nothing on stderr by default");
        } else {
            assert!(stderr.contains("INFO"), "-v logs progress: {stderr}");
        }
    }
}

/// Issue 31: the login method says where `tandem login` keeps the key, as it will: the file
/// when the credentials file is the store in use, not the system keyring.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_login_method_names_the_store_in_use() {
    let ws = Workspace::new();
    let description = |answer: &serde_json::Value| {
        answer["authMethods"][0]["description"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    };
    let mut env = ws.base_env();
    env.push(("TANDEM_CREDENTIAL_STORE".into(), "file".into()));
    let mut agent = Agent::spawn(&env, &[]);
    let file = description(&agent.initialize().await);
    assert!(file.contains("credentials.toml"), "{file}");
    assert!(!file.contains("keyring"), "{file}");
    let mut agent = Agent::spawn(&ws.base_env(), &[]);
    let auto = description(&agent.initialize().await);
    assert!(
        auto.contains("where one answers, else in") && auto.contains("credentials.toml"),
        "{auto}"
    );
}
