//! A client that behaves as Zed does, for tests that must hold in Zed. Zed cannot run on the
//! test machine, so each rule here is taken from its source (zed-industries/zed; the files
//! and the rules are summarised in `../shared/clients/README.md`) and quoted where it is
//! checked:
//!
//! - [`initialize`]: Zed's exact `clientCapabilities`, `_meta` and `clientInfo`
//!   (`crates/agent_servers/src/acp/mod.rs`);
//! - [`editor`]: `fs/*` only inside the worktrees, else `resource_not_found`; reading past the
//!   end is `invalid_params`; `terminal/release` kills a terminal and forgets it;
//! - [`thread_problems`]: what Zed's thread (`crates/acp_thread/src/acp_thread.rs`) would
//!   refuse or drop among the messages the agent sent: a `tool_call_update` for an unknown
//!   tool call, terminal content naming a terminal already released or never created;
//! - [`card_status`]: the status Zed's card for a tool call ends with (what the user's answer
//!   to a permission request made it, what the agent's later updates overwrite);
//! - [`error_text`]: what Zed shows for a JSON-RPC error (`-32603`'s `data` unwrapped only when
//!   it is exactly `{"details": …}`, `-32000` as "authentication required");
//! - [`login_command`], [`run_login`], [`reconnect`]: Zed's login button (the command it runs
//!   in its terminal: for a `terminal` method the agent's configured command line with the
//!   method's arguments after it, [`AgentServer`]; or none and then `authenticate`), and
//!   what it does after a login.

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::Arc;

use serde_json::{Value, json};

use super::editor::FakeEditor;
use super::{Agent, path_str};

/// Zed's `clientCapabilities`, `_meta` included (`ClientCapabilities` built in
/// `crates/agent_servers/src/acp/mod.rs`): "fs: read_text_file: true, write_text_file: true",
/// "terminal: true", "auth: terminal: true", and the meta keys "terminal_output" and
/// "terminal-auth".
pub fn capabilities() -> Value {
    json!({
        "fs": {"readTextFile": true, "writeTextFile": true},
        "terminal": true,
        "auth": {"terminal": true},
        "_meta": {"terminal_output": true, "terminal-auth": true}
    })
}

/// `initialize` exactly as Zed sends it; returns the agent's answer.
pub async fn initialize(agent: &mut Agent) -> Value {
    agent
        .request_ok(
            "initialize",
            json!({
                "protocolVersion": 1,
                "clientCapabilities": capabilities(),
                "clientInfo": {"name": "zed", "title": "Zed", "version": "0.220.0"}
            }),
        )
        .await
}

/// A fake editor with Zed's rules for `fs/*`: paths outside `worktrees` are
/// `resource_not_found` ("Zed refuses paths outside its worktrees"), and a read past the end
/// of a file is `invalid_params`.
pub fn editor(worktrees: &[PathBuf]) -> Arc<FakeEditor> {
    let editor = FakeEditor::new();
    *editor.worktrees.lock().unwrap() = Some(worktrees.to_vec());
    editor
}

/// `session/new` as Zed sends it: `cwd` the first folder, the others as
/// `additionalDirectories` (Zed sends them only when the agent advertises
/// `sessionCapabilities.additionalDirectories`), and the user's context servers.
pub async fn new_session(agent: &mut Agent, folders: &[PathBuf], mcp_servers: Value) -> Value {
    let mut params = json!({"cwd": path_str(&folders[0]), "mcpServers": mcp_servers});
    if folders.len() > 1 {
        params["additionalDirectories"] = folders[1..].iter().map(|f| json!(path_str(f))).collect();
    }
    agent.request_ok("session/new", params).await
}

/// What Zed shows for an error answer: for `-32603` (internal error) it reads `data` only
/// when it is exactly `{"details": "…"}` ("a strict struct" in its error conversion), and then
/// shows the details; any other `data` is shown raw, after the message. `-32000` is
/// "Authentication required" with the message as the description.
pub fn error_text(error: &Value) -> String {
    let message = error["message"].as_str().unwrap_or_default();
    match error["code"].as_i64() {
        Some(-32000) => format!("Authentication required: {message}"),
        Some(-32603) => match error.get("data") {
            None | Some(Value::Null) => message.to_string(),
            Some(Value::Object(data)) if data.len() == 1 && data["details"].is_string() => {
                data["details"].as_str().unwrap_or_default().to_string()
            }
            Some(data) => format!("{message}: {data}"),
        },
        _ => message.to_string(),
    }
}

