//! The one file layer every tool, rewind and `tandem exec` use on disk. A path reaching here
//! was resolved and judged ([`crate::platform::named::PathBase::resolve`] followed the links that were
//! there then), so it is opened exactly (no link followed anywhere in it,
//! [`crate::platform::exact`]) and what a file is comes from what was opened, never from a
//! look at the path made earlier: a link a command planted since (a flipped name, a folder
//! swapped for a link, a link waiting under a temp name) is refused, not followed. Writes go
//! to an exclusively created file under an unguessable name and are renamed into place in
//! the open folder.

use std::ffi::OsString;
use std::io::Read;
use std::path::Path;

use crate::platform::exact::{self, EntryKind, Stamp};

/// Why an existing path must not be read as a file: a directory, or a FIFO, socket or device
/// (reading those can block forever or never end). `None` for a regular file, no file at all,
/// or a link (which nothing here follows: the read, write or removal that comes next refuses
/// it, and the caller says so in its own words).
pub(crate) async fn unreadable(path: &Path) -> Option<&'static str> {
    let path = path.to_path_buf();
    tokio::task::spawn_blocking(move || unreadable_now(&path))
        .await
        .unwrap_or(Some("could not be looked at"))
}

fn unreadable_now(path: &Path) -> Option<&'static str> {
    match exact::place(path) {
        Ok(Some(EntryKind::Folder)) => Some("is a directory"),
        Ok(Some(EntryKind::Special)) => std::fs::symlink_metadata(path)
            .ok()
            .and_then(|m| crate::platform::unreadable_kind(&m.file_type()))
            .or(Some("is not a regular file")),
        _ => None,
    }
}

/// Reads the file at `path`, opened exactly; a directory, device, FIFO or link is refused
/// from the open file itself, so nothing can swap it in between.
pub(crate) async fn read_text(path: &Path) -> std::io::Result<Vec<u8>> {
    let path = path.to_path_buf();
    tokio::task::spawn_blocking(move || read_now(&path))
        .await
        .map_err(std::io::Error::other)?
}

