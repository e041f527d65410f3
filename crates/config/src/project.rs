//! A project's own `.tandem/config.toml`: what opening a project may add to a session (MCP
//! servers, actions, deny and ask rules), never what would let a cloned repository run its
//! code or grant itself permissions. Its MCP servers start only once the user trusted their
//! exact definition (session/trust.rs); its actions run only when the user invokes them, as
//! `run_command` calls under the permission rules; hooks are not taken from it at all.

use std::path::Path;

use super::ActionSpec;
use super::permissions::{PermissionsSpec, Rule, RuleEffect};

/// What sessions do with the programs a project declares (its MCP servers).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ProjectPrograms {
    /// Start the trusted ones, hold the others until the user is asked (editors).
    #[default]
    Ask,
    /// Start none of them (`tandem exec`).
    Never,
    /// Start all of them, without asking or remembering (`tandem exec --trust-project`).
    Always,
}

/// What a project's `.tandem/config.toml` may declare.
#[derive(Debug, Default, serde::Deserialize)]
pub struct ProjectConfig {
    /// MCP servers for sessions in this project, started only once the user trusts them.
    #[serde(default)]
    pub mcp_servers: Vec<super::ServerSpec>,
    /// Custom actions for sessions in this project.
    #[serde(default)]
    pub actions: Vec<ActionSpec>,
    /// Deny and ask rules for sessions in this project (its allow rules are ignored).
    #[serde(default)]
    pub(crate) permissions: PermissionsSpec,
    /// Hooks are not taken from a project (opening a repository must not run its code); kept
    /// only to say so.
    #[serde(default)]
    hooks: Option<toml::Value>,
}

/// Reads `<cwd>/.tandem/config.toml`; a missing file is empty, a broken one is reported on
/// stderr and ignored (the session still opens).
pub fn project(cwd: &Path) -> ProjectConfig {
    let path = cwd.join(".tandem").join("config.toml");
    let Ok(text) = std::fs::read_to_string(&path) else {
        return ProjectConfig::default();
    };
    let mut config: ProjectConfig = toml::from_str(&text).unwrap_or_else(|e| {
        tracing::warn!(path = %path.display(), "ignoring the project's config: {e}");
        ProjectConfig::default()
    });
    // A project's servers run in the project, so `./tools/mcp.sh` is the project's file
    // whichever folder the editor started tandem in (and what is trusted is that file).
    for spec in &mut config.mcp_servers {
        spec.cwd = Some(cwd.to_path_buf());
        if let Some(command) = &spec.command
            && command.is_relative()
            && command.components().count() > 1
        {
            spec.command = Some(cwd.join(command));
        }
    }
    config
}

impl ProjectConfig {
    /// Whether the file declares hooks (which are ignored).
    pub fn declares_hooks(&self) -> bool {
        self.hooks.is_some()
    }
}

impl ProjectConfig {
    /// The project's deny and ask rules. A project may not grant itself anything: its allow
    /// rules, and rules that do not parse, are reported on stderr and ignored.
    pub fn rules(&self, cwd: &Path) -> Vec<Rule> {
        let source = cwd.join(".tandem").join("config.toml");
        self.permissions
            .entries()
            .filter_map(|(effect, text)| {
                if effect == RuleEffect::Allow {
                    tracing::warn!(path = %source.display(), rule = text, "ignoring an allow rule in the project's config: a project cannot grant itself permissions; put it in your own config file");
                    return None;
                }
                match super::permissions::parse_rule(text) {
                    Ok(target) => Some(Rule {
                        effect,
                        text: text.trim().to_string(),
                        target,
                        source: source.clone(),
                    }),
                    Err(e) => {
                        tracing::warn!(path = %source.display(), "ignoring a rule in the project's config: permissions.{}: {e}", effect.name());
                        None
                    }
                }
            })
            .collect()
    }
}
