//! Turns Pebble source text into tokens.

use std::fmt;

use crate::keywords;

/// One token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Token {
    /// A reserved word (see `keywords.txt`).
    Keyword(&'static str),
    Ident(String),
    Int(i64),
    /// A string literal, escapes resolved.
    Str(String),
    /// An operator or punctuation mark: `(`, `==`, `->`, ...
    Punct(&'static str),
}

/// Why lexing stopped; `line` is 1-based.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LexError {
    UnexpectedChar { line: usize, ch: char },
    UnterminatedString { line: usize },
    BadEscape { line: usize, ch: char },
    IntTooLarge { line: usize },
}

impl fmt::Display for LexError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LexError::UnexpectedChar { line, ch } => write!(f, "line {line}: unexpected {ch:?}"),
            LexError::UnterminatedString { line } => write!(f, "line {line}: unterminated string"),
            LexError::BadEscape { line, ch } => write!(f, "line {line}: bad escape \\{ch}"),
            LexError::IntTooLarge { line } => write!(f, "line {line}: integer too large"),
        }
    }
}

impl std::error::Error for LexError {}

const TWO_CHAR: [&str; 6] = ["==", "!=", "<=", ">=", "->", "::"];
const ONE_CHAR: [&str; 18] = [
    "(", ")", "{", "}", "[", "]", ",", ".", ";", ":", "+", "-", "*", "/", "=", "<", ">", "!",
];

/// Splits `src` into tokens, skipping whitespace and `//` comments.
pub fn tokenize(src: &str) -> Result<Vec<Token>, LexError> {
    let chars: Vec<char> = src.chars().collect();
    let mut tokens = Vec::new();
    let mut line = 1;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '\n' {
            line += 1;
            i += 1;
        } else if c.is_whitespace() {
            i += 1;
        } else if c == '/' && chars.get(i + 1) == Some(&'/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c.is_ascii_alphabetic() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            let word: String = chars[start..i].iter().collect();
            tokens.push(match keywords::keyword(&word) {
                Some(k) => Token::Keyword(k),
                None => Token::Ident(word),
            });
        } else if c.is_ascii_digit() {
            let start = i;
            while i < chars.len() && chars[i].is_ascii_digit() {
                i += 1;
            }
            let digits: String = chars[start..i].iter().collect();
            let n = digits.parse().map_err(|_| LexError::IntTooLarge { line })?;
            tokens.push(Token::Int(n));
        } else if c == '"' {
            let start_line = line;
            let mut s = String::new();
            i += 1;
            loop {
                match chars.get(i) {
                    None => return Err(LexError::UnterminatedString { line: start_line }),
                    Some('"') => {
                        i += 1;
                        break;
                    }
                    Some('\\') => {
                        let esc = *chars.get(i + 1).ok_or(LexError::UnterminatedString { line: start_line })?;
                        s.push(match esc {
                            'n' => '\n',
                            't' => '\t',
                            '"' => '"',
                            '\\' => '\\',
                            other => return Err(LexError::BadEscape { line, ch: other }),
                        });
                        i += 2;
                    }
                    Some(&ch) => {
                        if ch == '\n' {
                            line += 1;
                        }
                        s.push(ch);
                        i += 1;
                    }
                }
            }
            tokens.push(Token::Str(s));
        } else {
            let two: String = chars[i..chars.len().min(i + 2)].iter().collect();
            if let Some(p) = TWO_CHAR.iter().find(|p| **p == two) {
                tokens.push(Token::Punct(p));
                i += 2;
            } else if let Some(p) = ONE_CHAR.iter().find(|p| p.starts_with(c)) {
                tokens.push(Token::Punct(p));
                i += 1;
            } else {
                return Err(LexError::UnexpectedChar { line, ch: c });
            }
        }
    }
    Ok(tokens)
}
