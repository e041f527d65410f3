//! Where bash and the POSIX `sh` part ways. Lines run with `sh -c`, and `sh` is dash on
//! Debian and Ubuntu, bash (in POSIX mode) on macOS and most other systems; the grammar
//! tandem parses with is bash's. Text the two shells split into different commands is a
//! [`Hazard::Divergence`](super::Hazard::Divergence): `echo hi &>/dev/null touch X` is one
//! command with a redirection to bash, but `echo hi &` and `>/dev/null touch X` to dash.
//!
//! Constructs that dash rejects as a syntax error (`[[`, `((`, arrays, `function`, `<(…)`)
//! are hazards elsewhere already (a test, arithmetic, variables, a substitution).

use tree_sitter::Node;

use super::{CommandLine, Hazard};

/// How much of a command line tandem can read for the shell lines run in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Grammar {
    /// A POSIX shell whose reading tandem knows (sh, dash, bash, ash): whole lines.
    Posix,
    /// Another shell (PowerShell, cmd, zsh, fish, …), by name: only plain lines, whose
    /// words every shell splits alike.
    PlainOnly(String),
}

/// The POSIX shells whose differences from bash's grammar are known here.
const READ_SHELLS: &[&str] = &["sh", "dash", "bash", "ash", "busybox"];

impl Grammar {
    /// The grammar for lines run by `shell`.
    pub fn of(shell: &crate::platform::Shell) -> Grammar {
        let name = shell.name();
        if READ_SHELLS.contains(&name.as_str()) {
            Grammar::Posix
        } else {
            Grammar::PlainOnly(name)
        }
    }

    /// `line` taken apart for this shell.
    pub(crate) fn parse(&self, line: &str) -> CommandLine {
        let mut parsed = super::parse(line);
        if let Grammar::PlainOnly(shell) = self
            && !plain(line)
        {
            parsed.hazards.push(Hazard::Foreign(shell.clone()));
        }
        parsed
    }
}

/// A line every shell reads as one command of plain words: letters, digits, spaces and
/// `-_./:=+,` (and `@` inside a word).
fn plain(line: &str) -> bool {
    line.split([' ', '\t']).all(|word| {
        !word.starts_with('@')
            && word
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_./:=+,@".contains(c))
    })
}

/// What an unnamed token of the grammar means to bash but not to `sh`, if anything.
pub(super) fn token(node: Node, src: &str) -> Option<&'static str> {
    match node.kind() {
        // dash: `a &` then `>file b`.
        "&>" | "&>>" => {
            Some("`&>` (bash redirects both outputs; sh runs the command in the background)")
        }
        // dash: a syntax error, or `|` then `&`.
        "|&" => Some("`|&`"),
        // bash: a translated string; dash: a `$` and a quoted word.
        "$" if src.as_bytes().get(node.end_byte()) == Some(&b'"') => Some("`$\"…\"` quoting"),
        ";&" | ";;&" => Some("a `case` fall-through (`;&`)"),
        _ => None,
    }
}

/// Whether unquoted text in `word` (its source) would be brace-expanded by bash: a `{` that
/// is not `${`, with a `,` or `..` before its `}`. dash leaves the braces as they are, so the
/// two run different words (`{rm,-rf,x}` is the command `rm -rf x` only to bash).
pub(crate) fn brace_expansion(word: &str) -> bool {
    let bytes = word.as_bytes();
    let mut quote: Option<u8> = None;
    let mut open: Option<usize> = None;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        match quote {
            Some(q) => {
                if b == b'\\' && q == b'"' {
                    i += 1;
                } else if b == q {
                    quote = None;
                }
            }
            None => match b {
                b'\\' => i += 1,
                b'\'' | b'"' => quote = Some(b),
                b'{' if i == 0 || bytes[i - 1] != b'$' => open = Some(i),
                b'}' => {
                    if let Some(start) = open.take() {
                        let inside = &word[start + 1..i];
                        if inside.contains(',') || inside.contains("..") {
                            return true;
                        }
                    }
                }
                _ => {}
            },
        }
        i += 1;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn other_shells_get_plain_lines_only() {
        let pwsh = Grammar::PlainOnly("pwsh".into());
        assert!(pwsh.parse("cargo test --all").hazards.is_empty());
        assert!(pwsh.parse("npm install left-pad@1.3.0").hazards.is_empty());
        for line in [
            "iex 'git push'",
            "git status; rm x",
            "echo $env:HOME",
            "& git push",
            "a `b",
        ] {
            assert!(!pwsh.parse(line).hazards.is_empty(), "{line}");
        }
        assert!(Grammar::Posix.parse("echo $HOME").hazards.is_empty());
    }

    #[test]
    fn braces_that_expand() {
        for word in [
            "{a,b}",
            "x{a,b}y",
            "{1..3}",
            "{rm,-rf,x}",
            "a{b,'c'}",
            "{a..}",
        ] {
            assert!(brace_expansion(word), "{word}");
        }
        for word in [
            "{}",
            "${a,b}",
            "'{a,b}'",
            "\"{a,b}\"",
            "{a}",
            "\\{a,b}",
            "a,b",
            "{ab",
        ] {
            assert!(!brace_expansion(word), "{word}");
        }
    }
}
