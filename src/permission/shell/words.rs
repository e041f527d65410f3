//! Words of a command as the shell will see them: quotes and backslashes removed where the
//! value is certain, the source text kept (and marked) where it is not.

use std::fmt;

use tree_sitter::Node;

/// One word of a simple command.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Word {
    /// The value after quote removal when `literal`; the source text otherwise.
    pub text: String,
    /// Whether the shell passes `text` as it is: no expansion, wildcard or tilde. A literal
    /// word never equals a non-literal one, so `'*.o'` and `*.o` are different words.
    pub literal: bool,
}

impl Word {
    /// A literal word.
    pub fn literal(text: impl Into<String>) -> Word {
        Word {
            text: text.into(),
            literal: true,
        }
    }
}

impl fmt::Display for Word {
    /// The word as a user would type it: literal words quoted where the shell needs it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let plain = !self.text.is_empty()
            && self
                .text
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_./:=@+,%^".contains(c) || !c.is_ascii());
        if !self.literal || plain {
            f.write_str(&self.text)
        } else {
            write!(f, "'{}'", self.text.replace('\'', r"'\''"))
        }
    }
}

/// The word `node` stands for.
pub fn word(node: Node, src: &str) -> Word {
    match value(node, src) {
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
pub fn text<'a>(node: Node, src: &'a str) -> &'a str {
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
/// (wildcards, braces, a tilde, `$`) or quotes that belong to another node.
fn unquoted(raw: &str) -> Option<String> {
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some('\n') | None => {}
                Some(c) => out.push(c),
            },
            '*' | '?' | '[' | ']' | '{' | '}' | '~' | '$' | '`' | '\'' | '"' => return None,
            c => out.push(c),
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unquoting() {
        assert_eq!(unquoted(r"r\m").as_deref(), Some("rm"));
        assert_eq!(unquoted("*.o"), None);
        assert_eq!(unquoted("~/x"), None);
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
        let glob = Word {
            text: "*.o".into(),
            literal: false,
        };
        assert_eq!(glob.to_string(), "*.o");
    }
}
