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
/// not list, such as one picked from the server's list) what the table of model families
/// says of it, on the default server.
pub fn resolve(
    config: &Config,
    id: &str,
    discovered: Option<&Discovered>,
    cut: Option<u64>,
) -> ModelSpec {
    let mut spec = config
        .model(id)
        .cloned()
        .unwrap_or_else(|| unlisted(config, id));
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

/// The profile of a model the config does not list, served by the default server: every
/// family setting from the table by its id (window, reasoning effort, images, edit tool,
/// output limit); a window the table does not know is the default server's preset's.
fn unlisted(config: &Config, id: &str) -> ModelSpec {
    let preset = presets::preset(&config.endpoint.provider).unwrap_or(&presets::PRESETS[0]);
    ModelSpec {
        id: id.to_string(),
        name: id.to_string(),
        context_window: presets::known_context_window(id).unwrap_or(preset.default_context_window),
        window_configured: false,
        reasoning_effort: presets::known_reasoning_effort(id),
        images: presets::known_images(id),
        edit_tool: presets::known_edit_tool(id),
        provider: None,
        max_output_tokens: presets::known_output_limit(id),
        api: config.endpoint.api,
        price: None,
    }
}

/// What tandem sends back to a model's server between tool calls, by its API.
pub fn state_kept(api: crate::conversation::Api) -> &'static str {
    use crate::conversation::Api;
    match api {
        Api::ChatCompletions => {
            "reasoning in the field it came in, reasoning_details, tool-call extra_content"
        }
        Api::Responses => "reasoning items with their encrypted content",
        Api::AnthropicMessages => "thinking blocks with their signatures",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Overrides;

    fn config(vars: &'static [(&'static str, &'static str)]) -> Config {
        Config::resolve(&Overrides::default(), &|k| {
            vars.iter()
                .find(|(name, _)| *name == k)
                .map(|(_, v)| v.to_string())
                .or_else(|| (k == "HOME").then(|| "/nonexistent".into()))
        })
        .unwrap()
    }

    #[test]
    fn an_unlisted_model_gets_its_familys_settings_not_the_first_models() {
        let c = config(&[("TANDEM_MODEL", "mock-model"), ("OPENAI_API_KEY", "k")]);
        let spec = resolve(&c, "gpt-5.1", None, None);
        assert!(spec.reasoning_effort);
        assert_eq!(spec.context_window, 400_000);
        assert!(spec.images);
        assert_eq!(spec.edit_tool, crate::config::EditTool::ApplyPatch);
        let spec = resolve(&c, "claude-sonnet-4-5", None, None);
        assert!(spec.reasoning_effort);
        assert_eq!(spec.context_window, 200_000);
        let spec = resolve(&c, "llama3", None, None);
        assert!(!spec.reasoning_effort);
        assert_eq!(spec.context_window, 128_000);
        assert!(!spec.window_configured);
    }
}
