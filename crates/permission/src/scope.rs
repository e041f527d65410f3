//! What a command grant or a command rule covers: a prefix of words (`cargo test …`) or one
//! exact command (`ls -la`). An "always" answer never covers a bare program: `rm` alone
//! would cover `rm -rf ~`; and it covers a prefix only for programs whose first words name
//! a subcommand (`git status …`): for any other program, the exact words shown (`rm build`
//! does not cover `rm build -r ../outside`).
//!
//! Deny and ask rules meet commands through [`CommandScope::reaches`], which errs towards a
//! match: a word that is not a literal may be any words, and options may stand between a
//! program and its subcommand (`git -C . push` is `git push`).

use super::shell::{SimpleCommand, Word};

/// Most subcommand words a remembered prefix takes after the program (`npm run lint`).
const MAX_SUBCOMMANDS: usize = 2;

/// Programs whose first arguments name what they do (`git status`, `cargo test`, `npm run
/// lint`): an "always" answer remembers their prefix. For any other program a word after it
/// is an operand (`rm build`, `cat notes.txt`), so the answer remembers the exact command.
const SUBCOMMAND_PROGRAMS: &[&str] = &[
    "apt",
    "apt-get",
    "az",
    "bazel",
    "brew",
    "bun",
    "bundle",
    "cargo",
    "composer",
    "conda",
    "deno",
    "dnf",
    "docker",
    "dotnet",
    "flutter",
    "gcloud",
    "gem",
    "gh",
    "git",
    "glab",
    "go",
    "gradle",
    "gradlew",
    "helm",
    "hg",
    "just",
    "kubectl",
    "make",
    "mix",
    "mvn",
    "nix",
    "npm",
    "npx",
    "nx",
    "pacman",
    "pip",
    "pip3",
    "pipenv",
    "pnpm",
    "podman",
    "poetry",
    "rake",
    "rustup",
    "svn",
    "swift",
    "systemctl",
    "terraform",
    "tox",
    "turbo",
    "uv",
    "yarn",
    "zypper",
];

/// Whether a rule's words certainly, possibly or never match a command's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum MatchReach {
    /// They cannot.
    Never,
    /// A word of the command that is not a literal may be what the rule names.
    Maybe,
    /// The command is what the rule names.
    Certainly,
}

/// Commands covered by a grant or a rule.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum CommandScope {
    /// Every command whose words start with these.
    Prefix(Vec<Word>),
    /// Only the command with exactly these words.
    Exact(Vec<Word>),
}

impl CommandScope {
    /// What an "always" answer to `command` remembers: its assignments, program and
    /// subcommand words up to the first flag, path or other argument (`cargo test`,
    /// `git status`, `npm run lint`); when there are no subcommand words, the exact command.
    pub fn of(command: &SimpleCommand) -> CommandScope {
        let head = command.assignments + 1;
        let has_subcommands = command.program().is_some_and(|p| {
            let name = p.text.rsplit(['/', '\\']).next().unwrap_or(&p.text);
            p.literal && SUBCOMMAND_PROGRAMS.contains(&name.to_ascii_lowercase().as_str())
        });
        let subcommands = command
            .arguments()
            .iter()
            .take_while(|w| has_subcommands && is_subcommand(w))
            .take(MAX_SUBCOMMANDS)
            .count();
        match command.words.get(..head + subcommands) {
            Some(prefix) if subcommands > 0 => CommandScope::Prefix(prefix.to_vec()),
            _ => CommandScope::Exact(command.words.clone()),
        }
    }

    /// Whether `command` is covered.
    pub(crate) fn covers(&self, command: &SimpleCommand) -> bool {
        match self {
            CommandScope::Prefix(prefix) => command.words.starts_with(prefix),
            CommandScope::Exact(words) => command.words == *words,
        }
    }

