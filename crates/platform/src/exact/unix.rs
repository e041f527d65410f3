//! Unix: every component of a path opened with `O_NOFOLLOW` from the root (on Linux ≥ 5.6,
//! one `openat2` with `RESOLVE_NO_SYMLINKS` first), and every change made with the `*at`
//! calls relative to the folder's open handle, so a name swapped for a link after the walk
//! changes nothing: the handle stays the folder that was walked.

use std::fs::File;
use std::io;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path};

use rustix::fs::{AtFlags, Mode, OFlags};
use rustix::io::Errno;

use super::{EntryKind, Stamp, moved};

/// An open folder, reached without following a link.
pub struct Folder(OwnedFd);

/// How folders are opened: only to be walked through and used as a base for `*at` calls.
#[cfg(any(target_os = "linux", target_os = "android"))]
const FOLDER: OFlags = OFlags::PATH
    .union(OFlags::DIRECTORY)
    .union(OFlags::NOFOLLOW)
    .union(OFlags::CLOEXEC);
#[cfg(not(any(target_os = "linux", target_os = "android")))]
const FOLDER: OFlags = OFlags::RDONLY
    .union(OFlags::DIRECTORY)
    .union(OFlags::NOFOLLOW)
    .union(OFlags::CLOEXEC);

/// How a file is opened for reading: never a link, never the controlling terminal, and
/// without blocking on a FIFO (its kind is checked right after, on the open file).
const READ: OFlags = OFlags::RDONLY
    .union(OFlags::NOFOLLOW)
    .union(OFlags::NOCTTY)
    .union(OFlags::NONBLOCK)
    .union(OFlags::CLOEXEC);

/// The parts of an absolute path that are names; `None` for a relative path or one with
/// `..` (tandem resolves paths before it opens them, so such a path is a mistake).
fn names(path: &Path) -> Option<Vec<&std::ffi::OsStr>> {
    let mut out = Vec::new();
    let mut parts = path.components();
    if parts.next() != Some(Component::RootDir) {
        return None;
    }
    for part in parts {
        match part {
            Component::Normal(name) => out.push(name),
            Component::CurDir => {}
            _ => return None,
        }
    }
    Some(out)
}

fn not_exact(path: &Path) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        format!("{} is not an absolute, resolved path", path.display()),
    )
}

/// `errno` as an error about `path`: a link met on the way (`ELOOP`, or `ENOTDIR` where a
/// folder was expected and a link to something else was found) is [`moved`].
fn at_error(path: &Path, errno: Errno) -> io::Error {
    if errno == Errno::LOOP || errno == Errno::MLINK {
        return moved(path);
    }
    io::Error::from(errno)
}

fn root() -> io::Result<OwnedFd> {
    rustix::fs::openat(rustix::fs::CWD, "/", FOLDER, Mode::empty()).map_err(io::Error::from)
}

/// Opens the folder at `path`, walking it one name at a time; with `create`, missing
/// folders are made (each made with `mkdirat` in the folder just opened, then opened
/// without following, so a link planted in the meantime is refused, not followed).
pub fn folder(path: &Path, create: bool) -> io::Result<Folder> {
    let parts = names(path).ok_or_else(|| not_exact(path))?;
    #[cfg(target_os = "linux")]
    if !create && let Some(fd) = openat2(path, FOLDER)? {
        return Ok(Folder(fd));
    }
    let mut dir = root()?;
    for name in parts {
        dir = match rustix::fs::openat(&dir, name, FOLDER, Mode::empty()) {
            Ok(next) => next,
            Err(Errno::NOENT) if create => {
                match rustix::fs::mkdirat(&dir, name, Mode::from_raw_mode(0o777)) {
                    Ok(()) | Err(Errno::EXIST) => {}
                    Err(e) => return Err(at_error(path, e)),
                }
                rustix::fs::openat(&dir, name, FOLDER, Mode::empty())
                    .map_err(|e| at_error(path, e))?
            }
            Err(Errno::NOTDIR) => return Err(not_a_folder(&dir, name, path)),
            Err(e) => return Err(at_error(path, e)),
        };
    }
    Ok(Folder(dir))
}

/// Why `name` in `dir` could not be walked through: a link is [`moved`], anything else is
/// not a folder.
fn not_a_folder(dir: &OwnedFd, name: &std::ffi::OsStr, path: &Path) -> io::Error {
    match rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(st) if is_link(st.st_mode) => moved(path),
        _ => io::Error::from(Errno::NOTDIR),
    }
}

