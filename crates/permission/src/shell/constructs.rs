//! Where tree-sitter's bash grammar and the shell part ways, or bash evaluates more than it
//! seems to: the checks that turn such text into a [`Hazard`] instead of a confident parse.

use tree_sitter::Node;

use super::{Hazard, words};

/// Text on which the grammar and the shell disagree about where words and comments end:
/// control characters other than tab and newline (tree-sitter takes `\r`, `\v` and `\f` for
/// blanks, the shell for word characters), and a backslash-newline that is not the usual
/// ` \` continuation (the shell deletes it and joins what it separated; the grammar keeps a
/// gap, so `hi\⏎#; x` hides `x` from it in a comment).
pub(super) fn lexical_hazard(line: &str) -> Option<Hazard> {
    if line
        .chars()
        .any(|c| c.is_ascii_control() && c != '\t' && c != '\n')
    {
        return Some(Hazard::Lexical("a control character".into()));
    }
    let bytes = line.as_bytes();
    let joins = bytes.windows(2).enumerate().any(|(i, pair)| {
        pair == b"\\\n" && !matches!(i.checked_sub(1).map(|j| bytes[j]), Some(b' ' | b'\t'))
    });
    if joins {
        return Some(Hazard::Lexical("a backslash-newline inside a word".into()));
    }
    // `p1 \ #|p2`: the blank is part of a word, so `#` does not start a comment; the grammar
    // takes it for one and hides `p2`.
    let escaped_blank_hash = bytes
        .windows(3)
        .any(|w| w[0] == b'\\' && matches!(w[1], b' ' | b'\t') && w[2] == b'#');
    escaped_blank_hash.then(|| Hazard::Lexical("`#` after an escaped blank".into()))
}

/// Whether a simple command's source holds a line break the shell ends the command at: one
/// outside quotes and not escaped. The grammar reads `p2 ⏎\p1` as one command, the shell
/// as two, so such a command is a [`Hazard::Lexical`].
pub(super) fn broken_command(source: &str) -> bool {
    let mut quote: Option<char> = None;
    let mut chars = source.chars();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some('\''), '\'') | (Some('"'), '"') => quote = None,
            (Some('"') | None, '\\') => {
                chars.next();
            }
            (None, '\'' | '"') => quote = Some(c),
            (None, '\n') => return true,
            _ => {}
        }
    }
    false
}

/// What the grammar is given instead of `line`: every non-ASCII character replaced by as many
/// `x` bytes as it takes in UTF-8, so byte offsets (and so the words read from `line`) stay
/// the same. The shell gives non-ASCII characters no meaning (a non-breaking space separates
/// nothing), and tree-sitter-bash 0.25's scanner passes the next character to C's `isdigit`,
/// which reads out of bounds, and can crash, for a large code point (`{` then U+E01CB).
pub(super) fn ascii_shadow(line: &str) -> std::borrow::Cow<'_, str> {
    if line.is_ascii() {
        return line.into();
    }
    let mut out = String::with_capacity(line.len());
    for c in line.chars() {
        if c.is_ascii() {
            out.push(c);
        } else {
            out.extend(std::iter::repeat_n('x', c.len_utf8()));
        }
    }
    out.into()
}

