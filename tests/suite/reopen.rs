//! Reopening a stored thread in a real editor's client: what the user sent comes back as
//! they sent it (mentions as Zed's chips, texts apart), the chosen model is kept, and no
//! state update reaches the client before the answer that opens the session.

use serde_json::{Value, json};

use crate::common::mock_model::Reply;
use crate::common::{Agent, MockModel, Workspace, agent_shell, codecompanion, of_kind, zed};

fn file_uri(path: &std::path::Path) -> String {
    format!("file://{}", path.display())
}

/// The user's blocks among `updates`, separators between texts left out.
fn user_blocks(updates: &[Value]) -> Vec<Value> {
    of_kind(updates, "user_message_chunk")
        .into_iter()
        .map(|u| u["content"].clone())
        .filter(|b| b["text"] != "\n\n")
        .collect()
}

/// Zed sends @-mentions as `resource` blocks with the file's text embedded, a selection as a
/// `resource` whose URI names its lines (`file:///path#L1:2`), a folder as a `resource_link`
/// (`/work/shared/clients/README.md`, from `crates/acp_thread/src/mention.rs`), and renders
/// each as a chip when the thread is replayed: `block_string_contents` turns a
/// `resource_link` or a text `resource` into "[@name](uri)" (`acp_thread.rs`). A replay of
/// text blocks holding `<context uri=…>` and the whole file showed the raw context instead.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn zed_shows_a_reopened_threads_mentions_as_chips() {
    let ws = Workspace::new();
    let notes = ws.write("project/notes.txt", "one\ntwo\n");
    ws.write("project/src/lib.rs", "pub fn f() {}\n");
    let mock = MockModel::start(vec![Reply::text(&["Read them."])]).await;
    let folders = [ws.project()];
    let mut agent = Agent::spawn_with(&ws.env(&mock), &[], Some(zed::editor(&folders)));
    zed::initialize(&mut agent).await;
    let session = zed::new_session(&mut agent, &folders, json!([])).await;
    let session = session["sessionId"].as_str().unwrap().to_string();
    let sent = json!([
        {"type": "text", "text": "Compare "},
        {"type": "resource", "resource": {"uri": file_uri(&notes), "text": "one\ntwo\n"}},
        {"type": "text", "text": " with "},
        {"type": "resource", "resource": {
            "uri": format!("{}#L1:1", file_uri(&notes)), "text": "one", "mimeType": "text/plain"}},
        {"type": "text", "text": " in "},
        {"type": "resource_link", "name": "src", "uri": format!("{}/", file_uri(&ws.project().join("src")))},
        {"type": "image", "mimeType": "image/png", "data": crate::common::images::PIXEL_PNG},
    ]);
    let answer = agent
        .request(
            "session/prompt",
            json!({"sessionId": session, "prompt": sent}),
        )
        .await;
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    // The model read the mentions inlined, as before.
    let said = crate::common::mock_model::content_text(
        &mock.requests()[0].body["messages"]
            .as_array()
            .unwrap()
            .last()
            .unwrap()["content"],
    );
    assert!(
        said.contains(&format!(
            "<context uri=\"{}\">\none\ntwo\n",
            file_uri(&notes)
        )),
        "{said}"
    );
    assert!(
        said.contains("kind=\"folder\">\nlib.rs\n</context>"),
        "{said}"
    );
    agent.shutdown().await;

    let mut agent = Agent::spawn_with(&ws.env(&mock), &[], Some(zed::editor(&folders)));
    zed::initialize(&mut agent).await;
    let (_, updates) = zed::load_session(&mut agent, &session, &folders, json!([])).await;
    assert_eq!(
        user_blocks(&updates),
        *sent.as_array().unwrap(),
        "each block as it was sent"
    );
    let shown = zed::user_messages(&updates);
    let live: String = sent
        .as_array()
        .unwrap()
        .iter()
        .map(zed::block_markdown)
        .collect();
    assert_eq!(shown, [live.as_str()], "the thread as it was");
    assert!(live.contains(&format!("[@notes.txt]({})", file_uri(&notes))));
    assert!(!shown[0].contains("<context"), "{shown:?}");
    assert_eq!(zed::thread_problems(&updates), Vec::<String>::new());
}

