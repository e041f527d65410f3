//! The precedence as a table: every combination of the facts, and what wins. The whole table
//! is a snapshot (`snapshots/`), so a change to the order shows as a reviewed diff of the rows
//! it changes; the assertions below state the rules the table must keep whatever the order.

use super::*;
use crate::Offer;

/// Every combination of the facts: a deny rule or not, the mode's three answers, the seven
/// yes/no facts, the hook's four verdicts.
fn every_combination() -> Vec<Facts> {
    let modes = [
        Decision::Allow,
        Decision::Ask,
        Decision::Refuse("mode".into()),
    ];
    let hooks = [
        ToolVerdict::Pass,
        ToolVerdict::Allow,
        ToolVerdict::Ask,
        ToolVerdict::Deny("hook".into()),
    ];
    let mut all = Vec::new();
    for denied in [false, true] {
        for mode in &modes {
            for bits in 0u8..128 {
                for hook in &hooks {
                    let on = |n: u8| bits & (1 << n) != 0;
                    let why = |n: u8, text: &str| on(n).then(|| text.to_string());
                    all.push(Facts {
                        denied: denied.then(|| "deny".to_string()),
                        mode: mode.clone(),
                        rejected_always: on(0),
                        leaves_sandbox: why(1, "sandbox"),
                        ask_rule: why(2, "ask rule"),
                        protected: why(3, "protected"),
                        outside: why(4, "outside"),
                        approved: on(5),
                        unbounded: None,
                        must_ask: why(6, "must ask"),
                        hook: hook.clone(),
                    });
                }
            }
        }
    }
    all
}

/// One row: the facts that hold, then what wins.
fn row(facts: &Facts, ruling: &Ruling) -> String {
    let mut held = Vec::new();
    let mut flag = |on: bool, name: &str| {
        if on {
            held.push(name.to_string());
        }
    };
    flag(facts.denied.is_some(), "deny");
    flag(facts.rejected_always, "rejected");
    flag(facts.leaves_sandbox.is_some(), "sandbox");
    flag(facts.ask_rule.is_some(), "ask-rule");
    flag(facts.protected.is_some(), "protected");
    flag(facts.outside.is_some(), "outside");
    flag(facts.approved, "approved");
    flag(facts.must_ask.is_some(), "must");
    let mode = match &facts.mode {
        Decision::Allow => "allows",
        Decision::Ask => "asks",
        Decision::Refuse(_) => "refuses",
    };
    let hook = match &facts.hook {
        ToolVerdict::Pass => "pass",
        ToolVerdict::Allow => "allow",
        ToolVerdict::Ask => "ask",
        ToolVerdict::Deny(_) => "deny",
    };
    let decision = match &ruling.decision {
        Decision::Allow => "allow",
        Decision::Ask => "ask",
        Decision::Refuse(_) => "refuse",
    };
    let firm = if ruling.firm { " firm" } else { "" };
    let over = match ruling.over {
        Over::Nothing => String::new(),
        other => format!(" over {other:?}"),
    };
    format!(
        "{mode} {hook} [{}] -> {decision}{firm} ({:?}{over})",
        held.join(" "),
        ruling.ground
    )
}

#[test]
fn every_combination_of_the_facts_and_what_wins() {
    let table: Vec<String> = every_combination()
        .iter()
        .map(|facts| row(facts, &decide(facts)))
        .collect();
    assert_eq!(table.len(), 2 * 3 * 128 * 4);
    insta::assert_snapshot!(table.join("\n"));
}

#[test]
fn a_deny_rule_and_the_modes_refusal_are_lifted_by_nothing() {
    for facts in every_combination() {
        let ruling = decide(&facts);
        if facts.denied.is_some() {
            assert_eq!(
                ruling.decision,
                Decision::Refuse("deny".into()),
                "{facts:?}"
            );
            assert_eq!(ruling.ground, Ground::DenyRule);
        } else if let Decision::Refuse(why) = &facts.mode {
            assert_eq!(ruling.decision, Decision::Refuse(why.clone()), "{facts:?}");
        }
    }
}

#[test]
fn a_hooks_deny_refuses_whatever_else_would_allow_or_ask() {
    for facts in every_combination() {
        let refused_anyway = facts.denied.is_some() || matches!(facts.mode, Decision::Refuse(_));
        if matches!(facts.hook, ToolVerdict::Deny(_)) && !refused_anyway {
            let decision = decide(&facts).decision;
            let firm_question = facts.leaves_sandbox.is_some() || facts.protected.is_some();
            if facts.rejected_always && firm_question {
                // The remembered refusal stands over a question nothing may skip.
                assert_eq!(
                    decision,
                    Decision::Refuse(REJECTED_ALWAYS.into()),
                    "{facts:?}"
                );
            } else {
                let hook = Decision::Refuse("Denied by a hook: hook".into());
                assert_eq!(decision, hook, "{facts:?}");
            }
        }
    }
}

#[test]
fn questions_nothing_may_skip_stay_questions_under_a_hooks_allow() {
    for facts in every_combination() {
        let refused = facts.denied.is_some()
            || matches!(facts.mode, Decision::Refuse(_))
            || matches!(facts.hook, ToolVerdict::Deny(_));
        let firm_question = facts.leaves_sandbox.is_some() || facts.protected.is_some();
        let refused = refused || (facts.rejected_always && firm_question);
        let must_be_asked = facts.must_ask.is_some() || firm_question;
        if must_be_asked && !refused {
            let ruling = decide(&facts);
            assert_eq!(ruling.decision, Decision::Ask, "{facts:?}");
            assert!(ruling.firm, "{facts:?}");
        }
    }
}

#[test]
fn without_a_hook_nothing_runs_unasked_that_no_mode_rule_or_grant_allows() {
    for facts in every_combination() {
        if facts.hook == ToolVerdict::Pass && decide(&facts).decision == Decision::Allow {
            assert!(facts.mode == Decision::Allow || facts.approved, "{facts:?}");
            assert!(facts.must_ask.is_none() && facts.leaves_sandbox.is_none());
        }
    }
}

#[test]
fn what_the_user_is_offered_follows_the_ground() {
    let mut facts = Facts::none();
    facts.leaves_sandbox = Some("needs the network".into());
    let mut offer = Offer::blank();
    decide(&facts).shape_offer(&facts, &mut offer);
    assert!(offer.allow_always.is_none());
    assert_eq!(
        offer.note.as_deref(),
        Some("outside the sandbox: needs the network")
    );

    let mut facts = Facts::none();
    facts.protected = Some("`.git/hooks` runs code".into());
    facts.must_ask = Some("this project declares its own programs".into());
    let mut offer = Offer::blank();
    decide(&facts).shape_offer(&facts, &mut offer);
    assert_eq!(
        offer.note.as_deref(),
        Some("this project declares its own programs"),
        "the session's own reason is the one the question names"
    );
}
