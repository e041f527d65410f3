//! Parse and order semantic version strings such as `1.4.0-rc.2+build.7`.
//!
//! Ordering follows SemVer 2.0.0 precedence: major, minor and patch numerically, then the
//! pre-release (a version with one sorts before the same version without), and build
//! metadata last (it never changes precedence, it only keeps `Ord` consistent with `Eq`).

mod prerelease;

pub use prerelease::Prerelease;

use std::cmp::Ordering;
use std::fmt;
use std::str::FromStr;

/// Why a version string was rejected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParseError {
    /// The string was empty.
    Empty,
    /// `major.minor.patch` did not have exactly three parts.
    WrongPartCount(usize),
    /// A core part was not a number (or had a leading zero).
    BadNumber(String),
    /// A pre-release or build identifier was empty or held invalid characters.
    BadIdentifier(String),
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParseError::Empty => write!(f, "empty version string"),
            ParseError::WrongPartCount(n) => write!(f, "expected 3 version parts, found {n}"),
            ParseError::BadNumber(s) => write!(f, "invalid version number `{s}`"),
            ParseError::BadIdentifier(s) => write!(f, "invalid identifier `{s}`"),
        }
    }
}

impl std::error::Error for ParseError {}

/// A parsed semantic version.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Version {
    pub major: u64,
    pub minor: u64,
    pub patch: u64,
    pub pre: Prerelease,
    pub build: Option<String>,
}

impl Version {
    /// A release version with no pre-release or build metadata.
    pub fn new(major: u64, minor: u64, patch: u64) -> Self {
        Version {
            major,
            minor,
            patch,
            pre: Prerelease::EMPTY,
            build: None,
        }
    }

    /// Parses `s`, e.g. `"2.0.0-beta.3+sha.5114f85"`.
    pub fn parse(s: &str) -> Result<Self, ParseError> {
        let s = s.trim();
        if s.is_empty() {
            return Err(ParseError::Empty);
        }
        let (rest, build) = match s.split_once('+') {
            Some((rest, build)) => {
                validate_build(build)?;
                (rest, Some(build.to_string()))
            }
            None => (s, None),
        };
        let (core, pre) = match rest.split_once('-') {
            Some((core, pre)) => (core, Prerelease::parse(pre)?),
            None => (rest, Prerelease::EMPTY),
        };
        let parts: Vec<&str> = core.split('.').collect();
        if parts.len() != 3 {
            return Err(ParseError::WrongPartCount(parts.len()));
        }
        Ok(Version {
            major: parse_number(parts[0])?,
            minor: parse_number(parts[1])?,
            patch: parse_number(parts[2])?,
            pre,
            build,
        })
    }

    /// Whether this is a pre-release (`1.0.0-rc.1` is, `1.0.0` is not).
    pub fn is_prerelease(&self) -> bool {
        !self.pre.is_empty()
    }

    /// Compares by SemVer precedence only, ignoring build metadata.
    pub fn cmp_precedence(&self, other: &Version) -> Ordering {
        self.major
            .cmp(&other.major)
            .then(self.minor.cmp(&other.minor))
            .then(self.patch.cmp(&other.patch))
            .then_with(|| self.pre.cmp(&other.pre))
    }
}

fn parse_number(s: &str) -> Result<u64, ParseError> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) || (s.len() > 1 && s.starts_with('0')) {
        return Err(ParseError::BadNumber(s.to_string()));
    }
    s.parse().map_err(|_| ParseError::BadNumber(s.to_string()))
}

fn validate_build(build: &str) -> Result<(), ParseError> {
    for id in build.split('.') {
        if id.is_empty() || !id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-') {
            return Err(ParseError::BadIdentifier(id.to_string()));
        }
    }
    Ok(())
}

impl FromStr for Version {
    type Err = ParseError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Version::parse(s)
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)?;
        if !self.pre.is_empty() {
            write!(f, "-{}", self.pre)?;
        }
        if let Some(build) = &self.build {
            write!(f, "+{build}")?;
        }
        Ok(())
    }
}

impl PartialOrd for Version {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Version {
    fn cmp(&self, other: &Self) -> Ordering {
        self.cmp_precedence(other)
            .then_with(|| self.build.cmp(&other.build))
    }
}

/// The highest version in `versions` that is not a pre-release, if any.
pub fn latest_release<'a, I>(versions: I) -> Option<&'a Version>
where
    I: IntoIterator<Item = &'a Version>,
{
    versions.into_iter().filter(|v| !v.is_prerelease()).max()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_full_version() {
        let v = Version::parse("1.4.0-rc.2+build.7").unwrap();
        assert_eq!((v.major, v.minor, v.patch), (1, 4, 0));
        assert_eq!(v.pre.to_string(), "rc.2");
        assert_eq!(v.build.as_deref(), Some("build.7"));
        assert_eq!(v.to_string(), "1.4.0-rc.2+build.7");
    }

    #[test]
    fn rejects_bad_versions() {
        assert_eq!(Version::parse(""), Err(ParseError::Empty));
        assert_eq!(Version::parse("1.2"), Err(ParseError::WrongPartCount(2)));
        assert!(matches!(Version::parse("1.02.3"), Err(ParseError::BadNumber(_))));
        assert!(matches!(Version::parse("1.2.3-"), Err(ParseError::BadIdentifier(_))));
        assert!(matches!(Version::parse("1.2.3-rc..1"), Err(ParseError::BadIdentifier(_))));
    }

    #[test]
    fn core_numbers_compare_numerically() {
        assert!(Version::parse("1.10.0").unwrap() > Version::parse("1.9.0").unwrap());
        assert!(Version::parse("2.0.0").unwrap() > Version::parse("1.99.99").unwrap());
    }

    #[test]
    fn prerelease_sorts_before_release() {
        assert!(Version::parse("1.0.0-alpha").unwrap() < Version::parse("1.0.0").unwrap());
    }

    #[test]
    fn build_metadata_ignored_for_precedence() {
        let a = Version::parse("1.0.0+a").unwrap();
        let b = Version::parse("1.0.0+b").unwrap();
        assert_eq!(a.cmp_precedence(&b), Ordering::Equal);
    }
}
