//! What a sandboxed command may touch, as plain data: the same policy drives every system's
//! enforcement (Linux namespaces and Landlock, macOS Seatbelt) and travels as JSON to
//! `tandem sandbox --policy FILE`, which the editor's terminal runs.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// What a sandboxed command may touch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SandboxPolicy {
    /// Folders (and files) the command may write: the workspace roots, unless the sandbox is
    /// read-only, and the user's extra ones.
    pub(crate) writable: Vec<PathBuf>,
    /// Paths inside writable folders that stay read-only (`.git`, `.tandem`, a worktree's git
    /// folder): what decides what runs later.
    pub(crate) read_only: Vec<PathBuf>,
    /// Paths the command may not read at all: keys, cloud credentials, tandem's own config,
    /// credential file and transcripts, and the sockets of agents that hold keys.
    pub(crate) hidden: Vec<PathBuf>,
    /// Whether the command may use the network.
    pub(crate) network: bool,
    /// Unix sockets outside the writable folders the command may connect to (files, or
    /// folders of them): `[sandbox] unix_sockets`.
    #[serde(default)]
    pub(crate) unix_sockets: Vec<PathBuf>,
    /// Workspace folders where a command may not make a git repository (a `.git` of any
    /// kind): the writable workspace roots.
    #[serde(default)]
    pub(crate) no_repositories: Vec<PathBuf>,
    /// The command's private temporary folder (`TMPDIR`, and `/tmp` where that is safe).
    pub(crate) temp: PathBuf,
}

/// How much a sandboxed command may write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Writes {
    /// The workspace roots and the temp folder.
    WorkspaceWrite,
    /// Only the temp folder.
    ReadOnly,
}

/// What a session's policy is made from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Inputs {
    /// The workspace roots: the session's folder and its other folders (canonical).
    pub roots: Vec<PathBuf>,
    /// The user's home, when known.
    pub home: Option<PathBuf>,
    /// tandem's own folders: its config (with the credential file) and its data (transcripts).
    pub own: Vec<PathBuf>,
    /// How much commands may write.
    pub writes: Writes,
    /// Whether commands may use the network.
    pub network: bool,
    /// More folders commands may write (`[sandbox] writable`).
    pub extra_writable: Vec<PathBuf>,
    /// More paths commands may not read (`[sandbox] deny_read`), and the sockets of agents
    /// that hold keys (see [`key_sockets`]).
    pub extra_hidden: Vec<PathBuf>,
    /// Unix sockets outside the writable folders commands may connect to
    /// (`[sandbox] unix_sockets`).
    pub unix_sockets: Vec<PathBuf>,
}

impl Inputs {
    /// Only `roots`, written as `writes` says: no home, nothing of tandem's or the user's
    /// hidden, no extra folders, the network off.
    pub fn bare(roots: Vec<PathBuf>, writes: Writes) -> Self {
        Inputs {
            roots,
            home: None,
            own: Vec::new(),
            writes,
            network: false,
            extra_writable: Vec::new(),
            extra_hidden: Vec::new(),
            unix_sockets: Vec::new(),
        }
    }
}

/// Credentials under the home folder that no command needs to read to build or test a
/// project, and that a prompt-injected command would most like to send away.
const HOME_SECRETS: [&str; 14] = [
    ".ssh",
    ".gnupg",
    ".aws",
    ".azure",
    ".config/gcloud",
    ".kube",
    ".docker/config.json",
    ".netrc",
    ".git-credentials",
    ".config/gh",
    ".pypirc",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".local/share/keyrings",
];

/// Sockets that hand out root, keys, the user's screen and keyboard or a shell outside to
/// whoever connects: Docker's daemon, the system bus, screen's sessions, the X server.
const SYSTEM_SOCKETS: [&str; 7] = [
    "/var/run/docker.sock",
    "/run/docker.sock",
    "/run/dbus",
    "/var/run/dbus",
    "/run/screen",
    "/tmp/.X11-unix",
    "/tmp/.ICE-unix",
];

