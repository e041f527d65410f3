//! `tandem login --search PROVIDER [--search-url URL]`: sets up `web_search`. SearXNG needs
//! its URL; Brave Search needs a key (piped in with `--key-stdin`, typed without echo in a
//! terminal, or from `BRAVE_API_KEY`). One query is sent first, and only an answer saves:
//! the key in the credential store (under the provider's URL, where the configuration looks
//! it up), `[web.search]` in the config file.

use std::path::Path;

use toml_edit::{DocumentMut, Item, Table, value};

use super::{LoginError, say};
use crate::config::web::BRAVE_URL;
use crate::config::{Config, SearchProvider, SearchSettings};

/// Sets up the search provider `provider` at `url`.
pub(super) async fn run(
    config: &Config,
    provider: &str,
    url: Option<&str>,
    key_stdin: bool,
    interactive: bool,
) -> Result<(), LoginError> {
    let provider = match provider {
        "searxng" => SearchProvider::Searxng,
        "brave" => SearchProvider::Brave,
        other => {
            return Err(LoginError::Usage(format!(
                "--search {other}: the providers are searxng and brave"
            )));
        }
    };
    let url = match (provider, url) {
        (_, Some(url)) => super::check_url(url).map_err(|e| LoginError::Usage(e.to_string()))?,
        (SearchProvider::Brave, None) => BRAVE_URL.to_string(),
        (SearchProvider::Searxng, None) => {
            return Err(LoginError::Usage(
                "--search searxng needs --search-url, your SearXNG's address".into(),
            ));
        }
    };
    let key = match provider {
        SearchProvider::Searxng => None,
        SearchProvider::Brave => Some(brave_key(key_stdin, interactive)?),
    };
    let settings = SearchSettings {
        provider,
        url: url.clone(),
        api_key_env: "BRAVE_API_KEY".into(),
        api_key: key.clone(),
    };
    say(format!("… asking {} at {url} one query", provider.name()));
    crate::web::search::search(&settings, "tandem", 1, std::time::Duration::from_secs(20))
        .await
        .map_err(|e| LoginError::Failed(format!("{e}; nothing was saved")))?;
    if let Some(key) = &key {
        let store = config
            .credentials()
            .map_err(|e| LoginError::Usage(e.to_string()))?;
        let place = store
            .save(&url, key)
            .map_err(|e| LoginError::Failed(format!("cannot store the key: {e}")))?;
        say(format!("✓ key saved in {place}"));
    }
    let path = config
        .config_file
        .clone()
        .unwrap_or_else(|| config.config_dir.join("config.toml"));
    write(&path, provider, (url != BRAVE_URL).then_some(url.as_str()))?;
    say(format!(
        "✓ {} now offers web_search through {}",
        path.display(),
        provider.name()
    ));
    Ok(())
}

/// Brave's key: piped in, typed, or from the environment.
fn brave_key(key_stdin: bool, interactive: bool) -> Result<String, LoginError> {
    let key = if key_stdin {
        Some(super::stdin_key()?)
    } else if interactive {
        dialoguer::Password::new()
            .with_prompt("Brave Search API key (not shown as you type)")
            .interact()
            .ok()
    } else {
        std::env::var("BRAVE_API_KEY").ok()
    };
    let key = key.filter(|k| !k.trim().is_empty()).ok_or_else(|| {
        LoginError::Usage(
            "Brave Search needs a key: pipe it in with --key-stdin, or set BRAVE_API_KEY".into(),
        )
    })?;
    let key = crate::config::checked_key("the key you gave", key.trim())
        .map_err(|e| LoginError::Usage(e.to_string()))?;
    crate::secrets::protect(key.expose(), Vec::new());
    Ok(key.expose().to_string())
}

/// Sets `[web.search]` in the config file at `path`, keeping the rest of it.
fn write(path: &Path, provider: SearchProvider, url: Option<&str>) -> Result<(), LoginError> {
    let failed = |e: String| LoginError::Failed(format!("cannot update {}: {e}", path.display()));
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(failed(e.to_string())),
    };
    let mut doc: DocumentMut = text
        .parse()
        .map_err(|e: toml_edit::TomlError| failed(e.to_string()))?;
    let web = doc
        .entry("web")
        .or_insert(Item::Table(Table::new()))
        .as_table_mut()
        .ok_or_else(|| failed("`web` is not a table".into()))?;
    let mut search = Table::new();
    search["provider"] = value(provider.name());
    if let Some(url) = url {
        search["url"] = value(url);
    }
    web["search"] = Item::Table(search);
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| failed(e.to_string()))?;
    }
    std::fs::write(path, doc.to_string()).map_err(|e| failed(e.to_string()))
}
