//! Where `tandem login` keeps API keys: the system's credential store (macOS Keychain,
//! Windows Credential Manager, the Secret Service on Linux) through `keyring`, or, where no
//! such store answers, a file only the user can read in the config directory.
//!
//! Keys are stored by model server base URL, so a key for one server never reaches another.
//! `TANDEM_CREDENTIAL_STORE` = `keyring` or `file` pins one store; unset, the system store is
//! tried first. Every key saved or removed also renews the login stamp (stamp.rs), which is
//! how agents already running hear of it.

mod file;
pub mod stamp;

use std::path::{Path, PathBuf};

pub use file::{FILE_NAME, KeyFile};

/// The service name keys are filed under in the system store.
const SERVICE: &str = "tandem";

/// Why a key could not be read, saved or removed.
#[derive(Debug, thiserror::Error)]
pub enum CredentialError {
    /// The credentials file is unreadable or damaged.
    #[error("the credentials file {path} cannot be used: {message}")]
    File {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
    /// The system store failed (and the file was not allowed as a fallback).
    #[error("the system credential store failed: {0}")]
    Keyring(String),
    /// `TANDEM_CREDENTIAL_STORE` names no store.
    #[error("TANDEM_CREDENTIAL_STORE is `{0}`; use `keyring` or `file`")]
    UnknownStore(String),
}

/// Which stores may be used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum StoreChoice {
    /// The system store, and the file where it does not answer.
    Auto,
    /// Only the system store.
    Keyring,
    /// Only the file.
    File,
}

impl StoreChoice {
    /// From `TANDEM_CREDENTIAL_STORE`'s value (unset or empty: [`StoreChoice::Auto`]).
    pub(crate) fn parse(value: Option<&str>) -> Result<Self, CredentialError> {
        match value.map(str::trim).unwrap_or("") {
            "" | "auto" => Ok(StoreChoice::Auto),
            "keyring" => Ok(StoreChoice::Keyring),
            "file" => Ok(StoreChoice::File),
            other => Err(CredentialError::UnknownStore(other.to_string())),
        }
    }
}

/// Where a key is kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeyStore {
    /// The system's credential store.
    Keyring,
    /// The credentials file.
    File(PathBuf),
}

impl std::fmt::Display for KeyStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            KeyStore::Keyring => f.write_str(system_store_name()),
            KeyStore::File(path) => write!(f, "{} (readable only by you)", path.display()),
        }
    }
}

/// The system store's name, as the user knows it.
pub fn system_store_name() -> &'static str {
    if cfg!(target_os = "macos") {
        "the macOS Keychain"
    } else if cfg!(windows) {
        "the Windows Credential Manager"
    } else {
        "the system keyring (Secret Service)"
    }
}

/// The stores of one config directory.
#[derive(Debug, Clone)]
pub struct Credentials {
    choice: StoreChoice,
    file: KeyFile,
    /// Where the login stamp is renewed.
    config_dir: PathBuf,
}

impl Credentials {
    /// The stores for `config_dir`, limited by `choice`.
    pub(crate) fn new(config_dir: &Path, choice: StoreChoice) -> Self {
        Self {
            choice,
            file: KeyFile::new(config_dir),
            config_dir: config_dir.to_path_buf(),
        }
    }

    /// Where `save` keeps a key, as the user knows it: the store in use, not a guess (the
    /// system store is not asked, so that saying this costs nothing at start-up).
    pub fn where_kept(&self) -> String {
        let file = KeyStore::File(self.file.path().to_path_buf());
        match self.choice {
            StoreChoice::File => file.to_string(),
            StoreChoice::Keyring => system_store_name().to_string(),
            StoreChoice::Auto => {
                format!("{} where one answers, else in {file}", system_store_name())
            }
        }
    }

    /// The key stored for `server` and where it was found: the system store first.
    pub fn lookup(&self, server: &str) -> Result<Option<(String, KeyStore)>, CredentialError> {
        if self.choice != StoreChoice::File {
            match system::get(server) {
                Ok(Some(key)) => return Ok(Some((key, KeyStore::Keyring))),
                Ok(None) => {}
                Err(e) if self.choice == StoreChoice::Keyring => return Err(e),
                Err(e) => tracing::debug!("no system credential store: {e}"),
            }
        }
        if self.choice == StoreChoice::Keyring {
            return Ok(None);
        }
        Ok(self
            .file
            .get(server)?
            .map(|key| (key, KeyStore::File(self.file.path().to_path_buf()))))
    }

    /// Stores `key` for `server`: in the system store when it answers, else in the file.
    pub fn save(&self, server: &str, key: &str) -> Result<KeyStore, CredentialError> {
        let saved = self.save_in_a_store(server, key);
        stamp::touch(&self.config_dir);
        saved
    }

