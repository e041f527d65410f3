//! `_tandem/*` extension methods over real stdio, checked against their generated schemas.

use std::path::Path;

use serde_json::{Value, json};

use crate::common::mock_model::{self, Reply};
use crate::common::{Agent, MockModel, Workspace};

fn schema_dir() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("protocol/extensions")
}

/// Validates `value` against the `part` (`request` or `response`) schema of `file`.
fn assert_matches(file: &str, part: &str, value: &Value) {
    let doc: Value =
        serde_json::from_str(&std::fs::read_to_string(schema_dir().join(file)).unwrap()).unwrap();
    let validator = jsonschema::validator_for(&doc[part]).unwrap();
    let errors: Vec<String> = validator
        .iter_errors(value)
        .map(|e| e.to_string())
        .collect();
    assert!(errors.is_empty(), "{file} {part}: {errors:?}\n{value}");
}

#[test]
fn schema_files_match_the_code() {
    // Regenerate with: TANDEM_UPDATE_SCHEMAS=1 cargo test --all-features schema_files
    let update = std::env::var_os("TANDEM_UPDATE_SCHEMAS").is_some();
    for (name, schema) in tandem::acp::ext::schema_files() {
        let path = schema_dir().join(name);
        let text = serde_json::to_string_pretty(&schema).unwrap() + "\n";
        if update {
            std::fs::write(&path, &text).unwrap();
        }
        let on_disk = std::fs::read_to_string(&path).unwrap_or_default();
        assert_eq!(
            on_disk,
            text,
            "{} is stale: regenerate it (see this test)",
            path.display()
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_usage_and_export() {
    let mock = MockModel::start(vec![
        Reply::chunks(vec![
            mock_model::reasoning_content("Thinking it over."),
            mock_model::text("Hello."),
            mock_model::finish("stop"),
            json!({"choices": [], "usage": {"prompt_tokens": 120, "completion_tokens": 30,
                   "prompt_tokens_details": {"cached_tokens": 100}, "completion_tokens_details": {"reasoning_tokens": 12}}}),
        ]),
        Reply::text(&["Again."]),
    ])
    .await;
    let ws = Workspace::new();
    let mut agent = Agent::spawn(&ws.env(&mock), &[]);
    let init = agent.initialize().await;
    assert_eq!(
        init["agentCapabilities"]["_meta"]["tandem"]["methods"],
        json!([
            "_tandem/status",
            "_tandem/usage",
            "_tandem/session/export",
            "_tandem/session/fork",
            "_tandem/session/rewind",
            "_tandem/session/steer",
            "_tandem/actions/list",
            "_tandem/actions/run"
        ])
    );
    let session = agent.new_session(&ws.project()).await["sessionId"]
        .as_str()
        .unwrap()
        .to_string();
    agent.prompt(&session, "Say hello").await;
    agent.prompt(&session, "Again").await;

    let status = agent.request_ok("_tandem/status", json!({})).await;
    assert_matches("status.json", "response", &status);
    assert_eq!(status["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(status["defaultModel"], "mock-model");
    assert_eq!(status["baseUrl"], mock.base_url.as_str());
    assert_eq!(status["sessions"][0]["sessionId"], session.as_str());
    assert_eq!(status["sessions"][0]["mode"], "ask");
    assert!(status["dataDir"].as_str().unwrap().ends_with("data"));

    let usage = agent
        .request_ok("_tandem/usage", json!({"sessionId": session}))
        .await;
    assert_matches("usage.json", "response", &usage);
    assert_eq!(usage["requests"], 2);
    assert_eq!(usage["inputTokens"], 220, "120 + 100 from the second reply");
    assert_eq!(usage["cachedTokens"], 100);
    assert_eq!(usage["outputTokens"], 31);
    assert_eq!(usage["reasoningTokens"], 12);
    assert_eq!(
        usage["contextUsed"], 101,
        "the last response's prompt + completion"
    );
    assert_eq!(usage["contextWindow"], 128000);
    let missing = agent
        .request("_tandem/usage", json!({"sessionId": "nope"}))
        .await;
    assert_eq!(missing["error"]["code"], -32002);

    let md = agent
        .request_ok("_tandem/session/export", json!({"sessionId": session}))
        .await;
    assert_matches("session-export.json", "response", &md);
    assert_eq!(md["format"], "markdown");
    let text = md["content"].as_str().unwrap();
    assert!(text.starts_with("# Say hello\n"), "{text}");
    assert!(
        text.contains("## User\n\nSay hello\n")
            && text.contains("> Thinking it over.")
            && text.contains("Hello.\n"),
        "{text}"
    );
    let js = agent
        .request_ok(
            "_tandem/session/export",
            json!({"sessionId": session, "format": "json"}),
        )
        .await;
    let records: Vec<Value> = serde_json::from_str(js["content"].as_str().unwrap()).unwrap();
    assert_eq!(records[0]["type"], "meta");
    assert!(
        records
            .iter()
            .any(|r| r["type"] == "assistant" && r["text"] == "Again.")
    );
    let bad = agent
        .request(
            "_tandem/session/export",
            json!({"sessionId": session, "format": "pdf"}),
        )
        .await;
    assert_eq!(bad["error"]["code"], -32602);
    assert_matches(
        "session-export.json",
        "request",
        &json!({"sessionId": session, "format": "json"}),
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn custom_actions_are_listed_run_and_offered_as_slash_commands() {
    let mock = MockModel::start(vec![
        Reply::text(&["Hello, Ada!"]),
        Reply::text(&["Noted."]),
    ])
    .await;
    let ws = Workspace::new();
    ws.write("home/.config/tandem/config.toml", "[[actions]]\nname = \"greet\"\ndescription = \"Greet someone\"\nprompt = \"Say hello to $ARGUMENTS\"\n");
    ws.write(
        "project/.tandem/config.toml",
        "[[actions]]\nname = \"count\"\ncommand = \"echo counted-$((2 + 3))\"\n",
    );
    let editor = crate::common::editor::FakeEditor::new();
    let mut agent = Agent::spawn_with(&ws.env(&mock), &[], Some(editor.clone()));
    agent.initialize().await;
    let session = agent.new_session(&ws.project()).await;
    let id = session["sessionId"].as_str().unwrap().to_string();
    let names: Vec<_> = session["commands"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"greet") && names.contains(&"count"),
        "{names:?}"
    );

    let list = agent
        .request_ok("_tandem/actions/list", json!({"sessionId": id}))
        .await;
    assert_matches("actions-list.json", "response", &list);
    assert_eq!(
        list["actions"],
        json!([
            {"name": "greet", "description": "Greet someone", "kind": "prompt", "takesArguments": true},
            {"name": "count", "description": "runs the project's command `echo counted-$((2 + 3))`", "kind": "command", "takesArguments": false}
        ])
    );

    let greeted = agent
        .request_ok(
            "_tandem/actions/run",
            json!({"sessionId": id, "name": "greet", "arguments": "Ada"}),
        )
        .await;
    assert_matches("actions-run.json", "response", &greeted);
    assert_eq!(greeted["stopReason"], "end_turn");
    assert!(greeted.get("output").is_none());
    assert_eq!(mock.requests()[0].last_user_text(), "Say hello to Ada");

    // A command action runs under the permission rules: ask mode asks the editor.
    let counted = agent
        .request_ok(
            "_tandem/actions/run",
            json!({"sessionId": id, "name": "count"}),
        )
        .await;
    assert_matches("actions-run.json", "response", &counted);
    let output = counted["output"].as_str().unwrap();
    assert!(
        output.contains("Exit code: 0") && output.contains("counted-5"),
        "{output}"
    );
    assert_eq!(editor.params_of("session/request_permission").len(), 1);
    // The model learns what ran.
    agent.prompt(&id, "ok?").await;
    let texts: Vec<String> = mock.requests()[1].body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| crate::common::mock_model::content_text(&m["content"]))
        .collect();
    assert!(
        texts
            .iter()
            .any(|t| t.starts_with("[The user ran the `count` action") && t.contains("counted-5")),
        "{texts:?}"
    );

    // Read-only mode refuses it; the slash command takes the same path.
    agent
        .request_ok(
            "session/set_mode",
            json!({"sessionId": id, "modeId": "read-only"}),
        )
        .await;
    let refused = agent
        .request_ok(
            "_tandem/actions/run",
            json!({"sessionId": id, "name": "count"}),
        )
        .await;
    assert!(
        refused["output"].as_str().unwrap().starts_with("Refused"),
        "{refused}"
    );
    let (slash, _) = agent.prompt(&id, "/count").await;
    assert_eq!(slash["result"]["stopReason"], "end_turn");
    let unknown = agent
        .request(
            "_tandem/actions/run",
            json!({"sessionId": id, "name": "nope"}),
        )
        .await;
    assert_eq!(unknown["error"]["code"], -32602);
}