fn is_link(mode: impl Into<u32>) -> bool {
    kind_bits(mode) == 0o120000
}

/// The file-type bits of a mode (`st_mode` is `u16` on some systems, `u32` on others).
fn kind_bits(mode: impl Into<u32>) -> u32 {
    mode.into() & 0o170000
}

/// `openat2(path, RESOLVE_NO_SYMLINKS)`: `None` where the kernel lacks it (before 5.6), a
/// filter refuses it or a part is not a folder, so the walk is used instead.
#[cfg(target_os = "linux")]
fn openat2(path: &Path, flags: OFlags) -> io::Result<Option<OwnedFd>> {
    use rustix::fs::ResolveFlags;
    let how = ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS;
    match rustix::fs::openat2(rustix::fs::CWD, path, flags, Mode::empty(), how) {
        Ok(fd) => Ok(Some(fd)),
        // Unsupported here, or something on the way is not a folder: the walk says which
        // (a link is [`moved`]).
        Err(Errno::NOSYS | Errno::PERM | Errno::INVAL | Errno::TOOBIG | Errno::NOTDIR) => Ok(None),
        Err(e) => Err(at_error(path, e)),
    }
}

/// Opens the file at `path` for reading, following no link anywhere in it.
pub fn open(path: &Path) -> io::Result<File> {
    #[cfg(target_os = "linux")]
    if let Some(fd) = openat2(path, READ)? {
        return Ok(File::from(fd));
    }
    let (dir, name) = parent(path)?;
    let fd =
        rustix::fs::openat(&dir.0, name, READ, Mode::empty()).map_err(|e| at_error(path, e))?;
    Ok(File::from(fd))
}

/// The folder holding `path`, opened exactly, and the last name.
fn parent(path: &Path) -> io::Result<(Folder, &std::ffi::OsStr)> {
    parent_of(path, false)
}

fn parent_of(path: &Path, create: bool) -> io::Result<(Folder, &std::ffi::OsStr)> {
    let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else {
        return Err(not_exact(path));
    };
    Ok((folder(dir, create)?, name))
}

/// What `path` is, from its own entry (a link is reported as a link, not followed); `None`
/// when nothing is there.
pub fn place(path: &Path) -> io::Result<Option<EntryKind>> {
    let (dir, name) = match parent(path) {
        Ok(found) => found,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    match rustix::fs::statat(&dir.0, name, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(st) => Ok(Some(place_of(&st))),
        Err(Errno::NOENT) => Ok(None),
        Err(e) => Err(at_error(path, e)),
    }
}

fn place_of(st: &rustix::fs::Stat) -> EntryKind {
    match kind_bits(st.st_mode) {
        0o100000 => EntryKind::File,
        0o040000 => EntryKind::Folder,
        0o120000 => EntryKind::Link,
        _ => EntryKind::Special,
    }
}

/// Writes `bytes` to `path` through a new file beside it, made exclusively under a name
/// nobody can guess, then renamed over the old name in the same open folder. The old
/// file's permissions are kept; missing folders are made.
pub fn replace(path: &Path, bytes: &[u8]) -> io::Result<()> {
    use std::io::Write;
    let (dir, name) = parent_of(path, true)?;
    let mode = match rustix::fs::statat(&dir.0, name, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(st) if is_link(st.st_mode) => return Err(moved(path)),
        Ok(st) => Some(Mode::from_raw_mode(st.st_mode & 0o7777)),
        Err(Errno::NOENT) => None,
        Err(e) => return Err(at_error(path, e)),
    };
    let temp = temp_name(name);
    let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let fd = rustix::fs::openat(&dir.0, &temp, flags, Mode::from_raw_mode(0o666))
        .map_err(|e| at_error(path, e))?;
    let mut file = File::from(fd);
    let written = (|| {
        file.write_all(bytes)?;
        if let Some(mode) = mode {
            rustix::fs::fchmod(&file, mode)?;
        }
        file.sync_all()?;
        rustix::fs::renameat(&dir.0, &temp, &dir.0, name).map_err(|e| at_error(path, e))
    })();
    if written.is_err() {
        let _ = rustix::fs::unlinkat(&dir.0, &temp, AtFlags::empty());
    }
    written
}

/// `.<name>.<random>.tandem`: hidden, tied to the file it replaces, and unguessable, so no
/// link can be waiting under it (and `O_EXCL` refuses one that is).
fn temp_name(name: &std::ffi::OsStr) -> std::ffi::OsString {
    let mut temp = std::ffi::OsString::from(".");
    temp.push(name);
    temp.push(format!(".{}.tandem", uuid::Uuid::new_v4().simple()));
    temp
}

/// Removes the file at `path` (a link there is removed itself, never what it points to).
pub fn remove(path: &Path) -> io::Result<()> {
    let (dir, name) = parent(path)?;
    rustix::fs::unlinkat(&dir.0, name, AtFlags::empty()).map_err(|e| at_error(path, e))
}

/// The names in the folder at `path`, each with what it is (links not followed).
pub fn list(path: &Path) -> io::Result<Vec<(std::ffi::OsString, EntryKind)>> {
    let dir = folder(path, false)?;
    let fd = rustix::fs::openat(
        &dir.0,
        ".",
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )?;
    let mut out = Vec::new();
    for entry in rustix::fs::Dir::read_from(&fd)? {
        let entry = entry?;
        let name = std::ffi::OsStr::from_bytes(entry.file_name().to_bytes());
        if name == "." || name == ".." {
            continue;
        }
        let kind = match rustix::fs::statat(&fd, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) => place_of(&st),
            Err(_) => continue,
        };
        out.push((name.to_os_string(), kind));
    }
    Ok(out)
}

