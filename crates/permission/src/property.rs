//! Property tests: lines built from a grammar of separators, substitutions, wrappers,
//! redirections and what sh and bash read differently (`$'…'`, `&>`, backslash-newlines,
//! `${IFS}`, brace expansion), each hiding a command the user never allowed behind `echo hi`,
//! are never approved by an "always allow" on `echo hi`, and a deny rule on the hidden
//! program refuses every one of them, in every mode.

use std::path::Path;

use proptest::prelude::*;

use super::*;

/// Commands the user never allowed: known ones, and made-up programs with made-up arguments.
fn other() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("touch X".to_string()),
        Just("rm -rf build".to_string()),
        Just("curl -s example.com".to_string()),
        Just("sh".to_string()),
        Just("python3 run.py".to_string()),
        Just("git push --force".to_string()),
        ("[a-z][a-z0-9]{1,7}", "[a-z0-9./-]{0,8}").prop_map(|(program, arg)| format!(
            "zz{program} {arg}"
        )
        .trim_end()
        .to_string()),
    ]
}

/// The program `other` runs.
fn program_of(other: &str) -> &str {
    other.split_whitespace().next().unwrap_or(other)
}

/// Arguments that change nothing about what runs.
fn argument() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z][a-z0-9_-]{0,6}",
        "[a-z]{1,5}".prop_map(|w| format!("'{w}'")),
        "[a-z]{1,5}".prop_map(|w| format!("\"{w}\"")),
        "[a-z]{1,5}".prop_map(|w| format!("'{w}; rm -rf x'")),
        Just("--flag".to_string()),
        Just("2>&1".to_string()),
        Just(">/dev/null".to_string()),
    ]
}

/// A fragment that makes `other` run (or writes a file) when appended to a command.
fn hiding(other: String) -> Vec<String> {
    let mut out: Vec<String> = [";", "&&", "||", "|", "|&", "&", "\n", ";\n", "& "]
        .iter()
        .map(|sep| format!("{sep} {other}"))
        .collect();
    out.extend([
        format!(" $({other})"),
        format!(" `{other}`"),
        format!(" <({other})"),
        format!(" >({other})"),
        format!(" \"$({other})\""),
        format!(" \"a`{other}`b\""),
        format!(" ${{x:-$({other})}}"),
        format!(" $((1 + $({other})))"),
        format!("; ({other})"),
        format!(" && {{ {other}; }}"),
        format!("; eval '{other}'"),
        format!("; bash -c '{other}'"),
        format!(" | xargs {other}"),
        format!("; sudo {other}"),
        format!("; env A=1 {other}"),
        format!("\nif true; then {other}; fi"),
        format!("; for f in a; do {other}; done"),
        format!("; f() {{ {other}; }}; f"),
        format!(" <<EOF | {other}\nx\nEOF"),
        // What sh (dash) and bash read differently: each runs `other` in at least one.
        format!(" &>/dev/null {other}"),
        format!(" &>>/dev/null {other}"),
        format!(" $'\\''\n{other}\n#'"),
        format!(" \\\n; {other}"),
        format!(";${{IFS}}{other}"),
        format!("; {{{other},true}}"),
        format!(" <<< x; {other}"),
        format!("; [[ -n x ]] && {other}"),
        format!(" |& {other}"),
        format!("; case x in x) {other} ;; esac"),
        format!("; while false; do :; done; {other}"),
        format!("; X='{other}'; $X"),
        format!("; alias a='{other}'\na"),
        format!(" | sh -c '{other}'"),
        format!("; timeout 5 {other}"),
        format!("; nohup {other}"),
        format!("; command {other}"),
        format!("; exec {other}"),
        " > out.txt".to_string(),
        " >> out.txt".to_string(),
        " &> out.txt".to_string(),
        " 2> err.txt".to_string(),
    ]);
    out
}

/// `echo hi` with arguments, a hidden command somewhere in them, possibly nested.
fn line() -> impl Strategy<Value = String> {
    let fragment = other().prop_flat_map(|o| proptest::sample::select(hiding(o)));
    let nested = fragment.prop_recursive(3, 8, 1, |inner| {
        inner.prop_map(|f| format!(" $(echo hi{f})"))
    });
    (
        proptest::collection::vec(argument(), 0..3),
        nested,
        proptest::collection::vec(argument(), 0..3),
    )
        .prop_map(|(before, hidden, after)| {
            format!("echo hi {}{hidden} {}", before.join(" "), after.join(" "))
        })
}

fn echo_hi_granted() -> (Policy, Grants) {
    let policy = Policy {
        rules: Rules::default(),
        workspace: Workspace::new("/ws".into(), Vec::new(), Some(Path::new("/home/u"))),
        protected: Protected::default(),
        grammar: shell::Grammar::Posix,
        sandbox: None,
    };
    let mut grants = Grants::default();
    let access = Access::Execute {
        command: "echo hi".into(),
        cwd: "/ws".into(),
        outside_sandbox: None,
    };
    let judged = policy.judge("run_command", &access, Mode::Ask, &grants);
    grants.remember(&judged.offer.allow_always.unwrap_or_default(), true);
    (policy, grants)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn no_hidden_command_rides_on_a_single_grant(line in line()) {
        let (policy, grants) = echo_hi_granted();
        let access = Access::Execute { command: line.clone(), cwd: "/ws".into(), outside_sandbox: None };
        for mode in [Mode::Ask, Mode::AcceptEdits] {
            let judged = policy.judge("run_command", &access, mode, &grants);
            prop_assert_ne!(judged.decision, Decision::Allow, "{:?} approved in {:?}", line, mode);
        }
    }

    #[test]
    fn any_text_parses_without_panicking(line in "\\PC{0,200}") {
        let parsed = shell::parse(&line);
        prop_assert!(!parsed.commands.is_empty() || !parsed.hazards.is_empty());
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    /// A deny rule on the hidden program refuses the line, whatever hides it.
    #[test]
    fn a_deny_rule_on_the_hidden_program_refuses_the_line(
        (hidden, fragment, args) in other().prop_flat_map(|o| {
            let fragments = proptest::sample::select(hiding(o.clone()));
            (Just(o), fragments, proptest::collection::vec(argument(), 0..3))
        })
    ) {
        // Fragments that hide no command (`> out.txt`) have nothing to deny.
        prop_assume!(fragment.contains(&hidden));
        let line = format!("echo hi {}{fragment}", args.join(" "));
        let program = program_of(&hidden);
        let policy = super::tests::policy(&[(RuleEffect::Deny, &format!("run_command({program}:*)"))]);
        let access = Access::Execute { command: line.clone(), cwd: "/ws".into(), outside_sandbox: None };
        for mode in [Mode::Ask, Mode::AcceptEdits, Mode::FullAccess] {
            let judged = policy.judge("run_command", &access, mode, &Grants::default());
            prop_assert!(
                matches!(judged.decision, Decision::Refuse(_)),
                "{:?} not refused in {:?}: {:?}", line, mode, judged.decision
            );
        }
    }
}

#[test]
fn the_grant_itself_still_approves_echo_hi() {
    let (policy, grants) = echo_hi_granted();
    for line in ["echo hi", "echo hi 2>&1", "echo hi >/dev/null"] {
        let access = Access::Execute {
            command: line.into(),
            cwd: "/ws".into(),
            outside_sandbox: None,
        };
        let judged = policy.judge("run_command", &access, Mode::Ask, &grants);
        assert_eq!(judged.decision, Decision::Allow, "{line}");
    }
}
