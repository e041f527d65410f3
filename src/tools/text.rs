//! Bounds on what tools return, so one call cannot flood the model's context or the editor.

/// Lines `read_file` returns when the model gives no limit.
pub const DEFAULT_READ_LINES: usize = 2000;
/// Longest line kept whole.
pub const MAX_LINE_CHARS: usize = 2000;
/// Most bytes any tool result carries to the model.
pub const MAX_RESULT_BYTES: usize = 100 * 1024;
/// Most bytes of command output kept (head and tail).
pub const MAX_COMMAND_BYTES: usize = 30 * 1024;

/// Whether bytes look binary (a NUL in the first 8 KiB, as git decides).
pub fn is_binary(bytes: &[u8]) -> bool {
    bytes.iter().take(8192).any(|b| *b == 0)
}

/// Lines `offset..offset+limit` (1-based) of `text`, each cut at [`MAX_LINE_CHARS`], the whole
/// cut at [`MAX_RESULT_BYTES`], with a note saying what was left out and how to get it.
pub fn window(text: &str, offset: Option<usize>, limit: Option<usize>) -> String {
    let total = text.lines().count();
    let start = offset.unwrap_or(1).max(1);
    let limit = limit.unwrap_or(DEFAULT_READ_LINES).max(1);
    let mut out = String::new();
    let mut shown = 0;
    let mut cut_lines = false;
    for line in text.lines().skip(start - 1).take(limit) {
        if out.len() + line.len() > MAX_RESULT_BYTES {
            break;
        }
        if line.chars().count() > MAX_LINE_CHARS {
            out.extend(line.chars().take(MAX_LINE_CHARS));
            out.push_str(" […]");
            cut_lines = true;
        } else {
            out.push_str(line);
        }
        out.push('\n');
        shown += 1;
    }
    if total == 0 {
        return "[empty file]".to_string();
    }
    if start > total {
        return format!("[offset {start} is past the end: the file has {total} lines]");
    }
    let end = start + shown - 1;
    if start > 1 || end < total {
        out.push_str(&format!(
            "[showing lines {start}-{end} of {total}; read more with offset={}]\n",
            end + 1
        ));
    }
    if cut_lines {
        out.push_str(&format!(
            "[lines longer than {MAX_LINE_CHARS} characters were cut]\n"
        ));
    }
    out
}

/// `text` cut at `max` bytes (on a character boundary) with a note.
pub fn cap(text: &str, max: usize) -> String {
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

    #[test]
    fn window_notes_what_is_missing() {
        let text: String = (1..=10).map(|i| format!("l{i}\n")).collect();
        assert_eq!(window(&text, None, None), text);
        let part = window(&text, Some(3), Some(2));
        assert!(part.starts_with("l3\nl4\n[showing lines 3-4 of 10; read more with offset=5]"));
        assert!(window(&text, Some(20), None).contains("past the end"));
        assert_eq!(window("", None, None), "[empty file]");
        let long = "x".repeat(MAX_LINE_CHARS + 5);
        assert!(window(&long, None, None).contains("were cut"));
    }

    #[test]
    fn binary_and_cap() {
        assert!(is_binary(b"ab\0cd"));
        assert!(!is_binary("héllo".as_bytes()));
        assert!(cap(&"é".repeat(100), 11).contains("output cut at 11 bytes"));
    }
}
