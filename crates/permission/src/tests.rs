//! The precedence of rules, modes and remembered answers, and what asking offers.

use std::path::PathBuf;

use super::*;
use crate::config::permissions::{Rule, parse_rule};
use crate::types::PermissionAnswer;

pub(super) fn policy(rules: &[(RuleEffect, &str)]) -> Policy {
    let rules = rules.iter().map(|(effect, text)| Rule {
        effect: *effect,
        text: text.to_string(),
        target: parse_rule(text).unwrap(),
        source: PathBuf::from("/u/config.toml"),
    });
    Policy {
        rules: Rules::new(rules, Path::new("/ws"), Some(Path::new("/home/u"))),
        workspace: Workspace::new("/ws".into(), Vec::new(), Some(Path::new("/home/u"))),
        protected: Protected::new([PathBuf::from("/home/u/.config/tandem")]),
        grammar: Grammar::Posix,
        sandbox: None,
    }
}

pub(super) fn run(line: &str) -> Access {
    run_in(line, "/ws")
}

pub(super) fn run_in(line: &str, cwd: &str) -> Access {
    Access::Execute {
        command: line.into(),
        cwd: cwd.into(),
        outside_sandbox: None,
    }
}

pub(super) fn judge(policy: &Policy, grants: &Grants, mode: Mode, line: &str) -> Judgement {
    policy.judge("run_command", &run(line), mode, grants)
}

/// Answers "always allow" to `line` and returns the grants it left.
pub(super) fn allow_always(policy: &Policy, line: &str) -> Grants {
    let mut grants = Grants::default();
    let judged = judge(policy, &grants, Mode::Ask, line);
    assert_eq!(judged.decision, Decision::Ask, "{line}");
    grants.remember(judged.offer.allow_always.as_deref().unwrap(), true);
    grants
}

#[test]
fn one_always_on_echo_approves_no_compound_trick() {
    let policy = policy(&[]);
    let grants = allow_always(&policy, "echo hi");
    assert_eq!(
        judge(&policy, &grants, Mode::Ask, "echo hi").decision,
        Decision::Allow
    );
    // `echo` has no subcommands: the grant is the exact command its label shows.
    assert_eq!(
        judge(&policy, &grants, Mode::Ask, "echo hi there").decision,
        Decision::Ask
    );
    for line in [
        "echo hi; touch X",
        "echo hi && rm -rf build",
        "echo hi | sh",
        "echo $(touch X)",
        "echo `touch X`",
        "echo hi > file",
        "(touch X)",
        "bash -c 'touch X'",
        "eval touch X",
        "echo hi & touch X",
        "echo hi\ntouch X",
        "echo",
    ] {
        for mode in [Mode::Ask, Mode::AcceptEdits] {
            assert_eq!(
                judge(&policy, &grants, mode, line).decision,
                Decision::Ask,
                "{line}"
            );
        }
    }
}

#[test]
fn grants_are_prefixes_of_subcommands() {
    let policy = policy(&[]);
    let grants = allow_always(&policy, "cargo test");
    assert_eq!(
        judge(&policy, &grants, Mode::Ask, "cargo test --all").decision,
        Decision::Allow
    );
    assert_eq!(
        judge(&policy, &grants, Mode::Ask, "cargo publish").decision,
        Decision::Ask
    );
    let grants = allow_always(&policy, "git status");
    assert_eq!(
        judge(&policy, &grants, Mode::Ask, "git push").decision,
        Decision::Ask
    );
}

#[test]
fn a_compound_always_remembers_each_command() {
    let policy = policy(&[]);
    let judged = judge(
        &policy,
        &Grants::default(),
        Mode::Ask,
        "cd sub && cargo test --all",
    );
    let labels: Vec<String> = judged
        .offer
        .choices()
        .into_iter()
        .map(|c| c.label)
        .collect();
    assert_eq!(
        labels,
        [
            "Allow",
            "Always allow \"cd sub\" and \"cargo test …\"",
            "Reject",
            "Always reject the command \"cd sub && cargo test --all\"",
        ]
    );
    let grants = allow_always(&policy, "cd sub && cargo test --all");
    assert_eq!(
        judge(&policy, &grants, Mode::Ask, "cd sub && cargo test -q").decision,
        Decision::Allow
    );
    assert_eq!(
        judge(&policy, &grants, Mode::Ask, "cd other && cargo test").decision,
        Decision::Ask
    );
}

