//! What a crash left half done, finished as a session opens again (DESIGN.md §2: every change
//! is write-ahead, so a kill at any instant leaves a state a load can finish or report).
//!
//! - A file change recorded as intended ([`Record::FileIntent`]) with no outcome is resolved
//!   by looking at the file: made (it holds the intended text; a rewind takes it back like
//!   any change), not made (it holds its earlier text), or unknown (it holds neither:
//!   someone else changed it meanwhile, and rewinds leave it alone).
//! - A rewind recorded as intended ([`Record::RewindIntent`]) with no outcome is completed:
//!   a file that still holds what it held before the rewind is put back on disk, one put
//!   back already counts, and one that holds anything else (someone else changed it) is left
//!   as it is and reported; then the rewind is recorded, so its turns are out of the
//!   conversation as the user asked.
//!
//! What was found is recorded (the next load does not look again), told to the user in a
//! note (`session/load` replays it as a notice), and told to the model where the
//! conversation stopped. Intents this process is still carrying out (a session reopened
//! while its turn runs) are not touched. Transcripts without intents open as they are.

use std::collections::HashSet;
use std::path::Path;

use crate::store::history::Flight;
use crate::store::record::{Outcome, VERSION};
use crate::store::timeline::own;
use crate::store::transcript::now;
use crate::store::{Line, Record, Restored, Snapshot, Transcript};

/// An intent the transcript holds no outcome for.
enum Unfinished<'a> {
    /// A file change.
    File {
        id: &'a str,
        path: &'a Path,
        before: &'a Snapshot,
        after: &'a Snapshot,
    },
    /// A rewind.
    Rewind {
        id: &'a str,
        turn: usize,
        files: &'a [Restored],
    },
}

/// `lines` (the session's, read from `transcript`; its working directory `cwd`) with what a
/// crash left half done finished and recorded at their end; `lines` as they are when
/// nothing was.
pub(super) async fn finish(mut lines: Vec<Line>, transcript: &Transcript, cwd: &Path) -> Vec<Line> {
    let mut records = Vec::new();
    let mut told = Vec::new();
    let mut model = Vec::new();
    for unfinished in unfinished(&lines) {
        match unfinished {
            Unfinished::File {
                id,
                path,
                before,
                after,
            } => {
                let now = look(path).await;
                let outcome = found(before, after, &now);
                let said = file_told(&shown(path, cwd), &outcome);
                // A change made counts like any other: its text after is kept whole (the
                // intent kept only its hash).
                let after = match (&outcome, &now) {
                    (Outcome::Done, Ok(now)) => Some(Snapshot::of(now.as_deref())),
                    _ => None,
                };
                tracing::warn!(path = %path.display(), "a change tandem was stopped in the middle of: {said}");
                model.push(said.clone());
                told.push(said);
                records.push(Record::FileOutcome {
                    id: id.to_string(),
                    outcome,
                    after,
                    found: true,
                });
            }
            Unfinished::Rewind { id, turn, files } => {
                let (restored, said) = complete(turn, files, cwd).await;
                tracing::warn!("a rewind tandem was stopped in the middle of: {said}");
                told.push(said);
                records.push(Record::Rewind {
                    turn,
                    restored,
                    intent: Some(id.to_string()),
                });
            }
        }
    }
    if records.is_empty() {
        return lines;
    }
    records.push(Record::Note {
        text: format!(
            "tandem had stopped without closing this session, in the middle of changing files. It looked at them as the session opened:\n{}",
            told.join("\n")
        ),
    });
    if !model.is_empty() {
        records.push(Record::Context {
            text: format!(
                "[tandem had stopped while a tool call changed files; when the session was opened again it looked at them:\n{}]",
                model.join("\n")
            ),
        });
    }
    for record in records {
        transcript.append(record.clone());
        lines.push(Line {
            v: VERSION,
            at: now(),
            record,
        });
    }
    transcript.flush().await;
    lines
}

/// The intents in `lines` without an outcome, in order, but for those this process is
/// carrying out.
fn unfinished(lines: &[Line]) -> Vec<Unfinished<'_>> {
    let mut settled: HashSet<&str> = HashSet::new();
    let mut intents = false;
    for line in lines {
        match own(&line.record) {
            Record::FileOutcome { id, .. }
            | Record::RewindDropped { id, .. }
            | Record::Rewind {
                intent: Some(id), ..
            } => {
                settled.insert(id);
            }
            Record::FileIntent { .. } | Record::RewindIntent { .. } => intents = true,
            _ => {}
        }
    }
    if !intents {
        return Vec::new();
    }
    lines
        .iter()
        .filter_map(|line| match own(&line.record) {
            Record::FileIntent {
                id,
                path,
                before,
                after,
            } if !settled.contains(id.as_str()) && !Flight::is_on(id) => Some(Unfinished::File {
                id,
                path,
                before,
                after,
            }),
            Record::RewindIntent { id, turn, files }
                if !settled.contains(id.as_str()) && !Flight::is_on(id) =>
            {
                Some(Unfinished::Rewind {
                    id,
                    turn: *turn,
                    files,
                })
            }
            _ => None,
        })
        .collect()
}

