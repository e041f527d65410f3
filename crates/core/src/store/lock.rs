//! One process writes a session at a time. A second editor window, or `tandem exec
//! --session`, that opened a session another tandem process has open would append its own
//! history to the same file, and the stored conversation would mix two histories neither
//! process saw. So an open transcript holds an exclusive lock on a file beside it
//! (`<id>.lock`) for as long as it is open in this process; another process that tries to
//! open the session is refused (reading it, to list, export or fork it, needs no lock).
//! The operating system drops the lock when the process ends, however it ends.

use std::fs::{File, OpenOptions, TryLockError};
use std::path::Path;

use super::StoreError;

/// A held session lock; released when dropped (with the last handle of its transcript, in
/// [`super::writer::run`]).
#[derive(Debug)]
pub(crate) struct SessionLock {
    /// `None` where the data directory may not be written: no process can write the
    /// session there, so there is nothing to keep from another.
    _file: Option<File>,
}

/// How often, and how long apart, a held lock is tried again before the opener is refused.
const LOCK_WAITS: u32 = 10;
const LOCK_WAIT: std::time::Duration = std::time::Duration::from_millis(50);

/// Takes the lock of the transcript at `transcript`, or says that another process has it.
/// (A session opened again in this process shares the open transcript, and its lock: see
/// [`super::Transcript::open`].)
pub(crate) async fn take(transcript: &Path) -> Result<SessionLock, StoreError> {
    let path = transcript.with_extension("lock");
    let file = match crate::platform::private::file_options(
        OpenOptions::new().create(true).truncate(false).write(true),
    )
    .open(&path)
    {
        Ok(file) => {
            // Empty, but the user's like the transcript beside it.
            let _ = crate::platform::private::tighten(&file);
            file
        }
        Err(e) if read_only(&e) => return Ok(SessionLock { _file: None }),
        Err(e) => return Err(StoreError::io(&path, e)),
    };
    // A process that just closed the session lets go once its last record is written: a
    // moment's wait covers a close (or an exit) answered a little before that.
    let mut waits = 0;
    loop {
        match file.try_lock() {
            Ok(()) => return Ok(SessionLock { _file: Some(file) }),
            Err(TryLockError::WouldBlock) if waits < LOCK_WAITS => {
                waits += 1;
                tokio::time::sleep(LOCK_WAIT).await;
            }
            Err(TryLockError::WouldBlock) => {
                let id = transcript
                    .file_stem()
                    .map(|s| s.to_string_lossy().into_owned())
                    .unwrap_or_default();
                return Err(StoreError::Busy(id));
            }
            Err(TryLockError::Error(e)) => return Err(StoreError::io(&path, e)),
        }
    }
}

/// Whether an error says the file system (or the file) may not be written.
pub(super) fn read_only(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::PermissionDenied | std::io::ErrorKind::ReadOnlyFilesystem
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_held_lock_refuses_another_opener_until_it_is_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        let held = take(&path).await.unwrap();
        // Another open file description (what another process has) is refused meanwhile.
        assert!(matches!(take(&path).await, Err(StoreError::Busy(id)) if id == "s"));
        drop(held);
        assert!(take(&path).await.is_ok());
    }
}
