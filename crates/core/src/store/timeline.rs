//! A session's turns as its transcript tells them, across rewinds. A turn starts with each
//! prompt the user sent (a slash command like `/compact` and an action count; a message that
//! steered a running turn does not). A [`Record::Rewind`] takes its turn and every later one
//! out of the conversation: their records stay in the file (it is append-only) but are no
//! longer [kept](Timeline::kept), so the model, a reload and a later rewind see the
//! conversation as it stands. What tandem did to files is read from every record, kept or
//! not, since the disk went through all of it.
//!
//! A file change recorded ahead ([`Record::FileIntent`]) counts by its outcome, wherever
//! that was recorded: a change made is like a [`Record::FileChange`], one not made is none,
//! and one whose result tandem does not know (someone else changed the file while tandem
//! had stopped mid-change, or no outcome was recorded) makes every rewind over it leave the
//! file alone.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::record::{Line, Outcome, Record, Snapshot};
use crate::types::PromptBlock;

/// The turns of a transcript's lines and which records the conversation still holds.
pub(crate) struct Timeline<'a> {
    lines: &'a [Line],
    kept: Vec<bool>,
    /// The line each turn the conversation holds starts at, in order.
    starts: Vec<usize>,
    /// How each file change recorded ahead ended, with what the file held after one that
    /// was made, by its intent's id (the first outcome recorded).
    outcomes: HashMap<&'a str, (&'a Outcome, Option<&'a Snapshot>)>,
}

/// How a turn left a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Touch {
    /// It did not exist before.
    Created,
    /// It existed before and after.
    Changed,
    /// It existed before and not after.
    Deleted,
}

/// One turn, as `/rewind` lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TurnSummary {
    /// Its number (1-based) in the conversation as it stands.
    pub number: usize,
    /// The first line of its prompt (of the user's words in it, never markup).
    pub first_line: String,
    /// The title its prompt gives a session that starts with it: its first line, unless the
    /// prompt has no words.
    pub(crate) title: Option<String>,
    /// The files its calls changed, in the order first changed.
    pub files: Vec<(PathBuf, Touch)>,
    /// The command lines its calls started.
    pub commands: Vec<String>,
}

/// A file to put back: what it must hold again, and what tandem last left in it (what it
/// should hold now unless someone else changed it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FileBack {
    /// The file.
    pub(crate) path: PathBuf,
    /// What it held when the first turn taken back started.
    pub(crate) target: Snapshot,
    /// What tandem left in it last.
    pub(crate) expected: Snapshot,
    /// Why tandem does not know what its changes left in the file, when it does not (a
    /// change it was stopped in the middle of, after which someone else changed the file):
    /// such a file is left alone.
    pub(crate) unknown: Option<String>,
}

/// What going back to before a turn means.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Rewind {
    /// The turns taken back.
    pub(crate) turns: Vec<TurnSummary>,
    /// The files tandem changed since that turn started, in the order first changed.
    pub(crate) files: Vec<FileBack>,
}

impl<'a> Timeline<'a> {
    /// The timeline of `lines` (a whole transcript, in order).
    pub(crate) fn new(lines: &'a [Line]) -> Self {
        let mut kept = vec![true; lines.len()];
        let mut starts: Vec<usize> = Vec::new();
        let mut outcomes = HashMap::new();
        for (i, line) in lines.iter().enumerate() {
            if let Record::FileOutcome {
                id, outcome, after, ..
            } = own(&line.record)
            {
                outcomes
                    .entry(id.as_str())
                    .or_insert((outcome, after.as_ref()));
            }
            match &line.record {
                record if starts_turn(record) => starts.push(i),
                Record::Rewind { turn, .. } if (1..=starts.len()).contains(turn) => {
                    let from = starts[turn - 1];
                    for (j, flag) in kept.iter_mut().enumerate().take(i).skip(from) {
                        if in_conversation(&lines[j].record) {
                            *flag = false;
                        }
                    }
                    starts.truncate(turn - 1);
                }
                _ => {}
            }
        }
        Self {
            lines,
            kept,
            starts,
            outcomes,
        }
    }

