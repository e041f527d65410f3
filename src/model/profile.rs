//! A model's profile, resolved in one place for everything that reads it (the request, the
//! system prompt, `usage_update`, `_tandem/status`, `_tandem/usage`): its window, output
//! limit, reasoning effort, images, edit tool, server and API (and with it the state that
//! goes back, see [`state_kept`]), and price. Each field comes from the user's config first,
//! then from what the server reported about itself ([`super::discover`]; only for the default
//! server's own models), then from the built-in table of model families (`config::presets`);
//! a window the server was seen to cut the prompt at caps it. A price comes from the config,
//! then the server, then the vendors' published prices (`config::prices`, only at the
//! vendor's own host and for exactly the model listed).

use crate::config::{Config, ModelSpec, presets};

use super::discover::Discovered;

/// The profile of model `id`: configured, or (a model the editor named that the config does
/// not list) the table's answer over the first configured model's.
pub fn resolve(
    config: &Config,
    id: &str,
    discovered: Option<&Discovered>,
    cut: Option<u64>,
) -> ModelSpec {
    let mut spec = config.model(id).cloned().unwrap_or_else(|| ModelSpec {
        id: id.to_string(),
        name: id.to_string(),
        edit_tool: presets::known_edit_tool(id),
        images: presets::known_images(id),
        provider: None,
        max_output_tokens: presets::known_output_limit(id),
        api: config.endpoint.api,
        price: None,
        ..config.models[0].clone()
    });
    // What the default server says holds for its own models, not another provider's.
    if !spec.window_configured
        && spec.provider.is_none()
        && let Some(window) = discovered.and_then(|found| found.window(&spec.id))
    {
        spec.context_window = window.tokens;
    }
    if spec.price.is_none() && spec.provider.is_none() {
        spec.price = discovered.and_then(|found| found.price(&spec.id));
    }
    if spec.price.is_none() {
        spec.price = crate::config::prices::built_in(&config.endpoint_for(id).base_url, &spec.id);
    }
    if let Some(cut) = cut {
        spec.context_window = spec.context_window.min(cut);
    }
    spec
}

/// What tandem sends back to a model's server between tool calls, by its API.
pub fn state_kept(api: crate::config::Api) -> &'static str {
    use crate::config::Api;
    match api {
        Api::ChatCompletions => {
            "reasoning in the field it came in, reasoning_details, tool-call extra_content"
        }
        Api::Responses => "reasoning items with their encrypted content",
        Api::AnthropicMessages => "thinking blocks with their signatures",
    }
}
