//! A session's remembered "always" answers: exact, visible scopes, never a bare program.

use std::path::{Path, PathBuf};

use super::Subject;
use super::scope::CommandScope;
use super::shell::{SimpleCommand, one_line};
use crate::config::permissions::PathAccess;

/// What one "always" answer covers.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Grant {
    /// Commands within a scope (a prefix or one exact command).
    Command(CommandScope),
    /// One exact command line, as written (what "always reject" remembers for a line that
    /// is more than one plain command).
    Line(String),
    /// One kind of access to one path.
    Path {
        /// Reading or editing.
        access: PathAccess,
        /// The resolved path.
        path: PathBuf,
    },
    /// One tool (an MCP server's), by the name the model calls it.
    Tool(String),
    /// One web tool's use of one host.
    Web {
        /// `web_fetch` or `web_search`.
        tool: String,
        /// The host, lower case.
        host: String,
    },
}

impl Grant {
    /// What it covers, in words; paths relative to `root` when inside it.
    pub(crate) fn label(&self, root: &Path) -> String {
        match self {
            Grant::Command(scope) => format!("\"{}\"", scope.label()),
            Grant::Line(line) => format!("the command \"{}\"", one_line(line, 80)),
            Grant::Path { access, path } => {
                let verb = match access {
                    PathAccess::Read => "reading",
                    PathAccess::Edit => "editing",
                };
                format!("{verb} {}", crate::platform::named::display(path, root))
            }
            Grant::Tool(name) => format!("the tool {name}"),
            Grant::Web { tool, host } if tool == "web_search" => format!("searching with {host}"),
            Grant::Web { host, .. } => format!("fetching from {host}"),
        }
    }

    /// The tool the grant is about, as rules name it.
    pub(crate) fn tool(&self) -> &str {
        match self {
            Grant::Command(_) | Grant::Line(_) => "run_command",
            Grant::Path {
                access: PathAccess::Read,
                ..
            } => "read_file",
            Grant::Path {
                access: PathAccess::Edit,
                ..
            } => "edit_file",
            Grant::Tool(name) => name,
            Grant::Web { tool, .. } => tool,
        }
    }

    fn covers_command(&self, command: &SimpleCommand) -> bool {
        matches!(self, Grant::Command(scope) if scope.covers(command))
    }

    /// Whether the grant covers the whole of `subject`. A command line is covered only
    /// through each of its commands (see [`Grants::allows_command`]), or as an exact line.
    fn covers(&self, subject: &Subject) -> bool {
        match (self, subject) {
            (Grant::Line(line), Subject::Command { line: called, .. }) => line == called,
            (
                Grant::Path { access, path },
                Subject::Path {
                    access: called,
                    path: target,
                },
            ) => access == called && path == target,
            (Grant::Tool(name), Subject::Tool { name: called, .. }) => name == called,
            (Grant::Web { tool, host }, Subject::Web { tool: t, host: h }) => {
                tool == t && host == h
            }
            _ => false,
        }
    }
}

/// The remembered answers of one session.
#[derive(Debug, Default)]
pub struct Grants {
    allowed: Vec<Grant>,
    rejected: Vec<Grant>,
}

impl Grants {
    /// Remembers `grants` as allowed (or rejected), replacing an opposite answer.
    pub fn remember(&mut self, grants: &[Grant], allow: bool) {
        for grant in grants {
            self.allowed.retain(|g| g != grant);
            self.rejected.retain(|g| g != grant);
            let list = if allow {
                &mut self.allowed
            } else {
                &mut self.rejected
            };
            list.push(grant.clone());
        }
    }

    /// Forgets every answer; returns how many there were.
    pub fn clear(&mut self) -> usize {
        let n = self.allowed.len() + self.rejected.len();
        self.allowed.clear();
        self.rejected.clear();
        n
    }

    /// Every answer: `(true, grant)` for allowed, `(false, grant)` for rejected.
    pub(crate) fn list(&self) -> Vec<(bool, Grant)> {
        let allowed = self.allowed.iter().map(|g| (true, g.clone()));
        allowed
            .chain(self.rejected.iter().map(|g| (false, g.clone())))
            .collect()
    }

    /// Whether a remembered "always allow" covers `command`.
    pub(crate) fn allows_command(&self, command: &SimpleCommand) -> bool {
        self.allowed.iter().any(|g| g.covers_command(command))
    }

    /// Whether a remembered "always allow" covers `subject` (a path or a tool).
    pub(crate) fn allows(&self, subject: &Subject) -> bool {
        self.allowed.iter().any(|g| g.covers(subject))
    }

    /// Whether a remembered "always reject" covers `subject`: the same path or tool, the same
    /// line, or for a line any of its commands.
    pub(crate) fn rejects(&self, subject: &Subject) -> bool {
        self.rejected.iter().any(|g| match subject {
            Subject::Command { parsed, .. } => {
                g.covers(subject) || parsed.commands.iter().any(|c| g.covers_command(c))
            }
            _ => g.covers(subject),
        })
    }
}
