//! Project trust: a program that a project's own files declare (today: the MCP servers of its
//! `.tandem/config.toml`) starts only after the user trusted that exact definition. A cloned
//! repository must not run its code because tandem opened it.
//!
//! What is trusted is a *definition*: its [`Declared::fingerprint`] is the SHA-256 of a
//! canonical serialisation of everything that changes what runs (for an MCP server: name,
//! command, arguments, environment with its values, URL, headers with their values, and the
//! content of the files that decide the code that starts, resolved per runner in runs/: the
//! script, the module `python -m` imports, the folder `node` runs and its package.json), so a
//! changed definition is a new one and is asked about again. What tandem cannot cover (a
//! package from a registry, a program it does not know) is said in [`Declared::uncovered`]
//! and in the question. The fingerprint is read again before every start and restart of a
//! trusted server (mcp/), so a change made while a session runs is asked about too. Answers are remembered in
//! `TANDEM_HOME/trust.json`, keyed by the project's canonical path and the fingerprint:
//! "trusted" (start it without asking) or "refused" (never start it, never ask again). The
//! file is read only when a session opens in a project that declares something, or when the
//! user lists or revokes trust; it is replaced atomically (a temporary file, then a rename).
//! A file that cannot be read as trust entries is reported on stderr and treated as empty
//! (so tandem asks again); it is kept beside as `trust.json.corrupt` when next written.
//! Two tandem processes answering at the same moment may lose one of the two answers (the
//! user is then asked again); never a torn file.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

mod declared;
mod runs;

pub use declared::{Declared, command_line};

/// The file in the data directory that holds the answers.
pub(crate) const FILE_NAME: &str = "trust.json";

/// The format of the file; a future change of layout bumps it.
const VERSION: u32 = 1;

/// What `_tandem/status` says of a project server that waits for the user's answer.
pub const HELD: &str =
    "declared by the project; tandem asks before starting it, at the session's next prompt";
/// What it says of one the user refused for good.
pub const REFUSED: &str = "declared by the project; you refused to trust this definition (`/permissions untrust` forgets that)";
/// What it says of one the user declined for the session.
pub const DECLINED: &str = "declared by the project; not trusted in this session";

/// Serialises read-modify-write cycles on the file within this process.
static WRITING: parking_lot::Mutex<()> = parking_lot::Mutex::new(());

/// The user's standing answer about one definition in one project.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Start it without asking.
    Trusted,
    /// Never start it, and do not ask again.
    Refused,
}

impl Verdict {
    /// The word `/permissions`, `_tandem/status` and `tandem trust` use.
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Trusted => "trusted",
            Verdict::Refused => "refused",
        }
    }
}

/// One remembered answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TrustEntry {
    /// The project (its canonical path).
    pub project: PathBuf,
    /// What sort of thing: `mcp_server`.
    pub kind: String,
    /// Its name when the answer was given.
    pub name: String,
    /// `sha256:<hex>` of its definition.
    pub fingerprint: String,
    /// What it runs, as the user was shown it.
    pub command: String,
    /// The answer.
    pub verdict: Verdict,
    /// When it was given (RFC 3339, UTC).
    pub at: String,
}

impl TrustEntry {
    /// The answer `verdict` about `declared` in `project`, given now.
    pub fn now(project: &Path, declared: &Declared, verdict: Verdict) -> TrustEntry {
        TrustEntry {
            project: project.to_path_buf(),
            kind: declared.kind.to_string(),
            name: declared.name.clone(),
            fingerprint: declared.fingerprint.clone(),
            command: declared.command.clone(),
            verdict,
            at: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        }
    }
}

/// The file's contents.
#[derive(Debug, Default, Serialize, Deserialize)]
struct Contents {
    version: u32,
    #[serde(default)]
    entries: Vec<TrustEntry>,
}

