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
//! - [`cards`]: what each tool call's card shows at the end (its title, its content, the
//!   label of a terminal in it), built as Zed's thread builds it from the updates;
//! - [`error_text`]: what Zed shows for a JSON-RPC error (`-32603`'s `data` unwrapped only when
//!   it is exactly `{"details": …}`, `-32000` as "authentication required");
//! - [`login_command`], [`run_login`], [`reconnect`]: Zed's login button (the command it runs
//!   in its terminal: for a `terminal` method the agent's configured command line with the
//!   method's arguments after it, [`AgentServer`]; or none and then `authenticate`), and
//!   what it does after a login.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::Arc;

use serde_json::{Value, json};

use super::editor::FakeEditor;
use super::{Agent, path_str};

/// Zed's `clientCapabilities`, `_meta` included (`ClientCapabilities` built in
/// `crates/agent_servers/src/acp/mod.rs`): "fs: read_text_file: true, write_text_file: true",
/// "terminal: true", "auth: terminal: true", and the meta keys "terminal_output" and
/// "terminal-auth".
pub(crate) fn capabilities() -> Value {
    json!({
        "fs": {"readTextFile": true, "writeTextFile": true},
        "terminal": true,
        "auth": {"terminal": true},
        "_meta": {"terminal_output": true, "terminal-auth": true}
    })
}

