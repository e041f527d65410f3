//! A definition a project declares, as the user is asked about it and as an answer about
//! it is remembered: its fingerprint (what is hashed decides when tandem asks again), the
//! files it covers and what it does not (runs/), and the one line a person reads.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::runs::{self, Runs};
use crate::config::ServerSpec;

/// Something a project's files declare that would run a program, as the user is asked about
/// it and as an answer about it is remembered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Declared {
    /// What sort of thing it is: `mcp_server`.
    pub(crate) kind: &'static str,
    /// Its name in the file.
    pub name: String,
    /// `sha256:<hex>` of its canonical definition.
    pub fingerprint: String,
    /// What it runs, for people: the command line (the names of the variables it sets, never
    /// their values), or the URL it connects to (the names of the headers it sends).
    pub command: String,
    /// The file that declares it.
    pub(crate) source: PathBuf,
    /// The files whose content the fingerprint holds (canonical path → SHA-256 hex, or why
    /// there is none), as they were when it was read.
    pub(crate) files: BTreeMap<String, String>,
    /// What those files do not cover, one sentence each for people.
    pub uncovered: Vec<String>,
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
    /// The folder it runs in.
    cwd: Option<String>,
    /// The SHA-256 of each file that decides what runs (runs/: the program, the entry its
    /// runner picks, the manifest that selects it, any project file an argument names), so an
    /// edit of the code a trusted definition runs asks again.
    files: &'a BTreeMap<String, String>,
}

impl Declared {
    /// An MCP server declared in `source`, its files read now.
    pub fn mcp_server(spec: &ServerSpec, source: &Path) -> Declared {
        let runs = runs::resolve(spec);
        let files = hashed(&runs);
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
            cwd: spec.cwd.as_ref().map(|d| d.to_string_lossy().into_owned()),
            files: &files,
        };
        let text = serde_json::to_string(&canonical).unwrap_or_default();
        Declared {
            kind: "mcp_server",
            name: spec.name.clone(),
            fingerprint: format!("sha256:{}", hex(&sha256(text.as_bytes()))),
            command: command_line(spec),
            source: source.to_path_buf(),
            files,
            uncovered: runs.uncovered,
        }
    }

    /// The project folder: the one that holds the `.tandem/` of [`Declared::source`].
    fn project(&self) -> Option<&Path> {
        self.source.parent()?.parent()
    }

    /// A covered file's path for people: relative to the project when it is inside.
    fn shown(&self, path: &str) -> String {
        let path = Path::new(path);
        match self.project().and_then(|p| {
            let p = crate::platform::canonical(p).unwrap_or_else(|_| p.to_path_buf());
            path.strip_prefix(p).ok().map(Path::to_path_buf)
        }) {
            Some(inside) => inside.display().to_string(),
            None => path.display().to_string(),
        }
    }

    /// The covered files for people (relative to the project when inside it), sorted.
    pub fn covers(&self) -> Vec<String> {
        self.files.keys().map(|path| self.shown(path)).collect()
    }

    /// What differs in `now` from this definition as it was trusted, for people
    /// ("`tools/mcp.sh` changed"); `None` when nothing does.
    pub fn changes(&self, now: &Declared) -> Option<String> {
        if self.fingerprint == now.fingerprint {
            return None;
        }
        let mut said = Vec::new();
        for (path, hash) in &now.files {
            match self.files.get(path) {
                Some(before) if before == hash => {}
                Some(_) => said.push(format!("`{}` changed", self.shown(path))),
                None => said.push(format!("`{}` now runs too", self.shown(path))),
            }
        }
        for path in self.files.keys().filter(|p| !now.files.contains_key(*p)) {
            said.push(format!("`{}` no longer runs", self.shown(path)));
        }
        Some(match said.is_empty() {
            true => "its definition changed".into(),
            false => said.join(", "),
        })
    }
}

/// Most bytes of one named file that are hashed (a larger one is named by its size).
const MAX_HASHED: u64 = 16 << 20;

