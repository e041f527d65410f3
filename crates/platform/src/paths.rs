//! Paths as the system spells them: canonical without Windows' `\\?\` prefix (which would
//! leak into messages and titles and never match an editor's `C:\...`), and compared the
//! way the file system compares names.

use std::io;
use std::path::{Component, Path, PathBuf};

pub use super::native::PATHS_IGNORE_CASE;

/// The canonical form of `path` (symlinks resolved, real spelling), as a plain path:
/// `C:\Users\me\project`, not `\\?\C:\Users\me\project`.
pub fn canonical(path: &Path) -> io::Result<PathBuf> {
    dunce::canonicalize(path)
}

/// Whether `path` is `root` or lies inside it, compared by whole components; where the file
/// system ignores case (Windows, macOS's default volumes), so does the comparison.
pub fn same_or_inside(path: &Path, root: &Path) -> bool {
    if !PATHS_IGNORE_CASE {
        return path.starts_with(root);
    }
    let mut parts = path.components();
    root.components().all(|want| match parts.next() {
        Some(have) => same_component(have, want),
        None => false,
    })
}

/// Where `program` is found in the folders of the PATH, trying the system's executable
/// suffix too (`pwsh` finds `pwsh.exe` on Windows). `None` when no folder has it.
pub fn on_path(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    let suffix = std::env::consts::EXE_SUFFIX;
    std::env::split_paths(&path).find_map(|dir| {
        [dir.join(program), dir.join(format!("{program}{suffix}"))]
            .into_iter()
            .find(|candidate| candidate.is_file())
    })
}

/// A glob pattern as written by the model, with `\` read as the path separator where the
/// system uses it (Windows: `src\*.rs`), never as an escape there; unchanged elsewhere.
pub fn glob_pattern(pattern: &str) -> String {
    if std::path::MAIN_SEPARATOR == '\\' {
        pattern.replace('\\', "/")
    } else {
        pattern.to_string()
    }
}

fn same_component(a: Component<'_>, b: Component<'_>) -> bool {
    let (a, b) = (
        a.as_os_str().to_string_lossy(),
        b.as_os_str().to_string_lossy(),
    );
    a == b || a.to_lowercase() == b.to_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn containment_follows_the_file_systems_case_rule() {
        let root = Path::new("/work/Project");
        assert!(same_or_inside(Path::new("/work/Project/src/a.rs"), root));
        assert!(same_or_inside(root, root));
        assert!(!same_or_inside(Path::new("/work/Projector/a.rs"), root));
        assert!(!same_or_inside(Path::new("/work"), root));
        assert_eq!(
            same_or_inside(Path::new("/work/project/src/a.rs"), root),
            PATHS_IGNORE_CASE
        );
    }

    #[test]
    fn backslashes_in_globs_are_separators_only_where_the_system_says_so() {
        let want = if cfg!(windows) {
            "src/*.rs"
        } else {
            "src\\*.rs"
        };
        assert_eq!(glob_pattern("src\\*.rs"), want);
        assert_eq!(glob_pattern("**/*.rs"), "**/*.rs");
    }

    #[test]
    fn canonical_paths_have_no_verbatim_prefix() {
        let dir = tempfile::tempdir().unwrap();
        let real = canonical(dir.path()).unwrap();
        assert!(!real.display().to_string().starts_with(r"\\?\"));
        assert!(real.is_absolute());
    }
}
