//! A client that behaves as agent-shell (Emacs; it talks ACP through the `acp.el` package)
//! does, for tests that must hold there. Each rule is from its source (xenodium/agent-shell,
//! xenodium/acp.el) or from `../shared/clients/README.md`, and quoted where it is checked:
//!
//! - [`initialize`], [`new_session`], [`open_stored`] and [`set_model`]: the requests as
//!   `acp.el` makes them (`acp-make-initialize-request`, `acp-make-session-new-request`, …);
//! - [`models`]: agent-shell "reads only the older `models` field of session answers and
//!   switches with `session/set_model`";
//! - [`notices_before_answer`]: it "prints a mode update that arrives before `session/load`'s
//!   answer as 'Session mode: nil'".

use std::path::Path;

use serde_json::{Value, json};

use super::{Agent, path_str};

/// `initialize` as `acp-make-initialize-request` builds it: `protocolVersion`, the client's
/// name, and "clientCapabilities . ((fs . ((readTextFile …) (writeTextFile …))))": no
/// terminal.
pub(crate) async fn initialize(agent: &mut Agent) -> Value {
    agent
        .request_ok(
            "initialize",
            json!({
                "protocolVersion": 1,
                "clientInfo": {"name": "agent-shell", "title": "Agent Shell", "version": "0.50.1"},
                "clientCapabilities": {"fs": {"readTextFile": true, "writeTextFile": true}}
            }),
        )
        .await
}

/// `session/new` as `acp-make-session-new-request` builds it: "(cwd . …) (mcpServers . …)".
/// Returns the whole answer (the `available_commands_update` that follows is left queued).
pub(crate) async fn new_session(agent: &mut Agent, cwd: &Path) -> Value {
    agent
        .request_ok(
            "session/new",
            json!({"cwd": path_str(cwd), "mcpServers": []}),
        )
        .await
}

/// What agent-shell reads of a session answer's models: the older `models` field, "(models
/// (currentModelId . …) (availableModels . [((modelId . …) (name . …) (description . …))]))"
/// (the shape of its own test fixtures); `None` when the answer has none, which agent-shell
/// reports as "No session models available". Returns (current, every model id).
pub(crate) fn models(answer: &Value) -> Option<(String, Vec<String>)> {
    let models = answer.get("models")?;
    let current = models["currentModelId"].as_str()?.to_string();
    let ids = models["availableModels"]
        .as_array()?
        .iter()
        .filter_map(|m| m["modelId"].as_str().map(String::from))
        .collect::<Vec<_>>();
    (!ids.is_empty()).then_some((current, ids))
}

/// `session/set_model` as `acp-make-session-set-model-request` builds it: "((sessionId . …)
/// (modelId . …))". Returns the whole response.
pub(crate) async fn set_model(agent: &mut Agent, session: &str, model: &str) -> Value {
    agent
        .request(
            "session/set_model",
            json!({"sessionId": session, "modelId": model}),
        )
        .await
}

/// An opening (`session/load` or `session/resume`, as `acp-make-session-load-request` builds
/// it: sessionId, cwd, mcpServers) and what agent-shell makes of it: the answer, and the
/// lines it prints for state that came before the answer.
pub(crate) async fn open_stored(
    agent: &mut Agent,
    method: &str,
    session: &str,
    cwd: &Path,
) -> (Value, Vec<String>) {
    let before = agent.stdout_lines().len();
    let params = json!({"sessionId": session, "cwd": path_str(cwd), "mcpServers": []});
    let (answer, _) = agent.open_stored_with(method, params).await;
    let lines = agent.stdout_lines();
    (answer, notices_before_answer(&lines[before..]))
}

/// What agent-shell prints for the `current_mode_update`s among `lines` (what the agent wrote
/// since the opening request was sent) that came before the opening's answer: it has no
/// session state yet to apply them to, so each reads "Session mode: nil".
pub(crate) fn notices_before_answer(lines: &[String]) -> Vec<String> {
    let mut notices = Vec::new();
    for line in lines {
        let message: Value = serde_json::from_str(line).unwrap_or_default();
        if message.get("result").is_some() || message.get("error").is_some() {
            break;
        }
        if message["params"]["update"]["sessionUpdate"] == "current_mode_update" {
            notices.push("Session mode: nil".to_string());
        }
    }
    notices
}
