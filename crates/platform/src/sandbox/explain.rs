//! What a failed sandboxed command's output says the sandbox denied: a path it may not write
//! or read, or the network. The operating system answers a denied write with the ordinary
//! `Permission denied` or `Read-only file system`, so the model would otherwise take it for a
//! problem of the project and work around it; told instead, it can ask to run the command
//! outside the sandbox, which the user decides.

use std::path::{Path, PathBuf};

use super::SandboxPolicy;

/// What programs print when the file system said no.
const FILE_DENIED: [&str; 8] = [
    "Permission denied",
    "Read-only file system",
    "Operation not permitted",
    "Device or resource busy",
    "EACCES",
    "EROFS",
    "EPERM",
    "EBUSY",
];

/// What programs print for a file that is not there: the sandbox's doing only when the
/// path is hidden.
const NOT_FOUND: [&str; 2] = ["No such file or directory", "ENOENT"];

/// What programs print when the network is not there.
const NETWORK_DENIED: [&str; 9] = [
    "Network is unreachable",
    "ENETUNREACH",
    "Could not resolve host",
    "Temporary failure in name resolution",
    "Name or service not known",
    "failed to lookup address",
    "getaddrinfo",
    "No address associated with hostname",
    "Could not connect to",
];

/// Most denied paths named.
const MOST_PATHS: usize = 5;

/// What the sandbox probably denied the command that printed `output` in `cwd`, as a note
/// for the model; `None` when the output shows no sign of it.
pub fn explain(policy: &SandboxPolicy, cwd: &Path, output: &str) -> Option<String> {
    let mut paths: Vec<(PathBuf, &'static str)> = Vec::new();
    // A denial naming no path may be the sandbox's; one naming only paths the sandbox
    // allows is the project's own (a script without its executable bit).
    let mut unnamed_denial = false;
    let mut network_denied = false;
    for line in output.lines() {
        if FILE_DENIED.iter().any(|m| line.contains(m)) {
            let named = named_paths(line, cwd);
            unnamed_denial |= named.is_empty();
            for path in named {
                if let Some(why) = why_denied(policy, &path)
                    && !paths.iter().any(|(p, _)| *p == path)
                    && paths.len() < MOST_PATHS
                {
                    paths.push((path, why));
                }
            }
        }
        if NOT_FOUND.iter().any(|m| line.contains(m)) {
            for path in named_paths(line, cwd) {
                let why = if policy.hides(&path) {
                    "(hidden from commands)"
                } else if path.starts_with("/tmp") && !policy.may_write(&path) {
                    "(the sandbox's /tmp is its own: what other programs put in /tmp is not there)"
                } else {
                    continue;
                };
                if !paths.iter().any(|(p, _)| *p == path) {
                    paths.push((path, why));
                }
            }
        }
        if !policy.network && NETWORK_DENIED.iter().any(|m| line.contains(m)) {
            network_denied = true;
        }
    }
    let mut said = Vec::new();
    for (path, why) in &paths {
        said.push(format!("{} {why}", path.display()));
    }
    if unnamed_denial && paths.is_empty() && !network_denied {
        said.push("a file outside what it may write or read".to_string());
    }
    if network_denied {
        said.push("the network (off in the sandbox)".to_string());
    }
    if said.is_empty() {
        return None;
    }
    Some(format!(
        "Sandbox: this command ran in tandem's sandbox, which {}. Its output suggests the sandbox denied: {}. If the command truly needs that, call run_command again with \"outside_sandbox\": true and a \"reason\" the user will read; the user is asked every time. Otherwise change the approach (e.g. write under the workspace or $TMPDIR).",
        policy.summary(),
        said.join("; ")
    ))
}

/// Why the policy denies `path`, if it does: hidden, protected, or outside the writable
/// folders.
fn why_denied(policy: &SandboxPolicy, path: &Path) -> Option<&'static str> {
    if policy.hides(path) {
        Some("(hidden from commands)")
    } else if policy.read_only.iter().any(|p| path.starts_with(p)) {
        Some("(protected: read-only in the sandbox)")
    } else if !policy.may_write(path) {
        Some("(outside the folders commands may write)")
    } else {
        None
    }
}

