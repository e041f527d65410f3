//! What a `git` command may run besides the subcommand it names, for deny and ask rules.
//! git is the program deny rules name most (`git push`), and it runs other commands in
//! several ways a shell parser cannot see: an alias (`git -c alias.p=push p`, or one set
//! earlier with `git config alias.p push`), a `git-NAME` program on the PATH, a
//! configuration value that names a program (`-c core.sshCommand=…`, `core.pager`,
//! `core.editor`, `core.fsmonitor`), and subcommands that run commands (`rebase --exec`,
//! `bisect run`, `submodule foreach`, `difftool --extcmd`, `filter-branch`).

use super::Word;

/// git's own commands (`git --list-cmds=main`). Any other name is an alias or a `git-NAME`
/// program, which may run anything.
const BUILTINS: &[&str] = &[
    "add",
    "am",
    "annotate",
    "apply",
    "archimport",
    "archive",
    "bisect",
    "blame",
    "branch",
    "bugreport",
    "bundle",
    "cat-file",
    "check-attr",
    "check-ignore",
    "check-mailmap",
    "check-ref-format",
    "checkout",
    "checkout-index",
    "cherry",
    "cherry-pick",
    "clean",
    "clone",
    "column",
    "commit",
    "commit-graph",
    "commit-tree",
    "config",
    "count-objects",
    "credential",
    "credential-cache",
    "credential-store",
    "cvsexportcommit",
    "cvsimport",
    "cvsserver",
    "daemon",
    "describe",
    "diagnose",
    "diff",
    "diff-files",
    "diff-index",
    "diff-tree",
    "difftool",
    "fast-export",
    "fast-import",
    "fetch",
    "fetch-pack",
    "filter-branch",
    "fmt-merge-msg",
    "for-each-ref",
    "for-each-repo",
    "format-patch",
    "fsck",
    "fsck-objects",
    "gc",
    "get-tar-commit-id",
    "grep",
    "hash-object",
    "help",
    "hook",
    "http-backend",
    "http-fetch",
    "http-push",
    "imap-send",
    "index-pack",
    "init",
    "init-db",
    "instaweb",
    "interpret-trailers",
    "log",
    "ls-files",
    "ls-remote",
    "ls-tree",
    "mailinfo",
    "mailsplit",
    "maintenance",
    "merge",
    "merge-base",
    "merge-file",
    "merge-index",
    "merge-octopus",
    "merge-one-file",
    "merge-ours",
    "merge-recursive",
    "merge-resolve",
    "merge-subtree",
    "merge-tree",
    "mergetool",
    "mktag",
    "mktree",
    "multi-pack-index",
    "mv",
    "name-rev",
    "notes",
    "p4",
    "pack-objects",
    "pack-redundant",
    "pack-refs",
    "patch-id",
    "prune",
    "prune-packed",
    "pull",
    "push",
    "quiltimport",
    "range-diff",
    "read-tree",
    "rebase",
    "receive-pack",
    "reflog",
    "refs",
    "remote",
    "repack",
    "replace",
    "replay",
    "request-pull",
    "rerere",
    "reset",
    "restore",
    "rev-list",
    "rev-parse",
    "revert",
    "rm",
    "send-email",
    "send-pack",
    "shell",
    "shortlog",
    "show",
    "show-branch",
    "show-index",
    "show-ref",
    "sparse-checkout",
    "stage",
    "stash",
    "status",
    "stripspace",
    "submodule",
    "svn",
    "switch",
    "symbolic-ref",
    "tag",
    "unpack-file",
    "unpack-objects",
    "update-index",
    "update-ref",
    "update-server-info",
    "upload-archive",
    "upload-pack",
    "var",
    "verify-commit",
    "verify-pack",
    "verify-tag",
    "version",
    "whatchanged",
    "worktree",
    "write-tree",
];

/// Options of `git` itself that take a value in the next word.
const VALUED: &[&str] = &[
    "-C",
    "-c",
    "--git-dir",
    "--work-tree",
    "--namespace",
    "--config-env",
];

/// Options of subcommands whose value is a command line (`rebase -x`, `difftool --extcmd`,
/// `filter-branch --tree-filter`, …).
const COMMAND_OPTIONS: &[&str] = &[
    "-x",
    "--exec",
    "--extcmd",
    "--tool-cmd",
    "--env-filter",
    "--tree-filter",
    "--index-filter",
    "--parent-filter",
    "--msg-filter",
    "--commit-filter",
    "--tag-name-filter",
    "--upload-pack",
    "--receive-pack",
];

/// What a git command may run besides itself.
#[derive(Debug, PartialEq, Eq)]
pub enum Reach {
    /// Nothing more than its words say (or it is not git).
    Plain,
    /// These command strings, too.
    Strings(Vec<String>),
    /// These command strings, and each tail of its arguments may be a command it runs
    /// (`bisect run CMD…`, `submodule foreach CMD…`).
    Wraps(Vec<String>),
    /// Anything: an alias, a `git-NAME` program, or git told where its programs are.
    Anything,
}

