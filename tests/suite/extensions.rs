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
    for (name, schema) in tandem::ext::schema_files() {
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
        json!(["_tandem/status", "_tandem/usage", "_tandem/session/export"])
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
