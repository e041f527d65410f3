//! A definition a project declares, as the user is asked about it and as an answer about
//! it is remembered: its fingerprint (what is hashed decides when tandem asks again) and
//! the one line a person reads.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::config::ServerSpec;

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
    /// The folder it runs in.
    cwd: Option<String>,
    /// The SHA-256 of each project file it names (its program, a script argument), so an
    /// edit of the code a trusted definition runs asks again.
    files: BTreeMap<String, String>,
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
            cwd: spec.cwd.as_ref().map(|d| d.to_string_lossy().into_owned()),
            files: named_files(spec),
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

/// Most bytes of one named file that are hashed (a larger one is named by its size).
const MAX_HASHED: u64 = 16 << 20;

/// The project files a server's definition names, inside the folder it runs in, with the
/// SHA-256 of each: its program and any argument that is a file there.
fn named_files(spec: &ServerSpec) -> BTreeMap<String, String> {
    let Some(dir) = &spec.cwd else {
        return BTreeMap::new();
    };
    let dir = &crate::platform::canonical(dir).unwrap_or_else(|_| dir.clone());
    let named = spec
        .command
        .iter()
        .map(|c| dir.join(c))
        .chain(spec.args.iter().map(|a| dir.join(a)));
    let mut files = BTreeMap::new();
    for path in named {
        let Ok(real) = crate::platform::canonical(&path) else {
            continue;
        };
        if !real.starts_with(dir) || !real.is_file() {
            continue;
        }
        let hash = match std::fs::metadata(&real) {
            Ok(meta) if meta.len() > MAX_HASHED => format!("{} bytes", meta.len()),
            _ => match std::fs::read(&real) {
                Ok(bytes) => hex(&sha256(&bytes)),
                Err(e) => format!("unreadable: {e}"),
            },
        };
        files.insert(real.to_string_lossy().into_owned(), hash);
    }
    files
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
}
