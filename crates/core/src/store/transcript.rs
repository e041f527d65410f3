//! One session's append-only transcript file, written by one writer task per open
//! transcript (`writer.rs`). Appending only queues the line (encoding and redaction happen at
//! once, on the caller's side), so a turn never waits on the disk. Only one process has a
//! session open at a time ([`super::lock`]); in this process every opening of it shares one
//! writer, so records stay in order and a reload reads what is still waiting for the disk.
//! [`Transcript::flush`] waits until everything queued so far is written (or has failed to
//! be): callers flush where a crash must not lose what came before (before a turn runs tools,
//! before a prompt or settings change is answered, at shutdown), and
//! [`Transcript::unsaved`] says what the disk has not taken yet; at exit, [`write_out`] tries
//! that again for a bounded while and says what is lost. A transcript and its side file are
//! the user's alone (0600, tightened when opened).

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, LazyLock, Weak};

use parking_lot::Mutex;
use tokio::sync::{mpsc, oneshot};

use super::StoreError;
use super::record::{Line, Record, VERSION};
use super::writer::{self, Backlog, Op};

/// One open transcript's writer, shared by every handle to it in this process.
struct Open {
    writer: mpsc::UnboundedSender<Op>,
    backlog: Arc<Mutex<Backlog>>,
}

/// The transcripts open in this process, by path.
static OPEN: LazyLock<Mutex<HashMap<PathBuf, Weak<Open>>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

/// What the disk has not taken yet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unsaved {
    /// Records waiting in memory.
    pub records: usize,
    /// Why the last write failed.
    pub error: String,
}

impl Unsaved {
    /// What the user is told while records wait.
    pub(crate) fn told(&self) -> String {
        format!(
            "tandem cannot write this session to disk ({}): {} records are kept in memory and written as soon as the disk takes them, but would be lost if tandem stopped first.",
            self.error, self.records
        )
    }
}

/// An open transcript: a cheap handle to its writer task. Clones share the writer; the task
/// ends after writing what is queued once every handle is gone.
#[derive(Clone)]
pub struct Transcript {
    path: Arc<Path>,
    open: Arc<Open>,
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
    /// Opens (creating if needed) the transcript at `path` for appending: the writer this
    /// process already has for it, or a new one (on the current tokio runtime) once the
    /// session's lock is taken. A torn last line (tandem was killed mid-write) is first moved
    /// to a side file, so the next record starts on a line of its own instead of being glued
    /// to the torn one and lost with it.
    pub(crate) async fn open(path: &Path) -> Result<Self, StoreError> {
        if let Some(shared) = OPEN.lock().get(path).and_then(Weak::upgrade) {
            return Ok(Self {
                path: Arc::from(path),
                open: shared,
                scope: None,
            });
        }
        // Not open here (or closing: its writer lets go of the lock once it is done).
        let lock = super::lock::take(path).await?;
        let file = match crate::platform::private::file_options(
            OpenOptions::new().create(true).read(true).append(true),
        )
        .open(path)
        {
            Ok(file) => {
                // The user's code and conversation: theirs alone, however it was made.
                if let Err(e) = crate::platform::private::tighten(&file) {
                    tracing::warn!(path = %path.display(), "cannot make the transcript private (0600): {e}");
                }
                repair_torn_tail(&file, path).map_err(|e| StoreError::io(path, e))?;
                Ok(file)
            }
            // Loading needs no writing: the session opens, and what it would write waits
            // in memory (and the user is told) as on a full disk.
            Err(e) if super::lock::read_only(&e) && path.is_file() => Err(e),
            Err(e) => return Err(StoreError::io(path, e)),
        };
        let (sender, queue) = mpsc::unbounded_channel();
        let backlog = Arc::new(Mutex::new(Backlog::default()));
        tokio::spawn(writer::run(
            file,
            path.to_path_buf(),
            queue,
            backlog.clone(),
            lock,
        ));
        let shared = Arc::new(Open {
            writer: sender,
            backlog,
        });
        let mut open = OPEN.lock();
        open.retain(|_, o| o.strong_count() > 0);
        open.insert(path.to_path_buf(), Arc::downgrade(&shared));
        Ok(Self {
            path: Arc::from(path),
            open: shared,
            scope: None,
        })
    }

