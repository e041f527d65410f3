//! Every form a rule takes, judged directly (issue 32: three of them were run by no test):
//! a bare `run_command`, an exact `run_command(cargo test)`, a prefix `run_command(git
//! push:*)`, and bare and globbed `edit_file` / `read_file`, each as allow, ask and deny.

use super::tests::{judge, policy};
use super::*;

fn decide(policy: &Policy, tool: &str, access: Access, mode: Mode) -> Decision {
    policy
        .judge(tool, &access, mode, &Grants::default())
        .decision
}

fn refused(decision: &Decision) -> bool {
    matches!(decision, Decision::Refuse(_))
}

#[test]
fn a_bare_run_command_rule_covers_every_command() {
    let deny = policy(&[(RuleEffect::Deny, "run_command")]);
    for line in ["ls", "cargo test", "echo hi", "true"] {
        for mode in [Mode::Ask, Mode::AcceptEdits, Mode::FullAccess] {
            assert!(
                refused(&judge(&deny, &Grants::default(), mode, line).decision),
                "{line} in {mode:?}"
            );
        }
    }
    // Only commands: a read or an edit is not touched by it.
    let read = decide(
        &deny,
        "read_file",
        Access::Read("/ws/a.txt".into()),
        Mode::Ask,
    );
    assert_eq!(read, Decision::Allow);
    let allow = policy(&[(RuleEffect::Allow, "run_command")]);
    assert_eq!(
        judge(&allow, &Grants::default(), Mode::Ask, "cargo build").decision,
        Decision::Allow
    );
    // An allow rule covers what it names inside the project only, and never a hazard.
    for line in ["cat /etc/passwd", "echo $(date)", "ls > out.txt"] {
        assert_eq!(
            judge(&allow, &Grants::default(), Mode::Ask, line).decision,
            Decision::Ask,
            "{line}"
        );
    }
    let ask = policy(&[(RuleEffect::Ask, "run_command")]);
    assert_eq!(
        judge(&ask, &Grants::default(), Mode::FullAccess, "ls").decision,
        Decision::Ask
    );
}

#[test]
fn an_exact_run_command_rule_covers_that_command_only() {
    let allow = policy(&[(RuleEffect::Allow, "run_command(cargo test)")]);
    let grants = Grants::default();
    assert_eq!(
        judge(&allow, &grants, Mode::Ask, "cargo test").decision,
        Decision::Allow
    );
    for line in [
        "cargo test --all",
        "cargo testx",
        "cargo build",
        "cargo test; ls",
    ] {
        assert_eq!(
            judge(&allow, &grants, Mode::Ask, line).decision,
            Decision::Ask,
            "{line}"
        );
    }
    let deny = policy(&[(RuleEffect::Deny, "run_command(cargo test)")]);
    assert!(refused(
        &judge(&deny, &grants, Mode::FullAccess, "cargo test").decision
    ));
    assert!(refused(
        &judge(&deny, &grants, Mode::FullAccess, "ls && cargo test").decision
    ));
    assert_eq!(
        judge(&deny, &grants, Mode::FullAccess, "cargo test --all").decision,
        Decision::Allow
    );
}

#[test]
fn a_prefix_run_command_rule_covers_the_words_after_it() {
    let deny = policy(&[(RuleEffect::Deny, "run_command(git push:*)")]);
    let grants = Grants::default();
    for line in ["git push", "git push origin main", "git push --force"] {
        assert!(
            refused(&judge(&deny, &grants, Mode::FullAccess, line).decision),
            "{line}"
        );
    }
    assert_eq!(
        judge(&deny, &grants, Mode::FullAccess, "git pull").decision,
        Decision::Allow
    );
}

#[test]
fn bare_file_rules_cover_every_path() {
    let deny_edits = policy(&[(RuleEffect::Deny, "edit_file")]);
    for path in ["/ws/a.txt", "/ws/src/lib.rs", "/elsewhere/x"] {
        for mode in [Mode::AcceptEdits, Mode::FullAccess] {
            assert!(
                refused(&decide(
                    &deny_edits,
                    "write_file",
                    Access::Edit(path.into()),
                    mode
                )),
                "{path} {mode:?}"
            );
        }
    }
    // A bare edit rule leaves reads alone.
    assert_eq!(
        decide(
            &deny_edits,
            "read_file",
            Access::Read("/ws/a.txt".into()),
            Mode::Ask
        ),
        Decision::Allow
    );
    let deny_reads = policy(&[(RuleEffect::Deny, "read_file")]);
    assert!(refused(&decide(
        &deny_reads,
        "read_file",
        Access::Read("/ws/a.txt".into()),
        Mode::FullAccess
    )));
    // Under a deny on every read, a command naming a file is refused too.
    assert!(refused(
        &judge(
            &deny_reads,
            &Grants::default(),
            Mode::FullAccess,
            "cat a.txt"
        )
        .decision
    ));
}

#[test]
fn globbed_file_rules_cover_the_paths_they_match() {
    let globbed = policy(&[(RuleEffect::Ask, "edit_file(src/**)")]);
    assert_eq!(
        decide(
            &globbed,
            "write_file",
            Access::Edit("/ws/src/lib.rs".into()),
            Mode::AcceptEdits
        ),
        Decision::Ask
    );
    assert_eq!(
        decide(
            &globbed,
            "write_file",
            Access::Edit("/ws/README.md".into()),
            Mode::AcceptEdits
        ),
        Decision::Allow
    );
    let allowed = policy(&[(RuleEffect::Allow, "edit_file(docs/*.md)")]);
    assert_eq!(
        decide(
            &allowed,
            "write_file",
            Access::Edit("/ws/docs/a.md".into()),
            Mode::Ask
        ),
        Decision::Allow
    );
    assert_eq!(
        decide(
            &allowed,
            "write_file",
            Access::Edit("/ws/docs/a.rs".into()),
            Mode::Ask
        ),
        Decision::Ask
    );
}
