//! The embedded transcript store: one append-only JSONL file per session under
//! `TANDEM_HOME/sessions/` (DESIGN.md §3). No server, no index to keep in sync: listing reads
//! each file's first lines, and a corrupt file never stops the others from being listed.
//! Only sessions that got a prompt are listed: editors such as CodeCompanion open a session
//! for every chat, used or not, and those would bury the history. A transcript is never
//! rewritten: a rewind is a record, and `timeline.rs` reads the turns through it.
//!
//! A fork's transcript appears whole or not at all (`fork.rs`), and the start of a process
//! ([`Store::tidy`]) removes what a fork killed part-way left. The data directory and
//! `sessions/` are the user's alone (0700, tightened when found looser), as is every file in
//! them (0600).

pub(crate) mod call_ids;
mod fork;
pub(crate) mod frame;
pub(crate) mod history;
pub(crate) mod lock;
pub(crate) mod record;
mod snapshot;
pub mod timeline;
pub(crate) mod title;
pub mod transcript;
mod writer;

use std::io::BufRead;
use std::path::{Path, PathBuf};

pub(crate) use call_ids::CallIds;
pub(crate) use frame::{Frame, Told};
pub(crate) use history::History;
pub use record::{Line, Record, Restored, Snapshot};
pub use transcript::{Lost, Transcript, Unsaved, write_out};

/// Sessions per `session/list` page.
pub(crate) const PAGE: usize = 50;

/// A store operation that failed.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// No transcript has this id.
    #[error("no stored session `{0}`")]
    NotFound(String),
    /// Another tandem process has the session open (see [`lock`]).
    #[error("session `{0}` is open in another tandem process")]
    Busy(String),
    /// A turn the session does not have.
    #[error("there is no turn {turn}: the session has {turns} turn(s)")]
    NoSuchTurn {
        /// The turn asked for (1-based).
        turn: usize,
        /// How many it has.
        turns: usize,
    },
    /// The file system said no.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

impl StoreError {
    fn io(path: &Path, source: std::io::Error) -> Self {
        StoreError::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}

/// A stored session as `session/list` shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Summary {
    /// Session id.
    pub id: String,
    /// Working directory.
    pub cwd: PathBuf,
    /// Title, once the first exchange happened.
    pub title: Option<String>,
    /// The workspace's other folders, as last recorded before the title.
    pub folders: Vec<PathBuf>,
    /// Last write (RFC 3339).
    pub updated_at: String,
    modified: std::time::SystemTime,
}

/// The sessions directory.
#[derive(Debug, Clone)]
pub struct Store {
    /// `TANDEM_HOME`.
    home: PathBuf,
    /// `TANDEM_HOME/sessions`.
    dir: PathBuf,
}

/// Whether `id` can name a transcript file (no path tricks).
pub(crate) fn valid_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 64
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

impl Store {
    /// The store under `home` (`TANDEM_HOME`).
    pub fn new(home: &Path) -> Self {
        Self {
            home: home.to_path_buf(),
            dir: home.join("sessions"),
        }
    }

    /// What a process does once, as it starts: makes the data directory private where it
    /// exists (one made by an older tandem was left to the umask) and removes the partial
    /// copies forks killed part-way left behind (never one another live process is writing).
    pub(crate) fn tidy(&self) {
        for dir in [&self.home, &self.dir] {
            if let Err(e) = crate::platform::private::tighten_dir(dir) {
                tracing::warn!(dir = %dir.display(), "cannot make the data directory private (0700): {e}");
            }
        }
        let removed = fork::sweep(&self.dir);
        if removed > 0 {
            tracing::info!(
                removed,
                "removed partial forks left by a tandem that stopped while forking"
            );
        }
    }

    /// Makes the data directory and `sessions/`, private, or tightens them.
    fn make_dirs(&self) -> Result<(), StoreError> {
        for dir in [&self.home, &self.dir] {
            crate::platform::private::dir(dir).map_err(|e| StoreError::io(dir, e))?;
        }
        Ok(())
    }