    /// The same file, for the subagent `agent` run by the call `call_id`: what it appends is
    /// stored with the parent's records, wrapped so the parent's history leaves it out.
    pub(crate) fn nested(&self, call_id: &str, agent: &str) -> Self {
        Self {
            path: self.path.clone(),
            open: self.open.clone(),
            scope: Some((call_id.to_string(), agent.to_string())),
        }
    }

    /// Where it lives.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Records `title` as the session's title from now on, and keeps it beside the transcript
    /// for listings ([`title_path`]).
    pub(crate) fn retitle(&self, title: &str) {
        self.append(Record::Title {
            title: title.to_string(),
        });
        keep_title(&self.path, title);
    }

    /// Queues one record. Failures are logged, not fatal: the session goes on in memory.
    pub(crate) fn append(&self, record: Record) {
        let record = match &self.scope {
            Some((call_id, agent)) => Record::Subagent {
                call_id: call_id.clone(),
                agent: agent.clone(),
                record: Box::new(record),
            },
            None => record,
        };
        let Some(text) = encode(record, &self.path) else {
            return;
        };
        if self.open.writer.send(Op::Line(text)).is_err() {
            tracing::error!(path = %self.path.display(), "the transcript writer has stopped; a record was not written");
        }
    }

    /// Waits until every record appended so far (through any handle) is written, or the
    /// disk refused it (see [`Self::unsaved`]).
    pub(crate) async fn flush(&self) {
        let (done, written) = oneshot::channel();
        if self.open.writer.send(Op::Flush(done)).is_ok() {
            let _ = written.await;
        }
    }

    /// What the disk has refused so far and is kept in memory, tried again until it takes
    /// it; `None` when everything flushed is written.
    pub(crate) fn unsaved(&self) -> Option<Unsaved> {
        let backlog = self.open.backlog.lock();
        backlog.error.as_ref().map(|error| Unsaved {
            records: backlog.bytes.matches('\n').count(),
            error: error.clone(),
        })
    }

    /// The records waiting in memory for the disk, in order: a reload reads them after the
    /// file's.
    pub(crate) fn unwritten(&self) -> Vec<Line> {
        unwritten_at(&self.path)
    }

    /// Every record so far: the file's, then those still waiting for the disk.
    pub(crate) fn lines(&self) -> Result<Vec<Line>, StoreError> {
        let mut lines = read(&self.path)?;
        lines.extend(self.unwritten());
        Ok(lines)
    }
}

/// `record` as a line of the transcript at `path`: stamped now, encoded, redacted, with its
/// newline; `None` (logged) when it cannot be encoded.
pub(super) fn encode(record: Record, path: &Path) -> Option<String> {
    let line = Line {
        v: VERSION,
        at: now(),
        record,
    };
    let text = match serde_json::to_string(&line) {
        Ok(text) => text,
        Err(e) => {
            tracing::error!(path = %path.display(), "cannot encode a transcript record: {e}");
            return None;
        }
    };
    let mut text = match crate::secrets::redact(&text) {
        std::borrow::Cow::Owned(clean) => clean,
        std::borrow::Cow::Borrowed(_) => text,
    };
    text.push('\n');
    Some(text)
}

/// The records waiting for the disk in the transcript at `path`, when it is open in this
/// process (none otherwise).
pub(crate) fn unwritten_at(path: &Path) -> Vec<Line> {
    let open = OPEN.lock().get(path).and_then(Weak::upgrade);
    open.map_or_else(Vec::new, |open| {
        let backlog = open.backlog.lock();
        backlog
            .bytes
            .lines()
            .filter_map(|line| Line::parse(line.as_bytes()).ok())
            .collect()
    })
}

/// What an exit left unwritten of one session's transcript: records the disk would not take.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lost {
    /// The session (the transcript's name).
    pub session: String,
    /// The transcript.
    pub path: PathBuf,
    /// How many records.
    pub records: usize,
    /// Their kinds (`user`, `assistant`, `rewind`, …) with how many of each, in order.
    pub(crate) kinds: Vec<(String, usize)>,
    /// Why the disk refused them.
    pub(crate) error: String,
}

impl Lost {
    /// What the user is told, on stderr and in the editor.
    pub fn told(&self) -> String {
        let kinds: Vec<String> = self
            .kinds
            .iter()
            .map(|(kind, n)| format!("{kind} ×{n}"))
            .collect();
        format!(
            "tandem is exiting and could not write the last {} records of session {} to disk ({}): {}. They are lost: a reload shows the session without them, although what they record (a rewind's restored files, an edit) was done.",
            self.records,
            self.session,
            self.error,
            kinds.join(", ")
        )
    }
}