/// A transcript written before tandem kept the blocks as sent holds only what the model
/// read: a mentioned file as `<context uri="…">` text. It still loads, and the mention is a
/// chip again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_older_transcripts_mentions_come_back_as_chips() {
    let ws = Workspace::new();
    let notes = ws.write("project/notes.txt", "one\n");
    let mock = MockModel::start(vec![]).await;
    let uri = file_uri(&notes);
    let at = "\"v\":1,\"at\":\"2026-01-01T00:00:00.000Z\"";
    let lines = [
        json!({"type": "meta", "id": "older", "cwd": ws.project()}),
        json!({"type": "settings", "mode": "ask", "model": "mock-model", "reasoning_effort": "medium"}),
        json!({"type": "user", "parts": [{"text": "Explain "},
                                         {"text": format!("<context uri=\"{uri}\">\none\n</context>")}]}),
        json!({"type": "assistant", "text": "It says one.", "reasoning": "", "tool_calls": []}),
        json!({"type": "title", "title": "Explain"}),
    ];
    let text: String = lines
        .iter()
        .map(|l| format!("{{{at},{}\n", &l.to_string()[1..]))
        .collect();
    ws.write("home/data/sessions/older.jsonl", &text);

    let folders = [ws.project()];
    let mut agent = Agent::spawn_with(&ws.env(&mock), &[], Some(zed::editor(&folders)));
    zed::initialize(&mut agent).await;
    let (_, updates) = zed::load_session(&mut agent, "older", &folders, json!([])).await;
    assert_eq!(
        zed::user_messages(&updates),
        [format!("Explain [@notes.txt]({uri})")]
    );
    assert_eq!(
        user_blocks(&updates)[1],
        json!({"type": "resource", "resource": {"uri": uri, "text": "one"}})
    );
}

/// CodeCompanion sends each user message the agent has not seen as a text block of its own
/// (`form_messages`: "type = \"text\", text = msg.content"), so a cancelled prompt goes
/// again with the next one; a loaded chat's user chunks are joined with
/// "table.concat(user_chunks)", no separator. The model reads the texts apart, and so must
/// the reopened chat show them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn texts_sent_as_blocks_of_their_own_stay_apart_when_reopened() {
    let ws = Workspace::new();
    let mock = MockModel::start(vec![Reply::text(&["Yes, here."])]).await;
    let mut agent = Agent::spawn(&ws.env(&mock), &[]);
    agent.initialize().await;
    let session = codecompanion::new_session(&mut agent, &ws.project()).await;
    let prompt = codecompanion::prompt_blocks(&["write a long text", "are you still there?"]);
    let answer = agent
        .request(
            "session/prompt",
            json!({"sessionId": session, "prompt": prompt}),
        )
        .await;
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    assert_eq!(
        mock.requests()[0].last_user_text(),
        "write a long text\n\nare you still there?",
        "the model reads them apart"
    );
    codecompanion::disconnect(agent).await;

    let mut agent = Agent::spawn(&ws.env(&mock), &[]);
    agent.initialize().await;
    let (_, updates) = agent
        .open_stored("session/load", &session, &ws.project())
        .await;
    assert_eq!(
        codecompanion::restored_messages(&updates),
        [
            (
                "user",
                "write a long text\n\nare you still there?".to_string()
            ),
            ("llm", "Yes, here.".to_string())
        ]
    );
    assert_eq!(user_blocks(&updates), *prompt.as_array().unwrap());
}

