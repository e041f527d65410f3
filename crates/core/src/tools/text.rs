//! Bounds on what tools return, so one call cannot flood the model's context or the editor.

/// Lines `read_file` returns when the model gives no limit.
pub(crate) const DEFAULT_READ_LINES: usize = 2000;
/// Longest line kept whole.
pub(crate) const MAX_LINE_CHARS: usize = 2000;
/// Most bytes any tool result carries to the model.
pub(crate) const MAX_RESULT_BYTES: usize = 100 * 1024;
/// Most bytes of command output kept (head and tail).
pub(crate) const MAX_COMMAND_BYTES: usize = 30 * 1024;

/// Whether bytes look binary (a NUL in the first 8 KiB, as git decides).
pub(crate) fn is_binary(bytes: &[u8]) -> bool {
    bytes.iter().take(8192).any(|b| *b == 0)
}

/// Which part of a text file `read_file` shows: lines from `offset` (1-based), at most
/// `limit` of them, each from character `column` (1-based).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Window {
    /// First line (default 1).
    pub(crate) offset: Option<usize>,
    /// Most lines (default [`DEFAULT_READ_LINES`]).
    pub(crate) limit: Option<usize>,
    /// First character of each line (default 1).
    pub(crate) column: Option<usize>,
}

/// The lines of `text` that `w` names, each cut at [`MAX_LINE_CHARS`] (then counted against
/// [`MAX_RESULT_BYTES`], so a window always shows at least one line and always advances),
/// with notes saying what was left out and how to get it: the next `offset`, and for a cut
/// line the `column` its rest starts at.
#[cfg(test)]
pub(crate) fn window(text: &str, w: Window) -> String {
    window_of(text, Some(text.lines().count()), w)
}

/// [`window`] over the start of a file: `text` holds its first lines, and `total` is its
/// line count, or `None` when more lines follow `text`.
pub(crate) fn window_of(text: &str, total: Option<usize>, w: Window) -> String {
    let start = w.offset.unwrap_or(1).max(1);
    let limit = w.limit.unwrap_or(DEFAULT_READ_LINES).max(1);
    let skip = w.column.unwrap_or(1).max(1) - 1;
    if total == Some(0) {
        return "[empty file]".to_string();
    }
    if let Some(total) = total.filter(|&t| start > t) {
        return format!("[offset {start} is past the end: the file has {total} lines]");
    }
    let mut out = String::new();
    let mut shown = 0;
    // Lines cut short: (line number, its length in characters).
    let mut cut: Vec<(usize, usize)> = Vec::new();
    for (i, line) in text.lines().enumerate().skip(start - 1).take(limit) {
        let rest: String = line.chars().skip(skip).take(MAX_LINE_CHARS + 1).collect();
        let piece = if rest.chars().count() > MAX_LINE_CHARS {
            cut.push((i + 1, line.chars().count()));
            let mut piece: String = rest.chars().take(MAX_LINE_CHARS).collect();
            piece.push_str(" […]");
            piece
        } else {
            rest
        };
        if shown > 0 && out.len() + piece.len() + 1 > MAX_RESULT_BYTES {
            break;
        }
        out.push_str(&piece);
        out.push('\n');
        shown += 1;
    }
    let end = start + shown - 1;
    match total {
        Some(total) if start > 1 || end < total => out.push_str(&format!(
            "[showing lines {start}-{end} of {total}; read more with offset={}]\n",
            end + 1
        )),
        Some(_) => {}
        None => out.push_str(&format!(
            "[showing lines {start}-{end}; more follow: read more with offset={}]\n",
            end + 1
        )),
    }
    if let Some(&(line, chars)) = cut.first() {
        let more = if cut.len() > 1 {
            format!(" (and {} more lines)", cut.len() - 1)
        } else {
            String::new()
        };
        out.push_str(&format!(
            "[line {line} has {chars} characters and was cut at {}{more}; read on with offset={line}, limit=1, column={}, or grep for what you need]\n",
            skip + MAX_LINE_CHARS,
            skip + MAX_LINE_CHARS + 1
        ));
    }
    out
}

/// `text` cut at `max` bytes (on a character boundary) with a note.
pub(crate) fn cap(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!(
        "{}\n[… output cut at {max} bytes of {} …]",
        &text[..end],
        text.len()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(text: &str, offset: Option<usize>, limit: Option<usize>) -> String {
        window(
            text,
            Window {
                offset,
                limit,
                column: None,
            },
        )
    }

    #[test]
    fn window_notes_what_is_missing() {
        let text: String = (1..=10).map(|i| format!("l{i}\n")).collect();
        assert_eq!(lines(&text, None, None), text);
        let part = lines(&text, Some(3), Some(2));
        assert!(part.starts_with("l3\nl4\n[showing lines 3-4 of 10; read more with offset=5]"));
        assert!(lines(&text, Some(20), None).contains("past the end"));
        assert_eq!(lines("", None, None), "[empty file]");
    }

    #[test]
    fn a_huge_line_is_cut_shown_and_can_be_read_on() {
        // One 3 MB line (minified code), then a second huge line.
        let one = "a".repeat(3_000_000);
        let two = "b".repeat(3_000_000);
        let text = format!("{one}\n{two}\nshort\n");
        let first = lines(&text, None, None);
        assert!(
            first.starts_with(&"a".repeat(MAX_LINE_CHARS)),
            "content, not an empty window"
        );
        assert!(first.len() < MAX_RESULT_BYTES);
        assert!(
            first.contains("line 1 has 3000000 characters and was cut at 2000 (and 1 more lines)"),
            "{}",
            &first[first.len() - 300..]
        );
        // Every line fits once cut, so the window reaches the end.
        assert!(!first.contains("read more with offset"));
        let second = lines(&text, Some(2), None);
        assert!(
            second.starts_with('b') && second.contains("short"),
            "offset=2 advances"
        );
        let on = window(
            &text,
            Window {
                offset: Some(1),
                limit: Some(1),
                column: Some(2001),
            },
        );
        assert!(on.starts_with(&"a".repeat(MAX_LINE_CHARS)));
        assert!(on.contains("column=4001"), "{}", &on[on.len() - 200..]);
    }

    #[test]
    fn a_window_always_shows_a_line_and_advances() {
        // 200 lines of 1,990 characters: the byte budget ends the window, never at zero.
        let text: String = (0..200)
            .map(|_| format!("{}\n", "x".repeat(1990)))
            .collect();
        let first = lines(&text, None, None);
        let next = first
            .rsplit("offset=")
            .next()
            .and_then(|s| {
                s.trim_end_matches(|c: char| !c.is_ascii_digit())
                    .parse::<usize>()
                    .ok()
            })
            .unwrap();
        assert!(next > 1 && next <= 200, "{next}");
        assert!(lines(&text, Some(next), None).starts_with('x'));
    }

    #[test]
    fn binary_and_cap() {
        assert!(is_binary(b"ab\0cd"));
        assert!(!is_binary("héllo".as_bytes()));
        assert!(cap(&"é".repeat(100), 11).contains("output cut at 11 bytes"));
    }
}
