//! Paths the model names: resolved at the session's [`Place`] and normalised before any
//! decision, so `..` and symlinks cannot slip a path out of the workspace unnoticed.

use std::path::{Component, Path, PathBuf};

/// Where a session's tools resolve the paths the model names: its working directory, and the
/// user's home (from the configuration) for `~/`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Place {
    /// The session's working directory (canonical).
    pub cwd: PathBuf,
    /// The user's home, when known.
    pub home: Option<PathBuf>,
    /// The workspace's other folders (ACP `additionalDirectories`, canonical): searched with
    /// the working directory when a search names no folder.
    pub folders: Vec<PathBuf>,
}

impl Place {
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
        canonical_prefix(&lexical(&joined))
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

/// Folds `.` and `..` without touching the disk.
fn lexical(path: &Path) -> PathBuf {
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

/// Canonicalises the longest existing ancestor and appends the rest, so a path that does not
/// exist yet (a new file) is judged by where its existing parent really is.
fn canonical_prefix(path: &Path) -> PathBuf {
    let mut existing = path.to_path_buf();
    let mut rest = Vec::new();
    loop {
        if let Ok(real) = crate::platform::canonical(&existing) {
            let mut out = real;
            for part in rest.iter().rev() {
                out.push(part);
            }
            return out;
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

/// Whether `path` (already resolved) lies inside one of `roots` (already canonical).
///
/// Compared by whole components, and without regard to case where the file system ignores
/// it (Windows, macOS's default volumes): there `C:\Work\src` is inside `c:\work`.
pub fn inside(path: &Path, roots: &[PathBuf]) -> bool {
    roots
        .iter()
        .any(|root| crate::platform::same_or_inside(path, root))
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
        let place = Place {
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
        assert_eq!(display(&ws.join("src/a.rs"), &ws), "src/a.rs");
    }
}
