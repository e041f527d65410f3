//! What a command line touches besides the programs it runs: the folder it runs in and the
//! paths its words and redirections name. A grant or an allow rule covers a command only
//! inside the project: run elsewhere, or naming a path outside (`rm build -r ../x`, `cat
//! /etc/passwd`, `git -C / status`), it asks. A path a deny rule forbids reading may not be
//! named by a command either (`cp .env leak.txt`).
//!
//! Only what the line itself spells can be seen: a program that finds files on its own, a
//! variable's value or a pattern's matches are not (README, "Tools and permissions").

use std::path::{Path, PathBuf};

use super::shell::{CommandLine, Word, git};
use crate::tools::paths::Place;

/// Something a command line names that may be a path.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(super) enum Named {
    /// A path, resolved (`..` folded, symlinks followed).
    Path(PathBuf),
    /// A word whose value cannot be known before the shell expands it (`$DIR`, `` `pwd` ``),
    /// or that moves the shell somewhere unseen (`cd` alone goes home).
    Unknown(String),
    /// git's config, which `git config` changes without naming it (the command's source).
    GitConfig(String),
}

/// Devices outside every project that name no file worth asking about.
const HARMLESS: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/stdin",
    "/dev/stdout",
    "/dev/stderr",
];

/// Commands that change the shell's folder, so later relative paths mean something else.
const CHANGES_FOLDER: &[&str] = &["cd", "pushd", "popd"];

/// Everything `line` names that may be a path, at `place` (the command's folder). After a
/// `cd DIR` the shell resolves relative paths in DIR, so every path from then on is resolved
/// in each folder the line may be in (the grammar's order is the shell's, but a `cd` in a
/// subshell ends with it: both are considered).
pub(super) fn named(line: &CommandLine, place: &Place) -> Vec<Named> {
    let mut found = Found::default();
    let mut places = vec![place.clone()];
    // Subshells the walk is in: where each ends, and how many folders there were before.
    let mut inside: Vec<(usize, usize)> = Vec::new();
    for (i, command) in line.commands.iter().enumerate() {
        while let Some(&(end, kept)) = inside.last()
            && end <= i
        {
            places.truncate(kept);
            inside.pop();
        }
        let mut entered: Vec<usize> = line
            .subshells
            .iter()
            .filter(|r| r.start == i && !r.is_empty())
            .map(|r| r.end)
            .collect();
        // Outer ones first, so the innermost ends first.
        entered.sort_unstable_by(|a, b| b.cmp(a));
        inside.extend(entered.into_iter().map(|end| (end, places.len())));
        let args = command.arguments();
        let program = command.program().map(|p| p.text.as_str()).unwrap_or("");
        let operands: Vec<&Word> = args.iter().filter(|w| !w.text.starts_with('-')).collect();
        let moves = CHANGES_FOLDER.contains(&program);
        let bare = command.words.get(command.assignments..).unwrap_or(&[]);
        if git::changes_config(bare) {
            found.add(Named::GitConfig(command.source.clone()));
        }
        if moves && (operands.is_empty() || args.iter().any(|w| w.text == "-")) {
            found.add(Named::Unknown(command.source.clone()));
        }
        // Every word but the program: assignments (`O=/etc make`) and arguments.
        let words = command
            .words
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != command.assignments)
            .map(|(_, w)| w);
        for word in words {
            found.word(word, &places);
        }
        if moves && let [dir] = operands.as_slice() {
            let moved: Vec<Place> = places
                .iter()
                .filter_map(|at| match word_paths(dir, at) {
                    Some(Named::Path(cwd)) => Some(Place { cwd, ..at.clone() }),
                    _ => None,
                })
                .collect();
            for at in moved {
                if places.iter().any(|p| p.cwd == at.cwd) {
                    continue;
                }
                if places.len() >= MAX_PLACES {
                    found.add(Named::Unknown(command.source.clone()));
                    break;
                }
                places.push(at);
            }
        }
    }
    for target in &line.redirects {
        found.word(target, &places);
    }
    found.out
}

/// Most folders [`named`] follows a line into with `cd`; a line that changes folder more
/// often names an unknown folder.
const MAX_PLACES: usize = 16;

/// What a line names, each once, with each word resolved once per folder.
#[derive(Default)]
struct Found {
    out: Vec<Named>,
    seen: std::collections::HashSet<Named>,
    resolved: std::collections::HashSet<(usize, Word)>,
}

impl Found {
    fn add(&mut self, named: Named) {
        if self.seen.insert(named.clone()) {
            self.out.push(named);
        }
    }

    fn word(&mut self, word: &Word, places: &[Place]) {
        for (i, at) in places.iter().enumerate() {
            if self.resolved.insert((i, word.clone()))
                && let Some(named) = word_paths(word, at)
            {
                self.add(named);
            }
        }
    }
}

