//! The sandbox's private folders: `tandem-sandbox-*` in the temp folder, one for each session
//! that ran a command (and one for the check of whether this system can sandbox at all). Each
//! holds the session's policy (`policy.json`), its commands' temp folder (`tmp/`) and a lock
//! file (`lock`) that the process which made the folder keeps locked (`flock`) for as long as
//! it lives.
//!
//! - A folder goes when its session ends ([`PrivateFolder::remove`]: `session/close` waits for it
//!   before it answers), and every folder still there goes as tandem ends ([`remove_all`], on
//!   every way out of `main`).
//! - One whose process could not remove it (killed, crashed, the machine lost power) is
//!   reclaimed by the next tandem, on a thread of its own once it has made a folder of its own
//!   ([`reclaim`]): a lock nobody holds means its owner is gone. The kernel releases a lock when
//!   the last descriptor of it closes, which a dying process does, so the answer holds however
//!   the process ended and whichever process has its pid since; a lock cannot be held by a
//!   process that did not open the file itself (the descriptor is closed at `exec`).
//! - Folders of tandem versions before the lock have none: they are reclaimed once neither they
//!   nor their `tmp/` changed for [`OLD_STALE`], a day (a session that ran no command for a day
//!   in an older tandem that still runs then finds its policy gone, and its next command does
//!   not run: it fails closed).
//!
//! Only what is surely tandem's own is removed: a real folder (not a link) named with the
//! prefix, owned by this user and writable by nobody else (`0700` as made here; older tandems
//! made theirs `0755` under the usual umask), removed through descriptors one name at a time,
//! so a link planted inside (the commands wrote `tmp/`) is removed as a link, never followed,
//! and a folder a command left without write permission is opened up first. The lock goes
//! last: a removal cut short leaves a folder the next tandem reclaims at once.
//!
//! A command in the sandbox can neither remove the folder nor take its lock: it sees only
//! `tmp/` (bound over `/tmp`, with Landlock refusing writes anywhere else); where the folder
//! lies in a place commands may write (a workspace that holds the temp folder), the lock file
//! stays read-only to them as the policy does (session.rs), and while tandem holds the lock no
//! other process can take it.

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use parking_lot::Mutex;

/// What every private folder's name starts with.
pub(crate) const PREFIX: &str = "tandem-sandbox-";

/// The lock file in each folder, locked by the process that made the folder.
pub(crate) const LOCK: &str = "lock";

/// How long a folder of an older tandem (no lock file) must have been left unchanged before
/// it is reclaimed.
#[cfg(unix)]
pub(crate) const OLD_STALE: std::time::Duration = std::time::Duration::from_secs(24 * 60 * 60);

/// How many fresh names a new folder tries when another tandem's reclaiming took the lock of
/// the one just made (in the instant between making it and locking it).
const ATTEMPTS: usize = 4;

/// The folders this process made and has not removed: what [`remove_all`] removes.
static OPEN: Mutex<Vec<PathBuf>> = parking_lot::const_mutex(Vec::new());

/// Whether this process has started reclaiming the folders of processes that are gone.
static RECLAIMING: std::sync::Once = std::sync::Once::new();

/// A private folder of this process, with its lock held; removed when dropped, if not before.
#[derive(Debug)]
pub struct PrivateFolder {
    path: PathBuf,
    /// The locked lock file, until the folder is removed.
    lock: Mutex<Option<File>>,
}

impl PrivateFolder {
    /// A new private folder (`0700`) in the temp folder, its lock held. The first a process
    /// makes also starts reclaiming, on a thread of its own, the folders of processes that
    /// are gone.
    pub(crate) fn create() -> io::Result<PrivateFolder> {
        let base = std::env::temp_dir();
        let mut last = None;
        for _ in 0..ATTEMPTS {
            let path = builder().tempdir_in(&base)?.keep();
            match lock_new(&path) {
                Ok(lock) => {
                    OPEN.lock().push(path.clone());
                    RECLAIMING.call_once(|| reclaim_soon(base.clone(), &path));
                    return Ok(PrivateFolder {
                        path,
                        lock: Mutex::new(Some(lock)),
                    });
                }
                // Another tandem found the lock free in the instant before it was taken: that
                // one removes the folder. Another name, then.
                Err(Locking::Taken) => last = Some(io::Error::other("the lock was taken")),
                Err(Locking::Failed(e)) => {
                    if let Err(e) = remove_tree(&path) {
                        tracing::warn!(folder = %path.display(), "cannot remove a private folder that could not be locked: {e}");
                    }
                    return Err(e);
                }
            }
        }
        Err(last.unwrap_or_else(|| io::Error::other("no private folder could be made")))
    }

