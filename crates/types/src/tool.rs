//! What the model is offered and what a call touches: plain data the model, tool and
//! permission layers share.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// A tool the model may call.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolSpec {
    /// The name the model calls it by.
    pub name: String,
    /// What it does, for the model.
    pub description: String,
    /// JSON Schema of its arguments.
    pub parameters: serde_json::Value,
}

/// What kind of work a tool call does (ACP `ToolKind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolKind {
    /// Reads files or directories.
    Read,
    /// Changes files.
    Edit,
    /// Runs a command.
    Execute,
    /// Searches.
    Search,
    /// Plans or thinks.
    Think,
    /// Reads from the web.
    Fetch,
    /// Anything else (e.g. an MCP tool without a read-only hint).
    Other,
}

/// What a call touches, for the permission policy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Access {
    /// Nothing outside tandem (e.g. updating the plan).
    Free,
    /// Reads this path.
    Read(PathBuf),
    /// Changes this path.
    Edit(PathBuf),
    /// Changes these paths together (a patch): judged path by path, asked once.
    EditMany(Vec<PathBuf>),
    /// Runs a shell command line (judged by its parsed simple commands and where it runs).
    Execute {
        /// The line as the model wrote it.
        command: String,
        /// The folder it runs in (resolved).
        cwd: PathBuf,
        /// Why the model asks to run it outside the command sandbox, when it does: the user
        /// is asked every time, and no earlier answer covers it.
        outside_sandbox: Option<String>,
    },
    /// Reaches a host on the web (a page, a search provider): the URL or query carries data
    /// out, so it is asked about per host in every mode but `full-access`.
    Web {
        /// The host, lower case.
        host: String,
    },
    /// Calls an outside tool (an MCP server's): free like a read when it says it only reads,
    /// asked like a command otherwise.
    Tool {
        /// The tool's `readOnlyHint`.
        read_only: bool,
    },
}
