//! `_tandem/*` extension methods (DESIGN.md §3): `_tandem/status`, `_tandem/usage`,
//! `_tandem/session/export`, `_tandem/session/fork`, `_tandem/actions/list` and
//! `_tandem/actions/run` (answered in methods.rs), `_tandem/session/rewind` and
//! `_tandem/session/steer` (turns.rs), plus the `outputSchema` a prompt may carry
//! in `_meta.tandem` (structured.rs). Request and response types derive `JsonSchema`;
//! `protocol/extensions/*.json` are generated from them (a test fails when the checked-in
//! files are stale), and `protocol/README.md` documents each method with an example exchange.

mod export;
mod methods;
mod structured;
mod turns;

use agent_client_protocol::{JsonRpcRequest, JsonRpcResponse};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

pub(crate) use export::render;
pub(crate) use methods::methods;
pub(crate) use structured::{output_schema, structured_meta};
pub(crate) use turns::SteerRequest;

use super::session_models::{SessionModelState, SetModelRequest, SetModelResponse};

/// The methods tandem answers, as advertised under `agentCapabilities._meta.tandem`.
pub(crate) const METHODS: [&str; 8] = [
    "_tandem/status",
    "_tandem/usage",
    "_tandem/session/export",
    "_tandem/session/fork",
    "_tandem/session/rewind",
    "_tandem/session/steer",
    "_tandem/actions/list",
    "_tandem/actions/run",
];

/// `_tandem/status`: no parameters.
#[derive(Debug, Clone, Default, Serialize, JsonSchema, JsonRpcRequest)]
#[request(method = "_tandem/status", response = StatusResponse)]
#[serde(rename_all = "camelCase")]
pub(crate) struct StatusRequest {}

/// JSON-RPC lets a request without parameters leave `params` out (it then arrives as
/// `null`); `{}` and any object are accepted too.
impl<'de> Deserialize<'de> for StatusRequest {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Option::<serde_json::Map<String, Value>>::deserialize(deserializer)?;
        Ok(StatusRequest {})
    }
}

/// What tandem is running with.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, JsonRpcResponse)]
#[serde(rename_all = "camelCase")]
pub(crate) struct StatusResponse {
    /// tandem's version.
    pub(crate) version: String,
    /// The provider preset, or `custom`.
    pub(crate) provider: String,
    /// The model server's base URL.
    pub(crate) base_url: String,
    /// The model new sessions start with.
    pub(crate) default_model: String,
    /// Every configured model id.
    pub(crate) models: Vec<String>,
    /// The data directory (`TANDEM_HOME`).
    pub(crate) data_dir: String,
    /// The sessions open in this process.
    pub(crate) sessions: Vec<SessionStatus>,
}

/// One open session.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SessionStatus {
    /// Session id.
    pub(crate) session_id: String,
    /// Working directory.
    pub(crate) cwd: String,
    /// Current model.
    pub(crate) model: String,
    /// Current mode.
    pub(crate) mode: String,
    /// Its MCP servers.
    pub(crate) mcp_servers: Vec<McpServerStatus>,
    /// Its permission rules and remembered answers.
    pub(crate) permissions: PermissionsStatus,
    /// What tandem knows of its current model, as its turns read it.
    pub(crate) profile: ModelProfile,
    /// What the user answered about the programs its project declares (its
    /// `.tandem/config.toml`'s MCP servers), remembered across sessions.
    pub(crate) project_trust: Vec<TrustStatus>,
    /// Present while the disk refuses its transcript's records (a full disk): they wait in
    /// memory and are written once it takes them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) unsaved: Option<UnsavedStatus>,
    /// Its background commands (`run_command` with `background`), oldest first.
    #[serde(default)]
    pub(crate) background_commands: Vec<BackgroundStatus>,
}

/// One background command (`_tandem/status`).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct BackgroundStatus {
    /// Its id (`bg-1`).
    pub(crate) id: String,
    /// The command line.
    pub(crate) command: String,
    /// Whether it still runs.
    pub(crate) running: bool,
    /// Its exit code, once it ended with one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) exit_code: Option<u32>,
}

