//! What a session's permissions are right now, for the user: the rules in force and the
//! remembered answers (`/permissions`, `_tandem/status`).

use super::{Grants, Policy};
use crate::platform::sandbox::View;
use crate::types::Mode;

/// A session's permissions at one moment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    /// The rules in force, deny first.
    pub rules: Vec<RuleView>,
    /// The remembered answers, allowed first.
    pub grants: Vec<GrantView>,
    /// Why the session's folder does not count as a project, when it does not.
    pub no_project: Option<String>,
    /// The command sandbox (in every mode but `full-access`; see [`Snapshot::sandbox_in`]).
    pub(crate) sandbox: View,
}

/// One rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleView {
    /// `allow`, `ask` or `deny`.
    pub effect: &'static str,
    /// As written.
    pub rule: String,
    /// The file it came from.
    pub source: String,
}

/// One remembered answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GrantView {
    /// `allow` or `reject`.
    pub answer: &'static str,
    /// The tool it is about, as rules name it.
    pub tool: String,
    /// What it covers, as the permission option said.
    pub scope: String,
}

impl Policy {
    /// The rules and `grants` as they are now.
    pub fn snapshot(&self, grants: &Grants) -> Snapshot {
        let root = self.workspace.root();
        Snapshot {
            rules: self
                .rules
                .list()
                .map(|r| RuleView {
                    effect: r.effect.name(),
                    rule: r.text.clone(),
                    source: r.source.display().to_string(),
                })
                .collect(),
            grants: grants
                .list()
                .into_iter()
                .map(|(allow, g)| GrantView {
                    answer: if allow { "allow" } else { "reject" },
                    tool: g.tool().to_string(),
                    scope: g.label(root),
                })
                .collect(),
            no_project: self.workspace.unbounded().map(str::to_string),
            sandbox: match &self.sandbox {
                Some(sandbox) => sandbox.view(),
                None => View::off("[sandbox] mode = \"off\""),
            },
        }
    }
}

impl Snapshot {
    /// The command sandbox as it applies in `mode`: none in `full-access`.
    pub fn sandbox_in(&self, mode: Mode) -> View {
        match mode {
            Mode::FullAccess => View::off("full-access mode"),
            _ => self.sandbox.clone(),
        }
    }

    /// The snapshot as Markdown for the editor's chat, in `mode`.
    pub fn markdown(&self, mode: Mode) -> String {
        let mut out = format!(
            "**Permissions** — mode `{}`: {}\n",
            mode.id(),
            mode.description()
        );
        if let Some(why) = &self.no_project {
            out.push_str(&format!(
                "\n{why}, so reading or editing any file there asks.\n"
            ));
        }
        let sandbox = self.sandbox_in(mode);
        out.push_str(&match (sandbox.state, sandbox.backend) {
            ("off" | "unavailable", _) => {
                format!("\n**Commands** are not sandboxed: {}.\n", sandbox.summary)
            }
            (_, backend) => format!(
                "\n**Commands** run in a sandbox{}: it {}. Running one outside it always asks.\n",
                backend.map(|b| format!(" ({b})")).unwrap_or_default(),
                sandbox.summary
            ),
        });
        out.push_str("\n**Rules** (deny beats ask, ask beats allow):\n");
        if self.rules.is_empty() {
            out.push_str("- none: add `allow`, `ask` or `deny` lists under `[permissions]` in your config file\n");
        }
        for r in &self.rules {
            out.push_str(&format!("- {} `{}` — {}\n", r.effect, r.rule, r.source));
        }
        out.push_str("\n**Remembered in this session:**\n");
        if self.grants.is_empty() {
            out.push_str("- nothing yet\n");
        }
        for g in &self.grants {
            out.push_str(&format!("- always {} {}\n", g.answer, g.scope));
        }
        out.push_str("\n`/permissions clear` forgets what this session remembered.");
        out
    }
}