/// agent-shell "prints a mode update that arrives before `session/load`'s answer as 'Session
/// mode: nil'" (`/work/shared/clients/README.md`): it has no session yet to apply it to. The
/// answer carries the mode and the options; nothing about them may come before it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_state_update_comes_before_an_openings_answer() {
    let ws = Workspace::new();
    let mock = MockModel::start(vec![Reply::text(&["ok"])]).await;
    let mut env = ws.env(&mock);
    env.push(("TANDEM_MODE".into(), "accept-edits".into()));
    let mut agent = Agent::spawn(&env, &[]);
    agent_shell::initialize(&mut agent).await;
    let before = agent.stdout_lines().len();
    let new = agent_shell::new_session(&mut agent, &ws.project()).await;
    let session = new["sessionId"].as_str().unwrap().to_string();
    agent.prompt(&session, "hello").await;
    let lines = agent.stdout_lines()[before..].to_vec();
    assert_eq!(state_before_answer(&lines), Vec::<String>::new(), "new");
    agent.shutdown().await;

    let mut agent = Agent::spawn(&ws.env(&mock), &[]);
    agent_shell::initialize(&mut agent).await;
    for method in ["session/load", "session/resume"] {
        let before = agent.stdout_lines().len();
        let (answer, notices) =
            agent_shell::open_stored(&mut agent, method, &session, &ws.project()).await;
        assert_eq!(notices, Vec::<String>::new(), "{method}");
        let lines = agent.stdout_lines()[before..].to_vec();
        assert_eq!(
            state_before_answer(&lines),
            Vec::<String>::new(),
            "{method}"
        );
        assert_eq!(answer["modes"]["currentModeId"], "accept-edits", "{answer}");
        let mode = answer["configOptions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|o| o["id"] == "mode")
            .unwrap();
        assert_eq!(mode["currentValue"], "accept-edits");
    }
}

/// The kinds of the state updates (mode, options, commands) among `lines` that came before
/// the first answer.
fn state_before_answer(lines: &[String]) -> Vec<String> {
    let mut early = Vec::new();
    for line in lines {
        let message: Value = serde_json::from_str(line).unwrap();
        if message.get("result").is_some() || message.get("error").is_some() {
            return early;
        }
        let kind = message["params"]["update"]["sessionUpdate"]
            .as_str()
            .unwrap_or_default();
        if matches!(
            kind,
            "current_mode_update" | "config_option_update" | "available_commands_update"
        ) {
            early.push(kind.to_string());
        }
    }
    panic!("no answer among {lines:?}");
}

/// With no `[[models]]` in the config, the model picker lists what the server's `/v1/models`
/// serves. Zed "replaces its state with the answer's `configOptions`" after
/// `set_config_option`, and when it reopens a thread it takes them from the load's answer
/// (`/work/shared/clients/README.md`): the chosen model must be the one there, and the one
/// the next prompt goes to.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_chosen_from_the_servers_list_is_kept_on_reopen() {
    let ws = Workspace::new();
    let mock = MockModel::start(vec![Reply::text(&["one"]), Reply::text(&["two"])]).await;
    let models = json!({"object": "list", "data": [{"id": "mock-model"}, {"id": "other-model"}]});
    mock.serve_info("/v1/models", 200, models);
    let folders = [ws.project()];
    let mut agent = Agent::spawn_with(&ws.env(&mock), &[], Some(zed::editor(&folders)));
    zed::initialize(&mut agent).await;
    let new = zed::new_session(&mut agent, &folders, json!([])).await;
    let session = new["sessionId"].as_str().unwrap().to_string();
    assert_eq!(model_option(&new)["currentValue"], "mock-model");
    let set = agent.set_option(&session, "model", "other-model").await;
    assert_eq!(model_option(&set["result"])["currentValue"], "other-model");
    agent.prompt(&session, "first").await;
    agent.shutdown().await;

    let mut agent = Agent::spawn_with(&ws.env(&mock), &[], Some(zed::editor(&folders)));
    zed::initialize(&mut agent).await;
    let (loaded, _) = zed::load_session(&mut agent, &session, &folders, json!([])).await;
    let picker = model_option(&loaded);
    assert_eq!(picker["currentValue"], "other-model", "{picker}");
    assert!(
        picker["options"]
            .as_array()
            .unwrap()
            .iter()
            .any(|o| o["value"] == "other-model")
    );
    agent.prompt(&session, "second").await;
    let requests = mock.requests();
    assert_eq!(requests[0].body["model"], "other-model");
    assert_eq!(requests[1].body["model"], "other-model");
}

fn model_option(answer: &Value) -> &Value {
    answer["configOptions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["id"] == "model")
        .unwrap()
}