/// What `path` holds on disk (`None`: nothing), or why tandem cannot tell: a link, a FIFO or
/// a folder where the file was is not read (nor written).
async fn look(path: &Path) -> Result<Option<String>, String> {
    match tokio::fs::symlink_metadata(path).await {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e.to_string()),
        Ok(meta) if meta.file_type().is_symlink() => {
            return Err("it is now a symbolic link".into());
        }
        Ok(meta) if !meta.is_file() => return Err("it is no longer a regular file".into()),
        Ok(_) => {}
    }
    // Opened exactly: a folder on the way swapped for a link since the look above is
    // refused, and the kind of file comes from the open file (no FIFO or device read).
    match crate::local::read_text(path).await {
        Ok(bytes) => Ok(Some(String::from_utf8_lossy(&bytes).into_owned())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e.to_string()),
    }
}

/// Whether `now` is what `snapshot` was taken of, exactly (`strict`) or but for line ends
/// (an editor may save a buffer with its own).
fn holds(snapshot: &Snapshot, now: Option<&str>, strict: bool) -> bool {
    if snapshot.matches(now) {
        return true;
    }
    match (snapshot, now) {
        (_, _) if strict => false,
        (Snapshot::Text(kept), Some(now)) => {
            kept.replace("\r\n", "\n") == now.replace("\r\n", "\n")
        }
        // Only the hash was kept: the text tandem wrote with `\r\n` where an editor saved `\n`.
        (Snapshot::Withheld { .. }, Some(now)) if !now.contains('\r') => {
            snapshot.matches(Some(&now.replace('\n', "\r\n")))
        }
        _ => false,
    }
}

/// How a change from `before` to `after` ended, judged by what the file holds `now`.
fn found(before: &Snapshot, after: &Snapshot, now: &Result<Option<String>, String>) -> Outcome {
    let now = match now {
        Ok(now) => now.as_deref(),
        Err(why) => {
            return Outcome::Unknown {
                why: format!("tandem could not look at it: {why}"),
            };
        }
    };
    for strict in [true, false] {
        if holds(after, now, strict) {
            return Outcome::Done;
        }
        if holds(before, now, strict) {
            return Outcome::NotMade {
                why: "it still held its earlier text when the session was opened again".into(),
            };
        }
    }
    Outcome::Unknown {
        why: "it held neither its earlier text nor tandem's when the session was opened again: someone else changed it".into(),
    }
}

/// A change's end in words, for the user and the model.
fn file_told(shown: &str, outcome: &Outcome) -> String {
    match outcome {
        Outcome::Done => format!("- `{shown}`: the change was made (a rewind takes it back)"),
        Outcome::NotMade { .. } => format!("- `{shown}`: the change was not made"),
        Outcome::Unknown { why } => format!(
            "- `{shown}`: **not known**: {why}. tandem does not know what it holds, so a rewind leaves it as it is"
        ),
    }
}

/// Completes the rewind to before `turn` that was to put `files` back: what it put back, in
/// all, and the answer in words.
async fn complete(turn: usize, files: &[Restored], cwd: &Path) -> (Vec<Restored>, String) {
    let mut restored = Vec::new();
    let mut lines = Vec::new();
    for file in files {
        let name = shown(&file.path, cwd);
        match complete_one(file).await {
            Ok(done) => {
                lines.push(format!("- `{name}`: {}", done.said()));
                restored.push(Restored {
                    path: file.path.clone(),
                    before: file.before.clone(),
                    after: match done {
                        Done::Emptied => Snapshot::Text(String::new()),
                        _ => file.after.clone(),
                    },
                });
            }
            Err(why) => lines.push(format!("- `{name}`: **left as it is**: {why}")),
        }
    }
    let whole = restored.len() == files.len();
    let said = format!(
        "- the rewind to before turn {turn}, which tandem was stopped in the middle of, is {}: those turns are out of the conversation.\n{}",
        if whole {
            "complete now"
        } else {
            "**only partly applied**: a file changed after it began"
        },
        lines
            .iter()
            .map(|l| format!("  {l}"))
            .collect::<Vec<_>>()
            .join("\n")
    );
    (restored, said)
}

/// How a file of an unfinished rewind was found or left.
#[derive(Clone, Copy)]
enum Done {
    /// The rewind had put it back.
    Already,
    /// The rewind had emptied it through the editor (only the editor had it).
    Emptied,
    /// Put back now.
    Written,
    /// Removed now (tandem had created it).
    Removed,
}

impl Done {
    fn said(self) -> &'static str {
        match self {
            Done::Already | Done::Emptied => "had been put back",
            Done::Written => "put back now (on disk)",
            Done::Removed => "removed now (tandem had created it)",
        }
    }
}