/// Inside each writable root: what decides what runs later, kept read-only. All of `.git`,
/// not only its hooks and config: a `commondir` file, a submodule's or worktree's git folder
/// or a staged gitlink plant the same.
const PROTECTED_INSIDE: [&str; 2] = [".git", ".tandem"];

/// The places where programs that hold keys or run commands listen, from the environment
/// `var` reads: the user's runtime folder (the session bus, through which the Secret Service
/// hands out stored keys, tandem's own among them, and `systemd-run --user`; the keyring and
/// GnuPG agents; Wayland), also where no variable names it, the SSH agent's socket, tmux's
/// server, and the system's (see `SYSTEM_SOCKETS`).
pub fn key_sockets(var: &dyn Fn(&str) -> Option<String>) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = SYSTEM_SOCKETS.iter().map(PathBuf::from).collect();
    if let Some(uid) = user_id() {
        out.push(PathBuf::from(format!("/run/user/{uid}")));
        out.push(PathBuf::from(format!("/tmp/tmux-{uid}")));
    }
    for name in ["XDG_RUNTIME_DIR", "SSH_AUTH_SOCK"] {
        if let Some(value) = var(name).filter(|v| Path::new(v).is_absolute()) {
            out.push(PathBuf::from(value));
        }
    }
    // A bus named by address (`unix:path=/run/user/1000/bus,guid=…`).
    if let Some(address) = var("DBUS_SESSION_BUS_ADDRESS")
        && let Some(rest) = address.strip_prefix("unix:path=")
    {
        out.push(PathBuf::from(rest.split(',').next().unwrap_or(rest)));
    }
    out
}

/// This process's user id, where the system has per-user runtime folders (Linux).
fn user_id() -> Option<u32> {
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata("/proc/self").ok().map(|m| m.uid())
    }
    #[cfg(not(target_os = "linux"))]
    {
        None
    }
}

impl SandboxPolicy {
    /// The policy made from `inputs`, with `temp` as the private temp folder.
    pub(crate) fn new(inputs: &Inputs, temp: PathBuf) -> Self {
        let mut writable: Vec<PathBuf> = match inputs.writes {
            Writes::WorkspaceWrite => inputs.roots.clone(),
            Writes::ReadOnly => Vec::new(),
        };
        let no_repositories = writable.clone();
        writable.extend(inputs.extra_writable.iter().cloned());
        let read_only = writable
            .iter()
            .flat_map(|root| protected_in(root))
            .collect();
        let mut hidden: Vec<PathBuf> = inputs
            .home
            .as_ref()
            .map(|home| HOME_SECRETS.iter().map(|s| home.join(s)).collect())
            .unwrap_or_default();
        hidden.extend(inputs.own.iter().cloned());
        hidden.extend(inputs.extra_hidden.iter().cloned());
        SandboxPolicy {
            writable,
            read_only,
            hidden,
            network: inputs.network,
            unix_sockets: inputs.unix_sockets.clone(),
            no_repositories,
            temp,
        }
    }

    /// Whether `path` may be written under this policy (inside a writable folder or the temp
    /// folder, and not inside a read-only or hidden one).
    pub(crate) fn may_write(&self, path: &Path) -> bool {
        let inside = |roots: &[PathBuf]| roots.iter().any(|r| path.starts_with(r));
        (inside(&self.writable) || path.starts_with(&self.temp))
            && !inside(&self.read_only)
            && !self.hides(path)
    }

    /// Whether `path` is hidden from commands.
    pub(crate) fn hides(&self, path: &Path) -> bool {
        self.hidden.iter().any(|h| path.starts_with(h))
    }