    /// Where it is.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Removes it (once; later calls do nothing), its lock last.
    pub fn remove(&self) {
        let Some(lock) = self.lock.lock().take() else {
            return;
        };
        OPEN.lock().retain(|open| open != &self.path);
        if let Err(e) = remove_tree(&self.path) {
            tracing::warn!(folder = %self.path.display(), "cannot remove the sandbox's private folder: {e}");
        }
        drop(lock);
    }
}

impl Drop for PrivateFolder {
    fn drop(&mut self) {
        self.remove();
    }
}

/// Removes every private folder this process made and still has: tandem is ending. The
/// folders' own values may live on in tasks that never end; removing one twice is harmless.
pub fn remove_all() {
    let open = std::mem::take(&mut *OPEN.lock());
    for path in open {
        if let Err(e) = remove_tree(&path) {
            tracing::warn!(folder = %path.display(), "cannot remove the sandbox's private folder: {e}");
        }
    }
}

/// How a new folder is made: with the prefix, `0700`.
fn builder() -> tempfile::Builder<'static, 'static> {
    let mut builder = tempfile::Builder::new();
    builder.prefix(PREFIX);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(std::fs::Permissions::from_mode(0o700));
    }
    builder
}

/// Why a new folder's lock is not this process's.
enum Locking {
    /// Another tandem, reclaiming, has it (or had it, and removed the folder).
    Taken,
    /// The lock file could not be made or locked.
    Failed(io::Error),
}

/// Makes the lock file in the new folder `folder` and locks it.
fn lock_new(folder: &Path) -> Result<File, Locking> {
    let path = folder.join(LOCK);
    let mut options = std::fs::OpenOptions::new();
    // `create_new` never follows a link, nor opens a file someone else made.
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let file = options.open(&path).map_err(Locking::Failed)?;
    match file.try_lock() {
        Ok(()) => {}
        Err(std::fs::TryLockError::WouldBlock) => return Err(Locking::Taken),
        Err(std::fs::TryLockError::Error(e)) => return Err(Locking::Failed(e)),
    }
    // A reclaiming tandem may have locked it, removed the folder and let go before the lock
    // was taken here: then the lock is on a file that is no longer there.
    if !still_there(&file, &path) {
        return Err(Locking::Taken);
    }
    Ok(file)
}

/// Whether `path` still names the file `file` is open on.
#[cfg(unix)]
fn still_there(file: &File, path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (file.metadata(), std::fs::symlink_metadata(path)) {
        (Ok(open), Ok(named)) => open.dev() == named.dev() && open.ino() == named.ino(),
        _ => false,
    }
}

/// Whether `path` still names the file `file` is open on (no sandbox here, so no other tandem
/// reclaims).
#[cfg(not(unix))]
fn still_there(_file: &File, path: &Path) -> bool {
    path.exists()
}

/// Starts reclaiming, on a thread of its own, the folders in `base` whose process is gone;
/// `made` (just made by this process) says which user this process is.
fn reclaim_soon(base: PathBuf, made: &Path) {
    let Some(owner) = owner_of(made) else {
        return;
    };
    let spawned = std::thread::Builder::new()
        .name("tandem-reclaim".into())
        .spawn(move || {
            let removed = reclaim(&base, owner, SystemTime::now());
            if removed > 0 {
                tracing::info!(
                    folders = removed,
                    base = %base.display(),
                    "removed the sandbox folders of tandem processes that are gone"
                );
            }
        });
    if let Err(e) = spawned {
        tracing::debug!("cannot start reclaiming old sandbox folders: {e}");
    }
}

/// The user who owns `path`.
#[cfg(unix)]
fn owner_of(path: &Path) -> Option<u32> {
    use std::os::unix::fs::MetadataExt;
    std::fs::symlink_metadata(path).ok().map(|m| m.uid())
}

/// No sandbox here, so nothing to reclaim.
#[cfg(not(unix))]
fn owner_of(_path: &Path) -> Option<u32> {
    None
}

