//! What a command line touches besides the programs it runs: the folder it runs in and the
//! paths its words and redirections name. A grant or an allow rule covers a command only
//! inside the project: run elsewhere, or naming a path outside (`rm build -r ../x`, `cat
//! /etc/passwd`, `git -C / status`), it asks. A path a deny rule forbids reading may not be
//! named by a command either (`cp .env leak.txt`), nor by a command string it runs (`sh -c
//! 'cat .env'`).
//!
//! Only what the line itself spells can be seen: a program that finds files on its own, a
//! variable's value or a pattern's matches are not (README, "Tools and permissions"). Where
//! the line may work in a folder tandem cannot follow (`cd "$DIR"`, `cd a b`, `eval cd x`, a
//! `CDPATH`), later relative paths could be anything: [`Named::Lost`].

mod words;

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use super::shell::{CommandLine, SimpleCommand, Word, git, reachable};
use crate::platform::named::PathBase;

/// Something a command line names that may be a path.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(super) enum Named {
    /// A path, resolved (`..` and symlinks as the kernel follows them).
    Path(PathBuf),
    /// A word whose value cannot be known before the shell expands it (`$DIR`, `~user`).
    Unknown(String),
    /// The line may move to a folder tandem cannot follow (the command's source): its later
    /// relative paths could name anything.
    Lost(String),
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

/// Most folders [`named`] follows a line into with `cd`, and most words it resolves; past
/// either, the line's folder counts as lost.
const MAX_PLACES: usize = 16;
const MAX_RESOLVED: usize = 4096;

/// Everything `line` names that may be a path, at `place` (the command's folder). After a
/// `cd DIR` the shell resolves relative paths in DIR, so every path from then on is resolved
/// in each folder the line may be in; a `cd` inside `( … )` or a substitution moves only the
/// commands there. Command strings a wrapper runs (`sh -c '…'`) are read too, at `place`.
pub(super) fn named(line: &CommandLine, place: &PathBase) -> Vec<Named> {
    let mut found = Found::default();
    let mut places = vec![place.clone()];
    let mut starts: HashMap<usize, Vec<usize>> = HashMap::new();
    for range in line.subshells.iter().filter(|r| !r.is_empty()) {
        starts.entry(range.start).or_default().push(range.end);
    }
    // Subshells the walk is in: where each ends, and how many folders there were before.
    let mut inside: Vec<(usize, usize)> = Vec::new();
    for (i, command) in line.commands.iter().enumerate() {
        while let Some(&(end, kept)) = inside.last()
            && end <= i
        {
            places.truncate(kept);
            inside.pop();
        }
        if let Some(ends) = starts.get_mut(&i) {
            // Outer ones first, so the innermost ends first.
            ends.sort_unstable_by(|a, b| b.cmp(a));
            inside.extend(ends.iter().map(|end| (*end, places.len())));
        }
        found.command(command, &places);
        if let Some(moved) = moves(command, &places, &mut found) {
            for at in moved {
                if places.iter().any(|p| p.cwd == at.cwd) {
                    continue;
                }
                if places.len() >= MAX_PLACES {
                    found.add(Named::Lost(command.source.clone()));
                    break;
                }
                places.push(at);
            }
        }
    }
    for target in &line.redirects {
        found.word(target, &places);
    }
    if line.assigned.iter().any(|w| w.text.starts_with("CDPATH=")) {
        found.add(Named::Lost("CDPATH".into()));
    }
    // What command strings run (`sh -c 'cat .env'`), read at the start; the line's own
    // commands (wrapped ones included: `sudo cat .env`) were read above.
    let start = [place.clone()];
    for reached in reachable(line).iter().filter(|r| r.nested) {
        found.words(reached.words.iter().skip(1), &start);
    }
    found.out
}