    /// One line for the user: what commands may write and reach.
    pub(crate) fn summary(&self) -> String {
        let writes = match self.writable.len() {
            0 => "nothing but a private temp folder".to_string(),
            _ => {
                let roots: Vec<String> = self
                    .writable
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect();
                format!("{} and a private temp folder", roots.join(", "))
            }
        };
        let network = if self.network { "on" } else { "off" };
        format!(
            "writes only {writes} (.git and .tandem stay read-only); keys, cloud credentials and tandem's own files hidden; network {network}"
        )
    }
}

/// How many folders of a workspace are looked through for nested repositories, at most: a
/// workspace larger than that has its first folders' repositories protected, and says so in
/// the log.
const NESTED_SEARCH_LIMIT: usize = 50_000;

impl SandboxPolicy {
    /// Protects, like the root's, every git repository nested in the workspace folders (a
    /// `.git` folder or file anywhere below a root: a vendored clone, a submodule): read-only
    /// for commands, so none can be given a config or hook that an editor's git would run.
    /// Made once per session's sandbox; a command cannot make new ones (repositories.rs).
    pub(crate) fn protect_nested_repositories(&mut self) {
        let mut found = Vec::new();
        for root in &self.no_repositories {
            found.extend(nested_repositories(root));
        }
        for git in found {
            let protected = protected_in(git.parent().unwrap_or(&git));
            for path in protected {
                if !self.read_only.contains(&path) && path.file_name() != Some(".tandem".as_ref()) {
                    self.read_only.push(path);
                }
            }
        }
    }
}

/// The `.git` entries below `root` (not its own), without following links or looking inside
/// a `.git` folder.
fn nested_repositories(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut folders = vec![root.to_path_buf()];
    let mut seen = 0usize;
    while let Some(folder) = folders.pop() {
        seen += 1;
        if seen > NESTED_SEARCH_LIMIT {
            tracing::warn!(
                root = %root.display(),
                "stopped looking for nested git repositories after {NESTED_SEARCH_LIMIT} folders"
            );
            break;
        }
        let Ok(entries) = std::fs::read_dir(&folder) else {
            continue;
        };
        for entry in entries.flatten() {
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let path = entry.path();
            if entry.file_name() == ".git" {
                if folder != root && (kind.is_dir() || kind.is_file()) {
                    out.push(path);
                }
            } else if kind.is_dir() {
                folders.push(path);
            }
        }
    }
    out
}