/// Removes the folders in `base` whose process is gone (see the module docs), judged at
/// `now`, of the user `owner`; how many it removed.
fn reclaim(base: &Path, owner: u32, now: SystemTime) -> usize {
    let Ok(entries) = std::fs::read_dir(base) else {
        return 0;
    };
    let mut removed = 0;
    for entry in entries.flatten() {
        if !entry
            .file_name()
            .to_str()
            .is_some_and(|name| name.starts_with(PREFIX))
        {
            continue;
        }
        let path = entry.path();
        if OPEN.lock().contains(&path) {
            continue;
        }
        let Some(lock) = abandoned(&path, owner, now) else {
            continue;
        };
        match remove_tree(&path) {
            Ok(()) => removed += 1,
            Err(e) => {
                tracing::debug!(folder = %path.display(), "cannot reclaim an old sandbox folder: {e}")
            }
        }
        // Let go only once it is gone: meanwhile no other tandem takes it for its own.
        drop(lock);
    }
    removed
}

/// Whether the folder at `path` is a private folder of `owner` whose process is gone: its lock
/// (held until the folder is removed), or `Some(None)` for a stale folder of an older tandem.
#[cfg(unix)]
fn abandoned(path: &Path, owner: u32, now: SystemTime) -> Option<Option<File>> {
    use std::os::unix::fs::MetadataExt;
    let folder = std::fs::symlink_metadata(path).ok()?;
    if !folder.is_dir() || folder.uid() != owner {
        return None;
    }
    let mode = folder.mode() & 0o7777;
    match open_lock(path) {
        Ok(lock) => {
            let free = mode == 0o700 && lock.try_lock().is_ok();
            free.then_some(Some(lock))
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            // An older tandem's: writable by its owner alone, and left alone for long enough.
            let private = mode & 0o022 == 0;
            (private && unchanged_since(path, &folder, now)).then_some(None)
        }
        // A link, a device or anything else where the lock should be: not tandem's doing.
        Err(_) => None,
    }
}

/// No sandbox here, so no folder is ever another process's to reclaim.
#[cfg(not(unix))]
fn abandoned(_path: &Path, _owner: u32, _now: SystemTime) -> Option<Option<File>> {
    None
}

/// Opens the lock file in `folder` for reading: not through a link, and without waiting on a
/// pipe planted there; an error unless it is a plain file.
#[cfg(unix)]
fn open_lock(folder: &Path) -> io::Result<File> {
    use rustix::fs::{Mode, OFlags};
    let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
    let fd = rustix::fs::open(folder.join(LOCK), flags, Mode::empty())?;
    let file = File::from(fd);
    if !file.metadata()?.is_file() {
        return Err(io::Error::other("the lock is not a plain file"));
    }
    Ok(file)
}

/// Whether neither the folder (`meta` is its) nor its `tmp/` changed in the [`OLD_STALE`]
/// before `now`.
#[cfg(unix)]
fn unchanged_since(path: &Path, meta: &std::fs::Metadata, now: SystemTime) -> bool {
    let old = |modified: io::Result<SystemTime>| {
        modified.is_ok_and(|at| now.duration_since(at).is_ok_and(|age| age >= OLD_STALE))
    };
    let temp = std::fs::symlink_metadata(path.join("tmp"));
    old(meta.modified())
        && match temp {
            Ok(temp) => old(temp.modified()),
            Err(e) => e.kind() == io::ErrorKind::NotFound,
        }
}

/// Removes the folder at `folder` with everything in it, its lock last; a folder already gone
/// is no error.
#[cfg(unix)]
fn remove_tree(folder: &Path) -> io::Result<()> {
    unix::remove_tree(folder)
}

/// Removes the folder at `folder` with everything in it; a folder already gone is no error.
#[cfg(not(unix))]
fn remove_tree(folder: &Path) -> io::Result<()> {
    match std::fs::remove_dir_all(folder) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        done => done,
    }
}

/// Removal through descriptors: each folder is opened without following a link, its entries
/// are removed by name in it, and a folder met inside is opened the same way from its parent,
/// so nothing outside the tree is ever reached, whatever links it holds.
#[cfg(unix)]
mod unix {
    use std::ffi::{CStr, CString};
    use std::io;
    use std::os::fd::OwnedFd;
    use std::path::Path;

