//! Command lines read the way the shell will read them, with a real parser (tree-sitter's
//! bash grammar, a superset of what `sh` accepts): a line is split into its simple commands
//! across `;`, `&&`, `||`, `|`, `&`, newlines, subshells, groups and control structures, and
//! everything that would make approving it ahead of time a guess is named as a [`Hazard`].
//!
//! Lines run with `sh -c`, which is dash on Debian and Ubuntu and bash elsewhere, so the
//! judgement must hold for both: a construct the two shells read differently (`&>`, `|&`,
//! `$'…'`, brace expansion, … see [`dialects`]) is a hazard, and the differential test
//! (`shell/differential.rs`) runs generated lines through both to prove that every program
//! either shell starts is one the judge named.
//!
//! The walk is an allowlist: a construct it does not know is a hazard, never ignored, and a
//! line the grammar cannot parse is one too. Commands nested in substitutions are collected
//! as well, so a deny rule sees them; [`Hazard::hides_commands`] says which hazards leave
//! commands the walk cannot see (a deny rule then refuses the line, see `reach.rs`).

mod constructs;
mod dialects;
#[cfg(test)]
mod differential;
pub(crate) mod git;
mod hazard;
mod programs;
mod reach;
mod syntax;
mod words;

use tree_sitter::Node;

pub use dialects::Grammar;
pub(crate) use hazard::Hazard;
pub(crate) use reach::ANYTHING;
pub use reach::Reached;
pub use reach::reachable;
pub use words::Word;
pub(crate) use words::one_line;

use constructs::{
    ascii_shadow, first_token, heredoc_hazard, lexical_hazard, plain_expansion, test_hazard,
};

/// Deeper nesting than this is not judged (a hazard), so a hostile line cannot exhaust the
/// stack.
const MAX_DEPTH: usize = 100;

/// Whether a redirection is `&>` or `&>>`, which sh reads as `&` (run in the background)
/// and a redirection that starts the next command.
fn backgrounds(redirect: Node) -> bool {
    let mut cursor = redirect.walk();
    redirect
        .children(&mut cursor)
        .any(|c| matches!(c.kind(), "&>" | "&>>"))
}

/// One command line, taken apart.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CommandLine {
    /// Every simple command in source order, including those inside substitutions, loops
    /// and conditionals.
    pub commands: Vec<SimpleCommand>,
    /// Why the line can never be approved ahead of time; empty when it can.
    pub hazards: Vec<Hazard>,
    /// The files its redirections read or write (`< in.txt`, `> /dev/null`), in order.
    pub(crate) redirects: Vec<Word>,
    /// The commands (by index) that run in a subshell or a substitution: a `cd` among them
    /// moves only them.
    pub(crate) subshells: Vec<std::ops::Range<usize>>,
    /// Every assignment on the line (`X=1 cmd`, `export X=1`, `X=1;`), as `NAME=value`.
    pub(crate) assigned: Vec<Word>,
    /// What the line may run ([`reachable`]), worked out at its first use; a line changed
    /// after that keeps the old answer, so build a new line rather than edit one.
    reach: std::sync::OnceLock<Vec<Reached>>,
}

/// One simple command: assignments, a program, its arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimpleCommand {
    /// Its words: the leading `NAME=value` assignments, then the program and arguments.
    pub(crate) words: Vec<Word>,
    /// How many leading words are assignments.
    pub(crate) assignments: usize,
    /// Its source text, for messages.
    pub(crate) source: String,
}

impl SimpleCommand {
    /// The program, when there is one.
    pub(crate) fn program(&self) -> Option<&Word> {
        self.words.get(self.assignments)
    }

    /// The words after the program.
    pub(crate) fn arguments(&self) -> &[Word] {
        self.words.get(self.assignments + 1..).unwrap_or(&[])
    }
}

/// Takes `line` apart.
pub fn parse(line: &str) -> CommandLine {
    let mut walk = Walk {
        src: line,
        out: CommandLine::default(),
        seen: std::collections::HashSet::new(),
    };
    if let Some(hazard) = lexical_hazard(line) {
        walk.hazard(hazard);
    }
    let tree = syntax::tree(&ascii_shadow(line));
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
    if walk
        .out
        .commands
        .iter()
        .any(|c| constructs::broken_command(&c.source))
    {
        walk.hazard(Hazard::Lexical(
            "a line break inside what tandem read as one command".into(),
        ));
    }
    let judged: Vec<Hazard> = walk
        .out
        .commands
        .iter()
        .filter_map(|c| {
            // git's own options (`--output`, `--upload-pack`) after what any program may do.
            programs::judge(c).or_else(|| git::hazard(c.words.get(c.assignments..)?))
        })
        .collect();
    for hazard in judged {
        walk.hazard(hazard);
    }
    let mut out = walk.out;
    if out.commands.is_empty() && out.hazards.is_empty() {
        out.hazards.push(Hazard::Empty);
    }
    out
}

