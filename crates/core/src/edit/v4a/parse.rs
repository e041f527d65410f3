//! Reading a V4A patch:
//!
//! ```text
//! *** Begin Patch
//! *** Add File: path          then the new file's lines, each after "+"
//! *** Delete File: path
//! *** Update File: path
//! *** Move to: new/path       (optional, right after Update File)
//! @@ class Anchor             (optional lines to find first, in order)
//!  context line               " " unchanged, "-" removed, "+" added
//! *** End of File             (optional: the hunk ends at the file's end)
//! *** End Patch
//! ```

/// A whole patch: its operations in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Patch {
    /// One per file.
    pub(crate) ops: Vec<FileOp>,
}

/// What a patch does to one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum FileOp {
    /// Creates the file (or replaces it whole).
    Add {
        /// As the patch names it.
        path: String,
        /// The whole content.
        content: String,
    },
    /// Removes the file.
    Delete {
        /// As the patch names it.
        path: String,
    },
    /// Changes the file, and maybe moves it.
    Update {
        /// As the patch names it.
        path: String,
        /// Where it moves to.
        move_to: Option<String>,
        /// The changes, in file order.
        hunks: Vec<Hunk>,
    },
}

impl FileOp {
    /// The file it works on.
    pub(crate) fn path(&self) -> &str {
        match self {
            FileOp::Add { path, .. } | FileOp::Delete { path } | FileOp::Update { path, .. } => {
                path
            }
        }
    }
}

/// One change in a file.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Hunk {
    /// Lines to find first, in order (`@@ fn name`), each after the last.
    pub(crate) anchors: Vec<String>,
    /// Context and removed lines: what the file has.
    pub(crate) old: Vec<String>,
    /// Context and added lines: what it gets.
    pub(crate) new: Vec<String>,
    /// Whether the hunk ends at the end of the file.
    pub(crate) at_end: bool,
    /// The patch line the hunk starts on.
    pub(crate) line: usize,
}

/// Why a patch cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the patch is not valid V4A at line {line}: {message}")]
pub(crate) struct ParseError {
    /// 1-based line of the patch.
    pub(crate) line: usize,
    /// What is wrong there.
    pub(crate) message: String,
}

const BEGIN: &str = "*** Begin Patch";
const END: &str = "*** End Patch";
const ADD: &str = "*** Add File:";
const DELETE: &str = "*** Delete File:";
const UPDATE: &str = "*** Update File:";
const MOVE: &str = "*** Move to:";
const END_OF_FILE: &str = "*** End of File";

/// Reads `input`, tolerating what models wrap a patch in: blank lines, a Markdown fence, a
/// shell heredoc (`apply_patch <<'EOF'` … `EOF`).
pub(crate) fn parse(input: &str) -> Result<Patch, ParseError> {
    let all: Vec<&str> = input
        .split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .collect();
    // A fence around a heredoc: two wrappers.
    let (outer, inner) = unwrap(&all);
    let (second, lines) = unwrap(inner);
    let first = outer + second;
    let error = |i: usize, message: String| ParseError {
        line: first + i + 1,
        message,
    };
    match lines.first() {
        Some(l) if l.trim() == BEGIN => {}
        _ => return Err(error(0, format!("a patch starts with `{BEGIN}`"))),
    }
    let end = match lines.iter().rposition(|l| l.trim() == END) {
        Some(end) if end > 0 => end,
        _ => {
            return Err(error(
                lines.len().saturating_sub(1),
                format!("a patch ends with `{END}` (was it cut short?); nothing was changed"),
            ));
        }
    };
    if let Some(extra) = lines[end + 1..].iter().position(|l| !l.trim().is_empty()) {
        return Err(error(end + 1 + extra, format!("text after `{END}`")));
    }
    let mut ops = Vec::new();
    let mut i = 1;
    while i < end {
        let line = lines[i];
        if line.trim().is_empty() {
            i += 1;
            continue;
        }
        if let Some(path) = header(line, ADD) {
            let path = path.map_err(|m| error(i, m))?;
            let (content, next) = added(lines, i + 1, end).map_err(|(at, m)| error(at, m))?;
            ops.push(FileOp::Add { path, content });
            i = next;
        } else if let Some(path) = header(line, DELETE) {
            ops.push(FileOp::Delete {
                path: path.map_err(|m| error(i, m))?,
            });
            i += 1;
        } else if let Some(path) = header(line, UPDATE) {
            let path = path.map_err(|m| error(i, m))?;
            let (op, next) = update(lines, i + 1, end, path).map_err(|(at, m)| error(at, m))?;
            ops.push(op.shifted(first));
            i = next;
        } else {
            return Err(error(
                i,
                format!(
                    "expected `{ADD}`, `{DELETE}`, `{UPDATE}` or `{END}`, found `{}`",
                    line.trim_end()
                ),
            ));
        }
    }
    if ops.is_empty() {
        return Err(error(end, "the patch changes no file".into()));
    }
    Ok(Patch { ops })
}

