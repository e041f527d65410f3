//! The server a login is for: a preset or a URL of the user's own.

use crate::config::presets::{self, Preset};
use crate::config::{ApiKey, Config, Endpoint, KeyFrom};

/// A model server to log in to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LoginTarget {
    /// The preset, when one was chosen.
    pub(crate) provider: Option<&'static Preset>,
    /// Its base URL, without a trailing slash.
    pub(crate) base_url: String,
    /// Whether it cannot work without a key (hosted services).
    pub(crate) needs_key: bool,
    /// The API the configuration or the command line names for it; `None`: its own.
    pub(crate) named_api: Option<crate::conversation::Api>,
}

impl LoginTarget {
    /// A preset's server.
    pub(crate) fn preset(preset: &'static Preset) -> Self {
        Self {
            provider: Some(preset),
            base_url: preset.base_url.to_string(),
            needs_key: preset.requires_key,
            named_api: None,
        }
    }

    /// A server at a URL of the user's own; a key is asked for but may be left empty.
    pub(crate) fn custom(base_url: String) -> Self {
        Self {
            provider: None,
            base_url,
            needs_key: false,
            named_api: None,
        }
    }

    /// The same server at another address (its API's, where the user gave the host's).
    pub(crate) fn at(self, base_url: String) -> Self {
        Self { base_url, ..self }
    }

    /// The server `config` names (flags, environment, config file).
    pub(crate) fn of(config: &Config) -> Self {
        let endpoint = &config.endpoint;
        Self {
            provider: presets::preset(&endpoint.provider),
            base_url: endpoint.base_url.clone(),
            needs_key: endpoint.requires_key,
            named_api: Some(endpoint.api),
        }
    }

    /// Whether to ask for a key at all: not for a preset that runs on the user's machine.
    pub(crate) fn asks_key(&self) -> bool {
        self.needs_key || self.provider.is_none()
    }

    /// How the user knows it: the preset's name and URL, or the URL.
    pub(crate) fn label(&self) -> String {
        match self.provider {
            Some(p) => format!("{} ({})", p.name, self.base_url),
            None => self.base_url.clone(),
        }
    }

    /// What to say when a server on this machine does not answer.
    pub(crate) fn start_hint(&self) -> &'static str {
        match self.provider.map(|p| p.name) {
            Some("ollama") => "Is Ollama running (`ollama serve`)? ",
            Some("llamacpp") => {
                "Is llama-server running (`llama-server -m MODEL.gguf --port 8080`)? "
            }
            Some("lmstudio") => {
                "Is LM Studio's server started (Developer tab, or `lms server start`)? "
            }
            Some("vllm") => "Is vLLM running (`vllm serve MODEL`)? ",
            _ => "Check the URL and your network. ",
        }
    }

    /// The API this server is spoken to in: the one named for it, else the server's own (see
    /// [`presets::api_at`]).
    pub(crate) fn api(&self) -> crate::conversation::Api {
        self.named_api
            .unwrap_or_else(|| presets::api_at(self.provider, Some(&self.base_url)))
    }

    /// `config` pointed at this server with `key` and `model`, for the test request.
    pub(crate) fn config(&self, config: &Config, key: Option<&ApiKey>, model: &str) -> Config {
        let mut trial = config.clone();
        let provider = self.provider.unwrap_or(&presets::PRESETS[0]);
        trial.endpoint = Endpoint {
            provider: self.provider.map_or("custom", |p| p.name).to_string(),
            base_url: self.base_url.clone(),
            api: self.api(),
            api_key: key.cloned(),
            api_key_env: provider.api_key_env.to_string(),
            requires_key: self.needs_key,
            key_from: if key.is_some() {
                KeyFrom::Given
            } else {
                KeyFrom::Nowhere
            },
            headers: Vec::new(),
        };
        trial.default_model = model.to_string();
        trial.replay = None;
        trial
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_presets_are_not_asked_for_a_key_and_urls_are() {
        let ollama = LoginTarget::preset(presets::preset("ollama").unwrap());
        assert!(!ollama.asks_key());
        let openai = LoginTarget::preset(presets::preset("openai").unwrap());
        assert!(openai.asks_key() && openai.needs_key);
        let own = LoginTarget::custom("http://box/v1".into());
        assert!(own.asks_key() && !own.needs_key);
    }
}
