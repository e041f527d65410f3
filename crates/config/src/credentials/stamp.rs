//! How a running agent learns that `tandem login` or `tandem logout` changed the setup in
//! another process: each of them rewrites a small stamp file in the config directory with a
//! value of its own, and the agent compares the file with what it saw when it last read its
//! configuration (one read of a few bytes before a model request, where asking the system's
//! credential store would be a D-Bus round trip or a keychain prompt).
//!
//! The stamp holds no secret: only when it was written and by which process. A stamp that
//! cannot be written costs a running agent the news of a change until it is told another way
//! (`authenticate`, or a key the server refuses), never a login or a logout.

use std::io::Write;
use std::path::{Path, PathBuf};

/// The stamp's name inside the config directory.
pub(crate) const STAMP_NAME: &str = ".login-stamp";

/// The stamp of `config_dir`.
fn path(config_dir: &Path) -> PathBuf {
    config_dir.join(STAMP_NAME)
}

/// What the stamp says now; `None` when no login or logout ever wrote one (or it cannot be
/// read, which reads as the same).
pub fn read(config_dir: &Path) -> Option<String> {
    std::fs::read_to_string(path(config_dir)).ok()
}

/// Writes a new stamp: the stored keys or the config file of `config_dir` changed. Replaced
/// whole (made exclusively under an unpredictable name, then renamed over the old one), so a
/// reader never sees half of it and no link planted at its name is followed.
pub fn touch(config_dir: &Path) {
    if let Err(e) = write(config_dir) {
        tracing::debug!(dir = %config_dir.display(), "cannot write the login stamp: {e}");
    }
}

fn write(config_dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(config_dir)?;
    let since_epoch = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    // The time alone could repeat (a coarse clock, two writes in one tick).
    static WRITTEN: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let value = format!(
        "{}.{:09} {} {}\n",
        since_epoch.as_secs(),
        since_epoch.subsec_nanos(),
        std::process::id(),
        WRITTEN.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    );
    let mut temp = tempfile::Builder::new()
        .prefix(&format!("{STAMP_NAME}."))
        .suffix(".tmp")
        .tempfile_in(config_dir)?;
    temp.write_all(value.as_bytes())?;
    temp.persist(path(config_dir)).map_err(|e| e.error)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_touch_leaves_a_stamp_unlike_the_one_before() {
        let dir = tempfile::tempdir().unwrap();
        let config_dir = dir.path().join("tandem");
        assert_eq!(read(&config_dir), None);
        touch(&config_dir);
        let first = read(&config_dir).unwrap();
        touch(&config_dir);
        let second = read(&config_dir).unwrap();
        assert_ne!(first, second);
        let names: Vec<_> = std::fs::read_dir(&config_dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, [STAMP_NAME], "no temporary file is left");
    }
}
