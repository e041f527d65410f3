//! A tiny tmpfs for full-disk tests: mounted at a directory, filled on demand, unmounted on
//! drop. Mounting needs root: CI runs as root and sets `TANDEM_TMPFS_REQUIRED=1`; elsewhere
//! a test that cannot mount says why it did not run.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A tmpfs mounted at the path it holds.
pub(crate) struct Tiny(pub PathBuf);

impl Tiny {
    /// Mounts a tmpfs of `size` at `at`; `None` (said on stderr) where mounting is not
    /// allowed and not required.
    pub(crate) fn mount(at: &Path, size: &str) -> Option<Tiny> {
        std::fs::create_dir_all(at).unwrap();
        let mounted = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(at)
            .status()
            .is_ok_and(|s| s.success());
        if mounted {
            return Some(Tiny(at.to_path_buf()));
        }
        assert!(
            std::env::var("TANDEM_TMPFS_REQUIRED").as_deref() != Ok("1"),
            "cannot mount a tmpfs (this test needs root)"
        );
        // The test harness shows a test's stderr; a skipped check must say so.
        #[allow(clippy::print_stderr)]
        {
            eprintln!("skipped: cannot mount a tmpfs here (needs root; CI runs it)");
        }
        None
    }

    /// Fills it with `filler` until it refuses another byte; the filler's path.
    pub(crate) fn fill(&self) -> PathBuf {
        let path = self.0.join("filler");
        let mut file = std::fs::File::create(&path).unwrap();
        let chunk = vec![b'x'; 4096];
        while file.write_all(&chunk).is_ok() {}
        while file.write_all(b"x").is_ok() {}
        let _ = file.sync_all();
        path
    }
}

impl Drop for Tiny {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}
