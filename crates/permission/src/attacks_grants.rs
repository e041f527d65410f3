//! The attacks of issue 29 on what is approved without asking, judged in-process: a grant
//! is exactly its label (no pattern, command option, output file or odd line break rides on
//! it), a command run in or naming a folder outside the project asks, git's and tandem's own
//! files always ask, and a shell whose grammar tandem does not read gets plain lines only.
//! Deny rules are in `attacks.rs`.

use super::tests::{self, allow_always, judge, policy, run_in};
use super::*;

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
    let ruled = tests::policy(&[(RuleEffect::Allow, "run_command(cat:*)")]);
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
    let policy = policy(&[(RuleEffect::Allow, "run_command(git status)")]);
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

/// Issue 29, item 2: git's and tandem's own files always ask, but in full-access.
#[test]
fn protected_paths_always_ask() {
    let policy = policy(&[(RuleEffect::Allow, "edit_file(**)")]);
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
    let mut policy = tests::policy(&[(RuleEffect::Deny, "run_command(git push:*)")]);
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
    let ruled = tests::policy(&[(RuleEffect::Allow, "run_command(git config:*)")]);
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
        ("git status", "git status ~-"),
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
    let denying = tests::policy(&[(RuleEffect::Deny, "run_command(git push:*)")]);
    assert_eq!(
        judge(&denying, &Grants::default(), Mode::FullAccess, &chain).decision,
        Decision::Allow
    );
}

/// The third review: a harmless grant and what still rode on it.
#[test]
fn grants_cover_no_pattern_no_command_option_no_output_and_no_odd_line_break() {
    let policy = policy(&[]);
    for (granted, line) in [
        ("git fetch origin", "git fetch -* ."),
        ("git fetch origin", "git fetch origin -*"),
        ("git log -1", "git log -1 --output=Makefile"),
        ("git log -1", "git log -1 --output g/HEAD"),
        ("git diff HEAD", "git diff HEAD --output=build.rs"),
        (
            "git push origin",
            "git push origin --receive-pack='touch X;:' HEAD",
        ),
        ("git fetch origin", "git fetch origin --upload-pa='touch X'"),
        ("git difftool HEAD", "git difftool HEAD -y -x 'touch X'"),
        ("git grep TODO", "git grep TODO -O'touch X'"),
        ("make all", "make all -sf../outside/evil.mk"),
        ("make all", "make all -sC../outside"),
        ("git status", "git status \n\\touch X"),
        ("rm -r build", "rm -r build 10>/dev/null"),
    ] {
        let grants = allow_always(&policy, granted);
        let judged = judge(&policy, &grants, Mode::AcceptEdits, line);
        assert_eq!(judged.decision, Decision::Ask, "{line:?} after {granted}");
    }
    // A repository made from a template takes the template's config and hooks.
    let judged = judge(
        &policy,
        &Grants::default(),
        Mode::AcceptEdits,
        "git init --template=tpl sub",
    );
    assert!(judged.firm && judged.decision == Decision::Ask);
    // What a user runs every day still gets its grant.
    for line in [
        "git diff HEAD~1",
        "git show stash@{0}",
        "git rebase -i HEAD~3",
        "git log @{u}..",
    ] {
        let judged = judge(&policy, &Grants::default(), Mode::Ask, line);
        assert!(judged.offer.allow_always.is_some(), "{line}");
    }
}
