//! What a `git` command may do besides what its subcommand names. git is the program deny
//! rules name most (`git push`) and the one users grant most (`git log …`), and it runs other
//! commands and writes files in ways a shell parser cannot see:
//!
//! - an alias (`git -c alias.p=push p`, or `git q` after `git config alias.q push`) or a
//!   `git-NAME` program on the PATH: a subcommand git does not have may run anything;
//! - configuration values that name programs (`-c core.sshCommand=…`, `core.pager`,
//!   `core.fsmonitor`, `credential.helper='!…'`), and `--exec-path`, `--config-env`;
//! - options whose value is a command (`rebase --exec`, `difftool --extcmd`, `grep -O`,
//!   `fetch --upload-pack`, `push --receive-pack`, `filter-branch --tree-filter`), also
//!   attached (`-x'…'`), in a cluster (`-kx`) or abbreviated (`--exe=`, `--upload-pa=`), as git
//!   takes them; and `bisect run`, `submodule foreach`, `for-each-repo`, which run what
//!   follows;
//! - options that write files (`--output`), and commands that write git's own config (`git
//!   config`, `git init`, `clone --template`).
//!
//! [`reach`] tells deny and ask rules what more may run; [`hazard`] keeps a grant on `git log
//! …` from covering `git log --output=Makefile` or `git fetch --upload-pack=…`.

use super::{Hazard, Word, programs};

/// git's own commands (`git --list-cmds=main`). Any other name is an alias or a `git-NAME`
/// program, which may run anything.
const BUILTINS: &str = "add am annotate apply archimport archive bisect blame branch bugreport \
    bundle cat-file check-attr check-ignore check-mailmap check-ref-format checkout \
    checkout-index cherry cherry-pick clean clone column commit commit-graph commit-tree config \
    count-objects credential credential-cache credential-store cvsexportcommit cvsimport \
    cvsserver daemon describe diagnose diff diff-files diff-index diff-tree difftool \
    fast-export fast-import fetch fetch-pack filter-branch fmt-merge-msg for-each-ref \
    for-each-repo format-patch fsck fsck-objects gc get-tar-commit-id grep hash-object help \
    hook http-backend http-fetch http-push imap-send index-pack init init-db instaweb \
    interpret-trailers log ls-files ls-remote ls-tree mailinfo mailsplit maintenance merge \
    merge-base merge-file merge-index merge-octopus merge-one-file merge-ours merge-recursive \
    merge-resolve merge-subtree merge-tree mergetool mktag mktree multi-pack-index mv name-rev \
    notes p4 pack-objects pack-redundant pack-refs patch-id prune prune-packed pull push \
    quiltimport range-diff read-tree rebase receive-pack reflog refs remote repack replace \
    replay request-pull rerere reset restore rev-list rev-parse revert rm send-email send-pack \
    shell shortlog show show-branch show-index show-ref sparse-checkout stage stash status \
    stripspace submodule svn switch symbolic-ref tag unpack-file unpack-objects update-index \
    update-ref update-server-info upload-archive upload-pack var verify-commit verify-pack \
    verify-tag version whatchanged worktree write-tree";

/// Subcommands that do what `push` does, for a rule that names `git push`.
const PUSHES: &[&str] = &["send-pack", "http-push"];

/// Options of `git` itself that take a value in the next word.
const VALUED: &[&str] = &[
    "-C",
    "-c",
    "--git-dir",
    "--work-tree",
    "--namespace",
    "--config-env",
];

/// Long options, of any subcommand, whose value is a command git runs (git also takes any
/// unambiguous start of one, so `--exe` is `--exec`).
const COMMAND_LONG: &[&str] = &[
    "exec",
    "extcmd",
    "upload-pack",
    "receive-pack",
    "open-files-in-pager",
    "tool-cmd",
    "env-filter",
    "tree-filter",
    "index-filter",
    "parent-filter",
    "msg-filter",
    "commit-filter",
    "tag-name-filter",
    "config",
    "template",
];

/// Short options whose value is a command, by subcommand.
const COMMAND_SHORT: &[(&str, char)] = &[
    ("rebase", 'x'),
    ("difftool", 'x'),
    ("grep", 'O'),
    ("clone", 'u'),
    ("clone", 'c'),
    ("ls-remote", 'u'),
    ("archive", 'x'),
];