    use rustix::fs::{AtFlags, FileType, Mode, OFlags};
    use rustix::io::Errno;

    use super::LOCK;

    /// How deep folders are opened (a descriptor each) before a deeper one is moved up to
    /// the top, so that no tree a command builds runs out of descriptors.
    const DEEPEST: usize = 64;

    /// How a folder in the tree is opened.
    const FOLDER: OFlags = OFlags::RDONLY
        .union(OFlags::DIRECTORY)
        .union(OFlags::NOFOLLOW)
        .union(OFlags::CLOEXEC);

    /// A folder being emptied: its descriptor, the names left in it, and its own name in
    /// its parent.
    struct Level {
        fd: OwnedFd,
        left: Vec<CString>,
        name: CString,
    }

    impl Level {
        /// The folder open at `fd` (named `name`), made writable by its owner, with its names
        /// but `keep`.
        fn of(fd: OwnedFd, name: CString, keep: Option<&CStr>) -> io::Result<Level> {
            let mode = Mode::from_raw_mode(rustix::fs::fstat(&fd)?.st_mode);
            if !mode.contains(Mode::RWXU) {
                rustix::fs::fchmod(&fd, mode | Mode::RWXU)?;
            }
            let mut left = Vec::new();
            for entry in rustix::fs::Dir::read_from(&fd)? {
                let entry = entry?;
                let name = entry.file_name();
                if name.to_bytes() != b"." && name.to_bytes() != b".." && Some(name) != keep {
                    left.push(name.to_owned());
                }
            }
            Ok(Level { fd, left, name })
        }
    }

    pub(super) fn remove_tree(folder: &Path) -> io::Result<()> {
        let (Some(parent), Some(name)) = (folder.parent(), folder.file_name()) else {
            return Err(io::Error::from(io::ErrorKind::InvalidInput));
        };
        let name = CString::new(std::os::unix::ffi::OsStrExt::as_bytes(name))?;
        let parent = rustix::fs::open(parent, FOLDER.difference(OFlags::NOFOLLOW), Mode::empty())?;
        let top = match rustix::fs::openat(&parent, &name, FOLDER, Mode::empty()) {
            Ok(top) => top,
            Err(Errno::NOENT) => return Ok(()),
            Err(e) => return Err(e.into()),
        };
        let lock = CString::new(LOCK)?;
        let top = Level::of(top, name.clone(), Some(&lock))?;
        empty(top)?;
        gone(rustix::fs::unlinkat(&parent, &name, AtFlags::REMOVEDIR))
    }

    /// Removes everything in the folder `top` (its lock last), keeping the folder itself.
    fn empty(top: Level) -> io::Result<()> {
        let mut moved = 0usize;
        let mut stack = vec![top];
        loop {
            let depth = stack.len();
            let Some(level) = stack.last_mut() else {
                return Ok(());
            };
            let Some(name) = level.left.pop() else {
                let done = stack.pop();
                match (done, stack.last()) {
                    (Some(done), Some(parent)) => gone(rustix::fs::unlinkat(
                        &parent.fd,
                        &done.name,
                        AtFlags::REMOVEDIR,
                    ))?,
                    (Some(top), None) => {
                        gone(rustix::fs::unlinkat(&top.fd, LOCK, AtFlags::empty()))?
                    }
                    _ => {}
                }
                continue;
            };
            let kind = match rustix::fs::statat(&level.fd, &name, AtFlags::SYMLINK_NOFOLLOW) {
                Ok(st) => FileType::from_raw_mode(st.st_mode),
                Err(Errno::NOENT) => continue,
                Err(e) => return Err(e.into()),
            };
            if kind != FileType::Directory {
                gone(rustix::fs::unlinkat(&level.fd, &name, AtFlags::empty()))?;
                continue;
            }
            if depth < DEEPEST {
                let fd = match open_folder(&level.fd, &name) {
                    Ok(fd) => fd,
                    // Removed meanwhile (by the end of the process, say, at the same time).
                    Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
                    Err(e) => return Err(e),
                };
                stack.push(Level::of(fd, name, None)?);
                continue;
            }
            // Too deep to open: moved up to the top, to be emptied from there.
            let (levels, deepest) = stack.split_at_mut(depth - 1);
            let (top, from) = (&mut levels[0], &deepest[0]);
            let up = loop {
                moved += 1;
                let up = CString::new(format!(".deep-{moved}"))?;
                match rustix::fs::statat(&top.fd, &up, AtFlags::SYMLINK_NOFOLLOW) {
                    Err(Errno::NOENT) => break up,
                    Ok(_) => continue,
                    Err(e) => return Err(e.into()),
                }
            };
            rustix::fs::renameat(&from.fd, &name, &top.fd, &up)?;
            top.left.push(up);
        }
    }