/// What Zed's thread would refuse or drop among `messages` (what the agent sent, in order,
/// as [`Agent::drain`] returns them), given that the fake editor names terminals `term-1`,
/// `term-2`, … in the order they were created:
/// - "a `tool_call_update` for an unknown id shows a red 'Tool call not found' entry";
/// - "terminal content looks the id up in the thread's terminal map: an unknown id is an
///   error that drops the update", and `terminal/release` removes the terminal from the map.
pub fn thread_problems(messages: &[Value]) -> Vec<String> {
    let mut calls: HashSet<String> = HashSet::new();
    let mut terminals: HashSet<String> = HashSet::new();
    let mut created = 0;
    let mut problems = Vec::new();
    for message in messages {
        match message["method"].as_str() {
            Some("terminal/create") => {
                created += 1;
                terminals.insert(format!("term-{created}"));
            }
            Some("terminal/release") => {
                terminals.remove(message["params"]["terminalId"].as_str().unwrap_or_default());
            }
            Some("session/update") => {
                let update = &message["params"]["update"];
                let id = update["toolCallId"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string();
                match update["sessionUpdate"].as_str() {
                    Some("tool_call") => {
                        calls.insert(id.clone());
                    }
                    Some("tool_call_update") if !calls.contains(&id) => {
                        problems.push(format!("Tool call not found: {id}"));
                    }
                    _ => {}
                }
                for block in update["content"].as_array().into_iter().flatten() {
                    if block["type"] == "terminal" {
                        let terminal = block["terminalId"].as_str().unwrap_or_default();
                        if !terminals.contains(terminal) {
                            problems.push(format!(
                                "Terminal with id {terminal} not found (update for {id} dropped)"
                            ));
                        }
                    }
                }
            }
            _ => {}
        }
    }
    problems
}

// Logging in, as Zed does it (`crates/agent_ui/src/conversation_view.rs`, `authenticate`, and
// `terminal_auth_task` in `crates/agent_servers/src/acp/mod.rs`).

/// A command line Zed runs in its terminal panel to log in.
#[derive(Debug, Clone, PartialEq)]
pub struct LoginCommand {
    /// The terminal's title.
    pub label: String,
    /// The program.
    pub command: String,
    /// Its arguments.
    pub args: Vec<String>,
    /// Variables set for it, over the user's environment.
    pub env: Vec<(String, String)>,
}

/// An agent as the user's Zed settings configure it (`agent_servers`, a
/// `CustomAgentServerSettings`: `command`, `args`, `env`), with the command as it is found
/// on this machine.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentServer {
    /// The program Zed starts.
    pub command: String,
    /// The arguments it is configured with.
    pub args: Vec<String>,
    /// The variables it is configured with.
    pub env: Vec<(String, String)>,
}

impl AgentServer {
    /// tandem's binary under test, started with `args` and `env`.
    pub fn tandem(args: &[String], env: &[(String, String)]) -> Self {
        Self {
            command: super::tandem_bin(),
            args: args.to_vec(),
            env: env.to_vec(),
        }
    }

    /// The `args` and `env` of one `agent_servers` entry of Zed's settings, for an entry
    /// that starts tandem (`command: "tandem"`).
    pub fn from_settings(entry: &Value) -> Self {
        let args = string_list(&entry["args"]).unwrap_or_default();
        let env = string_map(&entry["env"]).unwrap_or_default();
        Self::tandem(&args, &env)
    }
}

fn string_list(value: &Value) -> Option<Vec<String>> {
    value
        .as_array()?
        .iter()
        .map(|a| a.as_str().map(String::from))
        .collect()
}

fn string_map(value: &Value) -> Option<Vec<(String, String)>> {
    value
        .as_object()?
        .iter()
        .map(|(k, v)| v.as_str().map(|v| (k.clone(), v.to_string())))
        .collect()
}

