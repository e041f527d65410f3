//! Command lines read the way the shell will read them, with a real parser (tree-sitter's
//! bash grammar, a superset of what `sh` accepts): a line is split into its simple commands
//! across `;`, `&&`, `||`, `|`, `&`, newlines, subshells, groups and control structures, and
//! everything that would make approving it ahead of time a guess is named as a [`Hazard`].
//!
//! The walk is an allowlist: a construct it does not know is a hazard, never ignored, and a
//! line the grammar cannot parse is one too. Commands nested in substitutions are collected
//! as well, so a deny rule sees them.

mod constructs;
mod programs;
mod reach;
mod words;

use std::fmt;

use tree_sitter::{Node, Parser};

pub use reach::reachable;
pub use words::Word;

use constructs::{
    ascii_shadow, first_token, heredoc_hazard, lexical_hazard, plain_expansion, test_hazard,
};

/// Deeper nesting than this is not judged (a hazard), so a hostile line cannot exhaust the
/// stack.
const MAX_DEPTH: usize = 100;

/// One command line, taken apart.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CommandLine {
    /// Every simple command in source order, including those inside substitutions, loops
    /// and conditionals.
    pub commands: Vec<SimpleCommand>,
    /// Why the line can never be approved ahead of time; empty when it can.
    pub hazards: Vec<Hazard>,
}

/// One simple command: assignments, a program, its arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimpleCommand {
    /// Its words: the leading `NAME=value` assignments, then the program and arguments.
    pub words: Vec<Word>,
    /// How many leading words are assignments.
    pub assignments: usize,
    /// Its source text, for messages.
    pub source: String,
}

impl SimpleCommand {
    /// The program, when there is one.
    pub fn program(&self) -> Option<&Word> {
        self.words.get(self.assignments)
    }

    /// The words after the program.
    pub fn arguments(&self) -> &[Word] {
        self.words.get(self.assignments + 1..).unwrap_or(&[])
    }
}

/// Something in a command line that no grant or allow rule may approve ahead of time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Hazard {
    /// The grammar could not parse the line.
    Unparsable,
    /// A command, process or arithmetic substitution (its source).
    Substitution(String),
    /// Output written to a file (the redirection's source).
    Redirect(String),
    /// A program that runs code given in its arguments (`eval`, `sh -c`, `sudo`, `xargs`).
    RunsCode(String),
    /// An interpreter reading its program from stdin (a pipe or a here-document).
    Stdin(String),
    /// Shell variables or functions defined (the source).
    Variables(String),
    /// A command name that is not a literal word.
    NotLiteral(String),
    /// A construct the walk does not know (its grammar name).
    Construct(String),
    /// Nesting deeper than tandem judges.
    TooDeep,
    /// Text the grammar and the shell would split differently (what it is).
    Lexical(String),
    /// No command at all.
    Empty,
}

impl fmt::Display for Hazard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Hazard::Unparsable => f.write_str("the command line cannot be parsed"),
            Hazard::Substitution(s) => write!(f, "`{}` is a substitution", short(s)),
            Hazard::Redirect(s) => write!(f, "`{}` writes to a file", short(s)),
            Hazard::RunsCode(p) => write!(f, "`{p}` runs code given in its arguments"),
            Hazard::Stdin(p) => write!(f, "`{p}` reads a program from its input"),
            Hazard::Variables(s) => write!(f, "`{}` sets shell variables or functions", short(s)),
            Hazard::NotLiteral(s) => write!(f, "the command name `{}` is computed", short(s)),
            Hazard::Construct(kind) => write!(
                f,
                "it uses a shell construct ({kind}) tandem does not judge"
            ),
            Hazard::TooDeep => f.write_str("it is nested too deeply to judge"),
            Hazard::Lexical(what) => write!(f, "it contains {what}, which tandem does not judge"),
            Hazard::Empty => f.write_str("it names no command"),
        }
    }
}

/// At most 60 characters of `s`, on one line.
fn short(s: &str) -> String {
    one_line(s, 60)
}

/// `s` on one line (runs of whitespace as one space), cut to `max` characters with `…`.
pub fn one_line(s: &str, max: usize) -> String {
    let line: String = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if line.chars().count() > max {
        let kept: String = line.chars().take(max.saturating_sub(1)).collect();
        format!("{kept}…")
    } else {
        line
    }
}

thread_local! {
    /// One parser per thread, made once: a command line is judged on every `run_command`.
    static PARSER: std::cell::RefCell<Option<Parser>> = std::cell::RefCell::new({
        let mut parser = Parser::new();
        parser
            .set_language(&tree_sitter_bash::LANGUAGE.into())
            .ok()
            .map(|()| parser)
    });
}

/// Takes `line` apart.
pub fn parse(line: &str) -> CommandLine {
    let mut walk = Walk {
        src: line,
        out: CommandLine::default(),
    };
    if let Some(hazard) = lexical_hazard(line) {
        walk.hazard(hazard);
    }
    let tree = PARSER.with_borrow_mut(|parser| {
        let parser = parser.as_mut()?;
        parser.parse(ascii_shadow(line).as_bytes(), None)
    });
    match tree {
        Some(tree) => {
            let root = tree.root_node();
            if root.has_error() {
                walk.hazard(Hazard::Unparsable);
            }
            walk.visit(root, 0);
        }
        None => walk.hazard(Hazard::Unparsable),
    }
    let mut out = walk.out;
    let judged: Vec<Hazard> = out.commands.iter().filter_map(programs::judge).collect();
    out.hazards.extend(judged);
    if out.commands.is_empty() && out.hazards.is_empty() {
        out.hazards.push(Hazard::Empty);
    }
    out
}