/// The files `runs` covers, each with the SHA-256 of its content (or why there is none).
fn hashed(runs: &Runs) -> BTreeMap<String, String> {
    runs.files
        .iter()
        .map(|covered| {
            let hash = match std::fs::metadata(&covered.path) {
                Ok(meta) if meta.len() > MAX_HASHED => format!("{} bytes", meta.len()),
                _ => match std::fs::read(&covered.path) {
                    Ok(bytes) => hex(&sha256(&bytes)),
                    Err(e) => format!("unreadable: {e}"),
                },
            };
            (covered.path.to_string_lossy().into_owned(), hash)
        })
        .collect()
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
            cwd: None,
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
    fn an_edit_of_the_script_a_definition_runs_is_a_new_definition() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("tools")).unwrap();
        std::fs::write(dir.path().join("tools/mcp.js"), "serve()").unwrap();
        let spec = ServerSpec {
            cwd: Some(dir.path().to_path_buf()),
            ..ServerSpec::local(
                "tools".into(),
                "node".into(),
                vec!["tools/mcp.js".into()],
                HashMap::new(),
            )
        };
        let before = declared(&spec).fingerprint;
        assert_eq!(before, declared(&spec).fingerprint);
        std::fs::write(dir.path().join("tools/mcp.js"), "serve(); steal()").unwrap();
        assert_ne!(before, declared(&spec).fingerprint);
    }

    #[test]
    fn the_module_python_runs_is_covered_and_its_change_is_named() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(".tandem")).unwrap();
        std::fs::write(dir.path().join("srv.py"), "serve()").unwrap();
        let spec = ServerSpec {
            cwd: Some(dir.path().to_path_buf()),
            ..ServerSpec::local(
                "srv".into(),
                "python3".into(),
                vec!["-m".into(), "srv".into()],
                HashMap::new(),
            )
        };
        let source = dir.path().join(".tandem/config.toml");
        let trusted = Declared::mcp_server(&spec, &source);
        assert_eq!(trusted.covers(), ["srv.py"]);
        assert!(trusted.uncovered.is_empty(), "{:?}", trusted.uncovered);
        assert_eq!(trusted.changes(&Declared::mcp_server(&spec, &source)), None);
        std::fs::write(dir.path().join("srv.py"), "serve(); steal()").unwrap();
        let now = Declared::mcp_server(&spec, &source);
        assert_ne!(trusted.fingerprint, now.fingerprint);
        assert_eq!(trusted.changes(&now).as_deref(), Some("`srv.py` changed"));
        // A package of the same name now comes first: what runs moved.
        std::fs::create_dir_all(dir.path().join("srv")).unwrap();
        std::fs::write(dir.path().join("srv/__init__.py"), "").unwrap();
        std::fs::write(dir.path().join("srv/__main__.py"), "").unwrap();
        let moved = Declared::mcp_server(&spec, &source);
        assert_eq!(
            trusted.changes(&moved).as_deref(),
            Some(
                "`srv/__init__.py` now runs too, `srv/__main__.py` now runs too, `srv.py` no longer runs"
            )
        );
    }

    #[test]
    fn what_is_not_covered_is_said() {
        let dir = tempfile::tempdir().unwrap();
        let spec = ServerSpec {
            cwd: Some(dir.path().to_path_buf()),
            ..ServerSpec::local(
                "fs".into(),
                "npx".into(),
                vec![
                    "-y".into(),
                    "@modelcontextprotocol/server-filesystem".into(),
                ],
                HashMap::new(),
            )
        };
        let declared = Declared::mcp_server(&spec, &dir.path().join(".tandem/config.toml"));
        assert!(declared.covers().is_empty());
        assert_eq!(declared.uncovered.len(), 1);
        assert!(
            declared.uncovered[0].contains("comes from the npm registry"),
            "{:?}",
            declared.uncovered
        );
    }
}