    /// Whether a deny or ask rule with this scope may match a command with `words` (see the
    /// module docs): word by word from the program (named by its path or its base name),
    /// where a literal option (`-C`, `--no-pager`, `+nightly`) and the word after it may come
    /// between the rule's words, and a word that is not a literal may stand for any number of
    /// words. With `open`, words read from input may follow (`xargs git`).
    pub(crate) fn reaches(&self, words: &[Word], open: bool) -> MatchReach {
        let (want, prefix) = match self {
            CommandScope::Prefix(words) => (words.as_slice(), true),
            CommandScope::Exact(words) => (words.as_slice(), false),
        };
        let (Some(first), Some(program)) = (want.first(), words.first()) else {
            return MatchReach::Never;
        };
        if !program.literal {
            return MatchReach::Maybe;
        }
        let base = program
            .text
            .rsplit(['/', '\\'])
            .next()
            .unwrap_or(&program.text);
        if program.text != first.text && base != first.text {
            return MatchReach::Never;
        }
        // The positions where the next wanted word may be.
        let mut at = vec![1];
        for wanted in &want[1..] {
            let mut next = Vec::new();
            for i in options_skipped(words, &at) {
                match words.get(i) {
                    Some(w) if !w.literal => return MatchReach::Maybe,
                    Some(w) if w.text == wanted.text => next.push(i + 1),
                    None if open => return MatchReach::Maybe,
                    _ => {}
                }
            }
            if next.is_empty() {
                return MatchReach::Never;
            }
            at = next;
        }
        let mut best = MatchReach::Never;
        for end in at {
            let rest = words.get(end..).unwrap_or(&[]);
            let reach = if prefix || rest.is_empty() {
                MatchReach::Certainly
            } else if rest.iter().all(|w| !w.literal) {
                MatchReach::Maybe
            } else {
                MatchReach::Never
            };
            best = best.max(reach);
        }
        best
    }

    /// The scope as the user reads it: `cargo test …` or `ls -la`.
    pub fn label(&self) -> String {
        let (words, more) = match self {
            CommandScope::Prefix(words) => (words, " …"),
            CommandScope::Exact(words) => (words, ""),
        };
        let joined: Vec<String> = words.iter().map(Word::to_string).collect();
        format!("{}{more}", joined.join(" "))
    }
}

/// `from`, and every position reached from one of them by passing a literal option and,
/// perhaps, its value (each position once, so a long line stays linear).
fn options_skipped(words: &[Word], from: &[usize]) -> Vec<usize> {
    let mut seen = vec![false; words.len() + 2];
    let mut out: Vec<usize> = Vec::with_capacity(from.len());
    for &at in from {
        if !seen[at.min(words.len() + 1)] {
            seen[at.min(words.len() + 1)] = true;
            out.push(at);
        }
    }
    let mut i = 0;
    while let Some(&at) = out.get(i) {
        let option = words
            .get(at)
            .is_some_and(|w| w.literal && w.text.len() > 1 && w.text.starts_with(['-', '+']));
        if option {
            for next in [at + 1, at + 2] {
                if next <= words.len() && !seen[next] {
                    seen[next] = true;
                    out.push(next);
                }
            }
        }
        i += 1;
    }
    out
}

/// A word that names a subcommand rather than a flag, path, pattern or value: letters and
/// digits with `-`, `_`, `:`, `@` or `+` inside (`test`, `run`, `test:unit`).
fn is_subcommand(word: &Word) -> bool {
    let mut chars = word.text.chars();
    word.literal
        && word.text.len() <= 40
        && chars.next().is_some_and(|c| c.is_ascii_alphanumeric())
        && chars.all(|c| c.is_ascii_alphanumeric() || "-_:@+".contains(c))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shell::parse;

    fn scope(line: &str) -> CommandScope {
        CommandScope::of(&parse(line).commands[0])
    }

    fn covers(scope: &CommandScope, line: &str) -> bool {
        parse(line).commands.iter().all(|c| scope.covers(c))
    }

    #[test]
    fn prefixes_stop_at_flags_paths_and_values() {
        assert_eq!(scope("cargo test --all").label(), "cargo test …");
        assert_eq!(scope("git status").label(), "git status …");
        assert_eq!(scope("npm run lint -- --fix").label(), "npm run lint …");
        assert_eq!(scope("git push origin main").label(), "git push origin …");
        assert_eq!(
            scope("RUST_LOG=debug cargo run").label(),
            "RUST_LOG=debug cargo run …"
        );
        assert_eq!(scope("cat src/main.rs").label(), "cat src/main.rs");
        assert_eq!(scope("ls -la").label(), "ls -la");
        assert_eq!(
            scope("python3 manage.py migrate").label(),
            "python3 manage.py migrate"
        );
        assert_eq!(scope("rm -rf 'my dir'").label(), "rm -rf 'my dir'");
        assert!(matches!(scope("ls"), CommandScope::Exact(_)));
    }

    #[test]
    fn coverage_is_by_whole_words() {
        let test = scope("cargo test");
        assert!(covers(&test, "cargo test --all"));
        assert!(covers(&test, "cargo test"));
        assert!(!covers(&test, "cargo testx"));
        assert!(!covers(&test, "cargo publish"));
        assert!(!covers(&test, "RUST_LOG=x cargo test"));
        let exact = scope("ls -la");
        assert!(covers(&exact, "ls -la"));
        assert!(!covers(&exact, "ls -la /"));
        let glob = scope("rm *.o");
        assert!(!covers(&glob, "rm '*.o'"));
    }
}
