//! Whether a tool call runs, asks or is refused (DESIGN.md §3), and what "always" means.
//!
//! The facts about a call (its rules, grants, mode, sandbox, the session's own question and
//! the hooks' verdict) are gathered by [`Policy::judge_with`]; which one wins is decided in one
//! pure function, [`precedence::decide`], whose docs give the order and whose tests list every
//! combination.
//!
//! tandem-permission uses tandem-types, tandem-platform and tandem-config, and nothing above
//! them: it judges plain requests (a tool, its paths or command line, the mode, the grants) and
//! never runs a tool. The core crate asks it before every call.

// The floors below, by the names this crate's code reaches them with.
use tandem_config as config;
use tandem_platform as platform;
use tandem_types as types;

mod command;
mod grants;
mod modes;
mod offer;
pub mod precedence;
mod protected;
mod report;
mod rules;
mod scope;
pub mod shell;
pub mod trust;
mod workspace;

use std::path::{Path, PathBuf};

pub use grants::{Grant, Grants};
pub use offer::Offer;
pub use protected::Protected;
pub use report::{GrantView, RuleView, Snapshot};
pub use rules::{Hit, Rules};
pub use scope::CommandScope;
pub use workspace::Workspace;

use crate::config::permissions::{PathAccess, RuleEffect};
use crate::platform::named::PathBase;
use crate::types::Access;
use crate::types::Mode;
use command::Named;
use precedence::Facts;
pub use precedence::ToolVerdict;
use shell::{CommandLine, Grammar};

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
pub(crate) enum Subject<'a> {
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
        /// The folder it runs in (resolved).
        cwd: &'a Path,
    },
    /// Calls an outside tool (an MCP server's).
    Tool {
        /// The name the model calls.
        name: &'a str,
        /// Whether the tool says it only reads.
        read_only: bool,
    },
    /// Reaches a host on the web (`web_fetch`, `web_search`).
    Web {
        /// The tool.
        tool: &'a str,
        /// The host, lower case.
        host: &'a str,
    },
}

impl<'a> Subject<'a> {
    /// The subject of a call of `tool` with `access`, its command line read with `grammar`.
    pub(crate) fn of(tool: &'a str, access: &'a Access, grammar: &Grammar) -> Subject<'a> {
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
            Access::Execute { command, cwd, .. } => Subject::Command {
                line: command,
                parsed: grammar.parse(command),
                cwd,
            },
            Access::Tool { read_only } => Subject::Tool {
                name: tool,
                read_only: *read_only,
            },
            Access::Web { host } => Subject::Web { tool, host },
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
    /// Paths whose edits always ask.
    pub protected: Protected,
    /// How the session's shell reads command lines.
    pub grammar: Grammar,
    /// The sandbox commands run in, unless the user turned it off.
    pub sandbox: Option<std::sync::Arc<crate::platform::sandbox::SessionSandbox>>,
}

/// The verdict on one call, and what the user is offered if asked.
#[derive(Debug, Clone)]
pub struct Judgement {
    /// Allow, ask or refuse.
    pub decision: Decision,
    /// A refusal nothing may lift (a deny rule or the mode), not even a hook; or a question
    /// nothing may skip (a protected path).
    pub firm: bool,
    /// The answers offered when asking.
    pub offer: Offer,
}

impl Judgement {
    /// This judgement (several paths' combined) once the session's "ask every time" and the
    /// hook have had their say ([`precedence::overlay`]).
    fn overlaid(mut self, must_ask: Option<&str>, hook: &ToolVerdict) -> Judgement {
        let over = precedence::overlay(self.decision, self.firm, must_ask.is_some(), hook);
        precedence::shape_for_must_ask(must_ask, over.must_ask, &mut self.offer);
        Judgement {
            decision: over.decision,
            firm: over.firm,
            offer: self.offer,
        }
    }
}

