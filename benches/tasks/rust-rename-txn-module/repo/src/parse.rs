//! Reading ledger files: one `date | category | payee | amount` entry per line.

use std::fmt;

use crate::date::Date;
use crate::money::{format_cents, parse_cents};

/// One ledger entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Txn {
    pub date: Date,
    pub category: String,
    pub payee: String,
    /// Positive for income, negative for an expense.
    pub amount_cents: i64,
}

impl Txn {
    /// Whether money went out.
    pub fn is_expense(&self) -> bool {
        self.amount_cents < 0
    }
}

impl fmt::Display for Txn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} | {} | {} | {}",
            self.date,
            self.category,
            self.payee,
            format_cents(self.amount_cents)
        )
    }
}

/// Why a line could not be read; `line` is 1-based.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParseError {
    FieldCount { line: usize, found: usize },
    BadDate { line: usize, text: String },
    BadAmount { line: usize, text: String },
    EmptyField { line: usize },
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParseError::FieldCount { line, found } => {
                write!(f, "line {line}: expected 4 fields, found {found}")
            }
            ParseError::BadDate { line, text } => write!(f, "line {line}: bad date `{text}`"),
            ParseError::BadAmount { line, text } => write!(f, "line {line}: bad amount `{text}`"),
            ParseError::EmptyField { line } => write!(f, "line {line}: empty field"),
        }
    }
}

impl std::error::Error for ParseError {}

/// Parses one entry line. `line` is only used in errors.
pub fn parse_line(text: &str, line: usize) -> Result<Txn, ParseError> {
    let fields: Vec<&str> = text.split('|').map(str::trim).collect();
    if fields.len() != 4 {
        return Err(ParseError::FieldCount { line, found: fields.len() });
    }
    if fields.iter().any(|f| f.is_empty()) {
        return Err(ParseError::EmptyField { line });
    }
    let date = Date::parse(fields[0]).ok_or_else(|| ParseError::BadDate {
        line,
        text: fields[0].to_string(),
    })?;
    let amount_cents = parse_cents(fields[3]).ok_or_else(|| ParseError::BadAmount {
        line,
        text: fields[3].to_string(),
    })?;
    Ok(Txn {
        date,
        category: fields[1].to_lowercase(),
        payee: fields[2].to_string(),
        amount_cents,
    })
}

/// Parses a whole ledger file, skipping blank lines and `#` comments.
pub fn parse_ledger(text: &str) -> Result<Vec<Txn>, ParseError> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
        .map(|(i, l)| parse_line(l, i + 1))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_an_entry() {
        let t: Txn = parse_line("2024-03-02 | Groceries | Fresh Market | -42.17", 1).unwrap();
        assert_eq!(t.category, "groceries");
        assert_eq!(t.payee, "Fresh Market");
        assert_eq!(t.amount_cents, -4217);
        assert!(t.is_expense());
        assert_eq!(t.to_string(), "2024-03-02 | groceries | Fresh Market | -42.17");
    }

    #[test]
    fn reports_line_numbers() {
        let text = "# header\n2024-03-01 | salary | Acme | 3200\n\n2024-03-02 | food | x\n";
        assert_eq!(parse_ledger(text), Err(ParseError::FieldCount { line: 4, found: 3 }));
        assert!(matches!(
            parse_line("2024-02-30 | a | b | 1", 7),
            Err(ParseError::BadDate { line: 7, .. })
        ));
    }
}
