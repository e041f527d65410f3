//! Permission rules as written in a config file (`[permissions] allow / ask / deny`), checked
//! and parsed into typed targets. Matching them against calls is `permission`'s work; this
//! file only knows the syntax:
//!
//! - `run_command(cargo test:*)`: a command whose words start with `cargo test`;
//!   `run_command(cargo test)`: exactly that command; `run_command`: every command.
//! - `edit_file(src/**)`, `read_file(~/.ssh/**)`: a path glob (`~/` is the home directory, a
//!   relative glob is relative to the session's folder). Any file tool's name works and means
//!   its kind of access: `read_file`, `list_dir`, `glob`, `grep` read; `write_file`,
//!   `edit_file`, `apply_patch` edit. Without a pattern: every read, or every edit.
//! - `mcp__server__tool`, `mcp__server__*` or `mcp__server`: MCP tools by name.

use std::path::PathBuf;

use serde::Deserialize;

/// Tools whose calls read a path; a rule naming one governs every read.
pub(crate) const READ_TOOLS: [&str; 4] = ["read_file", "list_dir", "glob", "grep"];
/// Tools whose calls change a file; a rule naming one governs every edit.
pub(crate) const EDIT_TOOLS: [&str; 3] = ["write_file", "edit_file", "apply_patch"];
/// The command tool.
pub(crate) const COMMAND_TOOL: &str = "run_command";
/// The web tools; `web_fetch(domain:docs.rs)` names one site and its subdomains.
pub(crate) const WEB_TOOLS: [&str; 2] = ["web_fetch", "web_search"];

/// The `[permissions]` table as written.
#[derive(Debug, Clone, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub(crate) struct PermissionsSpec {
    /// Calls that run without asking (not honoured from a project's file).
    #[serde(default)]
    pub(crate) allow: Vec<String>,
    /// Calls that always ask, even when allowed otherwise.
    #[serde(default)]
    pub(crate) ask: Vec<String>,
    /// Calls that never run, in every mode.
    #[serde(default)]
    pub(crate) deny: Vec<String>,
}

/// What a rule does to a call it matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RuleEffect {
    /// Run without asking.
    Allow,
    /// Ask, whatever else would allow it.
    Ask,
    /// Refuse, in every mode.
    Deny,
}

impl RuleEffect {
    /// The key it is written under.
    pub fn name(self) -> &'static str {
        match self {
            RuleEffect::Allow => "allow",
            RuleEffect::Ask => "ask",
            RuleEffect::Deny => "deny",
        }
    }
}

/// A file access a rule governs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PathAccess {
    /// Reading a file or listing or searching a folder.
    Read,
    /// Creating or changing a file.
    Edit,
}

/// What a rule matches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RuleTarget {
    /// Every shell command.
    AnyCommand,
    /// A command whose words are `words` (with `prefix`: whose words start with them).
    Command {
        /// The words, unquoted.
        words: Vec<String>,
        /// `:*` at the end: any further arguments.
        prefix: bool,
    },
    /// Every access of this kind.
    AnyPath(PathAccess),
    /// Accesses of this kind to paths matching `glob` (as written: `~/` and relative globs
    /// are resolved per session).
    Path {
        /// The kind of access.
        access: PathAccess,
        /// The glob.
        glob: String,
    },
    /// A web tool, for every host or for one domain and its subdomains.
    Web {
        /// `web_fetch` or `web_search`.
        tool: String,
        /// The domain, lower case; `None`: every host.
        domain: Option<String>,
    },
    /// MCP tools: a whole name, or every name starting with `prefix` (`mcp__server__*`,
    /// `mcp__server`).
    Tool {
        /// The name or the start of the names.
        name: String,
        /// Whether `name` is a start.
        prefix: bool,
    },
}

/// One checked rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    /// Allow, ask or deny.
    pub effect: RuleEffect,
    /// The rule as written, for messages.
    pub text: String,
    /// What it matches.
    pub target: RuleTarget,
    /// The file it came from.
    pub source: PathBuf,
}

impl PermissionsSpec {
    /// Every rule with its effect, as written: deny, then ask, then allow.
    pub(crate) fn entries(&self) -> impl Iterator<Item = (RuleEffect, &str)> {
        fn pair(effect: RuleEffect, list: &[String]) -> impl Iterator<Item = (RuleEffect, &str)> {
            list.iter().map(move |r| (effect, r.as_str()))
        }
        pair(RuleEffect::Deny, &self.deny)
            .chain(pair(RuleEffect::Ask, &self.ask))
            .chain(pair(RuleEffect::Allow, &self.allow))
    }
}