#[test]
fn hazards_offer_no_always_and_say_why() {
    let policy = policy(&[]);
    let judged = judge(&policy, &Grants::default(), Mode::Ask, "echo $(date)");
    let answers: Vec<_> = judged
        .offer
        .choices()
        .into_iter()
        .map(|c| c.answer)
        .collect();
    assert!(!answers.contains(&PermissionAnswer::AllowAlways));
    assert!(
        judged
            .offer
            .withheld
            .unwrap()
            .contains("`$(date)` is a substitution")
    );
    // full-access is full access.
    assert_eq!(
        judge(
            &policy,
            &Grants::default(),
            Mode::FullAccess,
            "echo $(date)"
        )
        .decision,
        Decision::Allow
    );
}

#[test]
fn rules_take_precedence_in_order() {
    let policy = policy(&[
        (RuleEffect::Deny, "run_command(git push:*)"),
        (RuleEffect::Ask, "run_command(cargo publish:*)"),
        (RuleEffect::Allow, "run_command(cargo:*)"),
        (RuleEffect::Allow, "run_command(npm run test:*)"),
    ]);
    let none = Grants::default();
    let deny = judge(&policy, &none, Mode::FullAccess, "git push --force");
    assert!(deny.firm);
    assert!(
        matches!(&deny.decision, Decision::Refuse(r) if r.contains("`run_command(git push:*)`"))
    );
    let ask = judge(&policy, &none, Mode::FullAccess, "cargo publish");
    assert_eq!(ask.decision, Decision::Ask);
    assert!(ask.offer.allow_always.is_none());
    assert_eq!(
        judge(&policy, &none, Mode::Ask, "cargo build").decision,
        Decision::Allow
    );
    assert_eq!(
        judge(&policy, &none, Mode::Ask, "npm run test -- --watch").decision,
        Decision::Allow
    );
    assert_eq!(
        judge(&policy, &none, Mode::Ask, "npm run build").decision,
        Decision::Ask
    );
    // An allow rule does not lift read-only, nor approve a hazard.
    assert!(matches!(
        judge(&policy, &none, Mode::ReadOnly, "cargo build").decision,
        Decision::Refuse(_)
    ));
    assert_eq!(
        judge(&policy, &none, Mode::Ask, "cargo build > log").decision,
        Decision::Ask
    );
}

#[test]
fn remembered_rejections_refuse_but_not_firmly() {
    let policy = policy(&[]);
    let mut grants = Grants::default();
    let judged = judge(&policy, &grants, Mode::Ask, "git push origin");
    grants.remember(&judged.offer.reject_always, false);
    let again = judge(&policy, &grants, Mode::Ask, "git push origin main");
    assert!(matches!(again.decision, Decision::Refuse(_)));
    assert!(!again.firm);
    assert_eq!(
        judge(&policy, &grants, Mode::Ask, "git status").decision,
        Decision::Ask
    );
}

#[test]
fn file_rules_and_path_grants() {
    let policy = policy(&[
        (RuleEffect::Deny, "read_file(~/.ssh/**)"),
        (RuleEffect::Ask, "edit_file(Cargo.toml)"),
        (RuleEffect::Allow, "edit_file(/tmp/scratch/**)"),
    ]);
    let none = Grants::default();
    let read = Access::Read("/home/u/.ssh/id_rsa".into());
    assert!(policy.judge("grep", &read, Mode::FullAccess, &none).firm);
    let cargo = Access::Edit("/ws/Cargo.toml".into());
    assert_eq!(
        policy
            .judge("write_file", &cargo, Mode::AcceptEdits, &none)
            .decision,
        Decision::Ask
    );
    let scratch = Access::Edit("/tmp/scratch/a.txt".into());
    assert_eq!(
        policy
            .judge("edit_file", &scratch, Mode::Ask, &none)
            .decision,
        Decision::Allow
    );
    let outside = Access::Edit("/etc/hosts".into());
    let judged = policy.judge("write_file", &outside, Mode::Ask, &none);
    let labels: Vec<String> = judged
        .offer
        .choices()
        .into_iter()
        .map(|c| c.label)
        .collect();
    assert_eq!(labels[1], "Always allow editing /etc/hosts");
    let mut grants = Grants::default();
    grants.remember(judged.offer.allow_always.as_deref().unwrap(), true);
    // The grant is for editing that path, whichever tool edits it.
    assert_eq!(
        policy
            .judge("edit_file", &outside, Mode::Ask, &grants)
            .decision,
        Decision::Allow
    );
}

