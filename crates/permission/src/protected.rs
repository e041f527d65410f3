//! Paths whose edits always ask, in every mode but `full-access`, whatever a rule, a
//! remembered answer or a hook says: what they hold decides what runs later. `.git/` (its
//! config names programs git runs, such as `core.fsmonitor`, and its hooks run on commits),
//! any folder git would take for a repository (one with a `HEAD` file: `git -C x status`
//! reads `x/config`), `.tandem/` (a project's tandem config), where a project's `.git` and
//! `.tandem` really are when they are links or a `gitdir:` file, and tandem's own config and
//! data folders. A command that names such a path asks the same way (`permission::command`).

use std::path::{Path, PathBuf};

/// The protected paths of one session.
#[derive(Debug, Clone, Default)]
pub struct Protected {
    /// Folders protected with everything beneath them (canonical where they exist).
    dirs: Vec<PathBuf>,
}

impl Protected {
    /// Protection for `dirs` (tandem's config and data folders, the skills' folders) and, in
    /// every folder, `.git` and `.tandem`.
    pub(crate) fn new(dirs: impl IntoIterator<Item = PathBuf>) -> Protected {
        let dirs = dirs
            .into_iter()
            .map(|d| crate::platform::canonical(&d).unwrap_or(d))
            .collect();
        Protected { dirs }
    }

    /// [`Protected::new`], with where the `.git` and `.tandem` of each of `folders` really
    /// are (a link elsewhere, or a `.git` file's `gitdir:`), which their names do not show.
    pub fn for_project(dirs: impl IntoIterator<Item = PathBuf>, folders: &[PathBuf]) -> Protected {
        let mut protected = Protected::new(dirs);
        for folder in folders {
            for name in [".git", ".tandem"] {
                let path = folder.join(name);
                if let Ok(real) = crate::platform::canonical(&path) {
                    protected.dirs.push(real);
                }
                let pointer = std::fs::read_to_string(&path).ok();
                if let Some(gitdir) = pointer
                    .as_deref()
                    .and_then(|t| t.trim().strip_prefix("gitdir:"))
                {
                    let gitdir = folder.join(gitdir.trim());
                    protected
                        .dirs
                        .push(crate::platform::canonical(&gitdir).unwrap_or(gitdir));
                }
            }
        }
        protected
    }

    /// Why an edit of `path` (resolved) always asks, if it does.
    pub(crate) fn why(&self, path: &Path) -> Option<String> {
        self.why_with(path, true)
    }

    /// Why a command that names `path` always asks, if it does: as for an edit, except that
    /// a word `HEAD` is far more often git's name for a commit than a file being made.
    pub(crate) fn why_named(&self, path: &Path) -> Option<String> {
        self.why_with(path, false)
    }

    fn why_with(&self, path: &Path, new_head: bool) -> Option<String> {
        for part in path.components() {
            let name = part.as_os_str().to_string_lossy().to_ascii_lowercase();
            if name == ".git" || (name.len() > 4 && name.ends_with(".git")) {
                return Some(
                    "a git folder: its config and hooks name programs git runs, so tandem asks before every edit there"
                        .into(),
                );
            }
            if name == ".tandem" {
                return Some(
                    "the project's tandem configuration, which can start programs in later sessions, so tandem asks before every edit there"
                        .into(),
                );
            }
        }
        if let Some(why) = repository_file(path, new_head) {
            return Some(why);
        }
        self.dirs
            .iter()
            .find(|dir| crate::platform::same_or_inside(path, dir))
            .map(|dir| {
                format!(
                    "tandem's own configuration or data ({}), so tandem asks before every edit there",
                    dir.display()
                )
            })
    }
}

/// Files git reads from a repository's own folder (`HEAD` makes a folder one).
const REPOSITORY_FILES: &[&str] = &["HEAD", "config", "commondir", "gitdir", "hooks", "info"];

/// Why an edit of `path` changes what git runs although no `.git` is in its name: a file
/// named `HEAD` (it makes its folder a repository; with `new_head`), or git's files in a
/// folder that holds one.
fn repository_file(path: &Path, new_head: bool) -> Option<String> {
    let folder = path
        .ancestors()
        .skip(1)
        .take(2)
        .zip(path.ancestors())
        .find(|(_, child)| {
            child
                .file_name()
                .is_some_and(|n| REPOSITORY_FILES.iter().any(|f| n.eq_ignore_ascii_case(f)))
        })
        .map(|(folder, _)| folder)?;
    let named_head = new_head
        && path
            .file_name()
            .is_some_and(|n| n.eq_ignore_ascii_case("HEAD"));
    if named_head {
        return Some(format!(
            "a file named HEAD, which makes {} a git repository whose config and hooks git reads, so tandem asks before every edit there",
            folder.display()
        ));
    }
    folder.join("HEAD").is_file().then(|| {
        format!(
            "a git repository's own files ({} holds a HEAD file, so git reads its config and hooks), so tandem asks before every edit there",
            folder.display()
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn git_tandem_and_the_config_folder() {
        let protected = Protected::new([PathBuf::from("/home/u/.config/tandem")]);
        for path in [
            "/ws/.git/config",
            "/ws/.git/hooks/pre-commit",
            "/ws/sub/.git/info/attributes",
            "/ws/.git",
            "/ws/.GIT/config",
            "/srv/repo.git/hooks/update",
            "/ws/.tandem/config.toml",
            "/home/u/.config/tandem/config.toml",
        ] {
            assert!(protected.why(Path::new(path)).is_some(), "{path}");
        }
        for path in [
            "/ws/src/git.rs",
            "/ws/.gitignore",
            "/ws/.github/ci.yml",
            "/ws/tandem",
        ] {
            assert!(protected.why(Path::new(path)).is_none(), "{path}");
        }
    }

    #[test]
    fn a_folder_git_takes_for_a_repository() {
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path().join("x");
        let protected = Protected::default();
        // Until it holds a HEAD, `x/config` is an ordinary file; HEAD itself never is.
        assert!(protected.why(&repo.join("config")).is_none());
        assert!(protected.why(&repo.join("HEAD")).is_some());
        std::fs::create_dir_all(&repo).unwrap();
        std::fs::write(repo.join("HEAD"), "ref: refs/heads/main\n").unwrap();
        for file in ["config", "hooks/pre-commit", "info/attributes"] {
            assert!(protected.why(&repo.join(file)).is_some(), "{file}");
        }
        assert!(protected.why(&repo.join("src/config")).is_none());
    }

    #[cfg(unix)]
    #[test]
    fn where_a_projects_git_and_tandem_really_are() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let ws = root.join("ws");
        std::fs::create_dir_all(root.join("conf")).unwrap();
        std::fs::create_dir_all(root.join("main/.git/worktrees/ws")).unwrap();
        std::fs::create_dir_all(&ws).unwrap();
        std::os::unix::fs::symlink(root.join("conf"), ws.join(".tandem")).unwrap();
        std::fs::write(ws.join(".git"), "gitdir: ../main/.git/worktrees/ws\n").unwrap();
        let protected = Protected::for_project([], &[ws]);
        assert!(protected.why(&root.join("conf/config.toml")).is_some());
        assert!(protected.why(&root.join("other.txt")).is_none());
    }
}