/// Parses one rule (`run_command(cargo test:*)`, `edit_file(src/**)`, `mcp__github__*`).
pub fn parse_rule(text: &str) -> Result<RuleTarget, String> {
    let text = text.trim();
    let (tool, pattern) = match text.split_once('(') {
        Some((tool, rest)) => {
            let Some(inner) = rest.strip_suffix(')') else {
                return Err(format!("`{text}`: a pattern ends with `)`"));
            };
            let inner = inner.trim();
            if inner.is_empty() {
                return Err(format!("`{text}`: the pattern in `( )` is empty"));
            }
            (tool.trim(), Some(inner))
        }
        None => (text, None),
    };
    if tool.is_empty()
        || !tool
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '*')
    {
        return Err(format!("`{text}`: `{tool}` is not a tool name"));
    }
    if tool == COMMAND_TOOL {
        return Ok(match pattern {
            None => RuleTarget::AnyCommand,
            Some(pattern) => command_pattern(text, pattern)?,
        });
    }
    let access = if READ_TOOLS.contains(&tool) {
        Some(PathAccess::Read)
    } else if EDIT_TOOLS.contains(&tool) {
        Some(PathAccess::Edit)
    } else {
        None
    };
    if let Some(access) = access {
        return Ok(match pattern {
            None => RuleTarget::AnyPath(access),
            Some(glob) => {
                globset::Glob::new(glob).map_err(|e| format!("`{text}`: {e}"))?;
                RuleTarget::Path {
                    access,
                    glob: glob.to_string(),
                }
            }
        });
    }
    if WEB_TOOLS.contains(&tool) {
        return web_pattern(text, tool, pattern);
    }
    if !tool.starts_with("mcp__") {
        return Err(format!(
            "`{text}`: rules name run_command, a file tool ({}, {}), web_fetch, web_search or an MCP tool (mcp__server__tool)",
            READ_TOOLS.join(", "),
            EDIT_TOOLS.join(", ")
        ));
    }
    if pattern.is_some() {
        return Err(format!(
            "`{text}`: an MCP tool rule takes no pattern; name the tool (`mcp__server__tool`) or all of a server's (`mcp__server__*`)"
        ));
    }
    let (name, prefix) = match tool.strip_suffix('*') {
        Some(start) => (start.to_string(), true),
        // `mcp__server` alone: every tool of that server.
        None if tool.matches("__").count() == 1 => (format!("{tool}__"), true),
        None => (tool.to_string(), false),
    };
    if name.contains('*') {
        return Err(format!("`{text}`: `*` may only end an MCP tool name"));
    }
    Ok(RuleTarget::Tool { name, prefix })
}

/// `cargo test:*` or `cargo test`: one command's words, quotes allowed, no shell operators.
/// `web_fetch`, `web_fetch(domain:docs.rs)`, `web_search`.
fn web_pattern(text: &str, tool: &str, pattern: Option<&str>) -> Result<RuleTarget, String> {
    let domain = match pattern {
        None => None,
        Some(p) => {
            let domain = p
                .strip_prefix("domain:")
                .map(|d| {
                    d.trim()
                        .trim_start_matches("*.")
                        .trim_end_matches('.')
                        .to_ascii_lowercase()
                })
                .filter(|d| {
                    !d.is_empty()
                        && d.chars()
                            .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '-' || c == ':')
                })
                .ok_or_else(|| format!("`{text}`: a web rule's pattern is `domain:example.com`"))?;
            Some(domain)
        }
    };
    Ok(RuleTarget::Web {
        tool: tool.to_string(),
        domain,
    })
}

fn command_pattern(text: &str, pattern: &str) -> Result<RuleTarget, String> {
    let (body, prefix) = match pattern.strip_suffix(":*") {
        Some(body) => (body, true),
        None => match pattern.strip_suffix(" *") {
            Some(body) => (body, true),
            None => (pattern, false),
        },
    };
    let words = split_words(body).map_err(|e| format!("`{text}`: {e}"))?;
    if words.is_empty() {
        return Err(format!(
            "`{text}`: name the command, e.g. `run_command(cargo test:*)`"
        ));
    }
    Ok(RuleTarget::Command { words, prefix })
}

/// Splits one simple command into its words: whitespace separates, single and double quotes
/// and backslashes quote. Anything that would make it more than one plain command (operators,
/// substitutions, redirections, unquoted wildcards) is refused, since no call could match it.
fn split_words(body: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut chars = body.chars();
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() => words.extend(word.take()),
            '\'' => {
                let w = word.get_or_insert_with(String::new);
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) => w.push(c),
                        None => return Err("a single quote is not closed".into()),
                    }
                }
            }
            '"' => {
                let w = word.get_or_insert_with(String::new);
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(c @ ('"' | '\\' | '$' | '`')) => w.push(c),
                            Some(c) => {
                                w.push('\\');
                                w.push(c);
                            }
                            None => return Err("a double quote is not closed".into()),
                        },
                        Some(c @ ('$' | '`')) => {
                            return Err(format!("`{c}` would expand; a rule names plain words"));
                        }
                        Some(c) => w.push(c),
                        None => return Err("a double quote is not closed".into()),
                    }
                }
            }
            '\\' => match chars.next() {
                Some(c) => word.get_or_insert_with(String::new).push(c),
                None => return Err("a backslash ends the pattern".into()),
            },
            ';' | '&' | '|' | '<' | '>' | '(' | ')' | '$' | '`' => {
                return Err(format!(
                    "`{c}` is a shell operator; a rule names one plain command (write one rule per command)"
                ));
            }
            '*' | '?' | '[' | ']' | '{' | '}' | '~' => {
                return Err(format!(
                    "`{c}` is a wildcard; only a final `:*` (any further arguments) is supported"
                ));
            }
            c => word.get_or_insert_with(String::new).push(c),
        }
    }
    words.extend(word);
    Ok(words)
}

