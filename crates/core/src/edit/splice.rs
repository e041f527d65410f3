//! Writing a model's new lines where its quoted lines matched: lines the model left as they
//! were keep the file's exact text, new lines take the file's indentation and line ends, and
//! the file keeps (or keeps lacking) its final newline.

use similar::{Algorithm, DiffOp};

use super::lines::Line;
use super::matcher::{Tier, key};
use super::{fold, indent};

/// One matched block and what replaces it, in a file's lines.
pub(crate) struct Splice<'s, 'a> {
    /// The file's lines.
    pub(crate) lines: &'s [Line<'a>],
    /// Where the match starts (0-based line).
    pub(crate) start: usize,
    /// The quoted lines (as many as matched).
    pub(crate) needle: &'s [&'s str],
    /// The new lines.
    pub(crate) new: &'s [&'s str],
    /// The tier that matched.
    pub(crate) tier: Tier,
    /// The line end new lines get.
    pub(crate) eol: &'s str,
    /// What one level of indentation is in this file.
    pub(crate) unit: &'s str,
}

impl Splice<'_, '_> {
    /// The byte range the block covers in the file and the text that replaces it.
    pub(crate) fn render(&self) -> (std::ops::Range<usize>, String) {
        let n = self.needle.len();
        let block = &self.lines[self.start..self.start + n];
        let found: Vec<&str> = block.iter().map(|l| l.text).collect();
        let writer = Writer::new(self, &found);
        // New lines end like the lines they replace (line by line in a mixed file).
        let eol = match block.first().map(|l| l.end) {
            Some(end) if !end.is_empty() => end,
            _ => self.eol,
        };
        let mut out: Vec<(String, &str)> = Vec::new();
        for op in self.ops() {
            match op {
                DiffOp::Equal {
                    old_index,
                    new_index: _,
                    len,
                } => out.extend(
                    block[old_index..old_index + len]
                        .iter()
                        .map(|l| (l.text.to_string(), l.end)),
                ),
                DiffOp::Delete { .. } => {}
                DiffOp::Insert {
                    new_index, new_len, ..
                }
                | DiffOp::Replace {
                    new_index, new_len, ..
                } => out.extend(
                    self.new[new_index..new_index + new_len]
                        .iter()
                        .map(|l| (writer.line(l), eol)),
                ),
            }
        }
        self.join(block, out, eol)
    }

    /// The range `block` covers and the text of `out`'s lines that replaces it, each with its
    /// line end (the block's last one keeps the block's, so a missing final newline stays
    /// missing).
    fn join(
        &self,
        block: &[Line<'_>],
        out: Vec<(String, &str)>,
        eol: &str,
    ) -> (std::ops::Range<usize>, String) {
        let last_end = block.last().map_or(eol, |l| l.end);
        let mut from = block.first().map_or(0, |l| l.start);
        let to = block
            .last()
            .map_or(from, |l| l.start + l.text.len() + l.end.len());
        if out.is_empty() && last_end.is_empty() && self.start > 0 {
            // The last lines go from a file without a final newline: the line before them
            // becomes the last, and loses its line end.
            let prev = &self.lines[self.start - 1];
            from = prev.start + prev.text.len();
        }
        let count = out.len();
        let mut text = String::new();
        for (i, (line, end)) in out.into_iter().enumerate() {
            text.push_str(&line);
            if i + 1 == count {
                text.push_str(last_end);
            } else if end.is_empty() {
                text.push_str(eol);
            } else {
                text.push_str(end);
            }
        }
        (from..to, text)
    }

    /// How the new lines differ from the quoted ones, compared the way the tier compares
    /// (with each line's depth, where indentation was ignored).
    fn ops(&self) -> Vec<DiffOp> {
        let depth = if self.tier.reindents() {
            indent::ranks(self.needle.iter().chain(self.new).copied())
        } else {
            vec![None; self.needle.len() + self.new.len()]
        };
        let keyed = |lines: &[&str], depths: &[Option<usize>]| -> Vec<(Option<usize>, String)> {
            lines
                .iter()
                .zip(depths)
                .map(|(l, d)| (*d, key(self.tier, l).into_owned()))
                .collect()
        };
        let (needle_depth, new_depth) = depth.split_at(self.needle.len());
        let old = keyed(self.needle, needle_depth);
        let new = keyed(self.new, new_depth);
        similar::capture_diff_slices(Algorithm::Myers, &old, &new)
    }
}

/// How a new line is written into the file: reindented where the tier ignored indentation,
/// and with the file's punctuation where the tier folded it.
struct Writer {
    reindent: Option<indent::Reindent>,
    /// Typographic characters the model brought in, which become the file's ASCII ones.
    introduced: Vec<char>,
    /// ASCII characters the model wrote for the file's only typographic form of them (prose
    /// with ’ and never '), with that form.
    restored: Vec<(char, char)>,
}

impl Writer {
    fn new(splice: &Splice<'_, '_>, found: &[&str]) -> Self {
        let reindent = splice
            .tier
            .reindents()
            .then(|| indent::Reindent::new(splice.needle, found, splice.new, splice.unit));
        let file_text: String = found.concat();
        let quoted: String = splice.needle.concat();
        let punctuation = splice.tier == Tier::Punctuation;
        let introduced: Vec<char> = quoted
            .chars()
            .filter(|c| punctuation && fold::ascii_for(*c).is_some() && !file_text.contains(*c))
            .collect();
        let restored: Vec<(char, char)> = file_text
            .chars()
            .filter(|t| punctuation && !quoted.contains(*t))
            .filter_map(|t| {
                let ascii = fold::ascii_for(t)?.chars().next()?;
                let only = fold::ascii_for(t)?.len() == 1
                    && !file_text.contains(ascii)
                    && quoted.contains(ascii)
                    && !file_text.chars().any(|o| {
                        o != t && fold::ascii_for(o).is_some_and(|a| a.starts_with(ascii))
                    });
                only.then_some((ascii, t))
            })
            .collect();
        Self {
            reindent,
            introduced,
            restored,
        }
    }

    fn line(&self, line: &str) -> String {
        let line = match &self.reindent {
            Some(r) => r.line(line),
            None => line.to_string(),
        };
        if self.introduced.is_empty() && self.restored.is_empty() {
            return line;
        }
        line.chars()
            .map(
                |c| match (self.introduced.contains(&c), fold::ascii_for(c)) {
                    (true, Some(ascii)) => ascii.to_string(),
                    _ => match self.restored.iter().find(|(a, _)| *a == c) {
                        Some((_, t)) => t.to_string(),
                        None => c.to_string(),
                    },
                },
            )
            .collect()
    }
}