/// Where `command` moves the shell, if it is a `cd`, `pushd` or `popd` tandem can follow:
/// one literal folder, reached logically (`a/link/..` is `a`, as `cd` reads it) and
/// physically. One it cannot follow loses the line's folder (recorded in `found`).
fn moves(command: &SimpleCommand, places: &[PathBase], found: &mut Found) -> Option<Vec<PathBase>> {
    let program = command.program().map(|p| p.text.as_str()).unwrap_or("");
    let args = command.arguments();
    if !CHANGES_FOLDER.contains(&program) {
        // `command cd x`, `eval cd x`, `builtin cd x`: a move tandem does not follow.
        if args
            .iter()
            .any(|w| CHANGES_FOLDER.contains(&w.text.as_str()))
        {
            found.add(Named::Lost(command.source.clone()));
        }
        return None;
    }
    let operands: Vec<&Word> = args
        .iter()
        .filter(|w| !w.text.starts_with('-') || w.text == "-")
        .collect();
    let [dir] = operands.as_slice() else {
        // `cd` alone goes home, `cd a b` is read differently by each shell.
        found.add(Named::Lost(command.source.clone()));
        return None;
    };
    if !dir.literal || dir.text == "-" {
        found.add(Named::Lost(command.source.clone()));
        return None;
    }
    let mut moved = Vec::new();
    for at in places {
        if let [Named::Path(cwd)] = words::paths(dir, at).as_slice() {
            moved.push(PathBase {
                cwd: cwd.clone(),
                ..at.clone()
            });
        }
        let logical = crate::platform::named::lexical(&at.cwd.join(&dir.text));
        moved.push(PathBase {
            cwd: logical,
            ..at.clone()
        });
    }
    Some(moved)
}

/// What a line names, each once, with each word resolved once per folder.
#[derive(Default)]
struct Found {
    out: Vec<Named>,
    seen: HashSet<Named>,
    resolved: HashSet<(PathBuf, Word)>,
}

impl Found {
    fn add(&mut self, named: Named) {
        if self.seen.insert(named.clone()) {
            self.out.push(named);
        }
    }

    /// Every word of `command` but its program (assignments and arguments), and whether it
    /// changes git's config.
    fn command(&mut self, command: &SimpleCommand, places: &[PathBase]) {
        let bare = command.words.get(command.assignments..).unwrap_or(&[]);
        if git::changes_config(bare) {
            self.add(Named::GitConfig(command.source.clone()));
        }
        let words = command
            .words
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != command.assignments)
            .map(|(_, w)| w);
        self.words(words, places);
    }

    fn words<'a>(&mut self, words: impl Iterator<Item = &'a Word>, places: &[PathBase]) {
        for word in words {
            self.word(word, places);
        }
    }

    fn word(&mut self, word: &Word, places: &[PathBase]) {
        for at in places {
            if self.resolved.len() >= MAX_RESOLVED {
                self.add(Named::Lost("too many paths to follow".into()));
                return;
            }
            if self.resolved.insert((at.cwd.clone(), word.clone())) {
                for named in words::paths(word, at) {
                    self.add(named);
                }
            }
        }
    }
}

/// Whether `path` is a device nobody needs to be asked about.
pub(super) fn harmless(path: &Path) -> bool {
    HARMLESS.iter().any(|h| path == Path::new(h))
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use crate::shell::parse;

    #[test]
    fn words_options_patterns_and_redirections() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().canonicalize().unwrap();
        let place = PathBase {
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
        assert!(names("cat \"$PWD/.env\"").contains(&Named::Path(ws.join(".env"))));
        assert!(names("cat /proc/self/cwd/.env").contains(&Named::Path(ws.join(".env"))));
        assert!(matches!(names("cd && ls")[0], Named::Lost(_)));
        for line in [
            "cd a b && ls",
            "cd \"$X\" && ls",
            "eval cd a; ls",
            "CDPATH=/ cd a; ls",
            "cd sub*; ls",
        ] {
            assert!(
                names(line).iter().any(|n| matches!(n, Named::Lost(_))),
                "{line}"
            );
        }
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
        assert!(names("make all -sC../o").contains(&Named::Path(parent.join("o"))));
        assert!(names("make O=/etc").contains(&path("/etc")));
        assert!(names("cat a://../x").contains(&Named::Path(ws.join("x"))));
        assert!(names("git show HEAD:.env").contains(&Named::Path(ws.join(".env"))));
        assert!(names("curl -d @.env x").contains(&Named::Path(ws.join(".env"))));
        assert!(names("sh -c 'cat .env'").contains(&Named::Path(ws.join(".env"))));
        std::fs::create_dir_all(ws.join("a")).unwrap();
        assert!(names("cd a && cat ../../x").contains(&Named::Path(parent.join("x"))));
        // A `cd` in a subshell moves only the subshell.
        assert!(!names("(cd a) && cat ../../y").contains(&Named::Path(parent.join("y"))));
        assert!(names("(cd a && cat ../../y)").contains(&Named::Path(parent.join("y"))));
        assert!(names("(cd a/b); cd a && cat ../../z").contains(&Named::Path(parent.join("z"))));
        assert!(matches!(
            names("git config core.fsmonitor x")[0],
            Named::GitConfig(_)
        ));
    }
}