/// The first unnamed token of `node` (`{` or `((` for a compound statement).
pub(super) fn first_token(node: Node<'_>) -> Option<&'static str> {
    (0..node.child_count())
        .filter_map(|i| node.child(i as u32))
        .find(|c| !c.is_named())
        .map(|c| c.kind())
}

/// `${NAME}` only: the other forms (`${!x}`, `${x@P}`, `${x:offset}`, `${x:=v}`, …) evaluate
/// or assign, and bash evaluates array subscripts and offsets as arithmetic, which runs
/// `$( … )` hidden in a variable's value.
pub(super) fn plain_expansion(text: &str) -> bool {
    text.strip_prefix("${")
        .and_then(|t| t.strip_suffix('}'))
        .is_some_and(|name| {
            let mut chars = name.chars();
            chars
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        })
}

/// Why a test (`[ … ]`, `[[ … ]]`) cannot be judged: `[[` is bash's own (to sh it is a
/// program name), and bash evaluates `-v`, `-R` and numeric comparisons as arithmetic,
/// which runs `$( … )` hidden in array subscripts.
pub(super) fn test_hazard(node: Node, src: &str) -> Option<Hazard> {
    let text = words::text(node, src);
    if first_token(node) == Some("[[") {
        // bash evaluates `[[ ]]` operands as arithmetic for numeric comparisons and `-v`.
        return Some(if arithmetic_test(text.split_whitespace()) {
            Hazard::Evaluates(text.to_string())
        } else {
            Hazard::Divergence("`[[ … ]]`".into())
        });
    }
    // An operator made by a pattern (`-[v]`) is whatever file matches it.
    let pattern = text
        .split_whitespace()
        .any(|w| w.starts_with('-') && w.contains(['[', '*', '?']));
    (pattern || arithmetic_test(text.split_whitespace()))
        .then(|| Hazard::Evaluates(text.to_string()))
}

/// Variables whose value bash expands as a prompt, running the `$( … )` it holds (`PS4`
/// under `set -x`), or reads a file from (`BASH_ENV`).
pub(super) const PROMPTS: &[&str] = &[
    "PS0",
    "PS1",
    "PS2",
    "PS4",
    "PROMPT_COMMAND",
    "BASH_ENV",
    "ENV",
];

/// Whether an assignment or declaration's source makes bash evaluate text as code: an
/// array subscript (evaluated as arithmetic), a prompt variable, a name that is computed,
/// or a declaration with an attribute that evaluates its values (`-i` integer, `-n`
/// name reference, `-a`/`-A` arrays).
pub(super) fn evaluating_assignment(text: &str) -> bool {
    let words: Vec<&str> = text.split_whitespace().collect();
    text.contains('[')
        || words.iter().any(|w| {
            let name = w.split('=').next().unwrap_or("");
            PROMPTS.contains(&name)
                || (w.starts_with(['-', '+']) && w.contains(['i', 'n', 'a', 'A']))
        })
        || words.iter().skip(1).any(|w| w.starts_with(['$', '`', '"']))
}

/// Variables that decide which programs run or which files programs read their settings and
/// code from: set on a line, they make it run what no walk can see (`HOME=. git status`
/// reads the project's `.gitconfig`).
const DECIDING: &[&str] = &[
    "PATH",
    "HOME",
    "XDG_CONFIG_HOME",
    "XDG_CONFIG_DIRS",
    "XDG_DATA_HOME",
    "GIT_DIR",
    "GIT_EXEC_PATH",
    "GIT_TEMPLATE_DIR",
    "GIT_SSH",
    "GIT_SSH_COMMAND",
    "GIT_EXTERNAL_DIFF",
    "GIT_EDITOR",
    "GIT_SEQUENCE_EDITOR",
    "GIT_PAGER",
    "GIT_ASKPASS",
    "SSH_ASKPASS",
    "EDITOR",
    "VISUAL",
    "PAGER",
    "MANPAGER",
    "LESSOPEN",
    "LD_PRELOAD",
    "LD_LIBRARY_PATH",
    "LD_AUDIT",
    "BASH_ENV",
    "ENV",
    "PROMPT_COMMAND",
    "SHELLOPTS",
    "BASHOPTS",
    "NODE_OPTIONS",
    "PYTHONSTARTUP",
    "PYTHONPATH",
    "PYTHONHOME",
    "PERL5OPT",
    "PERL5LIB",
    "RUBYOPT",
    "RUBYLIB",
    "RUSTC_WRAPPER",
    "RUSTC",
    "RUSTDOCFLAGS",
    "RUSTFLAGS",
    "CC",
    "CXX",
    "MAKEFLAGS",
    "IFS",
];

/// Whether an assignment to `name` decides what runs (see [`DECIDING`]; also every
/// `GIT_CONFIG*` variable and macOS's `DYLD_*`).
pub(super) fn decides_what_runs(name: &str) -> bool {
    DECIDING.contains(&name)
        || name.starts_with("GIT_CONFIG")
        || name.starts_with("DYLD_")
        || name.starts_with("CARGO_TARGET_")
}

/// Whether a test's words hold an operator bash evaluates as arithmetic.
pub(super) fn arithmetic_test<'a>(mut words: impl Iterator<Item = &'a str>) -> bool {
    const ARITHMETIC: [&str; 8] = ["-v", "-R", "-eq", "-ne", "-lt", "-le", "-gt", "-ge"];
    words.any(|w| ARITHMETIC.contains(&w))
}

/// Why a here-document cannot be judged: the grammar neither parses backticks nor joins
/// backslash-newlines in its body, and compares the end marker as written. A marker that is
/// a plain word, or one quoted whole (`'EOF'`, `"EOF"`, `\EOF`), is judged; an unquoted
/// marker's body must not expand anything (`$`, `` ` ``, `\`).
pub(super) fn heredoc_hazard(node: Node, src: &str) -> Option<&'static str> {
    let mut cursor = node.walk();
    let children: Vec<Node> = node.named_children(&mut cursor).collect();
    let start = children.iter().find(|c| c.kind() == "heredoc_start")?;
    let marker = words::text(*start, src);
    let plain = |m: &str| !m.is_empty() && m.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    let quoted = [("'", "'"), ("\"", "\""), ("\\", "")]
        .iter()
        .any(|(open, close)| {
            marker
                .strip_prefix(open)
                .and_then(|m| m.strip_suffix(close))
                .is_some_and(plain)
        });
    if quoted {
        return None;
    }
    if !plain(marker) {
        return Some("a here-document end marker quoted in part");
    }
    let expands = children
        .iter()
        .filter(|c| c.kind() == "heredoc_body")
        .any(|b| words::text(*b, src).contains(['$', '`', '\\']));
    expands.then_some("a here-document whose text expands")
}
