//! The `[web]` table: how the `web_fetch` and `web_search` tools reach the web. Only the
//! user's own config file sets it; a project's cannot, so a cloned repository can neither
//! open the user's own network to the model nor point searches at a server of its choosing.
//!
//! ```toml
//! [web]
//! fetch = true            # offer web_fetch (default true)
//! allow_private = false   # let web_fetch reach this machine, its networks, any address
//!                         # that is not globally reachable (web/guard.rs)
//! timeout_secs = 30
//! max_bytes = 5000000     # most of a page read
//! max_chars = 40000       # most of it the model reads
//!
//! [web.search]            # offer web_search
//! provider = "searxng"    # or "brave"
//! url = "http://localhost:8888"   # SearXNG's address; Brave's API by default
//! api_key_env = "BRAVE_API_KEY"   # where Brave's key is read from (the default)
//! ```

use std::time::Duration;

use serde::Deserialize;

use super::ConfigError;

/// Brave Search's API.
pub const BRAVE_URL: &str = "https://api.search.brave.com";

/// How the web tools reach the web.
#[derive(Debug, Clone, PartialEq)]
pub struct WebSettings {
    /// Whether `web_fetch` is offered.
    pub fetch: bool,
    /// Whether this machine, its networks and addresses that are not globally reachable
    /// may be fetched.
    pub allow_private: bool,
    /// The whole of one fetch or search.
    pub timeout: Duration,
    /// Most bytes of a page read.
    pub max_bytes: usize,
    /// Most characters of a page the model reads.
    pub max_chars: usize,
    /// The search provider, when one is configured (`web_search` is offered only then).
    pub search: Option<SearchSettings>,
}

impl Default for WebSettings {
    fn default() -> Self {
        Self {
            fetch: true,
            allow_private: false,
            timeout: Duration::from_secs(30),
            max_bytes: 5_000_000,
            max_chars: 40_000,
            search: None,
        }
    }
}

/// Which search API.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SearchProvider {
    /// SearXNG's JSON API.
    Searxng,
    /// Brave Search's web search API.
    Brave,
}

impl SearchProvider {
    /// As written in the config.
    pub fn name(self) -> &'static str {
        match self {
            SearchProvider::Searxng => "searxng",
            SearchProvider::Brave => "brave",
        }
    }
}

/// A configured search provider.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchSettings {
    /// Which API.
    pub provider: SearchProvider,
    /// Where it answers.
    pub url: String,
    /// The variable its key is read from (Brave).
    pub api_key_env: String,
    /// The key, read when the config was.
    pub api_key: Option<String>,
}

impl SearchSettings {
    /// The key, when one was found.
    pub fn api_key(&self) -> Option<&str> {
        self.api_key.as_deref().filter(|k| !k.is_empty())
    }

    /// The host the searches go to (what a permission names).
    pub fn host(&self) -> String {
        reqwest::Url::parse(&self.url)
            .ok()
            .and_then(|u| u.host_str().map(str::to_string))
            .unwrap_or_else(|| self.url.clone())
    }
}

/// The `[web]` table as written.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct FileWeb {
    fetch: Option<bool>,
    allow_private: Option<bool>,
    timeout_secs: Option<u64>,
    max_bytes: Option<usize>,
    max_chars: Option<usize>,
    search: Option<FileSearch>,
}

/// `[web.search]` as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileSearch {
    provider: String,
    url: Option<String>,
    api_key_env: Option<String>,
}

impl FileWeb {
    /// The settings, the search key read through `var`.
    pub(super) fn resolve(
        &self,
        var: &dyn Fn(&str) -> Option<String>,
    ) -> Result<WebSettings, ConfigError> {
        let default = WebSettings::default();
        let search = match &self.search {
            None => None,
            Some(s) => Some(search(s, var)?),
        };
        Ok(WebSettings {
            fetch: self.fetch.unwrap_or(default.fetch),
            allow_private: self.allow_private.unwrap_or(false),
            timeout: self
                .timeout_secs
                .map_or(default.timeout, |s| Duration::from_secs(s.max(1))),
            max_bytes: self.max_bytes.unwrap_or(default.max_bytes).max(1024),
            max_chars: self.max_chars.unwrap_or(default.max_chars).max(1000),
            search,
        })
    }
}

fn search(
    s: &FileSearch,
    var: &dyn Fn(&str) -> Option<String>,
) -> Result<SearchSettings, ConfigError> {
    let provider = match s.provider.as_str() {
        "searxng" => SearchProvider::Searxng,
        "brave" => SearchProvider::Brave,
        other => {
            return Err(ConfigError::Invalid(format!(
                "[web.search] provider `{other}` is not one of searxng, brave"
            )));
        }
    };
    let url = match (provider, &s.url) {
        (_, Some(url)) => url.clone(),
        (SearchProvider::Brave, None) => BRAVE_URL.to_string(),
        (SearchProvider::Searxng, None) => {
            return Err(ConfigError::Invalid(
                "[web.search] provider \"searxng\" needs the `url` of your SearXNG".into(),
            ));
        }
    };
    if !(url.starts_with("http://") || url.starts_with("https://")) {
        return Err(ConfigError::Invalid(format!(
            "[web.search] url `{url}` is not an http(s) URL"
        )));
    }
    let api_key_env = s
        .api_key_env
        .clone()
        .unwrap_or_else(|| "BRAVE_API_KEY".to_string());
    let api_key = match provider {
        SearchProvider::Brave => var(&api_key_env),
        SearchProvider::Searxng => None,
    };
    Ok(SearchSettings {
        provider,
        url,
        api_key_env,
        api_key,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolve(text: &str) -> Result<WebSettings, ConfigError> {
        let file: FileWeb = toml::from_str(text).unwrap();
        file.resolve(&|name| (name == "BRAVE_API_KEY").then(|| "bk-123".to_string()))
    }

    #[test]
    fn search_is_off_until_configured_and_each_provider_needs_its_parts() {
        let plain = resolve("").unwrap();
        assert!(plain.fetch && !plain.allow_private && plain.search.is_none());
        let brave = resolve("[search]\nprovider = \"brave\"")
            .unwrap()
            .search
            .unwrap();
        assert_eq!(brave.url, BRAVE_URL);
        assert_eq!(brave.api_key(), Some("bk-123"));
        assert_eq!(brave.host(), "api.search.brave.com");
        let searx = resolve("[search]\nprovider = \"searxng\"\nurl = \"http://127.0.0.1:8888\"")
            .unwrap()
            .search
            .unwrap();
        assert_eq!(searx.api_key(), None);
        assert!(resolve("[search]\nprovider = \"searxng\"").is_err());
        assert!(resolve("[search]\nprovider = \"bing\"").is_err());
        assert!(resolve("[search]\nprovider = \"brave\"\nurl = \"ftp://x\"").is_err());
    }
}
