//! Opening a path exactly where it was judged: no symbolic link (or junction) is followed
//! anywhere in it, and changes are made relative to the open folder, so a link planted
//! between a check and the use cannot send a read or a write elsewhere. Paths given here
//! are already resolved ([`crate::named::PathBase::resolve`] follows the links that were there
//! when the call was judged), so a link met now is one that appeared since: [`moved`].

#[cfg(unix)]
#[path = "unix.rs"]
mod native;
#[cfg(windows)]
#[path = "windows.rs"]
mod native;

use std::io;
use std::path::Path;

pub use native::{Folder, folder, list, open, place, remove, replace, trail};

/// What a name is, from its own entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    /// A regular file.
    File,
    /// A folder.
    Folder,
    /// A symbolic link (or junction).
    Link,
    /// A FIFO, socket or device.
    Special,
}

/// One folder's or file's identity and the times it last changed, as [`trail`] reads them.
/// The default is "nothing there".
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stamp {
    /// Device and inode (zero where the system does not say).
    pub(crate) id: (u64, u64),
    /// When its metadata or entries last changed (seconds, nanoseconds).
    pub(crate) changed: (i64, i64),
    /// When its contents last changed.
    pub(crate) modified: (i64, i64),
}

/// The error of a path that now leads through a link that was not there when it was judged.
pub(crate) fn moved(path: &Path) -> io::Error {
    io::Error::other(Moved::of(path))
}

/// Whether `error` is [`moved`]'s.
pub fn is_moved(error: &io::Error) -> bool {
    error.get_ref().is_some_and(|inner| inner.is::<Moved>())
}

/// A path that leads through a link that appeared after it was checked.
#[derive(Debug, thiserror::Error)]
#[error(
    "{0} now leads through a symbolic link that was not there when it was checked; nothing was opened"
)]
pub struct Moved(String);

impl Moved {
    /// The error of `path`.
    pub fn of(path: &Path) -> Self {
        Moved(path.display().to_string())
    }
}
