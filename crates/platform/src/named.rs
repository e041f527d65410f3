//! Paths the model names: resolved at the session's [`PathBase`] and normalised before any
//! decision, so `..` and symlinks cannot slip a path out of the workspace unnoticed.

use std::path::{Component, Path, PathBuf};

/// Where a session's tools resolve the paths the model names: its working directory, and the
/// user's home (from the configuration) for `~/`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathBase {
    /// The session's working directory (canonical).
    pub cwd: PathBuf,
    /// The user's home, when known.
    pub home: Option<PathBuf>,
    /// The workspace's other folders (ACP `additionalDirectories`, canonical): searched with
    /// the working directory when a search names no folder.
    pub folders: Vec<PathBuf>,
}

impl PathBase {
    /// The absolute, normalised form of `raw` (relative to the cwd, `~/` in the home): `.`
    /// and `..` are folded, and symlinks are resolved through the deepest part of the path
    /// that exists.
    pub fn resolve(&self, raw: &str) -> PathBuf {
        let raw = raw.trim();
        let expanded = match (raw.strip_prefix("~/"), &self.home) {
            (Some(rest), Some(home)) => home.join(rest),
            _ => PathBuf::from(raw),
        };
        let joined = if expanded.is_absolute() {
            expanded
        } else {
            self.cwd.join(expanded)
        };
        physical(&joined)
    }

    /// `path` relative to the cwd when inside it, for titles; absolute otherwise.
    pub fn display(&self, path: &Path) -> String {
        display(path, &self.cwd)
    }

    /// The folders a search covers: the one the model named, or else the working directory
    /// and the workspace's other folders.
    pub fn search_roots(&self, named: Option<&str>) -> Vec<PathBuf> {
        match named {
            Some(raw) => vec![self.resolve(raw)],
            None => std::iter::once(self.cwd.clone())
                .chain(self.folders.iter().cloned())
                .collect(),
        }
    }

    /// How titles name the folders of a search.
    pub fn display_roots(&self, roots: &[PathBuf]) -> String {
        match roots {
            [one] => self.display(one),
            _ => format!("the workspace's {} folders", roots.len()),
        }
    }
}

/// `path` resolved as the kernel resolves it: a `..` leaves the folder the path before it
/// really is (`link/..` is the parent of the link's target, not the folder holding the
/// link), then symlinks are followed through the deepest part that exists.
fn physical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::ParentDir => {
                out = canonical_prefix(&out);
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    canonical_prefix(&out)
}

/// Folds `.` and `..` without touching the disk (as `cd` reads a path, before it looks).
pub fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// Most symlinks followed while resolving one path (as the kernel's limit of 40).
const MAX_LINKS: usize = 40;

/// Canonicalises the longest existing ancestor and appends the rest, so a path that does not
/// exist yet (a new file) is judged by where its existing parent really is. A symlink in the
/// rest is followed too, even one that points to nothing yet: writing through a dangling
/// link at `ws/link` creates the file where the link points, so that is the path judged.
fn canonical_prefix(path: &Path) -> PathBuf {
    resolve_links(path, MAX_LINKS)
}

fn resolve_links(path: &Path, links: usize) -> PathBuf {
    let mut existing = path.to_path_buf();
    let mut rest = Vec::new();
    loop {
        if let Ok(real) = crate::canonical(&existing) {
            return follow_rest(real, rest.into_iter().rev(), links);
        }
        match (
            existing.file_name().map(|n| n.to_os_string()),
            existing.parent(),
        ) {
            (Some(name), Some(parent)) => {
                rest.push(name);
                existing = parent.to_path_buf();
            }
            _ => return path.to_path_buf(),
        }
    }
}

/// `real` (canonical) joined with `rest`, following any symlink met on the way (which can
/// only be a dangling one, or the path would have resolved whole).
fn follow_rest(
    real: PathBuf,
    rest: impl Iterator<Item = std::ffi::OsString>,
    links: usize,
) -> PathBuf {
    let mut out = real;
    let mut rest = rest.peekable();
    while let Some(part) = rest.next() {
        let next = out.join(&part);
        let Ok(target) = std::fs::read_link(&next) else {
            out = next;
            continue;
        };
        if links == 0 {
            // A loop of links: judged where it starts, which nothing can be written through.
            out = next;
            continue;
        }
        let mut target = lexical(&out.join(target));
        target.extend(rest);
        return resolve_links(&target, links - 1);
    }
    out
}

/// Whether `path` (already resolved) lies inside one of `roots` (already canonical).
///
/// Compared by whole components, and without regard to case where the file system ignores
/// it (Windows, macOS's default volumes): there `C:\Work\src` is inside `c:\work`.
pub fn inside(path: &Path, roots: &[PathBuf]) -> bool {
    roots.iter().any(|root| crate::same_or_inside(path, root))
}

/// `path` relative to `cwd` when inside it, for titles; absolute otherwise.
pub fn display(path: &Path, cwd: &Path) -> String {
    match path.strip_prefix(cwd) {
        Ok(rel) if rel.as_os_str().is_empty() => ".".to_string(),
        Ok(rel) => rel.display().to_string(),
        Err(_) => path.display().to_string(),
    }
}

// Symlinks need no privilege only on Unix.
#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn dot_dot_and_symlinks_are_resolved() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let ws = root.join("ws");
        std::fs::create_dir_all(ws.join("src")).unwrap();
        std::fs::create_dir_all(root.join("outside")).unwrap();
        std::os::unix::fs::symlink(root.join("outside"), ws.join("link")).unwrap();
        let roots = [ws.clone()];
        let place = PathBase {
            cwd: ws.clone(),
            home: Some(root.join("home")),
            folders: Vec::new(),
        };
        let resolve = |raw: &str| place.resolve(raw);
        assert_eq!(resolve("src/../src/new.rs"), ws.join("src/new.rs"));
        assert!(inside(&resolve("src/new.rs"), &roots));
        assert!(!inside(&resolve("../outside/x"), &roots));
        assert_eq!(resolve("link/secret.txt"), root.join("outside/secret.txt"));
        assert!(!inside(&resolve("link/secret.txt"), &roots));
        assert_eq!(resolve("~/notes.md"), root.join("home/notes.md"));
        // A link to something that does not exist yet is judged where it points.
        std::os::unix::fs::symlink(root.join("outside/new.txt"), ws.join("dangling")).unwrap();
        assert_eq!(resolve("dangling"), root.join("outside/new.txt"));
        assert!(!inside(&resolve("dangling"), &roots));
        std::os::unix::fs::symlink(root.join("nowhere/deeper"), ws.join("deep")).unwrap();
        assert_eq!(resolve("deep/x.txt"), root.join("nowhere/deeper/x.txt"));
        std::os::unix::fs::symlink("loop", ws.join("loop")).unwrap();
        // `..` after a link leaves where the link points, as the kernel does.
        std::fs::create_dir_all(root.join("outside/d")).unwrap();
        std::os::unix::fs::symlink(root.join("outside/d"), ws.join("lo")).unwrap();
        assert_eq!(resolve("lo/../secret.txt"), root.join("outside/secret.txt"));
        std::fs::create_dir_all(ws.join("a/b")).unwrap();
        std::os::unix::fs::symlink(ws.join("a/b"), ws.join("l")).unwrap();
        assert_eq!(resolve("l/../../.env"), ws.join(".env"));
        assert_eq!(resolve("loop/x"), ws.join("loop/x"));
        assert_eq!(display(&ws.join("src/a.rs"), &ws), "src/a.rs");
    }
}
