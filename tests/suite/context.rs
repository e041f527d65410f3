//! What the model is told and how much of the conversation it sees: AGENTS.md instructions,
//! slash commands, and compaction where it crosses the boundary (what the editor is shown,
//! each wire API's overflow error, the history a reload replays). Which messages a compaction
//! summarizes and when it runs are tested in process, in crates/core/src/turn/compact_tests.rs.

use serde_json::{Value, json};

use crate::common::{Agent, MockModel, Reply, Workspace, joined, of_kind, path_str};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn agents_md_files_reach_the_system_prompt_nearest_last() {
    let mock = MockModel::start(vec![Reply::text(&["ok"])]).await;
    let ws = Workspace::new();
    std::fs::create_dir_all(ws.project().join(".git")).unwrap();
    ws.write("project/AGENTS.md", "Root rule: run cargo fmt.");
    ws.write(
        "project/crates/app/AGENTS.md",
        "App rule: keep files small.",
    );
    ws.write("home/.config/tandem/AGENTS.md", "User rule: be brief.");
    let mut agent = Agent::spawn(&ws.env(&mock), &[]);
    let session = agent.open_session(&ws.project().join("crates/app")).await;
    agent.prompt(&session, "hi").await;
    let system = mock.requests()[0].system_prompt();
    let at = |needle: &str| {
        system
            .find(needle)
            .unwrap_or_else(|| panic!("`{needle}` missing:\n{system}"))
    };
    assert!(
        at("User rule") < at("Root rule") && at("Root rule") < at("App rule"),
        "{system}"
    );
    assert!(system.contains("Today's date: 20"), "{system}");
    assert!(system.contains("Platform: linux"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slash_commands_are_announced_and_expanded() {
    let mock = MockModel::start(vec![
        Reply::text(&["a"]),
        Reply::text(&["b"]),
        Reply::text(&["c"]),
    ])
    .await;
    let ws = Workspace::new();
    ws.write(
        "project/.tandem/commands/review.md",
        "---\ndescription: Review a file\n---\nReview $ARGUMENTS carefully.\n",
    );
    ws.write(
        "home/.config/tandem/commands/explain.md",
        "Explain the code like I am new here.\n",
    );
    let mut agent = Agent::spawn(&ws.env(&mock), &[]);
    agent.initialize().await;
    let session = agent.new_session(&ws.project()).await;
    let id = session["sessionId"].as_str().unwrap().to_string();
    let names: Vec<_> = session["commands"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "compact",
            "init",
            "rewind",
            "undo",
            "permissions",
            "explain",
            "review"
        ]
    );
    let review = &session["commands"][6];
    assert_eq!(review["description"], "Review a file");
    assert_eq!(review["input"]["hint"], "arguments");

    agent.prompt(&id, "/review src/lib.rs").await;
    agent.prompt(&id, "/init focus on the tests").await;
    agent.prompt(&id, "/nope keep me as typed").await;
    let requests = mock.requests();
    assert_eq!(requests[0].last_user_text(), "Review src/lib.rs carefully.");
    let init = requests[1].last_user_text();
    assert!(
        init.contains("write an AGENTS.md") && init.ends_with("focus on the tests"),
        "{init}"
    );
    assert_eq!(requests[2].last_user_text(), "/nope keep me as typed");
}

/// Two exchanges, then `/compact`.
async fn compacted(caps: Value) -> (MockModel, Workspace, Agent, String, Vec<Value>) {
    let mock = MockModel::start(vec![
        Reply::text(&["Paris."]),
        Reply::text(&["About 2 million."]),
        Reply::text(&["The user asked about Paris and its size."]),
        Reply::text(&["Yes."]),
    ])
    .await;
    let ws = Workspace::new();
    let mut agent = Agent::spawn(&ws.env(&mock), &[]);
    agent.initialize_with(caps).await;
    let id = agent.new_session(&ws.project()).await["sessionId"]
        .as_str()
        .unwrap()
        .to_string();
    agent.prompt(&id, "Capital of France?").await;
    agent.prompt(&id, "How many people live there?").await;
    let (response, updates) = agent.prompt(&id, "/compact").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    (mock, ws, agent, id, updates)
}

/// What `/compact` summarizes and keeps is tested in process (crates/core/src/turn/
/// compact_tests.rs); here, what an editor without `session.compaction` is shown.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn editors_without_the_capability_get_a_note_instead_of_updates() {
    let (mock, _ws, _agent, _id, updates) = compacted(json!({})).await;
    assert_eq!(
        joined(&updates, "agent_message_chunk"),
        "\n\n_Earlier conversation compacted: the model now sees a summary of everything above._\n\n"
    );
    assert!(
        of_kind(&updates, "compaction_update").is_empty(),
        "{updates:#?}"
    );
    assert_eq!(mock.requests().len(), 3, "two answers and the summary");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn editors_with_the_capability_get_compaction_updates() {
    let (_mock, _ws, _agent, _id, updates) =
        compacted(json!({"session": {"compaction": {}}})).await;
    let compaction = of_kind(&updates, "compaction_update");
    assert_eq!(compaction.len(), 2, "{updates:#?}");
    assert_eq!(compaction[0]["status"], "in_progress");
    assert_eq!(compaction[1]["status"], "completed");
    assert_eq!(compaction[0]["compactionId"], compaction[1]["compactionId"]);
    assert_eq!(
        compaction[1]["summary"][0]["text"],
        "The user asked about Paris and its size."
    );
    assert_eq!(
        joined(&updates, "agent_message_chunk"),
        "",
        "no note when updates are supported"
    );
}

/// When a usage report compacts is tested in process (crates/core/src/turn/compact_tests.rs);
/// here, that the transcript keeps the whole history, which a reload replays.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_compacted_session_reloads_with_its_whole_history_and_a_note() {
    let mock = MockModel::start(crate::common::filling_the_window(vec![
        Reply::text(&["Summary of the first exchange."]),
        Reply::text(&["Second answer."]),
    ]))
    .await;
    let ws = Workspace::new();
    let config = crate::common::small_window(&ws);
    let mut agent = Agent::spawn(&ws.env(&mock), &["--config", &path_str(&config)]);
    let id = agent.open_session(&ws.project()).await;
    agent.prompt(&id, "First question").await;
    let (response, _) = agent.prompt(&id, "Second question").await;
    assert_eq!(response["result"]["stopReason"], "end_turn");
    assert_eq!(mock.requests().len(), 3, "answer, summary, answer");
    // The full history stays on disk and comes back on load, with a note where it was compacted.
    let (_, updates) = agent.open_stored("session/load", &id, &ws.project()).await;
    assert_eq!(
        joined(&updates, "user_message_chunk"),
        "First questionSecond question"
    );
    let said = joined(&updates, "agent_message_chunk");
    assert!(
        said.starts_with("First answer.")
            && said.contains("compacted")
            && said.ends_with("Second answer."),
        "{said}"
    );
}

/// A session over `api` with `model` whose second prompt's request is refused with HTTP 400
/// `body` (the window is full), then `then`: the turn must compact and go on. Returns the
/// mock, the agent and the session, after checking the second prompt ended its turn with
/// the answer after the summary.
async fn overflow_compacts(
    api: &str,
    model: &str,
    body: &str,
    then: Vec<Reply>,
) -> (MockModel, Workspace, Agent, String) {
    let mut script = vec![
        Reply::text(&["First answer."]),
        Reply::status(400, body),
        Reply::text(&["Short summary."]),
        Reply::text(&["Second answer."]),
    ];
    script.extend(then);
    let mock = MockModel::start(script).await;
    let ws = Workspace::new();
    let mut env = ws.env(&mock);
    env.retain(|(k, _)| k != "TANDEM_MODEL");
    env.push(("TANDEM_API".into(), api.into()));
    env.push(("TANDEM_MODEL".into(), model.into()));
    let mut agent = Agent::spawn(&env, &[]);
    let id = agent.open_session(&ws.project()).await;
    agent.prompt(&id, "First question").await;
    let (response, updates) = agent.prompt(&id, "Second question").await;
    assert_eq!(
        response["result"]["stopReason"], "end_turn",
        "{api}: {response}"
    );
    assert!(joined(&updates, "agent_message_chunk").ends_with("Second answer."));
    let requests = mock.requests();
    assert_eq!(requests.len(), 4, "{api}");
    assert!(
        requests[2]
            .last_user_text()
            .starts_with("Summarize the conversation above"),
        "{api}: the refused request is followed by the summary's"
    );
    assert!(
        requests[3].last_user_text().contains("Short summary."),
        "{api}"
    );
    (mock, ws, agent, id)
}

/// llama-server answers a prompt larger than its slot's window with the same 400 on its
/// chat-completions, Messages and Responses endpoints (`exceed_context_size_error`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_llama_cpp_window_compacts_on_each_api() {
    let body = r#"{"error":{"code":400,"message":"request (9000 tokens) exceeds the available context size (4096 tokens), try increasing it","type":"exceed_context_size_error","n_prompt_tokens":9000,"n_ctx":4096}}"#;
    for api in ["chat-completions", "anthropic-messages", "responses"] {
        let (_mock, _ws, agent, _id) = overflow_compacts(api, "mock-model", body, vec![]).await;
        agent.assert_valid();
    }
}

