//! The attacks of issue 29, judged in-process: indirection past deny rules, grants wider than
//! their label, commands run or naming paths outside the project, ways around a read deny,
//! protected paths, and shells whose grammar tandem does not read. The same attacks run over
//! real stdio in `tests/suite/hostile_model.rs`.

use super::tests::{self, allow_always, judge, policy, run, run_in};
use super::*;

/// Issue 29, item 4: what reached `git push` past a deny rule in full-access.
#[test]
fn deny_rules_cannot_be_dodged_by_indirection() {
    let policy = policy(&[(Effect::Deny, "run_command(git push:*)")]);
    for line in [
        "G=git; $G push",
        "git${IFS}push",
        "P=push; git $P",
        "alias g='git push'\ng",
        "alias g=git; g push",
        "g() { git \"$@\"; }; g push",
        "sh -c \"sh -c 'sh -c \\\"sh -c git\\\\ push\\\"'\"",
        "bash -c 'bash -c \"bash -c \\\"bash -c \\\\\\\"git push\\\\\\\"\\\"\"'",
        "echo push | xargs git",
        "echo push | parallel git",
        "sh -c 'git${IFS}push'",
        "git -C . push",
        "git --no-pager push origin",
        "git pu*",
        "echo 'git push' | sh",
        "echo hi &>/dev/null git push",
        "let 'x[$(git push)]'",
        "x='a[$(git push)]'; echo $((x))",
        "$(echo git) push",
    ] {
        for mode in [Mode::Ask, Mode::AcceptEdits, Mode::FullAccess] {
            let judged = judge(&policy, &Grants::default(), mode, line);
            assert!(
                matches!(judged.decision, Decision::Refuse(_)) && judged.firm,
                "{line:?} in {mode:?}: {judged:?}"
            );
        }
    }
    let why = match judge(
        &policy,
        &Grants::default(),
        Mode::FullAccess,
        "P=push; git $P",
    )
    .decision
    {
        Decision::Refuse(why) => why,
        other => panic!("{other:?}"),
    };
    assert!(why.contains("cannot prove"), "{why}");
    // What stays clear of the rule runs.
    for line in [
        "git status",
        "cargo test $ARGS",
        "echo push",
        "ls *.rs",
        "git log --grep push",
    ] {
        assert_eq!(
            judge(&policy, &Grants::default(), Mode::FullAccess, line).decision,
            Decision::Allow,
            "{line}"
        );
    }
}

/// Issue 29, item 5: a grant is exactly its label.
#[test]
fn grants_cover_exactly_their_label() {
    let policy = policy(&[]);
    let judged = judge(&policy, &Grants::default(), Mode::Ask, "rm build");
    assert_eq!(judged.offer.choices()[1].label, "Always allow \"rm build\"");
    let grants = allow_always(&policy, "rm build");
    assert_eq!(
        judge(&policy, &grants, Mode::Ask, "rm build").decision,
        Decision::Allow
    );
    for line in [
        "rm build -r ../outside",
        "rm build -r",
        "rm build 2>/dev/null -r ../outside",
        "rm >/dev/null build -r x",
    ] {
        assert_eq!(
            judge(&policy, &grants, Mode::Ask, line).decision,
            Decision::Ask,
            "{line}"
        );
    }
    // A subcommand's prefix covers more arguments, but never a path outside the project.
    let grants = allow_always(&policy, "git status");
    assert_eq!(
        judge(&policy, &grants, Mode::Ask, "git status --short").decision,
        Decision::Allow
    );
    for line in [
        "git status /etc",
        "git status ../x",
        "git status ~/x",
        "git status $DIR",
        "cd / && git status",
    ] {
        let judged = judge(&policy, &grants, Mode::Ask, line);
        assert_eq!(judged.decision, Decision::Ask, "{line}");
        assert!(judged.offer.allow_always.is_none(), "{line}");
    }
    // Allow rules too.
    let ruled = tests::policy(&[(Effect::Allow, "run_command(cat:*)")]);
    assert_eq!(
        judge(&ruled, &Grants::default(), Mode::Ask, "cat README.md").decision,
        Decision::Allow
    );
    assert_eq!(
        judge(&ruled, &Grants::default(), Mode::Ask, "cat /etc/passwd").decision,
        Decision::Ask
    );
    assert_eq!(
        judge(&ruled, &Grants::default(), Mode::Ask, "cat < /etc/passwd").decision,
        Decision::Ask
    );
}

/// Issue 29, item 6: where a command runs is judged.
#[test]
fn a_command_outside_the_project_asks() {
    let policy = policy(&[(Effect::Allow, "run_command(git status)")]);
    let none = Grants::default();
    let inside = policy.judge(
        "run_command",
        &run_in("git status", "/ws/sub"),
        Mode::Ask,
        &none,
    );
    assert_eq!(inside.decision, Decision::Allow);
    let outside = policy.judge("run_command", &run_in("git status", "/"), Mode::Ask, &none);
    assert_eq!(outside.decision, Decision::Ask);
    assert!(outside.offer.note.as_deref().unwrap().contains("runs in /"));
    assert!(outside.offer.allow_always.is_none());
    let full = policy.judge(
        "run_command",
        &run_in("git status", "/"),
        Mode::FullAccess,
        &none,
    );
    assert_eq!(full.decision, Decision::Allow);
}

