//! What a transcript keeps of a file tandem changed ([`Snapshot`]): the whole text, or only
//! its hash when the text holds a secret (a transcript line is redacted, and a redacted text
//! written back would break the file) or is too large to keep.

use sha2::{Digest, Sha256};

use super::record::Snapshot;

/// Largest text a transcript keeps whole; a larger one is kept as its hash.
pub(crate) const MAX_KEPT_BYTES: usize = 4 * 1024 * 1024;

impl Snapshot {
    /// How a transcript keeps `text` (`None`: no file).
    pub(crate) fn of(text: Option<&str>) -> Snapshot {
        let Some(text) = text else {
            return Snapshot::Missing;
        };
        let withheld = |why: &str| Snapshot::Withheld {
            sha256: sha256(text),
            why: why.to_string(),
        };
        if text.len() > MAX_KEPT_BYTES {
            return withheld("larger than the 4 MiB a transcript keeps of a file");
        }
        // Checked as the transcript line will hold it: JSON-escaped, then redacted.
        let escaped = serde_json::to_string(text).unwrap_or_default();
        if matches!(crate::secrets::redact(&escaped), std::borrow::Cow::Owned(_)) {
            return withheld("it holds a key or token, which transcripts never keep");
        }
        Snapshot::Text(text.to_string())
    }

    /// Only the hash of `text` (`None`: no file): what a change's intent keeps of the text it
    /// will write, so the record that must reach the disk before the file is touched carries
    /// one text, not two (the outcome keeps it whole).
    pub(crate) fn digest(text: Option<&str>) -> Snapshot {
        match text {
            None => Snapshot::Missing,
            Some(text) => Snapshot::Withheld {
                sha256: sha256(text),
                why: "the intent keeps only its hash; the outcome keeps it whole".to_string(),
            },
        }
    }

    /// Whether `text` (`None`: no file) is what this snapshot was taken of.
    pub(crate) fn matches(&self, text: Option<&str>) -> bool {
        match (self, text) {
            (Snapshot::Missing, None) => true,
            (Snapshot::Text(kept), Some(text)) => same_text(kept, text),
            (Snapshot::Withheld { sha256: kept, .. }, Some(text)) => {
                *kept == sha256(text) || *kept == sha256(&without_bom(text))
            }
            _ => false,
        }
    }

    /// The whole text, when kept (`Ok(None)`: no file); why not otherwise.
    pub(crate) fn text(&self) -> Result<Option<&str>, &str> {
        match self {
            Snapshot::Missing => Ok(None),
            Snapshot::Text(text) => Ok(Some(text)),
            Snapshot::Withheld { why, .. } => Err(why),
        }
    }
}

/// Texts that differ at most by a leading byte order mark (an editor may hand a file's text
/// over without it) are the same file.
fn same_text(a: &str, b: &str) -> bool {
    a == b || a.strip_prefix('\u{FEFF}').unwrap_or(a) == b.strip_prefix('\u{FEFF}').unwrap_or(b)
}

fn without_bom(text: &str) -> String {
    match text.strip_prefix('\u{FEFF}') {
        Some(rest) => rest.to_string(),
        None => format!("\u{FEFF}{text}"),
    }
}

fn sha256(text: &str) -> String {
    Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn texts_are_kept_unless_they_hold_a_secret_or_are_too_large() {
        assert_eq!(Snapshot::of(None), Snapshot::Missing);
        assert_eq!(Snapshot::of(Some("a\r\n")), Snapshot::Text("a\r\n".into()));
        let big = "x".repeat(MAX_KEPT_BYTES + 1);
        let kept = Snapshot::of(Some(&big));
        assert!(matches!(kept, Snapshot::Withheld { .. }));
        assert!(kept.matches(Some(&big)));
        assert!(!kept.matches(Some("x")));
        assert!(kept.text().is_err());
        let bearer = "curl -H 'Authorization: Bearer abcdefghijklmnop1234' x\n";
        assert!(matches!(
            Snapshot::of(Some(bearer)),
            Snapshot::Withheld { .. }
        ));
    }

    #[test]
    fn a_leading_byte_order_mark_does_not_make_a_file_different() {
        let kept = Snapshot::of(Some("\u{FEFF}a\n"));
        assert!(kept.matches(Some("a\n")));
        assert!(!kept.matches(Some("b\n")));
        assert!(!kept.matches(None));
        assert!(Snapshot::Missing.matches(None));
    }
}