/// Long options that write a file (`git log --output=FILE`).
const WRITES_LONG: &[&str] = &["output", "output-directory"];

/// What a git command may run besides itself.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum GitReach {
    /// Nothing more than its words say (or it is not git).
    Plain,
    /// These command strings, too; with `wraps`, each tail of its arguments may be a command
    /// it runs (`bisect run CMD…`).
    Strings {
        /// Command lines in its words.
        strings: Vec<String>,
        /// Whether what follows the subcommand is itself a command.
        wraps: bool,
        /// For a subcommand that pushes under another name (`send-pack`): the command it
        /// amounts to.
        alias: Option<Vec<Word>>,
    },
    /// Anything: an alias, a `git-NAME` program, or git told where its programs are.
    Anything,
}

/// A git command taken apart: where its subcommand is, and the values of its `-c` options.
struct Parsed<'a> {
    args: &'a [Word],
    /// Index in `args` of the subcommand, when there is one.
    subcommand: Option<usize>,
    /// The values `-c` sets.
    settings: Vec<String>,
}

/// `bare` (a program and its arguments) as a git command; `Err(())` when git may run
/// anything; `Ok(None)` when it is not git. A program named `git-push` is `git push`.
fn parse(bare: &[Word]) -> Result<Option<Parsed<'_>>, ()> {
    let Some((program, args)) = bare.split_first() else {
        return Ok(None);
    };
    let name = programs::base_name(&program.text);
    if !program.literal || (name != "git" && !name.starts_with("git-")) {
        return Ok(None);
    }
    if name.starts_with("git-") {
        // A program of git's own (`libexec/git-core/git-push`): its subcommand is its name.
        return Ok(Some(Parsed {
            args,
            subcommand: None,
            settings: Vec::new(),
        }));
    }
    let mut settings = Vec::new();
    let mut i = 0;
    while let Some(word) = args.get(i) {
        if !word.literal {
            return Err(());
        }
        let text = word.text.as_str();
        if !text.starts_with('-') {
            return Ok(Some(Parsed {
                args,
                subcommand: Some(i),
                settings,
            }));
        }
        let (option, mut value) = match text.split_once('=') {
            Some((o, v)) if o.starts_with("--") => (o, Some(v.to_string())),
            _ if text.starts_with("-c") && text.len() > 2 => ("-c", Some(text[2..].to_string())),
            _ if text.starts_with("-C") && text.len() > 2 => ("-C", Some(text[2..].to_string())),
            _ => (text, None),
        };
        if option.starts_with("--exec-path") || option.starts_with("--config-env") {
            return Err(());
        }
        if value.is_none() && VALUED.contains(&option) {
            i += 1;
            match args.get(i) {
                Some(w) if w.literal => value = Some(w.text.clone()),
                Some(_) => return Err(()),
                None => {}
            }
        }
        if option == "-c"
            && let Some(setting) = value
        {
            let (key, value) = setting.split_once('=').unwrap_or((&setting, ""));
            if key.to_ascii_lowercase().starts_with("alias.") {
                return Err(());
            }
            settings.push(value.to_string());
        }
        i += 1;
    }
    Ok(Some(Parsed {
        args,
        subcommand: None,
        settings,
    }))
}

impl Parsed<'_> {
    fn subcommand(&self) -> Option<&str> {
        self.subcommand
            .and_then(|i| self.args.get(i))
            .map(|w| w.text.as_str())
    }

    fn rest(&self) -> &[Word] {
        match self.subcommand {
            Some(i) => &self.args[i + 1..],
            None => &[],
        }
    }

    /// The command-line values of the subcommand's options that run commands: `Some(None)`
    /// for one whose value cannot be read.
    fn command_values(&self) -> Vec<Option<String>> {
        let subcommand = self.subcommand().unwrap_or("");
        let rest = self.rest();
        let mut values = Vec::new();
        for (i, word) in rest.iter().enumerate() {
            let next = || {
                rest.get(i + 1)
                    .filter(|w| w.literal)
                    .map(|w| w.text.clone())
            };
            if let Some(long) = word.text.strip_prefix("--") {
                let (name, value) = match long.split_once('=') {
                    Some((n, v)) => (n, Some(v.to_string())),
                    None => (long, None),
                };
                if name.len() >= 2 && COMMAND_LONG.iter().any(|o| o.starts_with(name)) {
                    values.push(value.or_else(next));
                }
            } else if let Some(short) = word.text.strip_prefix('-') {
                // A cluster of flags: the option's value is what follows its letter.
                for (at, letter) in short.char_indices() {
                    if COMMAND_SHORT.contains(&(subcommand, letter)) {
                        let attached = &short[at + letter.len_utf8()..];
                        values.push(match attached {
                            "" => next(),
                            v => Some(v.to_string()),
                        });
                        break;
                    }
                    if !letter.is_ascii_alphabetic() {
                        break;
                    }
                }
            }
        }
        values
    }
}

