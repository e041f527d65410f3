//! The writer task of one open transcript: it writes whatever is queued with a single
//! `write` under an exclusive file lock, so concurrent tandem processes never interleave
//! partial lines. A write the disk refuses (a full disk, a quota) loses nothing: a partial
//! write is cut back to the last whole record, what could not be written stays in the
//! backlog (in memory, in order, readable by a reload in this process), the failure is kept
//! for the session to tell the user, and the backlog is tried again every few seconds and
//! with every new record until the disk takes it. At exit every flush is such a try, and
//! `transcript::write_out` repeats them for a bounded while and reports what is still held.

use std::fs::File;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use tokio::sync::{mpsc, oneshot};

use super::lock::SessionLock;

/// How long a backlog waits before it is tried again when no new record comes.
const RETRY: Duration = Duration::from_secs(2);

/// What the writer task is asked to do.
pub(super) enum Op {
    /// Append this line (newline included).
    Line(String),
    /// Answer once every line queued before is written, or has failed to be.
    Flush(oneshot::Sender<()>),
}

/// What is not on disk yet, and why.
#[derive(Debug, Default)]
pub(super) struct Backlog {
    /// Whole records, newline-terminated, in order.
    pub(crate) bytes: String,
    /// The last write's failure, while the backlog is not written.
    pub(crate) error: Option<String>,
}

/// Writes what `queue` brings to `file` until every handle is gone; `lock` is held (the
/// session stays this process's) until the last record is written.
pub(super) async fn run(
    file: std::io::Result<File>,
    path: PathBuf,
    mut queue: mpsc::UnboundedReceiver<Op>,
    backlog: Arc<Mutex<Backlog>>,
    lock: SessionLock,
) {
    let mut disk = Disk {
        file,
        path,
        cut_to: None,
    };
    let mut flushed = Vec::new();
    loop {
        let waiting = !backlog.lock().bytes.is_empty();
        let next = if waiting {
            match tokio::time::timeout(RETRY, queue.recv()).await {
                Ok(next) => next,
                Err(_) => {
                    disk.write(&backlog);
                    continue;
                }
            }
        } else {
            queue.recv().await
        };
        let Some(op) = next else { break };
        let mut next = Some(op);
        let mut lines = String::new();
        while let Some(op) = next {
            match op {
                Op::Line(line) => lines.push_str(&line),
                Op::Flush(done) => flushed.push(done),
            }
            next = queue.try_recv().ok();
        }
        backlog.lock().bytes.push_str(&lines);
        disk.write(&backlog);
        for done in flushed.drain(..) {
            let _ = done.send(());
        }
    }
    // Every handle is gone: a last try before the records are lost with the process.
    disk.write(&backlog);
    let left = backlog.lock();
    if !left.bytes.is_empty() {
        tracing::error!(
            path = %disk.path.display(),
            records = left.bytes.matches('\n').count(),
            "the transcript could not be written before the session closed; these records are lost: {}",
            left.error.as_deref().unwrap_or("unknown error")
        );
    }
    drop(lock);
}

/// The transcript file (or why it cannot be written), and where a failed write must be cut
/// back to.
struct Disk {
    file: std::io::Result<File>,
    path: PathBuf,
    /// The file's length before a write that failed part-way and could not be cut back at
    /// once: the next write cuts it back first.
    cut_to: Option<u64>,
}

impl Disk {
    /// Writes the backlog; on failure it stays, with why.
    fn write(&mut self, backlog: &Mutex<Backlog>) {
        let mut backlog = backlog.lock();
        if backlog.bytes.is_empty() {
            return;
        }
        match self.append(backlog.bytes.as_bytes()) {
            Ok(()) => {
                if backlog.error.take().is_some() {
                    tracing::info!(path = %self.path.display(), "the transcript is written again");
                }
                backlog.bytes.clear();
                backlog.bytes.shrink_to(64 * 1024);
            }
            Err(e) => {
                if backlog.error.is_none() {
                    tracing::error!(path = %self.path.display(), "cannot append to the transcript; its records are kept in memory and tried again: {e}");
                }
                backlog.error = Some(e.to_string());
            }
        }
    }

    /// Appends `bytes` under the file's lock; a write that fails part-way is cut back to
    /// the file's length before it, so no half record is left for the next one to join.
    fn append(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        let file = match &self.file {
            Ok(file) => file,
            Err(e) => return Err(std::io::Error::new(e.kind(), e.to_string())),
        };
        file.lock()?;
        let written = append_locked(file, bytes, &mut self.cut_to);
        let _ = file.unlock();
        written
    }
}

fn append_locked(file: &File, bytes: &[u8], cut_to: &mut Option<u64>) -> std::io::Result<()> {
    if let Some(len) = *cut_to {
        file.set_len(len)?;
        *cut_to = None;
    }
    let len = file.metadata()?.len();
    let written = (&*file).write_all(bytes);
    if written.is_err() {
        *cut_to = Some(len);
        if file.set_len(len).is_ok() {
            *cut_to = None;
        }
    }
    written
}

#[cfg(test)]
mod tests {
    use super::*;

    fn disk(path: &std::path::Path) -> Disk {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .unwrap();
        Disk {
            file: Ok(file),
            path: path.to_path_buf(),
            cut_to: None,
        }
    }

    #[test]
    fn appends_from_separate_opens_never_interleave() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        let threads: Vec<_> = (0..4)
            .map(|i| {
                let path = path.clone();
                // Separate opens, as separate processes would have.
                std::thread::spawn(move || {
                    let mut disk = disk(&path);
                    let backlog = Mutex::new(Backlog::default());
                    for _ in 0..200 {
                        let line = format!("{}\n", format!("{i}").repeat(3000));
                        backlog.lock().bytes.push_str(&line);
                        disk.write(&backlog);
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 800);
        assert!(
            lines
                .iter()
                .all(|l| l.len() == 3000 && l.chars().all(|c| c == l.chars().next().unwrap()))
        );
    }

    #[test]
    fn a_refused_write_is_kept_and_a_part_written_is_cut_back() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        std::fs::write(&path, "one\n").unwrap();
        // A read-only handle: every write fails, as on a full disk.
        let mut refused = Disk {
            file: Ok(std::fs::File::open(&path).unwrap()),
            path: path.clone(),
            cut_to: None,
        };
        let backlog = Mutex::new(Backlog::default());
        backlog.lock().bytes.push_str("two\n");
        refused.write(&backlog);
        assert_eq!(backlog.lock().bytes, "two\n");
        assert!(backlog.lock().error.is_some());
        // A torn write left behind (as a full disk leaves one) is cut back before the next.
        std::fs::write(&path, "one\ntw").unwrap();
        let mut disk = disk(&path);
        disk.cut_to = Some(4);
        backlog.lock().bytes.push_str("three\n");
        disk.write(&backlog);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "one\ntwo\nthree\n");
        assert!(backlog.lock().error.is_none() && backlog.lock().bytes.is_empty());
    }
}
