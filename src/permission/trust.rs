//! Project trust: a program that a project's own files declare (today: the MCP servers of its
//! `.tandem/config.toml`) starts only after the user trusted that exact definition. A cloned
//! repository must not run its code because tandem opened it.
//!
//! What is trusted is a *definition*: its [`Declared::fingerprint`] is the SHA-256 of a
//! canonical serialisation of everything that changes what runs (for an MCP server: name,
//! command, arguments, environment with its values, URL, headers with their values), so a
//! changed definition is a new one and is asked about again. Answers are remembered in
//! `TANDEM_HOME/trust.json`, keyed by the project's canonical path and the fingerprint:
//! "trusted" (start it without asking) or "refused" (never start it, never ask again). The
//! file is read only when a session opens in a project that declares something, or when the
//! user lists or revokes trust; it is replaced atomically (a temporary file, then a rename).
//! A file that cannot be read as trust entries is reported on stderr and treated as empty
//! (so tandem asks again); it is kept beside as `trust.json.corrupt` when next written.
//! Two tandem processes answering at the same moment may lose one of the two answers (the
//! user is then asked again); never a torn file.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::config::ServerSpec;

/// The file in the data directory that holds the answers.
pub const FILE_NAME: &str = "trust.json";

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

/// Something a project's files declare that would run a program, as the user is asked about
/// it and as an answer about it is remembered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Declared {
    /// What sort of thing it is: `mcp_server`.
    pub kind: &'static str,
    /// Its name in the file.
    pub name: String,
    /// `sha256:<hex>` of its canonical definition.
    pub fingerprint: String,
    /// What it runs, for people: the command line (the names of the variables it sets, never
    /// their values), or the URL it connects to (the names of the headers it sends).
    pub command: String,
    /// The file that declares it.
    pub source: PathBuf,
}

/// The parts of an MCP server's definition that change what runs, in a fixed order with
/// sorted maps: the text that is hashed.
#[derive(Serialize)]
struct CanonicalServer<'a> {
    kind: &'static str,
    name: &'a str,
    command: Option<String>,
    args: &'a [String],
    env: BTreeMap<&'a str, &'a str>,
    url: Option<&'a str>,
    headers: BTreeMap<&'a str, &'a str>,
    sse: bool,
}

impl Declared {
    /// An MCP server declared in `source`.
    pub fn mcp_server(spec: &ServerSpec, source: &Path) -> Declared {
        let canonical = CanonicalServer {
            kind: "mcp_server",
            name: &spec.name,
            command: spec
                .command
                .as_ref()
                .map(|c| c.to_string_lossy().into_owned()),
            args: &spec.args,
            env: sorted(&spec.env),
            url: spec.url.as_deref(),
            headers: sorted(&spec.headers),
            sse: spec.sse,
        };
        let text = serde_json::to_string(&canonical).unwrap_or_default();
        Declared {
            kind: "mcp_server",
            name: spec.name.clone(),
            fingerprint: format!("sha256:{}", hex(&sha256(text.as_bytes()))),
            command: command_line(spec),
            source: source.to_path_buf(),
        }
    }
}

fn sorted(map: &std::collections::HashMap<String, String>) -> BTreeMap<&str, &str> {
    map.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect()
}

/// An MCP server's definition in one line a person can check: the program and its arguments
/// quoted as a POSIX shell would need them, then the names of the variables it sets; or the
/// URL and the names of the headers sent.
pub fn command_line(spec: &ServerSpec) -> String {
    let names = |map: &std::collections::HashMap<String, String>| {
        let mut names: Vec<&str> = map.keys().map(String::as_str).collect();
        names.sort_unstable();
        names.join(", ")
    };
    match (&spec.command, &spec.url) {
        (Some(command), _) => {
            let mut words = vec![command.to_string_lossy().into_owned()];
            words.extend(spec.args.iter().cloned());
            let mut line = words.iter().map(|w| quote(w)).collect::<Vec<_>>().join(" ");
            if !spec.env.is_empty() {
                line.push_str(&format!(" (sets {})", names(&spec.env)));
            }
            line
        }
        (None, Some(url)) if spec.headers.is_empty() => url.clone(),
        (None, Some(url)) => format!("{url} (sends {})", names(&spec.headers)),
        (None, None) => "nothing (neither a command nor a url)".into(),
    }
}

