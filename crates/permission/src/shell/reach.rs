//! What a command line may run beyond its own simple commands, for deny and ask rules.
//!
//! Over-approximates on purpose: a deny rule had better refuse too much than too little.
//! Where the line may run something no walk can name (a hazard that
//! [hides commands](super::Hazard::hides_commands), a command string nested too deeply), the
//! answer holds [`anything`]: a command whose one word is not a literal, which a rule's
//! words may always match.
//!
//! A program that runs the command in its arguments (`sudo`, `env`, `xargs`, `sh -c`) is
//! marked [`Reached::suffixes`]: each tail of its arguments may be the command it runs, and
//! a rule is matched against each (by the caller, on slices, so a long line costs no copies).
//! Each literal argument of such a program is also read as a command string, once.

use std::collections::HashSet;

use super::{CommandLine, SimpleCommand, Word, git, parse, programs};

/// How many command strings deep [`reachable`] reads (`sh -c "sh -c '…'"`); deeper is
/// [`anything`].
const MAX_UNWRAP: usize = 8;

/// Most commands [`reachable`] lists, and most command strings it reads, for one line before
/// it answers [`anything`] instead (a hostile line must not take long to judge).
const MAX_REACHED: usize = 4096;

/// Most `=` in one value read as settings that may hold a command line.
const MAX_SETTINGS: usize = 16;

/// The placeholder word of [`anything`].
pub(crate) const ANYTHING: &str = "…";

/// Tools that run a command named in their arguments but are not wrappers a grant must
/// never cover (`npx jest`, `uv run pytest`): for deny and ask rules, each tail of their
/// arguments may be a command (`uv run git push`).
const RUNNERS: &[&str] = &[
    "npx",
    "pnpx",
    "bunx",
    "uv",
    "uvx",
    "poetry",
    "pipenv",
    "pnpm",
    "yarn",
    "npm",
    "bun",
    "mise",
    "asdf",
    "direnv",
    "dotenv",
    "cross-env",
    "env-cmd",
    "nix-shell",
    "hyperfine",
    "watchexec",
    "entr",
    "nodemon",
    "concurrently",
    "devbox",
    "pixi",
    "conda",
    "mamba",
    "hatch",
    "rye",
];

/// Programs that add words read from their input to the command they run.
const APPENDING: &[&str] = &["xargs", "parallel"];

/// One command a line may run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reached {
    /// Its words (assignments first, as written).
    pub(crate) words: Vec<Word>,
    /// Whether each tail of its words after the first may be a command it runs.
    pub(crate) suffixes: bool,
    /// With `suffixes`: the first position from which tails may have words from the
    /// program's input added at their end (after `xargs`).
    pub(crate) open_after: Option<usize>,
    /// With `suffixes`, for a runner (`npx`, `uv run`): only tails that start with a literal
    /// word count (`npm test -- $FLAGS` runs no command named by `$FLAGS`).
    pub(crate) literal_tails: bool,
    /// Whether it is not one of the line's own simple commands: read from a command string
    /// (`sh -c '…'`, a setting's value), an alias git resolves, or [`anything`].
    pub(crate) nested: bool,
}

impl Reached {
    fn plain(words: Vec<Word>) -> Reached {
        Reached {
            words,
            suffixes: false,
            open_after: None,
            literal_tails: false,
            nested: true,
        }
    }

    /// The commands to match a rule against: its words, and with `suffixes` each tail of
    /// them, with whether words may be added at the end.
    pub(crate) fn candidates(&self) -> impl Iterator<Item = (&[Word], bool)> {
        let tails = if self.suffixes { self.words.len() } else { 1 };
        (0..tails)
            .filter(|&i| i == 0 || !self.literal_tails || self.words[i].literal)
            .map(|i| {
                let open = self.open_after.is_some_and(|at| i > at);
                (&self.words[i..], open)
            })
    }
}

/// A command that stands for anything: a rule's words may always match it.
pub(crate) fn anything() -> Reached {
    Reached::plain(vec![Word {
        text: ANYTHING.to_string(),
        literal: false,
    }])
}

/// Every command `line` may run, as far as can be seen: its simple commands; for a program
/// that runs code from its arguments, what those arguments would run (`sudo git push` may
/// run `git push`, so may `sh -c 'git push'`, and `echo push | xargs git` may run `git`
/// with any words after it); and [`anything`] when part of the line cannot be seen.
/// Worked out once per line: deny rules and the paths a line names both need it.
pub fn reachable(line: &CommandLine) -> &[Reached] {
    line.reach.get_or_init(|| reach(line))
}