/// An added file's content, from line `i` to the next header; and the line after it.
fn added(lines: &[&str], mut i: usize, end: usize) -> Result<(String, usize), (usize, String)> {
    let mut content = String::new();
    // Blank lines without `+` count only when an added line follows them.
    let mut loose = 0;
    while i < end && (!lines[i].starts_with("*** ") || lines[i].trim() == END_OF_FILE) {
        if lines[i].trim() == END_OF_FILE {
            i += 1;
            continue;
        }
        match lines[i].strip_prefix('+') {
            Some(text) => {
                content.push_str(&"\n".repeat(loose));
                loose = 0;
                content.push_str(text);
                content.push('\n');
            }
            None if lines[i].trim().is_empty() => loose += 1,
            None => {
                return Err((
                    i,
                    format!("each line of an added file starts with `+`: `{}`", lines[i]),
                ));
            }
        }
        i += 1;
    }
    Ok((content, i))
}

/// The update of `path` whose body starts at line `i` (a move, then hunks); and the line
/// after it.
fn update(
    lines: &[&str],
    mut i: usize,
    end: usize,
    path: String,
) -> Result<(FileOp, usize), (usize, String)> {
    let mut move_to = None;
    if let Some(to) = lines.get(i).and_then(|l| header(l, MOVE)) {
        move_to = Some(to.map_err(|m| (i, m))?);
        i += 1;
    }
    let (hunks, next) = hunks(lines, i, end)?;
    if hunks.is_empty() && move_to.is_none() {
        return Err((next.min(end), format!("`{UPDATE} {path}` has no changes")));
    }
    if let Some(empty) = hunks.iter().find(|h| h.old.is_empty() && h.new.is_empty()) {
        return Err((empty.line - 1, "a hunk with no lines".into()));
    }
    let op = FileOp::Update {
        path,
        move_to,
        hunks,
    };
    Ok((op, next))
}

impl FileOp {
    /// The op with its hunks' line numbers moved down by `lines` (a wrapper stripped before).
    fn shifted(mut self, lines: usize) -> Self {
        if let FileOp::Update { hunks, .. } = &mut self {
            for hunk in hunks {
                hunk.line += lines;
            }
        }
        self
    }
}