    fn path(&self, id: &str) -> PathBuf {
        self.dir.join(format!("{id}.jsonl"))
    }

    /// Starts the transcript of a new session; `first` are its records after the header.
    /// Returns once they are on disk, so the session is listed from then on.
    pub(crate) async fn create(
        &self,
        id: &str,
        cwd: &Path,
        first: impl IntoIterator<Item = Record>,
    ) -> Result<Transcript, StoreError> {
        self.make_dirs()?;
        let transcript = Transcript::open(&self.path(id)).await?;
        transcript.append(Record::Meta {
            id: id.to_string(),
            cwd: cwd.to_path_buf(),
        });
        for record in first {
            transcript.append(record);
        }
        transcript.flush().await;
        Ok(transcript)
    }

    /// A stored session's records, with those this process holds for the disk (a full
    /// disk), so a fork or an export misses none.
    pub(crate) fn read(&self, id: &str) -> Result<Vec<Line>, StoreError> {
        let path = self.path(id);
        if !valid_id(id) || !path.is_file() {
            return Err(StoreError::NotFound(id.to_string()));
        }
        let mut lines = transcript::read(&path)?;
        lines.extend(transcript::unwritten_at(&path));
        Ok(lines)
    }

    /// Opens a stored session: its records (with those this process has not written yet)
    /// and its transcript for appending.
    pub(crate) async fn open(&self, id: &str) -> Result<(Vec<Line>, Transcript), StoreError> {
        let path = self.path(id);
        if !valid_id(id) || !path.is_file() {
            return Err(StoreError::NotFound(id.to_string()));
        }
        let transcript = Transcript::open(&path).await?;
        Ok((transcript.lines()?, transcript))
    }

    /// Starts `to`'s transcript in `cwd` with every record of `from` but its header: a fork.
    /// With `turn`, the fork's conversation stops before that turn (1-based), as a rewind
    /// there would leave it, and no file is touched. Returns `from`'s working directory.
    /// The copy appears whole, once it is on disk, or not at all (`fork.rs`).
    pub(crate) async fn fork(
        &self,
        from: &str,
        to: &str,
        cwd: Option<&Path>,
        turn: Option<usize>,
    ) -> Result<PathBuf, StoreError> {
        let lines = self.read(from)?;
        // At a turn: what came before it, and of what came after only what is about the
        // session itself (its settings, title, folders). The later turns' records, their
        // files among them, are the source's alone: a rewind in the fork never touches them.
        let cut = match turn {
            None => lines.len(),
            Some(n) => {
                let timeline = timeline::Timeline::new(&lines);
                match timeline.start_of(n) {
                    Some(start) => start,
                    None => {
                        let turns = timeline.len();
                        return Err(StoreError::NoSuchTurn { turn: n, turns });
                    }
                }
            }
        };
        let source_cwd = lines
            .iter()
            .find_map(|l| match &l.record {
                Record::Meta { cwd, .. } => Some(cwd.clone()),
                _ => None,
            })
            .unwrap_or_default();
        let cwd = cwd.map_or(source_cwd, Path::to_path_buf);
        let records = lines
            .into_iter()
            .enumerate()
            .filter(|(i, line)| {
                *i < cut
                    || matches!(
                        line.record,
                        Record::Settings { .. } | Record::Title { .. } | Record::Folders { .. }
                    )
            })
            .map(|(_, line)| line.record)
            .filter(|record| !matches!(record, Record::Meta { .. }))
            .collect::<Vec<_>>();
        if !valid_id(to) {
            return Err(StoreError::NotFound(to.to_string()));
        }
        self.make_dirs()?;
        let meta = Record::Meta {
            id: to.to_string(),
            cwd: cwd.clone(),
        };
        let (dir, id, target) = (self.dir.clone(), to.to_string(), self.path(to));
        // A large session is tens of megabytes: written off the runtime's threads.
        tokio::task::spawn_blocking(move || {
            let lines = std::iter::once(meta)
                .chain(records)
                .filter_map(|record| transcript::encode(record, &target));
            fork::write(&dir, &id, &target, lines)
        })
        .await
        .map_err(|e| StoreError::io(&self.dir, std::io::Error::other(e.to_string())))??;
        Ok(cwd)
    }

