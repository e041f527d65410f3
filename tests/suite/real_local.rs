//! The local-model capabilities against the real llama-server (see
//! `tests/common/real_server.rs` for how it is built and when these run): requests that keep the server's cache, the window read
//! from the server, tools for a server started without `--jinja`, and no false report of a
//! cut prompt from a server's real counts, and one session switched across the server's
//! three APIs with a tool call after each switch. A recording proxy in front of the server keeps
//! each request with the server's own `timings`.

use serde_json::json;

use crate::common::proxy::Proxy;
use crate::common::real_server::{PATIENCE, Server, Turn, turn};
use crate::common::{Agent, Workspace, joined, of_kind};

/// tandem's environment for the `llamacpp` preset pointed at `proxy`.
fn env(ws: &Workspace, proxy: &Proxy) -> Vec<(String, String)> {
    let mut env = ws.base_env();
    env.push(("TANDEM_PROVIDER".into(), "llamacpp".into()));
    env.push(("OPENAI_BASE_URL".into(), proxy.base_url.clone()));
    env.push(("TANDEM_MODEL".into(), "smollm2-135m".into()));
    env
}

/// A proxy in front of `server`, and tandem talking to it in a fresh workspace, its session
/// in the turn's project.
async fn through_proxy(turn: &Turn, server: &Server) -> (Proxy, Workspace, Agent, String) {
    let proxy = Proxy::start(server.base_url().trim_end_matches("/v1").to_string()).await;
    let ws = Workspace::new();
    turn.write("notes.txt", "buy eggs\n");
    let mut agent = Agent::spawn(&env(&ws, &proxy), &[]).patient(PATIENCE);
    let session = agent.open_session(&turn.project()).await;
    (proxy, ws, agent, session)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs llama.cpp and SmolLM2: tests/real-model/setup.sh, then cargo test --locked --all-features --test all -- --ignored suite::real"]
async fn a_mode_switch_keeps_the_servers_cache_and_the_window_comes_from_the_server() {
    let turn = turn().await;
    let server = turn.llama_server().await;
    let (proxy, _ws, mut agent, session) = through_proxy(&turn, &server).await;
    let (_, first) = agent.prompt(&session, "Say hi.").await;
    agent
        .request_ok(
            "session/set_mode",
            json!({"sessionId": session, "modeId": "accept-edits"}),
        )
        .await;
    let (_, second) = agent.prompt(&session, "Say bye.").await;
    let exchanges: Vec<_> = proxy
        .exchanges()
        .into_iter()
        .filter(|e| e.status == 200)
        .collect();
    assert!(exchanges.len() >= 2, "{exchanges:?}");
    for pair in exchanges.windows(2) {
        let added = pair[1]
            .prompt_tokens()
            .saturating_sub(pair[0].prompt_tokens());
        assert!(
            pair[1].processed() <= added + 64,
            "the server reprocessed {} tokens where {added} were added: {:?}",
            pair[1].processed(),
            pair[1].timings
        );
    }
    // llama-server was started with -c 4096; the llamacpp preset alone would say 8192.
    let size = of_kind(&second, "usage_update").last().unwrap()["size"].clone();
    assert_eq!(size, 4096, "{second:?}");
    // The server's real counts are never taken for a cut prompt.
    for updates in [&first, &second] {
        assert!(!joined(updates, "agent_message_chunk").contains("read only"));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs llama.cpp and SmolLM2: tests/real-model/setup.sh, then cargo test --locked --all-features --test all -- --ignored suite::real"]
async fn a_server_without_jinja_gets_the_tools_as_text() {
    // Its own server: the shared one renders templates with jinja.
    let turn = turn().await;
    let server = Server::start_plain(&turn.cache).await;
    let (proxy, _ws, mut agent, session) = through_proxy(&turn, &server).await;
    let (answer, _) = agent.prompt(&session, "Read the file notes.txt").await;
    let (again, _) = agent.prompt(&session, "Thanks.").await;
    server.stop().await;
    // 0: it finished; max_tokens: the tiny model rambled into its answer cap.
    for reply in [&answer, &again] {
        assert!(reply.get("result").is_some(), "{reply}");
    }
    let exchanges = proxy.exchanges();
    assert_eq!(
        exchanges[0].status, 500,
        "llama-server refuses tools without --jinja"
    );
    assert!(exchanges[0].body["tools"].is_array());
    let rest = &exchanges[1..];
    assert!(rest.len() >= 2, "{exchanges:?}");
    // Every answer is capped at a quarter of the server's window (-c 4096 here), so however
    // the tiny model rambles, no request is refused as too long for it.
    for exchange in rest {
        let refusal = exchange.refusal.as_deref().unwrap_or_default();
        assert_eq!(exchange.status, 200, "{refusal}");
        let cap = exchange.body["max_tokens"].as_u64();
        assert!(matches!(cap, Some(1..=1024)), "{exchange:?}");
        assert!(exchange.body.get("tools").is_none(), "{exchange:?}");
        let system = exchange.body["messages"][0]["content"].as_str().unwrap();
        // A summary request (compaction, as the conversation nears the window) lists no tools.
        if !system.starts_with("You summarize a coding session") {
            assert!(system.contains("## Tools") && system.contains("- read_file: "));
        }
    }
}

/// The API an exchange spoke, by its body: Responses sends `input`, chat completions
/// `stream_options`, the Messages API neither.
fn api_of(body: &serde_json::Value) -> &'static str {
    if body.get("input").is_some() {
        "responses"
    } else if body.get("stream_options").is_some() {
        "chat-completions"
    } else {
        "anthropic-messages"
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs llama.cpp and SmolLM2: tests/real-model/setup.sh, then cargo test --locked --all-features --test all -- --ignored suite::real"]
async fn one_session_switched_across_the_three_apis_with_calls_in_its_history() {
    let turn = turn().await;
    let server = turn.llama_server().await;
    let proxy = Proxy::start(server.base_url().trim_end_matches("/v1").to_string()).await;
    let ws = Workspace::new();
    for (file, text) in [
        ("notes.txt", "buy eggs\n"),
        ("todo.txt", "call mum\n"),
        ("plan.txt", "go north\n"),
        ("list.txt", "milk\n"),
    ] {
        turn.write(file, text);
    }
    // The same server three times over, each model id on one of its APIs; its window (-c 4096)
    // said for each, as for a provider's model it is not asked, and a cap on each answer (the
    // tiny model otherwise rambles until the window is full).
    ws.write(
        "home/.config/tandem/config.toml",
        &format!(
            "[[models]]\nid = \"smollm2-135m\"\ncontext_window = 4096\nmax_output_tokens = 200\n\n\
             [[providers]]\nname = \"over-messages\"\nbase_url = \"{url}\"\napi = \"anthropic-messages\"\n\n\
             [[providers]]\nname = \"over-responses\"\nbase_url = \"{url}\"\napi = \"responses\"\n\n\
             [[models]]\nid = \"smollm2-messages\"\nprovider = \"over-messages\"\ncontext_window = 4096\nmax_output_tokens = 200\n\n\
             [[models]]\nid = \"smollm2-responses\"\nprovider = \"over-responses\"\ncontext_window = 4096\nmax_output_tokens = 200\n",
            url = proxy.base_url
        ),
    );
    let editor = crate::common::editor::FakeEditor::new();
    let mut agent =
        Agent::spawn_with(&env(&ws, &proxy), &[], Some(editor.clone())).patient(PATIENCE);
    agent
        .initialize_with(json!({"fs": {"readTextFile": true, "writeTextFile": true}}))
        .await;
    let session = agent.new_session(&turn.project()).await["sessionId"]
        .as_str()
        .unwrap()
        .to_string();
    // Chat → Messages → Responses → chat. The first turn's read is in every later request's
    // history, in that request's API's own shape; a read after a switch is asked for too.
    // SmolLM2-135M makes its call in a fresh conversation; once the history holds calls it
    // mostly writes a `<tool_response>` of its own instead, on every API (a `tool_choice`
    // asking for a call did not change that), so after a switch the server taking the
    // switched history, calls and results included, is what is checked.
    for (model, api, file, must_call) in [
        ("smollm2-135m", "chat-completions", "notes.txt", true),
        ("smollm2-messages", "anthropic-messages", "todo.txt", false),
        ("smollm2-responses", "responses", "plan.txt", false),
        ("smollm2-135m", "chat-completions", "list.txt", false),
    ] {
        let switched = agent.set_option(&session, "model", model).await;
        assert!(switched.get("result").is_some(), "{switched}");
        let reads = editor.params_of("fs/read_text_file").len();
        let before = proxy.exchanges().len();
        let (answer, updates) = agent
            .prompt(&session, &format!("Read the file {file}"))
            .await;
        assert!(answer.get("result").is_some(), "{api}: {answer}");
        let sent = proxy.exchanges();
        let opened = &sent[before];
        assert_eq!(api_of(&opened.body), api, "{:?}", opened.body);
        let history = opened.body.to_string();
        let shape = match api {
            "anthropic-messages" => "\"tool_result\"",
            "responses" => "\"function_call_output\"",
            _ => "\"role\":\"tool\"",
        };
        assert!(
            file == "notes.txt" || (history.contains("buy eggs") && history.contains(shape)),
            "the first turn's call and result went to {api} as {shape}: {history}"
        );
        if must_call {
            assert!(
                editor.params_of("fs/read_text_file").len() > reads,
                "after the switch to {api} the model's read reached the editor: {updates:?}"
            );
        }
    }
    // The server took every request of every API: the history each one was sent, written
    // partly over the others, was one it accepts.
    let exchanges = proxy.exchanges();
    for exchange in &exchanges {
        assert_eq!(exchange.status, 200, "{exchange:?}");
    }
    let apis: std::collections::BTreeSet<&str> =
        exchanges.iter().map(|e| api_of(&e.body)).collect();
    assert_eq!(apis.len(), 3, "{apis:?}");
    // What the server had to read anew at each request, for the closing note.
    for pair in exchanges.windows(2) {
        crate::common::real_server::log_note(&format!(
            "{} -> {}: {} prompt tokens, {} processed",
            api_of(&pair[0].body),
            api_of(&pair[1].body),
            pair[1].prompt_tokens(),
            pair[1].processed()
        ));
    }
    agent.assert_valid();
}
