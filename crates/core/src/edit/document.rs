//! A file's text and the conventions an edit keeps: a UTF-8 byte order mark, its line ends.
//! Files in other encodings are refused rather than rewritten.

/// The byte order mark, as the character a decoded text starts with.
const BOM: char = '\u{FEFF}';

/// How a text ends its lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Eol {
    /// Every line ends with `\n` (or the text has one line).
    Lf,
    /// Every line ends with `\r\n`.
    Crlf,
    /// Some of each.
    Mixed,
}

impl Eol {
    /// How `text` ends its lines.
    pub(crate) fn of(text: &str) -> Eol {
        let all = text.matches('\n').count();
        let crlf = text.matches("\r\n").count();
        match (all, crlf) {
            (_, 0) => Eol::Lf,
            (a, c) if a == c => Eol::Crlf,
            _ => Eol::Mixed,
        }
    }

    /// The line end new lines get: `\r\n` for a CRLF text, `\n` otherwise.
    pub(crate) fn ending(self) -> &'static str {
        match self {
            Eol::Crlf => "\r\n",
            Eol::Lf | Eol::Mixed => "\n",
        }
    }
}

/// Why a file's bytes are not text tandem edits.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum EncodingError {
    /// UTF-16 (it has a UTF-16 byte order mark).
    #[error(
        "is UTF-16 text; tandem edits only UTF-8 files (with or without a byte order mark), so it was left as it is"
    )]
    Utf16,
    /// Not valid UTF-8.
    #[error(
        "is not UTF-8 (byte 0x{byte:02X} on line {line} is not valid UTF-8; the file is probably Latin-1 or Windows-1252); tandem edits only UTF-8 files, so it was left as it is"
    )]
    NotUtf8 {
        /// The first byte that is not valid UTF-8.
        byte: u8,
        /// Its 1-based line.
        line: usize,
    },
}

/// A file's text without its byte order mark, and whether it had one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Document {
    /// Whether the file starts with a UTF-8 byte order mark.
    pub(crate) bom: bool,
    /// The text after it.
    pub(crate) text: String,
}

impl Document {
    /// The document of a decoded text (as an editor returns it).
    pub(crate) fn from_text(raw: String) -> Document {
        match raw.strip_prefix(BOM) {
            Some(rest) => Document {
                bom: true,
                text: rest.to_string(),
            },
            None => Document {
                bom: false,
                text: raw,
            },
        }
    }

    /// The document of a file's bytes, refusing anything that is not UTF-8.
    pub(crate) fn from_bytes(bytes: Vec<u8>) -> Result<Document, EncodingError> {
        if bytes.starts_with(&[0xFF, 0xFE]) || bytes.starts_with(&[0xFE, 0xFF]) {
            return Err(EncodingError::Utf16);
        }
        match String::from_utf8(bytes) {
            Ok(text) => Ok(Document::from_text(text)),
            Err(e) => {
                let at = e.utf8_error().valid_up_to();
                let bytes = e.as_bytes();
                let line = bytes[..at].iter().filter(|b| **b == b'\n').count() + 1;
                Err(EncodingError::NotUtf8 {
                    byte: bytes.get(at).copied().unwrap_or(0),
                    line,
                })
            }
        }
    }

    /// How the text ends its lines.
    pub(crate) fn eol(&self) -> Eol {
        Eol::of(&self.text)
    }

    /// The whole file for `body`: the byte order mark again if the file had one.
    pub(crate) fn render(&self, body: &str) -> String {
        if self.bom {
            format!("{BOM}{body}")
        } else {
            body.to_string()
        }
    }

    /// A whole new content for this file in its conventions: a model writes `\n`, so a CRLF
    /// file keeps CRLF, and a file with a byte order mark keeps it.
    pub(crate) fn adopt(&self, content: &str) -> String {
        let content = content.strip_prefix(BOM).unwrap_or(content);
        let body = if self.eol() == Eol::Crlf && !content.contains('\r') {
            content.replace('\n', "\r\n")
        } else {
            content.to_string()
        };
        self.render(&body)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bom_is_kept_aside_and_put_back() {
        let doc = Document::from_text("\u{FEFF}a\n".into());
        assert!(doc.bom);
        assert_eq!(doc.text, "a\n");
        assert_eq!(doc.render("b\n"), "\u{FEFF}b\n");
        assert_eq!(doc.adopt("\u{FEFF}c\n"), "\u{FEFF}c\n");
    }

    #[test]
    fn other_encodings_are_refused() {
        assert_eq!(
            Document::from_bytes(vec![0xFF, 0xFE, b'a', 0]),
            Err(EncodingError::Utf16)
        );
        let latin1 = b"ok\ncaf\xE9\n".to_vec();
        let err = Document::from_bytes(latin1).unwrap_err();
        assert_eq!(
            err,
            EncodingError::NotUtf8 {
                byte: 0xE9,
                line: 2
            }
        );
        assert!(err.to_string().contains("line 2"));
        let bom = Document::from_bytes(b"\xEF\xBB\xBFx".to_vec()).unwrap();
        assert!(bom.bom && bom.text == "x");
    }

    #[test]
    fn line_ends_are_detected_and_adopted() {
        assert_eq!(Eol::of("a\r\nb\r\n"), Eol::Crlf);
        assert_eq!(Eol::of("a\nb\r\n"), Eol::Mixed);
        assert_eq!(Eol::of("a"), Eol::Lf);
        let crlf = Document::from_text("a\r\n".into());
        assert_eq!(crlf.adopt("x\ny\n"), "x\r\ny\r\n");
        assert_eq!(Document::from_text("a\n".into()).adopt("x\r\n"), "x\r\n");
    }
}