#[test]
fn mcp_tools_follow_tool_rules() {
    let policy = policy(&[(RuleEffect::Deny, "mcp__github__*")]);
    let tool = Access::Tool { read_only: true };
    assert!(
        policy
            .judge("mcp__github__search", &tool, Mode::Ask, &Grants::default())
            .firm
    );
    let other = policy.judge(
        "mcp__files__write",
        &Access::Tool { read_only: false },
        Mode::Ask,
        &Grants::default(),
    );
    assert_eq!(other.decision, Decision::Ask);
    assert_eq!(
        other.offer.choices()[1].label,
        "Always allow the tool mcp__files__write"
    );
}

#[test]
fn a_home_folder_session_asks_and_says_why() {
    let policy = Policy {
        rules: Rules::default(),
        workspace: Workspace::new("/home/u".into(), Vec::new(), Some(Path::new("/home/u"))),
        protected: Protected::default(),
        grammar: Grammar::Posix,
        sandbox: None,
    };
    let read = Access::Read("/home/u/notes.txt".into());
    let judged = policy.judge("read_file", &read, Mode::Ask, &Grants::default());
    assert_eq!(judged.decision, Decision::Ask);
    assert!(judged.offer.note.unwrap().contains("home folder"));
}

/// Lines a review found approved after one grant although the shell ran `touch X`: the
/// grammar and the shell split them differently, or bash evaluates arithmetic.
#[test]
fn reviewed_bypasses_ask() {
    let policy = policy(&[]);
    let cases: [(&str, &[&str]); 5] = [
        (
            "echo hi",
            &[
                "echo hi\r#; touch X",
                "echo hi\u{b}#; touch X",
                "echo hi\u{c}#; touch X",
                "echo hi \\\r\ntouch X",
                "echo hi\\\n#; touch X",
                "echo hi \"$\\\n(touch X)\"",
                "echo hi ${x:-$\\\n(touch X)}",
                "echo hi >&1\\\nX",
                "echo hi; [[ 'a[$(touch X)]' -eq 0 ]]",
                "echo hi; [[ -v 'a[$(touch X)]' ]]",
                "echo hi; [ -v 'a[$(touch X)]' ]",
                "echo hi 'a[$(touch X)]'; ((_))",
                "echo hi ${_@P}",
                "echo hi ${!_}",
                "echo hi ${PWD:_}",
                "echo hi ${_:0:_}",
                "echo hi </dev/tcp/example.com/80",
            ],
        ),
        (
            "cat README.md",
            &[
                "cat README.md <<EOF\n`touch X`\nEOF",
                "cat README.md <<EOF\n\"`touch X`\"\nEOF",
                "cat README.md <<EOF\n${x:-`touch X`}\nEOF",
                "cat README.md <<EOF\n$\\\n(touch X)\nEOF",
                "cat README.md <<E\"O\"F\nhi\nEOF\ntouch X\nE\"O\"F",
                "cat README.md <<EOF\nEO\\\nF\ntouch X\nEOF",
            ],
        ),
        ("ls -la", &["for PATH in /tmp/evil; do ls -la; done"]),
        (
            "find src -name x",
            &["find src -delete", "find src -fprint out"],
        ),
        ("git status", &["git status; ((x=1))"]),
    ];
    for (granted, lines) in cases {
        let grants = allow_always(&policy, granted);
        for line in lines {
            assert_eq!(
                judge(&policy, &grants, Mode::Ask, line).decision,
                Decision::Ask,
                "{line:?} after allowing {granted:?}"
            );
        }
    }
    // What stays judgeable: the usual continuation, plain here-documents, plain tests.
    let grants = allow_always(&policy, "cat README.md");
    for line in [
        "cat README.md \\\n  | cat README.md",
        "cat README.md <<'EOF'\n$(touch X) `x`\nEOF",
        "cat README.md <<EOF\nplain text\nEOF",
        "cat README.md && [ -f README.md ]",
    ] {
        assert_eq!(
            judge(&policy, &grants, Mode::Ask, line).decision,
            Decision::Allow,
            "{line:?}"
        );
    }
}