    /// Whether a transcript exists for `id`.
    pub fn exists(&self, id: &str) -> bool {
        valid_id(id) && self.path(id).is_file()
    }

    /// Removes a session's transcript.
    pub(crate) fn delete(&self, id: &str) -> Result<(), StoreError> {
        if !self.exists(id) {
            return Err(StoreError::NotFound(id.to_string()));
        }
        let path = self.path(id);
        std::fs::remove_file(&path).map_err(|e| StoreError::io(&path, e))?;
        // Torn tails kept for forensics go with it, and its newest title.
        let _ = std::fs::remove_file(transcript::torn_path(&path));
        let _ = std::fs::remove_file(transcript::title_path(&path));
        Ok(())
    }

    /// Whether the stored session `id` got a prompt (a slash command counts); `false` for a
    /// session that is not stored. Reads only as far as the first prompt.
    pub(crate) fn prompted(&self, id: &str) -> bool {
        if !valid_id(id) {
            return false;
        }
        let Ok(file) = std::fs::File::open(self.path(id)) else {
            return false;
        };
        std::io::BufReader::new(file)
            .split(b'\n')
            .map_while(Result::ok)
            .filter_map(|bytes| Line::parse(&bytes).ok())
            .any(|line| is_prompt(&line.record))
    }

    /// Stored sessions that got a prompt, newest first, optionally only those in `cwd`; one
    /// page from `cursor`. Returns the page and the cursor of the next one.
    pub(crate) fn list(
        &self,
        cwd: Option<&Path>,
        cursor: Option<&str>,
    ) -> (Vec<Summary>, Option<String>) {
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return (Vec::new(), None);
        };
        let mut all: Vec<Summary> = entries
            .filter_map(Result::ok)
            .filter(|e| e.path().extension().is_some_and(|x| x == "jsonl"))
            .filter_map(|e| summarize(&e.path()))
            .filter(|s| cwd.is_none_or(|c| s.cwd == c))
            .collect();
        all.sort_by(|a, b| b.modified.cmp(&a.modified).then_with(|| a.id.cmp(&b.id)));
        let start = cursor.and_then(|c| c.parse::<usize>().ok()).unwrap_or(0);
        let page: Vec<Summary> = all.iter().skip(start).take(PAGE).cloned().collect();
        let next = (start + PAGE < all.len()).then(|| (start + PAGE).to_string());
        (page, next)
    }
}

/// Whether `record` is the user's: a prompt or a slash command.
fn is_prompt(record: &Record) -> bool {
    matches!(record, Record::User { .. } | Record::Command { .. })
}

