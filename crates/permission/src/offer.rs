//! The answers a permission request offers, each labelled with exactly what it remembers:
//! `Always allow "cargo test …"`, never a bare "Always allow".

use std::path::{Path, PathBuf};

use super::grants::{Grant, Grants};
use super::rules::Rules;
use super::scope::CommandScope;
use super::{Subject, shell::Hazard};
use crate::types::{PermissionAnswer, PermissionChoice};

/// What asking about one call offers.
#[derive(Debug, Clone)]
pub struct Offer {
    /// What "always allow" remembers; `None` when it is not offered.
    pub allow_always: Option<Vec<Grant>>,
    /// What "always reject" remembers (nothing: not offered).
    pub reject_always: Vec<Grant>,
    /// Why "always allow" is not offered, shown with the request.
    pub withheld: Option<String>,
    /// Why a file in the session's folder still asks (the folder is not a project).
    pub note: Option<String>,
    /// The session's folder, for labels.
    root: PathBuf,
}

impl Offer {
    /// An offer of every answer, "always allow" remembering nothing yet (tests).
    #[cfg(test)]
    pub(crate) fn blank() -> Offer {
        Offer {
            allow_always: Some(Vec::new()),
            reject_always: Vec::new(),
            withheld: None,
            note: None,
            root: PathBuf::new(),
        }
    }

    /// The offer for `subject`: for a command line, "always allow" remembers the scope of
    /// each simple command not yet covered; a line with a hazard gets none.
    pub(super) fn for_subject(
        subject: &Subject,
        rules: &Rules,
        grants: &Grants,
        root: &Path,
    ) -> Offer {
        let mut offer = Offer {
            allow_always: None,
            reject_always: Vec::new(),
            withheld: None,
            note: None,
            root: root.to_path_buf(),
        };
        let same = |grant: Grant| (Some(vec![grant.clone()]), vec![grant]);
        (offer.allow_always, offer.reject_always) = match subject {
            Subject::Free => (None, Vec::new()),
            Subject::Path { access, path } => same(Grant::Path {
                access: *access,
                path: path.to_path_buf(),
            }),
            Subject::Tool { name, .. } => same(Grant::Tool(name.to_string())),
            Subject::Web { tool, host } => same(Grant::Web {
                tool: tool.to_string(),
                host: host.to_string(),
            }),
            Subject::Command { line, parsed, .. } => {
                let reject = match parsed.commands.as_slice() {
                    [only] if parsed.hazards.is_empty() => {
                        vec![Grant::Command(CommandScope::of(only))]
                    }
                    _ => vec![Grant::Line(line.to_string())],
                };
                let pattern = parsed
                    .commands
                    .iter()
                    .flat_map(|c| c.words.iter())
                    .find(|w| !w.literal);
                if let Some(hazard) = parsed.hazards.first() {
                    offer.withheld = Some(withheld(hazard));
                    (None, reject)
                } else if let Some(word) = pattern {
                    // `tar czf b.tgz *` is another command once a file named like an
                    // option exists: a label cannot say what a pattern will match.
                    offer.withheld = Some(format!(
                        "tandem offers no \"Always allow\" for this command: `{word}` stands for whatever it matches when the command runs."
                    ));
                    (None, reject)
                } else {
                    (Some(command_grants(parsed, rules, grants)), reject)
                }
            }
        };
        offer
    }

    /// One offer for several paths asked about at once: "always" remembers each of them,
    /// and is withheld when any of them withholds it.
    pub(super) fn merged(offers: Vec<Offer>) -> Offer {
        let mut merged = Offer {
            allow_always: Some(Vec::new()),
            reject_always: Vec::new(),
            withheld: None,
            note: None,
            root: offers.first().map(|o| o.root.clone()).unwrap_or_default(),
        };
        for offer in offers {
            merged.allow_always = match (merged.allow_always, offer.allow_always) {
                (Some(mut all), Some(more)) => {
                    all.extend(
                        more.into_iter()
                            .filter(|g| !all.contains(g))
                            .collect::<Vec<_>>(),
                    );
                    Some(all)
                }
                _ => None,
            };
            for grant in offer.reject_always {
                if !merged.reject_always.contains(&grant) {
                    merged.reject_always.push(grant);
                }
            }
            merged.withheld = merged.withheld.or(offer.withheld);
            merged.note = merged.note.or(offer.note);
        }
        merged
    }

    /// Takes "always allow" off the offer, saying why.
    pub fn withhold_always(&mut self, why: String) {
        self.allow_always = None;
        self.withheld = Some(format!("tandem offers no \"Always allow\" here: {why}."));
    }

    /// The answers, in the order the editor shows them.
    pub fn choices(&self) -> Vec<PermissionChoice> {
        let choice = |answer, label: String| PermissionChoice { answer, label };
        let mut choices = vec![choice(PermissionAnswer::AllowOnce, "Allow".into())];
        if let Some(grants) = &self.allow_always {
            choices.push(choice(
                PermissionAnswer::AllowAlways,
                format!("Always allow {}", self.labels(grants)),
            ));
        }
        choices.push(choice(PermissionAnswer::RejectOnce, "Reject".into()));
        if !self.reject_always.is_empty() {
            choices.push(choice(
                PermissionAnswer::RejectAlways,
                format!("Always reject {}", self.labels(&self.reject_always)),
            ));
        }
        choices
    }

    /// `"a …"`, `"a …" and "b"`, `"a …", "b" and "c"`.
    fn labels(&self, grants: &[Grant]) -> String {
        let labels: Vec<String> = grants.iter().map(|g| g.label(&self.root)).collect();
        match labels.split_last() {
            Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
            _ => labels.concat(),
        }
    }
}

/// The scopes "always allow" remembers for a line: one per simple command that neither a
/// rule nor a grant covers yet (all of them when each already is), without repeats.
fn command_grants(
    parsed: &super::shell::CommandLine,
    rules: &Rules,
    grants: &Grants,
) -> Vec<Grant> {
    let uncovered: Vec<_> = parsed
        .commands
        .iter()
        .filter(|c| rules.allowing(c).is_none() && !grants.allows_command(c))
        .collect();
    let commands = if uncovered.is_empty() {
        parsed.commands.iter().collect()
    } else {
        uncovered
    };
    let mut out: Vec<Grant> = Vec::new();
    for command in commands {
        let grant = Grant::Command(CommandScope::of(command));
        if !out.contains(&grant) {
            out.push(grant);
        }
    }
    out
}

/// Why a line with `hazard` gets no "always allow".
fn withheld(hazard: &Hazard) -> String {
    format!("tandem offers no \"Always allow\" for this command: {hazard}.")
}