impl Policy {
    /// Why the model asks to run a command outside the sandbox, when it does and there is
    /// one to leave (none in `full-access`, or with the sandbox turned off).
    fn leaves_sandbox<'a>(&self, access: &'a Access, mode: Mode) -> Option<&'a str> {
        match access {
            Access::Execute {
                outside_sandbox: Some(why),
                ..
            } if self.sandbox.is_some() && mode != Mode::FullAccess => Some(why),
            _ => None,
        }
    }

    /// Judges a call of `tool` with `access` in `mode`, given the session's `grants`, as the
    /// policy alone decides it (no hook, no session-wide question).
    pub fn judge(&self, tool: &str, access: &Access, mode: Mode, grants: &Grants) -> Judgement {
        self.judge_with(tool, access, mode, grants, None, &ToolVerdict::Pass)
    }

    /// Judges a call: the facts about it are gathered here and [`precedence::decide`] says
    /// which wins; `must_ask` is the session's own reason to ask about every call, `hook`
    /// what the `pre_tool_use` hooks said.
    pub fn judge_with(
        &self,
        tool: &str,
        access: &Access,
        mode: Mode,
        grants: &Grants,
        must_ask: Option<&str>,
        hook: &ToolVerdict,
    ) -> Judgement {
        if let Access::EditMany(paths) = access
            && paths.len() > 1
        {
            let combined = self.judge_many(tool, paths, mode, grants);
            return combined.overlaid(must_ask, hook);
        }
        let subject = Subject::of(tool, access, &self.grammar);
        let mut offer = Offer::for_subject(&subject, &self.rules, grants, self.workspace.root());
        let facts = self.facts(&subject, access, mode, grants, must_ask, hook);
        let ruling = precedence::decide(&facts);
        ruling.shape_offer(&facts, &mut offer);
        Judgement {
            decision: ruling.decision,
            firm: ruling.firm,
            offer,
        }
    }

    /// Everything that bears on a call of `subject`, each part found on its own.
    fn facts(
        &self,
        subject: &Subject,
        access: &Access,
        mode: Mode,
        grants: &Grants,
        must_ask: Option<&str>,
        hook: &ToolVerdict,
    ) -> Facts {
        let named = match subject {
            Subject::Command { parsed, cwd, .. } => command::named(parsed, &self.place(cwd)),
            _ => Vec::new(),
        };
        let outside = match subject {
            Subject::Command { cwd, .. } => self.outside(cwd, &named),
            _ => None,
        };
        Facts {
            denied: self.denied(subject, &named),
            mode: modes::decide(mode, subject, &self.workspace),
            rejected_always: grants.rejects(subject),
            leaves_sandbox: self.leaves_sandbox(access, mode).map(str::to_string),
            ask_rule: self.rules.find(RuleEffect::Ask, subject).map(|hit| {
                format!(
                    "the rule `{}` in {} asks every time",
                    hit.rule.text,
                    hit.rule.source.display()
                )
            }),
            protected: (mode != Mode::FullAccess)
                .then(|| self.protected(subject, &named))
                .flatten(),
            outside,
            approved: self.approved(subject, grants),
            unbounded: match subject {
                Subject::Path { .. } => self.workspace.unbounded().map(str::to_string),
                _ => None,
            },
            must_ask: must_ask.map(str::to_string),
            hook: hook.clone(),
        }
    }

    /// Whether an allow rule or a remembered answer approves `subject` ahead of time (for a
    /// line: every simple command in it).
    fn approved(&self, subject: &Subject, grants: &Grants) -> bool {
        match subject {
            // A pattern or an expansion is words no label shows (`git fetch origin *` once a file
            // named `--upload-pack=…` exists): never approved ahead of time.
            Subject::Command { parsed, .. } => {
                parsed.hazards.is_empty()
                    && parsed.commands.iter().all(|c| {
                        c.words.iter().all(|w| w.literal)
                            && (self.rules.allowing(c).is_some() || grants.allows_command(c))
                    })
            }
            Subject::Free => true,
            other => self.rules.find(RuleEffect::Allow, other).is_some() || grants.allows(other),
        }
    }

    /// Why a deny rule refuses `subject`, if one does: a rule on the call itself, for an edit
    /// a rule on reading the file (editing, moving or patching it would reveal or carry its
    /// content), and for a command a rule on reading a file it names.
    fn denied(&self, subject: &Subject, named: &[Named]) -> Option<String> {
        if let Some(hit) = self.rules.find(RuleEffect::Deny, subject) {
            return Some(refused_by(hit, subject));
        }
        let read_denied = |path: &Path| {
            self.rules.find(
                RuleEffect::Deny,
                &Subject::Path {
                    access: PathAccess::Read,
                    path,
                },
            )
        };
        let (hit, path) = match subject {
            Subject::Path {
                access: PathAccess::Edit,
                path,
            } => (read_denied(path)?, path.to_path_buf()),
            Subject::Command { parsed, .. } => {
                if let Some(hit) = self.rules.any_read_deny()
                    && let Some(why) = unseen_reads(parsed, named)
                {
                    return Some(format!(
                        "Refused: while the rule `{}` (deny) in {} is in force, tandem refuses command lines that may read files it cannot see, and in this one {why}. Name the files plainly; do not try to work around the rule.",
                        hit.text,
                        hit.source.display()
                    ));
                }
                named.iter().find_map(|n| match n {
                    Named::Path(path) => read_denied(path).map(|hit| (hit, path.clone())),
                    Named::Unknown(_) | Named::Lost(_) | Named::GitConfig(_) => None,
                })?
            }
            _ => return None,
        };
        Some(format!(
            "Refused by the rule `{}` (deny) in {}: the user does not allow reading {}, so no tool may read, copy, move, edit or patch it. Do not retry it or work around it; tell the user what you wanted to do.",
            hit.rule.text,
            hit.rule.source.display(),
            self.display(&path)
        ))
    }

    /// Why a command run in `cwd` and naming `named` must ask even when a rule or an answer
    /// covers its programs: it runs, or names a path, outside the project.
    fn outside(&self, cwd: &Path, named: &[Named]) -> Option<String> {
        if !self.workspace.contains(cwd) {
            return Some(format!("it runs in {}, outside the project", cwd.display()));
        }
        named.iter().find_map(|n| match n {
            Named::Path(path) if command::harmless(path) || self.workspace.contains(path) => None,
            Named::Path(path) => Some(format!("it names {}, outside the project", path.display())),
            Named::Unknown(word) => Some(format!(
                "`{}` may name a folder outside the project",
                shell::one_line(word, 40)
            )),
            Named::Lost(source) => Some(format!(
                "after `{}` it works in a folder tandem cannot follow",
                shell::one_line(source, 40)
            )),
            Named::GitConfig(_) => None,
        })
    }

    /// Why a call must ask outside `full-access` whatever covers it: it edits a protected
    /// path, or is a command that names one or changes git's config.
    fn protected(&self, subject: &Subject, named: &[Named]) -> Option<String> {
        match subject {
            Subject::Path {
                access: PathAccess::Edit,
                path,
            } => {
                let why = self.protected.why(path)?;
                Some(format!("{} is {why}", self.display(path)))
            }
            Subject::Command { .. } => named.iter().find_map(|n| match n {
                Named::Path(path) => {
                    let why = self.protected.why_named(path)?;
                    Some(format!("it names {}, {why}", self.display(path)))
                }
                Named::GitConfig(_) => Some(
                    "it changes git's config, which names programs git runs (hooks, fsmonitor, aliases), so tandem asks every time".into(),
                ),
                Named::Unknown(_) | Named::Lost(_) => None,
            }),
            _ => None,
        }
    }

    /// Where a command run in `cwd` resolves the paths it names.
    fn place(&self, cwd: &Path) -> PathBase {
        PathBase {
            cwd: cwd.to_path_buf(),
            home: self.workspace.home().map(Path::to_path_buf),
            folders: Vec::new(),
        }
    }

    /// `path` as messages show it: relative to the session's folder when inside it.
    fn display(&self, path: &Path) -> String {
        crate::platform::named::display(path, self.workspace.root())
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
        let firm = asking.iter().any(|j| j.firm);
        let (decision, from) = if asking.is_empty() {
            (Decision::Allow, judged)
        } else {
            (Decision::Ask, asking)
        };
        Judgement {
            decision,
            firm,
            offer: Offer::merged(from.into_iter().map(|j| j.offer).collect()),
        }
    }

    /// Whether a deny rule forbids reading `path` (searches leave it out).
    pub fn denies_read(&self, path: &Path) -> bool {
        let subject = Subject::Path {
            access: PathAccess::Read,
            path,
        };
        self.rules.find(RuleEffect::Deny, &subject).is_some()
    }
}