/// `initialize` exactly as Zed sends it; returns the agent's answer.
pub(crate) async fn initialize(agent: &mut Agent) -> Value {
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
pub(crate) fn editor(worktrees: &[PathBuf]) -> Arc<FakeEditor> {
    let editor = FakeEditor::new();
    *editor.worktrees.lock().unwrap() = Some(worktrees.to_vec());
    editor
}

/// `session/new` as Zed sends it: `cwd` the first folder, the others as
/// `additionalDirectories` (Zed sends them only when the agent advertises
/// `sessionCapabilities.additionalDirectories`), and the user's context servers.
pub(crate) async fn new_session(
    agent: &mut Agent,
    folders: &[PathBuf],
    mcp_servers: Value,
) -> Value {
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
pub(crate) fn error_text(error: &Value) -> String {
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
pub(crate) fn thread_problems(messages: &[Value]) -> Vec<String> {
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
pub(crate) struct LoginCommand {
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
pub(crate) struct AgentServer {
    /// The program Zed starts.
    pub command: String,
    /// The arguments it is configured with.
    pub args: Vec<String>,
    /// The variables it is configured with.
    pub env: Vec<(String, String)>,
}

impl AgentServer {
    /// tandem's binary under test, started with `args` and `env`.
    pub(crate) fn tandem(args: &[String], env: &[(String, String)]) -> Self {
        Self {
            command: super::tandem_bin(),
            args: args.to_vec(),
            env: env.to_vec(),
        }
    }

    /// The `args` and `env` of one `agent_servers` entry of Zed's settings, for an entry
    /// that starts tandem (`command: "tandem"`).
    pub(crate) fn from_settings(entry: &Value) -> Self {
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
pub(crate) fn login_command(method: &Value, agent: &AgentServer) -> Option<LoginCommand> {
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
pub(crate) async fn run_login(
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
pub(crate) async fn reconnect(
    agent: &mut Agent,
    folders: &[PathBuf],
    thread: Option<&str>,
) -> Value {
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
pub(crate) fn card_status(
    messages: &[Value],
    id: &str,
    answer: Option<&str>,
    stop: &str,
) -> String {
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
pub(crate) async fn load_session(
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
pub(crate) fn user_messages(messages: &[Value]) -> Vec<String> {
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
pub(crate) fn block_markdown(block: &Value) -> String {
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

/// A tool call's card as Zed's thread shows it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Card {
    /// The call's id.
    pub id: String,
    /// Its title (the card's label).
    pub title: String,
    /// Its kind, as the agent last sent it.
    pub kind: String,
    /// Its status, as [`card_status`] names them; a permission request is taken as allowed.
    pub status: String,
    /// What it shows, in order.
    pub content: Vec<Shown>,
}

/// One item a card shows.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Shown {
    /// A text (or image) block, as the Markdown Zed renders.
    Text(String),
    /// A file's diff.
    Diff(String),
    /// A terminal: its id and the command its header shows.
    Terminal {
        /// The editor's terminal id.
        id: String,
        /// The command label in the terminal's header.
        label: String,
    },
}

impl Card {
    /// Every text the card shows, joined by blank lines.
    pub(crate) fn text(&self) -> String {
        let texts: Vec<&str> = self
            .content
            .iter()
            .filter_map(|c| match c {
                Shown::Text(t) => Some(t.as_str()),
                _ => None,
            })
            .collect();
        texts.join("\n\n")
    }

    /// The terminals the card shows: (id, label).
    pub(crate) fn terminals(&self) -> Vec<(String, String)> {
        self.content
            .iter()
            .filter_map(|c| match c {
                Shown::Terminal { id, label } => Some((id.clone(), label.clone())),
                _ => None,
            })
            .collect()
    }
}

/// A card as the thread holds it: its terminals by id, labelled by the thread's terminals.
struct Held {
    card: Card,
    content: Vec<Item>,
}

/// One item of a held card: a terminal is the thread's terminal entity, whose label may change
/// after it was put in the card.
#[derive(Clone)]
enum Item {
    Shown(Shown),
    Terminal(String),
}

/// The cards of Zed's thread after `messages` (what the agent sent, in order, as
/// [`Agent::drain`] returns them; the fake editor names terminals `term-1`, `term-2`, … in
/// the order they were created), in the order they were made. Zed's rules
/// (`crates/acp_thread/src/acp_thread.rs` and `crates/agent_servers/src/acp.rs`):
/// - `terminal/create` registers a terminal labelled
///   "`format!(\"{} {}\", args.command, args.args.join(\" \"))`"; `terminal/release` removes
///   it from the thread's map, though a card that shows it keeps it;
/// - a `tool_call` is an upsert ("Updates a tool call if id matches an existing entry,
///   otherwise inserts a new one"), and so is a permission request's `toolCall`
///   (`request_tool_call_authorization` calls `upsert_tool_call_inner`);
/// - `update_fields` takes the title first: "`if self.kind == acp::ToolKind::Execute { for
///   terminal in self.terminals() { terminal.update(cx, |terminal, cx| {
///   terminal.update_command_label(&title, cx); }); } }`" and then `label.replace(title, cx)`,
///   so only a terminal the card already shows is relabelled;
/// - then the content, which replaces the card's content item by item and is truncated to
///   the new length ("`self.content.truncate(new_content_len)`"): an update that carries
///   `content` replaces it wholesale, and an empty list empties the card. A terminal the map
///   does not hold fails the rest of the update ("Terminal with id `{}` not found").
pub(crate) fn cards(messages: &[Value]) -> Vec<Card> {
    let mut labels: HashMap<String, String> = HashMap::new();
    let mut live: HashSet<String> = HashSet::new();
    let mut held: Vec<Held> = Vec::new();
    let mut created = 0;
    for message in messages {
        let (fields, status) = match message["method"].as_str() {
            Some("terminal/create") => {
                created += 1;
                let id = format!("term-{created}");
                let params = &message["params"];
                let args: Vec<&str> = params["args"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str)
                    .collect();
                let label = format!(
                    "{} {}",
                    params["command"].as_str().unwrap_or_default(),
                    args.join(" ")
                );
                labels.insert(id.clone(), label);
                live.insert(id);
                continue;
            }
            Some("terminal/release") => {
                live.remove(message["params"]["terminalId"].as_str().unwrap_or_default());
                continue;
            }
            Some("session/request_permission") => {
                (&message["params"]["toolCall"], Some("InProgress"))
            }
            Some("session/update") => {
                let update = &message["params"]["update"];
                match update["sessionUpdate"].as_str() {
                    Some("tool_call" | "tool_call_update") => (update, None),
                    _ => continue,
                }
            }
            _ => continue,
        };
        let id = fields["toolCallId"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let index = match held.iter().position(|h| h.card.id == id) {
            Some(index) => index,
            // An update for an unknown id makes a "Tool call not found" entry of its own
            // (see [`thread_problems`]); a `tool_call` or a permission request makes the card.
            None if fields
                .get("sessionUpdate")
                .is_some_and(|u| u == "tool_call_update") =>
            {
                continue;
            }
            None => {
                held.push(Held {
                    card: Card {
                        id: id.clone(),
                        title: String::new(),
                        kind: String::new(),
                        status: "Pending".into(),
                        content: Vec::new(),
                    },
                    content: Vec::new(),
                });
                held.len() - 1
            }
        };
        let card = &mut held[index];
        // A `tool_call` is every field at once (`From<acp::ToolCall> for ToolCallUpdate`):
        // what it leaves out is its default (no content, `other`, `pending`).
        let mut fields = fields.clone();
        if fields["sessionUpdate"] == "tool_call" {
            let defaults = [
                ("kind", json!("other")),
                ("status", json!("pending")),
                ("content", json!([])),
            ];
            for (field, default) in defaults {
                if fields.get(field).is_none() {
                    fields[field] = default;
                }
            }
        }
        if let Some(kind) = fields["kind"].as_str() {
            card.card.kind = kind.to_string();
        }
        if let Some(status) = fields["status"].as_str() {
            card.card.status = match status {
                "pending" => "Pending",
                "in_progress" => "InProgress",
                "completed" => "Completed",
                "failed" => "Failed",
                other => other,
            }
            .to_string();
        }
        if let Some(status) = status {
            card.card.status = status.to_string();
        }
        if let Some(title) = fields["title"].as_str() {
            if card.card.kind == "execute" {
                for item in &card.content {
                    if let Item::Terminal(terminal) = item {
                        labels.insert(terminal.clone(), title.to_string());
                    }
                }
            }
            card.card.title = title.to_string();
        }
        if let Some(content) = fields["content"].as_array() {
            let mut new = Vec::with_capacity(content.len());
            let mut failed = false;
            for block in content {
                let item = match block["type"].as_str() {
                    Some("terminal") => {
                        let terminal = block["terminalId"].as_str().unwrap_or_default();
                        if !live.contains(terminal) {
                            failed = true;
                            break;
                        }
                        Item::Terminal(terminal.to_string())
                    }
                    Some("diff") => Item::Shown(Shown::Diff(
                        block["path"].as_str().unwrap_or_default().to_string(),
                    )),
                    _ => Item::Shown(Shown::Text(block_markdown(&block["content"]))),
                };
                new.push(item);
            }
            if failed {
                // The items before the unknown terminal were already replaced; the rest stay.
                let kept = card.content.len().saturating_sub(new.len());
                let rest: Vec<Item> = card
                    .content
                    .iter()
                    .skip(new.len())
                    .take(kept)
                    .cloned()
                    .collect();
                new.extend(rest);
            }
            card.content = new;
        }
    }
    held.into_iter()
        .map(|h| {
            let mut card = h.card;
            card.content = h
                .content
                .into_iter()
                .map(|item| match item {
                    Item::Shown(shown) => shown,
                    Item::Terminal(id) => Shown::Terminal {
                        label: labels.get(&id).cloned().unwrap_or_default(),
                        id,
                    },
                })
                .collect();
            card
        })
        .collect()
}

/// The card of tool call `id` among `cards`.
pub(crate) fn card(cards: &[Card], id: &str) -> Card {
    cards
        .iter()
        .find(|c| c.id == id)
        .cloned()
        .unwrap_or_else(|| panic!("no card for {id} among {cards:?}"))
}