/// A rule of a config file's `[permissions]` that does not parse: which list it is in, and
/// what is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("permissions.{list}: {message}")]
pub struct RuleError {
    list: &'static str,
    message: String,
}

/// Parses every rule of `spec` from `source`; the first bad rule is the error.
pub(crate) fn parse_all(
    spec: &PermissionsSpec,
    source: &std::path::Path,
) -> Result<Vec<Rule>, RuleError> {
    spec.entries()
        .map(|(effect, text)| {
            let target = parse_rule(text).map_err(|message| RuleError {
                list: effect.name(),
                message,
            })?;
            Ok(Rule {
                effect,
                text: text.trim().to_string(),
                target,
                source: source.to_path_buf(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn command(words: &[&str], prefix: bool) -> RuleTarget {
        RuleTarget::Command {
            words: words.iter().map(|w| w.to_string()).collect(),
            prefix,
        }
    }

    #[test]
    fn web_rules_name_a_domain_in_lower_case_without_a_trailing_dot() {
        let domain = |text: &str| match parse_rule(text) {
            Ok(RuleTarget::Web { domain, .. }) => domain,
            other => panic!("{other:?}"),
        };
        assert_eq!(
            domain("web_fetch(domain:Docs.RS.)").as_deref(),
            Some("docs.rs")
        );
        assert_eq!(
            domain("web_fetch(domain:*.docs.rs)").as_deref(),
            Some("docs.rs")
        );
        assert_eq!(domain("web_search"), None);
        assert!(parse_rule("web_fetch(docs.rs)").is_err());
        assert!(parse_rule("web_fetch(domain:)").is_err());
    }

    #[test]
    fn command_rules() {
        assert_eq!(
            parse_rule("run_command(cargo test:*)"),
            Ok(command(&["cargo", "test"], true))
        );
        assert_eq!(
            parse_rule("run_command(npm run test:*)"),
            Ok(command(&["npm", "run", "test"], true))
        );
        assert_eq!(
            parse_rule("run_command(git status)"),
            Ok(command(&["git", "status"], false))
        );
        assert_eq!(
            parse_rule("run_command(cargo test *)"),
            Ok(command(&["cargo", "test"], true))
        );
        assert_eq!(
            parse_rule(r#"run_command(git commit -m "wip now":*)"#),
            Ok(command(&["git", "commit", "-m", "wip now"], true))
        );
        assert_eq!(
            parse_rule("run_command(RUST_LOG=debug cargo test:*)"),
            Ok(command(&["RUST_LOG=debug", "cargo", "test"], true))
        );
        assert_eq!(parse_rule("run_command"), Ok(RuleTarget::AnyCommand));
        for bad in [
            "run_command(a; b)",
            "run_command(a && b)",
            "run_command(echo $(x))",
            "run_command(rm *.o)",
            "run_command(echo 'open)",
            "run_command()",
            "run_command(:*)",
            "run_command(cargo test",
        ] {
            assert!(parse_rule(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn path_and_tool_rules() {
        assert_eq!(
            parse_rule("edit_file(src/**)"),
            Ok(RuleTarget::Path {
                access: PathAccess::Edit,
                glob: "src/**".into()
            })
        );
        assert_eq!(
            parse_rule("grep(~/.ssh/**)"),
            Ok(RuleTarget::Path {
                access: PathAccess::Read,
                glob: "~/.ssh/**".into()
            })
        );
        assert_eq!(
            parse_rule("write_file"),
            Ok(RuleTarget::AnyPath(PathAccess::Edit))
        );
        assert_eq!(
            parse_rule("mcp__github__create_issue"),
            Ok(RuleTarget::Tool {
                name: "mcp__github__create_issue".into(),
                prefix: false
            })
        );
        assert_eq!(
            parse_rule("mcp__github__*"),
            Ok(RuleTarget::Tool {
                name: "mcp__github__".into(),
                prefix: true
            })
        );
        assert_eq!(
            parse_rule("mcp__github"),
            Ok(RuleTarget::Tool {
                name: "mcp__github__".into(),
                prefix: true
            })
        );
        for bad in [
            "run_comand(cargo test:*)",
            "mcp__x__y(arg)",
            "Bash(ls)",
            "edit_file(src/[)",
            "mcp__a*b",
        ] {
            assert!(parse_rule(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn parse_all_names_the_list_of_a_bad_rule() {
        let spec = PermissionsSpec {
            deny: vec!["run_command(git push:*)".into()],
            ask: vec!["nonsense(x)".into()],
            ..Default::default()
        };
        let err = parse_all(&spec, std::path::Path::new("/c.toml")).unwrap_err();
        let err = err.to_string();
        assert!(err.starts_with("permissions.ask: `nonsense(x)`"), "{err}");
    }
}
