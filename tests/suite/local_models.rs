//! What local servers need: requests that extend each other byte for byte (so the server's
//! cache is reused), and tool calls the model wrote as text run as calls.

use serde_json::{Value, json};

use crate::common::calls::tool_result;
use crate::common::mock_model::Recorded;
use crate::common::{Reply, joined, of_kind, session_with_env};

async fn set_mode(agent: &mut crate::common::Agent, session: &str, mode: &str) {
    agent
        .request_ok(
            "session/set_mode",
            json!({"sessionId": session, "modeId": mode}),
        )
        .await;
}

/// Asserts that each request starts with the whole previous one: the same tools, and the
/// previous messages unchanged at its start.
fn assert_prefix_stable(requests: &[Recorded]) {
    for (n, pair) in requests.windows(2).enumerate() {
        let (before, after) = (&pair[0].body, &pair[1].body);
        assert_eq!(
            before["tools"],
            after["tools"],
            "request {} changed the tools",
            n + 1
        );
        let old = before["messages"].as_array().unwrap();
        let new = after["messages"].as_array().unwrap();
        assert!(new.len() > old.len(), "request {} is shorter", n + 1);
        for (i, message) in old.iter().enumerate() {
            assert_eq!(
                serde_json::to_string(message).unwrap(),
                serde_json::to_string(&new[i]).unwrap(),
                "request {} changed message {i} of request {n}",
                n + 1
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_extend_each_other_across_a_mode_switch_a_config_change_and_a_tool_loop() {
    let script = vec![
        Reply::tools(&[("r1", "read_file", json!({"path": "README.md"}))]),
        Reply::text(&["read it"]),
        Reply::text(&["noted"]),
        Reply::tools(&[("l1", "list_dir", json!({"path": "."}))]),
        Reply::text(&["listed"]),
        Reply::text(&["done"]),
    ];
    let (mock, _ws, mut agent, session, _editor) =
        session_with_env("small", script, json!({}), "ask", |_| {
            vec![("TANDEM_MODELS".into(), "o3-mini,mock-model".into())]
        })
        .await;
    // o3-mini takes a reasoning effort: a config option that changes the request only.
    agent.set_option(&session, "model", "o3-mini").await;
    agent.prompt(&session, "read the readme").await;
    set_mode(&mut agent, &session, "accept-edits").await;
    agent.prompt(&session, "now what").await;
    agent.set_option(&session, "reasoning_effort", "high").await;
    agent.prompt(&session, "list the files").await;
    set_mode(&mut agent, &session, "read-only").await;
    let (_, updates) = agent.prompt(&session, "thanks").await;
    let requests = mock.requests();
    assert_eq!(requests.len(), 6);
    assert_prefix_stable(&requests);
    // The mode is stated once at the start, and each switch is told where it happened,
    // never shown to the user.
    let system = requests[0].system_prompt();
    assert!(system.contains("Mode: ask"), "{system}");
    assert!(
        requests[2]
            .last_user_text()
            .contains("switched the mode to accept-edits"),
        "{}",
        requests[2].last_user_text()
    );
    assert!(requests[2].last_user_text().starts_with("now what"));
    assert!(
        requests[5]
            .last_user_text()
            .contains("switched the mode to read-only")
    );
    assert!(!requests[3].last_user_text().contains("switched the mode"));
    assert_eq!(requests[3].body["reasoning_effort"], "high");
    assert!(!joined(&updates, "agent_message_chunk").contains("switched"));
    assert!(!joined(&updates, "user_message_chunk").contains("switched"));
    agent.assert_valid();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reloaded_session_sends_the_same_conversation_it_had() {
    let script = vec![Reply::text(&["one"]), Reply::text(&["two"])];
    let (mock, ws, mut agent, session, _editor) =
        session_with_env("small", script, json!({}), "ask", |_| Vec::new()).await;
    agent.prompt(&session, "first").await;
    set_mode(&mut agent, &session, "accept-edits").await;
    agent.prompt(&session, "second").await;
    let live = mock.requests()[1].body["messages"].clone();
    agent.shutdown().await;
    // A new process: the conversation is rebuilt from the transcript, context note included.
    let mut env = ws.env(&mock);
    env.push(("TANDEM_MODE".into(), "accept-edits".into()));
    let mut agent = crate::common::Agent::spawn(&env, &[]);
    agent.initialize().await;
    agent
        .open_stored("session/resume", &session, &ws.project())
        .await;
    mock.push(Reply::text(&["three"]));
    agent.prompt(&session, "third").await;
    let resumed = mock.requests()[2].body["messages"].clone();
    let live = live.as_array().unwrap();
    // Everything after the system prompt (which states the date and mode it was made with).
    assert_eq!(&resumed.as_array().unwrap()[1..live.len()], &live[1..]);
}

/// A session whose model writes `text` as its first answer, then answers "done".
async fn text_call_session(text: &str) -> (crate::common::MockModel, Vec<Value>) {
    let script = vec![Reply::text(&[text]), Reply::text(&["done"])];
    let (mock, _ws, mut agent, session, _editor) =
        session_with_env("small", script, json!({}), "ask", |_| Vec::new()).await;
    let (response, updates) = agent.prompt(&session, "go").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    agent.assert_valid();
    (mock, updates)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tool_calls_written_as_text_run_and_are_not_shown_as_text() {
    for text in [
        "Reading it.\n<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"README.md\"}}\n</tool_call>",
        "[TOOL_CALLS][{\"name\": \"read_file\", \"arguments\": {\"path\": \"README.md\"}}]",
        "<|python_tag|>{\"name\": \"read_file\", \"parameters\": {\"path\": \"README.md\"}}<|eom_id|>",
        "{\"name\": \"read_file\", \"parameters\": {\"path\": \"README.md\"}}",
        "```json\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"README.md\"}}\n```",
    ] {
        let (mock, updates) = text_call_session(text).await;
        let requests = mock.requests();
        assert_eq!(requests.len(), 2, "{text}");
        let second = &requests[1];
        let messages = second.body["messages"].as_array().unwrap();
        let call = &messages[messages.len() - 2]["tool_calls"][0];
        assert_eq!(call["function"]["name"], "read_file", "{text}");
        let id = call["id"].as_str().unwrap();
        assert!(tool_result(second, id).contains("A tiny project"), "{text}");
        let shown = joined(&updates, "agent_message_chunk");
        assert!(!shown.contains("read_file"), "{text}: {shown}");
        assert!(shown.ends_with("done"), "{shown}");
        assert_eq!(of_kind(&updates, "tool_call").len(), 1, "{text}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_quoted_in_an_explanation_is_shown_and_not_run() {
    let text = "To read a file, write <tool_call>{\"name\": \"read_file\", \"arguments\": {\"path\": \"README.md\"}}</tool_call> and wait for the result.";
    let script = vec![Reply::text(&[text])];
    let (mock, _ws, mut agent, session, _editor) =
        session_with_env("small", script, json!({}), "ask", |_| Vec::new()).await;
    let (_, updates) = agent.prompt(&session, "how do I read a file?").await;
    assert_eq!(mock.requests().len(), 1);
    assert_eq!(joined(&updates, "agent_message_chunk"), text);
    assert!(of_kind(&updates, "tool_call").is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_takes_no_tools_gets_them_as_text_and_its_text_calls_run() {
    let refusal = r#"{"error":{"code":500,"message":"tools param requires --jinja flag","type":"server_error"}}"#;
    let call = "<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"README.md\"}}\n</tool_call>";
    let script = vec![
        Reply::status(500, refusal),
        Reply::text(&[call]),
        Reply::text(&["It is a tiny project."]),
        Reply::text(&["Still here."]),
    ];
    let (mock, _ws, mut agent, session, _editor) =
        session_with_env("small", script, json!({}), "ask", |_| Vec::new()).await;
    let (response, updates) = agent.prompt(&session, "what is this?").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    agent.prompt(&session, "and now?").await;
    let requests = mock.requests();
    // Refused once (not retried), then every request carries the tools as text.
    assert_eq!(requests.len(), 4);
    assert!(requests[0].body["tools"].is_array());
    for request in &requests[1..] {
        assert!(request.body.get("tools").is_none(), "{}", request.body);
        assert!(request.system_prompt().contains("## Tools"));
        assert!(request.system_prompt().contains("- read_file: "));
    }
    let messages = requests[2].body["messages"].as_array().unwrap();
    let n = messages.len();
    assert_eq!(messages[n - 2]["role"], "assistant");
    assert!(
        messages[n - 2]["content"]
            .as_str()
            .unwrap()
            .contains("<tool_call>")
    );
    assert_eq!(messages[n - 1]["role"], "user");
    let result = crate::common::mock_model::content_text(&messages[n - 1]["content"]);
    assert!(result.starts_with("<tool_response>"), "{result}");
    assert!(result.contains("A tiny project"), "{result}");
    assert_prefix_stable(&requests[1..]);
    assert_eq!(of_kind(&updates, "tool_call").len(), 1);
    assert!(!joined(&updates, "agent_message_chunk").contains("tool_call"));
    agent.assert_valid();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_cuts_the_prompt_silently_is_reported_once_and_the_window_shrinks() {
    use crate::common::mock_model::{finish, text, usage};
    let script = vec![
        Reply::chunks(vec![
            crate::common::mock_model::tool_call(0, "r", "read_file", r#"{"path":"README.md"}"#),
            finish("tool_calls"),
            usage(3_100, 20),
        ]),
        // Ollama at its default window: it read the start and the end, and says so in its
        // count only.
        Reply::chunks(vec![text("It is small."), finish("stop"), usage(1_200, 5)]),
        Reply::text(&["Summary so far."]),
        Reply::chunks(vec![text("Fine."), finish("stop"), usage(900, 2)]),
    ];
    let (mock, _ws, mut agent, session, _editor) =
        session_with_env("small", script, json!({}), "ask", |_| {
            vec![("TANDEM_PROVIDER".into(), "ollama".into())]
        })
        .await;
    let big = "Please keep all of this in mind. ".repeat(380);
    let (_, updates) = agent.prompt(&session, &big).await;
    let shown = joined(&updates, "agent_message_chunk");
    assert!(shown.contains("read only 1200 of the about"), "{shown}");
    assert!(shown.contains("OLLAMA_CONTEXT_LENGTH"), "{shown}");
    let sizes: Vec<&Value> = of_kind(&updates, "usage_update")
        .iter()
        .map(|u| &u["size"])
        .collect();
    assert_eq!(sizes.last().unwrap().as_u64(), Some(1_200), "{sizes:?}");
    // The next prompt compacts first, to fit the window the server really uses, and the
    // note is not repeated.
    let (_, updates) = agent.prompt(&session, "and?").await;
    let requests = mock.requests();
    assert_eq!(requests.len(), 4);
    assert!(
        requests[2]
            .last_user_text()
            .starts_with("Summarize the conversation above")
    );
    assert!(!joined(&updates, "agent_message_chunk").contains("read only"));
    agent.assert_valid();
}

/// A session against a mock that describes itself through `info` (path, JSON), with no
/// models in the config; returns the session/new result and the usage updates of a prompt.
async fn described_server(info: &[(&str, Value)]) -> (Value, Vec<Value>) {
    let mock = crate::common::MockModel::start(vec![Reply::text(&["hi"])]).await;
    for (path, body) in info {
        mock.serve_info(path, 200, body.clone());
    }
    let ws = crate::common::Workspace::new();
    let mut agent = crate::common::Agent::spawn(&ws.env(&mock), &[]);
    agent.initialize().await;
    let new = agent.new_session(&ws.project()).await;
    let session = new["sessionId"].as_str().unwrap().to_string();
    let (_, updates) = agent.prompt(&session, "hello").await;
    agent.assert_valid();
    (new, updates)
}

fn last_size(updates: &[Value]) -> Option<u64> {
    of_kind(updates, "usage_update").last()?["size"].as_u64()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_window_and_the_models_come_from_the_server_when_the_config_does_not_say() {
    let models = json!({"object": "list", "data": [
        {"id": "mock-model", "owned_by": "llamacpp", "meta": {"n_ctx": 2048}},
        {"id": "qwen2.5-coder:7b"}
    ]});
    let (new, updates) = described_server(&[("/v1/models", models)]).await;
    let picker = new["configOptions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["id"] == "model")
        .unwrap();
    let ids: Vec<&str> = picker["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["value"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["mock-model", "qwen2.5-coder:7b"], "{picker}");
    assert_eq!(last_size(&updates), Some(2048));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn llama_cpp_props_and_ollama_show_give_the_window_they_really_use() {
    let props = json!({"default_generation_settings": {"n_ctx": 3072}});
    let (_, updates) = described_server(&[("/props", props)]).await;
    assert_eq!(last_size(&updates), Some(3072));
    let show = json!({
        "parameters": "temperature 0.7\nnum_ctx 6144",
        "model_info": {"llama.context_length": 131072}
    });
    let (_, updates) = described_server(&[("/api/show", show)]).await;
    assert_eq!(last_size(&updates), Some(6144));
    // No num_ctx: Ollama's default window, however large the model's own.
    let show = json!({"model_info": {"qwen2.context_length": 32768}});
    let (_, updates) = described_server(&[("/api/show", show)]).await;
    assert_eq!(last_size(&updates), Some(4096));
}

/// The paths asked of a server before its first answer, for a session set up by `vars`
/// with the model list `owned_by` (none: no list).
async fn probes(vars: Vec<(String, String)>, owned_by: Option<&str>) -> Vec<String> {
    let mock = crate::common::MockModel::start(vec![Reply::text(&["hi"])]).await;
    if let Some(owner) = owned_by {
        mock.serve_info(
            "/v1/models",
            200,
            json!({"object": "list", "data": [{"id": "mock-model", "owned_by": owner}]}),
        );
    }
    let ws = crate::common::Workspace::new();
    let mut env = ws.env(&mock);
    env.extend(vars);
    let mut agent = crate::common::Agent::spawn(&env, &[]);
    let session = agent.open_session(&ws.project()).await;
    let (answer, _) = agent.prompt(&session, "hi").await;
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    // Discovery runs beside the first prompt; it is done once `_tandem/status` has it.
    agent
        .request_ok("_tandem/status", json!({"sessionId": session}))
        .await;
    mock.asked()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_specific_paths_go_only_to_their_own_servers() {
    let preset = |p: &str| vec![("TANDEM_PROVIDER".to_string(), p.to_string())];
    let hosted = probes(preset("openrouter"), Some("openai")).await;
    assert!(
        !hosted.is_empty() && hosted.iter().all(|p| p == "/v1/models"),
        "{hosted:?}"
    );
    let llama = probes(preset("llamacpp"), None).await;
    assert!(llama.contains(&"/props".to_string()), "{llama:?}");
    assert!(!llama.iter().any(|p| p.starts_with("/api/")), "{llama:?}");
    let ollama = probes(Vec::new(), Some("library")).await;
    assert!(ollama.iter().any(|p| p.starts_with("/api/")), "{ollama:?}");
    assert!(!ollama.contains(&"/props".to_string()), "{ollama:?}");
    assert!(
        !ollama.contains(&"/api/v0/models".to_string()),
        "{ollama:?}"
    );
    let vllm = probes(Vec::new(), Some("vllm")).await;
    assert!(
        !vllm.is_empty() && vllm.iter().all(|p| p == "/v1/models"),
        "{vllm:?}"
    );
    let unknown = probes(Vec::new(), None).await;
    assert!(
        unknown.contains(&"/props".to_string()),
        "an unknown local server is asked: {unknown:?}"
    );
}

/// The window a server reports, or the one it was seen to cut a prompt at, is the one both
/// the editor's usage updates and `_tandem/usage` show: one profile, read by both.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn usage_updates_and_tandem_usage_show_the_same_window() {
    let mock = crate::common::MockModel::start(vec![Reply::text(&["hi"])]).await;
    mock.serve_info(
        "/v1/models",
        200,
        json!({"object": "list", "data": [{"id": "mock-model", "owned_by": "vllm", "max_model_len": 32768}]}),
    );
    let ws = crate::common::Workspace::new();
    let mut agent = crate::common::Agent::spawn(&ws.env(&mock), &[]);
    let session = agent.open_session(&ws.project()).await;
    let (answer, updates) = agent.prompt(&session, "hi").await;
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    let size = of_kind(&updates, "usage_update").last().unwrap()["size"].clone();
    assert_eq!(size, 32768, "{updates:?}");
    let usage = agent
        .request_ok("_tandem/usage", json!({"sessionId": session}))
        .await;
    assert_eq!(usage["contextWindow"], size, "{usage}");
}

/// `_tandem/usage` once it shows a window of `tokens` (discovery runs beside the turns), or
/// as it stands after ten seconds.
async fn window_reaching(agent: &mut crate::common::Agent, session: &str, tokens: u64) -> Value {
    let mut usage = Value::Null;
    for _ in 0..200 {
        usage = agent
            .request_ok("_tandem/usage", json!({"sessionId": session}))
            .await;
        if usage["contextWindow"] == tokens {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    usage
}

/// With no key anywhere (a local server needs none), the configuration is read again once the
/// credential store has been asked; the window still comes from the server.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_window_comes_from_the_server_when_no_key_is_set_anywhere() {
    let mock = crate::common::MockModel::start(vec![Reply::text(&["hi"])]).await;
    mock.serve_info(
        "/props",
        200,
        json!({"default_generation_settings": {"n_ctx": 3072}}),
    );
    let ws = crate::common::Workspace::new();
    let mut env: Vec<(String, String)> = ws
        .env(&mock)
        .into_iter()
        .filter(|(k, _)| k != "OPENAI_API_KEY")
        .collect();
    env.push(("TANDEM_PROVIDER".into(), "llamacpp".into()));
    let mut agent = crate::common::Agent::spawn(&env, &[]);
    let session = agent.open_session(&ws.project()).await;
    let (answer, updates) = agent.prompt(&session, "hi").await;
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    let usage = window_reaching(&mut agent, &session, 3072).await;
    assert_eq!(usage["contextWindow"], 3072, "{usage} {:?}", mock.asked());
    assert!(!updates.is_empty());
    agent.assert_valid();
}

/// A llama-server still loading its model when tandem started (503 to everything) is asked
/// again when the next prompt comes, and the window it then reports is the one used.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_still_loading_at_start_is_asked_again_at_the_next_prompt() {
    let mock =
        crate::common::MockModel::start(vec![Reply::text(&["one"]), Reply::text(&["two"])]).await;
    let loading = json!({"error": {"code": 503, "message": "Loading model"}});
    mock.serve_info("/v1/models", 503, loading.clone());
    mock.serve_info("/props", 503, loading);
    let ws = crate::common::Workspace::new();
    let mut env = ws.env(&mock);
    env.push(("TANDEM_PROVIDER".into(), "llamacpp".into()));
    let mut agent = crate::common::Agent::spawn(&env, &[]);
    let session = agent.open_session(&ws.project()).await;
    let (answer, _) = agent.prompt(&session, "hi").await;
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    let props_asked =
        |mock: &crate::common::MockModel| mock.asked().iter().filter(|p| *p == "/props").count();
    for _ in 0..200 {
        if props_asked(&mock) == 1 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(props_asked(&mock), 1, "{:?}", mock.asked());
    let window = |usage: &Value| usage["contextWindow"].as_u64();
    let usage = agent
        .request_ok("_tandem/usage", json!({"sessionId": session}))
        .await;
    assert_ne!(window(&usage), Some(3072), "{usage}");

    mock.serve_info(
        "/props",
        200,
        json!({"default_generation_settings": {"n_ctx": 3072}}),
    );
    let (answer, _) = agent.prompt(&session, "again").await;
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    let usage = window_reaching(&mut agent, &session, 3072).await;
    assert_eq!(window(&usage), Some(3072), "{usage} {:?}", mock.asked());
    assert_eq!(props_asked(&mock), 2, "{:?}", mock.asked());
    agent.assert_valid();
}
