//! What a command line touches besides the programs it runs: the folder it runs in and the
//! paths its words and redirections name. A grant or an allow rule covers a command only
//! inside the project: run elsewhere, or naming a path outside (`rm build -r ../x`, `cat
//! /etc/passwd`, `git -C / status`), it asks. A path a deny rule forbids reading may not be
//! named by a command either (`cp .env leak.txt`).
//!
//! Only what the line itself spells can be seen: a program that finds files on its own, a
//! variable's value or a pattern's matches are not (README, "Tools and permissions").

use std::path::{Path, PathBuf};

use super::shell::{CommandLine, Word};
use crate::tools::paths::Place;

/// Something a command line names that may be a path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Named {
    /// A path, resolved (`..` folded, symlinks followed).
    Path(PathBuf),
    /// A word whose value cannot be known before the shell expands it (`$DIR`, `` `pwd` ``),
    /// or that moves the shell somewhere unseen (`cd` alone goes home).
    Unknown(String),
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

/// Everything `line` names that may be a path, at `place` (the command's folder).
pub(super) fn named(line: &CommandLine, place: &Place) -> Vec<Named> {
    let mut out = Vec::new();
    for command in &line.commands {
        let args = command.arguments();
        let program = command.program().map(|p| p.text.as_str()).unwrap_or("");
        let operands = args.iter().filter(|w| !w.text.starts_with('-')).count();
        if CHANGES_FOLDER.contains(&program)
            && (operands == 0 || args.iter().any(|w| w.text == "-"))
        {
            out.push(Named::Unknown(command.source.clone()));
        }
        for word in args {
            out.extend(word_paths(word, place));
        }
    }
    for target in &line.redirects {
        out.extend(word_paths(target, place));
    }
    out
}

/// The paths one word may name.
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
        let folder = match fixed.rfind('/') {
            Some(at) => &fixed[..=at],
            None if fixed.starts_with('~') => fixed,
            None => return None,
        };
        let folder = if folder == "~" { "~/" } else { folder };
        return Some(Named::Path(place.resolve(folder)));
    }
    let text = candidate(&word.text)?;
    if text.is_empty() || text == "-" || text.contains("://") {
        return None;
    }
    Some(Named::Path(place.resolve(text)))
}

/// The part of a literal word that may be a path: the word, or an option's value
/// (`--manifest-path=../x/Cargo.toml`, `-I/usr/include`).
fn candidate(word: &str) -> Option<&str> {
    if !word.starts_with('-') {
        return Some(word);
    }
    if let Some((_, value)) = word.split_once('=') {
        return Some(value);
    }
    let attached = word.get(2..).filter(|_| !word.starts_with("--"))?;
    attached.contains('/').then_some(attached)
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
                .all(|n| match n {
                    Named::Path(p) => p.starts_with(&ws),
                    Named::Unknown(_) => false,
                })
        );
        assert!(names("ls *.rs").is_empty());
    }
}
