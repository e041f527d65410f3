//! Whether a tool call runs, asks or is refused (DESIGN.md §3), and what "always" means.
//!
//! Precedence, strongest first: a deny rule (in every mode, `full-access` too); the mode's
//! refusal (`read-only`); a remembered "always reject"; an ask rule; the mode allowing it;
//! for a command line with a [`shell::Hazard`], always ask; an allow rule or a remembered
//! "always allow" (for a line: one per simple command); otherwise ask. A `pre_tool_use`
//! hook decides after the first two (turn/calls.rs).

mod grants;
mod modes;
mod offer;
mod report;
mod rules;
mod scope;
pub mod shell;
pub mod trust;
mod workspace;

use std::path::{Path, PathBuf};

pub use grants::{Grant, Grants};
pub use offer::Offer;
pub use report::{GrantView, RuleView, Snapshot};
pub use rules::Rules;
pub use scope::CommandScope;
pub use workspace::Workspace;

use crate::config::permissions::{Effect, PathAccess, Rule};
use crate::types::Access;
use crate::types::Mode;
use shell::CommandLine;

/// What to do with a tool call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Run it.
    Allow,
    /// Ask the user first.
    Ask,
    /// Do not run it and do not ask; the reason goes to the model.
    Refuse(String),
}

/// A call as the policy sees it.
#[derive(Debug)]
pub enum Subject<'a> {
    /// Touches nothing outside tandem.
    Free,
    /// Reads or edits a path.
    Path {
        /// Reading or editing.
        access: PathAccess,
        /// The resolved path.
        path: &'a Path,
    },
    /// Runs a command line.
    Command {
        /// As the model wrote it.
        line: &'a str,
        /// Taken apart.
        parsed: CommandLine,
    },
    /// Calls an outside tool (an MCP server's).
    Tool {
        /// The name the model calls.
        name: &'a str,
        /// Whether the tool says it only reads.
        read_only: bool,
    },
}

impl<'a> Subject<'a> {
    /// The subject of a call of `tool` with `access`.
    pub fn of(tool: &'a str, access: &'a Access) -> Subject<'a> {
        match access {
            Access::Free => Subject::Free,
            Access::Read(path) => Subject::Path {
                access: PathAccess::Read,
                path,
            },
            Access::Edit(path) => Subject::Path {
                access: PathAccess::Edit,
                path,
            },
            // Judged path by path (`Policy::judge`); as one subject, its first path.
            Access::EditMany(paths) => match paths.first() {
                Some(path) => Subject::Path {
                    access: PathAccess::Edit,
                    path,
                },
                None => Subject::Free,
            },
            Access::Execute { command } => Subject::Command {
                line: command,
                parsed: shell::parse(command),
            },
            Access::Tool { read_only } => Subject::Tool {
                name: tool,
                read_only: *read_only,
            },
        }
    }
}

/// The rules and the inside of one session; fixed when it opens.
#[derive(Debug)]
pub struct Policy {
    /// Allow, ask and deny rules.
    pub rules: Rules,
    /// Where reads are free.
    pub workspace: Workspace,
}

/// The verdict on one call, and what the user is offered if asked.
#[derive(Debug, Clone)]
pub struct Judgement {
    /// Allow, ask or refuse.
    pub decision: Decision,
    /// A refusal nothing may lift (a deny rule or the mode), not even a hook.
    pub firm: bool,
    /// The answers offered when asking.
    pub offer: Offer,
}

impl Policy {
    /// Judges a call of `tool` with `access` in `mode`, given the session's `grants`.
    pub fn judge(&self, tool: &str, access: &Access, mode: Mode, grants: &Grants) -> Judgement {
        if let Access::EditMany(paths) = access
            && paths.len() > 1
        {
            return self.judge_many(tool, paths, mode, grants);
        }
        let subject = Subject::of(tool, access);
        let root = self.workspace.root();
        let mut offer = Offer::for_subject(&subject, &self.rules, grants, root);
        let verdict = |decision, firm, offer| Judgement {
            decision,
            firm,
            offer,
        };
        if let Some(rule) = self.rules.find(Effect::Deny, &subject) {
            return verdict(Decision::Refuse(refused_by(rule)), true, offer);
        }
        let by_mode = modes::decide(mode, &subject, &self.workspace);
        if let Decision::Refuse(_) = by_mode {
            return verdict(by_mode, true, offer);
        }
        if grants.rejects(&subject) {
            let reason = "Rejected: the user chose to always reject this in this session. Do not retry it; ask the user how to proceed.";
            return verdict(Decision::Refuse(reason.into()), false, offer);
        }
        if let Some(rule) = self.rules.find(Effect::Ask, &subject) {
            offer.withhold_always(format!(
                "the rule `{}` in {} asks every time",
                rule.text,
                rule.source.display()
            ));
            return verdict(Decision::Ask, false, offer);
        }
        if by_mode == Decision::Allow {
            return verdict(Decision::Allow, false, offer);
        }
        let approved = match &subject {
            Subject::Command { parsed, .. } => {
                parsed.hazards.is_empty()
                    && parsed
                        .commands
                        .iter()
                        .all(|c| self.rules.allowing(c).is_some() || grants.allows_command(c))
            }
            Subject::Free => true,
            other => self.rules.find(Effect::Allow, other).is_some() || grants.allows(other),
        };
        if approved {
            return verdict(Decision::Allow, false, offer);
        }
        if let (Subject::Path { .. }, Some(why)) = (&subject, self.workspace.unbounded()) {
            offer.note = Some(why.to_string());
        }
        verdict(Decision::Ask, false, offer)
    }
}

impl Policy {
    /// Judges an edit of several paths at once: a refusal of any refuses all (a firm one
    /// first); otherwise it asks when any path asks, offering what each asking path would.
    fn judge_many(&self, tool: &str, paths: &[PathBuf], mode: Mode, grants: &Grants) -> Judgement {
        let mut judged: Vec<Judgement> = paths
            .iter()
            .map(|p| self.judge(tool, &Access::Edit(p.clone()), mode, grants))
            .collect();
        let refused = |j: &Judgement| matches!(j.decision, Decision::Refuse(_));
        if let Some(i) = judged
            .iter()
            .position(|j| refused(j) && j.firm)
            .or_else(|| judged.iter().position(refused))
        {
            return judged.swap_remove(i);
        }
        let asking: Vec<Judgement> = judged
            .iter()
            .filter(|j| j.decision == Decision::Ask)
            .cloned()
            .collect();
        let (decision, from) = if asking.is_empty() {
            (Decision::Allow, judged)
        } else {
            (Decision::Ask, asking)
        };
        Judgement {
            decision,
            firm: false,
            offer: Offer::merged(from.into_iter().map(|j| j.offer).collect()),
        }
    }

    /// Whether a deny rule forbids reading `path` (searches leave it out).
    pub fn denies_read(&self, path: &Path) -> bool {
        let subject = Subject::Path {
            access: PathAccess::Read,
            path,
        };
        self.rules.find(Effect::Deny, &subject).is_some()
    }
}

/// What the model reads when a deny rule refused its call.
fn refused_by(rule: &Rule) -> String {
    format!(
        "Refused by the rule `{}` (deny) in {}: the user does not allow this. Do not retry it or work around it; tell the user what you wanted to do.",
        rule.text,
        rule.source.display()
    )
}

#[cfg(test)]
mod property;
#[cfg(test)]
mod tests;