    fn save_in_a_store(&self, server: &str, key: &str) -> Result<KeyStore, CredentialError> {
        if self.choice != StoreChoice::File {
            match system::set(server, key) {
                Ok(()) => {
                    // An older copy in the file would only confuse a later logout.
                    if self.choice == StoreChoice::Auto {
                        let _ = self.file.remove(server);
                    }
                    return Ok(KeyStore::Keyring);
                }
                Err(e) if self.choice == StoreChoice::Keyring => return Err(e),
                Err(e) => tracing::debug!("no system credential store, using the file: {e}"),
            }
        }
        self.file.set(server, key)?;
        Ok(KeyStore::File(self.file.path().to_path_buf()))
    }

    /// Removes every stored key for `server`; where they were.
    pub fn remove(&self, server: &str) -> Result<Vec<KeyStore>, CredentialError> {
        let removed = self.remove_from_the_stores(server);
        stamp::touch(&self.config_dir);
        removed
    }

    fn remove_from_the_stores(&self, server: &str) -> Result<Vec<KeyStore>, CredentialError> {
        let mut removed = Vec::new();
        if self.choice != StoreChoice::File {
            match system::delete(server) {
                Ok(true) => removed.push(KeyStore::Keyring),
                Ok(false) => {}
                Err(e) if self.choice == StoreChoice::Keyring => return Err(e),
                Err(e) => tracing::debug!("no system credential store: {e}"),
            }
        }
        if self.choice != StoreChoice::Keyring && self.file.remove(server)? {
            removed.push(KeyStore::File(self.file.path().to_path_buf()));
        }
        Ok(removed)
    }
}

/// The system store through `keyring`. Each call runs on a thread of its own: the Secret
/// Service client blocks on a runtime of its own, which must not be nested in tandem's.
mod system {
    use super::{CredentialError, SERVICE};

    fn off_runtime<T: Send>(f: impl FnOnce() -> T + Send) -> Result<T, CredentialError> {
        std::thread::scope(|scope| scope.spawn(f).join())
            .map_err(|_| CredentialError::Keyring("the credential store call panicked".into()))
    }

    fn failed(e: keyring::Error) -> CredentialError {
        CredentialError::Keyring(e.to_string())
    }

    pub(super) fn get(server: &str) -> Result<Option<String>, CredentialError> {
        off_runtime(|| {
            let entry = keyring::Entry::new(SERVICE, server).map_err(failed)?;
            match entry.get_password() {
                Ok(key) => Ok(Some(key)),
                Err(keyring::Error::NoEntry) => Ok(None),
                Err(e) => Err(failed(e)),
            }
        })?
    }

    pub(super) fn set(server: &str, key: &str) -> Result<(), CredentialError> {
        off_runtime(|| {
            let entry = keyring::Entry::new(SERVICE, server).map_err(failed)?;
            entry.set_password(key).map_err(failed)?;
            // Some stores accept a write they cannot give back (a locked or session-only
            // keyring): only a key that reads back counts as saved.
            match entry.get_password() {
                Ok(stored) if stored == key => Ok(()),
                Ok(_) => Err(CredentialError::Keyring(
                    "the key read back differs from the one written".into(),
                )),
                Err(e) => Err(failed(e)),
            }
        })?
    }

    pub(super) fn delete(server: &str) -> Result<bool, CredentialError> {
        off_runtime(|| {
            let entry = keyring::Entry::new(SERVICE, server).map_err(failed)?;
            match entry.delete_credential() {
                Ok(()) => Ok(true),
                Err(keyring::Error::NoEntry) => Ok(false),
                Err(e) => Err(failed(e)),
            }
        })?
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_store_choice_parses_and_unknown_names_are_refused() {
        assert_eq!(StoreChoice::parse(None).unwrap(), StoreChoice::Auto);
        assert_eq!(
            StoreChoice::parse(Some(" file ")).unwrap(),
            StoreChoice::File
        );
        assert_eq!(
            StoreChoice::parse(Some("keyring")).unwrap(),
            StoreChoice::Keyring
        );
        assert!(StoreChoice::parse(Some("vault")).is_err());
    }

    #[test]
    fn the_file_store_alone_saves_looks_up_and_removes() {
        let dir = tempfile::tempdir().unwrap();
        let store = Credentials::new(dir.path(), StoreChoice::File);
        let place = store.save("http://x/v1", "sk-1").unwrap();
        assert_eq!(place, KeyStore::File(dir.path().join(FILE_NAME)));
        let (key, found) = store.lookup("http://x/v1").unwrap().unwrap();
        assert_eq!((key.as_str(), &found), ("sk-1", &place));
        assert!(store.lookup("http://y/v1").unwrap().is_none());
        let saved = stamp::read(dir.path()).expect("a save renews the stamp");
        assert_eq!(store.remove("http://x/v1").unwrap(), vec![place]);
        assert!(store.lookup("http://x/v1").unwrap().is_none());
        assert_ne!(
            stamp::read(dir.path()),
            Some(saved),
            "and so does a removal"
        );
    }
}
