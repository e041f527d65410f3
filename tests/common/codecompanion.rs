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
//!   render.lua`) rebuilds a loaded chat from its updates;
//! - [`approval`]: `M.confirm` (`lua/codecompanion/interactions/chat/acp/
//!   request_permission.lua`) shows a permission request as a diff or as a bare question.

use std::path::Path;

use serde_json::{Value, json};

use super::{Agent, path_str};

/// `session/new` as `_establish_session` sends it; returns the session id.
pub(crate) async fn new_session(agent: &mut Agent, cwd: &Path) -> String {
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
pub(crate) fn prompt_blocks(messages: &[&str]) -> Value {
    messages
        .iter()
        .map(|text| json!({"type": "text", "text": text}))
        .collect()
}

/// Closing the chat: "self._state.handle:kill(\"sigterm\")". Returns tandem's stderr.
pub(crate) async fn disconnect(agent: Agent) -> String {
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
pub(crate) fn restored_messages(messages: &[Value]) -> Vec<(&'static str, String)> {
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

/// What CodeCompanion's approval view shows for a `session/request_permission` (its params).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Approval {
    /// `show_diff`: the diff from `oldText` to `newText`, titled by `path`.
    Diff {
        path: String,
        old: String,
        new: String,
    },
    /// `vim.fn.confirm(prompt, …)`: the question alone, no change shown.
    Question(String),
}

/// `M.confirm`: "if request.tool_call and requires_diff(request.tool_call) then return
/// show_diff(chat, request) end", else a confirm with `build_choices`' prompt.
/// - `requires_diff` looks only at the first item: "tool_call.content[1].type == \"diff\""
///   (Lua's first), and not when both its texts are empty;
/// - `get_diff` titles it "tool_call.locations and tool_call.locations[1] and
///   tool_call.locations[1].path", else the diff's own path under the cwd;
/// - `build_choices`: "string.format(\"%s: %s ?\", utils.capitalize(request.tool_call and
///   request.tool_call.kind or \"permission\"), request.tool_call and request.tool_call.title
///   or \"Agent requested permission\")".
///
/// (`handle_permission_request` merges the tool call it cached from the updates in only when
/// the request's tool call has no `content`; tandem's always has.)
pub(crate) fn approval(params: &Value) -> Approval {
    let call = &params["toolCall"];
    let first = &call["content"][0];
    let text = |v: &Value| v.as_str().unwrap_or_default().to_string();
    if first["type"] == "diff"
        && !(text(&first["oldText"]).is_empty() && text(&first["newText"]).is_empty())
    {
        let path = call["locations"][0]["path"]
            .as_str()
            .or(first["path"].as_str())
            .unwrap_or_default()
            .to_string();
        return Approval::Diff {
            path,
            old: text(&first["oldText"]),
            new: text(&first["newText"]),
        };
    }
    let kind = call["kind"].as_str().unwrap_or("permission");
    let mut capitalized = kind.to_string();
    if let Some(first) = capitalized.get_mut(0..1) {
        first.make_ascii_uppercase();
    }
    let title = call["title"]
        .as_str()
        .unwrap_or("Agent requested permission");
    Approval::Question(format!("{capitalized}: {title} ?"))
}