/// The path one word may name at `place`.
fn word_paths(word: &Word, place: &Place) -> Option<Named> {
    if !word.literal {
        if word.text.contains(['$', '`']) {
            return Some(Named::Unknown(word.text.clone()));
        }
        // A pattern or a tilde: the folder before its first wildcard.
        let plain: String = word
            .text
            .chars()
            .filter(|c| !matches!(c, '\'' | '"' | '\\'))
            .collect();
        let fixed = plain.split(['*', '?', '[', '{']).next().unwrap_or("");
        let fixed = candidate(fixed)?;
        let folder = match fixed.rfind('/') {
            Some(at) => &fixed[..=at],
            None if fixed.starts_with('~') => fixed,
            None => return None,
        };
        return Some(at_home(folder, word, place));
    }
    let text = candidate(&word.text)?;
    if text.is_empty() || text == "-" {
        return None;
    }
    Some(at_home(text, word, place))
}

/// `text` resolved at `place`; a tilde is the home folder only as `~` or `~/…`: `~user`,
/// `~+` and `~-` name folders tandem does not know.
fn at_home(text: &str, word: &Word, place: &Place) -> Named {
    match text.strip_prefix('~') {
        Some("") => Named::Path(place.resolve("~/")),
        Some(rest) if !rest.starts_with('/') => Named::Unknown(word.text.clone()),
        _ => Named::Path(plain_name(text, place).unwrap_or_else(|| place.resolve(text))),
    }
}

/// The most common word, a plain name in the folder (`status`, `README.md`), without
/// resolving a whole path: one look at the disk says it is nothing or no link.
fn plain_name(text: &str, place: &Place) -> Option<PathBuf> {
    if text.contains(['/', '\\']) || text == ".." || text == "." {
        return None;
    }
    let path = place.cwd.join(text);
    match std::fs::symlink_metadata(&path) {
        Ok(meta) if !meta.file_type().is_symlink() => Some(path),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Some(path),
        _ => None,
    }
}

/// The part of a word that may be a path: the word, an option's value
/// (`--manifest-path=../x/Cargo.toml`, `-I/usr/include`, `-C..`), or an assignment's
/// (`O=/etc`).
fn candidate(word: &str) -> Option<&str> {
    if let Some(long) = word.strip_prefix("--") {
        return long.split_once('=').map(|(_, value)| value);
    }
    if let Some(short) = word.strip_prefix('-') {
        return match short.split_once('=') {
            Some((_, value)) => Some(value),
            None => short.get(1..).filter(|v| !v.is_empty()),
        };
    }
    match word.split_once('=') {
        Some((name, value)) if !name.is_empty() && !name.contains('/') => Some(value),
        _ => Some(word),
    }
}

/// Whether `path` is a device nobody needs to be asked about.
pub(super) fn harmless(path: &Path) -> bool {
    HARMLESS.iter().any(|h| path == Path::new(h))
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use crate::permission::shell::parse;

    #[test]
    fn words_options_patterns_and_redirections() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().canonicalize().unwrap();
        let place = Place {
            cwd: ws.clone(),
            home: Some(PathBuf::from("/home/u")),
            folders: Vec::new(),
        };
        let names = |line: &str| named(&parse(line), &place);
        let path = |p: &str| Named::Path(PathBuf::from(p));
        let parent = ws.parent().unwrap().to_path_buf();
        assert!(names("rm build -r ../outside").contains(&Named::Path(parent.join("outside"))));
        assert!(names("cat /etc/passwd").contains(&path("/etc/passwd")));
        assert!(names("cargo test --manifest-path=/x/Cargo.toml").contains(&path("/x/Cargo.toml")));
        assert!(names("gcc -I/usr/include a.c").contains(&path("/usr/include")));
        assert!(names("ls ~/.ssh/*").contains(&path("/home/u/.ssh")));
        assert!(names("cat < /etc/hosts").contains(&path("/etc/hosts")));
        assert!(names("rm $DIR").contains(&Named::Unknown("$DIR".into())));
        assert!(matches!(names("cd && ls")[0], Named::Unknown(_)));
        assert!(
            names("git clone https://example.com/x.git")
                .iter()
                .all(|n| matches!(n, Named::Path(p) if p.starts_with(&ws)))
        );
        assert!(names("ls *.rs").is_empty());
        assert!(
            names("git diff --no-index ~root/.bashrc x")
                .contains(&Named::Unknown("~root/.bashrc".into()))
        );
        assert!(names("make test -C..").contains(&Named::Path(parent.clone())));
        assert!(names("make O=/etc").contains(&path("/etc")));
        assert!(names("cat a://../x").contains(&Named::Path(ws.join("x"))));
        std::fs::create_dir_all(ws.join("a")).unwrap();
        assert!(names("cd a && cat ../../x").contains(&Named::Path(parent.join("x"))));
        assert!(matches!(
            names("git config core.fsmonitor x")[0],
            Named::GitConfig(_)
        ));
    }
}