/// Issue 29, item 3: a file a deny rule forbids reading cannot be edited, patched, moved or
/// named by a command either.
#[test]
fn a_read_deny_covers_every_way_to_the_content() {
    let policy = policy(&[(Effect::Deny, "read_file(.env)")]);
    let none = Grants::default();
    for access in [
        Access::Edit("/ws/.env".into()),
        Access::EditMany(vec!["/ws/.env".into(), "/ws/leak.txt".into()]),
        Access::EditMany(vec!["/ws/leak.txt".into(), "/ws/.env".into()]),
        run("cp .env leak.txt"),
        run("cat < .env"),
        run("mv ./.env /tmp/x"),
    ] {
        for mode in [Mode::AcceptEdits, Mode::FullAccess] {
            let judged = policy.judge("apply_patch", &access, mode, &none);
            assert!(
                matches!(&judged.decision, Decision::Refuse(r) if r.contains("`read_file(.env)`")),
                "{access:?}: {judged:?}"
            );
            assert!(judged.firm);
        }
    }
    assert_eq!(
        policy
            .judge(
                "edit_file",
                &Access::Edit("/ws/env.txt".into()),
                Mode::AcceptEdits,
                &none
            )
            .decision,
        Decision::Allow
    );
}

/// Issue 29, item 2: git's and tandem's own files always ask, but in full-access.
#[test]
fn protected_paths_always_ask() {
    let policy = policy(&[(Effect::Allow, "edit_file(**)")]);
    let mut grants = Grants::default();
    for path in [
        "/ws/.git/config",
        "/ws/.git/hooks/pre-commit",
        "/ws/.tandem/config.toml",
        "/home/u/.config/tandem/config.toml",
    ] {
        let edit = Access::Edit(path.into());
        for mode in [Mode::Ask, Mode::AcceptEdits] {
            let judged = policy.judge("write_file", &edit, mode, &grants);
            assert_eq!(judged.decision, Decision::Ask, "{path} {mode:?}");
            assert!(judged.firm, "{path}");
            assert!(judged.offer.allow_always.is_none());
            assert!(
                judged
                    .offer
                    .note
                    .as_deref()
                    .unwrap()
                    .starts_with("protected: ")
            );
            // Not even a remembered answer (from before the rule) lifts it.
            grants.remember(
                &[Grant::Path {
                    access: PathAccess::Edit,
                    path: path.into(),
                }],
                true,
            );
            assert_eq!(
                policy.judge("write_file", &edit, mode, &grants).decision,
                Decision::Ask
            );
        }
        assert_eq!(
            policy
                .judge("write_file", &edit, Mode::FullAccess, &grants)
                .decision,
            Decision::Allow
        );
    }
}

/// Lines for a shell whose grammar tandem does not read are approved only when plain.
#[test]
fn another_shell_gets_plain_lines_only() {
    let mut policy = policy(&[]);
    policy.grammar = Grammar::PlainOnly("pwsh".into());
    let grants = allow_always(&policy, "cargo test");
    assert_eq!(
        judge(&policy, &grants, Mode::Ask, "cargo test --all").decision,
        Decision::Allow
    );
    assert_eq!(
        judge(&policy, &grants, Mode::Ask, "cargo test; iex x").decision,
        Decision::Ask
    );
    // With a deny rule, a line tandem cannot read is refused.
    let mut policy = tests::policy(&[(Effect::Deny, "run_command(git push:*)")]);
    policy.grammar = Grammar::PlainOnly("pwsh".into());
    assert!(matches!(
        judge(&policy, &grants, Mode::FullAccess, "iex 'git push'").decision,
        Decision::Refuse(_)
    ));
}

/// The second review: a granted command that writes into `.git/` or changes git's config.
#[test]
fn commands_that_name_protected_paths_or_change_gits_config_ask() {
    let policy = policy(&[]);
    let grants = allow_always(&policy, "git log -1");
    for line in [
        "git log -1 --output=.git/config",
        "git log -1 --output .tandem/config.toml",
        "git log -1 > .git/hooks/pre-commit",
    ] {
        let judged = judge(&policy, &grants, Mode::AcceptEdits, line);
        assert_eq!(judged.decision, Decision::Ask, "{line}");
        assert!(judged.firm, "{line}");
        assert!(judged.offer.allow_always.is_none(), "{line}");
    }
    let ruled = tests::policy(&[(Effect::Allow, "run_command(git config:*)")]);
    let judged = judge(
        &ruled,
        &Grants::default(),
        Mode::Ask,
        "git config core.fsmonitor 'touch X'",
    );
    assert_eq!(judged.decision, Decision::Ask);
    assert!(judged.firm);
    assert!(
        judged
            .offer
            .note
            .as_deref()
            .unwrap()
            .contains("git's config")
    );
    // Reading a setting is no change.
    assert_eq!(
        judge(
            &ruled,
            &Grants::default(),
            Mode::Ask,
            "git config --get user.name"
        )
        .decision,
        Decision::Allow
    );
}

