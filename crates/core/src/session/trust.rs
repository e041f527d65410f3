//! Which MCP servers a session starts when it opens, and which it holds back: nothing a
//! project's `.tandem/config.toml` declares runs before the user trusted it.
//!
//! The user's own servers (config file) and the editor's (`mcpServers` of `session/new`,
//! `load`, `resume`) start at once, as ever. A server the project declares starts at once only
//! when the user trusted that exact definition in this project before ("Always allow",
//! remembered in `TANDEM_HOME/trust.json`, see [`crate::permission::trust`]; the definition
//! includes the files it runs, read again right before it starts and before every restart,
//! [`crate::mcp::Trusted`]). One the user
//! refused for good does not start, and is not asked about again. Any other is held back, and
//! the session's first prompt asks about it before its first model request (turn/held_servers.rs):
//! a permission request needs a running prompt, and the turn already waits there for its MCP
//! servers.
//!
//! Names merge as before (the editor's win over the project's, the project's over the
//! user's), with one change: a project definition that is not trusted does not replace the
//! user's own server of that name. While it is held, neither starts (the answer decides
//! which); refused, the user's own starts.
//!
//! `tandem exec` cannot ask anyone: it starts no project server ([`ProjectPrograms::Never`])
//! unless `--trust-project` says to start them all without asking and without remembering
//! anything ([`ProjectPrograms::Always`]).

use std::path::Path;
use std::sync::Arc;

use super::SessionManager;
use crate::config::{ProjectConfig, ProjectPrograms, ServerSpec};
use crate::mcp::{Held, Hub, Trusted};
use crate::permission::trust::{Declared, HELD, REFUSED, TrustEntry, TrustStore, Verdict};

/// What `_tandem/status` says of a project server `tandem exec` did not start.
const NOT_IN_EXEC: &str =
    "declared by the project; tandem exec starts a project's MCP servers only with --trust-project";

