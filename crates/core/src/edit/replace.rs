//! `edit_file`'s replacements: each quote found at the first tier that finds it, refused when
//! that tier finds it in more than one place; several replacements apply in order, all or
//! none. An exact match is replaced by exactly the new text (line ends and all, in the
//! file's line-end style); every tier then checks that the file changed and holds the new
//! text where the quote was, as that tier reads it, and refuses the edit when it does not,
//! so an edit is never reported done that was not made.

use super::document::Eol;
use super::indent;
use super::lines;
use super::matcher::{Candidates, Keyed, Tier, key};
use super::splice::Splice;

/// One `{old_string, new_string}` of an edit.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize)]
pub struct Replacement {
    /// The text to find.
    pub old: String,
    /// The text to put in its place.
    pub new: String,
    /// Replace every place it is found instead of requiring exactly one.
    pub all: bool,
}

/// How one replacement landed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Landed {
    /// The tier that found it.
    pub(crate) tier: Tier,
    /// The 1-based line of its first place, in the text it was applied to.
    pub(crate) line: usize,
    /// How many places it replaced.
    pub(crate) count: usize,
}

/// The text after every replacement, and how each landed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Applied {
    /// The new text.
    pub(crate) text: String,
    /// Each replacement, in order.
    pub(crate) landed: Vec<Landed>,
}

impl Applied {
    /// The most lenient tier any replacement needed.
    pub(crate) fn tier(&self) -> Tier {
        self.landed
            .iter()
            .map(|l| l.tier)
            .max()
            .unwrap_or(Tier::Exact)
    }
}

/// Why a replacement does not apply.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum EditError {
    /// Nothing to find.
    #[error("old_string is empty; use write_file to create or replace a whole file")]
    Empty,
    /// Finding and replacing the same text.
    #[error("old_string and new_string are the same; nothing would change")]
    Unchanged,
    /// Not found at any tier.
    #[error(
        "old_string was not found, not even ignoring whitespace, indentation and Unicode punctuation{0}; read the file again and quote it as it is now"
    )]
    NotFound(String),
    /// Found, but replacing it would not leave the new text where it was (or would change
    /// nothing): why.
    #[error("{0}; nothing was changed")]
    NotApplied(String),
    /// Found in more than one place at the first tier that found it.
    #[error(
        "old_string matches {count} places ({where_}) {when}; include more surrounding lines to pick one, or set replace_all to change them all",
        count = .0.lines.len(),
        where_ = .0.describe(),
        when = .0.tier.when()
    )]
    Ambiguous(Candidates),
}

/// Applies `edits` in order to `text` (without its byte order mark), trying tiers up to
/// `max`; on failure, which edit (0-based) and why.
pub(crate) fn apply_edits(
    text: &str,
    edits: &[Replacement],
    max: Tier,
) -> Result<Applied, (usize, EditError)> {
    let mut text = text.to_string();
    let mut landed = Vec::with_capacity(edits.len());
    for (i, edit) in edits.iter().enumerate() {
        let (next, how) = apply_one(&text, edit, max).map_err(|e| (i, e))?;
        text = next;
        landed.push(how);
    }
    Ok(Applied { text, landed })
}

fn apply_one(text: &str, edit: &Replacement, max: Tier) -> Result<(String, Landed), EditError> {
    if edit.old.is_empty() {
        return Err(EditError::Empty);
    }
    if edit.old == edit.new {
        return Err(EditError::Unchanged);
    }
    if let Some(done) = exact(text, edit)? {
        return Ok(done);
    }
    let file: Vec<lines::Line<'_>> = lines::split(text);
    let texts: Vec<&str> = file.iter().map(|l| l.text).collect();
    let needle = lines::of_model(&edit.old);
    let new = lines::of_model(&edit.new);
    if !needle.iter().all(|l| indent::blank(l)) {
        let eol = Eol::of(text).ending();
        let unit = indent::unit_of_file(texts.iter().copied());
        for tier in [Tier::Whitespace, Tier::Indentation, Tier::Punctuation] {
            if tier > max {
                break;
            }
            let starts = separate(
                Keyed::new(tier, &texts).find(&needle, 0, false),
                needle.len(),
            );
            let Some(&first) = starts.first() else {
                continue;
            };
            if starts.len() > 1 && !edit.all {
                return Err(EditError::Ambiguous(Candidates {
                    tier,
                    lines: starts.iter().map(|s| s + 1).collect(),
                }));
            }
            let mut out = text.to_string();
            for &start in starts.iter().rev() {
                let splice = Splice {
                    lines: &file,
                    start,
                    needle: &needle,
                    new: &new,
                    tier,
                    eol,
                    unit: &unit,
                };
                let (range, replacement) = splice.render();
                out.replace_range(range, &replacement);
            }
            holds_new(text, &out, &starts, needle.len(), &new, tier)?;
            let how = Landed {
                tier,
                line: first + 1,
                count: starts.len(),
            };
            return Ok((out, how));
        }
    }
    Err(EditError::NotFound(hint(&texts, &needle)))
}