/// Tries, until `until`, to get every record this process holds in memory for the disk
/// written (the writers' own retries come every few seconds, too late for an exit), and
/// returns what is still waiting then, by transcript: what the exit loses. Said on stderr
/// while it waits.
pub async fn write_out(until: tokio::time::Instant) -> Vec<Lost> {
    const AGAIN: std::time::Duration = std::time::Duration::from_millis(200);
    let open: Vec<(PathBuf, Arc<Open>)> = OPEN
        .lock()
        .iter()
        .filter_map(|(path, open)| open.upgrade().map(|open| (path.clone(), open)))
        .collect();
    let mut said = false;
    loop {
        // A flush makes each writer try its backlog again now (a second at most, even when
        // `until` has come: a try takes milliseconds, a writer that takes longer is stuck).
        let tried = until.max(tokio::time::Instant::now() + std::time::Duration::from_secs(1));
        futures::future::join_all(open.iter().map(|(_, open)| async move {
            let (done, written) = oneshot::channel();
            if open.writer.send(Op::Flush(done)).is_ok() {
                let _ = tokio::time::timeout_at(tried, written).await;
            }
        }))
        .await;
        let waiting: Vec<&(PathBuf, Arc<Open>)> = open
            .iter()
            .filter(|(_, open)| !open.backlog.lock().bytes.is_empty())
            .collect();
        if waiting.is_empty() {
            return Vec::new();
        }
        let now = tokio::time::Instant::now();
        if now >= until {
            return waiting
                .into_iter()
                .map(|(path, open)| lost(path, open))
                .collect();
        }
        if !said {
            said = true;
            let records: usize = waiting
                .iter()
                .map(|(_, open)| open.backlog.lock().bytes.matches('\n').count())
                .sum();
            tracing::warn!(
                records,
                sessions = waiting.len(),
                wait_ms = (until - now).as_millis() as u64,
                "exiting: waiting for the disk to take the records still held in memory"
            );
        }
        tokio::time::sleep(AGAIN.min(until - now)).await;
    }
}

/// What `open` still holds for the disk at `path`.
fn lost(path: &Path, open: &Open) -> Lost {
    let backlog = open.backlog.lock();
    let mut kinds: Vec<(String, usize)> = Vec::new();
    for line in backlog.bytes.lines() {
        let kind = serde_json::from_str::<serde_json::Value>(line)
            .ok()
            .and_then(|v| v["type"].as_str().map(str::to_string))
            .unwrap_or_else(|| "unreadable".to_string());
        match kinds.iter_mut().find(|(k, _)| *k == kind) {
            Some((_, n)) => *n += 1,
            None => kinds.push((kind, 1)),
        }
    }
    Lost {
        session: path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default(),
        path: path.to_path_buf(),
        records: backlog.bytes.matches('\n').count(),
        kinds,
        error: backlog
            .error
            .clone()
            .unwrap_or_else(|| "not written yet".to_string()),
    }
}

/// Where the session's newest title is kept beside `path`, `<id>.jsonl.title`: a listing
/// reads a transcript only as far as its first title, and a rewind can change it later.
pub(crate) fn title_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".title");
    path.with_file_name(name)
}

/// Keeps `title` as the newest of the session at `path` ([`title_path`]): made whole beside
/// it and renamed over the old one, private to the user. A title is only for show: when the
/// disk refuses, the listing shows the first title instead.
fn keep_title(path: &Path, title: &str) {
    let dir = path.parent().unwrap_or(Path::new("."));
    let kept = tempfile::Builder::new()
        .prefix(".title.")
        .tempfile_in(dir)
        .and_then(|mut temp| {
            std::io::Write::write_all(&mut temp, title.as_bytes())?;
            temp.persist(title_path(path)).map_err(|e| e.error)?;
            Ok(())
        });
    if let Err(e) = kept {
        tracing::debug!(path = %path.display(), "the session's new title is not kept beside it: {e}");
    }
}

/// The newest title kept beside the transcript at `path`, if one was.
pub(crate) fn kept_title(path: &Path) -> Option<String> {
    let mut text = String::new();
    let file = std::fs::File::open(title_path(path)).ok()?;
    std::io::Read::read_to_string(&mut std::io::Read::take(file, 4096), &mut text).ok()?;
    let title = text.trim();
    (!title.is_empty()).then(|| title.to_string())
}

