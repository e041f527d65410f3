//! Windows: a file or folder is opened by its path, then the path the system says the open
//! handle has (`GetFinalPathNameByHandleW`) must be the one asked for, or a link or
//! junction was followed on the way. Folders are held open without `FILE_SHARE_DELETE`, so
//! they cannot be renamed or replaced while a change is made in them.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::windows::fs::OpenOptionsExt;
use std::os::windows::io::AsRawHandle;
use std::path::{Path, PathBuf};

use windows_sys::Win32::Storage::FileSystem::{
    FILE_FLAG_BACKUP_SEMANTICS, FILE_NAME_NORMALIZED, FILE_SHARE_READ, FILE_SHARE_WRITE,
    GetFinalPathNameByHandleW, VOLUME_NAME_DOS,
};

use super::{EntryKind, Stamp, moved};

/// An open folder whose real path is the one asked for.
pub struct Folder {
    path: PathBuf,
    _held: File,
}

/// The path the system has for the open `file`.
#[allow(unsafe_code)]
fn final_path(file: &File) -> io::Result<PathBuf> {
    use std::os::windows::ffi::OsStringExt;
    let mut buf = vec![0u16; 512];
    loop {
        // SAFETY: the handle is open for the call, and the buffer's length is passed with it.
        let len = unsafe {
            GetFinalPathNameByHandleW(
                file.as_raw_handle(),
                buf.as_mut_ptr(),
                u32::try_from(buf.len()).unwrap_or(u32::MAX),
                FILE_NAME_NORMALIZED | VOLUME_NAME_DOS,
            )
        } as usize;
        if len == 0 {
            return Err(io::Error::last_os_error());
        }
        if len < buf.len() {
            buf.truncate(len);
            let path = PathBuf::from(std::ffi::OsString::from_wide(&buf));
            return Ok(dunce::simplified(&path).to_path_buf());
        }
        buf.resize(len + 1, 0);
    }
}

/// Whether two paths name the same place, as the file system compares names.
fn same(a: &Path, b: &Path) -> bool {
    crate::same_or_inside(a, b) && crate::same_or_inside(b, a)
}

fn checked(file: File, path: &Path) -> io::Result<File> {
    if same(&final_path(&file)?, path) {
        Ok(file)
    } else {
        Err(moved(path))
    }
}

/// Opens the folder at `path` (made first with `create`), refused when a link or junction
/// leads elsewhere.
pub fn folder(path: &Path, create: bool) -> io::Result<Folder> {
    if create {
        std::fs::create_dir_all(path)?;
    }
    let held = OpenOptions::new()
        .read(true)
        .share_mode(FILE_SHARE_READ | FILE_SHARE_WRITE)
        .custom_flags(FILE_FLAG_BACKUP_SEMANTICS)
        .open(path)?;
    Ok(Folder {
        path: path.to_path_buf(),
        _held: checked(held, path)?,
    })
}

/// Opens the file at `path` for reading, refused when a link led elsewhere.
pub fn open(path: &Path) -> io::Result<File> {
    checked(File::open(path)?, path)
}

/// What `path` is, from its own entry (a link is reported as a link).
pub fn place(path: &Path) -> io::Result<Option<EntryKind>> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) => Ok(Some(place_of(&meta.file_type()))),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

fn place_of(kind: &std::fs::FileType) -> EntryKind {
    if kind.is_symlink() {
        EntryKind::Link
    } else if kind.is_dir() {
        EntryKind::Folder
    } else if kind.is_file() {
        EntryKind::File
    } else {
        EntryKind::Special
    }
}

/// Writes `bytes` to `path` through a new file made exclusively beside it under a name
/// nobody can guess, then moved over the old name while the folder is held.
pub fn replace(path: &Path, bytes: &[u8]) -> io::Result<()> {
    use std::io::Write;
    let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else {
        return Err(io::Error::other("path has no parent folder"));
    };
    let held = folder(dir, true)?;
    let readonly = match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => return Err(moved(path)),
        Ok(meta) => Some(meta.permissions().readonly()),
        Err(_) => None,
    };
    let mut temp = tempfile::Builder::new()
        .prefix(&format!(".{}.", name.to_string_lossy()))
        .suffix(".tandem")
        .tempfile_in(&held.path)?;
    temp.write_all(bytes)?;
    temp.as_file().sync_all()?;
    if let Some(readonly) = readonly {
        let mut perms = temp.as_file().metadata()?.permissions();
        perms.set_readonly(readonly);
        temp.as_file().set_permissions(perms)?;
    }
    temp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// Removes the file at `path` (a link there is removed itself).
pub fn remove(path: &Path) -> io::Result<()> {
    let dir = path.parent().ok_or_else(|| io::Error::other("no parent"))?;
    let _held = folder(dir, false)?;
    std::fs::remove_file(path)
}

/// The names in the folder at `path`, each with what it is (links not followed).
pub fn list(path: &Path) -> io::Result<Vec<(std::ffi::OsString, EntryKind)>> {
    let _held = folder(path, false)?;
    let mut out = Vec::new();
    for entry in std::fs::read_dir(path)? {
        let entry = entry?;
        if let Ok(kind) = entry.file_type() {
            out.push((entry.file_name(), place_of(&kind)));
        }
    }
    Ok(out)
}

/// What every name on the way to `path` leads to right now (see the Unix version): each
/// folder by when it was made, and the folders `watched` says a command could rename, the
/// folder holding the file and the file also by when their contents last changed; a link
/// anywhere on the way is [`moved`].
pub fn trail(path: &Path, watched: &dyn Fn(&Path) -> bool) -> io::Result<Vec<Stamp>> {
    let mut out = Vec::new();
    let holder = path.parent();
    for at in path.ancestors().collect::<Vec<_>>().into_iter().rev() {
        let near = at == path || Some(at) == holder || watched(at);
        match std::fs::symlink_metadata(at) {
            Ok(meta) if meta.file_type().is_symlink() => return Err(moved(path)),
            Ok(meta) => out.push(Stamp {
                id: (0, 0),
                changed: nanos(meta.created().ok()),
                modified: if near {
                    nanos(meta.modified().ok())
                } else {
                    (0, 0)
                },
            }),
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                out.push(Stamp::default());
                break;
            }
            Err(e) => return Err(e),
        }
    }
    Ok(out)
}

fn nanos(time: Option<std::time::SystemTime>) -> (i64, i64) {
    let since = time
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .unwrap_or_default();
    (
        i64::try_from(since.as_secs()).unwrap_or(i64::MAX),
        i64::from(since.subsec_nanos()),
    )
}