/// The exact tier: the quote as it is (in a CRLF file, with the file's line ends).
fn exact(text: &str, edit: &Replacement) -> Result<Option<(String, Landed)>, EditError> {
    let crlf = Eol::of(text) == Eol::Crlf;
    let with_ends = |s: &str| match crlf {
        true => s.replace("\r\n", "\n").replace('\n', "\r\n"),
        false => s.to_string(),
    };
    let (find, put) = (with_ends(&edit.old), with_ends(&edit.new));
    let starts: Vec<usize> = text.match_indices(&find).map(|(i, _)| i).collect();
    let Some(&first) = starts.first() else {
        return Ok(None);
    };
    if find == put {
        // `old\n` for `old\r\n` in a CRLF file: the file's line ends are kept.
        return Err(EditError::NotApplied(
            "old_string and new_string differ only in their line ends, and the file keeps its own"
                .into(),
        ));
    }
    if starts.len() > 1 && !edit.all {
        return Err(EditError::Ambiguous(Candidates {
            tier: Tier::Exact,
            lines: starts.iter().map(|&s| lines::number_at(text, s)).collect(),
        }));
    }
    let out = if edit.all {
        text.replace(&find, &put)
    } else {
        text.replacen(&find, &put, 1)
    };
    Ok(Some((
        out,
        Landed {
            tier: Tier::Exact,
            line: lines::number_at(text, first),
            count: starts.len(),
        },
    )))
}

/// The post-condition of a lenient tier: the file changed, and where each quote was (its
/// lines shifted by what earlier replacements added or removed) it now holds the new lines,
/// compared as `tier` compares them.
fn holds_new(
    before: &str,
    after: &str,
    starts: &[usize],
    needle: usize,
    new: &[&str],
    tier: Tier,
) -> Result<(), EditError> {
    if after == before {
        return Err(EditError::NotApplied(format!(
            "old_string was found {}, and new_string differs from it only in what that ignores",
            tier.when()
        )));
    }
    let lines: Vec<&str> = lines::split(after).iter().map(|l| l.text).collect();
    let grown = new.len() as isize - needle as isize;
    for (k, &start) in starts.iter().enumerate() {
        let at = (start as isize + k as isize * grown) as usize;
        let landed = lines.get(at..at + new.len()).unwrap_or_default();
        let same = landed.len() == new.len()
            && landed
                .iter()
                .zip(new)
                .all(|(l, n)| key(tier, l) == key(tier, n));
        if !same {
            return Err(EditError::NotApplied(format!(
                "the replacement at line {} would not read as new_string {}",
                at + 1,
                tier.when()
            )));
        }
    }
    Ok(())
}

/// Starts whose blocks of `n` lines do not overlap an earlier one.
fn separate(starts: Vec<usize>, n: usize) -> Vec<usize> {
    let mut kept: Vec<usize> = Vec::with_capacity(starts.len());
    for s in starts {
        if kept.last().is_none_or(|&k| s >= k + n) {
            kept.push(s);
        }
    }
    kept
}