    /// The change `record` records, if it records one that was (or may have been) made:
    /// the file, what it held before and after, and, when tandem does not know what the
    /// change did, why.
    fn change(&self, record: &'a Record) -> Option<Change<'a>> {
        match own(record) {
            Record::FileChange {
                path,
                before,
                after,
            } => Some((path, before, after, None)),
            Record::FileIntent {
                id,
                path,
                before,
                after,
            } => match self.outcomes.get(id.as_str()).copied() {
                // The outcome holds the text after whole; the intent only its hash.
                Some((Outcome::Done, kept)) => Some((path, before, kept.unwrap_or(after), None)),
                Some((Outcome::NotMade { .. }, _)) => None,
                Some((Outcome::Unknown { why }, _)) => {
                    Some((path, before, after, Some(why.clone())))
                }
                None => Some((path, before, after, Some(UNSETTLED.to_string()))),
            },
            _ => None,
        }
    }

    /// Whether the conversation still holds line `i` (records about the session itself,
    /// like its settings and title, always are).
    pub(crate) fn kept(&self, i: usize) -> bool {
        self.kept.get(i).copied().unwrap_or(true)
    }

    /// How many turns the conversation holds.
    pub(crate) fn len(&self) -> usize {
        self.starts.len()
    }

    /// Whether the conversation holds no turn.
    #[cfg(test)]
    pub(crate) fn is_empty(&self) -> bool {
        self.starts.is_empty()
    }

    /// The line turn `n` (1-based) starts at.
    pub(crate) fn start_of(&self, n: usize) -> Option<usize> {
        n.checked_sub(1).and_then(|i| self.starts.get(i)).copied()
    }

    /// The turns the conversation holds, in order.
    pub(crate) fn turns(&self) -> Vec<TurnSummary> {
        (1..=self.len()).filter_map(|n| self.turn(n)).collect()
    }

    /// Turn `n` (1-based).
    pub(crate) fn turn(&self, n: usize) -> Option<TurnSummary> {
        let from = self.start_of(n)?;
        let to = self.start_of(n + 1).unwrap_or(self.lines.len());
        let title = title(&self.lines[from].record);
        let mut summary = TurnSummary {
            number: n,
            first_line: title.clone().unwrap_or_else(|| "(no text)".to_string()),
            title,
            files: Vec::new(),
            commands: Vec::new(),
        };
        let mut firsts: Vec<(PathBuf, bool, bool)> = Vec::new();
        for i in (from..to).filter(|&i| self.kept(i)) {
            let record = &self.lines[i].record;
            if let Some((path, before, after, _)) = self.change(record) {
                match firsts.iter_mut().find(|(p, ..)| p == path) {
                    Some(entry) => entry.2 = *after != Snapshot::Missing,
                    None => firsts.push((
                        path.clone(),
                        *before != Snapshot::Missing,
                        *after != Snapshot::Missing,
                    )),
                }
            } else if let Record::CommandRan { line } = own(record) {
                summary.commands.push(line.clone());
            }
        }
        summary.files = firsts
            .into_iter()
            .filter_map(|(path, was, is)| match (was, is) {
                (false, true) => Some((path, Touch::Created)),
                (true, true) => Some((path, Touch::Changed)),
                (true, false) => Some((path, Touch::Deleted)),
                (false, false) => None,
            })
            .collect();
        Some(summary)
    }

    /// What going back to before turn `n` means: the turns taken back, and each file tandem
    /// changed since it started (in any record, a turn taken back before or a rewind's
    /// restoring included) with what it must hold again.
    pub(crate) fn rewind(&self, n: usize) -> Option<Rewind> {
        let from = self.start_of(n)?;
        let turns = (n..=self.len()).filter_map(|k| self.turn(k)).collect();
        let mut files: Vec<FileBack> = Vec::new();
        let mut change =
            |path: &Path, before: &Snapshot, after: &Snapshot, unknown: Option<String>| match files
                .iter_mut()
                .find(|f| f.path == path)
            {
                Some(file) => {
                    file.expected = after.clone();
                    file.unknown = file.unknown.take().or(unknown);
                }
                None => files.push(FileBack {
                    path: path.to_path_buf(),
                    target: before.clone(),
                    expected: after.clone(),
                    unknown,
                }),
            };
        for line in &self.lines[from..] {
            if let Some((path, before, after, unknown)) = self.change(&line.record) {
                change(path, before, after, unknown);
            } else if let Record::Rewind { restored, .. } = own(&line.record) {
                for r in restored {
                    change(&r.path, &r.before, &r.after, None);
                }
            }
        }
        Some(Rewind { turns, files })
    }
}

/// Why a change whose intent has no outcome is not known (the load that would have looked
/// at the file could not record what it found, or has not run).
const UNSETTLED: &str =
    "tandem stopped while it changed this file, and what became of the change was not found out";

/// A change as [`Timeline::change`] reads it: the file, what it held before and after, and
/// why tandem does not know what the change did, when it does not.
type Change<'a> = (&'a PathBuf, &'a Snapshot, &'a Snapshot, Option<String>);

/// Whether `record` starts a turn.
fn starts_turn(record: &Record) -> bool {
    matches!(
        record,
        Record::User {
            within_turn: false,
            ..
        } | Record::Command { .. }
    )
}

/// Whether a rewind takes `record` out with its turn: everything said and done in the turn,
/// but not what is about the session itself (its settings, title, folders, earlier rewinds).
fn in_conversation(record: &Record) -> bool {
    !matches!(
        record,
        Record::Meta { .. }
            | Record::Folders { .. }
            | Record::Settings { .. }
            | Record::Title { .. }
            | Record::Rewind { .. }
            | Record::RewindIntent { .. }
            | Record::RewindDropped { .. }
    )
}

/// The record itself, or what a subagent recorded (its file changes and commands are its
/// parent turn's).
pub(crate) fn own(record: &Record) -> &Record {
    match record {
        Record::Subagent { record, .. } => record,
        other => other,
    }
}

/// The first line of the user's words in the prompt that starts a turn, as the editor showed
/// it (never a client's markup), trimmed to 80 characters; `None` when it has no words.
fn title(record: &Record) -> Option<String> {
    match record {
        Record::User {
            sent: Some(blocks), ..
        } => blocks.iter().find_map(|b| match b {
            PromptBlock::Text { text } => super::title::from_text(text),
            _ => None,
        }),
        Record::User { parts, .. } | Record::Command { parts } => super::title::from_prompt(parts),
        _ => None,
    }
}

#[cfg(test)]
#[path = "timeline_tests.rs"]
mod tests;
