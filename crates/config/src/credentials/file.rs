//! The fallback store: `credentials.toml` in the config directory, readable only by the
//! user (mode 0600 on Unix, and a file found looser is tightened when it is read; on Windows
//! the profile directory's own access rules apply). It is replaced whole: a new file made
//! exclusively under an unpredictable name beside it, synced, then renamed over it.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use super::CredentialError;

/// The file's name inside the config directory.
pub const FILE_NAME: &str = "credentials.toml";

#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
struct Contents {
    /// Keys by model server base URL.
    #[serde(default)]
    keys: BTreeMap<String, String>,
}

/// The credentials file of `config_dir`.
#[derive(Debug, Clone)]
pub struct KeyFile {
    path: PathBuf,
}

impl KeyFile {
    /// The file in `config_dir` (it need not exist yet).
    pub fn new(config_dir: &Path) -> Self {
        Self {
            path: config_dir.join(FILE_NAME),
        }
    }

    /// Where it is.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    fn read(&self) -> Result<Contents, CredentialError> {
        // Keys are the user's alone, whoever made the file and however.
        if let Err(e) = crate::platform::private::tighten_path(&self.path) {
            tracing::warn!(path = %self.path.display(), "cannot make the credentials file private (0600): {e}");
        }
        match std::fs::read_to_string(&self.path) {
            Ok(text) => toml::from_str(&text).map_err(|e| CredentialError::File {
                path: self.path.clone(),
                message: e.to_string(),
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Contents::default()),
            Err(e) => Err(self.io_error(&e)),
        }
    }

    fn io_error(&self, e: &std::io::Error) -> CredentialError {
        CredentialError::File {
            path: self.path.clone(),
            message: e.to_string(),
        }
    }

    /// The key stored for `server`.
    pub(crate) fn get(&self, server: &str) -> Result<Option<String>, CredentialError> {
        Ok(self.read()?.keys.remove(server))
    }

    /// Every key in the file, whatever server it is for: what a command may read here is
    /// redacted before the model sees it (`secrets::watch_key_file`).
    pub(crate) fn keys(&self) -> Result<Vec<String>, CredentialError> {
        Ok(self.read()?.keys.into_values().collect())
    }

    /// Stores `key` for `server`, replacing the file atomically with one only the user can
    /// read.
    pub(crate) fn set(&self, server: &str, key: &str) -> Result<(), CredentialError> {
        let mut contents = self.read()?;
        contents.keys.insert(server.to_string(), key.to_string());
        self.write(&contents)
    }

    /// Removes the key for `server`; whether there was one. The file goes when it is empty.
    pub(crate) fn remove(&self, server: &str) -> Result<bool, CredentialError> {
        let mut contents = self.read()?;
        let had = contents.keys.remove(server).is_some();
        if contents.keys.is_empty() {
            match std::fs::remove_file(&self.path) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(self.io_error(&e)),
            }
        } else if had {
            self.write(&contents)?;
        }
        Ok(had)
    }

    fn write(&self, contents: &Contents) -> Result<(), CredentialError> {
        let text = toml::to_string(contents).map_err(|e| CredentialError::File {
            path: self.path.clone(),
            message: e.to_string(),
        })?;
        let text = format!(
            "# tandem's API keys, by model server. Written by `tandem login`; `tandem logout` removes them.\n{text}"
        );
        let dir = self.path.parent().unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir).map_err(|e| self.io_error(&e))?;
        // Made exclusively (never through a link planted at a known name), 0600; removed
        // when anything fails before the rename.
        let mut temp = tempfile::Builder::new()
            .prefix(&format!(".{FILE_NAME}."))
            .suffix(".tmp")
            .tempfile_in(dir)
            .map_err(|e| self.io_error(&e))?;
        temp.write_all(text.as_bytes())
            .and_then(|()| temp.as_file().sync_all())
            .map_err(|e| self.io_error(&e))?;
        temp.persist(&self.path)
            .map_err(|e| self.io_error(&e.error))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_kept_by_server_and_the_file_goes_with_the_last() {
        let dir = tempfile::tempdir().unwrap();
        let file = KeyFile::new(dir.path());
        assert_eq!(file.get("https://a/v1").unwrap(), None);
        file.set("https://a/v1", "sk-a").unwrap();
        file.set("https://b/v1", "sk-b").unwrap();
        assert_eq!(file.get("https://a/v1").unwrap().as_deref(), Some("sk-a"));
        assert_eq!(file.keys().unwrap(), ["sk-a", "sk-b"]);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(file.path()).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        assert!(file.remove("https://a/v1").unwrap());
        assert!(!file.remove("https://a/v1").unwrap());
        assert!(file.path().exists());
        assert!(file.remove("https://b/v1").unwrap());
        assert!(!file.path().exists());
    }

    #[test]
    fn a_damaged_file_is_an_error_that_names_it() {
        let dir = tempfile::tempdir().unwrap();
        let file = KeyFile::new(dir.path());
        std::fs::write(file.path(), "keys = [").unwrap();
        let e = file.get("https://a/v1").unwrap_err().to_string();
        assert!(e.contains(FILE_NAME), "{e}");
    }
}