/// Records of a session's transcript the disk has not taken yet (`_tandem/status`).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct UnsavedStatus {
    /// How many records wait in memory.
    pub(crate) records: usize,
    /// Why the last write failed.
    pub(crate) error: String,
}

/// A model's profile (`_tandem/status`).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ModelProfile {
    /// The wire API: `chat-completions`, `responses` or `anthropic-messages`.
    pub(crate) api: String,
    /// The provider serving it: the preset, `custom`, or a `[[providers]]` name.
    pub(crate) provider: String,
    /// Its server's base URL.
    pub(crate) base_url: String,
    /// Its context window in tokens (the config's, else the server's, else the table's).
    pub(crate) context_window: u64,
    /// Most tokens one answer may take, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) max_output_tokens: Option<u32>,
    /// Whether it takes a reasoning effort.
    pub(crate) reasoning_effort: bool,
    /// Whether it takes images.
    pub(crate) images: bool,
    /// How it edits files: `edit_file` or `apply_patch`.
    pub(crate) edit_tool: String,
    /// What goes back to its server between tool calls.
    pub(crate) state_kept: String,
    /// What its tokens cost, US dollars per million, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) price: Option<PriceView>,
}

/// Prices in US dollars per million tokens.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct PriceView {
    /// A prompt token.
    pub(crate) input: f64,
    /// A prompt token read from the cache.
    pub(crate) cached_input: f64,
    /// A generated token.
    pub(crate) output: f64,
    /// Where it comes from: `config`, `server`, or `built-in (vendor prices as of …)`.
    pub(crate) source: String,
}

/// A remembered answer about one program a project declares.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct TrustStatus {
    /// What it is: `mcp_server`.
    pub(crate) kind: String,
    /// Its name in the project's file.
    pub(crate) name: String,
    /// What it runs (the names of the variables it sets, never their values), or the URL it
    /// connects to.
    pub(crate) command: String,
    /// `trusted` (starts without asking) or `refused` (never starts, never asked again).
    pub(crate) verdict: String,
    /// `sha256:<hex>` of the definition; a changed definition is asked about again.
    pub(crate) fingerprint: String,
    /// When the answer was given (RFC 3339, UTC).
    pub(crate) decided_at: String,
}

/// A session's permissions, as `/permissions` shows them.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct PermissionsStatus {
    /// The rules in force (the user's config file, then the project's), deny first.
    pub(crate) rules: Vec<RuleStatus>,
    /// The answers remembered in this session ("Always allow" / "Always reject").
    pub(crate) grants: Vec<GrantStatus>,
    /// Why the session's folder does not count as a project (every read and edit there
    /// asks); absent when it does.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) no_project: Option<String>,
    /// Whether and how commands run in the operating system's sandbox.
    pub(crate) sandbox: SandboxStatus,
}

/// The command sandbox of a session.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SandboxStatus {
    /// `on` (commands run confined), `off` (`[sandbox] mode = "off"`, or the session is in
    /// `full-access` mode), `unavailable` (this system cannot; commands are judged and asked
    /// about as without it) or `unchecked` (not known yet).
    pub(crate) state: String,
    /// What enforces it, when on: "Linux namespaces and Landlock", "macOS Seatbelt
    /// (sandbox-exec)".
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) backend: Option<String>,
    /// One line for the user: what commands may write and reach, or why there is no sandbox.
    pub(crate) summary: String,
    /// Whether commands may use the network.
    pub(crate) network: bool,
    /// The folders commands may write, besides a private temp folder.
    pub(crate) writable: Vec<String>,
}

/// One permission rule.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct RuleStatus {
    /// `allow`, `ask` or `deny`.
    pub(crate) effect: String,
    /// The rule as written, e.g. `run_command(git push:*)`.
    pub(crate) rule: String,
    /// The config file it came from.
    pub(crate) source: String,
}