/// What `bare` (a program and its arguments, no assignments) may run if it is git.
pub(crate) fn reach(bare: &[Word]) -> GitReach {
    let parsed = match parse(bare) {
        Ok(Some(parsed)) => parsed,
        Ok(None) => return GitReach::Plain,
        Err(()) => return GitReach::Anything,
    };
    let Some(subcommand) = parsed.subcommand() else {
        // `git-push origin`, git's own program for a subcommand, is `git push origin`.
        let named = bare
            .first()
            .map(|p| programs::base_name(&p.text))
            .and_then(|n| n.strip_prefix("git-").map(str::to_string));
        return match named {
            Some(name) => {
                let mut words = vec![Word::literal("git"), Word::literal(name)];
                words.extend_from_slice(parsed.args);
                GitReach::Strings {
                    strings: Vec::new(),
                    wraps: false,
                    alias: Some(words),
                }
            }
            None => GitReach::Plain,
        };
    };
    if !builtin(subcommand) {
        return GitReach::Anything;
    }
    let mut strings = parsed.settings.clone();
    for value in parsed.command_values() {
        match value {
            Some(v) => strings.push(v),
            None => return GitReach::Anything,
        }
    }
    let rest = parsed.rest();
    let literal = || rest.iter().filter(|w| w.literal).map(|w| w.text.clone());
    let wraps = matches!(subcommand, "bisect" | "submodule" | "for-each-repo");
    if wraps || subcommand == "config" {
        // The command after `run` / `foreach`; every value `config` sets.
        strings.extend(literal());
    }
    // `ext::CMD` addresses run CMD.
    strings.extend(
        rest.iter()
            .filter_map(|w| w.text.strip_prefix("ext::").map(str::to_string)),
    );
    let alias = PUSHES.contains(&subcommand).then(|| {
        let mut words = vec![Word::literal("git"), Word::literal("push")];
        words.extend_from_slice(rest);
        words
    });
    GitReach::Strings {
        strings,
        wraps,
        alias,
    }
}

/// Why no grant or allow rule may cover `bare` if it is git, if none may: an option that runs
/// a command or writes a file.
pub(crate) fn hazard(bare: &[Word]) -> Option<Hazard> {
    let Ok(Some(parsed)) = parse(bare) else {
        return None;
    };
    let subcommand = parsed.subcommand().unwrap_or("");
    if !parsed.command_values().is_empty() {
        return Some(Hazard::RunsCode(format!("git {subcommand}")));
    }
    parsed
        .rest()
        .iter()
        .find(|w| {
            let long = w.text.strip_prefix("--").unwrap_or("");
            let name = long.split('=').next().unwrap_or("");
            name.len() >= 3 && WRITES_LONG.iter().any(|o| o.starts_with(name))
        })
        .map(|w| Hazard::Redirect(w.text.clone()))
}

/// Whether `bare` is a git command that may change git's own config: a `git config` that is
/// not a read (`--get`, `--list`, `get`, `list`, …), `git init`, or a `clone` given a
/// template or settings. Config names programs git runs later (`core.fsmonitor`, an alias).
pub(crate) fn changes_config(bare: &[Word]) -> bool {
    let Ok(Some(parsed)) = parse(bare) else {
        return false;
    };
    let rest = parsed.rest();
    match parsed.subcommand() {
        Some("init" | "init-db") => true,
        Some("clone") => !parsed.command_values().is_empty(),
        Some("config") => {
            const READS: &[&str] = &[
                "get",
                "list",
                "--get",
                "--get-all",
                "--get-regexp",
                "--get-urlmatch",
                "--list",
                "-l",
                "--get-color",
                "--get-colorbool",
            ];
            if rest.iter().any(|w| READS.contains(&w.text.as_str())) {
                return false;
            }
            // `git config NAME` alone reads; a value or an option that edits changes.
            let operands = rest.iter().filter(|w| !w.text.starts_with('-')).count();
            operands >= 2
                || rest
                    .iter()
                    .any(|w| w.text.starts_with('-') && w.text != "--global" && w.text != "--local")
        }
        _ => false,
    }
}