/// Nodes that only group or sequence other nodes.
const STRUCTURE: &[&str] = &[
    "program",
    "subshell",
    "compound_statement",
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
    /// The hazards found so far, to name each once in linear time.
    seen: std::collections::HashSet<Hazard>,
}

impl Walk<'_> {
    fn hazard(&mut self, hazard: Hazard) {
        if self.seen.insert(hazard.clone()) {
            self.out.hazards.push(hazard);
        }
    }

    /// Records an assignment; one to a variable that decides which programs or settings
    /// run (`PATH`, `HOME`, `GIT_CONFIG_GLOBAL`, `LD_PRELOAD`) hides what the line runs.
    fn assigned(&mut self, word: Word) {
        let name = word.text.split('=').next().unwrap_or("").to_string();
        if constructs::decides_what_runs(&name) {
            self.hazard(Hazard::Environment(name));
        }
        self.out.assigned.push(word);
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
            if let Some(what) = dialects::token(node, self.src) {
                self.hazard(Hazard::Divergence(what.into()));
            }
            return;
        }
        let kind = node.kind();
        if kind == "variable_assignment" {
            self.assigned(words::word(node, self.src));
        }
        match kind {
            "command" => return self.command(node, depth),
            "list" | "pipeline" => return self.chain(node, depth),
            "subshell" | "command_substitution" | "process_substitution" => {
                if kind != "subshell" {
                    self.hazard(Hazard::Substitution(self.source(node)));
                }
                let start = self.out.commands.len();
                self.children(node, depth);
                let end = self.out.commands.len();
                self.out.subshells.push(start..end);
                return;
            }
            "redirected_statement" => return self.redirected(node, depth),
            "file_redirect" => self.redirect(node),
            "comment" => return,
            "arithmetic_expansion" => self.hazard(Hazard::Evaluates(self.source(node))),
            "heredoc_redirect" => {
                if let Some(why) = heredoc_hazard(node, self.src) {
                    self.hazard(Hazard::Lexical(why.into()));
                }
            }
            "test_command" => {
                if let Some(hazard) = test_hazard(node, self.src) {
                    self.hazard(hazard);
                }
            }
            "compound_statement" if first_token(node) == Some("((") => {
                self.hazard(Hazard::Evaluates(self.source(node)));
            }
            "expansion" if !plain_expansion(words::text(node, self.src)) => {
                self.hazard(Hazard::Evaluates(self.source(node)));
            }
            "word" | "concatenation" if dialects::brace_expansion(words::text(node, self.src)) => {
                self.hazard(Hazard::Divergence("brace expansion (`{a,b}`)".into()));
            }
            "ansi_c_string" => self.hazard(Hazard::Quoting("`$'…'` quoting".into())),
            "herestring_redirect" => {
                self.hazard(Hazard::Divergence("a here-string (`<<<`)".into()))
            }
            "brace_expression" => {
                self.hazard(Hazard::Divergence("brace expansion (`{1..3}`)".into()));
            }
            "variable_assignment" | "declaration_command" | "unset_command"
                if constructs::evaluating_assignment(words::text(node, self.src)) =>
            {
                // bash evaluates array subscripts as arithmetic, which runs `$( … )` hidden
                // in a variable's value; and prompts, integers and name references.
                self.hazard(Hazard::Evaluates(self.source(node)));
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
        for child in node.children(&mut cursor) {
            if !child.is_named() {
                // Tokens between words (`$` before `"…"`).
                self.visit(child, depth + 1);
                continue;
            }
            match child.kind() {
                "variable_assignment" if !named => {
                    if constructs::evaluating_assignment(words::text(child, self.src)) {
                        self.hazard(Hazard::Evaluates(self.source(child)));
                    }
                    let word = words::word(child, self.src);
                    self.assigned(word.clone());
                    command.words.push(word);
                    command.assignments += 1;
                    self.children(child, depth + 1);
                    continue;
                }
                "command_name" => named = true,
                "file_redirect" => {
                    command.words.extend(self.trailing_words(child));
                    self.visit(child, depth + 1);
                    continue;
                }
                "heredoc_redirect" | "herestring_redirect" | "comment" => {
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

    /// `a && b && c` is `list(list(a, b), c)` to the grammar: a long chain nests deep. The
    /// left side is walked down without counting depth, so only real nesting counts.
    fn chain(&mut self, node: Node, depth: usize) {
        let kind = node.kind();
        let mut spine = vec![node];
        while let Some(inner) = spine
            .last()
            .and_then(|n| n.child(0))
            .filter(|c| c.kind() == kind)
        {
            spine.push(inner);
        }
        for (outer, n) in spine.iter().rev().enumerate() {
            let mut cursor = n.walk();
            for (i, child) in n.children(&mut cursor).enumerate() {
                // An outer link's first child is the inner link, already walked.
                if outer > 0 && i == 0 {
                    continue;
                }
                self.visit(child, depth + 1);
            }
        }
    }

    /// A command with redirections after it. The grammar takes the words that follow a
    /// redirection's target for more targets (`rm build 2>/dev/null -r ../x`), but the
    /// shell passes them to the command as arguments, so they are added to its words.
    fn redirected(&mut self, node: Node, depth: usize) {
        let mut cursor = node.walk();
        let children: Vec<Node> = node.children(&mut cursor).collect();
        let mut body = None;
        // What sh runs after a `&>` or `&>>`: it reads `a &>F b >G c` as `a &` then
        // `>F b >G c`, a command of its own made of every word after the operator, up to
        // the next `&>` (which starts another one).
        let mut after_ampersand: Option<(Vec<Word>, String)> = None;
        for child in &children {
            let before = self.out.commands.len();
            self.visit(*child, depth + 1);
            if node.child_by_field_name("body") == Some(*child) && child.kind() == "command" {
                // The command itself is pushed last, after what its words hold.
                body = (self.out.commands.len() > before).then(|| self.out.commands.len() - 1);
            }
            if child.kind() != "file_redirect" {
                continue;
            }
            if backgrounds(*child) {
                self.sh_command(after_ampersand.take());
                after_ampersand = Some((Vec::new(), self.source(*child)));
            }
            let extra = self.trailing_words(*child);
            if extra.is_empty() {
                continue;
            }
            if let Some((words, _)) = after_ampersand.as_mut() {
                words.extend(extra.iter().cloned());
            }
            match body.and_then(|i| self.out.commands.get_mut(i)) {
                Some(command) => command.words.extend(extra),
                None => self.hazard(Hazard::Lexical("words after a redirection".into())),
            }
        }
        self.sh_command(after_ampersand);
    }

    /// Records the command sh runs after a `&>` (see [`Self::redirected`]), so the judge
    /// names what either shell runs.
    fn sh_command(&mut self, command: Option<(Vec<Word>, String)>) {
        if let Some((words, source)) = command
            && !words.is_empty()
        {
            self.out.commands.push(SimpleCommand {
                words,
                assignments: 0,
                source,
            });
        }
    }

    /// The words a redirection's node holds after its target (see [`Self::redirected`]).
    fn trailing_words(&self, redirect: Node) -> Vec<Word> {
        let mut cursor = redirect.walk();
        redirect
            .children_by_field_name("destination", &mut cursor)
            .skip(1)
            .map(|d| words::word(d, self.src))
            .collect()
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
                ">&" | "<&" if duplicate => true,
                ">&" | "<&" => {
                    // bash reads `>&FILE` as `&>FILE`; sh wants a descriptor number.
                    self.hazard(Hazard::Divergence("`>&` with a file name".into()));
                    to_null
                }
                ">" | ">>" | "&>" | "&>>" | ">|" | "<>" => to_null,
                _ => false,
            };
        if !safe {
            self.hazard(Hazard::Redirect(self.source(node)));
        }
        // `10>file`: bash moves descriptor 10; dash takes `10` for an argument.
        let wide = node
            .child_by_field_name("descriptor")
            .is_some_and(|d| words::text(d, self.src).len() > 1);
        if wide {
            self.hazard(Hazard::Divergence("a descriptor above 9 (`10>`)".into()));
        }
        let moves_descriptor = duplicate && matches!(operator, ">&" | "<&");
        if let Some(target) = destination.filter(|_| !moves_descriptor) {
            self.out.redirects.push(target);
        }
    }
}

#[cfg(test)]
mod tests;
