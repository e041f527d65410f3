//! Session modes and the allow / ask / refuse decision for each tool call (DESIGN.md §3),
//! with the session's remembered "always" answers.

use std::collections::HashSet;
use std::path::PathBuf;

use crate::tools::Access;
use crate::tools::paths;
use crate::types::Mode;

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

/// The mode table: whether `access` may happen in `mode`, given the workspace `roots`.
pub fn decide(mode: Mode, access: &Access, roots: &[PathBuf]) -> Decision {
    use Decision::{Allow, Ask, Refuse};
    match access {
        Access::Free => Allow,
        Access::Read(path) => {
            if mode == Mode::FullAccess || paths::inside(path, roots) {
                Allow
            } else {
                Ask
            }
        }
        Access::Edit(path) => match mode {
            Mode::ReadOnly => Refuse(
                "Refused: the session is in read-only mode, so files cannot be changed. Tell the user what you would change instead.".into(),
            ),
            Mode::FullAccess => Allow,
            Mode::AcceptEdits if paths::inside(path, roots) => Allow,
            Mode::AcceptEdits | Mode::Ask => Ask,
        },
        Access::Execute { .. } => match mode {
            Mode::ReadOnly => Refuse(
                "Refused: the session is in read-only mode, so commands cannot run. Tell the user which command you would run instead.".into(),
            ),
            Mode::FullAccess => Allow,
            Mode::Ask | Mode::AcceptEdits => Ask,
        },
    }
}

/// What an "always" answer covers: the tool and the path, or the command's program.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Scope {
    tool: String,
    target: String,
}

impl Scope {
    /// The scope of a call of `tool` with `access`.
    pub fn of(tool: &str, access: &Access) -> Option<Scope> {
        let target = match access {
            Access::Free => return None,
            Access::Read(p) | Access::Edit(p) => p.display().to_string(),
            Access::Execute { program } => program.clone(),
        };
        Some(Scope {
            tool: tool.to_string(),
            target,
        })
    }
}

/// The session's remembered `allow_always` / `reject_always` answers.
#[derive(Debug, Default)]
pub struct Grants {
    allowed: HashSet<Scope>,
    rejected: HashSet<Scope>,
}

impl Grants {
    /// Remembers an answer.
    pub fn remember(&mut self, scope: Scope, allow: bool) {
        if allow {
            self.rejected.remove(&scope);
            self.allowed.insert(scope);
        } else {
            self.allowed.remove(&scope);
            self.rejected.insert(scope);
        }
    }

    /// Applies remembered answers to a decision that would ask; a mode's refusal stands.
    pub fn apply(&self, decision: Decision, scope: Option<&Scope>) -> Decision {
        match (decision, scope) {
            (Decision::Ask, Some(scope)) if self.allowed.contains(scope) => Decision::Allow,
            (Decision::Ask, Some(scope)) if self.rejected.contains(scope) => Decision::Refuse(
                "Rejected: the user chose to always reject this in this session. Do not retry it; ask the user how to proceed.".into(),
            ),
            (decision, _) => decision,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_design_table() {
        let roots = [PathBuf::from("/ws")];
        let read_in = Access::Read("/ws/a".into());
        let read_out = Access::Read("/etc/passwd".into());
        let edit_in = Access::Edit("/ws/a".into());
        let edit_out = Access::Edit("/tmp/a".into());
        let run = Access::Execute {
            program: "ls".into(),
        };
        use Decision::{Allow, Ask};
        let refuse = |d: Decision| matches!(d, Decision::Refuse(_));
        for mode in Mode::ALL {
            assert_eq!(decide(mode, &read_in, &roots), Allow);
        }
        assert_eq!(decide(Mode::Ask, &read_out, &roots), Ask);
        assert_eq!(decide(Mode::AcceptEdits, &read_out, &roots), Ask);
        assert_eq!(decide(Mode::ReadOnly, &read_out, &roots), Ask);
        assert_eq!(decide(Mode::FullAccess, &read_out, &roots), Allow);
        assert_eq!(decide(Mode::Ask, &edit_in, &roots), Ask);
        assert_eq!(decide(Mode::AcceptEdits, &edit_in, &roots), Allow);
        assert!(refuse(decide(Mode::ReadOnly, &edit_in, &roots)));
        assert_eq!(decide(Mode::FullAccess, &edit_in, &roots), Allow);
        assert_eq!(decide(Mode::Ask, &edit_out, &roots), Ask);
        assert_eq!(decide(Mode::AcceptEdits, &edit_out, &roots), Ask);
        assert!(refuse(decide(Mode::ReadOnly, &edit_out, &roots)));
        assert_eq!(decide(Mode::FullAccess, &edit_out, &roots), Allow);
        assert_eq!(decide(Mode::Ask, &run, &roots), Ask);
        assert_eq!(decide(Mode::AcceptEdits, &run, &roots), Ask);
        assert!(refuse(decide(Mode::ReadOnly, &run, &roots)));
        assert_eq!(decide(Mode::FullAccess, &run, &roots), Allow);
    }

    #[test]
    fn grants_turn_asks_into_answers_but_not_refusals() {
        let mut grants = Grants::default();
        let run = Access::Execute {
            program: "cargo".into(),
        };
        let scope = Scope::of("run_command", &run);
        grants.remember(scope.clone().unwrap(), true);
        assert_eq!(grants.apply(Decision::Ask, scope.as_ref()), Decision::Allow);
        let other = Scope::of(
            "run_command",
            &Access::Execute {
                program: "rm".into(),
            },
        );
        assert_eq!(grants.apply(Decision::Ask, other.as_ref()), Decision::Ask);
        let refused = Decision::Refuse("read-only".into());
        assert_eq!(grants.apply(refused.clone(), scope.as_ref()), refused);
        grants.remember(scope.clone().unwrap(), false);
        assert!(matches!(
            grants.apply(Decision::Ask, scope.as_ref()),
            Decision::Refuse(_)
        ));
    }
}