    /// Opens the folder `name` in `dir` without following a link; one its owner may not read
    /// (a command's `chmod 0`) is given back its owner's rights first.
    fn open_folder(dir: &OwnedFd, name: &CStr) -> io::Result<OwnedFd> {
        match rustix::fs::openat(dir, name, FOLDER, Mode::empty()) {
            Err(Errno::ACCESS) => {
                open_up(dir, name)?;
                Ok(rustix::fs::openat(dir, name, FOLDER, Mode::empty())?)
            }
            opened => Ok(opened?),
        }
    }

    /// Gives the folder `name` in `dir` its owner's rights, without following a link.
    #[cfg(target_os = "linux")]
    fn open_up(dir: &OwnedFd, name: &CStr) -> io::Result<()> {
        use std::os::fd::AsRawFd;
        // Linux cannot change a link's mode, so `fchmodat` refuses not to follow one: the
        // folder is opened as a path (no rights needed, no link followed) and changed through
        // its descriptor's name, which is the folder opened, whatever has its name since.
        let flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let at = rustix::fs::openat(dir, name, flags, Mode::empty())?;
        rustix::fs::chmod(format!("/proc/self/fd/{}", at.as_raw_fd()), Mode::RWXU)?;
        Ok(())
    }

    /// Gives the folder `name` in `dir` its owner's rights, without following a link.
    #[cfg(not(target_os = "linux"))]
    fn open_up(dir: &OwnedFd, name: &CStr) -> io::Result<()> {
        Ok(rustix::fs::chmodat(
            dir,
            name,
            Mode::RWXU,
            AtFlags::SYMLINK_NOFOLLOW,
        )?)
    }