/// What `bare` (a program and its arguments, no assignments) may run if it is git.
pub fn reach(bare: &[Word]) -> Reach {
    let Some((program, args)) = bare.split_first() else {
        return Reach::Plain;
    };
    if !program.literal || super::programs::base_name(&program.text) != "git" {
        return Reach::Plain;
    }
    let mut strings = Vec::new();
    let mut i = 0;
    // git's own options, before the subcommand.
    while let Some(word) = args.get(i) {
        if !word.literal {
            return Reach::Anything;
        }
        let text = word.text.as_str();
        let (option, value) = match text.split_once('=') {
            Some((o, v)) if o.starts_with("--") => (o, Some(v.to_string())),
            _ if text.starts_with("-c") && text.len() > 2 => ("-c", Some(text[2..].to_string())),
            _ => (text, None),
        };
        if !option.starts_with('-') {
            break;
        }
        if option == "--exec-path" || option == "--config-env" {
            return Reach::Anything;
        }
        let value = match value {
            Some(v) => Some(v),
            None if VALUED.contains(&option) => {
                i += 1;
                match args.get(i) {
                    Some(w) if w.literal => Some(w.text.clone()),
                    Some(_) => return Reach::Anything,
                    None => None,
                }
            }
            None => None,
        };
        if option == "-c"
            && let Some(setting) = value
        {
            let (key, value) = setting.split_once('=').unwrap_or((&setting, ""));
            if key.to_ascii_lowercase().starts_with("alias.") {
                return Reach::Anything;
            }
            strings.push(value.to_string());
        }
        i += 1;
    }
    let Some(subcommand) = args.get(i) else {
        return found(strings);
    };
    if !BUILTINS.contains(&subcommand.text.as_str()) {
        return Reach::Anything;
    }
    let rest = &args[i + 1..];
    match subcommand.text.as_str() {
        // The command after `run` / `foreach` / `--config`.
        "bisect" | "submodule" | "for-each-repo" => {
            strings.extend(rest.iter().filter(|w| w.literal).map(|w| w.text.clone()));
            return Reach::Wraps(strings);
        }
        // Every value `config` sets may name a program (`core.fsmonitor`, `core.pager`).
        "config" => strings.extend(rest.iter().filter(|w| w.literal).map(|w| w.text.clone())),
        _ => {
            for (j, word) in rest.iter().enumerate() {
                let (option, value) = match word.text.split_once('=') {
                    Some((o, v)) => (o, Some(v.to_string())),
                    None => (word.text.as_str(), None),
                };
                if !COMMAND_OPTIONS.contains(&option) {
                    continue;
                }
                match value.or_else(|| rest.get(j + 1).map(|w| w.text.clone())) {
                    Some(v) if word.literal => strings.push(v),
                    _ => return Reach::Anything,
                }
            }
        }
    }
    found(strings)
}

/// Whether `bare` (a program and its arguments) is a `git config` that may change a
/// setting (anything but a read: `--get`, `--list`, `get`, `list`, …), which can name a
/// program git runs later (`core.fsmonitor`, an alias).
pub fn changes_config(bare: &[Word]) -> bool {
    let Some((program, args)) = bare.split_first() else {
        return false;
    };
    if super::programs::base_name(&program.text) != "git" {
        return false;
    }
    let mut rest = args.iter().skip_while(|w| w.text != "config");
    if rest.next().is_none() {
        return false;
    }
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
    let words: Vec<&Word> = rest.collect();
    if words.iter().any(|w| READS.contains(&w.text.as_str())) {
        return false;
    }
    // `git config NAME` alone reads; a value or an option that edits changes.
    let operands = words.iter().filter(|w| !w.text.starts_with('-')).count();
    operands >= 2
        || words
            .iter()
            .any(|w| w.text.starts_with('-') && w.text != "--global" && w.text != "--local")
}

fn found(strings: Vec<String>) -> Reach {
    if strings.is_empty() {
        Reach::Plain
    } else {
        Reach::Strings(strings)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::permission::shell::parse;

    fn reached(line: &str) -> Reach {
        reach(&parse(line).commands[0].words)
    }

    #[test]
    fn aliases_and_programs_git_runs() {
        assert_eq!(reached("git status --short"), Reach::Plain);
        assert_eq!(reached("git -C sub log -1"), Reach::Plain);
        assert_eq!(reached("/usr/bin/git push"), Reach::Plain);
        for line in [
            "git -c alias.p=push p",
            "git -calias.p=push p",
            "git q origin",
            "git --exec-path=/tmp/x status",
            "git --config-env=alias.p=P p",
            "git $SUB",
        ] {
            assert_eq!(reached(line), Reach::Anything, "{line}");
        }
        let strings = |line: &str| match reached(line) {
            Reach::Strings(s) => s,
            other => panic!("{line}: {other:?}"),
        };
        assert!(strings("git -c core.sshCommand='git push' fetch").contains(&"git push".into()));
        assert!(strings("git rebase --exec 'git push' HEAD~3").contains(&"git push".into()));
        assert!(strings("git rebase -x 'git push' HEAD~3").contains(&"git push".into()));
        assert!(matches!(
            reached("git bisect run git push"),
            Reach::Wraps(_)
        ));
        assert!(
            matches!(reached("git submodule foreach 'git push'"), Reach::Wraps(s) if s.contains(&"git push".into()))
        );
        assert!(strings("git config core.fsmonitor 'git push'").contains(&"git push".into()));
        assert!(strings("git difftool --extcmd='git push'").contains(&"git push".into()));
    }

    #[test]
    fn config_reads_and_writes() {
        let changes = |line: &str| changes_config(&parse(line).commands[0].words);
        for line in [
            "git config core.fsmonitor x",
            "git config --unset x",
            "git -C . config alias.q push",
            "git config set a b",
            "git config -e",
        ] {
            assert!(changes(line), "{line}");
        }
        for line in [
            "git config core.editor",
            "git config --get x",
            "git config -l",
            "git config list",
            "git status",
            "config a b",
        ] {
            assert!(!changes(line), "{line}");
        }
    }
}