/// The lines between any wrapping (fence, heredoc, blank lines), and how many came before.
fn unwrap<'a>(all: &'a [&'a str]) -> (usize, &'a [&'a str]) {
    let mut from = all.iter().position(|l| !l.trim().is_empty()).unwrap_or(0);
    let mut to = all
        .iter()
        .rposition(|l| !l.trim().is_empty())
        .map_or(from, |i| i + 1);
    let opener = all.get(from).map(|l| l.trim()).unwrap_or_default();
    if opener.starts_with("```") && to > from + 1 && all[to - 1].trim() == "```" {
        from += 1;
        to -= 1;
    } else if let Some(marker) = opener.split("<<").nth(1) {
        let marker = marker.trim().trim_matches(['\'', '"']);
        if !marker.is_empty() && to > from + 1 && all[to - 1].trim() == marker {
            from += 1;
            to -= 1;
        }
    } else if opener == "apply_patch" {
        from += 1;
    }
    (from, &all[from..to])
}

/// The path after `prefix` on `line`, if the line is that header.
fn header(line: &str, prefix: &str) -> Option<Result<String, String>> {
    let rest = line.trim_end().strip_prefix(prefix)?;
    let path = rest.trim();
    Some(if path.is_empty() {
        Err(format!("`{prefix}` names no file"))
    } else {
        Ok(path.to_string())
    })
}

/// An update's hunks from line `i`, and the line after them.
fn hunks(lines: &[&str], mut i: usize, end: usize) -> Result<(Vec<Hunk>, usize), (usize, String)> {
    let mut hunks: Vec<Hunk> = Vec::new();
    let mut current: Option<Hunk> = None;
    // Trailing blank lines that had no prefix: dropped if the hunk ends after them.
    let mut loose = 0;
    let close = |hunk: Option<Hunk>, loose: &mut usize, hunks: &mut Vec<Hunk>| {
        if let Some(mut hunk) = hunk {
            for _ in 0..*loose {
                hunk.old.pop();
                hunk.new.pop();
            }
            hunks.push(hunk);
        }
        *loose = 0;
    };
    while i < end {
        let line = lines[i];
        if line.starts_with("*** ") && line.trim() != END_OF_FILE {
            break;
        }
        if let Some(rest) = line.strip_prefix("@@") {
            let anchor = anchor_of(rest);
            match &mut current {
                // `@@ class A` then `@@ def f`: both lead to the same hunk.
                Some(h) if h.old.is_empty() && h.new.is_empty() => h.anchors.extend(anchor),
                _ => {
                    close(current.take(), &mut loose, &mut hunks);
                    current = Some(Hunk {
                        anchors: anchor.into_iter().collect(),
                        line: i + 1,
                        ..Hunk::default()
                    });
                }
            }
            i += 1;
            continue;
        }
        if line.trim().is_empty() && current.is_none() {
            // Blank lines between sections belong to no hunk.
            i += 1;
            continue;
        }
        let hunk = current.get_or_insert_with(|| Hunk {
            line: i + 1,
            ..Hunk::default()
        });
        if line.trim() == END_OF_FILE {
            hunk.at_end = true;
            close(current.take(), &mut loose, &mut hunks);
            i += 1;
            continue;
        }
        take_line(hunk, line, &mut loose).map_err(|m| (i, m))?;
        i += 1;
    }
    close(current, &mut loose, &mut hunks);
    Ok((hunks, i))
}

/// Adds one body line of a hunk to `hunk` (`loose` counts blank lines that lost their
/// leading space, dropped if the hunk ends after them).
fn take_line(hunk: &mut Hunk, line: &str, loose: &mut usize) -> Result<(), String> {
    match line.chars().next() {
        Some(' ') => {
            *loose = 0;
            hunk.old.push(line[1..].to_string());
            hunk.new.push(line[1..].to_string());
        }
        Some('-') => {
            *loose = 0;
            hunk.old.push(line[1..].to_string());
        }
        Some('+') => {
            *loose = 0;
            hunk.new.push(line[1..].to_string());
        }
        // A blank context line whose leading space was lost.
        _ if line.trim().is_empty() => {
            *loose += 1;
            hunk.old.push(String::new());
            hunk.new.push(String::new());
        }
        _ => {
            return Err(format!(
                "each line of a hunk starts with ` ` (context), `-` (removed), `+` (added) or `@@`: `{line}`"
            ));
        }
    }
    Ok(())
}

/// The line an `@@` header names, if any (a unified diff's `-1,3 +1,4 @@` names none).
fn anchor_of(rest: &str) -> Option<String> {
    let text = rest.trim();
    // `@@ -5,3 +5,3 @@ def summary(rows):`: git names the section after the numbers.
    if text.starts_with('-')
        && let Some((numbers, section)) = text.split_once("@@")
        && numbers
            .chars()
            .all(|c| c.is_ascii_digit() || matches!(c, '-' | '+' | ',' | ' '))
    {
        let section = section.trim();
        return (!section.is_empty()).then(|| section.to_string());
    }
    let text = text.strip_suffix("@@").unwrap_or(text).trim();
    let numeric = text.starts_with('-')
        && text
            .chars()
            .all(|c| c.is_ascii_digit() || matches!(c, '-' | '+' | ',' | ' '));
    (!text.is_empty() && !numeric).then(|| text.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_operation_is_read() {
        let patch = parse(
            "*** Begin Patch\n*** Add File: a.txt\n+one\n+two\n*** Delete File: b.txt\n\
             *** Update File: c.py\n*** Move to: d.py\n@@ class A:\n@@     def f(self):\n \
             x = 1\n-y = 2\n+y = 3\n*** End of File\n*** End Patch\n",
        )
        .unwrap();
        assert_eq!(patch.ops.len(), 3);
        assert_eq!(
            patch.ops[0],
            FileOp::Add {
                path: "a.txt".into(),
                content: "one\ntwo\n".into()
            }
        );
        let FileOp::Update { move_to, hunks, .. } = &patch.ops[2] else {
            panic!("{:?}", patch.ops[2]);
        };
        assert_eq!(move_to.as_deref(), Some("d.py"));
        assert_eq!(hunks[0].anchors, ["class A:", "def f(self):"]);
        assert_eq!(hunks[0].old, ["x = 1", "y = 2"]);
        assert_eq!(hunks[0].new, ["x = 1", "y = 3"]);
        assert!(hunks[0].at_end);
    }

    #[test]
    fn wrappers_are_tolerated_and_cut_patches_refused() {
        let body = "*** Begin Patch\n*** Delete File: x\n*** End Patch";
        assert!(parse(&format!("```\n{body}\n```\n")).is_ok());
        assert!(parse(&format!("apply_patch <<'EOF'\n{body}\nEOF\n")).is_ok());
        let cut = parse("*** Begin Patch\n*** Update File: x\n@@\n-a\n+b\n").unwrap_err();
        assert!(cut.message.contains("cut short"), "{cut}");
        let bad = parse("*** Begin Patch\n*** Update File: x\n?a\n*** End Patch").unwrap_err();
        assert_eq!(bad.line, 3);
        assert!(parse("*** Begin Patch\n*** End Patch").is_err());
    }

    #[test]
    fn unified_diff_headers_name_no_anchor() {
        assert_eq!(anchor_of(" -12,7 +12,8 @@"), None);
        assert_eq!(anchor_of(" fn main() @@"), Some("fn main()".into()));
    }
}