/// One remembered answer.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct GrantStatus {
    /// `allow` or `reject`.
    pub(crate) answer: String,
    /// The tool it is about: `run_command`, `read_file` (reads), `edit_file` (edits) or an
    /// MCP tool's name.
    pub(crate) tool: String,
    /// What it covers, as the permission option named it, e.g. `"cargo test …"`.
    pub(crate) scope: String,
}

/// One MCP server of a session.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct McpServerStatus {
    /// Server name.
    pub(crate) name: String,
    /// `connecting`, `ready`, `failed`, `reconnecting` (it went away and is being brought
    /// back), `held` (the project declares it and the session's next prompt asks the user
    /// before it starts) or `not_started` (the project declares it and it was not trusted).
    pub(crate) state: String,
    /// Why it failed, went away, or did not start.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) error: Option<String>,
}

/// `_tandem/usage`: one session's token counts.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, JsonRpcRequest)]
#[request(method = "_tandem/usage", response = UsageResponse)]
#[serde(rename_all = "camelCase")]
pub(crate) struct UsageRequest {
    /// An open session.
    pub(crate) session_id: String,
}

/// Token totals as the model server reported them, and the context in use.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, JsonRpcResponse)]
#[serde(rename_all = "camelCase")]
pub(crate) struct UsageResponse {
    /// Session id.
    pub(crate) session_id: String,
    /// Model requests that reported usage.
    pub(crate) requests: u64,
    /// Prompt tokens, summed over requests.
    pub(crate) input_tokens: u64,
    /// Of those, tokens served from the server's cache.
    pub(crate) cached_tokens: u64,
    /// Completion tokens, summed over requests.
    pub(crate) output_tokens: u64,
    /// Of those, reasoning tokens.
    pub(crate) reasoning_tokens: u64,
    /// Tokens in the context after the last response (absent before any report).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) context_used: Option<u64>,
    /// The current model's context window.
    pub(crate) context_window: u64,
    /// Tool-call batches not run because the model repeated them (loop detection).
    pub(crate) repeats_blocked: u64,
    /// Prompts whose tools were withdrawn because the model kept repeating itself.
    pub(crate) tools_withdrawn: u64,
    /// Tool calls refused because their tool's budget for the prompt was spent.
    pub(crate) budget_refusals: u64,
    /// What the session has cost in US dollars: each request's cost as the server reported
    /// it (OpenRouter), else its tokens at its model's price; absent while no request's cost
    /// is known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) cost_usd: Option<f64>,
    /// Requests whose cost is not known (no price for their model, no figure from the
    /// server): `costUsd` leaves them out.
    pub(crate) unpriced_requests: u64,
}

/// Export formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum ExportFormat {
    /// A readable conversation.
    Markdown,
    /// The transcript's records as a JSON array.
    Json,
}

/// `_tandem/session/export`: a stored session as Markdown or JSON.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, JsonRpcRequest)]
#[request(method = "_tandem/session/export", response = ExportResponse)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ExportRequest {
    /// A stored session.
    pub(crate) session_id: String,
    /// `markdown` (default) or `json`.
    #[serde(default = "markdown")]
    pub(crate) format: ExportFormat,
}

fn markdown() -> ExportFormat {
    ExportFormat::Markdown
}

/// The exported session.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, JsonRpcResponse)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ExportResponse {
    /// The format of `content`.
    pub(crate) format: ExportFormat,
    /// The session, as Markdown text or JSON text.
    pub(crate) content: String,
}

/// `_tandem/session/fork`: a new session holding a copy of a session's history so far.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, JsonRpcRequest)]
#[request(method = "_tandem/session/fork", response = ForkResponse)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ForkRequest {
    /// A stored session (open or not).
    pub(crate) session_id: String,
    /// Where the new session works (absolute); the source session's directory if absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) cwd: Option<std::path::PathBuf>,
    /// Copy the conversation only up to before this turn (1-based, as `/rewind` numbers
    /// them): the new session holds what `/rewind` to that turn would leave. No file is
    /// touched. The whole conversation when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub(crate) turn: Option<usize>,
}