/// One word, quoted for a POSIX shell when it needs it.
fn quote(word: &str) -> String {
    match shlex::try_quote(word) {
        Ok(quoted) => quoted.into_owned(),
        // A NUL byte cannot be quoted; show it escaped rather than hide it.
        Err(_) => format!("{word:?}"),
    }
}

/// SHA-256 of `bytes`, from the ring implementation rustls already links for TLS (no hashing
/// crate of its own).
fn sha256(bytes: &[u8]) -> Vec<u8> {
    use rustls::crypto::ring::cipher_suite::TLS13_AES_128_GCM_SHA256 as SUITE;
    SUITE
        .tls13()
        .map(|suite| suite.common.hash_provider.hash(bytes).as_ref().to_vec())
        .unwrap_or_default()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
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
    pub path: PathBuf,
    /// What the file system said.
    pub source: std::io::Error,
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
    pub fn path(&self) -> &Path {
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
        let temp = dir.join(format!(".{FILE_NAME}.{}.tmp", std::process::id()));
        let written = std::fs::write(&temp, format!("{text}\n"))
            .and_then(|()| std::fs::File::open(&temp).and_then(|f| f.sync_all()))
            .and_then(|()| std::fs::rename(&temp, &self.path));
        if let Err(e) = written {
            let _ = std::fs::remove_file(&temp);
            return Err(fail(e));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn spec(args: &[&str], env: &[(&str, &str)]) -> ServerSpec {
        ServerSpec {
            name: "tools".into(),
            command: Some("/usr/bin/tool server".into()),
            args: args.iter().map(|a| a.to_string()).collect(),
            env: env
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            url: None,
            headers: HashMap::new(),
            sse: false,
        }
    }

    fn declared(spec: &ServerSpec) -> Declared {
        Declared::mcp_server(spec, Path::new("/p/.tandem/config.toml"))
    }

    #[test]
    fn the_fingerprint_changes_with_everything_that_changes_what_runs() {
        let base = declared(&spec(&["--port", "1"], &[("A", "1"), ("B", "2")]));
        assert!(base.fingerprint.starts_with("sha256:"));
        assert_eq!(base.fingerprint.len(), "sha256:".len() + 64);
        // The same definition, its map written in another order: the same fingerprint.
        let again = declared(&spec(&["--port", "1"], &[("B", "2"), ("A", "1")]));
        assert_eq!(base.fingerprint, again.fingerprint);
        let changed = [
            spec(&["--port", "2"], &[("A", "1"), ("B", "2")]),
            spec(&["--port", "1"], &[("A", "1"), ("B", "3")]),
            spec(&["--port", "1"], &[("A", "1")]),
            spec(&["--port"], &[("A", "1"), ("B", "2")]),
            ServerSpec {
                name: "other".into(),
                ..spec(&["--port", "1"], &[("A", "1"), ("B", "2")])
            },
            ServerSpec {
                command: Some("/usr/bin/tool".into()),
                ..spec(&["--port", "1"], &[("A", "1"), ("B", "2")])
            },
        ];
        for other in &changed {
            assert_ne!(base.fingerprint, declared(other).fingerprint, "{other:?}");
        }
        let mut http =
            ServerSpec::remote("web".into(), "https://a/mcp".into(), HashMap::new(), false);
        let plain = declared(&http).fingerprint;
        http.headers
            .insert("Authorization".into(), "Bearer x".into());
        assert_ne!(plain, declared(&http).fingerprint);
    }

    #[test]
    fn sha256_is_sha256() {
        assert_eq!(
            hex(&sha256(b"abc")),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn the_command_line_names_variables_and_headers_but_not_their_values() {
        let line = command_line(&spec(
            &["-y", "two words"],
            &[("TOKEN", "s3cret"), ("A", "1")],
        ));
        assert_eq!(
            line,
            "'/usr/bin/tool server' -y 'two words' (sets A, TOKEN)"
        );
        let mut http =
            ServerSpec::remote("web".into(), "https://a/mcp".into(), HashMap::new(), false);
        assert_eq!(command_line(&http), "https://a/mcp");
        http.headers
            .insert("Authorization".into(), "Bearer x".into());
        assert_eq!(command_line(&http), "https://a/mcp (sends Authorization)");
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