/// Nodes that only group or sequence other nodes.
const STRUCTURE: &[&str] = &[
    "program",
    "list",
    "pipeline",
    "subshell",
    "compound_statement",
    "redirected_statement",
    "negated_command",
    "if_statement",
    "elif_clause",
    "else_clause",
    "while_statement",
    "for_statement",
    "do_group",
    "case_statement",
    "case_item",
    "test_command",
    "unary_expression",
    "binary_expression",
    "parenthesized_expression",
    "heredoc_redirect",
    "herestring_redirect",
    "heredoc_body",
];

/// Nodes that make up words; expansions in them are walked for substitutions.
const WORD_PARTS: &[&str] = &[
    "word",
    "string",
    "raw_string",
    "string_content",
    "number",
    "concatenation",
    "simple_expansion",
    "expansion",
    "variable_name",
    "special_variable_name",
    "ansi_c_string",
    "translated_string",
    "heredoc_start",
    "heredoc_content",
    "heredoc_end",
    "file_descriptor",
    "test_operator",
    "extglob_pattern",
    "regex",
    "command_name",
];

struct Walk<'a> {
    src: &'a str,
    out: CommandLine,
}

impl Walk<'_> {
    fn hazard(&mut self, hazard: Hazard) {
        if !self.out.hazards.contains(&hazard) {
            self.out.hazards.push(hazard);
        }
    }

    fn source(&self, node: Node) -> String {
        words::text(node, self.src).to_string()
    }

    fn visit(&mut self, node: Node, depth: usize) {
        if depth > MAX_DEPTH {
            self.hazard(Hazard::TooDeep);
            return;
        }
        if node.is_missing() || node.is_error() {
            self.hazard(Hazard::Unparsable);
        }
        if !node.is_named() {
            return;
        }
        let kind = node.kind();
        match kind {
            "command" => return self.command(node, depth),
            "file_redirect" => self.redirect(node),
            "comment" => return,
            "command_substitution" | "process_substitution" | "arithmetic_expansion" => {
                self.hazard(Hazard::Substitution(self.source(node)));
            }
            "heredoc_redirect" => {
                if let Some(why) = heredoc_hazard(node, self.src) {
                    self.hazard(Hazard::Lexical(why.into()));
                }
            }
            "test_command" => {
                if let Some(why) = test_hazard(node, self.src) {
                    self.hazard(Hazard::Construct(why.into()));
                }
            }
            "compound_statement" if first_token(node) == Some("((") => {
                self.hazard(Hazard::Substitution(self.source(node)));
            }
            "expansion" if !plain_expansion(words::text(node, self.src)) => {
                self.hazard(Hazard::Substitution(self.source(node)));
            }
            "for_statement"
            | "function_definition"
            | "variable_assignment"
            | "variable_assignments"
            | "declaration_command"
            | "unset_command" => self.hazard(Hazard::Variables(self.source(node))),
            "ERROR" => {}
            k if STRUCTURE.contains(&k) || WORD_PARTS.contains(&k) => {}
            other => self.hazard(Hazard::Construct(other.to_string())),
        }
        self.children(node, depth);
    }

    fn children(&mut self, node: Node, depth: usize) {
        let mut cursor = node.walk();
        for child in node.children(&mut cursor) {
            self.visit(child, depth + 1);
        }
    }

    /// A simple command: its words are collected, and every part is still walked (an
    /// argument may hold a substitution, a redirection may write a file).
    fn command(&mut self, node: Node, depth: usize) {
        let mut command = SimpleCommand {
            words: Vec::new(),
            assignments: 0,
            source: self.source(node),
        };
        let mut named = false;
        let mut cursor = node.walk();
        for child in node.named_children(&mut cursor) {
            match child.kind() {
                "variable_assignment" if !named => {
                    command.words.push(words::word(child, self.src));
                    command.assignments += 1;
                    self.children(child, depth + 1);
                    continue;
                }
                "command_name" => named = true,
                "file_redirect" | "heredoc_redirect" | "herestring_redirect" | "comment" => {
                    self.visit(child, depth + 1);
                    continue;
                }
                _ => {}
            }
            command.words.push(words::word(child, self.src));
            self.visit(child, depth + 1);
        }
        self.out.commands.push(command);
    }

    /// `>`, `>>`, `&>`, `>|` and `<>` write a file unless it is `/dev/null`; `<` reads one;
    /// `2>&1` and `>&-` only move or close descriptors.
    fn redirect(&mut self, node: Node) {
        let mut cursor = node.walk();
        let operator = node
            .children(&mut cursor)
            .find(|c| !c.is_named())
            .map(|c| c.kind())
            .unwrap_or("");
        let destination = node
            .child_by_field_name("destination")
            .map(|d| words::word(d, self.src));
        let to_null = destination
            .as_ref()
            .is_some_and(|d| d.literal && d.text == "/dev/null");
        let duplicate = destination.as_ref().is_some_and(|d| {
            d.literal && (d.text == "-" || d.text.chars().all(|c| c.is_ascii_digit()))
        });
        // bash opens a network connection for these names.
        let network = destination
            .as_ref()
            .is_some_and(|d| d.text.starts_with("/dev/tcp/") || d.text.starts_with("/dev/udp/"));
        let safe = !network
            && match operator {
                "<" | "<&-" | ">&-" => true,
                ">&" | "<&" => duplicate || to_null,
                ">" | ">>" | "&>" | "&>>" | ">|" | "<>" => to_null,
                _ => false,
            };
        if !safe {
            self.hazard(Hazard::Redirect(self.source(node)));
        }
    }
}

#[cfg(test)]
mod tests;
