//! Paths whose edits always ask, in every mode but `full-access`, whatever a rule, a
//! remembered answer or a hook says: what they hold decides what runs later. `.git/` (its
//! config names programs git runs, such as `core.fsmonitor`, and its hooks run on commits),
//! `.tandem/` (a project's tandem config), and tandem's own config and data folders.

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
    pub fn new(dirs: impl IntoIterator<Item = PathBuf>) -> Protected {
        let dirs = dirs
            .into_iter()
            .map(|d| crate::platform::canonical(&d).unwrap_or(d))
            .collect();
        Protected { dirs }
    }

    /// Why an edit of `path` (resolved) always asks, if it does.
    pub fn why(&self, path: &Path) -> Option<String> {
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
}
