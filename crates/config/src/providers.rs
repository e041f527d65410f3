//! Model servers side by side: `[[providers]]` entries in the user's config file, which
//! `[[models]] provider = "…"` entries point at, so one model picker offers, say, a local
//! Ollama model and a hosted one; switching model switches server, API and key.
//!
//! An entry is a name with a server: a preset's (`preset = "…"`, or a name that is a
//! preset's) or its own `base_url`, with `api` and `api_key_env` taken from the preset unless
//! given. Its key comes from its own variable only, or from `tandem login`'s store for its
//! URL: never `OPENAI_API_KEY`, which belongs to the default server, so no key reaches a
//! server it was not set for. Only the user's own config file may name providers.

use serde::Deserialize;

use super::presets::{self, Preset};
use super::{ConfigError, Endpoint, KeyFrom, checked_key};
use crate::conversation::Api;

/// One `[[providers]]` entry as written.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct FileProvider {
    pub(crate) name: String,
    pub(crate) preset: Option<String>,
    pub(crate) base_url: Option<String>,
    pub(crate) api: Option<String>,
    pub(crate) api_key_env: Option<String>,
}

/// The servers `entries` name, each as an [`Endpoint`] whose `provider` is the entry's name.
pub(super) fn resolve(
    entries: &[FileProvider],
    set: &dyn Fn(&str) -> Option<String>,
) -> Result<Vec<Endpoint>, ConfigError> {
    let mut out: Vec<Endpoint> = Vec::with_capacity(entries.len());
    for entry in entries {
        let name = entry.name.trim();
        if name.is_empty() {
            return Err(invalid("a [[providers]] entry needs a name"));
        }
        if out.iter().any(|e| e.provider == name) {
            return Err(invalid(&format!("[[providers]] names `{name}` twice")));
        }
        out.push(endpoint(entry, name, set)?);
    }
    Ok(out)
}

fn endpoint(
    entry: &FileProvider,
    name: &str,
    set: &dyn Fn(&str) -> Option<String>,
) -> Result<Endpoint, ConfigError> {
    let preset: Option<&Preset> = match &entry.preset {
        Some(p) => Some(presets::preset(p).ok_or_else(|| {
            invalid(&format!(
                "provider `{name}`: unknown preset `{p}`; known presets: {}",
                presets::preset_names()
            ))
        })?),
        None => presets::preset(name),
    };
    let base_url = match (&entry.base_url, preset) {
        (Some(url), _) => super::check_url(url)
            .map_err(|e| invalid(&format!("provider `{name}`: base_url: {e}")))?,
        (None, Some(p)) => p.base_url.to_string(),
        (None, None) => {
            return Err(invalid(&format!(
                "provider `{name}` needs a base_url (or a preset: {})",
                presets::preset_names()
            )));
        }
    };
    let base_url = base_url.trim_end_matches('/').to_string();
    let api = match &entry.api {
        Some(a) => Api::parse(a).ok_or_else(|| {
            invalid(&format!(
                "provider `{name}`: unknown api `{a}`; known APIs: {}",
                Api::ALL.map(Api::name).join(", ")
            ))
        })?,
        None => presets::api_at(preset, Some(&base_url)),
    };
    // A preset's variable holds a key for the preset's own server: another URL under that
    // preset (a gateway) must name its variable itself.
    let own_server = preset.filter(|p| p.base_url == base_url);
    let api_key_env = entry
        .api_key_env
        .clone()
        .or_else(|| own_server.map(|p| p.api_key_env.to_string()))
        .unwrap_or_default();
    let (api_key, key_from) = match set(&api_key_env).filter(|_| !api_key_env.is_empty()) {
        Some(key) => (
            Some(checked_key(&api_key_env, &key)?),
            KeyFrom::Env(api_key_env.clone()),
        ),
        None => (None, KeyFrom::Nowhere),
    };
    Ok(Endpoint {
        provider: name.to_string(),
        base_url,
        api,
        api_key,
        api_key_env,
        requires_key: preset.is_some_and(|p| p.requires_key),
        key_from,
        headers: Vec::new(),
    })
}

fn invalid(message: &str) -> ConfigError {
    ConfigError::Invalid(message.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(name: &str) -> FileProvider {
        FileProvider {
            name: name.into(),
            ..FileProvider::default()
        }
    }

    #[test]
    fn presets_fill_what_an_entry_leaves_out() {
        let vars =
            |name: &str| (name == "ANTHROPIC_API_KEY").then(|| "sk-ant-123456789".to_string());
        let resolved = resolve(
            &[
                entry("anthropic"),
                FileProvider {
                    base_url: Some("http://box:8080/v1/".into()),
                    api: Some("responses".into()),
                    ..entry("box")
                },
                FileProvider {
                    preset: Some("ollama".into()),
                    ..entry("local")
                },
            ],
            &vars,
        )
        .unwrap();
        assert_eq!(resolved[0].base_url, "https://api.anthropic.com/v1");
        assert_eq!(resolved[0].api, Api::AnthropicMessages);
        assert_eq!(
            resolved[0].api_key.as_ref().map(|k| k.expose()),
            Some("sk-ant-123456789")
        );
        assert_eq!(resolved[1].base_url, "http://box:8080/v1");
        assert_eq!(resolved[1].api, Api::Responses);
        assert!(
            resolved[1].api_key.is_none(),
            "no variable of its own: no key"
        );
        assert_eq!(resolved[2].base_url, "http://localhost:11434/v1");
        assert_eq!(resolved[2].provider, "local");
    }

    #[test]
    fn a_presets_key_stays_with_the_presets_own_server() {
        let vars =
            |name: &str| (name == "OPENAI_API_KEY").then(|| "sk-openai-123456789".to_string());
        let gateway = FileProvider {
            preset: Some("openai".into()),
            base_url: Some("https://llm-gw.example/v1".into()),
            ..entry("proxy")
        };
        let resolved = resolve(&[gateway, entry("openai")], &vars).unwrap();
        assert!(
            resolved[0].api_key.is_none(),
            "not OpenAI's server: not OpenAI's key"
        );
        assert_eq!(resolved[0].api, Api::ChatCompletions);
        assert!(resolved[1].api_key.is_some());
    }

    #[test]
    fn an_entry_without_a_server_or_named_twice_is_refused() {
        let none = |_: &str| None;
        let e = resolve(&[entry("mine")], &none).unwrap_err().to_string();
        assert!(e.contains("needs a base_url"), "{e}");
        let e = resolve(&[entry("ollama"), entry("ollama")], &none)
            .unwrap_err()
            .to_string();
        assert!(e.contains("twice"), "{e}");
        let bad = FileProvider {
            api: Some("grpc".into()),
            ..entry("ollama")
        };
        assert!(resolve(&[bad], &none).is_err());
    }
}