/// Why an answer could not be remembered or forgotten.
#[derive(Debug, thiserror::Error)]
#[error("cannot write {}: {source}", path.display())]
pub struct TrustError {
    /// The trust file.
    pub(crate) path: PathBuf,
    /// What the file system said.
    pub(crate) source: std::io::Error,
}

/// The remembered answers, in `TANDEM_HOME/trust.json`.
#[derive(Debug, Clone)]
pub struct TrustStore {
    path: PathBuf,
}

impl TrustStore {
    /// The store of the data directory `home`; nothing is read yet.
    pub fn new(home: &Path) -> TrustStore {
        TrustStore {
            path: home.join(FILE_NAME),
        }
    }

    /// Where the answers are kept.
    #[cfg(test)]
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Every remembered answer (none when the file is missing or unreadable).
    pub fn entries(&self) -> Vec<TrustEntry> {
        self.read().unwrap_or_default().entries
    }

    /// The answers about `project`, oldest first.
    pub fn for_project(&self, project: &Path) -> Vec<TrustEntry> {
        let mut entries = self.entries();
        entries.retain(|e| e.project == project);
        entries
    }

    /// The standing answer about the definition `fingerprint` in `project`, if any.
    pub fn verdict(&self, project: &Path, fingerprint: &str) -> Option<Verdict> {
        self.entries()
            .into_iter()
            .find(|e| e.project == project && e.fingerprint == fingerprint)
            .map(|e| e.verdict)
    }

    /// Remembers `entry`, replacing an earlier answer about the same definition in the same
    /// project.
    pub fn remember(&self, entry: TrustEntry) -> Result<(), TrustError> {
        let _writing = WRITING.lock();
        let mut contents = self.read_for_update();
        contents
            .entries
            .retain(|e| !(e.project == entry.project && e.fingerprint == entry.fingerprint));
        contents.entries.push(entry);
        self.write(&contents)
    }

    /// Forgets every answer about `project` (about every project when `None`); returns what
    /// was forgotten.
    pub fn forget(&self, project: Option<&Path>) -> Result<Vec<TrustEntry>, TrustError> {
        let _writing = WRITING.lock();
        let mut contents = self.read_for_update();
        let (gone, kept) = contents
            .entries
            .into_iter()
            .partition(|e| project.is_none_or(|p| e.project == p));
        contents.entries = kept;
        if gone.is_empty() {
            return Ok(gone);
        }
        self.write(&contents)?;
        Ok(gone)
    }