/// Whether `name` is one of git's own commands.
fn builtin(name: &str) -> bool {
    BUILTINS.split_whitespace().any(|b| b == name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shell::parse as parse_line;

    fn words(line: &str) -> Vec<Word> {
        parse_line(line).commands[0].words.clone()
    }

    fn strings(line: &str) -> Vec<String> {
        match reach(&words(line)) {
            GitReach::Strings { strings, .. } => strings,
            other => panic!("{line}: {other:?}"),
        }
    }

    #[test]
    fn aliases_and_programs_git_runs() {
        assert_eq!(strings("git status --short"), Vec::<String>::new());
        assert_eq!(strings("git -C sub log -1"), Vec::<String>::new());
        assert_eq!(strings("/usr/bin/git push"), Vec::<String>::new());
        for line in [
            "git -c alias.p=push p",
            "git -calias.p=push p",
            "git -c Alias.p=push p",
            "git q origin",
            "git --exec-path=/tmp/x status",
            "git --config-env=alias.p=P p",
            "git $SUB",
            "git rebase --exec \"$X\" HEAD",
        ] {
            assert_eq!(reach(&words(line)), GitReach::Anything, "{line}");
        }
        let has = |line: &str, want: &str| {
            assert!(
                strings(line).contains(&want.to_string()),
                "{line}: {:?}",
                strings(line)
            );
        };
        has("git -c core.sshCommand='git push' fetch", "git push");
        has("git rebase --exec 'git push' HEAD~3", "git push");
        has("git rebase -x 'git push' HEAD~3", "git push");
        has("git rebase -x'git push' HEAD~3", "git push");
        has("git rebase -kx'git push' HEAD~3", "git push");
        has("git rebase --exe='git push' HEAD~3", "git push");
        has("git fetch --upload-pa='git push' .", "git push");
        has("git grep -O'git push' hi", "git push");
        has("git config core.fsmonitor 'git push'", "git push");
        has("git difftool --extcmd='git push'", "git push");
        has("git ls-remote 'ext::git push'", "git push");
        assert!(matches!(
            reach(&words("git bisect run git push")),
            GitReach::Strings { wraps: true, .. }
        ));
        assert!(matches!(
            reach(&words("git send-pack ../r HEAD")),
            GitReach::Strings { alias: Some(_), .. }
        ));
        assert!(matches!(
            reach(&words("/usr/lib/git-core/git-push origin")),
            GitReach::Strings { alias: Some(w), .. } if w[1].text == "push"
        ));
    }

    #[test]
    fn options_that_run_code_or_write_files_are_hazards() {
        for line in [
            "git log -1 --output=Makefile",
            "git diff --output build.rs HEAD",
            "git fetch origin --upload-pack='touch X'",
            "git push origin --receive-pack='touch X' HEAD",
            "git grep -O'touch X' hi",
            "git difftool -y -x 'touch X'",
        ] {
            assert!(hazard(&words(line)).is_some(), "{line}");
        }
        for line in [
            "git log -1",
            "git diff HEAD~1",
            "git rebase -i HEAD~3",
            "git clean -fdx",
        ] {
            assert!(hazard(&words(line)).is_none(), "{line}");
        }
    }

    #[test]
    fn config_reads_and_writes() {
        let changes = |line: &str| changes_config(&words(line));
        for line in [
            "git config core.fsmonitor x",
            "git config --unset x",
            "git -C . config alias.q push",
            "git config set a b",
            "git config -e",
            "git init",
            "git init --template=tpl sub",
            "git clone --template=tpl url",
        ] {
            assert!(changes(line), "{line}");
        }
        for line in [
            "git config core.editor",
            "git config --get x",
            "git config -l",
            "git config list",
            "git status",
            "git clone url",
        ] {
            assert!(!changes(line), "{line}");
        }
    }
}