/// The new session, open and ready for prompts; its mode, options and commands follow as
/// `session/update` notifications.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, JsonRpcResponse)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ForkResponse {
    /// The new session's id.
    pub(crate) session_id: String,
}

/// `_tandem/actions/list`: the custom actions of a session (the user's and its project's).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, JsonRpcRequest)]
#[request(method = "_tandem/actions/list", response = ActionsListResponse)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ActionsListRequest {
    /// An open session.
    pub(crate) session_id: String,
}

/// The actions.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, JsonRpcResponse)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ActionsListResponse {
    /// Every custom action, in the order they are offered as slash commands.
    pub(crate) actions: Vec<ActionInfo>,
}

/// One custom action.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ActionInfo {
    /// Its name (and slash command).
    pub(crate) name: String,
    /// One line about it.
    pub(crate) description: String,
    /// `prompt` (runs as a turn) or `command` (runs a shell command under the permission rules).
    pub(crate) kind: String,
    /// Whether it takes arguments (`$ARGUMENTS` in its prompt).
    pub(crate) takes_arguments: bool,
}

/// `_tandem/actions/run`: runs a custom action in a session.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, JsonRpcRequest)]
#[request(method = "_tandem/actions/run", response = ActionsRunResponse)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ActionsRunRequest {
    /// An open session.
    pub(crate) session_id: String,
    /// The action's name.
    pub(crate) name: String,
    /// Text for `$ARGUMENTS`.
    #[serde(default)]
    pub(crate) arguments: String,
}

/// How the action ended.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, JsonRpcResponse)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ActionsRunResponse {
    /// The stop reason, as for `session/prompt`.
    pub(crate) stop_reason: String,
    /// A command action's output (exit status and bounded output); absent for prompts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) output: Option<String>,
}

/// What tandem advertises under `agentCapabilities._meta.tandem`.
pub(crate) fn advertised() -> Value {
    json!({"version": env!("CARGO_PKG_VERSION"), "methods": METHODS})
}

/// The checked-in schema files: (file name, content), one per method.
pub fn schema_files() -> Vec<(&'static str, Value)> {
    fn of<T: JsonSchema>() -> Value {
        serde_json::to_value(schemars::schema_for!(T)).unwrap_or(Value::Null)
    }
    vec![
        (
            "status.json",
            json!({"method": "_tandem/status", "request": of::<StatusRequest>(), "response": of::<StatusResponse>()}),
        ),
        (
            "usage.json",
            json!({"method": "_tandem/usage", "request": of::<UsageRequest>(), "response": of::<UsageResponse>()}),
        ),
        (
            "session-export.json",
            json!({"method": "_tandem/session/export", "request": of::<ExportRequest>(), "response": of::<ExportResponse>()}),
        ),
        (
            "session-fork.json",
            json!({"method": "_tandem/session/fork", "request": of::<ForkRequest>(), "response": of::<ForkResponse>()}),
        ),
        (
            "session-rewind.json",
            json!({"method": "_tandem/session/rewind", "request": of::<turns::RewindRequest>(), "response": of::<turns::RewindResponse>()}),
        ),
        (
            "session-steer.json",
            json!({"method": "_tandem/session/steer", "request": of::<turns::SteerRequest>(), "response": of::<turns::SteerResponse>()}),
        ),
        (
            "actions-list.json",
            json!({"method": "_tandem/actions/list", "request": of::<ActionsListRequest>(), "response": of::<ActionsListResponse>()}),
        ),
        (
            "actions-run.json",
            json!({"method": "_tandem/actions/run", "request": of::<ActionsRunRequest>(), "response": of::<ActionsRunResponse>()}),
        ),
        // Not an extension: ACP's older session-models API, whose shapes ACP's schema no
        // longer has (see `crate::acp::session_models`).
        (
            "session-models.json",
            json!({"method": "session/set_model", "request": of::<SetModelRequest>(), "response": of::<SetModelResponse>(), "models": of::<SessionModelState>()}),
        ),
    ]
}
