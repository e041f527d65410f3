//! A fork's transcript appears whole or not at all. Its copy is written under a name that no
//! listing, load or id can reach (`.fork-<id>-<random>.partial`, made exclusively, 0600),
//! synced, and only then renamed to `<id>.jsonl` (never over an existing session), and the
//! rename synced with its directory. A fork killed part-way leaves only the partial file,
//! which the next start removes ([`sweep`]).
//!
//! The forking process holds an exclusive lock on its partial file for as long as it writes
//! it; the operating system drops the lock when the process ends, however it ends. So a sweep
//! removes exactly the partial files whose lock it can take: never a fork another live
//! tandem process is writing.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{BufWriter, Write};
use std::path::Path;

use super::StoreError;

/// How the names of partial forks start and end.
const PREFIX: &str = ".fork-";
const SUFFIX: &str = ".partial";

/// Writes `lines` (whole, newline-terminated records) as the transcript `target` in `dir`,
/// for the session `id`: under a partial name first, then renamed into place once all of it
/// is on disk. An error leaves no session behind (the partial file is removed).
pub(super) fn write(
    dir: &Path,
    id: &str,
    target: &Path,
    lines: impl Iterator<Item = String>,
) -> Result<(), StoreError> {
    let partial = create_locked(dir, id).map_err(|e| StoreError::io(dir, e))?;
    let fail = |e| StoreError::io(partial.path(), e);
    {
        let mut out = BufWriter::with_capacity(1 << 20, partial.as_file());
        for line in lines {
            out.write_all(line.as_bytes()).map_err(fail)?;
        }
        out.flush().map_err(fail)?;
    }
    partial.as_file().sync_all().map_err(fail)?;
    // Never over a session that exists: the error gives the partial file back, removed on drop.
    let file = partial
        .persist_noclobber(target)
        .map_err(|e| StoreError::io(target, e.error))?;
    drop(file);
    sync_dir(dir);
    Ok(())
}

/// A new partial file in `dir` for `id`, locked. A sweep can only have taken it in the
/// moment between its making and its locking; then it is gone, and another is made.
fn create_locked(dir: &Path, id: &str) -> std::io::Result<tempfile::NamedTempFile> {
    for _ in 0..3 {
        let partial = tempfile::Builder::new()
            .prefix(&format!("{PREFIX}{id}-"))
            .suffix(SUFFIX)
            .rand_bytes(10)
            .tempfile_in(dir)?;
        partial.as_file().lock()?;
        // The random name is this file's alone: if the name is there, so is the file.
        if std::fs::symlink_metadata(partial.path()).is_ok() {
            return Ok(partial);
        }
    }
    Err(std::io::Error::other(
        "the partial fork kept being removed as it was made",
    ))
}

/// Makes a rename in `dir` durable where the system allows it (Unix); elsewhere a directory
/// cannot be opened to sync it, and the rename is as durable as the system makes it.
fn sync_dir(dir: &Path) {
    if let Ok(handle) = File::open(dir) {
        let _ = handle.sync_all();
    }
}

/// Whether `name` is a partial fork's.
pub(super) fn is_partial(name: &str) -> bool {
    name.starts_with(PREFIX) && name.ends_with(SUFFIX)
}

/// Removes the partial forks in `dir` that no live process is writing: those left by a
/// tandem that stopped while it forked. Returns how many.
pub(super) fn sweep(dir: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    let mut removed = 0;
    for entry in entries.filter_map(Result::ok) {
        let name = entry.file_name();
        if !name.to_str().is_some_and(is_partial) {
            continue;
        }
        let path = entry.path();
        let Ok(file) = OpenOptions::new().read(true).open(&path) else {
            continue;
        };
        match file.try_lock() {
            Ok(()) => {
                // Removed while locked (Unix), or once let go where an open file cannot be.
                let gone = std::fs::remove_file(&path).or_else(|_| {
                    drop(file);
                    std::fs::remove_file(&path)
                });
                match gone {
                    Ok(()) => {
                        removed += 1;
                        tracing::info!(path = %path.display(), "removed a partial fork left by a tandem that stopped while forking");
                    }
                    Err(e) => {
                        tracing::warn!(path = %path.display(), "cannot remove a partial fork: {e}")
                    }
                }
            }
            Err(TryLockError::WouldBlock) => {
                tracing::debug!(path = %path.display(), "a fork in progress in another process: left alone");
            }
            Err(TryLockError::Error(e)) => {
                tracing::debug!(path = %path.display(), "cannot lock a partial fork to check it: {e}");
            }
        }
    }
    removed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fork_appears_whole_and_only_dead_forks_partials_are_swept() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("s.jsonl");
        let lines = (0..1000).map(|i| format!("{{\"n\":{i}}}\n"));
        write(dir.path(), "s", &target, lines).unwrap();
        assert_eq!(
            std::fs::read_to_string(&target).unwrap().lines().count(),
            1000
        );
        // Never over an existing session.
        let again = write(dir.path(), "s", &target, std::iter::once("x\n".to_string()));
        assert!(again.is_err());
        assert_eq!(
            std::fs::read_to_string(&target).unwrap().lines().count(),
            1000
        );
        // A fork being written (its lock held, as by a live process) stays; a dead one goes.
        let live = create_locked(dir.path(), "live").unwrap();
        std::fs::write(dir.path().join(".fork-dead-abc.partial"), "half").unwrap();
        assert_eq!(sweep(dir.path()), 1);
        assert!(live.path().exists());
        let names: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names.len(), 2, "{names:?}");
        drop(live);
        assert_eq!(sweep(dir.path()), 0);
    }
}
