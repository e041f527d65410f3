//! The tiers of matching, from strict to lenient, and finding a block of lines at one tier.

use std::borrow::Cow;

use super::{fold, indent};

/// How leniently a quote was matched. Each tier runs only when the ones before found nothing.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Deserialize, serde::Serialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum Tier {
    /// Exactly as quoted (a CRLF file's line ends are its own, not the model's).
    Exact,
    /// Line ends and trailing whitespace ignored.
    Whitespace,
    /// Indentation ignored: the block has the same shape at another depth, or in tabs
    /// instead of spaces; the replacement moves to the file's indentation.
    Indentation,
    /// Typographic quotes, dashes and spaces folded to ASCII (indentation ignored too).
    Punctuation,
}

impl Tier {
    /// Every tier, strictest first.
    pub const ALL: [Tier; 4] = [
        Tier::Exact,
        Tier::Whitespace,
        Tier::Indentation,
        Tier::Punctuation,
    ];

    /// Its name in the corpus and the benchmark.
    pub fn name(self) -> &'static str {
        match self {
            Tier::Exact => "exact",
            Tier::Whitespace => "whitespace",
            Tier::Indentation => "indentation",
            Tier::Punctuation => "punctuation",
        }
    }

    /// What the user and the model are told when an edit matched at this tier.
    pub fn note(self) -> Option<&'static str> {
        match self {
            Tier::Exact => None,
            Tier::Whitespace => Some("matched ignoring line endings and trailing whitespace"),
            Tier::Indentation => Some("matched ignoring indentation"),
            Tier::Punctuation => Some("matched after folding Unicode quotes, dashes and spaces"),
        }
    }

    /// Words for "found at this tier", for refusals.
    pub(crate) fn when(self) -> &'static str {
        match self {
            Tier::Exact => "exactly",
            Tier::Whitespace => "when line endings and trailing whitespace are ignored",
            Tier::Indentation => "when indentation is ignored",
            Tier::Punctuation => "when Unicode punctuation is folded",
        }
    }

    /// Whether the replacement is moved to the file's indentation.
    pub(crate) fn reindents(self) -> bool {
        self >= Tier::Indentation
    }
}

/// Places a quote matched at one tier: more than one is a refusal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidates {
    /// The tier that found them.
    pub(crate) tier: Tier,
    /// Their 1-based first lines.
    pub(crate) lines: Vec<usize>,
}

impl Candidates {
    /// "lines 3, 17 and 40".
    pub(crate) fn describe(&self) -> String {
        let shown: Vec<String> = self.lines.iter().take(10).map(usize::to_string).collect();
        let more = self.lines.len().saturating_sub(10);
        let list = match shown.split_last() {
            Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
            _ => shown.concat(),
        };
        let tail = if more > 0 {
            format!(" (and {more} more)")
        } else {
            String::new()
        };
        format!("lines {list}{tail}")
    }
}

/// What `tier` compares of one line.
pub(crate) fn key(tier: Tier, line: &str) -> Cow<'_, str> {
    match tier {
        Tier::Exact => Cow::Borrowed(line),
        Tier::Whitespace => Cow::Borrowed(line.trim_end()),
        Tier::Indentation => Cow::Borrowed(line.trim()),
        Tier::Punctuation => Cow::Owned(fold::fold(line).trim().to_string()),
    }
}

/// A file's lines as one tier compares them.
pub(crate) struct Keyed<'a> {
    tier: Tier,
    lines: &'a [&'a str],
    keys: Vec<Cow<'a, str>>,
}

impl<'a> Keyed<'a> {
    /// `lines` keyed for `tier`.
    pub(crate) fn new(tier: Tier, lines: &'a [&'a str]) -> Keyed<'a> {
        Keyed {
            tier,
            lines,
            keys: lines.iter().map(|l| key(tier, l)).collect(),
        }
    }

    /// The tier it compares at.
    pub(crate) fn tier(&self) -> Tier {
        self.tier
    }

    /// The starts (0-based) in `from..` where `needle` matches; with `at_end`, only a match
    /// that ends at the last line.
    pub(crate) fn find(&self, needle: &[&str], from: usize, at_end: bool) -> Vec<usize> {
        let n = needle.len();
        if n == 0 || n > self.lines.len() {
            return Vec::new();
        }
        let wanted: Vec<Cow<'_, str>> = needle.iter().map(|l| key(self.tier, l)).collect();
        let shape = self
            .tier
            .reindents()
            .then(|| indent::ranks(needle.iter().copied()));
        let last = self.lines.len() - n;
        let starts = if at_end { last..=last } else { from..=last };
        starts
            .filter(|&s| s >= from)
            .filter(|&s| self.keys[s..s + n] == wanted[..])
            .filter(|&s| {
                shape.as_ref().is_none_or(|shape| {
                    indent::ranks(self.lines[s..s + n].iter().copied()) == *shape
                })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn find(tier: Tier, file: &[&str], needle: &[&str]) -> Vec<usize> {
        Keyed::new(tier, file).find(needle, 0, false)
    }

    #[test]
    fn each_tier_is_more_lenient() {
        let file = ["fn a() {", "    b();  ", "}"];
        assert!(find(Tier::Exact, &file, &["    b();"]).is_empty());
        assert_eq!(find(Tier::Whitespace, &file, &["    b();"]), [1]);
        assert!(find(Tier::Whitespace, &file, &["b();"]).is_empty());
        assert_eq!(find(Tier::Indentation, &file, &["b();"]), [1]);
        let quoted = ["fn a() {", "b();", "}"];
        assert!(
            find(Tier::Indentation, &file, &quoted).is_empty(),
            "a flattened block has another shape"
        );
        let curly = ["say(\u{201C}x\u{201D})"];
        assert_eq!(find(Tier::Punctuation, &["  say(\"x\")"], &curly), [0]);
    }

    #[test]
    fn candidates_are_listed() {
        let c = Candidates {
            tier: Tier::Exact,
            lines: vec![3, 17, 40],
        };
        assert_eq!(c.describe(), "lines 3, 17 and 40");
    }
}