/// The protected paths inside `root`: its `.git` and `.tandem`, and for a worktree or
/// submodule (whose `.git` is a file naming the real one) the git folder it names and the
/// repository's own.
fn protected_in(root: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = PROTECTED_INSIDE.iter().map(|p| root.join(p)).collect();
    let dot_git = root.join(".git");
    if let Ok(text) = std::fs::read_to_string(&dot_git)
        && let Some(dir) = text.trim().strip_prefix("gitdir:")
    {
        // The pointer is protected above as `.git`; the git folder it names (a worktree's, in
        // the main repository's `.git/worktrees/`, or a submodule's) and the main repository's
        // folder, whose hooks and config run for it too, are protected whole.
        let dir = root.join(dir.trim());
        if let Some(common) = dir.parent().and_then(Path::parent) {
            out.push(common.to_path_buf());
        }
        out.push(dir);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inputs(roots: &[&str], writes: Writes) -> Inputs {
        Inputs {
            home: Some(PathBuf::from("/home/u")),
            ..Inputs::bare(roots.iter().map(PathBuf::from).collect(), writes)
        }
    }

    fn temp() -> PathBuf {
        PathBuf::from("/tmp/tandem-1/s")
    }

    #[test]
    fn the_workspace_is_writable_but_what_runs_later_is_not() {
        let p = SandboxPolicy::new(&inputs(&["/ws", "/other"], Writes::WorkspaceWrite), temp());
        assert!(p.may_write(Path::new("/ws/src/main.rs")));
        assert!(p.may_write(Path::new("/other/x")));
        assert!(p.may_write(Path::new("/tmp/tandem-1/s/cache")));
        assert!(!p.may_write(Path::new("/ws/.git/hooks/pre-commit")));
        assert!(!p.may_write(Path::new("/ws/.git/config")));
        assert!(!p.may_write(Path::new("/ws/.git/commondir")));
        assert!(!p.may_write(Path::new("/other/.tandem/config.toml")));
        assert!(p.may_write(Path::new("/ws/src/.gitignore")));
        assert!(!p.may_write(Path::new("/home/u/.bashrc")));
        assert!(p.hides(Path::new("/home/u/.ssh/id_ed25519")));
        assert!(!p.hides(Path::new("/home/u/.config/other")));
    }

    #[test]
    fn tandems_own_files_and_key_agents_are_hidden() {
        let sockets = key_sockets(&|name| match name {
            "XDG_RUNTIME_DIR" => Some("/run/user/1000".into()),
            "SSH_AUTH_SOCK" => Some("/tmp/ssh-x/agent.1".into()),
            "DBUS_SESSION_BUS_ADDRESS" => Some("unix:path=/var/bus,guid=1".into()),
            _ => None,
        });
        let mut i = inputs(&["/ws"], Writes::WorkspaceWrite);
        i.own = vec![PathBuf::from("/home/u/.config/tandem")];
        i.extra_hidden = sockets;
        let p = SandboxPolicy::new(&i, temp());
        for hidden in [
            "/home/u/.config/tandem/credentials.toml",
            "/run/user/1000/bus",
            "/tmp/ssh-x/agent.1",
            "/var/bus",
            "/var/run/docker.sock",
        ] {
            assert!(p.hides(Path::new(hidden)), "{hidden}");
        }
    }

    #[test]
    fn a_read_only_sandbox_writes_only_its_temp_folder() {
        let p = SandboxPolicy::new(&inputs(&["/ws"], Writes::ReadOnly), temp());
        assert!(!p.may_write(Path::new("/ws/a")));
        assert!(p.may_write(Path::new("/tmp/tandem-1/s/a")));
        assert!(p.summary().contains("nothing but a private temp folder"));
    }

    #[cfg(unix)]
    #[test]
    fn nested_repositories_are_protected_like_the_root_one() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("ws");
        std::fs::create_dir_all(ws.join(".git")).unwrap();
        std::fs::create_dir_all(ws.join("vendor/lib/.git/hooks")).unwrap();
        std::fs::create_dir_all(ws.join("deep/a/b/c/.git")).unwrap();
        std::fs::create_dir_all(ws.join("sub")).unwrap();
        std::fs::write(ws.join("sub/.git"), "gitdir: ../.git/modules/sub\n").unwrap();
        std::os::unix::fs::symlink("/", ws.join("link")).unwrap();
        let mut p = SandboxPolicy::new(
            &inputs(&[ws.to_str().unwrap()], Writes::WorkspaceWrite),
            temp(),
        );
        p.protect_nested_repositories();
        for protected in ["vendor/lib/.git/config", "deep/a/b/c/.git/HEAD", "sub/.git"] {
            assert!(!p.may_write(&ws.join(protected)), "{protected}");
        }
        assert!(p.read_only.iter().any(|r| r.ends_with(".git/modules/sub")));
        assert!(p.may_write(&ws.join("vendor/lib/src.c")));
        assert!(!p.read_only.iter().any(|r| r.starts_with("/etc")));
    }

    #[test]
    fn a_worktrees_real_git_folder_is_protected_too() {
        let dir = tempfile::tempdir().unwrap();
        let main = dir.path().join("main/.git/worktrees/feature");
        std::fs::create_dir_all(&main).unwrap();
        let tree = dir.path().join("feature");
        std::fs::create_dir_all(&tree).unwrap();
        std::fs::write(tree.join(".git"), format!("gitdir: {}\n", main.display())).unwrap();
        let protected = protected_in(&tree);
        assert!(protected.contains(&main));
        assert!(protected.contains(&tree.join(".git")));
        assert!(protected.contains(&dir.path().join("main/.git")));
    }
}