    /// The file's contents; `None` (said on stderr) when it exists but cannot be read as
    /// trust entries; empty when it does not exist.
    fn read(&self) -> Option<Contents> {
        let text = match std::fs::read_to_string(&self.path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Some(Contents::default());
            }
            Err(e) => {
                tracing::warn!(path = %self.path.display(), "cannot read the project trust file; every project program asks again: {e}");
                return None;
            }
        };
        match serde_json::from_str::<Contents>(&text) {
            Ok(contents) if contents.version == VERSION => Some(contents),
            Ok(contents) => {
                tracing::warn!(path = %self.path.display(), version = contents.version, "the project trust file has a format this tandem does not know; every project program asks again");
                None
            }
            Err(e) => {
                tracing::warn!(path = %self.path.display(), "the project trust file is corrupt; every project program asks again: {e}");
                None
            }
        }
    }

    /// The contents to change; an unreadable file is moved aside first (to
    /// `trust.json.corrupt`), so writing does not destroy what someone may want to inspect.
    fn read_for_update(&self) -> Contents {
        match self.read() {
            Some(contents) => contents,
            None => {
                let aside = self.path.with_extension("json.corrupt");
                if let Err(e) = std::fs::rename(&self.path, &aside) {
                    tracing::warn!(path = %self.path.display(), "cannot move the unreadable trust file aside: {e}");
                }
                Contents::default()
            }
        }
    }

    /// Replaces the file with `contents`: a temporary file beside it, then a rename.
    fn write(&self, contents: &Contents) -> Result<(), TrustError> {
        let fail = |source| TrustError {
            path: self.path.clone(),
            source,
        };
        let contents = Contents {
            version: VERSION,
            entries: contents.entries.clone(),
        };
        let text =
            serde_json::to_string_pretty(&contents).map_err(|e| fail(std::io::Error::other(e)))?;
        let dir = self.path.parent().unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir).map_err(fail)?;
        // Through the file layer: an exclusive temp file under a random name (a link waiting
        // under a predictable one would take the write), renamed in the open folder.
        let name = self.path.file_name().unwrap_or(FILE_NAME.as_ref());
        let real = crate::platform::canonical(dir).map_err(fail)?.join(name);
        crate::platform::exact::replace(&real, format!("{text}\n").as_bytes()).map_err(fail)?;
        if let Ok(file) = crate::platform::exact::open(&real) {
            let _ = crate::platform::private::tighten(&file);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ServerSpec;
    use std::collections::HashMap;

    fn spec(args: &[&str], env: &[(&str, &str)]) -> ServerSpec {
        let mut spec = ServerSpec::local(
            "tools".into(),
            "/usr/bin/tool server".into(),
            args.iter().map(|a| a.to_string()).collect(),
            HashMap::new(),
        );
        spec.env = env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        spec
    }

    fn declared(spec: &ServerSpec) -> Declared {
        Declared::mcp_server(spec, Path::new("/p/.tandem/config.toml"))
    }

    #[test]
    fn answers_are_kept_per_project_and_definition_and_can_be_forgotten() {
        let dir = tempfile::tempdir().unwrap();
        let store = TrustStore::new(dir.path());
        let one = declared(&spec(&["1"], &[]));
        let two = declared(&spec(&["2"], &[]));
        let (p, q) = (Path::new("/p"), Path::new("/q"));
        assert_eq!(
            store.verdict(p, &one.fingerprint),
            None,
            "no file: no answers"
        );
        store
            .remember(TrustEntry::now(p, &one, Verdict::Trusted))
            .unwrap();
        store
            .remember(TrustEntry::now(p, &two, Verdict::Refused))
            .unwrap();
        store
            .remember(TrustEntry::now(q, &one, Verdict::Refused))
            .unwrap();
        assert_eq!(store.verdict(p, &one.fingerprint), Some(Verdict::Trusted));
        assert_eq!(store.verdict(p, &two.fingerprint), Some(Verdict::Refused));
        assert_eq!(store.verdict(q, &one.fingerprint), Some(Verdict::Refused));
        // A new answer about the same definition replaces the old one.
        store
            .remember(TrustEntry::now(p, &one, Verdict::Refused))
            .unwrap();
        assert_eq!(store.verdict(p, &one.fingerprint), Some(Verdict::Refused));
        assert_eq!(store.for_project(p).len(), 2);
        let gone = store.forget(Some(p)).unwrap();
        assert_eq!(gone.len(), 2);
        assert_eq!(store.verdict(p, &one.fingerprint), None);
        assert_eq!(store.verdict(q, &one.fingerprint), Some(Verdict::Refused));
        assert_eq!(store.forget(None).unwrap().len(), 1);
        assert!(store.entries().is_empty());
    }

    #[test]
    fn a_corrupt_file_counts_as_empty_and_is_kept_aside_when_written() {
        let dir = tempfile::tempdir().unwrap();
        let store = TrustStore::new(dir.path());
        std::fs::write(store.path(), "{ not json").unwrap();
        let one = declared(&spec(&[], &[]));
        assert_eq!(store.verdict(Path::new("/p"), &one.fingerprint), None);
        store
            .remember(TrustEntry::now(Path::new("/p"), &one, Verdict::Trusted))
            .unwrap();
        assert_eq!(
            store.verdict(Path::new("/p"), &one.fingerprint),
            Some(Verdict::Trusted)
        );
        let aside = std::fs::read_to_string(dir.path().join("trust.json.corrupt")).unwrap();
        assert_eq!(aside, "{ not json");
    }
}