/// The paths a line names: words that start with `/`, `./` or `../`, and relative ones in
/// quotes or before a colon, without the quotes and punctuation around them; relative ones
/// joined to `cwd`.
fn named_paths(line: &str, cwd: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for word in line.split(|c: char| c.is_whitespace()) {
        // Quoted (`'a/b'`), or a path a message starts with (`sh: 1: cannot create a/b: …`).
        let quoted = word.starts_with(['\'', '"', '`', '‘', '“'])
            || (word.ends_with(':') && word.contains('/'));
        let word = word.trim_matches(|c: char| "'\"`‘’“”:,;()[]<>".contains(c));
        if word.is_empty() || word.contains("://") {
            continue;
        }
        let path = if word.starts_with('/') {
            PathBuf::from(word)
        } else if word.starts_with("./")
            || word.starts_with("../")
            || (quoted && !word.contains(' '))
        {
            cwd.join(word)
        } else {
            continue;
        };
        out.push(normalise(&path));
    }
    out
}

/// `path` with `.` and `..` folded (no file system access: the path may not exist).
fn normalise(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy() -> SandboxPolicy {
        SandboxPolicy {
            writable: vec![PathBuf::from("/ws")],
            read_only: vec![PathBuf::from("/ws/.git")],
            hidden: vec![PathBuf::from("/home/u/.ssh")],
            network: false,
            unix_sockets: Vec::new(),
            no_repositories: Vec::new(),
            temp: PathBuf::from("/tmp/t"),
        }
    }

    #[test]
    fn a_denied_write_names_the_path_and_why() {
        let note = explain(
            &policy(),
            Path::new("/ws"),
            "touch: cannot touch '/home/u/out.txt': Read-only file system\n",
        )
        .unwrap();
        assert!(note.contains("/home/u/out.txt (outside the folders commands may write)"));
        assert!(note.contains("\"outside_sandbox\": true"));
        let hooks = explain(
            &policy(),
            Path::new("/ws"),
            "sh: 1: cannot create .git/hooks/pre-commit: Read-only file system",
        );
        assert!(
            hooks
                .unwrap()
                .contains("/ws/.git/hooks/pre-commit (protected")
        );
        let quoted = explain(
            &policy(),
            Path::new("/ws"),
            "cp: cannot create regular file '.git/hooks/pre-commit': Read-only file system",
        )
        .unwrap();
        assert!(
            quoted.contains("/ws/.git/hooks/pre-commit (protected"),
            "{quoted}"
        );
        let hidden = explain(
            &policy(),
            Path::new("/ws"),
            "cat: /home/u/.ssh/id_ed25519: Permission denied",
        )
        .unwrap();
        assert!(hidden.contains("(hidden from commands)"));
        let gone = "cat: /home/u/.ssh/id_ed25519: No such file or directory";
        assert!(
            explain(&policy(), Path::new("/ws"), gone)
                .unwrap()
                .contains("(hidden")
        );
        let missing = "cat: /ws/nope: No such file or directory";
        assert!(explain(&policy(), Path::new("/ws"), missing).is_none());
        let tmp = "cat: /tmp/build.log: No such file or directory";
        let said = explain(&policy(), Path::new("/ws"), tmp).unwrap();
        assert!(
            said.contains("/tmp/build.log (the sandbox's /tmp is its own"),
            "{said}"
        );
    }

    #[test]
    fn the_network_and_the_ordinary_failures() {
        let net = explain(
            &policy(),
            Path::new("/ws"),
            "curl: (7) Failed to connect to 127.0.0.1 port 8080: Network is unreachable",
        )
        .unwrap();
        assert!(net.contains("the network (off in the sandbox)"));
        assert!(
            explain(
                &policy(),
                Path::new("/ws"),
                "error[E0308]: mismatched types"
            )
            .is_none()
        );
        let mut open = policy();
        open.network = true;
        assert!(explain(&open, Path::new("/ws"), "Could not resolve host: x").is_none());
        // A denial inside the workspace is the project's own business, not the sandbox's.
        let inside = "bash: /ws/script.sh: Permission denied";
        assert!(explain(&policy(), Path::new("/ws"), inside).is_none());
        let unnamed = explain(
            &policy(),
            Path::new("/ws"),
            "error: Permission denied (os error 13)",
        );
        assert!(
            unnamed
                .unwrap()
                .contains("a file outside what it may write or read")
        );
    }
}
