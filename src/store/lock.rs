//! One process writes a session at a time. A second editor window, or `tandem exec
//! --session`, that opened a session another tandem process has open would append its own
//! history to the same file, and the stored conversation would mix two histories neither
//! process saw. So an open transcript holds an exclusive lock on a file beside it
//! (`<id>.lock`) for as long as it is open in this process; another process that tries to
//! open the session is refused (reading it, to list, export or fork it, needs no lock).
//! The operating system drops the lock when the process ends, however it ends.

use std::collections::HashMap;
use std::fs::{File, OpenOptions, TryLockError};
use std::path::{Path, PathBuf};
use std::sync::{Arc, LazyLock, Weak};

use parking_lot::Mutex;

use super::StoreError;

/// A held session lock; dropped (and so released) with the last handle of its transcript.
#[derive(Debug)]
pub struct SessionLock {
    _file: File,
}

/// How often, and how long apart, a held lock is tried again before the opener is refused.
const LOCK_WAITS: u32 = 10;
const LOCK_WAIT: std::time::Duration = std::time::Duration::from_millis(50);

/// The locks this process holds, by transcript path: opening a session again in the same
/// process (a reload) shares the lock it already has.
static HELD: LazyLock<Mutex<HashMap<PathBuf, Weak<SessionLock>>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

/// Takes the lock of the transcript at `transcript`, or says that another process has it.
pub fn take(transcript: &Path) -> Result<Arc<SessionLock>, StoreError> {
    let mut held = HELD.lock();
    held.retain(|_, lock| lock.strong_count() > 0);
    if let Some(lock) = held.get(transcript).and_then(Weak::upgrade) {
        return Ok(lock);
    }
    let path = transcript.with_extension("lock");
    let file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|e| StoreError::io(&path, e))?;
    // A process that just closed the session lets go once its last record is written: a
    // moment's wait covers a close (or an exit) answered a little before that.
    let mut waits = 0;
    loop {
        match file.try_lock() {
            Ok(()) => break,
            Err(TryLockError::WouldBlock) if waits < LOCK_WAITS => {
                waits += 1;
                std::thread::sleep(LOCK_WAIT);
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
    let lock = Arc::new(SessionLock { _file: file });
    held.insert(transcript.to_path_buf(), Arc::downgrade(&lock));
    Ok(lock)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_process_shares_its_lock_and_it_goes_with_the_last_handle() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        let first = take(&path).unwrap();
        let again = take(&path).unwrap();
        assert!(Arc::ptr_eq(&first, &again));
        // Another open file description (what another process has) is refused meanwhile.
        let other = File::options()
            .write(true)
            .open(path.with_extension("lock"))
            .unwrap();
        assert!(matches!(other.try_lock(), Err(TryLockError::WouldBlock)));
        drop((first, again));
        assert!(other.try_lock().is_ok());
    }
}
