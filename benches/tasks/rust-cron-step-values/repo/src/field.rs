//! One field of a cron expression, e.g. the `9-17` in `0 9-17 * * *`.

use std::fmt;

/// Why a field was rejected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParseError {
    /// The field (or an item of a comma list) was empty.
    Empty,
    /// Something that should be a number was not.
    InvalidNumber(String),
    /// A number outside the field's bounds.
    OutOfRange { value: u32, min: u32, max: u32 },
    /// A range whose start is after its end, like `17-9`.
    BackwardsRange { start: u32, end: u32 },
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParseError::Empty => write!(f, "empty field"),
            ParseError::InvalidNumber(s) => write!(f, "`{s}` is not a number"),
            ParseError::OutOfRange { value, min, max } => {
                write!(f, "{value} is outside {min}-{max}")
            }
            ParseError::BackwardsRange { start, end } => {
                write!(f, "range {start}-{end} runs backwards")
            }
        }
    }
}

impl std::error::Error for ParseError {}

/// The set of values a field allows, within its bounds (at most 0-63).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Field {
    bits: u64,
    min: u32,
    max: u32,
}

impl Field {
    /// Parses `spec` for a field whose values run from `min` to `max` inclusive
    /// (e.g. 0-59 for minutes, 1-31 for days of the month).
    pub fn parse(spec: &str, min: u32, max: u32) -> Result<Field, ParseError> {
        assert!(min <= max && max < 64, "field bounds must lie within 0-63");
        let spec = spec.trim();
        if spec.is_empty() {
            return Err(ParseError::Empty);
        }
        let mut bits = 0u64;
        for item in spec.split(',') {
            let (start, end) = parse_range(item, min, max)?;
            for v in start..=end {
                bits |= 1 << v;
            }
        }
        Ok(Field { bits, min, max })
    }

    /// Whether `value` is allowed.
    pub fn contains(&self, value: u32) -> bool {
        value >= self.min && value <= self.max && self.bits & (1 << value) != 0
    }

    /// The allowed values, ascending.
    pub fn values(&self) -> Vec<u32> {
        (self.min..=self.max).filter(|&v| self.contains(v)).collect()
    }

    /// Whether every value in the bounds is allowed (as with `*`).
    pub fn is_every(&self) -> bool {
        (self.min..=self.max).all(|v| self.contains(v))
    }
}

/// Parses one comma-list item: `*`, `n` or `a-b`, into an inclusive range.
fn parse_range(item: &str, min: u32, max: u32) -> Result<(u32, u32), ParseError> {
    if item.is_empty() {
        return Err(ParseError::Empty);
    }
    if item == "*" {
        return Ok((min, max));
    }
    match item.split_once('-') {
        Some((a, b)) => {
            let start = parse_number(a, min, max)?;
            let end = parse_number(b, min, max)?;
            if start > end {
                return Err(ParseError::BackwardsRange { start, end });
            }
            Ok((start, end))
        }
        None => {
            let n = parse_number(item, min, max)?;
            Ok((n, n))
        }
    }
}

fn parse_number(s: &str, min: u32, max: u32) -> Result<u32, ParseError> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return Err(ParseError::InvalidNumber(s.to_string()));
    }
    let value: u32 = s
        .parse()
        .map_err(|_| ParseError::InvalidNumber(s.to_string()))?;
    if value < min || value > max {
        return Err(ParseError::OutOfRange { value, min, max });
    }
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn star_allows_everything() {
        let f = Field::parse("*", 0, 59).unwrap();
        assert!(f.is_every());
        assert_eq!(f.values().len(), 60);
    }

    #[test]
    fn lists_and_ranges() {
        let f = Field::parse("1,5-7,30", 0, 59).unwrap();
        assert_eq!(f.values(), vec![1, 5, 6, 7, 30]);
        assert!(f.contains(6));
        assert!(!f.contains(8));
    }

    #[test]
    fn errors() {
        assert_eq!(Field::parse("", 0, 59), Err(ParseError::Empty));
        assert_eq!(Field::parse("1,,2", 0, 59), Err(ParseError::Empty));
        assert_eq!(
            Field::parse("60", 0, 59),
            Err(ParseError::OutOfRange { value: 60, min: 0, max: 59 })
        );
        assert_eq!(
            Field::parse("17-9", 0, 23),
            Err(ParseError::BackwardsRange { start: 17, end: 9 })
        );
        assert!(matches!(Field::parse("x", 0, 59), Err(ParseError::InvalidNumber(_))));
        assert!(matches!(Field::parse("0", 1, 31), Err(ParseError::OutOfRange { .. })));
    }
}
