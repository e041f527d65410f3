//! ACP's `providers/*` (unstable in the protocol, so only with the `acp-providers` feature):
//! the editor lists tandem's model endpoint and sets or disables it. tandem has one, `main`:
//! the server its sessions talk to. `providers/set` points new sessions at the editor's server
//! (OpenAI's chat completions or Responses API, or Anthropic's Messages), taking the key from
//! the header that API reads it from and sending the other headers as they are; `main` is
//! required, so `providers/disable` is refused.

use std::sync::Arc;

use agent_client_protocol::Client;
use agent_client_protocol::v1::schema::{
    DisableProviderRequest, DisableProviderResponse, ListProvidersRequest, ListProvidersResponse,
    LlmProtocol, ProviderCurrentConfig, ProviderInfo, SetProviderRequest, SetProviderResponse,
};
use agent_client_protocol::v1::{ConnectionTo, Responder};

use super::errors;
use super::handlers::{Handled, Handlers};
use crate::config::Endpoint;
use crate::conversation::Api;
use crate::session::EndpointChange;

/// The one provider tandem has.
const MAIN: &str = "main";

impl Handlers {
    /// `providers/list`: `main`, with the server and API new sessions use.
    pub(crate) async fn list_providers(
        self: Arc<Self>,
        _req: ListProvidersRequest,
        responder: Responder<ListProvidersResponse>,
        _cx: ConnectionTo<Client>,
    ) -> Handled {
        let config = self.manager.config();
        responder.respond(ListProvidersResponse::new(vec![main(&config.endpoint)]))
    }

    /// `providers/set`: new sessions talk to the editor's server.
    pub(crate) async fn set_provider(
        self: Arc<Self>,
        req: SetProviderRequest,
        responder: Responder<SetProviderResponse>,
        _cx: ConnectionTo<Client>,
    ) -> Handled {
        let current = self.manager.config().endpoint.api;
        let change = if req.provider_id.0.as_ref() == MAIN {
            change(req, current)
        } else {
            Err(unknown(&req.provider_id.0))
        };
        match change.and_then(|c| self.manager.set_endpoint(c)) {
            Ok(()) => responder.respond(SetProviderResponse::new()),
            Err(message) => responder.respond_with_error(errors::invalid_params(message)),
        }
    }

    /// `providers/disable`: refused, `main` is the only way tandem reaches a model.
    pub(crate) async fn disable_provider(
        self: Arc<Self>,
        req: DisableProviderRequest,
        responder: Responder<DisableProviderResponse>,
        _cx: ConnectionTo<Client>,
    ) -> Handled {
        let message = if req.provider_id.0.as_ref() == MAIN {
            "provider `main` is required: it is the model server tandem's sessions talk to; set another with providers/set".to_string()
        } else {
            unknown(&req.provider_id.0)
        };
        responder.respond_with_error(errors::invalid_params(message))
    }
}

fn unknown(id: &str) -> String {
    format!("unknown provider `{id}`: tandem has one, `main`")
}

/// `main` as `providers/list` shows it.
fn main(endpoint: &Endpoint) -> ProviderInfo {
    let api_type = match endpoint.api {
        Api::AnthropicMessages => LlmProtocol::Anthropic,
        _ => LlmProtocol::OpenAi,
    };
    ProviderInfo::new(
        MAIN,
        vec![LlmProtocol::OpenAi, LlmProtocol::Anthropic],
        true,
        ProviderCurrentConfig::new(api_type, endpoint.base_url.clone()),
    )
}

/// What `req` asks for, with `current` the API in use; `Err` says what tandem cannot take.
fn change(req: SetProviderRequest, current: Api) -> Result<EndpointChange, String> {
    let api = match req.api_type {
        // An OpenAI server keeps the OpenAI API it was spoken to in.
        LlmProtocol::OpenAi if current != Api::AnthropicMessages => current,
        LlmProtocol::OpenAi => Api::ChatCompletions,
        LlmProtocol::Anthropic => Api::AnthropicMessages,
        other => {
            let name = serde_json::to_value(&other).unwrap_or_default();
            return Err(format!(
                "apiType {name} is not one tandem speaks: use \"openai\" or \"anthropic\""
            ));
        }
    };
    let url = url::Url::parse(&req.base_url)
        .map_err(|e| format!("baseUrl `{}` is not a URL: {e}", req.base_url))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(format!("baseUrl `{}` is not http(s)", req.base_url));
    }
    let mut key = None;
    let mut headers = Vec::new();
    for (name, value) in req.headers {
        let lower = name.to_ascii_lowercase();
        let bearer = value
            .strip_prefix("Bearer ")
            .or_else(|| value.strip_prefix("bearer "));
        match (lower.as_str(), api, bearer) {
            ("authorization", Api::ChatCompletions | Api::Responses, Some(token)) => {
                key = Some(token.trim().to_string());
            }
            ("x-api-key", Api::AnthropicMessages, _) => key = Some(value.trim().to_string()),
            _ => headers.push((name, value)),
        }
    }
    Ok(EndpointChange {
        api,
        base_url: req.base_url,
        key,
        headers,
    })
}