/// What a session opening does with each MCP server.
#[derive(Debug, Default, PartialEq)]
struct Plan {
    /// Started now, in this order (later ones win by name).
    launch: Vec<ServerSpec>,
    /// The project's among them, started on the user's trust: checked again before every
    /// start and restart.
    trusted: Vec<Trusted>,
    /// The project's, waiting for the user's answer.
    held: Vec<Held>,
    /// The project's, not started, and why.
    declined: Vec<(String, &'static str)>,
}

/// Which of the `user`'s, the `project`'s (declared in `source`) and the `editor`'s servers
/// start, given what the user `remembered` about this project.
fn plan(
    programs: ProjectPrograms,
    user: &[ServerSpec],
    project: &[ServerSpec],
    editor: Vec<ServerSpec>,
    remembered: &[TrustEntry],
    source: &Path,
) -> Plan {
    let mut plan = Plan::default();
    let mut trusted = Vec::new();
    // The editor's server of the same name wins: the project's definition is irrelevant.
    for spec in project
        .iter()
        .filter(|spec| editor.iter().all(|s| s.name != spec.name))
    {
        if programs == ProjectPrograms::Never {
            plan.declined.push((spec.name.clone(), NOT_IN_EXEC));
            continue;
        }
        let declared = Declared::mcp_server(spec, source);
        let verdict = match programs {
            ProjectPrograms::Ask => verdict(remembered, &declared),
            _ => Some(Verdict::Trusted),
        };
        let held = Held {
            spec: spec.clone(),
            instead: user.iter().find(|s| s.name == spec.name).cloned(),
            source: source.to_path_buf(),
            changed: changed(remembered, &declared),
        };
        match verdict {
            Some(Verdict::Trusted) => {
                trusted.push(spec.clone());
                plan.trusted.push(Trusted {
                    held: Held {
                        changed: None,
                        ..held
                    },
                    declared,
                    asks: programs == ProjectPrograms::Ask,
                });
            }
            Some(Verdict::Refused) => plan.declined.push((spec.name.clone(), REFUSED)),
            None => plan.held.push(held),
        }
    }
    // While the project's definition waits, the user's own of that name waits with it.
    let user: Vec<ServerSpec> = user
        .iter()
        .filter(|s| plan.held.iter().all(|h| h.spec.name != s.name))
        .cloned()
        .collect();
    plan.launch = crate::mcp::merge([user, trusted, editor]);
    plan
}

impl SessionManager {
    /// Starts the session's MCP servers in `cwd`: the user's, the project's that may start,
    /// then the editor's (later ones win by name), and holds the project's others back. They
    /// never see tandem's own API key (unless `share_api_key`).
    pub(super) fn mcp_hub(
        &self,
        cwd: &Path,
        project: &ProjectConfig,
        servers: Vec<ServerSpec>,
        asker: crate::mcp::Asker,
    ) -> Arc<Hub> {
        let config = self.config();
        let root = crate::platform::canonical(cwd).unwrap_or_else(|_| cwd.to_path_buf());
        // Read only when it matters: a project that declares nothing never touches the file.
        let remembered = match self.config().project_programs {
            ProjectPrograms::Ask if !project.mcp_servers.is_empty() => {
                TrustStore::new(&config.home).for_project(&root)
            }
            _ => Vec::new(),
        };
        let plan = plan(
            self.config().project_programs,
            &config.mcp_servers,
            &project.mcp_servers,
            servers,
            &remembered,
            &root.join(".tandem").join("config.toml"),
        );
        let hub = Hub::new(crate::secrets::hidden_vars(), self.children.clone(), asker);
        for (name, why) in plan.declined {
            hub.decline(&name, why.into());
        }
        for held in plan.held {
            hub.hold(held, HELD.into());
        }
        for spec in plan.launch {
            match plan.trusted.iter().find(|t| t.held.spec == spec) {
                Some(trusted) => hub.launch_trusted(trusted.clone()),
                None => hub.launch(spec),
            }
        }
        hub
    }
}

/// The remembered answer about `declared` among `remembered`.
fn verdict(remembered: &[TrustEntry], declared: &Declared) -> Option<Verdict> {
    remembered
        .iter()
        .find(|e| e.fingerprint == declared.fingerprint)
        .map(|e| e.verdict)
}

/// When the user trusted another definition of `declared`'s name and none of this one, what
/// the question says of it.
fn changed(remembered: &[TrustEntry], declared: &Declared) -> Option<String> {
    if remembered
        .iter()
        .any(|e| e.fingerprint == declared.fingerprint)
    {
        return None;
    }
    remembered
        .iter()
        .rev()
        .find(|e| e.name == declared.name && e.verdict == Verdict::Trusted)
        .map(|e| {
            format!(
                "its definition or the code it runs changed since you trusted it ({})",
                e.at
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(name: &str, command: &str) -> ServerSpec {
        ServerSpec::local(name.into(), command.into(), Vec::new(), Default::default())
    }

    fn names(specs: &[ServerSpec]) -> Vec<String> {
        specs
            .iter()
            .map(|s| format!("{}={}", s.name, s.command.as_ref().unwrap().display()))
            .collect()
    }

    const SOURCE: &str = "/p/.tandem/config.toml";

    fn answer(spec: &ServerSpec, verdict: Verdict) -> TrustEntry {
        let declared = Declared::mcp_server(spec, Path::new(SOURCE));
        TrustEntry::now(Path::new("/p"), &declared, verdict)
    }

    #[test]
    fn unanswered_project_servers_wait_and_hold_the_users_namesake() {
        let user = [spec("shared", "mine"), spec("own", "mine")];
        let project = [spec("shared", "theirs"), spec("extra", "theirs")];
        let first = plan(
            ProjectPrograms::Ask,
            &user,
            &project,
            vec![spec("editor", "ed")],
            &[],
            Path::new(SOURCE),
        );
        assert_eq!(names(&first.launch), ["own=mine", "editor=ed"]);
        let held: Vec<_> = first.held.iter().map(|h| h.spec.name.as_str()).collect();
        assert_eq!(held, ["shared", "extra"]);
        assert_eq!(first.held[0].instead, Some(spec("shared", "mine")));
        assert_eq!(first.held[1].instead, None);
        assert!(first.declined.is_empty());
    }

    #[test]
    fn remembered_answers_start_or_decline_and_a_changed_definition_waits() {
        let user = [spec("shared", "mine")];
        let project = [spec("shared", "theirs"), spec("tool", "theirs")];
        let remembered = [
            answer(&spec("shared", "theirs"), Verdict::Refused),
            answer(&spec("tool", "theirs-before"), Verdict::Trusted),
        ];
        let first = plan(
            ProjectPrograms::Ask,
            &user,
            &project,
            Vec::new(),
            &remembered,
            Path::new(SOURCE),
        );
        // Refused: the user's own `shared` starts; `tool` changed since it was trusted.
        assert_eq!(names(&first.launch), ["shared=mine"]);
        assert_eq!(first.declined, [("shared".to_string(), REFUSED)]);
        assert_eq!(first.held.len(), 1);
        assert_eq!(first.held[0].spec.name, "tool");
        let trusted = [answer(&spec("tool", "theirs"), Verdict::Trusted)];
        let later = plan(
            ProjectPrograms::Ask,
            &user,
            &project[1..],
            Vec::new(),
            &trusted,
            Path::new(SOURCE),
        );
        assert_eq!(names(&later.launch), ["shared=mine", "tool=theirs"]);
        assert!(later.held.is_empty());
    }

    #[test]
    fn the_editors_namesake_wins_and_exec_starts_all_or_none() {
        let user = [spec("shared", "mine")];
        let project = [spec("shared", "theirs"), spec("tool", "theirs")];
        let editor = vec![spec("tool", "ed")];
        let asked = plan(
            ProjectPrograms::Ask,
            &user,
            &project,
            editor.clone(),
            &[],
            Path::new(SOURCE),
        );
        assert_eq!(asked.held.len(), 1, "only `shared` is asked about");
        assert_eq!(names(&asked.launch), ["tool=ed"]);
        let never = plan(
            ProjectPrograms::Never,
            &user,
            &project,
            editor.clone(),
            &[],
            Path::new(SOURCE),
        );
        assert_eq!(names(&never.launch), ["shared=mine", "tool=ed"]);
        assert_eq!(never.declined, [("shared".to_string(), NOT_IN_EXEC)]);
        let always = plan(
            ProjectPrograms::Always,
            &user,
            &project,
            editor,
            &[],
            Path::new(SOURCE),
        );
        assert_eq!(names(&always.launch), ["shared=theirs", "tool=ed"]);
        assert!(always.held.is_empty() && always.declined.is_empty());
    }
}