/// What Zed runs when the user clicks the button of auth method `method` of the agent
/// `agent` (zed `crates/agent_servers/src/acp.rs` at 0038d2e2cc9b, `terminal_auth_task`):
/// - a `terminal` method, without any feature flag: "`acp::AuthMethod::Terminal(terminal) =>`"
///   asks the agent's settings for "`agent.get_command(terminal.args.clone(),
///   HashMap::from_iter(terminal.env.clone()), …)`", the configured command with the
///   configured args and then the method's (Zed's own test
///   `terminal_auth_task_builds_spawn_from_prebuilt_command` expects `["--acp", "--verbose",
///   "/auth"]` for `--acp --verbose` and a method's `/auth`), the configured env with the
///   method's over it, labelled with the method's name;
/// - any other type: "`_ => meta_terminal_auth_task(…)`", which reads
///   `meta.get("terminal-auth")` as `MetaTerminalAuth { label: String, command: String,
///   #[serde(default)] args, #[serde(default)] env }`.
///
/// `None` (another type without such `_meta`, or one without its label or command) is when
/// Zed sends `authenticate` with the method's id instead.
pub fn login_command(method: &Value, agent: &AgentServer) -> Option<LoginCommand> {
    if method["type"] == "terminal" {
        let mut args = agent.args.clone();
        args.extend(match method.get("args") {
            None => Vec::new(),
            Some(list) => string_list(list)?,
        });
        let mut env = agent.env.clone();
        env.extend(match method.get("env") {
            None => Vec::new(),
            Some(map) => string_map(map)?,
        });
        return Some(LoginCommand {
            label: method["name"].as_str()?.to_string(),
            command: agent.command.clone(),
            args,
            env,
        });
    }
    let meta = method.get("_meta")?.get("terminal-auth")?;
    let label = meta.get("label")?.as_str()?.to_string();
    let command = meta.get("command")?.as_str()?.to_string();
    let args = match meta.get("args") {
        None => Vec::new(),
        Some(args) => string_list(args)?,
    };
    let env = match meta.get("env") {
        None => Vec::new(),
        Some(env) => string_map(env)?,
    };
    Some(LoginCommand {
        label,
        command,
        args,
        env,
    })
}

/// Runs `login` in a terminal as Zed's terminal panel does (`spawn_external_agent_login`: the
/// command with its arguments, its `env` over the user's environment `env`), `user` typing at
/// its prompts; returns the exit status, which is all Zed looks at: "No success patterns
/// specified: wait for the process to exit and check exit code" (0 is logged in).
#[cfg(unix)]
pub async fn run_login(
    login: &LoginCommand,
    env: &[(String, String)],
    user: impl FnOnce(&mut super::terminal::Terminal) + Send + 'static,
) -> i32 {
    let mut env = env.to_vec();
    env.extend(login.env.iter().cloned());
    let (command, args) = (login.command.clone(), login.args.clone());
    tokio::task::spawn_blocking(move || {
        let mut term = super::terminal::spawn(&command, &args, &env);
        user(&mut term);
        super::terminal::exit_status(&mut term)
    })
    .await
    .unwrap()
}

/// What Zed does once a login exited 0: `this.reset(window, cx)`, which asks the connection
/// store for the agent's connection (the same process: `request_connection` returns the
/// `Ready` one) and opens the thread that was open again, with `session/load` when the agent
/// supports it (else `session/resume`), or a new session when there was none. The answer.
pub async fn reconnect(agent: &mut Agent, folders: &[PathBuf], thread: Option<&str>) -> Value {
    let mut params = json!({"cwd": path_str(&folders[0]), "mcpServers": []});
    if folders.len() > 1 {
        params["additionalDirectories"] = folders[1..].iter().map(|f| json!(path_str(f))).collect();
    }
    match thread {
        None => agent.request("session/new", params).await,
        Some(id) => {
            params["sessionId"] = json!(id);
            agent.request("session/load", params).await
        }
    }
}

