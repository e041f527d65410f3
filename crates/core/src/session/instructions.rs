//! Project instructions: `AGENTS.md` files from the session's directory up to the repository
//! root, the same for each of the workspace's other folders, plus the user's own in the
//! config directory, added to the system prompt.

use std::path::{Path, PathBuf};

/// The file name read in each directory.
pub(crate) const FILE: &str = "AGENTS.md";
/// Most bytes taken from one file.
const MAX_BYTES: usize = 32 * 1024;

/// The `AGENTS.md` files that apply to `cwd`, most general first: the user's, then the
/// repository root's, down to `cwd`'s own (nearest last). Without a repository (no `.git`
/// above), only `cwd`'s own applies. Each is given where it really is (links resolved,
/// once), and a project's only when that is inside the project.
pub(crate) fn files(cwd: &Path, config_dir: &Path) -> Vec<PathBuf> {
    let mut dirs: Vec<&Path> = Vec::new();
    let mut found_root = false;
    for dir in cwd.ancestors() {
        dirs.push(dir);
        if dir.join(".git").exists() {
            found_root = true;
            break;
        }
    }
    if !found_root {
        dirs.truncate(1);
    }
    let top = dirs.last().copied().unwrap_or(cwd);
    // The user's own may be a link into a dotfiles repository: resolved, not confined.
    let mut out: Vec<PathBuf> = std::iter::once(config_dir.join(FILE))
        .filter(|p| p.is_file())
        .filter_map(|p| crate::platform::canonical(&p).ok())
        .collect();
    out.extend(
        dirs.iter()
            .rev()
            .map(|d| d.join(FILE))
            .filter(|p| p.is_file())
            .filter_map(|p| within(&p, top)),
    );
    out
}

/// Where the project's file at `path` really is, when that is in the project (under `top`):
/// a cloned repository could make its `AGENTS.md` a link to the user's keys, which would
/// then be sent to the model server in every prompt. The path returned is read as it is,
/// with no link followed, so a link planted after this look changes nothing.
fn within(path: &Path, top: &Path) -> Option<PathBuf> {
    let real = crate::platform::canonical(path).ok()?;
    let top = crate::platform::canonical(top).ok()?;
    if crate::platform::same_or_inside(&real, &top) {
        return Some(real);
    }
    tracing::warn!(path = %path.display(), to = %real.display(), "project instructions that link outside the project are not read");
    None
}

/// The instructions text for the system prompt, or an empty string when there are none:
/// [`files`] for `cwd`, then those of each of the workspace's other `folders` not already
/// taken (a folder in the same repository shares its root's file).
pub(crate) fn load(cwd: &Path, folders: &[PathBuf], config_dir: &Path) -> String {
    let mut all = files(cwd, config_dir);
    for folder in folders {
        for path in files(folder, config_dir) {
            if !all.contains(&path) {
                all.push(path);
            }
        }
    }
    let mut text = String::new();
    for path in all {
        // Read where `files` found it to lie, with no link followed: one planted since then
        // is refused, not followed.
        let read = crate::local::read_now(&path);
        let Ok(content) = read.map(|bytes| String::from_utf8_lossy(&bytes).into_owned()) else {
            tracing::warn!(path = %path.display(), "cannot read project instructions");
            continue;
        };
        let content = if content.len() > MAX_BYTES {
            let mut end = MAX_BYTES;
            while !content.is_char_boundary(end) {
                end -= 1;
            }
            format!("{}\n[… cut at {MAX_BYTES} bytes]", &content[..end])
        } else {
            content
        };
        text.push_str(&format!(
            "\n\n## Instructions from {}\n\n{}",
            path.display(),
            content.trim_end()
        ));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn root_to_cwd_nearest_last_with_the_users_first() {
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path().join("repo");
        let sub = repo.join("crates/app");
        std::fs::create_dir_all(&sub).unwrap();
        std::fs::create_dir_all(repo.join(".git")).unwrap();
        let config = dir.path().join("config");
        std::fs::create_dir_all(&config).unwrap();
        std::fs::write(config.join(FILE), "user").unwrap();
        std::fs::write(repo.join(FILE), "root").unwrap();
        std::fs::write(sub.join(FILE), "app").unwrap();
        std::fs::write(dir.path().join(FILE), "above the repo: ignored").unwrap();
        let found = files(&sub, &config);
        assert_eq!(found, [config.join(FILE), repo.join(FILE), sub.join(FILE)]);
        let text = load(&sub, &[], &config);
        assert!(text.find("user").unwrap() < text.find("root").unwrap());
        assert!(text.find("root").unwrap() < text.find("app").unwrap());
        assert!(!text.contains("ignored"));
    }

    #[cfg(unix)]
    #[test]
    fn a_project_file_that_links_outside_the_project_is_not_read() {
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path().join("repo");
        std::fs::create_dir_all(repo.join(".git")).unwrap();
        std::fs::create_dir_all(repo.join("docs")).unwrap();
        std::fs::write(dir.path().join("id_rsa"), "PRIVATE KEY").unwrap();
        std::os::unix::fs::symlink(dir.path().join("id_rsa"), repo.join(FILE)).unwrap();
        let none = dir.path().join("none");
        assert!(files(&repo, &none).is_empty());
        assert!(!load(&repo, &[], &none).contains("PRIVATE"));
        // A link inside the project is read as before.
        std::fs::remove_file(repo.join(FILE)).unwrap();
        std::fs::write(repo.join("docs/agents.md"), "inside").unwrap();
        std::os::unix::fs::symlink("docs/agents.md", repo.join(FILE)).unwrap();
        assert!(load(&repo, &[], &none).contains("inside"));
    }

    #[test]
    fn without_a_repository_only_the_cwd_counts() {
        let dir = tempfile::tempdir().unwrap();
        let sub = dir.path().join("a/b");
        std::fs::create_dir_all(&sub).unwrap();
        std::fs::write(dir.path().join("a").join(FILE), "parent").unwrap();
        std::fs::write(sub.join(FILE), "here").unwrap();
        assert_eq!(files(&sub, &dir.path().join("none")), [sub.join(FILE)]);
    }
}
