//! One session's append-only transcript file. Each record is one line written with a single
//! `write` under an exclusive file lock, so concurrent tandem processes never interleave
//! partial lines, and a crash loses at most the record being written.

use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use parking_lot::Mutex;

use super::StoreError;
use super::record::{Line, Record, VERSION};

/// An open transcript.
pub struct Transcript {
    path: PathBuf,
    file: Arc<Mutex<File>>,
    /// For a subagent's view of its parent's transcript: the `task` call and the agent, whose
    /// records are wrapped in [`Record::Subagent`].
    scope: Option<(String, String)>,
}

impl std::fmt::Debug for Transcript {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Transcript")
            .field("path", &self.path)
            .finish()
    }
}

impl Transcript {
    /// Opens (creating if needed) the transcript at `path` for appending.
    pub fn open(path: &Path) -> Result<Self, StoreError> {
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(|e| StoreError::io(path, e))?;
        Ok(Self {
            path: path.to_path_buf(),
            file: Arc::new(Mutex::new(file)),
            scope: None,
        })
    }

    /// The same file, for the subagent `agent` run by the call `call_id`: what it appends is
    /// stored with the parent's records, wrapped so the parent's history leaves it out.
    pub fn nested(&self, call_id: &str, agent: &str) -> Self {
        Self {
            path: self.path.clone(),
            file: self.file.clone(),
            scope: Some((call_id.to_string(), agent.to_string())),
        }
    }

    /// Where it lives.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends one record. Failures are logged, not fatal: the session goes on in memory.
    pub fn append(&self, record: Record) {
        let record = match &self.scope {
            Some((call_id, agent)) => Record::Subagent {
                call_id: call_id.clone(),
                agent: agent.clone(),
                record: Box::new(record),
            },
            None => record,
        };
        let line = Line {
            v: VERSION,
            at: now(),
            record,
        };
        let text = match serde_json::to_string(&line) {
            Ok(text) => text,
            Err(e) => {
                tracing::error!(path = %self.path.display(), "cannot encode a transcript record: {e}");
                return;
            }
        };
        let mut text = match crate::secrets::redact(&text) {
            std::borrow::Cow::Owned(clean) => clean,
            std::borrow::Cow::Borrowed(_) => text,
        };
        text.push('\n');
        let file = self.file.lock();
        let written = file.lock().and_then(|()| {
            let result = (&*file).write_all(text.as_bytes());
            let _ = file.unlock();
            result
        });
        if let Err(e) = written {
            tracing::error!(path = %self.path.display(), "cannot append to the transcript: {e}");
        }
    }
}

/// The current time as RFC 3339.
pub fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// Reads every record of `path`, skipping (with a warning) lines that are torn or corrupt.
pub fn read(path: &Path) -> Result<Vec<Line>, StoreError> {
    let file = File::open(path).map_err(|e| StoreError::io(path, e))?;
    let mut lines = Vec::new();
    for (n, line) in BufReader::new(file).split(b'\n').enumerate() {
        let bytes = line.map_err(|e| StoreError::io(path, e))?;
        if bytes.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match serde_json::from_slice::<Line>(&bytes) {
            Ok(line) if line.v <= VERSION => lines.push(line),
            Ok(line) => {
                tracing::warn!(path = %path.display(), line = n + 1, v = line.v, "skipping a record from a newer tandem")
            }
            Err(e) => {
                tracing::warn!(path = %path.display(), line = n + 1, "skipping a torn or corrupt transcript line: {e}")
            }
        }
    }
    Ok(lines)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn torn_and_corrupt_lines_are_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        let t = Transcript::open(&path).unwrap();
        t.append(Record::Title {
            title: "one".into(),
        });
        std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap()
            .write_all(b"{not json}\n")
            .unwrap();
        t.append(Record::Title {
            title: "two".into(),
        });
        std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap()
            .write_all(b"{\"v\":1,\"at\":\"x\",\"type\":\"ti")
            .unwrap();
        let lines = read(&path).unwrap();
        assert_eq!(lines.len(), 2);
        assert_eq!(
            lines[1].record,
            Record::Title {
                title: "two".into()
            }
        );
    }

    #[test]
    fn concurrent_appends_never_interleave() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        let threads: Vec<_> = (0..4)
            .map(|i| {
                let path = path.clone();
                std::thread::spawn(move || {
                    // Separate opens, as separate processes would have.
                    let t = Transcript::open(&path).unwrap();
                    for _ in 0..200 {
                        t.append(Record::Title {
                            title: format!("{i}").repeat(3000),
                        });
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(read(&path).unwrap().len(), 800);
    }
}