/// Puts one file of an unfinished rewind back, when it still holds what it held before the
/// rewind; why not otherwise (someone else changed it: tandem never overwrites a file whose
/// content it does not know).
async fn complete_one(file: &Restored) -> Result<Done, String> {
    let now = look(&file.path).await?;
    let now = now.as_deref();
    if holds(&file.after, now, false) {
        return Ok(Done::Already);
    }
    if file.after == Snapshot::Missing && now == Some("") {
        return Ok(Done::Emptied);
    }
    if !holds(&file.before, now, false) {
        return Err("it changed after the rewind began (someone else changed it)".into());
    }
    if let Some(dir) = file.path.parent()
        && tokio::fs::canonicalize(dir)
            .await
            .is_ok_and(|real| real != dir)
    {
        return Err(
            "a folder on its path is now a symbolic link, which tandem never writes through".into(),
        );
    }
    match file.after.text() {
        Ok(Some(text)) => crate::local::write_atomic(&file.path, text)
            .await
            .map(|()| Done::Written)
            .map_err(|e| format!("tandem could not write it: {e}")),
        // From the exactly opened folder: nothing a link planted on the way leads to.
        Ok(None) => match crate::local::remove(&file.path).await {
            Ok(()) => Ok(Done::Removed),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Done::Already),
            Err(e) => Err(format!("tandem could not remove it: {e}")),
        },
        Err(why) => Err(format!("tandem did not keep its earlier text: {why}")),
    }
}

/// `path` as the user is shown it: relative to the working directory when inside it.
fn shown(path: &Path, cwd: &Path) -> String {
    path.strip_prefix(cwd).unwrap_or(path).display().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(s: &str) -> Snapshot {
        Snapshot::Text(s.into())
    }

    #[test]
    fn a_change_is_judged_by_what_the_file_holds() {
        let (before, after) = (text("a\r\nb\r\n"), text("a\r\nc\r\n"));
        let judged = |now: Option<&str>| found(&before, &after, &Ok(now.map(str::to_string)));
        assert_eq!(judged(Some("a\r\nc\r\n")), Outcome::Done);
        assert!(matches!(
            judged(Some("a\r\nb\r\n")),
            Outcome::NotMade { .. }
        ));
        assert_eq!(
            judged(Some("a\nc\n")),
            Outcome::Done,
            "an editor's line ends"
        );
        assert!(matches!(judged(Some("mine\n")), Outcome::Unknown { .. }));
        assert!(matches!(judged(None), Outcome::Unknown { .. }));
        let created = found(&Snapshot::Missing, &text("n"), &Ok(None));
        assert!(matches!(created, Outcome::NotMade { .. }));
        // The intent keeps the text after as its hash.
        let hashed = Snapshot::digest(Some("a\r\nc\r\n"));
        let judged = |now: &str| found(&before, &hashed, &Ok(Some(now.to_string())));
        assert_eq!(judged("a\r\nc\r\n"), Outcome::Done);
        assert_eq!(judged("a\nc\n"), Outcome::Done, "an editor's line ends");
        assert!(matches!(judged("mine\n"), Outcome::Unknown { .. }));
        let unreadable = found(&before, &after, &Err("a FIFO".into()));
        assert!(matches!(unreadable, Outcome::Unknown { .. }));
    }

    #[tokio::test]
    async fn an_unfinished_rewind_is_completed_but_never_over_someone_elses_change() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        let (a, b, c, d) = (
            root.join("a"),
            root.join("b"),
            root.join("c"),
            root.join("d"),
        );
        std::fs::write(&a, "a0").unwrap(); // put back already
        std::fs::write(&b, "b1").unwrap(); // not yet
        std::fs::write(&c, "mine").unwrap(); // changed by someone else
        std::fs::write(&d, "d1").unwrap(); // tandem created it: removed
        let file = |path: &Path, before: Snapshot, after: Snapshot| Restored {
            path: path.to_path_buf(),
            before,
            after,
        };
        let files = [
            file(&a, text("a1"), text("a0")),
            file(&b, text("b1"), text("b0")),
            file(&c, text("c1"), text("c0")),
            file(&d, text("d1"), Snapshot::Missing),
        ];
        let (restored, said) = complete(2, &files, &root).await;
        assert_eq!(std::fs::read_to_string(&a).unwrap(), "a0");
        assert_eq!(std::fs::read_to_string(&b).unwrap(), "b0");
        assert_eq!(std::fs::read_to_string(&c).unwrap(), "mine");
        assert!(!d.exists());
        let paths: Vec<&Path> = restored.iter().map(|r| r.path.as_path()).collect();
        assert_eq!(paths, [a.as_path(), b.as_path(), d.as_path()]);
        assert!(said.contains("only partly applied"), "{said}");
        assert!(said.contains("`c`: **left as it is**"), "{said}");
    }
}
