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
