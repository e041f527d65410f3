//! Zed's side of tandem's errors and logins, with a client that does what Zed does
//! (`tests/common/zed.rs`); each rule is quoted from Zed's source where the test relies on it.

use serde_json::json;

use crate::common::{Agent, MockModel, Reply, Workspace, path_str, zed};

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
