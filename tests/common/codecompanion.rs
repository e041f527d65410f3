//! A client that behaves as CodeCompanion (Neovim; olimorris/codecompanion.nvim) does, for
//! tests that must hold there. Each rule is from its source, quoted where it is checked:
//!
//! - [`new_session`]: `Connection:_establish_session` sends "cwd = vim.fn.getcwd(),
//!   mcpServers = …" for every chat, used or not (`lua/codecompanion/acp/init.lua`);
//! - [`prompt_blocks`]: `form_messages` (`lua/codecompanion/adapters/acp/helpers.lua`) sends
//!   each user message the agent has not seen as a text block of its own ("type = \"text\",
//!   text = msg.content"), so a cancelled prompt goes again with the next one;
//! - [`disconnect`]: closing a chat ends the agent with "self._state.handle:kill(\"sigterm\")";
//! - [`restored_messages`]: `restore_session` (`lua/codecompanion/interactions/chat/acp/
//!   render.lua`) rebuilds a loaded chat from its updates.

use std::path::Path;

use serde_json::{Value, json};

use super::{Agent, path_str};

/// `session/new` as `_establish_session` sends it; returns the session id.
pub async fn new_session(agent: &mut Agent, cwd: &Path) -> String {
    let answer = agent
        .request_ok(
            "session/new",
            json!({"cwd": path_str(cwd), "mcpServers": []}),
        )
        .await;
    answer["sessionId"].as_str().unwrap().to_string()
}

/// The prompt `form_messages` makes of the user messages the agent has not seen yet: one
/// text block each.
pub fn prompt_blocks(messages: &[&str]) -> Value {
    messages
        .iter()
        .map(|text| json!({"type": "text", "text": text}))
        .collect()
}

/// Closing the chat: "self._state.handle:kill(\"sigterm\")". Returns tandem's stderr.
pub async fn disconnect(agent: Agent) -> String {
    let (status, stderr) = agent.stop_with(nix::sys::signal::Signal::SIGTERM).await;
    assert!(status.success(), "{status:?}\n{stderr}");
    stderr
}

/// The chat `restore_session` rebuilds from a load's `messages`: "local text =
/// table.concat(user_chunks)" for each run of `user_message_chunk`s (no separator), the same
/// for the agent's chunks, a tool call ending a run; each chunk read with `extract_text` (a
/// text block's text, a resource's text, a link as "[resource: uri]", an image as "[image]").
/// Returns (role, text)
/// in order.
pub fn restored_messages(messages: &[Value]) -> Vec<(&'static str, String)> {
    let mut chat = Vec::new();
    let mut run: Option<(&'static str, String)> = None;
    for message in messages {
        let update = &message["params"]["update"];
        let role = match update["sessionUpdate"].as_str() {
            Some("user_message_chunk") => "user",
            Some("agent_message_chunk") => "llm",
            Some("tool_call" | "tool_call_update") => {
                chat.extend(run.take());
                continue;
            }
            _ => continue,
        };
        let text = extract_text(&update["content"]);
        match &mut run {
            Some((r, so_far)) if *r == role => so_far.push_str(&text),
            _ => {
                chat.extend(run.take());
                run = Some((role, text));
            }
        }
    }
    chat.extend(run);
    chat.retain(|(_, text)| !text.is_empty());
    chat
}

/// `extract_text` (`lua/codecompanion/acp/prompt_builder.lua`).
fn extract_text(block: &Value) -> String {
    match block["type"].as_str() {
        Some("text") => block["text"].as_str().unwrap_or_default().to_string(),
        Some("resource_link") => format!("[resource: {}]", block["uri"].as_str().unwrap_or("")),
        Some("resource") => match block["resource"]["text"].as_str() {
            Some(text) => text.to_string(),
            None => format!(
                "[resource: {}]",
                block["resource"]["uri"].as_str().unwrap_or("")
            ),
        },
        Some("image") => "[image]".to_string(),
        _ => String::new(),
    }
}
