//! Applying a parsed patch to the files' current texts, in memory: every file or none.

use std::collections::HashMap;

use super::parse::{FileOp, Hunk, Patch};
use crate::edit::document::{Document, Eol};
use crate::edit::matcher::{Candidates, Keyed, Tier};
use crate::edit::splice::Splice;
use crate::edit::{indent, lines};

/// What happens to one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Change {
    /// A new file, or a whole new content for one.
    Add,
    /// Removed.
    Delete,
    /// Changed in place (and maybe moved).
    Update,
}

/// One file's result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Outcome {
    /// What happens.
    pub(crate) change: Change,
    /// The file as the patch names it.
    pub(crate) path: String,
    /// Where it moves to.
    pub(crate) move_to: Option<String>,
    /// The whole file before (`None`: it did not exist).
    pub(crate) before: Option<String>,
    /// The whole file after (`None`: deleted).
    pub(crate) after: Option<String>,
    /// The most lenient tier its hunks needed.
    pub(crate) tier: Tier,
    /// The 1-based line of its first change.
    pub(crate) line: usize,
    /// For each hunk that did not match exactly: its number and tier.
    pub(crate) lenient: Vec<(usize, Tier)>,
}

/// Why a patch does not apply.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum PatchError {
    /// A file to update or delete is not there.
    #[error("{0} does not exist")]
    Missing(String),
    /// A file to move to is already there.
    #[error("cannot move to {0}: it already exists")]
    Exists(String),
    /// The same file twice.
    #[error("{0} appears in more than one operation; put all its changes in one `*** Update File`")]
    Twice(String),
    /// An `@@` line not found.
    #[error(
        "{path}: hunk {hunk} (patch line {line}): the `@@ {anchor}` line was not found after the previous hunk"
    )]
    Anchor {
        /// The file.
        path: String,
        /// 1-based hunk.
        hunk: usize,
        /// Patch line.
        line: usize,
        /// The missing line.
        anchor: String,
    },
    /// A hunk's lines not found.
    #[error(
        "{path}: hunk {hunk} (patch line {line}): its context and removed lines were not found, not even ignoring whitespace, indentation and Unicode punctuation; read the file again and write the hunk against its current text"
    )]
    NotFound {
        /// The file.
        path: String,
        /// 1-based hunk.
        hunk: usize,
        /// Patch line.
        line: usize,
    },
    /// A hunk's lines found in more than one place.
    #[error("{path}: hunk {hunk} (patch line {line}): its lines match {count} places ({where_}) {when}; add context lines or an `@@` line naming the function or class", count = .found.lines.len(), where_ = .found.describe(), when = .found.tier.when())]
    Ambiguous {
        /// The file.
        path: String,
        /// 1-based hunk.
        hunk: usize,
        /// Patch line.
        line: usize,
        /// Where.
        found: Candidates,
    },
}

/// The patch applied to `files` (each path the patch names, as it names it: its document,
/// or `None` when there is no such file), trying tiers up to `max`.
pub(crate) fn apply(
    patch: &Patch,
    files: &HashMap<String, Option<Document>>,
    max: Tier,
) -> Result<Vec<Outcome>, PatchError> {
    no_file_twice(patch)?;
    let current = |path: &str| files.get(path).cloned().flatten();
    patch
        .ops
        .iter()
        .map(|op| match op {
            FileOp::Add { path, content } => {
                let before = current(path);
                Ok(Outcome {
                    change: Change::Add,
                    path: path.clone(),
                    move_to: None,
                    after: Some(match &before {
                        Some(doc) => doc.adopt(content),
                        None => content.clone(),
                    }),
                    before: before.map(|d| d.render(&d.text)),
                    tier: Tier::Exact,
                    line: 1,
                    lenient: Vec::new(),
                })
            }
            FileOp::Delete { path } => {
                let doc = current(path).ok_or_else(|| PatchError::Missing(path.clone()))?;
                Ok(Outcome {
                    change: Change::Delete,
                    path: path.clone(),
                    move_to: None,
                    before: Some(doc.render(&doc.text)),
                    after: None,
                    tier: Tier::Exact,
                    line: 1,
                    lenient: Vec::new(),
                })
            }
            FileOp::Update {
                path,
                move_to,
                hunks,
            } => {
                let doc = current(path).ok_or_else(|| PatchError::Missing(path.clone()))?;
                if let Some(to) = move_to
                    && to != path
                    && current(to).is_some()
                {
                    return Err(PatchError::Exists(to.clone()));
                }
                updated(path, move_to.as_ref(), &doc, hunks, max)
            }
        })
        .collect()
}