/// Anthropic says a request whose input and `max_tokens` together pass the window "exceed
/// context limit".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_anthropic_context_limit_compacts() {
    let body = r#"{"type":"error","error":{"type":"invalid_request_error","message":"input length and `max_tokens` exceed context limit: 197000 + 8192 > 200000, decrease input length or `max_tokens` and try again"}}"#;
    let (_mock, _ws, agent, _id) =
        overflow_compacts("anthropic-messages", "claude-sonnet-4-5", body, vec![]).await;
    agent.assert_valid();
}

/// Gemini's OpenAI-compatible endpoint answers a prompt over the window with an array of
/// errors; the turn compacts, and when it cannot, the user reads Google's sentence, not the
/// JSON around it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gemini_token_count_over_the_window_compacts_and_is_told_in_googles_words() {
    let body = r#"[{"error":{"code":400,"message":"The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).","status":"INVALID_ARGUMENT"}}]"#;
    let again = vec![
        Reply::status(400, body),
        Reply::text(&["Another summary."]),
        Reply::status(400, body),
    ];
    let (_mock, _ws, mut agent, id) =
        overflow_compacts("chat-completions", "gemini-2.5-pro", body, again).await;
    let (response, _) = agent.prompt(&id, "Third question").await;
    let error = &response["error"];
    assert_eq!(
        error["_meta"]["tandem"]["class"], "context_length",
        "{response}"
    );
    let message = error["message"].as_str().unwrap_or_default();
    assert!(
        message.ends_with(
            ": The input token count (1200000) exceeds the maximum number of tokens allowed (1048576)"
        ),
        "{message}"
    );
    assert!(!message.contains("[{"), "{message}");
}
