//! What tandem tells the editor at `initialize`: the protocol version, what it can do, how
//! to authenticate, and who it is.

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{
    AgentAuthCapabilities, AgentCapabilities, AuthMethod, AuthMethodAgent, AuthMethodTerminal,
    Implementation, InitializeResponse, LogoutCapabilities, McpCapabilities, PromptCapabilities,
    SessionAdditionalDirectoriesCapabilities, SessionCapabilities, SessionCloseCapabilities,
    SessionDeleteCapabilities, SessionListCapabilities, SessionResumeCapabilities,
    SessionSystemPromptCapabilities,
};

use super::ext;
use crate::config::Config;

/// The id of the one authentication method tandem offers.
pub(crate) const AUTH_METHOD_ID: &str = "api-key";

/// What the editor said at `initialize` about the login methods it can run.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct AuthCaps {
    /// `clientCapabilities.auth.terminal`: it can run a `terminal` method's command.
    pub(crate) terminal: bool,
    /// `clientCapabilities._meta["terminal-auth"]`: the convention that came before, where
    /// an `agent` method's `_meta["terminal-auth"]` names the command to run.
    pub(crate) terminal_meta: bool,
}

impl AuthCaps {
    /// From the client's capabilities.
    pub(crate) fn of(caps: &agent_client_protocol::v1::schema::ClientCapabilities) -> Self {
        Self {
            terminal: caps.auth.terminal,
            terminal_meta: caps
                .meta
                .as_ref()
                .and_then(|m| m.get("terminal-auth"))
                .is_some_and(|v| v.as_bool() == Some(true)),
        }
    }
}

/// How the editor can get tandem a key: `tandem login` run in a terminal where the editor can
/// do that, otherwise an `agent` method whose `authenticate` looks for a key again. None
/// when no login can help (a keyless server), or answers come from a replay fixture. While
/// the keys `tandem login` stored are still being looked up (`looking_up`, at start-up), a
/// server of the user's own may have one, which a login would replace: the method is offered
/// then too, as an editor reads the methods once, from the answer to `initialize`.
///
/// A client runs a `terminal` method as the command it starts tandem with, its configured
/// arguments, then the method's `args`: Zed does (`terminal_auth_task` in its
/// `crates/agent_servers/src/acp.rs`, `get_command(terminal.args, …)`), so the login runs as
/// `tandem --mode ask login` for an agent configured with `--mode ask`, and every flag of the
/// agent's is taken before `login` (cli.rs). An editor that announced
/// `_meta["terminal-auth"]` also gets the whole command line under the method's
/// `_meta["terminal-auth"]`, whichever its type: the convention from before the `terminal`
/// type, which Zed reads only for methods of another type (failing both, it sends
/// `authenticate`).
pub(crate) fn auth_methods(config: &Config, caps: AuthCaps, looking_up: bool) -> Vec<AuthMethod> {
    let endpoint = &config.endpoint;
    let own_server = crate::config::presets::preset(&endpoint.provider).is_none();
    let may_have_a_stored_key = looking_up && own_server && endpoint.api_key.is_none();
    if config.replay.is_some() || !(endpoint.offers_login() || may_have_a_stored_key) {
        return Vec::new();
    }
    let name = "Log in with an API key";
    let description = format!(
        "Choose a model server, enter its API key (kept in {}) and pick a model, in a terminal: `{} login`. Or set {} in the environment the editor starts tandem with.",
        config.credentials().map_or_else(
            |_| crate::credentials::system_store_name().to_string(),
            |store| store.where_kept()
        ),
        crate::config::invocation::command(),
        config.endpoint.api_key_env
    );
    let meta = if caps.terminal_meta {
        terminal_auth_meta()
    } else {
        None
    };
    if caps.terminal {
        return vec![AuthMethod::Terminal(
            AuthMethodTerminal::new(AUTH_METHOD_ID, name)
                .description(description)
                .args(vec!["login".to_string()])
                .meta(meta),
        )];
    }
    vec![AuthMethod::Agent(
        AuthMethodAgent::new(AUTH_METHOD_ID, name)
            .description(description)
            .meta(meta),
    )]
}

/// `{"terminal-auth": {label, command, args, env}}`: the login as a whole command line, this
/// very binary's path with `login`; none when the path cannot be known.
fn terminal_auth_meta() -> Option<serde_json::Map<String, serde_json::Value>> {
    let exe = std::env::current_exe().ok()?;
    serde_json::json!({"terminal-auth": {
        "label": format!("{} login", crate::config::invocation::command()),
        "command": exe.to_string_lossy(),
        "args": ["login"],
        "env": {},
    }})
    .as_object()
    .cloned()
}

/// tandem's answer to `initialize`: protocol v1 whatever the client asked (the SDK has
/// already settled the version), honest capabilities, and who we are.
pub(super) fn initialize_response(
    config: &Config,
    auth: AuthCaps,
    looking_up: bool,
) -> InitializeResponse {
    let auth_methods = auth_methods(config, auth, looking_up);
    InitializeResponse::new(ProtocolVersion::V1)
        .agent_capabilities(agent_capabilities(config))
        .auth_methods(auth_methods)
        .agent_info(Implementation::new("tandem", env!("CARGO_PKG_VERSION")).title("tandem"))
}

/// What tandem can do (`providers/*` only when built with the `acp-providers` feature).
fn agent_capabilities(config: &Config) -> AgentCapabilities {
    let caps = AgentCapabilities::new()
        .load_session(true)
        // Images only when a model tandem offers takes them (the server's own list
        // is not known yet); one sent anyway is left out, and the user is told.
        .prompt_capabilities(
            PromptCapabilities::new()
                .image(config.models.iter().any(|m| m.images))
                .embedded_context(true),
        )
        // Streamable HTTP, and the old HTTP+SSE transport (mcp/sse.rs).
        .mcp_capabilities(McpCapabilities::new().http(true).sse(true))
        // tandem's extension methods.
        .meta(
            serde_json::json!({"tandem": ext::advertised()})
                .as_object()
                .cloned(),
        )
        .session_capabilities(session_capabilities())
        // `logout` takes away the key `tandem login` stored.
        .auth(AgentAuthCapabilities::new().logout(LogoutCapabilities::new()));
    #[cfg(feature = "acp-providers")]
    let caps = caps.providers(agent_client_protocol::v1::schema::ProvidersCapabilities::new());
    caps
}

/// The session methods tandem serves beyond the baseline (`session/fork` only when built with
/// the `acp-session-fork` feature).
fn session_capabilities() -> SessionCapabilities {
    let caps = SessionCapabilities::new()
        .list(SessionListCapabilities::new())
        .resume(SessionResumeCapabilities::new())
        .close(SessionCloseCapabilities::new())
        .delete(SessionDeleteCapabilities::new())
        // Multi-root workspaces: the other folders are inside the workspace.
        .additional_directories(SessionAdditionalDirectoriesCapabilities::new())
        // An editor's own instructions, added after tandem's (`append` only).
        .system_prompt(SessionSystemPromptCapabilities::new());
    #[cfg(feature = "acp-session-fork")]
    let caps = caps.fork(agent_client_protocol::v1::schema::SessionForkCapabilities::new());
    caps
}
