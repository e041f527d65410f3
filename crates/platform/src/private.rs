//! tandem's own files are the user's alone: the data directory (`TANDEM_HOME`, `sessions/`)
//! and the transcripts, side files, wire trace and credentials in and beside it hold the
//! user's code, conversations and keys. On Unix a directory tandem makes is 0700 and a file
//! 0600, whatever the umask, and one found open to other users is tightened when tandem opens
//! it (a data directory made by an older tandem, a trace file made by hand). Elsewhere the
//! profile directory's own access rules apply, and these calls change nothing.

use std::fs::{File, OpenOptions};
use std::io;
use std::path::Path;

/// Makes `dir` (its missing parents as usual) a directory only its owner may enter: made
/// 0700, or tightened to that when it is open to others. A directory with the sticky bit
/// (`/tmp`, shared by design) is left as it is. An error only when there is no directory:
/// one that cannot be tightened (not the user's, a read-only file system) is said on stderr
/// and used as it is.
pub fn dir(dir: &Path) -> io::Result<()> {
    if let Some(parent) = dir.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)?;
    }
    let builder = &mut std::fs::DirBuilder::new();
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    match builder.create(dir) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists && dir.is_dir() => {
            if let Err(e) = tighten_dir(dir) {
                tracing::warn!(dir = %dir.display(), "cannot make the directory private (0700): {e}");
            }
            Ok(())
        }
        Err(e) => Err(e),
    }
}

/// Tightens an existing directory as [`dir`] would, without making one; nothing when it
/// does not exist.
pub fn tighten_dir(dir: &Path) -> io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let meta = match std::fs::metadata(dir) {
            Ok(meta) => meta,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(e),
        };
        let mode = meta.permissions().mode();
        const STICKY: u32 = 0o1000;
        if meta.is_dir() && mode & 0o077 != 0 && mode & STICKY == 0 {
            std::fs::set_permissions(dir, std::fs::Permissions::from_mode(mode & 0o7700))?;
            let from = format!("{:o}", mode & 0o777);
            tracing::info!(dir = %dir.display(), from = %from, "made the directory private to its owner (0700)");
        }
    }
    #[cfg(not(unix))]
    let _ = dir;
    Ok(())
}

/// `options` with a new file made 0600 (Unix), whatever the umask.
pub fn file_options(options: &mut OpenOptions) -> &mut OpenOptions {
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    options
}

/// Takes away other users' access to an open regular file (a file made before tandem made
/// its files 0600, or by hand), through the handle, so the file judged is the file changed.
/// Anything else (a terminal, `/dev/null` given as the trace) is left as it is.
pub fn tighten(file: &File) -> io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let meta = file.metadata()?;
        let mode = meta.permissions().mode();
        if meta.is_file() && mode & 0o077 != 0 {
            file.set_permissions(std::fs::Permissions::from_mode(mode & 0o7700))?;
        }
    }
    #[cfg(not(unix))]
    let _ = file;
    Ok(())
}

/// [`tighten`] for the file at `path`, when there is one (a symlink is not followed: it is
/// left alone).
pub fn tighten_path(path: &Path) -> io::Result<()> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.is_file() => tighten(&File::open(path)?),
        Ok(_) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
#[cfg(unix)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    fn mode(path: &Path) -> u32 {
        std::fs::metadata(path).unwrap().permissions().mode() & 0o7777
    }

    #[test]
    fn directories_are_made_or_tightened_to_0700_and_shared_ones_left_alone() {
        let root = tempfile::tempdir().unwrap();
        let made = root.path().join("a/b");
        dir(&made).unwrap();
        assert_eq!(mode(&made), 0o700);
        let open = root.path().join("open");
        std::fs::create_dir(&open).unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o755)).unwrap();
        dir(&open).unwrap();
        assert_eq!(mode(&open), 0o700);
        let shared = root.path().join("shared");
        std::fs::create_dir(&shared).unwrap();
        std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o1777)).unwrap();
        dir(&shared).unwrap();
        assert_eq!(mode(&shared), 0o1777);
        tighten_dir(&root.path().join("missing")).unwrap();
    }

    #[test]
    fn files_are_made_0600_and_loose_ones_tightened() {
        let root = tempfile::tempdir().unwrap();
        let path = root.path().join("f");
        let file = file_options(OpenOptions::new().create(true).append(true))
            .open(&path)
            .unwrap();
        assert_eq!(mode(&path), 0o600);
        file.set_permissions(std::fs::Permissions::from_mode(0o644))
            .unwrap();
        tighten(&file).unwrap();
        assert_eq!(mode(&path), 0o600);
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();
        tighten_path(&path).unwrap();
        assert_eq!(mode(&path), 0o600);
        tighten_path(&root.path().join("missing")).unwrap();
    }
}
