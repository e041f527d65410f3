//! The order in which what is known about one call decides it, as one pure function:
//! [`decide`] reads [`Facts`] (the rules, the grants, the mode, the sandbox, the session's
//! own "ask every time", the `pre_tool_use` hooks) and says which one wins. Gathering the
//! facts (matching rules, parsing command lines) is [`crate::Policy`]'s; what the user is
//! offered once a ground is known is [`Ruling::shape_offer`]'s. Nothing else decides.
//!
//! Strongest first:
//! 1. a deny rule refuses, in every mode, and nothing lifts it;
//! 2. the mode's refusal (`read-only`), which nothing lifts either;
//! 3. a remembered "always reject" refuses (a hook may still allow or ask, unless 4 or 5
//!    holds too: then the refusal stands);
//! 4. a command the model asks to run outside the sandbox asks, every time;
//! 5. an edit of a protected path asks, every time;
//! 6. an ask rule asks;
//! 7. the mode allowing it;
//! 8. a command line that runs or names something outside the project asks;
//! 9. an allow rule or a remembered "always allow";
//! 10. otherwise, ask.
//!
//! Over that, in this order: the session's "ask every time" (a project that declares its own
//! programs) turns anything but 1–2 into a question nothing may skip; then a hook's verdict
//! decides, except that it cannot lift 1–2 nor skip a question of 4, 5 or the session's own
//! ("firm"), whatever else holds.

use crate::Decision;

/// What a `pre_tool_use` hook decided about a call.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum ToolVerdict {
    /// No hook had an opinion: the mode's rules apply.
    #[default]
    Pass,
    /// Run it without asking (a read-only mode still refuses).
    Allow,
    /// Ask the user, whatever the mode would do.
    Ask,
    /// Do not run it; the model reads the reason.
    Deny(String),
}

/// Everything that bears on one call, gathered before anything is decided. Each `Option`
/// holds why, in the words the user or the model reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Facts {
    /// A deny rule refuses the call (the refusal).
    pub denied: Option<String>,
    /// What the mode alone says.
    pub mode: Decision,
    /// The user chose "always reject" for it in this session.
    pub rejected_always: bool,
    /// The model asks to run it outside the sandbox, and there is one to leave.
    pub leaves_sandbox: Option<String>,
    /// An ask rule matches (which, and where it is written).
    pub ask_rule: Option<String>,
    /// It edits a protected path, outside `full-access`.
    pub protected: Option<String>,
    /// A command line that runs or names something outside the project.
    pub outside: Option<String>,
    /// An allow rule or a remembered "always allow" approves it ahead of time.
    pub approved: bool,
    /// Why a question about a path says reads reach further than the project (a workspace
    /// folder as wide as the home or the root), when it does.
    pub unbounded: Option<String>,
    /// The session asks about every call (why).
    pub must_ask: Option<String>,
    /// What the hooks said.
    pub hook: ToolVerdict,
}

impl Facts {
    /// Facts that decide nothing: no rule, grant or hook, the mode asking.
    pub fn none() -> Facts {
        Facts {
            denied: None,
            mode: Decision::Ask,
            rejected_always: false,
            leaves_sandbox: None,
            ask_rule: None,
            protected: None,
            outside: None,
            approved: false,
            unbounded: None,
            must_ask: None,
            hook: ToolVerdict::Pass,
        }
    }
}

/// Which of the facts decided, among the session's policy (1–10 above).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ground {
    /// 1. A deny rule.
    DenyRule,
    /// 2. The mode refuses.
    ModeRefuses,
    /// 3. A remembered "always reject".
    RejectedAlways,
    /// 4. The command leaves the sandbox.
    LeavesSandbox,
    /// 5. A protected path.
    Protected,
    /// 6. An ask rule.
    AskRule,
    /// 7. The mode allows it.
    ModeAllows,
    /// 8. The command reaches outside the project.
    Outside,
    /// 9. Approved by a rule or a grant.
    Approved,
    /// 10. Nothing allows it: ask.
    Unknown,
}

/// What came over the policy's ground, if anything changed the decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Over {
    /// Nothing: the policy's ground stands.
    Nothing,
    /// The session's "ask every time".
    MustAsk,
    /// A hook.
    Hook,
}

/// The decision on one call and what it rests on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ruling {
    /// Allow, ask or refuse.
    pub decision: Decision,
    /// The policy's ground.
    pub ground: Ground,
    /// Whether the session's "ask every time" applied (it shapes the offer even when a hook
    /// then decided).
    pub must_ask: bool,
    /// What decided last.
    pub over: Over,
    /// A refusal nothing lifted or a question nothing skipped.
    pub firm: bool,
}

/// The refusal the model reads after an "always reject".
pub const REJECTED_ALWAYS: &str = "Rejected: the user chose to always reject this in this session. Do not retry it; ask the user how to proceed.";

/// Decides one call from its facts (see the module's docs for the order).
pub fn decide(facts: &Facts) -> Ruling {
    let (decision, ground, firm) = by_policy(facts);
    let over = overlay(decision, firm, facts.must_ask.is_some(), &facts.hook);
    Ruling {
        decision: over.decision,
        ground,
        must_ask: over.must_ask,
        over: over.by,
        firm: over.firm,
    }
}

