//! Where reads (and in `accept-edits`, edits) need no permission: the session's folder and
//! the skills' folders. A session opened at `/` or in the home folder (or a folder above
//! it) is not a project: its folder counts as outside, so nothing on the disk becomes free.

use std::path::{Path, PathBuf};

use crate::platform::named;

/// The inside of one session.
#[derive(Debug, Clone)]
pub struct Workspace {
    /// The session's folder (canonical).
    root: PathBuf,
    /// Folders whose files are inside.
    roots: Vec<PathBuf>,
    /// Why the session's folder is not one of them, when it is not.
    unbounded: Option<String>,
    /// The user's home folder (what `~` means in a command line).
    home: Option<PathBuf>,
}

impl Workspace {
    /// The workspace of a session in `root`, with `extra` folders (skills) inside too;
    /// `home` is the user's home folder.
    pub fn new(root: PathBuf, extra: Vec<PathBuf>, home: Option<&Path>) -> Workspace {
        let unbounded = unbounded(&root, home);
        if let Some(why) = &unbounded {
            tracing::info!(cwd = %root.display(), "{why}: every read and edit outside the skills' folders asks");
        }
        let roots = unbounded
            .is_none()
            .then(|| root.clone())
            .into_iter()
            .chain(extra)
            .collect();
        Workspace {
            root,
            roots,
            unbounded,
            home: home.map(Path::to_path_buf),
        }
    }

    /// The session's folder.
    pub(crate) fn root(&self) -> &Path {
        &self.root
    }

    /// The user's home folder, when known.
    pub(crate) fn home(&self) -> Option<&Path> {
        self.home.as_deref()
    }

    /// Whether `path` (resolved) is inside.
    pub fn contains(&self, path: &Path) -> bool {
        named::inside(path, &self.roots)
    }

    /// Why the session's folder does not count as a project, when it does not.
    pub(crate) fn unbounded(&self) -> Option<&str> {
        self.unbounded.as_deref()
    }
}

/// Why a session in `root` has no inside: it is the whole disk, or holds the home folder.
fn unbounded(root: &Path, home: Option<&Path>) -> Option<String> {
    if root.parent().is_none() {
        return Some(format!(
            "no project: the session was opened at {}, the top of the disk",
            root.display()
        ));
    }
    let home = home.map(|h| crate::platform::canonical(h).unwrap_or_else(|_| h.to_path_buf()))?;
    if home == root {
        Some("no project: the session was opened in your home folder".into())
    } else if home.starts_with(root) {
        Some(format!(
            "no project: the session was opened at {}, which holds your home folder",
            root.display()
        ))
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_disk_and_the_home_folder_are_not_projects() {
        let home = Some(Path::new("/home/u"));
        assert!(
            Workspace::new("/".into(), vec![], home)
                .unbounded()
                .is_some()
        );
        assert!(
            Workspace::new("/home/u".into(), vec![], home)
                .unbounded()
                .is_some()
        );
        assert!(
            Workspace::new("/home".into(), vec![], home)
                .unbounded()
                .is_some()
        );
        let project = Workspace::new("/home/u/code/app".into(), vec![], home);
        assert!(project.unbounded().is_none());
        assert!(project.contains(Path::new("/home/u/code/app/src/lib.rs")));
        let skills = Workspace::new("/home/u".into(), vec!["/home/u/.skills/a".into()], home);
        assert!(skills.contains(Path::new("/home/u/.skills/a/SKILL.md")));
        assert!(!skills.contains(Path::new("/home/u/notes.txt")));
    }
}
