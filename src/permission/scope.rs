//! What a command grant or a command rule covers: a prefix of words (`cargo test …`) or one
//! exact command (`ls -la`). An "always" answer never covers a bare program: `rm` alone
//! would cover `rm -rf ~`.

use super::shell::{SimpleCommand, Word};

/// Most subcommand words a remembered prefix takes after the program (`npm run lint`).
const MAX_SUBCOMMANDS: usize = 2;

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
        let subcommands = command
            .arguments()
            .iter()
            .take_while(|w| is_subcommand(w))
            .take(MAX_SUBCOMMANDS)
            .count();
        match command.words.get(..head + subcommands) {
            Some(prefix) if subcommands > 0 => CommandScope::Prefix(prefix.to_vec()),
            _ => CommandScope::Exact(command.words.clone()),
        }
    }

    /// Whether `command` is covered.
    pub fn covers(&self, command: &SimpleCommand) -> bool {
        match self {
            CommandScope::Prefix(prefix) => command.words.starts_with(prefix),
            CommandScope::Exact(words) => command.words == *words,
        }
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
    use crate::permission::shell::parse;

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