/// The second review: `~user`, option values and assignments name paths too.
#[test]
fn tildes_option_values_and_assignments_are_paths() {
    let policy = policy(&[]);
    for (granted, line) in [
        (
            "git diff HEAD",
            "git diff --no-index ~root/.bashrc /dev/null",
        ),
        ("git status", "git status ~root"),
        ("head -n 50", "head -n 50 <~root/.bashrc"),
        ("make test", "make test -C.."),
        ("make test", "make test -C~root"),
        ("make test", "make test O=/etc"),
        ("git status", "git status ~+"),
    ] {
        let first = judge(&policy, &Grants::default(), Mode::Ask, granted);
        assert!(first.offer.allow_always.is_some(), "{granted}: {first:?}");
        let grants = allow_always(&policy, granted);
        assert_eq!(
            judge(&policy, &grants, Mode::Ask, line).decision,
            Decision::Ask,
            "{line} after {granted}"
        );
    }
}

/// The second review: git's own ways of running commands, under a deny rule.
#[test]
fn git_aliases_and_command_options_cannot_dodge_a_deny_rule() {
    let policy = policy(&[(Effect::Deny, "run_command(git push:*)")]);
    for line in [
        "git -c alias.p=push p origin HEAD",
        "git config alias.q push && git q origin",
        "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.p GIT_CONFIG_VALUE_0=push git p",
        "git -c core.sshCommand='git push' fetch",
        "git -c core.editor='git push' commit",
        "git rebase --exec 'git push' HEAD~2",
        "git bisect run git push",
        "git submodule foreach git push",
        "git --exec-path=/tmp/x status",
        "GIT_SSH_COMMAND='git push' git fetch",
        "git config core.fsmonitor 'git push' && git status",
    ] {
        let judged = judge(&policy, &Grants::default(), Mode::FullAccess, line);
        assert!(
            matches!(judged.decision, Decision::Refuse(_)),
            "{line:?}: {judged:?}"
        );
    }
    for line in [
        "git status",
        "git -C sub log -1",
        "git -c color.ui=never status",
    ] {
        assert_eq!(
            judge(&policy, &Grants::default(), Mode::FullAccess, line).decision,
            Decision::Allow,
            "{line}"
        );
    }
}

/// The second review: what bash evaluates as code when it runs the line (`shell = ["bash",
/// "-c"]`), under a deny rule.
#[test]
fn what_bash_evaluates_cannot_dodge_a_deny_rule() {
    let policy = policy(&[(Effect::Deny, "run_command(git push:*)")]);
    for line in [
        "read n <<'E'\na[$(git push)]\nE\nprintf -v \"$n\" x",
        "read \"$n\" </dev/null",
        "declare -i y; y=$n",
        "declare \"$n=1\"",
        "mapfile -C 'git push' -c 1 x <<'E'\na\nE",
        "readarray -C 'git push' -c 1 x < /dev/null",
        "read PS4 <<'E'\n$(git push)\nE\nset -x; :",
        "PS4='$(git push)'; set -x; :",
        "hash -rp \"$(command -v git)\" gut; gut push",
        "hash -dp /usr/bin/git gut; gut push",
        "test -[v] 'a[$(git push)]'",
        "[ -[v] 'a[$(git push)]' ]",
    ] {
        let judged = judge(&policy, &Grants::default(), Mode::FullAccess, line);
        assert!(
            matches!(judged.decision, Decision::Refuse(_)),
            "{line:?}: {judged:?}"
        );
    }
}

/// The second review: spellings of a read-denied path.
#[test]
fn every_spelling_of_a_read_denied_path_is_refused() {
    let policy = policy(&[(Effect::Deny, "read_file(.env)")]);
    for line in [
        "cd a && cat ../.env",
        "cd a && cp ../.env ../leak",
        "cat a://../.env",
        "cat -- .env",
        "cat --file=.env",
        "cat 0<.env",
    ] {
        let judged = judge(&policy, &Grants::default(), Mode::FullAccess, line);
        assert!(
            matches!(&judged.decision, Decision::Refuse(r) if r.contains("read_file(.env)")),
            "{line:?}: {judged:?}"
        );
    }
}

/// A pattern's matches are not in its label, so it is never remembered; a long chain of
/// plain commands is still judged (no nesting limit), also under a deny rule.
#[test]
fn patterns_get_no_always_and_long_chains_are_judged() {
    let policy = policy(&[]);
    let judged = judge(&policy, &Grants::default(), Mode::Ask, "tar czf b.tgz *");
    assert!(judged.offer.allow_always.is_none());
    assert!(judged.offer.withheld.unwrap().contains("`*`"));
    let chain = vec!["ls src"; 300].join(" && ");
    assert!(shell::parse(&chain).hazards.is_empty());
    let denying = tests::policy(&[(Effect::Deny, "run_command(git push:*)")]);
    assert_eq!(
        judge(&denying, &Grants::default(), Mode::FullAccess, &chain).decision,
        Decision::Allow
    );
}
