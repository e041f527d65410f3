//! Words of a command as the shell will see them: quotes and backslashes removed where the
//! value is certain, the source text kept (and marked) where it is not.

use std::fmt;

use tree_sitter::Node;

/// One word of a simple command.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Word {
    /// The value after quote removal when `literal`; the source text otherwise.
    pub(crate) text: String,
    /// Whether the shell passes `text` as it is: no expansion, wildcard or tilde. A literal
    /// word never equals a non-literal one, so `'*.o'` and `*.o` are different words.
    pub(crate) literal: bool,
}

impl Word {
    /// A literal word.
    pub(crate) fn literal(text: impl Into<String>) -> Word {
        Word {
            text: text.into(),
            literal: true,
        }
    }
}

impl fmt::Display for Word {
    /// The word as a user would type it: literal words quoted where the shell needs it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Written bare, the text must read back as itself: `HEAD~1` and `stash@{0}` do.
        let plain = !self.text.is_empty()
            && unquoted(&self.text).as_deref() == Some(self.text.as_str())
            && self.text.chars().all(|c| {
                c.is_ascii_alphanumeric() || "-_./:=@+,%^~{}".contains(c) || !c.is_ascii()
            });
        if !self.literal || plain {
            f.write_str(&self.text)
        } else {
            write!(f, "'{}'", self.text.replace('\'', r"'\''"))
        }
    }
}

/// The word `node` stands for.
pub(crate) fn word(node: Node, src: &str) -> Word {
    // The grammar splits `{p1,p2}` into pieces that each read as plain text.
    let expands = super::dialects::brace_expansion(text(node, src));
    match value(node, src).filter(|_| !expands) {
        Some(text) => Word {
            text,
            literal: true,
        },
        None => Word {
            text: text(node, src).to_string(),
            literal: false,
        },
    }
}

/// The source text of `node`.
pub(crate) fn text<'a>(node: Node, src: &'a str) -> &'a str {
    src.get(node.byte_range()).unwrap_or("")
}

/// The value of a word whose value does not depend on the environment, else `None` (also
/// when the node does not fall on character boundaries of `src`).
fn value(node: Node, src: &str) -> Option<String> {
    let raw = src.get(node.byte_range())?;
    match node.kind() {
        "word" => unquoted(raw),
        "number" => Some(raw.to_string()),
        "command_name" => value(node.named_child(0)?, src),
        "raw_string" => Some(raw.strip_prefix('\'')?.strip_suffix('\'')?.to_string()),
        "string" => {
            let mut cursor = node.walk();
            let only_text = node
                .named_children(&mut cursor)
                .all(|c| c.kind() == "string_content");
            only_text.then(|| double_quoted(raw.strip_prefix('"')?.strip_suffix('"')?))?
        }
        "concatenation" => {
            let mut cursor = node.walk();
            let mut out = String::new();
            for part in node.children(&mut cursor) {
                out.push_str(&value(part, src)?);
            }
            Some(out)
        }
        "variable_assignment" => {
            let name = node.child_by_field_name("name")?;
            let value = match node.child_by_field_name("value") {
                Some(v) => value(v, src)?,
                None => String::new(),
            };
            Some(format!("{}={value}", text(name, src)))
        }
        _ => None,
    }
}

/// An unquoted word's value: backslashes removed; `None` when something in it expands
/// (wildcards, `$`, a tilde where the shell expands one: at the start, or after `=` or `:`
/// as in an assignment, braces that would be brace-expanded) or quotes that belong to
/// another node. `HEAD~1` and `stash@{0}` are what they say.
fn unquoted(raw: &str) -> Option<String> {
    if super::dialects::brace_expansion(raw) {
        return None;
    }
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars();
    let mut previous: Option<char> = None;
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some('\n') | None => {}
                Some(c) => out.push(c),
            },
            '~' if matches!(previous, None | Some('=' | ':')) => return None,
            '*' | '?' | '[' | ']' | '$' | '`' | '\'' | '"' => return None,
            c => out.push(c),
        }
        previous = Some(c);
    }
    Some(out)
}

/// The inside of a double-quoted string without expansions: a backslash escapes only
/// `$`, `` ` ``, `"`, `\` and a newline.
fn double_quoted(inner: &str) -> Option<String> {
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some('\n') => {}
                Some(c @ ('$' | '`' | '"' | '\\')) => out.push(c),
                Some(c) => {
                    out.push('\\');
                    out.push(c);
                }
                None => out.push('\\'),
            },
            '$' | '`' => return None,
            c => out.push(c),
        }
    }
    Some(out)
}

/// `s` on one line (runs of whitespace as one space), cut to `max` characters with `…`.
pub(crate) fn one_line(s: &str, max: usize) -> String {
    let line: String = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if line.chars().count() > max {
        let kept: String = line.chars().take(max.saturating_sub(1)).collect();
        format!("{kept}…")
    } else {
        line
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unquoting() {
        assert_eq!(unquoted(r"r\m").as_deref(), Some("rm"));
        assert_eq!(unquoted("*.o"), None);
        assert_eq!(unquoted("~/x"), None);
        assert_eq!(unquoted("a=~/x"), None);
        assert_eq!(unquoted("HEAD~1").as_deref(), Some("HEAD~1"));
        assert_eq!(unquoted("stash@{0}").as_deref(), Some("stash@{0}"));
        assert_eq!(unquoted("x{a,b}"), None);
        assert_eq!(
            double_quoted(r#"a \"b\" \n"#).as_deref(),
            Some(r#"a "b" \n"#)
        );
        assert_eq!(double_quoted("$HOME"), None);
    }

    #[test]
    fn display_quotes_only_when_needed() {
        assert_eq!(Word::literal("cargo").to_string(), "cargo");
        assert_eq!(Word::literal("a b").to_string(), "'a b'");
        assert_eq!(Word::literal("it's").to_string(), r"'it'\''s'");
        assert_eq!(Word::literal("HEAD~1").to_string(), "HEAD~1");
        assert_eq!(Word::literal("~/x").to_string(), "'~/x'");
        let glob = Word {
            text: "*.o".into(),
            literal: false,
        };
        assert_eq!(glob.to_string(), "*.o");
    }
}
