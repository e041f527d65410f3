//! Indentation: how deep a line is, the shape of a block's indentation, and moving a model's
//! lines to the file's indentation (tabs stay tabs, a 2-space file stays 2-space).

use std::collections::BTreeMap;

/// Columns a tab counts for when a line's depth is measured.
const TAB: usize = 4;

/// The leading spaces and tabs of `line`.
pub(crate) fn of(line: &str) -> &str {
    let rest = line.trim_start_matches([' ', '\t']);
    &line[..line.len() - rest.len()]
}

/// How deep `line` is indented, in columns.
pub(crate) fn width(line: &str) -> usize {
    of(line)
        .chars()
        .map(|c| if c == '\t' { TAB } else { 1 })
        .sum()
}

/// Whether `line` holds only whitespace.
pub(crate) fn blank(line: &str) -> bool {
    line.trim().is_empty()
}

/// Each line's depth among the block's depths (0 for the shallowest), `None` for a blank
/// line: two blocks with the same shape have the same ranks, whatever their widths or tabs.
pub(crate) fn ranks<'a>(lines: impl IntoIterator<Item = &'a str>) -> Vec<Option<usize>> {
    let lines: Vec<&str> = lines.into_iter().collect();
    let mut widths: Vec<usize> = lines
        .iter()
        .filter(|l| !blank(l))
        .map(|l| width(l))
        .collect();
    widths.sort_unstable();
    widths.dedup();
    lines
        .iter()
        .map(|l| (!blank(l)).then(|| widths.binary_search(&width(l)).unwrap_or_default()))
        .collect()
}

/// The step between indentation levels among `widths`: the smallest positive difference.
fn step(widths: impl IntoIterator<Item = usize>) -> Option<usize> {
    let mut widths: Vec<usize> = widths.into_iter().collect();
    widths.sort_unstable();
    widths.dedup();
    widths.windows(2).map(|w| w[1] - w[0]).min()
}

/// The indentation one level adds in a whole file: a tab when most indented lines start
/// with one, else the most common step between neighbouring lines (4 spaces if none shows).
pub(crate) fn unit_of_file<'a>(lines: impl IntoIterator<Item = &'a str>) -> String {
    let mut tabs = 0usize;
    let mut spaces = 0usize;
    let mut steps: BTreeMap<usize, usize> = BTreeMap::new();
    let mut last: Option<usize> = None;
    for line in lines.into_iter().filter(|l| !blank(l)) {
        match of(line).chars().next() {
            Some('\t') => tabs += 1,
            Some(_) => spaces += 1,
            None => {}
        }
        let w = width(line);
        if let Some(prev) = last
            && w > prev
            && w - prev <= 8
        {
            *steps.entry(w - prev).or_default() += 1;
        }
        last = Some(w);
    }
    if tabs > spaces {
        return "\t".into();
    }
    let common = steps
        .iter()
        .max_by_key(|(step, count)| (**count, std::cmp::Reverse(**step)))
        .map_or(4, |(step, _)| *step);
    " ".repeat(common)
}

/// Moves a model's lines from the indentation it quoted (`needle`) to the one the file has
/// where they matched (`found`, line for line).
pub(crate) struct Reindent {
    /// A model width and the file's indentation for it.
    known: BTreeMap<usize, String>,
    /// The model's step between levels.
    model_step: usize,
    /// What one level adds in the file.
    file_unit: String,
}

impl Reindent {
    /// From the quoted lines, the file's lines they matched, the model's new lines (for its
    /// step) and the file's unit of indentation.
    pub(crate) fn new(needle: &[&str], found: &[&str], new: &[&str], file_unit: &str) -> Reindent {
        let mut known = BTreeMap::new();
        for (n, f) in needle.iter().zip(found) {
            if !blank(n) && !blank(f) {
                known.entry(width(n)).or_insert_with(|| of(f).to_string());
            }
        }
        let model_widths = needle
            .iter()
            .chain(new)
            .filter(|l| !blank(l))
            .map(|l| width(l));
        let block_unit = found.iter().filter(|l| !blank(l)).find_map(|l| {
            let indent = of(l);
            indent.starts_with('\t').then(|| "\t".to_string())
        });
        let file_unit = block_unit.unwrap_or_else(|| {
            match step(found.iter().filter(|l| !blank(l)).map(|l| width(l))) {
                Some(s) if !file_unit.starts_with('\t') => " ".repeat(s),
                _ => file_unit.to_string(),
            }
        });
        Reindent {
            known,
            model_step: step(model_widths).unwrap_or(TAB).max(1),
            file_unit,
        }
    }

    /// `line` at the file's indentation (a blank line is empty).
    pub(crate) fn line(&self, line: &str) -> String {
        if blank(line) {
            return String::new();
        }
        let w = width(line);
        let content = line.trim_start_matches([' ', '\t']);
        if let Some(indent) = self.known.get(&w) {
            return format!("{indent}{content}");
        }
        // The nearest known depth at or below this one (else the shallowest), then whole
        // levels from there.
        let base = self
            .known
            .range(..=w)
            .next_back()
            .or_else(|| self.known.iter().next());
        let Some((&base_width, base_indent)) = base else {
            return line.to_string();
        };
        let levels = (w as f64 - base_width as f64) / self.model_step as f64;
        let levels = levels.round() as i64;
        let mut indent = base_indent.clone();
        if levels >= 0 {
            for _ in 0..levels {
                indent.push_str(&self.file_unit);
            }
        } else {
            for _ in 0..levels.unsigned_abs() {
                match indent.strip_suffix(self.file_unit.as_str()) {
                    Some(rest) => indent = rest.to_string(),
                    None => indent.clear(),
                }
            }
        }
        format!("{indent}{content}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_compare_whatever_the_widths() {
        let tabs = ranks(["\tif x {", "\t\ty();", "", "\t}"]);
        let spaces = ranks(["if x {", "    y();", "", "}"]);
        assert_eq!(tabs, spaces);
        assert_ne!(ranks(["a", "b"]), ranks(["a", "  b"]));
    }

    #[test]
    fn new_lines_move_to_the_files_indentation() {
        // The model quoted a tab-indented block with no indentation and 4-space steps.
        let needle = ["fn a() {", "    b();", "}"];
        let found = ["\tfn a() {", "\t\tb();", "\t}"];
        let new = ["fn a() {", "    if c {", "        b();", "    }", "}"];
        let r = Reindent::new(&needle, &found, &new, "\t");
        let out: Vec<String> = new.iter().map(|l| r.line(l)).collect();
        assert_eq!(
            out,
            ["\tfn a() {", "\t\tif c {", "\t\t\tb();", "\t\t}", "\t}"]
        );
        assert_eq!(r.line("   "), "");
    }

    #[test]
    fn a_files_unit_is_found() {
        assert_eq!(unit_of_file(["a", "  b", "    c", "  d"]), "  ");
        assert_eq!(unit_of_file(["a", "\tb", "\t\tc"]), "\t");
        assert_eq!(unit_of_file(["a", "b"]), "    ");
    }
}