/// What in a command line may read a file no check can see, if anything: a part the walk
/// cannot read (a shell fed from a pipe, an alias, what sh and bash read differently), or a
/// folder it cannot follow after which any relative path may be the denied one.
fn unseen_reads(parsed: &CommandLine, named: &[Named]) -> Option<String> {
    if let Some(hazard) = parsed.hazards.iter().find(|h| h.hides_commands()) {
        return Some(hazard.to_string());
    }
    named.iter().find_map(|n| match n {
        Named::Lost(source) => Some(format!(
            "after `{}` it works in a folder tandem cannot follow",
            shell::one_line(source, 40)
        )),
        _ => None,
    })
}

/// What the model reads when a deny rule refused its call.
fn refused_by(hit: Hit, subject: &Subject) -> String {
    let rule = format!(
        "`{}` (deny) in {}",
        hit.rule.text,
        hit.rule.source.display()
    );
    match (hit.unseen, subject) {
        (Some(why), Subject::Command { .. }) => format!(
            "Refused: while the rule {rule} is in force, tandem refuses command lines it cannot prove stay clear of it, and in this one {why}. Write the command out plainly, without variables, aliases, functions or nested shells; do not try to work around the rule."
        ),
        _ => format!(
            "Refused by the rule {rule}: the user does not allow this. Do not retry it or work around it; tell the user what you wanted to do."
        ),
    }
}

#[cfg(test)]
mod attacks;
#[cfg(test)]
mod attacks_grants;
#[cfg(test)]
mod property;
#[cfg(test)]
mod rule_forms;
#[cfg(test)]
mod tests;
