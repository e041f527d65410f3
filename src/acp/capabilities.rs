//! What tandem tells the editor at `initialize`: the protocol version, what it can do, how
//! to authenticate, and who it is.

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{
    AgentCapabilities, AuthMethod, AuthMethodAgent, Implementation, InitializeResponse,
    McpCapabilities, PromptCapabilities, SessionAdditionalDirectoriesCapabilities,
    SessionCapabilities, SessionCloseCapabilities, SessionDeleteCapabilities,
    SessionListCapabilities, SessionResumeCapabilities,
};

use super::ext;
use crate::config::Config;

/// The id of the one authentication method tandem offers.
pub const AUTH_METHOD_ID: &str = "api-key";

/// tandem's answer to `initialize`: protocol v1 whatever the client asked (the SDK has
/// already settled the version), honest capabilities, and who we are.
pub(super) fn initialize_response(config: &Config) -> InitializeResponse {
    let auth_methods = if config.replay.is_none() && config.endpoint.requires_key {
        vec![AuthMethod::Agent(
            AuthMethodAgent::new(AUTH_METHOD_ID, "API key from the environment").description(
                format!(
                    "Set {} in the environment the editor starts tandem with.",
                    config.endpoint.api_key_env
                ),
            ),
        )]
    } else {
        Vec::new()
    };
    InitializeResponse::new(ProtocolVersion::V1)
        .agent_capabilities(
            AgentCapabilities::new()
                .load_session(true)
                .prompt_capabilities(PromptCapabilities::new().image(true).embedded_context(true))
                // Streamable HTTP works; the old HTTP+SSE transport does not.
                .mcp_capabilities(McpCapabilities::new().http(true))
                // tandem's extension methods.
                .meta(
                    serde_json::json!({"tandem": ext::advertised()})
                        .as_object()
                        .cloned(),
                )
                .session_capabilities(session_capabilities()),
        )
        .auth_methods(auth_methods)
        .agent_info(Implementation::new("tandem", env!("CARGO_PKG_VERSION")).title("tandem"))
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
        .additional_directories(SessionAdditionalDirectoriesCapabilities::new());
    #[cfg(feature = "acp-session-fork")]
    let caps = caps.fork(agent_client_protocol::v1::schema::SessionForkCapabilities::new());
    caps
}
