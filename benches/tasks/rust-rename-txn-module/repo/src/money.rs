//! Amounts of money as whole cents.

/// Parses `-42.17`, `3200`, `+5.5` into cents. At most two decimal places.
pub fn parse_cents(s: &str) -> Option<i64> {
    let s = s.trim();
    let (negative, digits) = match s.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    let (whole, frac) = digits.split_once('.').unwrap_or((digits, ""));
    if whole.is_empty() || frac.len() > 2 {
        return None;
    }
    if !whole.bytes().all(|b| b.is_ascii_digit()) || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let whole: i64 = whole.parse().ok()?;
    let frac: i64 = match frac.len() {
        0 => 0,
        1 => frac.parse::<i64>().ok()? * 10,
        _ => frac.parse().ok()?,
    };
    let cents = whole.checked_mul(100)?.checked_add(frac)?;
    Some(if negative { -cents } else { cents })
}

/// Formats cents as `-42.17`.
pub fn format_cents(cents: i64) -> String {
    let sign = if cents < 0 { "-" } else { "" };
    let abs = cents.unsigned_abs();
    format!("{sign}{}.{:02}", abs / 100, abs % 100)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        for (text, cents) in [("-42.17", -4217), ("3200", 320000), ("+5.5", 550), ("0.07", 7)] {
            assert_eq!(parse_cents(text), Some(cents), "{text}");
        }
        assert_eq!(format_cents(-4217), "-42.17");
        assert_eq!(format_cents(7), "0.07");
        assert_eq!(parse_cents("1.234"), None);
        assert_eq!(parse_cents("abc"), None);
        assert_eq!(parse_cents(".5"), None);
    }
}
