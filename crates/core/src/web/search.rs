//! Web search through the provider the user configured (`[web.search]`): SearXNG's JSON API
//! (self-hosted, no key) or Brave Search's web search API (a key). Results are titles, URLs
//! and snippets. The provider is the user's own choice, so a SearXNG on their own machine is
//! reached wherever it is; the key goes only in Brave's header, never in a URL.

use std::time::Duration;

use serde_json::Value;

use crate::config::{SearchProvider, SearchSettings};

/// Most bytes of a provider's answer read.
const MOST_ANSWER: usize = 4 << 20;

/// One result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hit {
    /// The page's title.
    pub(crate) title: String,
    /// Its URL.
    pub(crate) url: String,
    /// What the provider quotes of it.
    pub(crate) snippet: String,
}

/// Why a search failed; the text is what the model (and `tandem doctor`) says.
#[derive(Debug, thiserror::Error)]
pub enum SearchError {
    /// Brave without its key.
    #[error("no key for {provider}: set {var}")]
    NoKey {
        /// The provider.
        provider: &'static str,
        /// Where the key is read from.
        var: String,
    },
    /// The request failed.
    #[error("{0}")]
    Http(String),
    /// An error status.
    #[error("{provider} answered {status}{hint}")]
    Status {
        /// The provider.
        provider: &'static str,
        /// The status.
        status: u16,
        /// What to do about it.
        hint: &'static str,
    },
    /// Not the JSON expected.
    #[error("{0} answered something that is not its search JSON")]
    Shape(&'static str),
}

/// Searches `query` with `settings`' provider; at most `count` results.
pub async fn search(
    settings: &SearchSettings,
    query: &str,
    count: usize,
    timeout: Duration,
) -> Result<Vec<Hit>, SearchError> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let client = reqwest::Client::builder()
        .timeout(timeout)
        .user_agent(concat!("tandem/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| SearchError::Http(crate::platform::net::describe_reqwest(&e)))?;
    let provider = settings.provider;
    let response = request(&client, settings, query, count)?
        .header(reqwest::header::ACCEPT, "application/json")
        .send()
        .await
        .map_err(|e| SearchError::Http(crate::platform::net::describe_reqwest(&e)))?;
    let status = response.status();
    if !status.is_success() {
        return Err(refused(provider, status.as_u16()));
    }
    let bytes = crate::platform::net::read_capped(response, MOST_ANSWER).await;
    hits(provider, &bytes, count)
}

/// The provider's request for `query`.
fn request(
    client: &reqwest::Client,
    settings: &SearchSettings,
    query: &str,
    count: usize,
) -> Result<reqwest::RequestBuilder, SearchError> {
    let provider = settings.provider;
    let base = settings.url.trim_end_matches('/');
    let url = |path: &str, params: &[(&str, &str)]| {
        reqwest::Url::parse_with_params(&format!("{base}{path}"), params)
            .map_err(|e| SearchError::Http(format!("{base}{path}: {e}")))
    };
    Ok(match provider {
        SearchProvider::Searxng => client.get(url("/search", &[("q", query), ("format", "json")])?),
        SearchProvider::Brave => {
            let key = settings.api_key().ok_or_else(|| SearchError::NoKey {
                provider: provider.name(),
                var: settings.api_key_env.clone(),
            })?;
            let count = count.min(20).to_string();
            client
                .get(url(
                    "/res/v1/web/search",
                    &[("q", query), ("count", &count)],
                )?)
                .header("X-Subscription-Token", key)
        }
    })
}

/// An error status, with what to do about it.
fn refused(provider: SearchProvider, status: u16) -> SearchError {
    let hint = match (provider, status) {
        (SearchProvider::Searxng, 403) => {
            " (SearXNG gives JSON only with `json` under `search.formats` in its settings.yml)"
        }
        (SearchProvider::Brave, 401 | 403) => " (check the key)",
        (_, 429) => " (rate limited; try again later)",
        _ => "",
    };
    SearchError::Status {
        provider: provider.name(),
        status,
        hint,
    }
}

/// The results in a provider's answer: at most `count`.
fn hits(provider: SearchProvider, bytes: &[u8], count: usize) -> Result<Vec<Hit>, SearchError> {
    let answer: Value =
        serde_json::from_slice(bytes).map_err(|_| SearchError::Shape(provider.name()))?;
    let (list, snippet) = match provider {
        SearchProvider::Searxng => (&answer["results"], "content"),
        SearchProvider::Brave => (&answer["web"]["results"], "description"),
    };
    let Some(list) = list.as_array() else {
        // Brave answers without `web` when nothing was found.
        return match provider {
            SearchProvider::Brave if answer.is_object() => Ok(Vec::new()),
            _ => Err(SearchError::Shape(provider.name())),
        };
    };
    let text = |v: &Value| v.as_str().unwrap_or("").trim().to_string();
    Ok(list
        .iter()
        .filter(|r| r["url"].is_string())
        .take(count)
        .map(|r| Hit {
            title: text(&r["title"]),
            url: text(&r["url"]),
            snippet: strip_markup(&text(&r[snippet])),
        })
        .collect())
}

/// Brave marks matches with `<strong>`; the model reads plain text.
fn strip_markup(text: &str) -> String {
    text.replace("<strong>", "").replace("</strong>", "")
}

/// The results as the model reads them: numbered, title, URL, snippet.
pub(crate) fn render(query: &str, hits: &[Hit]) -> String {
    if hits.is_empty() {
        return format!("No results for \"{query}\".");
    }
    let mut out = format!("Results for \"{query}\":\n");
    for (i, hit) in hits.iter().enumerate() {
        out.push_str(&format!("\n{}. {}\n   {}\n", i + 1, hit.title, hit.url));
        if !hit.snippet.is_empty() {
            out.push_str(&format!("   {}\n", hit.snippet));
        }
    }
    out
}