/// A transcript's id, cwd and title (reading only as far as the title), or `None` when the
/// file does not start with a session record or the session never got a prompt.
fn summarize(path: &Path) -> Option<Summary> {
    let file = std::fs::File::open(path).ok()?;
    // A transcript made before tandem made them 0600 is the user's alone from its first listing.
    let _ = crate::platform::private::tighten(&file);
    let modified = file.metadata().and_then(|m| m.modified()).ok()?;
    let mut lines = std::io::BufReader::new(file).split(b'\n');
    let first = Line::parse(&lines.next()?.ok()?).ok().or_else(|| {
        tracing::warn!(path = %path.display(), "not listed: the transcript has no readable first line");
        None
    })?;
    let Record::Meta { id, cwd } = first.record else {
        return None;
    };
    // Read only as far as the title: a session's folders are recorded when it opens, so for
    // all but sessions reopened with other folders after their first exchange, that is enough.
    // A title is written after the first exchange, so a titled session got a prompt.
    let mut folders = Vec::new();
    let mut title = None;
    let mut prompted = false;
    for bytes in lines.map_while(Result::ok) {
        match Line::parse(&bytes).map(|l| l.record) {
            Ok(Record::Title { title: t }) => {
                title = Some(t);
                prompted = true;
                break;
            }
            Ok(Record::Folders { folders: f }) => folders = f,
            Ok(record) if is_prompt(&record) => prompted = true,
            _ => {}
        }
    }
    if !prompted {
        return None;
    }
    // A rewind may have titled the session again since.
    let title = transcript::kept_title(path).or(title);
    let updated_at = chrono::DateTime::<chrono::Utc>::from(modified)
        .to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    Some(Summary {
        id,
        cwd,
        title,
        folders,
        updated_at,
        modified,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::UserPart;

    fn prompt(text: &str) -> Record {
        Record::User {
            parts: vec![UserPart::Text(text.into())],
            sent: None,
            within_turn: false,
        }
    }

    #[tokio::test]
    async fn create_list_open_delete() {
        let home = tempfile::tempdir().unwrap();
        let store = Store::new(home.path());
        let title = Record::Title {
            title: "First".into(),
        };
        store.create("s1", Path::new("/p"), [title]).await.unwrap();
        store
            .create("s2", Path::new("/q"), [prompt("hi")])
            .await
            .unwrap();
        std::fs::write(home.path().join("sessions/broken.jsonl"), "garbage\n").unwrap();
        let (all, next) = store.list(None, None);
        assert_eq!(all.len(), 2, "the broken file is skipped, not fatal");
        assert!(next.is_none());
        let (only, _) = store.list(Some(Path::new("/p")), None);
        assert_eq!(
            (only[0].id.as_str(), only[0].title.as_deref()),
            ("s1", Some("First"))
        );
        let (lines, _) = store.open("s1").await.unwrap();
        assert_eq!(lines.len(), 2);
        assert!(matches!(
            store.open("../etc/passwd").await,
            Err(StoreError::NotFound(_))
        ));
        store.delete("s1").unwrap();
        assert!(!store.exists("s1"));
        assert!(store.delete("s1").is_err());
    }

    #[tokio::test]
    async fn pages_with_a_cursor() {
        let home = tempfile::tempdir().unwrap();
        let store = Store::new(home.path());
        for i in 0..(PAGE + 5) {
            let id = format!("s{i:03}");
            store
                .create(&id, Path::new("/p"), [prompt("hi")])
                .await
                .unwrap();
        }
        let (first, next) = store.list(None, None);
        assert_eq!(first.len(), PAGE);
        let (second, last) = store.list(None, next.as_deref());
        assert_eq!(second.len(), 5);
        assert!(last.is_none());
    }

    #[tokio::test]
    async fn sessions_without_a_prompt_are_not_listed() {
        let home = tempfile::tempdir().unwrap();
        let store = Store::new(home.path());
        let settings = Record::Settings {
            mode: "ask".into(),
            model: "m".into(),
            reasoning_effort: "medium".into(),
            auto_compact: None,
        };
        store
            .create("unused", Path::new("/p"), [settings])
            .await
            .unwrap();
        let command = Record::Command {
            parts: vec![UserPart::Text("/compact".into())],
        };
        store
            .create("command", Path::new("/p"), [command])
            .await
            .unwrap();
        store
            .create("used", Path::new("/p"), [prompt("hi")])
            .await
            .unwrap();
        let (all, _) = store.list(None, None);
        let mut ids: Vec<&str> = all.iter().map(|s| s.id.as_str()).collect();
        ids.sort();
        assert_eq!(ids, ["command", "used"]);
        assert!(!store.prompted("unused") && store.prompted("used"));
        assert!(!store.prompted("missing"));
    }
}