/// Refuses a patch that names one file twice (as a file or as a move's target).
fn no_file_twice(patch: &Patch) -> Result<(), PatchError> {
    let mut seen: Vec<&str> = Vec::new();
    for op in &patch.ops {
        let mut names = vec![op.path()];
        if let FileOp::Update {
            move_to: Some(to), ..
        } = op
            && to != op.path()
        {
            names.push(to);
        }
        for name in names {
            if seen.contains(&name) {
                return Err(PatchError::Twice(name.to_string()));
            }
            seen.push(name);
        }
    }
    Ok(())
}

/// The outcome of updating `doc` (at `path`, maybe moved to `move_to`) with `hunks`.
fn updated(
    path: &str,
    move_to: Option<&String>,
    doc: &Document,
    hunks: &[Hunk],
    max: Tier,
) -> Result<Outcome, PatchError> {
    let updated = update(path, &doc.text, hunks, max)?;
    Ok(Outcome {
        change: Change::Update,
        path: path.to_string(),
        move_to: move_to.filter(|to| *to != path).cloned(),
        before: Some(doc.render(&doc.text)),
        after: Some(doc.render(&updated.text)),
        tier: updated
            .lenient
            .iter()
            .map(|(_, t)| *t)
            .max()
            .unwrap_or(Tier::Exact),
        line: updated.line,
        lenient: updated.lenient,
    })
}

/// A file's text after its hunks.
struct Updated {
    text: String,
    line: usize,
    lenient: Vec<(usize, Tier)>,
}

/// Where one hunk goes: its first line, how many lines it replaces, at which tier.
struct Place {
    start: usize,
    tier: Tier,
    old: Vec<String>,
    new: Vec<String>,
}

fn update(path: &str, text: &str, hunks: &[Hunk], max: Tier) -> Result<Updated, PatchError> {
    let file = lines::split(text);
    let texts: Vec<&str> = file.iter().map(|l| l.text).collect();
    let keyed: Vec<Keyed<'_>> = Tier::ALL
        .iter()
        .filter(|t| **t <= max)
        .map(|t| Keyed::new(*t, &texts))
        .collect();
    let mut cursor = 0;
    let mut places: Vec<Place> = Vec::with_capacity(hunks.len());
    for (i, hunk) in hunks.iter().enumerate() {
        // Each `@@` line is the nearest line after the last that it names.
        let mut anchored: Option<usize> = None;
        for anchor in &hunk.anchors {
            let from = anchored.map_or(cursor, |a| a + 1);
            let found = find_anchor(&keyed, &texts, anchor, from);
            anchored = Some(found.ok_or_else(|| PatchError::Anchor {
                path: path.to_string(),
                hunk: i + 1,
                line: hunk.line,
                anchor: anchor.clone(),
            })?);
        }
        let place = locate(path, i, hunk, &keyed, cursor, anchored, file.len())?;
        cursor = place.start + place.old.len();
        places.push(place);
    }
    let eol = Eol::of(text).ending();
    let unit = indent::unit_of_file(texts.iter().copied());
    let mut out = text.to_string();
    for place in places.iter().rev() {
        let old: Vec<&str> = place.old.iter().map(String::as_str).collect();
        let new: Vec<&str> = place.new.iter().map(String::as_str).collect();
        let (range, replacement) = if old.is_empty() {
            insertion(&file, text, place.start, &new, eol)
        } else {
            Splice {
                lines: &file,
                start: place.start,
                needle: &old,
                new: &new,
                tier: place.tier,
                eol,
                unit: &unit,
            }
            .render()
        };
        out.replace_range(range, &replacement);
    }
    Ok(Updated {
        text: out,
        line: places.first().map_or(1, |p| p.start + 1),
        lenient: places
            .iter()
            .enumerate()
            .filter(|(_, p)| p.tier > Tier::Exact)
            .map(|(i, p)| (i + 1, p.tier))
            .collect(),
    })
}