/// [`read_text`], for callers already off the runtime's threads.
pub(crate) fn read_now(path: &Path) -> std::io::Result<Vec<u8>> {
    let mut file = open(path)?;
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// Opens the regular file at `path` exactly, for reading.
pub(crate) fn open(path: &Path) -> std::io::Result<std::fs::File> {
    let file = exact::open(path)?;
    let kind = file.metadata()?.file_type();
    if let Some(why) = crate::platform::unreadable_kind(&kind) {
        return Err(std::io::Error::other(why));
    }
    Ok(file)
}

/// Writes `content` atomically: a temp file made exclusively beside the target, then a
/// rename in the same open folder. An existing file's permissions are kept; missing parent
/// directories are created (none of them through a link).
pub(crate) async fn write_atomic(path: &Path, content: &str) -> std::io::Result<()> {
    let path = path.to_path_buf();
    let content = content.to_string();
    tokio::task::spawn_blocking(move || exact::replace(&path, content.as_bytes()))
        .await
        .map_err(std::io::Error::other)?
}

/// Removes the file at `path` from its exactly opened folder (a link planted there is what
/// goes, never what it points to).
pub(crate) async fn remove(path: &Path) -> std::io::Result<()> {
    let path = path.to_path_buf();
    tokio::task::spawn_blocking(move || exact::remove(&path))
        .await
        .map_err(std::io::Error::other)?
}

/// The names in the folder at `path`, opened exactly, each with what it is.
pub(crate) fn list(path: &Path) -> std::io::Result<Vec<(OsString, EntryKind)>> {
    exact::list(path)
}

/// Whether a regular file is at `path`, reached without a link.
pub(crate) fn is_file(path: &Path) -> bool {
    matches!(exact::place(path), Ok(Some(EntryKind::File)))
}

/// A look at every name on the way to a path, to tell afterwards whether any was replaced
/// in between (what the editor read while it was asked may then not be the file that was
/// judged). Folders inside `roots` (the workspace, where commands may rename things) are
/// watched closely; see [`exact::trail`].
#[derive(Debug)]
pub(crate) struct PathWatch {
    seen: std::io::Result<Vec<Stamp>>,
    roots: Vec<std::path::PathBuf>,
}

impl PathWatch {
    /// Looks now.
    pub(crate) fn start(path: &Path, roots: &[std::path::PathBuf]) -> Self {
        let roots = roots.to_vec();
        Self {
            seen: exact::trail(path, &|at| inside(at, &roots)),
            roots,
        }
    }

    /// Whether nothing on the way to `path` was replaced since [`PathWatch::start`] and no link
    /// is in it.
    pub(crate) fn unchanged(&self, path: &Path) -> bool {
        let now = exact::trail(path, &|at| inside(at, &self.roots));
        match (&self.seen, now) {
            (Ok(before), Ok(now)) => *before == now,
            _ => false,
        }
    }

    /// Whether a link was on the way when it looked.
    pub(crate) fn saw_link(&self) -> bool {
        self.seen.as_ref().is_err_and(exact::is_moved)
    }
}

fn inside(at: &Path, roots: &[std::path::PathBuf]) -> bool {
    roots
        .iter()
        .any(|root| crate::platform::same_or_inside(at, root))
}

// Symlinks need no privilege only on Unix.
#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::{PermissionsExt, symlink};

    #[allow(clippy::unwrap_used)]
    fn root() -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        (dir, root)
    }

    #[tokio::test]
    async fn atomic_write_keeps_permissions_and_leaves_no_temp_file() {
        let (_dir, root) = root();
        let path = root.join("run.sh");
        std::fs::write(&path, "old").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        write_atomic(&path, "new").await.unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
        assert_eq!(
            std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
            0o755
        );
        write_atomic(&root.join("a/b/c.txt"), "x").await.unwrap();
        assert_eq!(
            std::fs::read_to_string(root.join("a/b/c.txt")).unwrap(),
            "x"
        );
        assert_eq!(std::fs::read_dir(&root).unwrap().count(), 2, "no temp file");
    }

    #[tokio::test]
    async fn a_link_planted_under_the_old_temp_name_is_never_written_through() {
        let (_dir, root) = root();
        let outside = root.join("outside.txt");
        std::fs::write(&outside, "precious").unwrap();
        let ws = root.join("ws");
        std::fs::create_dir(&ws).unwrap();
        for pid in [std::process::id(), 1, 2] {
            symlink(&outside, ws.join(format!(".a.txt.tandem-{pid}.tmp"))).unwrap();
        }
        write_atomic(&ws.join("a.txt"), "model text").await.unwrap();
        assert_eq!(std::fs::read_to_string(&outside).unwrap(), "precious");
        assert_eq!(
            std::fs::read_to_string(ws.join("a.txt")).unwrap(),
            "model text"
        );
    }

    #[tokio::test]
    async fn a_name_or_folder_that_became_a_link_is_refused_for_reads_writes_and_removes() {
        let (_dir, root) = root();
        let secret = root.join("secret");
        std::fs::create_dir(&secret).unwrap();
        std::fs::write(secret.join("key"), "KEY").unwrap();
        let ws = root.join("ws");
        std::fs::create_dir(&ws).unwrap();
        // The file itself is a link now.
        symlink(secret.join("key"), ws.join("r.txt")).unwrap();
        let read = read_text(&ws.join("r.txt")).await.unwrap_err();
        assert!(exact::is_moved(&read), "{read}");
        assert_eq!(
            unreadable(&ws.join("r.txt")).await,
            None,
            "the open says why"
        );
        let wrote = write_atomic(&ws.join("r.txt"), "x").await.unwrap_err();
        assert!(exact::is_moved(&wrote), "{wrote}");
        assert_eq!(std::fs::read_to_string(secret.join("key")).unwrap(), "KEY");
        // A folder on the way is a link now.
        symlink(&secret, ws.join("sub")).unwrap();
        for result in [
            read_text(&ws.join("sub/key")).await.map(|_| ()),
            write_atomic(&ws.join("sub/key"), "x").await,
            write_atomic(&ws.join("sub/new/deeper.txt"), "x").await,
            remove(&ws.join("sub/key")).await,
            list(&ws.join("sub")).map(|_| ()),
        ] {
            let error = result.unwrap_err();
            assert!(exact::is_moved(&error), "{error}");
        }
        assert_eq!(std::fs::read_to_string(secret.join("key")).unwrap(), "KEY");
        assert_eq!(std::fs::read_dir(&secret).unwrap().count(), 1);
        // Removing a planted link removes the link only.
        remove(&ws.join("r.txt")).await.unwrap();
        assert!(secret.join("key").exists());
    }

    #[tokio::test]
    async fn special_files_are_refused_from_the_open_file() {
        let (_dir, root) = root();
        let error = read_text(&root).await.unwrap_err();
        assert_eq!(error.to_string(), "is a directory");
        let fifo = root.join("fifo");
        assert!(
            std::process::Command::new("mkfifo")
                .arg(&fifo)
                .status()
                .unwrap()
                .success()
        );
        // Opened without blocking, then refused.
        let error = read_text(&fifo).await.unwrap_err();
        assert!(error.to_string().contains("FIFO"), "{error}");
        assert_eq!(
            read_text(&root.join("none")).await.unwrap_err().kind(),
            std::io::ErrorKind::NotFound
        );
    }

    #[test]
    fn a_watch_sees_a_name_replaced_and_back() {
        let (_dir, root) = root();
        let path = root.join("r.txt");
        std::fs::write(&path, "a").unwrap();
        let roots = [root.clone()];
        let watch = PathWatch::start(&path, &roots);
        assert!(watch.unchanged(&path));
        std::fs::rename(&path, root.join("r.old")).unwrap();
        std::fs::write(&path, "a").unwrap();
        assert!(!watch.unchanged(&path));
        symlink("elsewhere", root.join("l")).unwrap();
        assert!(PathWatch::start(&root.join("l"), &roots).saw_link());
        // A folder on the way swapped for a link and put back, same inode and all.
        let deep = root.join("h/.ssh/id");
        std::fs::create_dir_all(deep.parent().unwrap()).unwrap();
        std::fs::write(&deep, "harmless").unwrap();
        let watch = PathWatch::start(&deep, &roots);
        std::fs::rename(root.join("h"), root.join("h.real")).unwrap();
        symlink("/", root.join("h")).unwrap();
        std::fs::remove_file(root.join("h")).unwrap();
        std::fs::rename(root.join("h.real"), root.join("h")).unwrap();
        assert!(!watch.unchanged(&deep), "the swap and back is seen");
        // Outside the roots, folders' own activity does not count.
        let watch = PathWatch::start(&deep, &[]);
        std::fs::write(root.join("unrelated"), "x").unwrap();
        assert!(watch.unchanged(&deep));
    }
}