/// The session's policy alone (1–10): the decision, its ground and whether it is firm.
fn by_policy(facts: &Facts) -> (Decision, Ground, bool) {
    if let Some(reason) = &facts.denied {
        return (Decision::Refuse(reason.clone()), Ground::DenyRule, true);
    }
    if let Decision::Refuse(reason) = &facts.mode {
        return (Decision::Refuse(reason.clone()), Ground::ModeRefuses, true);
    }
    // A question nothing may skip: a hook cannot lift it, and a remembered "always reject"
    // over it stays a refusal.
    let firm_question = facts.leaves_sandbox.is_some() || facts.protected.is_some();
    if facts.rejected_always {
        let refused = Decision::Refuse(REJECTED_ALWAYS.into());
        return (refused, Ground::RejectedAlways, firm_question);
    }
    if facts.leaves_sandbox.is_some() {
        return (Decision::Ask, Ground::LeavesSandbox, true);
    }
    if facts.protected.is_some() {
        return (Decision::Ask, Ground::Protected, true);
    }
    if facts.ask_rule.is_some() {
        return (Decision::Ask, Ground::AskRule, false);
    }
    if facts.mode == Decision::Allow {
        return (Decision::Allow, Ground::ModeAllows, false);
    }
    if facts.outside.is_some() {
        return (Decision::Ask, Ground::Outside, false);
    }
    if facts.approved {
        return (Decision::Allow, Ground::Approved, false);
    }
    (Decision::Ask, Ground::Unknown, false)
}

/// A decision once the session's "ask every time" and the hook have had their say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Overlaid {
    /// Allow, ask or refuse.
    pub decision: Decision,
    /// A refusal nothing lifted or a question nothing skipped.
    pub firm: bool,
    /// Whether the session's "ask every time" applied.
    pub must_ask: bool,
    /// What decided last.
    pub by: Over,
}

/// The session's "ask every time" and then the hook, over the policy's `decision` (one
/// call's, or several paths' combined); `firm` says whether nothing may lift or skip it.
pub fn overlay(decision: Decision, firm: bool, must_ask: bool, hook: &ToolVerdict) -> Overlaid {
    let mut out = Overlaid {
        decision,
        firm,
        must_ask: false,
        by: Over::Nothing,
    };
    if out.firm && matches!(out.decision, Decision::Refuse(_)) {
        return out;
    }
    if must_ask {
        out.decision = Decision::Ask;
        out.firm = true;
        out.must_ask = true;
        out.by = Over::MustAsk;
    }
    let by_hook = match hook {
        ToolVerdict::Pass => None,
        ToolVerdict::Deny(reason) => Some(Decision::Refuse(format!("Denied by a hook: {reason}"))),
        _ if out.firm => None,
        ToolVerdict::Ask => Some(Decision::Ask),
        ToolVerdict::Allow => Some(Decision::Allow),
    };
    if let Some(decision) = by_hook {
        out.decision = decision;
        out.by = Over::Hook;
    }
    out
}

/// The offer's words for the session's "ask every time", when it applied.
pub fn shape_for_must_ask(must_ask: Option<&str>, applied: bool, offer: &mut crate::Offer) {
    if applied && let Some(why) = must_ask {
        offer.withhold_always(why.to_string());
        offer.note = Some(why.to_string());
    }
}

impl Ruling {
    /// What the user is offered when asked, given the facts this ruling came from: an
    /// "always" answer is withheld where it could not apply, and the question says why it is
    /// asked when that is not plain.
    pub fn shape_offer(&self, facts: &Facts, offer: &mut crate::Offer) {
        match self.ground {
            Ground::LeavesSandbox => {
                offer.withhold_always("leaving the sandbox is asked about every time".into());
                if let Some(why) = &facts.leaves_sandbox {
                    offer.note = Some(format!("outside the sandbox: {why}"));
                }
            }
            Ground::AskRule => {
                if let Some(why) = &facts.ask_rule {
                    offer.withhold_always(why.clone());
                }
            }
            Ground::Protected => {
                if let Some(why) = &facts.protected {
                    offer.withhold_always(why.clone());
                    offer.note = Some(format!("protected: {why}"));
                }
            }
            Ground::Outside => {
                if let Some(why) = &facts.outside {
                    if offer.allow_always.is_some() {
                        offer.withhold_always(why.clone());
                    }
                    offer.note = Some(why.clone());
                }
            }
            Ground::Unknown => {
                if let Some(why) = &facts.unbounded {
                    offer.note = Some(why.clone());
                }
            }
            Ground::DenyRule
            | Ground::ModeRefuses
            | Ground::RejectedAlways
            | Ground::ModeAllows
            | Ground::Approved => {}
        }
        shape_for_must_ask(facts.must_ask.as_deref(), self.must_ask, offer);
    }
}

#[cfg(test)]
#[path = "precedence_tests.rs"]
mod tests;
