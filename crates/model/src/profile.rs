//! A model's profile, resolved in one place for everything that reads it (the request, the
//! system prompt, `usage_update`, `_tandem/status`, `_tandem/usage`): its window, output
//! limit, reasoning effort, images, edit tool, server and API (and with it the state that
//! goes back, see [`state_kept`]), and price. Each field comes from the user's config first,
//! then from what the server reported about itself ([`super::discover`]; only for the default
//! server's own models), then from the built-in table of model families (`config::presets`);
//! a window the server was seen to cut the prompt at caps it. A price comes from the config,
//! then the server, then the vendors' published prices (`config::prices`, only at the
//! vendor's own host and for exactly the model listed).

use crate::config::{Config, LOCAL_OUTPUT_TOKENS, ModelSpec, presets};

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
    spec.max_output_tokens = output_limit(config, &spec);
    spec
}

/// The most tokens one answer of `spec` may take: the model's own limit (configured, or from
/// the table of model families), else the file's `max_output_tokens`, else for a model on a
/// local server, whose small models can otherwise write until the answer timeout,
/// [`LOCAL_OUTPUT_TOKENS`] or a quarter of its window if that is less; `None` (ask for no
/// limit) on a hosted server, which knows its models' limits and refuses a request for more
/// than one allows, for a hosted family behind a local proxy, and wherever a limit says `0`.
fn output_limit(config: &Config, spec: &ModelSpec) -> Option<u32> {
    let local_model = || {
        super::discover::is_local(&config.endpoint_for(&spec.id).base_url)
            && !presets::known_hosted_family(&spec.id)
    };
    let limit = spec
        .max_output_tokens
        .or(config.max_output_tokens)
        .or_else(|| local_model().then(|| local_output_limit(spec.context_window)));
    limit.filter(|tokens| *tokens > 0)
}

/// The default cap on one answer of a local model with a window of `window` tokens:
/// [`LOCAL_OUTPUT_TOKENS`], or a quarter of the window when that is less. A local server lets
/// a request's `max_tokens` stand over its own `-n`, so an answer as long as the window would
/// leave the next request (that answer, and what follows it) no room: llama-server refuses it
/// outright, and compacting it means sending the model that whole answer again.
fn local_output_limit(window: u64) -> u32 {
    let quarter = u32::try_from(window / 4).unwrap_or(u32::MAX);
    LOCAL_OUTPUT_TOKENS.min(quarter.max(1))
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

    /// The configuration `file` (TOML) gives with the environment `vars`.
    fn with_file(file: &str, vars: &'static [(&'static str, &'static str)]) -> Config {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        std::fs::write(&path, file).unwrap();
        let overrides = Overrides {
            config_file: Some(path),
            ..Overrides::default()
        };
        Config::resolve(&overrides, &|k| {
            vars.iter()
                .find(|(name, _)| *name == k)
                .map(|(_, v)| v.to_string())
                .or_else(|| (k == "HOME").then(|| "/nonexistent".into()))
        })
        .unwrap()
    }

    #[test]
    fn a_local_servers_models_get_an_output_limit_a_hosted_servers_do_not() {
        let local = config(&[("OPENAI_BASE_URL", "http://127.0.0.1:8080/v1")]);
        let spec = resolve(&local, "smollm2-135m", None, None);
        assert_eq!(spec.max_output_tokens, Some(LOCAL_OUTPUT_TOKENS));
        let ollama = config(&[("TANDEM_PROVIDER", "ollama")]);
        let spec = resolve(&ollama, "qwen2.5-coder:7b", None, None);
        assert_eq!(spec.max_output_tokens, Some(LOCAL_OUTPUT_TOKENS));
        let hosted = config(&[("OPENAI_API_KEY", "k")]);
        assert_eq!(
            resolve(&hosted, "some-new-model", None, None).max_output_tokens,
            None
        );
        // A vendor's model behind a local proxy (LiteLLM) keeps the vendor's limits.
        for id in [
            "claude-sonnet-4-5",
            "gpt-5-mini",
            "openai/gpt-4o",
            "gemini-2.5-pro",
        ] {
            assert_eq!(
                resolve(&local, id, None, None).max_output_tokens,
                None,
                "{id}"
            );
        }
        // A model whose limit the family table knows keeps it, local or not.
        let known = presets::known_output_limit("claude-3-haiku");
        assert!(known.is_some());
        assert_eq!(
            resolve(&local, "claude-3-haiku", None, None).max_output_tokens,
            known
        );
    }

    #[test]
    fn a_local_models_default_limit_leaves_three_quarters_of_a_small_window() {
        let local = config(&[("OPENAI_BASE_URL", "http://127.0.0.1:8080/v1")]);
        let found = |tokens| Discovered {
            windows: vec![(
                "smollm2-135m".to_string(),
                super::super::discover::Window {
                    tokens,
                    source: "/props".into(),
                },
            )],
            ..Discovered::default()
        };
        let limit =
            |d: &Discovered, cut| resolve(&local, "smollm2-135m", Some(d), cut).max_output_tokens;
        assert_eq!(limit(&found(4096), None), Some(1024));
        assert_eq!(limit(&found(2048), None), Some(512));
        assert_eq!(limit(&found(131_072), None), Some(LOCAL_OUTPUT_TOKENS));
        // A window the server was seen to cut the prompt at counts, too.
        assert_eq!(limit(&found(131_072), Some(8192)), Some(2048));
        // A limit the user set stands, whatever the window.
        let vars: &[(&str, &str)] = &[("OPENAI_BASE_URL", "http://127.0.0.1:8080/v1")];
        let c = with_file("max_output_tokens = 3000\n", vars);
        let spec = resolve(&c, "smollm2-135m", Some(&found(4096)), None);
        assert_eq!(spec.max_output_tokens, Some(3000));
    }

    #[test]
    fn the_config_sets_the_limit_per_model_or_for_all_and_zero_asks_for_none() {
        let vars: &[(&str, &str)] = &[("OPENAI_BASE_URL", "http://localhost:8080/v1")];
        let file = "max_output_tokens = 1000\n[[models]]\nid = \"big\"\nmax_output_tokens = 9000\n";
        let c = with_file(file, vars);
        assert_eq!(resolve(&c, "big", None, None).max_output_tokens, Some(9000));
        assert_eq!(
            resolve(&c, "other", None, None).max_output_tokens,
            Some(1000)
        );
        let c = with_file("max_output_tokens = 0\n", vars);
        assert_eq!(resolve(&c, "other", None, None).max_output_tokens, None);
        let file = "[[models]]\nid = \"free\"\nmax_output_tokens = 0\n";
        let c = with_file(file, vars);
        assert_eq!(resolve(&c, "free", None, None).max_output_tokens, None);
        assert_eq!(
            resolve(&c, "other", None, None).max_output_tokens,
            Some(LOCAL_OUTPUT_TOKENS)
        );
    }
}