/// The status Zed's thread shows at the end for tool call `id`, after `messages` (what the
/// agent sent, in order), when the user answered its permission request with the option
/// `answer` and the prompt ended with `stop` (its `stopReason`). Zed's rules
/// (`crates/acp_thread/src/acp_thread.rs`):
/// - a permission request puts the card in `WaitingForConfirmation`; `authorize_tool_call`
///   then makes it "`RejectOnce | RejectAlways => ToolCallStatus::Rejected`", an allow
///   `InProgress`;
/// - any later `status` replaces it (`update_fields`: "`if let Some(status) = status {
///   self.status = status.into(); }`"), an update without one leaves it;
/// - a `cancelled` stop reason runs `mark_pending_tools_as_canceled`, which turns
///   `Pending | WaitingForConfirmation | InProgress` into `Canceled`.
pub fn card_status(messages: &[Value], id: &str, answer: Option<&str>, stop: &str) -> String {
    let mut status = "None".to_string();
    let named = |value: &Value| value["toolCallId"] == id;
    for message in messages {
        match message["method"].as_str() {
            Some("session/request_permission") if named(&message["params"]["toolCall"]) => {
                status = match answer {
                    Some(option) if option.starts_with("reject") => "Rejected",
                    Some(_) => "InProgress",
                    None => "WaitingForConfirmation",
                }
                .to_string();
            }
            Some("session/update") if named(&message["params"]["update"]) => {
                status = match message["params"]["update"]["status"].as_str() {
                    Some("pending") => "Pending",
                    Some("in_progress") => "InProgress",
                    Some("completed") => "Completed",
                    Some("failed") => "Failed",
                    _ => continue,
                }
                .to_string();
            }
            _ => {}
        }
    }
    let unfinished = ["Pending", "WaitingForConfirmation", "InProgress"];
    if stop == "cancelled" && unfinished.contains(&status.as_str()) {
        status = "Canceled".to_string();
    }
    status
}

/// `session/load` as Zed sends it (it prefers load over resume): the thread's folders as for
/// `session/new`, and the user's context servers. Returns the answer and the updates that
/// came with it, up to the `available_commands_update` after the answer.
pub async fn load_session(
    agent: &mut Agent,
    session: &str,
    folders: &[PathBuf],
    mcp_servers: Value,
) -> (Value, Vec<Value>) {
    let mut params =
        json!({"sessionId": session, "cwd": path_str(&folders[0]), "mcpServers": mcp_servers});
    if folders.len() > 1 {
        params["additionalDirectories"] = folders[1..].iter().map(|f| json!(path_str(f))).collect();
    }
    agent.open_stored_with("session/load", params).await
}

/// What Zed's thread shows for each user message among `messages`: consecutive
/// `user_message_chunk`s make one message, whose content Zed builds with
/// `ContentBlock::append` (`crates/acp_thread/src/acp_thread.rs`): a message that starts with
/// a `resource_link` or an image is that block alone until more comes; otherwise "Markdown
/// { markdown } => markdown.append(&new_content)" with `block_string_contents`: a text block's
/// text, and for a `resource_link` or a text `resource` `resource_link_md(uri)`, the mention
/// as "[@{name}]({uri})" (`MentionLink` in `mention.rs`), which Zed draws as a chip; an image
/// is "`Image`". The chip's name is the URI's last path segment here (Zed's
/// `MentionUri::name` adds a selection's lines).
pub fn user_messages(messages: &[Value]) -> Vec<String> {
    let mut shown = Vec::new();
    let mut current: Option<String> = None;
    for message in messages {
        let update = &message["params"]["update"];
        if message["method"] != "session/update" {
            continue;
        }
        if update["sessionUpdate"] != "user_message_chunk" {
            shown.extend(current.take());
            continue;
        }
        let block = &update["content"];
        let text = block_markdown(block);
        current = Some(match current {
            None => text,
            // A message that is one chip or one image so far gets a line break after it.
            Some(so_far) if so_far.ends_with(')') && so_far.starts_with("[@") => {
                format!("{so_far}\n{text}")
            }
            Some(so_far) if so_far == "`Image`" => format!("{so_far}\n{text}"),
            Some(so_far) => so_far + &text,
        });
    }
    shown.extend(current);
    shown
}

/// What Zed shows of one prompt block inside a user message (`block_string_contents`).
pub fn block_markdown(block: &Value) -> String {
    let mention = |uri: &str| {
        let name = uri
            .split(['#', '?'])
            .next()
            .unwrap_or(uri)
            .trim_end_matches('/')
            .rsplit('/')
            .next()
            .unwrap_or(uri);
        format!("[@{name}]({uri})")
    };
    match block["type"].as_str() {
        Some("text") => block["text"].as_str().unwrap_or_default().to_string(),
        Some("resource_link") => mention(block["uri"].as_str().unwrap_or_default()),
        Some("resource") if block["resource"].get("text").is_some() => {
            mention(block["resource"]["uri"].as_str().unwrap_or_default())
        }
        Some("image") => "`Image`".to_string(),
        _ => String::new(),
    }
}