/// Where the torn tails of `path` are kept: `<id>.jsonl.torn` next to it.
pub(crate) fn torn_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".torn");
    path.with_file_name(name)
}

/// Cuts the file back to its last newline when it does not end with one, appending the cut
/// bytes (and a newline) to [`torn_path`]; under the file's lock, so a line another tandem
/// process is writing is never taken for a torn one.
fn repair_torn_tail(file: &File, path: &Path) -> std::io::Result<()> {
    file.lock()?;
    let repaired = cut_torn_tail(file, path);
    let _ = file.unlock();
    repaired
}

fn cut_torn_tail(mut file: &File, path: &Path) -> std::io::Result<()> {
    const CHUNK: u64 = 64 * 1024;
    let len = file.metadata()?.len();
    let mut end = len;
    let mut keep = 0;
    let mut buf = vec![0u8; CHUNK as usize];
    // Back from the end, a chunk at a time, to the last newline.
    while end > 0 {
        let start = end.saturating_sub(CHUNK);
        let part = &mut buf[..(end - start) as usize];
        file.seek(SeekFrom::Start(start))?;
        file.read_exact(part)?;
        if end == len && part.last() == Some(&b'\n') {
            return Ok(());
        }
        if let Some(at) = part.iter().rposition(|&b| b == b'\n') {
            keep = start + at as u64 + 1;
            break;
        }
        end = start;
    }
    if len == 0 {
        return Ok(());
    }
    let mut torn = vec![0u8; (len - keep) as usize];
    file.seek(SeekFrom::Start(keep))?;
    file.read_exact(&mut torn)?;
    torn.push(b'\n');
    let side = torn_path(path);
    let mut kept =
        crate::platform::private::file_options(OpenOptions::new().create(true).append(true))
            .open(&side)?;
    let _ = crate::platform::private::tighten(&kept);
    kept.write_all(&torn)?;
    file.set_len(keep)?;
    tracing::warn!(path = %path.display(), bytes = torn.len() - 1, side = %side.display(), "the transcript ended in a torn line (tandem stopped mid-write); it was moved to the side file");
    Ok(())
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
        match Line::parse(&bytes) {
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

    #[tokio::test]
    async fn a_torn_tail_goes_to_the_side_file_and_the_next_record_loads() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        let t = Transcript::open(&path).await.unwrap();
        t.append(Record::Title {
            title: "one".into(),
        });
        t.flush().await;
        drop(t);
        let torn = br#"{"v":1,"at":"x","type":"title","tit"#;
        std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap()
            .write_all(torn)
            .unwrap();
        let t = Transcript::open(&path).await.unwrap();
        t.append(Record::Title {
            title: "two".into(),
        });
        t.flush().await;
        let titles: Vec<_> = read(&path)
            .unwrap()
            .into_iter()
            .map(|l| match l.record {
                Record::Title { title } => title,
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(titles, ["one", "two"]);
        let mut kept = torn.to_vec();
        kept.push(b'\n');
        assert_eq!(std::fs::read(torn_path(&path)).unwrap(), kept);
        // A whole file is left alone.
        drop(Transcript::open(&path).await.unwrap());
        assert_eq!(std::fs::read(torn_path(&path)).unwrap(), kept);
    }

    #[tokio::test]
    async fn torn_and_corrupt_lines_are_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        let t = Transcript::open(&path).await.unwrap();
        t.append(Record::Title {
            title: "one".into(),
        });
        t.flush().await;
        std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap()
            .write_all(b"{not json}\n")
            .unwrap();
        t.append(Record::Title {
            title: "two".into(),
        });
        t.flush().await;
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

    #[tokio::test]
    async fn a_flush_waits_for_every_handle_and_nested_records_are_wrapped() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        let t = Transcript::open(&path).await.unwrap();
        let sub = t.nested("call-1", "scout");
        sub.append(Record::Title { title: "a".into() });
        t.append(Record::Title { title: "b".into() });
        t.flush().await;
        let lines = read(&path).unwrap();
        assert_eq!(lines.len(), 2);
        assert!(
            matches!(&lines[0].record, Record::Subagent { call_id, .. } if call_id == "call-1")
        );
    }
}