fn reach(line: &CommandLine) -> Vec<Reached> {
    let mut reach = Gathered {
        out: Vec::new(),
        read: HashSet::new(),
        cut: false,
    };
    if line.hazards.iter().any(|h| h.hides_commands()) {
        reach.out.push(anything());
    }
    for command in &line.commands {
        reach.command(command, 0);
    }
    // Values that may be command lines a program runs (`EDITOR=…`, `export PAGER=…`).
    for word in line.assigned.iter().filter(|w| w.literal) {
        if let Some((_, value)) = word.text.split_once('=') {
            reach.string(value, 0);
        }
    }
    reach.out
}

/// What [`reach`] has gathered so far, as it walks a line's commands and the strings they run.
struct Gathered {
    out: Vec<Reached>,
    /// Command strings already read.
    read: HashSet<String>,
    /// Whether [`MAX_REACHED`] was hit (and [`anything`] added).
    cut: bool,
}

impl Gathered {
    fn full(&mut self) -> bool {
        if self.out.len() + self.read.len() < MAX_REACHED {
            return false;
        }
        if !self.cut {
            self.cut = true;
            self.out.push(anything());
        }
        true
    }

    fn command(&mut self, command: &SimpleCommand, depth: usize) {
        if self.full() {
            return;
        }
        let bare = command.words.get(command.assignments..).unwrap_or(&[]);
        // git's own ways of running commands (`git -c core.pager='…' log`, `git bisect run`).
        let mut strings: Vec<String> = Vec::new();
        let mut runs_code = matches!(programs::judge(command), Some(super::Hazard::RunsCode(_)));
        let runner = !runs_code
            && bare
                .first()
                .is_some_and(|p| RUNNERS.contains(&programs::base_name(&p.text).as_str()));
        match git::reach(bare) {
            git::GitReach::Plain => {}
            git::GitReach::Strings {
                strings: more,
                wraps,
                alias,
            } => {
                strings.extend(more);
                runs_code |= wraps;
                if let Some(words) = alias {
                    self.out.push(Reached::plain(words));
                }
            }
            git::GitReach::Anything => self.out.push(anything()),
        }
        if runs_code {
            strings.extend(
                bare.iter()
                    .skip(1)
                    .filter(|w| w.literal)
                    .map(|w| w.text.clone()),
            );
        }
        let appends = bare
            .iter()
            .position(|w| APPENDING.contains(&programs::base_name(&w.text).as_str()));
        let mut variants = vec![command.words.clone()];
        let named = based(bare);
        if named.as_slice() != command.words.as_slice() {
            variants.push(named);
        }
        for words in variants {
            let shift = words.len() - bare.len();
            self.out.push(Reached {
                suffixes: runs_code || runner,
                open_after: appends.map(|at| at + shift),
                literal_tails: runner,
                nested: depth > 0,
                words,
            });
        }
        for text in strings {
            self.string(&text, depth);
        }
    }

    /// Reads `text` as a command string (`sh -c TEXT`), once per line; and, since a value
    /// may be a setting that holds one (`'core.fsmonitor=git push'`, `!git push` for a
    /// credential helper), what follows each `=` and a leading `!` too.
    fn string(&mut self, text: &str, depth: usize) {
        let trimmed = text.trim_matches(|c| c == '\'' || c == '"');
        if let Some(shell) = trimmed.strip_prefix('!') {
            self.one_string(shell, depth);
        }
        for (at, _) in trimmed.match_indices('=').take(MAX_SETTINGS) {
            let value = trimmed[at + 1..].trim_matches(|c| c == '\'' || c == '"');
            self.one_string(value.strip_prefix('!').unwrap_or(value), depth);
        }
        self.one_string(text, depth);
    }

    fn one_string(&mut self, text: &str, depth: usize) {
        if self.full() || !self.read.insert(text.to_string()) {
            return;
        }
        if depth >= MAX_UNWRAP {
            self.out.push(anything());
            return;
        }
        let inner = parse(text);
        if inner.hazards.iter().any(|h| h.hides_commands()) {
            self.out.push(anything());
        }
        for nested in &inner.commands {
            self.command(nested, depth + 1);
        }
    }
}

/// `bare` (a program and its arguments) with the program named by its base name
/// (`/usr/bin/git push` as `git push`).
fn based(bare: &[Word]) -> Vec<Word> {
    let Some((program, args)) = bare.split_first() else {
        return Vec::new();
    };
    let base = program
        .text
        .rsplit(['/', '\\'])
        .next()
        .unwrap_or(&program.text);
    let mut words = vec![Word {
        text: base.to_string(),
        literal: program.literal,
    }];
    words.extend_from_slice(args);
    words
}
