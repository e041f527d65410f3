//! A text as lines that keep their own line ends, and a model's text as plain lines.

/// One line of a file: its text and the line end after it (`"\n"`, `"\r\n"`, or `""` for a
/// last line without one).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Line<'a> {
    /// The text, without its line end.
    pub(crate) text: &'a str,
    /// The line end.
    pub(crate) end: &'a str,
    /// Byte offset of the line's start in the whole text.
    pub(crate) start: usize,
}

/// The lines of `text`; an empty text has none, and a final line end adds no empty line.
pub(crate) fn split(text: &str) -> Vec<Line<'_>> {
    let mut lines = Vec::new();
    let mut start = 0;
    for piece in text.split_inclusive('\n') {
        let (body, end) = match piece.strip_suffix("\r\n") {
            Some(body) => (body, "\r\n"),
            None => match piece.strip_suffix('\n') {
                Some(body) => (body, "\n"),
                None => (piece, ""),
            },
        };
        lines.push(Line {
            text: body,
            end,
            start,
        });
        start += piece.len();
    }
    lines
}

/// The lines of a model's text: split at `\n`, each without a trailing `\r`; a final `\n`
/// adds no empty line.
pub(crate) fn of_model(text: &str) -> Vec<&str> {
    let body = text.strip_suffix('\n').unwrap_or(text);
    if body.is_empty() && !text.is_empty() {
        return vec![""];
    }
    if text.is_empty() {
        return Vec::new();
    }
    body.split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .collect()
}

/// The 1-based line number of byte `offset` in `text`.
pub(crate) fn number_at(text: &str, offset: usize) -> usize {
    text.as_bytes()[..offset.min(text.len())]
        .iter()
        .filter(|b| **b == b'\n')
        .count()
        + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_keep_their_ends() {
        let lines = split("a\r\nb\nc");
        let parts: Vec<_> = lines.iter().map(|l| (l.text, l.end, l.start)).collect();
        assert_eq!(parts, [("a", "\r\n", 0), ("b", "\n", 3), ("c", "", 5)]);
        assert!(split("").is_empty());
        assert_eq!(split("x\n").len(), 1);
    }

    #[test]
    fn model_lines_drop_carriage_returns_and_the_final_break() {
        assert_eq!(of_model("a\r\nb\n"), ["a", "b"]);
        assert_eq!(of_model("a\n\nb"), ["a", "", "b"]);
        assert_eq!(of_model("\n"), [""]);
        assert!(of_model("").is_empty());
        assert_eq!(number_at("a\nb\nc", 4), 3);
    }
}