/// Finds one hunk from `cursor`: the first tier that finds its lines decides; several
/// places there are refused unless an `@@` line pointed at the section (then the first after
/// it is the one the patch names). A blank last context line a model added is tried without.
fn locate(
    path: &str,
    i: usize,
    hunk: &Hunk,
    keyed: &[Keyed<'_>],
    cursor: usize,
    anchored: Option<usize>,
    len: usize,
) -> Result<Place, PatchError> {
    if hunk.old.is_empty() {
        // Only added lines: after the `@@` line, else at the end of the file.
        let start = match anchored {
            Some(at) if !hunk.at_end => at + 1,
            _ => len,
        };
        return Ok(Place {
            start,
            tier: Tier::Exact,
            old: Vec::new(),
            new: hunk.new.clone(),
        });
    }
    // The hunk may start on its `@@` line (models repeat it as context).
    let from = anchored.unwrap_or(cursor);
    for (old, new) in tries(hunk) {
        let needle: Vec<&str> = old.iter().map(String::as_str).collect();
        if anchored.is_some() {
            // The patch named the section: the nearest place after it, at whichever tier
            // matches there (the strictest one that does).
            let nearest = keyed
                .iter()
                .filter_map(|k| {
                    k.find(&needle, from, hunk.at_end)
                        .first()
                        .map(|s| (*s, k.tier()))
                })
                .min();
            if let Some((start, tier)) = nearest {
                return Ok(Place {
                    start,
                    tier,
                    old,
                    new,
                });
            }
            continue;
        }
        for k in keyed {
            let starts = k.find(&needle, from, hunk.at_end);
            let Some(&start) = starts.first() else {
                continue;
            };
            if starts.len() > 1 {
                return Err(PatchError::Ambiguous {
                    path: path.to_string(),
                    hunk: i + 1,
                    line: hunk.line,
                    found: Candidates {
                        tier: k.tier(),
                        lines: starts.iter().map(|s| s + 1).collect(),
                    },
                });
            }
            return Ok(Place {
                start,
                tier: k.tier(),
                old,
                new,
            });
        }
    }
    Err(PatchError::NotFound {
        path: path.to_string(),
        hunk: i + 1,
        line: hunk.line,
    })
}

/// The hunk's lines as given, then without a blank line at either end (models add one that
/// the file does not have): each is tried in turn.
fn tries(hunk: &Hunk) -> Vec<(Vec<String>, Vec<String>)> {
    let mut tries = vec![(hunk.old.clone(), hunk.new.clone())];
    let blank = |l: Option<&String>| l.is_some_and(|l| l.trim().is_empty());
    if hunk.old.len() > 1 && blank(hunk.old.last()) {
        let (mut old, mut new) = (hunk.old.clone(), hunk.new.clone());
        old.pop();
        if blank(new.last()) {
            new.pop();
        }
        tries.push((old, new));
    }
    if hunk.old.len() > 1 && blank(hunk.old.first()) {
        let (mut old, mut new) = (hunk.old.clone(), hunk.new.clone());
        old.remove(0);
        if blank(new.first()) {
            new.remove(0);
        }
        tries.push((old, new));
    }
    tries
}

/// The nearest line from `from` that `anchor` names: equal at any tier, else one that starts
/// with it as a whole word (`@@ def search` for `def search(self, items):`).
fn find_anchor(keyed: &[Keyed<'_>], texts: &[&str], anchor: &str, from: usize) -> Option<usize> {
    let equal = keyed
        .iter()
        .filter_map(|k| k.find(&[anchor], from, false).first().copied())
        .min();
    equal.or_else(|| {
        let wanted = anchor.trim();
        texts.iter().enumerate().skip(from).find_map(|(i, line)| {
            let rest = line.trim_start().strip_prefix(wanted)?;
            let whole = !rest.starts_with(|c: char| c.is_alphanumeric() || c == '_');
            (!wanted.is_empty() && whole).then_some(i)
        })
    })
}

/// Lines added before line `at` (or at the end), in the file's line ends.
fn insertion(
    file: &[lines::Line<'_>],
    text: &str,
    at: usize,
    new: &[&str],
    eol: &str,
) -> (std::ops::Range<usize>, String) {
    let mut added: String = new.iter().map(|l| format!("{l}{eol}")).collect();
    if at < file.len() {
        let offset = file[at].start;
        return (offset..offset, added);
    }
    if file.last().is_some_and(|l| l.end.is_empty()) {
        // The file had no final newline: the old last line gets one, the new last keeps none.
        added.truncate(added.len() - eol.len());
        added.insert_str(0, eol);
    }
    (text.len()..text.len(), added)
}