    /// A removal's result, where a name already gone is no error.
    fn gone(result: rustix::io::Result<()>) -> io::Result<()> {
        match result {
            Ok(()) | Err(Errno::NOENT) => Ok(()),
            Err(e) => Err(e.into()),
        }
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    /// The lock file of a folder [`made`] for a test.
    #[derive(Clone, Copy, PartialEq)]
    enum Lock {
        /// No lock file, as older tandems made them.
        Missing,
        /// A lock file its process no longer holds. It is never locked here: a flock stays with
        /// a child another test forks until that child execs, so a lock taken and let go here
        /// could still be held when the test reclaims.
        Free,
        /// A lock file held by the returned file, as by a running tandem.
        Held,
    }

    /// A folder as tandem makes it in `base`, with a `tmp/` and the lock file `lock` says.
    #[allow(clippy::unwrap_used)]
    fn made(base: &Path, name: &str, lock: Lock) -> (PathBuf, Option<File>) {
        let path = base.join(format!("{PREFIX}{name}"));
        std::fs::create_dir(&path).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o700)).unwrap();
        std::fs::create_dir(path.join("tmp")).unwrap();
        std::fs::write(path.join("policy.json"), "{}").unwrap();
        if lock == Lock::Free {
            std::fs::write(path.join(LOCK), "").unwrap();
        }
        let held = (lock == Lock::Held).then(|| {
            let file = File::create(path.join(LOCK)).unwrap();
            file.try_lock().unwrap();
            file
        });
        (path, held)
    }

    #[allow(clippy::unwrap_used)]
    fn me(base: &Path) -> u32 {
        owner_of(base).unwrap()
    }

    #[test]
    fn a_free_lock_is_reclaimed_a_held_one_is_not() {
        let base = tempfile::tempdir().unwrap();
        let (live, held) = made(base.path(), "live", Lock::Held);
        let (dead, _) = made(base.path(), "dead", Lock::Free);
        assert_eq!(reclaim(base.path(), me(base.path()), SystemTime::now()), 1);
        assert!(live.join(LOCK).exists() && !dead.exists());
        assert_eq!(reclaim(base.path(), me(base.path()), SystemTime::now()), 0);
        drop(held);
    }

    #[test]
    fn an_old_folder_without_a_lock_goes_once_it_is_a_day_old() {
        let base = tempfile::tempdir().unwrap();
        let (old, _) = made(base.path(), "old", Lock::Missing);
        // As older tandems made them: 0755.
        std::fs::set_permissions(&old, std::fs::Permissions::from_mode(0o755)).unwrap();
        let owner = me(base.path());
        let now = SystemTime::now();
        assert_eq!(reclaim(base.path(), owner, now), 0);
        assert_eq!(reclaim(base.path(), owner, now + OLD_STALE / 2), 0);
        assert_eq!(reclaim(base.path(), owner, now + OLD_STALE * 2), 1);
        assert!(!old.exists());
    }

    #[test]
    fn only_tandems_own_private_folders_are_judged() {
        let base = tempfile::tempdir().unwrap();
        let owner = me(base.path());
        let later = SystemTime::now() + OLD_STALE * 2;
        // Writable by others, a link, another name, a lock that is a link or a pipe.
        let (shared, _) = made(base.path(), "shared", Lock::Missing);
        std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o777)).unwrap();
        let target = base.path().join("target");
        std::fs::create_dir(&target).unwrap();
        std::fs::write(target.join("keep"), "x").unwrap();
        std::os::unix::fs::symlink(&target, base.path().join(format!("{PREFIX}link"))).unwrap();
        let (other, _) = made(base.path(), "x", Lock::Missing);
        let other_name = base.path().join("other-sandbox-x");
        std::fs::rename(&other, &other_name).unwrap();
        let (linked, _) = made(base.path(), "linked-lock", Lock::Missing);
        std::os::unix::fs::symlink(target.join("keep"), linked.join(LOCK)).unwrap();
        let (piped, _) = made(base.path(), "piped-lock", Lock::Missing);
        let fifo = std::process::Command::new("mkfifo")
            .arg(piped.join(LOCK))
            .status()
            .unwrap();
        assert!(fifo.success());
        assert_eq!(reclaim(base.path(), owner, later), 0);
        assert_eq!(reclaim(base.path(), owner + 1, later), 0, "another user's");
        for kept in [&shared, &target, &other_name, &linked, &piped] {
            assert!(kept.exists(), "{}", kept.display());
        }
        assert!(target.join("keep").exists());
    }

    #[test]
    fn removal_follows_no_link_and_undoes_what_a_command_did_to_stop_it() {
        let base = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("precious"), "x").unwrap();
        let (path, _) = made(base.path(), "planted", Lock::Free);
        let tmp = path.join("tmp");
        std::os::unix::fs::symlink(outside.path(), tmp.join("to-folder")).unwrap();
        std::os::unix::fs::symlink(outside.path().join("precious"), tmp.join("to-file")).unwrap();
        // Folders their owner may not write, read or enter.
        for (name, mode) in [("shut", 0o000), ("read-only", 0o500)] {
            let folder = tmp.join(name);
            std::fs::create_dir_all(folder.join("inner")).unwrap();
            std::fs::write(folder.join("inner/file"), "x").unwrap();
            std::fs::set_permissions(&folder, std::fs::Permissions::from_mode(mode)).unwrap();
        }
        // Deeper than the descriptors it would take to walk it.
        let mut deep = tmp.join("deep");
        for _ in 0..200 {
            deep.push("d");
        }
        std::fs::create_dir_all(&deep).unwrap();
        std::fs::write(deep.join("bottom"), "x").unwrap();
        assert_eq!(reclaim(base.path(), me(base.path()), SystemTime::now()), 1);
        assert!(!path.exists());
        assert_eq!(
            std::fs::read_to_string(outside.path().join("precious")).unwrap(),
            "x"
        );
    }

    #[test]
    fn a_folder_is_made_private_locked_and_removed_with_its_lock_last() {
        let folder = PrivateFolder::create().unwrap();
        let path = folder.path().to_path_buf();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700);
        let other = File::open(path.join(LOCK)).unwrap();
        assert!(other.try_lock().is_err(), "the lock is held");
        assert!(OPEN.lock().contains(&path));
        folder.remove();
        assert!(!path.exists() && !OPEN.lock().contains(&path));
        drop(folder);
    }
}