/// What every name on the way to `path` leads to right now, to compare with a later look:
/// each folder's identity (device and inode: a name swapped for a link or another folder
/// changes it); for the folders `watched` says a command could rename (those in the
/// workspace) and the folder holding the file, also the times their entries last changed
/// (a rename, link or removal in a folder moves its times, even when the old name is put
/// back); and the file's identity and times. Folders further up are compared by identity
/// only: their times change whenever anything is made in them (every temp file in `/tmp`,
/// every dotfile in the home), and no command may rename anything there.
pub fn trail(path: &Path, watched: &dyn Fn(&Path) -> bool) -> io::Result<Vec<Stamp>> {
    let parts = names(path).ok_or_else(|| not_exact(path))?;
    let mut dir = root()?;
    let mut at = std::path::PathBuf::from("/");
    let mut out = vec![folder_stamp(&rustix::fs::fstat(&dir)?, watched(&at))];
    let last = parts.len();
    for (i, name) in parts.into_iter().enumerate() {
        if i + 1 == last {
            // The folder holding the file, with its times, then the file itself.
            if let Some(holder) = out.last_mut() {
                *holder = stamp(&rustix::fs::fstat(&dir)?);
            }
            match rustix::fs::statat(&dir, name, AtFlags::SYMLINK_NOFOLLOW) {
                Ok(st) if is_link(st.st_mode) => return Err(moved(path)),
                Ok(st) => out.push(stamp(&st)),
                Err(Errno::NOENT) => out.push(Stamp::default()),
                Err(e) => return Err(at_error(path, e)),
            }
            break;
        }
        dir = match rustix::fs::openat(&dir, name, FOLDER, Mode::empty()) {
            Ok(next) => next,
            Err(Errno::NOENT) => {
                out.push(Stamp::default());
                return Ok(out);
            }
            Err(Errno::NOTDIR) => return Err(not_a_folder(&dir, name, path)),
            Err(e) => return Err(at_error(path, e)),
        };
        at.push(name);
        out.push(folder_stamp(&rustix::fs::fstat(&dir)?, watched(&at)));
    }
    Ok(out)
}

/// A folder on the way: with its times when it is `watched`, else its identity only.
fn folder_stamp(st: &rustix::fs::Stat, watched: bool) -> Stamp {
    if watched { stamp(st) } else { identity(st) }
}

/// A folder further up: its identity only.
fn identity(st: &rustix::fs::Stat) -> Stamp {
    Stamp {
        id: stamp(st).id,
        ..Stamp::default()
    }
}

// The fields' integer types differ between systems.
#[allow(clippy::unnecessary_cast, clippy::cast_possible_wrap)]
fn stamp(st: &rustix::fs::Stat) -> Stamp {
    Stamp {
        id: (st.st_dev as u64, st.st_ino as u64),
        changed: (st.st_ctime as i64, st.st_ctime_nsec as i64),
        modified: (st.st_mtime as i64, st.st_mtime_nsec as i64),
    }
}
