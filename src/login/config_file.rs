//! Writes what `tandem login` chose into the user's config file, keeping the rest of the file
//! (comments, order, other settings) as it was.

use std::path::Path;

use toml_edit::{DocumentMut, value};

/// The server and model a login settled on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Settled {
    /// A preset's name, or `None` for a URL of the user's own.
    pub(crate) provider: Option<String>,
    /// The base URL, or `None` for the preset's own.
    pub(crate) base_url: Option<String>,
    /// The model new sessions start with.
    pub(crate) model: String,
}

/// Why the file could not be updated.
#[derive(Debug, thiserror::Error)]
pub(crate) enum WriteError {
    /// Reading or writing failed.
    #[error("cannot update {path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The cause.
        source: std::io::Error,
    },
    /// The file is not valid TOML.
    #[error("cannot update {path}: it is not valid TOML ({message}); fix it or remove it")]
    Parse {
        /// The file.
        path: String,
        /// The parser's words.
        message: String,
    },
}

/// `text` with `provider`, `base_url` and `model` set to `choice` (a key it leaves
/// out is removed, so an old URL cannot outlive a new preset).
pub(crate) fn updated(text: &str, choice: &Settled) -> Result<String, toml_edit::TomlError> {
    let mut doc: DocumentMut = text.parse()?;
    match &choice.provider {
        Some(name) => doc["provider"] = value(name.as_str()),
        None => {
            doc.remove("provider");
        }
    }
    match &choice.base_url {
        Some(url) => doc["base_url"] = value(url.as_str()),
        None => {
            doc.remove("base_url");
        }
    }
    doc["model"] = value(choice.model.as_str());
    Ok(doc.to_string())
}

/// Updates (or creates) the config file at `path`.
pub(crate) fn write(path: &Path, choice: &Settled) -> Result<(), WriteError> {
    let shown = path.display().to_string();
    let io = |source| WriteError::Io {
        path: shown.clone(),
        source,
    };
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(io(e)),
    };
    let text = updated(&text, choice).map_err(|e| WriteError::Parse {
        path: shown.clone(),
        message: e.to_string().lines().next().unwrap_or_default().to_string(),
    })?;
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(io)?;
    }
    std::fs::write(path, text).map_err(io)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_preset_replaces_a_url_and_comments_and_tables_stay() {
        let before =
            "# mine\nmode = \"ask\"\nbase_url = \"http://old/v1\"\n\n[[models]]\nid = \"x\"\n";
        let after = updated(
            before,
            &Settled {
                provider: Some("openrouter".into()),
                base_url: None,
                model: "m/1".into(),
            },
        )
        .unwrap();
        assert!(after.starts_with("# mine\n"), "{after}");
        assert!(!after.contains("base_url"), "{after}");
        assert!(after.contains("provider = \"openrouter\""), "{after}");
        assert!(after.contains("model = \"m/1\""), "{after}");
        assert!(after.contains("[[models]]\nid = \"x\""), "{after}");
        let parsed: toml::Table = toml::from_str(&after).unwrap();
        assert_eq!(parsed["mode"].as_str(), Some("ask"));
        assert_eq!(parsed["model"].as_str(), Some("m/1"));
    }

    #[test]
    fn a_url_of_ones_own_drops_the_preset() {
        let after = updated(
            "provider = \"openai\"\n",
            &Settled {
                provider: None,
                base_url: Some("http://box:8000/v1".into()),
                model: "qwen".into(),
            },
        )
        .unwrap();
        let parsed: toml::Table = toml::from_str(&after).unwrap();
        assert!(parsed.get("provider").is_none());
        assert_eq!(parsed["base_url"].as_str(), Some("http://box:8000/v1"));
    }
}
