//! The models offered to the editor: which ids, and what tandem knows about each.

use super::file::FileConfig;
use super::{ModelSpec, presets};

/// Builds the list of offered models: `TANDEM_MODELS` > file `[[models]]` > the default model,
/// with per-model details from the file wherever ids match.
pub(super) fn resolve_models(
    default_model: &str,
    env_list: Option<&str>,
    file: &FileConfig,
    preset_window: u64,
) -> Vec<ModelSpec> {
    let mut ids: Vec<String> = match env_list {
        Some(list) => list
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(String::from)
            .collect(),
        None => file.models.iter().map(|m| m.id.clone()).collect(),
    };
    if !ids.iter().any(|id| id == default_model) {
        ids.insert(0, default_model.to_string());
    }
    let mut seen = std::collections::HashSet::new();
    ids.retain(|id| seen.insert(id.clone()));
    ids.into_iter()
        .map(|id| {
            let detail = file.models.iter().find(|m| m.id == id);
            ModelSpec {
                name: detail
                    .and_then(|d| d.name.clone())
                    .unwrap_or_else(|| id.clone()),
                window_configured: detail.is_some_and(|d| d.context_window.is_some()),
                context_window: detail
                    .and_then(|d| d.context_window)
                    .or_else(|| presets::known_context_window(&id))
                    .unwrap_or(preset_window),
                reasoning_effort: detail
                    .and_then(|d| d.reasoning_effort)
                    .unwrap_or_else(|| presets::known_reasoning_effort(&id)),
                images: detail
                    .and_then(|d| d.images)
                    .unwrap_or_else(|| presets::known_images(&id)),
                edit_tool: detail
                    .and_then(|d| d.edit_tool)
                    .unwrap_or_else(|| presets::known_edit_tool(&id)),
                provider: detail.and_then(|d| d.provider.clone()),
                max_output_tokens: detail
                    .and_then(|d| d.max_output_tokens)
                    .or_else(|| presets::known_output_limit(&id)),
                // Set from the model's server once the providers are known.
                api: super::Api::default(),
                price: detail.and_then(|d| d.price),
                id,
            }
        })
        .collect()
}
