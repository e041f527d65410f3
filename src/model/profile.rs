//! A model's profile, resolved in one place for everything that reads it (the request, the
//! system prompt, `usage_update`, `_tandem/status`): its window, reasoning effort, images,
//! edit tool and server. Each field comes from the user's config first, then from what the
//! server reported about itself ([`super::discover`]; only for the default server's own
//! models), then from the built-in table of model families (`config::presets`); a window the
//! server was seen to cut the prompt at caps it.

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
        ..config.models[0].clone()
    });
    // What the default server says holds for its own models, not another provider's.
    if !spec.window_configured
        && spec.provider.is_none()
        && let Some(window) = discovered.and_then(|found| found.window(&spec.id))
    {
        spec.context_window = window.tokens;
    }
    if let Some(cut) = cut {
        spec.context_window = spec.context_window.min(cut);
    }
    spec
}
