//! The pre-release part of a version: dot-separated identifiers such as `rc.2` or `alpha.beta.1`.

use std::cmp::Ordering;
use std::fmt;

use crate::ParseError;

/// A version's pre-release identifiers; empty for a release.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct Prerelease {
    ids: Vec<String>,
}

impl Prerelease {
    /// No pre-release: the version is a release.
    pub const EMPTY: Prerelease = Prerelease { ids: Vec::new() };

    /// Parses the text after the `-`, e.g. `"rc.2"`.
    pub fn parse(s: &str) -> Result<Self, ParseError> {
        let mut ids = Vec::new();
        for id in s.split('.') {
            let valid = !id.is_empty() && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-');
            let leading_zero = is_numeric(id) && id.len() > 1 && id.starts_with('0');
            if !valid || leading_zero {
                return Err(ParseError::BadIdentifier(id.to_string()));
            }
            ids.push(id.to_string());
        }
        Ok(Prerelease { ids })
    }

    /// Whether there are no identifiers.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// The identifiers, in order.
    pub fn identifiers(&self) -> impl Iterator<Item = &str> {
        self.ids.iter().map(String::as_str)
    }
}

fn is_numeric(id: &str) -> bool {
    !id.is_empty() && id.bytes().all(|b| b.is_ascii_digit())
}

impl fmt::Display for Prerelease {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.ids.join("."))
    }
}

impl PartialOrd for Prerelease {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Prerelease {
    /// SemVer precedence: a release (no identifiers) is greater than any pre-release;
    /// otherwise identifiers are compared left to right, numeric ones below alphanumeric
    /// ones, and a shorter list that is a prefix of a longer one is smaller.
    fn cmp(&self, other: &Self) -> Ordering {
        match (self.is_empty(), other.is_empty()) {
            (true, true) => return Ordering::Equal,
            (true, false) => return Ordering::Greater,
            (false, true) => return Ordering::Less,
            (false, false) => {}
        }
        for (a, b) in self.ids.iter().zip(&other.ids) {
            let ord = match (is_numeric(a), is_numeric(b)) {
                (true, true) => a.cmp(b),
                (true, false) => Ordering::Less,
                (false, true) => Ordering::Greater,
                (false, false) => a.cmp(b),
            };
            if ord != Ordering::Equal {
                return ord;
            }
        }
        self.ids.len().cmp(&other.ids.len())
    }
}