/// Where the quote's first line is, when only the lines after it differ (a quote of an
/// older version of the file).
fn hint(file: &[&str], needle: &[&str]) -> String {
    let Some(first) = needle.iter().find(|l| !indent::blank(l)) else {
        return String::new();
    };
    let wanted = key(Tier::Punctuation, first);
    let at: Vec<usize> = file
        .iter()
        .enumerate()
        .filter(|(_, l)| key(Tier::Punctuation, l) == wanted)
        .map(|(i, _)| i + 1)
        .collect();
    if at.is_empty() || needle.len() < 2 {
        return String::new();
    }
    let c = Candidates {
        tier: Tier::Punctuation,
        lines: at,
    };
    format!(
        " (its first line is at {}, but the lines after it differ)",
        c.describe()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(text: &str, old: &str, new: &str) -> Result<Applied, (usize, EditError)> {
        let edit = Replacement {
            old: old.into(),
            new: new.into(),
            all: false,
        };
        apply_edits(text, &[edit], Tier::Punctuation)
    }

    #[test]
    fn exact_first_and_crlf_kept() {
        let done = one("a\r\nb\r\nc\r\n", "b\nc\n", "B\nC\n").unwrap();
        assert_eq!(done.text, "a\r\nB\r\nC\r\n");
        assert_eq!(done.landed[0].tier, Tier::Exact);
        assert_eq!(done.landed[0].line, 2);
    }

    /// Issue 32: an exact match is replaced by exactly the new text, so joins, splits,
    /// blank lines and the final newline do what was asked; a CRLF file stays CRLF.
    #[test]
    fn exact_matches_do_exactly_what_was_asked() {
        let join = one("f(a,\n  b)\n", "f(a,\n", "f(a, ").unwrap();
        assert_eq!(join.text, "f(a,   b)\n");
        let blank = one("a\nb\nc\n", "b", "b\n").unwrap();
        assert_eq!(blank.text, "a\nb\n\nc\n");
        let last = one("first\nlast\n", "last\n", "last").unwrap();
        assert_eq!(last.text, "first\nlast");
        let split = one("a, b\n", "a, ", "a,\n").unwrap();
        assert_eq!(split.text, "a,\nb\n");
        assert_eq!(one("a\nb\nc\n", "b\n", "B").unwrap().text, "a\nBc\n");
        let crlf = one("k = 1\r\nj = 2\r\n", "k = 1\r\n", "k = 3\n").unwrap();
        assert_eq!(crlf.text, "k = 3\r\nj = 2\r\n");
        let crlf_blank = one("a\r\nb\r\n", "a\n", "a\n\n").unwrap();
        assert_eq!(crlf_blank.text, "a\r\n\r\nb\r\n");
    }

    /// Issue 32: an edit that would change nothing is refused, never reported done.
    #[test]
    fn an_edit_that_changes_nothing_is_refused() {
        let (_, err) = one("a\r\nb\r\n", "a\r\n", "a\n").unwrap_err();
        assert!(matches!(err, EditError::NotApplied(_)), "{err}");
        // Found ignoring trailing whitespace, with only trailing whitespace changed.
        let (_, err) = one("a  \nb\n", "a\nb\n", "a \nb\n").unwrap_err();
        assert!(matches!(err, EditError::NotApplied(_)), "{err}");
        assert!(err.to_string().contains("nothing was changed"), "{err}");
    }

    #[test]
    fn indentation_is_moved_to_the_files() {
        let file = "impl A {\n\tfn f() {\n\t\tone();\n\t}\n}\n";
        let done = one(
            file,
            "fn f() {\n    one();\n}\n",
            "fn f() {\n    one();\n    two();\n}\n",
        )
        .unwrap();
        assert_eq!(
            done.text,
            "impl A {\n\tfn f() {\n\t\tone();\n\t\ttwo();\n\t}\n}\n"
        );
        assert_eq!(done.tier(), Tier::Indentation);
    }

    #[test]
    fn trailing_whitespace_and_final_newline() {
        let done = one("a  \nb", "a\nb\n", "a\nc\n").unwrap();
        assert_eq!(
            done.text, "a  \nc",
            "kept line untouched, still no final newline"
        );
        assert_eq!(done.tier(), Tier::Whitespace);
        let gone = one("x\ny  \n", "y\n", "").unwrap();
        assert_eq!(gone.text, "x\n");
        let last = one("x\ny  ", "y\n", "").unwrap();
        assert_eq!(last.text, "x");
    }

    #[test]
    fn ambiguity_is_refused_at_the_tier_that_found_it() {
        let file = "fn a() {\n    go();\n}\nfn b() {\n  go();\n}\n";
        let (_, err) = one(file, "go(); \n", "stop();\n").unwrap_err();
        assert_eq!(
            err,
            EditError::Ambiguous(Candidates {
                tier: Tier::Indentation,
                lines: vec![2, 5]
            })
        );
        assert!(err.to_string().contains("lines 2 and 5"), "{err}");
    }

    #[test]
    fn curly_quotes_fold_and_are_not_written() {
        let file = "    print(\"hello\")\n";
        let done = one(
            file,
            "print(\u{201C}hello\u{201D})",
            "print(\u{201C}hi\u{201D})",
        )
        .unwrap();
        assert_eq!(done.text, "    print(\"hi\")\n");
        assert_eq!(done.tier(), Tier::Punctuation);
    }

    #[test]
    fn stale_quotes_say_where_they_start() {
        let (_, err) = one("a\nb\nc\n", "a\nx\n", "y\n").unwrap_err();
        assert!(
            err.to_string().contains("its first line is at lines 1"),
            "{err}"
        );
    }
}
