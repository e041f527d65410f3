//! What differs between operating systems, in one place: the shell a command line runs in,
//! process groups and Job Objects (a child and everything it starts, killed together), how a
//! child's exit is read, which kinds of file must not be opened for reading, whether paths
//! ignore case, the requests to stop (signals, console events), the allocator's settings,
//! keeping the user's other processes out of tandem's memory, this machine's own network
//! addresses (`interfaces.rs`), opening a path without following links (`exact/`), the
//! sandbox commands run in (`sandbox/`), and what ties an unsandboxed command to tandem so
//! nothing it starts outlives tandem (`ties.rs`, Linux). This is the only module with
//! `cfg(unix)`/`cfg(windows)` code outside tests: `unix.rs` and `windows.rs` have the same
//! functions, and the rest of tandem calls them through here.
//!
//! tandem-platform also holds what every caller of the file system and the network shares
//! below the layers that use them: the paths a model names, resolved at a session's
//! [`named::PathBase`], and the capped HTTP read and reqwest wording in [`net`].
//!
//! It uses no other crate of tandem's; every crate above tandem-types may use it.

pub mod exact;
mod group;
#[cfg(all(target_os = "linux", target_env = "gnu"))]
mod heap;
pub mod interfaces;
pub mod named;
#[cfg(unix)]
#[path = "unix.rs"]
mod native;
#[cfg(windows)]
#[path = "windows.rs"]
mod native;
pub mod net;
mod output;
mod paths;
pub mod private;
pub mod sandbox;
mod shell;
#[cfg(target_os = "linux")]
pub mod ties;

pub use group::Group;
pub use native::{close_to_inspection, exit_signal, stop_requested, unreadable_kind};
pub use output::Merged;
pub use paths::{PATHS_IGNORE_CASE, canonical, glob_pattern, on_path, same_or_inside};
pub use shell::{Dialect, Shell};

/// Returns the allocator's free memory to the system after a large, short-lived peak (glibc
/// keeps it otherwise; other allocators return it on their own).
pub fn give_back_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    heap::give_back();
}

/// Sets up the memory allocator for a long-lived process, where the system's allocator
/// needs it (glibc: one arena, see `heap.rs`). Call first in `main`, before threads start.
pub fn tune_allocator() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    heap::use_one_arena();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn killing_a_group_ends_its_grandchildren() {
        let shell = Shell::system();
        let line = if cfg!(windows) {
            "Start-Process -NoNewWindow ping -ArgumentList '-n','30','127.0.0.1'; ping -n 30 127.0.0.1"
        } else {
            "sleep 30 & sleep 30"
        };
        let mut group = Group::spawn(shell.command(line)).unwrap();
        group.kill();
        let status = tokio::time::timeout(std::time::Duration::from_secs(10), group.wait())
            .await
            .unwrap()
            .unwrap();
        assert!(!status.success());
        if cfg!(unix) {
            assert_eq!(exit_signal(&status), Some(9));
        }
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn special_files_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f");
        std::fs::write(&file, "x").unwrap();
        let kind = |p: &std::path::Path| std::fs::metadata(p).unwrap().file_type();
        assert_eq!(unreadable_kind(&kind(&file)), None);
        assert_eq!(unreadable_kind(&kind(dir.path())), Some("is a directory"));
        assert_eq!(
            unreadable_kind(&kind(std::path::Path::new("/dev/null"))),
            Some("is a device file, not a regular file")
        );
    }
}