#[test]
fn deny_rules_see_past_assignments_and_paths() {
    let policy = policy(&[(RuleEffect::Deny, "run_command(git push:*)")]);
    for line in [
        "X=1 git push",
        "/usr/bin/git push",
        "sudo /usr/bin/git push --force",
    ] {
        let judged = judge(&policy, &Grants::default(), Mode::FullAccess, line);
        assert!(judged.firm, "{line}");
    }
}

#[test]
fn leaving_the_sandbox_asks_every_time_and_no_grant_or_rule_covers_it() {
    use crate::platform::sandbox::{Inputs, SessionSandbox, Writes};
    let mut policy = policy(&[(RuleEffect::Allow, "run_command(cargo test:*)")]);
    policy.sandbox = Some(std::sync::Arc::new(SessionSandbox::new(
        Inputs::bare(vec![PathBuf::from("/ws")], Writes::WorkspaceWrite),
        PathBuf::from("/bin/tandem"),
    )));
    let grants = allow_always(&policy, "echo hi");
    let outside = |line: &str| Access::Execute {
        command: line.into(),
        cwd: "/ws".into(),
        outside_sandbox: Some("needs ~/.cargo".into()),
    };
    for mode in [Mode::Ask, Mode::AcceptEdits] {
        for line in ["echo hi", "cargo test"] {
            let judged = policy.judge("run_command", &outside(line), mode, &grants);
            assert_eq!(judged.decision, Decision::Ask, "{line} in {mode:?}");
            assert!(judged.firm, "no hook skips the question");
            assert!(judged.offer.allow_always.is_none(), "no always for leaving");
            assert_eq!(
                judged.offer.note.as_deref(),
                Some("outside the sandbox: needs ~/.cargo")
            );
        }
        // Inside the sandbox the grant and the rule still hold.
        assert_eq!(
            judge(&policy, &grants, mode, "echo hi").decision,
            Decision::Allow
        );
    }
    let deny = {
        let mut p = super::tests::policy(&[(RuleEffect::Deny, "run_command(rm:*)")]);
        p.sandbox = policy.sandbox.clone();
        p
    };
    let refused = deny.judge("run_command", &outside("rm -rf x"), Mode::Ask, &grants);
    assert!(
        matches!(refused.decision, Decision::Refuse(_)),
        "a deny rule still wins"
    );
    let read_only = policy.judge("run_command", &outside("echo hi"), Mode::ReadOnly, &grants);
    assert!(matches!(read_only.decision, Decision::Refuse(_)));
    // full-access has no sandbox to leave.
    let full = policy.judge(
        "run_command",
        &outside("echo hi"),
        Mode::FullAccess,
        &grants,
    );
    assert_eq!(full.decision, Decision::Allow);
    // Without a sandbox the flag changes nothing.
    let mut plain = super::tests::policy(&[]);
    plain.sandbox = None;
    let plain_grants = allow_always(&plain, "echo hi");
    let judged = plain.judge("run_command", &outside("echo hi"), Mode::Ask, &plain_grants);
    assert_eq!(judged.decision, Decision::Allow);
}

/// A protected path's question is one no hook may skip, also when an ask rule matches the
/// same edit (the rule's question alone is one a hook may answer).
#[test]
fn a_protected_edit_an_ask_rule_also_matches_stays_asked_under_a_hooks_allow() {
    let policy = policy(&[
        (RuleEffect::Ask, "edit_file(.git/**)"),
        (RuleEffect::Ask, "edit_file(docs/**)"),
    ]);
    let edit = Access::Edit("/ws/.git/hooks/pre-commit".into());
    let judged = policy.judge_with(
        "edit_file",
        &edit,
        Mode::AcceptEdits,
        &Grants::default(),
        None,
        &crate::ToolVerdict::Allow,
    );
    assert_eq!(judged.decision, Decision::Ask);
    assert!(judged.firm, "no hook skips a protected path's question");
    assert!(
        judged
            .offer
            .note
            .is_some_and(|n| n.starts_with("protected: "))
    );
    // Where only the rule asks, a hook's allow is what the user configured.
    let plain = Access::Edit("/ws/docs/notes.md".into());
    let judged = policy.judge_with(
        "edit_file",
        &plain,
        Mode::AcceptEdits,
        &Grants::default(),
        None,
        &crate::ToolVerdict::Allow,
    );
    assert_eq!(judged.decision, Decision::Allow);
}
