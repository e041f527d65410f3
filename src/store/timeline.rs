//! A session's turns as its transcript tells them, across rewinds. A turn starts with each
//! prompt the user sent (a slash command like `/compact` and an action count; a message that
//! steered a running turn does not). A [`Record::Rewind`] takes its turn and every later one
//! out of the conversation: their records stay in the file (it is append-only) but are no
//! longer [kept](Timeline::kept), so the model, a reload and a later rewind see the
//! conversation as it stands. What tandem did to files is read from every record, kept or
//! not, since the disk went through all of it.

use std::path::{Path, PathBuf};

use super::record::{Line, Record, Snapshot};
use crate::types::{PromptBlock, UserPart};

/// The turns of a transcript's lines and which records the conversation still holds.
pub struct Timeline<'a> {
    lines: &'a [Line],
    kept: Vec<bool>,
    /// The line each turn the conversation holds starts at, in order.
    starts: Vec<usize>,
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
    /// The first line of its prompt.
    pub first_line: String,
    /// The files its calls changed, in the order first changed.
    pub files: Vec<(PathBuf, Touch)>,
    /// The command lines its calls started.
    pub commands: Vec<String>,
}

/// A file to put back: what it must hold again, and what tandem last left in it (what it
/// should hold now unless someone else changed it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileBack {
    /// The file.
    pub path: PathBuf,
    /// What it held when the first turn taken back started.
    pub target: Snapshot,
    /// What tandem left in it last.
    pub expected: Snapshot,
}

/// What going back to before a turn means.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rewind {
    /// The turns taken back.
    pub turns: Vec<TurnSummary>,
    /// The files tandem changed since that turn started, in the order first changed.
    pub files: Vec<FileBack>,
}

impl<'a> Timeline<'a> {
    /// The timeline of `lines` (a whole transcript, in order).
    pub fn new(lines: &'a [Line]) -> Self {
        let mut kept = vec![true; lines.len()];
        let mut starts: Vec<usize> = Vec::new();
        for (i, line) in lines.iter().enumerate() {
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
        }
    }

    /// Whether the conversation still holds line `i` (records about the session itself,
    /// like its settings and title, always are).
    pub fn kept(&self, i: usize) -> bool {
        self.kept.get(i).copied().unwrap_or(true)
    }

    /// How many turns the conversation holds.
    pub fn len(&self) -> usize {
        self.starts.len()
    }

    /// Whether the conversation holds no turn.
    pub fn is_empty(&self) -> bool {
        self.starts.is_empty()
    }

    /// The line turn `n` (1-based) starts at.
    pub fn start_of(&self, n: usize) -> Option<usize> {
        n.checked_sub(1).and_then(|i| self.starts.get(i)).copied()
    }

    /// The turns the conversation holds, in order.
    pub fn turns(&self) -> Vec<TurnSummary> {
        (1..=self.len()).filter_map(|n| self.turn(n)).collect()
    }

    /// Turn `n` (1-based).
    pub fn turn(&self, n: usize) -> Option<TurnSummary> {
        let from = self.start_of(n)?;
        let to = self.start_of(n + 1).unwrap_or(self.lines.len());
        let mut summary = TurnSummary {
            number: n,
            first_line: first_line(&self.lines[from].record),
            files: Vec::new(),
            commands: Vec::new(),
        };
        let mut firsts: Vec<(PathBuf, bool, bool)> = Vec::new();
        for i in (from..to).filter(|&i| self.kept(i)) {
            match own(&self.lines[i].record) {
                Record::FileChange {
                    path,
                    before,
                    after,
                } => match firsts.iter_mut().find(|(p, ..)| p == path) {
                    Some(entry) => entry.2 = *after != Snapshot::Missing,
                    None => firsts.push((
                        path.clone(),
                        *before != Snapshot::Missing,
                        *after != Snapshot::Missing,
                    )),
                },
                Record::CommandRan { line } => summary.commands.push(line.clone()),
                _ => {}
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
    pub fn rewind(&self, n: usize) -> Option<Rewind> {
        let from = self.start_of(n)?;
        let turns = (n..=self.len()).filter_map(|k| self.turn(k)).collect();
        let mut files: Vec<FileBack> = Vec::new();
        let mut change = |path: &Path, before: &Snapshot, after: &Snapshot| match files
            .iter_mut()
            .find(|f| f.path == path)
        {
            Some(file) => file.expected = after.clone(),
            None => files.push(FileBack {
                path: path.to_path_buf(),
                target: before.clone(),
                expected: after.clone(),
            }),
        };
        for line in &self.lines[from..] {
            match own(&line.record) {
                Record::FileChange {
                    path,
                    before,
                    after,
                } => change(path, before, after),
                Record::Rewind { restored, .. } => {
                    for r in restored {
                        change(&r.path, &r.before, &r.after);
                    }
                }
                _ => {}
            }
        }
        Some(Rewind { turns, files })
    }
}

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
    )
}

/// The record itself, or what a subagent recorded (its file changes and commands are its
/// parent turn's).
fn own(record: &Record) -> &Record {
    match record {
        Record::Subagent { record, .. } => record,
        other => other,
    }
}

/// The first line of the prompt that starts a turn, as the editor showed it, trimmed to 80
/// characters.
fn first_line(record: &Record) -> String {
    let text = match record {
        Record::User {
            sent: Some(blocks), ..
        } => blocks.iter().find_map(|b| match b {
            PromptBlock::Text { text } if !text.trim().is_empty() => Some(text.clone()),
            _ => None,
        }),
        Record::User { parts, .. } | Record::Command { parts } => {
            parts.iter().find_map(|p| match p {
                UserPart::Text(text) if !text.trim().is_empty() => Some(text.clone()),
                _ => None,
            })
        }
        _ => None,
    };
    let line = text
        .as_deref()
        .and_then(|t| t.trim().lines().next())
        .unwrap_or("(no text)")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    if line.chars().count() > 80 {
        format!("{}…", line.chars().take(79).collect::<String>())
    } else {
        line
    }
}

#[cfg(test)]
#[path = "timeline_tests.rs"]
mod tests;
