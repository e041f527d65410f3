//! The editor seam: what tandem asks the editor to do (read and write files, run terminals,
//! ask the user). `acp/client.rs` implements it over ACP; tools fall back to local work
//! (`local.rs`) when the editor did not advertise a capability.

use std::path::{Path, PathBuf};

use futures::future::BoxFuture;

use crate::types::{PermissionAnswer, PermissionChoice, ToolCallView};

/// What the editor said it can do in `initialize`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ClientCaps {
    /// `fs.readTextFile`: reads go through the editor (unsaved buffers win).
    pub read_text_file: bool,
    /// `fs.writeTextFile`: writes go through the editor (reviewable edits).
    pub write_text_file: bool,
    /// `terminal`: commands run in the editor's terminal.
    pub terminal: bool,
    /// `session.compaction`: compactions are shown with `compaction_update` and
    /// `compaction_summary_chunk`.
    pub compaction: bool,
    /// `session.notices`: tandem's own notes are sent as `notice`, not as answer text.
    pub notices: bool,
    /// `plan`: plans are sent as `plan_update` / `plan_removed` rather than `plan`.
    pub plan_updates: bool,
    /// `elicitation.form`: questions to the user go as `elicitation/create` forms.
    pub elicitation: bool,
    /// `session.configOptions.boolean`: on/off options may be shown.
    pub boolean_options: bool,
    /// `subagents`: a `task` call's subagent runs as a child session of its own.
    pub subagents: bool,
}

/// The editor answered a request with an error, or could not be reached.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct ClientError {
    /// JSON-RPC error code (`-32002` for a missing file), when there was one.
    pub code: Option<i32>,
    /// What the editor said.
    pub message: String,
}

/// A command to run in the editor's terminal.
#[derive(Debug, Clone, PartialEq)]
pub struct TerminalSpec {
    /// The program.
    pub command: String,
    /// Its arguments.
    pub args: Vec<String>,
    /// Working directory.
    pub cwd: PathBuf,
    /// Keep at most this many bytes of output.
    pub output_byte_limit: u64,
}

/// How a command ended.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExitStatus {
    /// The exit code, when it exited normally.
    pub code: Option<u32>,
    /// The signal that ended it, if one did.
    pub signal: Option<String>,
}

/// A terminal's output so far.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TerminalOutput {
    /// The text (possibly truncated from the start by the editor).
    pub output: String,
    /// Whether the editor dropped output.
    pub truncated: bool,
    /// Set once the command has exited.
    pub exit: Option<ExitStatus>,
}

/// Requests to the editor. Every call is made from a turn task, never from the dispatch loop.
pub trait ClientOps: Send + Sync {
    /// Reads a text file (1-based `line`, `limit` lines).
    fn read_text_file<'a>(
        &'a self,
        session: &'a str,
        path: &'a Path,
        line: Option<u32>,
        limit: Option<u32>,
    ) -> BoxFuture<'a, Result<String, ClientError>>;

    /// Writes a whole text file.
    fn write_text_file<'a>(
        &'a self,
        session: &'a str,
        path: &'a Path,
        content: &'a str,
    ) -> BoxFuture<'a, Result<(), ClientError>>;

    /// Asks the user about the tool call `call` (its id, title, kind and content as shown),
    /// offering `choices`; the answer is one of them (or `Cancelled`).
    fn request_permission<'a>(
        &'a self,
        session: &'a str,
        call: &'a ToolCallView,
        choices: &'a [PermissionChoice],
    ) -> BoxFuture<'a, Result<PermissionAnswer, ClientError>>;

    /// Starts a command in a terminal; returns the terminal id.
    fn create_terminal<'a>(
        &'a self,
        session: &'a str,
        spec: &'a TerminalSpec,
    ) -> BoxFuture<'a, Result<String, ClientError>>;

    /// Waits for the command to exit.
    fn wait_for_terminal_exit<'a>(
        &'a self,
        session: &'a str,
        terminal: &'a str,
    ) -> BoxFuture<'a, Result<ExitStatus, ClientError>>;

    /// The output so far.
    fn terminal_output<'a>(
        &'a self,
        session: &'a str,
        terminal: &'a str,
    ) -> BoxFuture<'a, Result<TerminalOutput, ClientError>>;

    /// Kills the command; the terminal stays until released.
    fn kill_terminal<'a>(
        &'a self,
        session: &'a str,
        terminal: &'a str,
    ) -> BoxFuture<'a, Result<(), ClientError>>;

    /// Releases the terminal.
    fn release_terminal<'a>(
        &'a self,
        session: &'a str,
        terminal: &'a str,
    ) -> BoxFuture<'a, Result<(), ClientError>>;

    /// Asks the user `form` (ACP `elicitation/create` in form mode), from the tool call
    /// `call_id` when there is one; only for an editor that advertised form elicitation.
    fn elicit<'a>(
        &'a self,
        session: &'a str,
        call_id: Option<&'a str>,
        form: &'a Form,
    ) -> BoxFuture<'a, Result<Reply, ClientError>> {
        let _ = (session, call_id, form);
        Box::pin(async { Err(ClientError::unsupported("questions")) })
    }

    /// Asks the user to pick one of `choices` about the tool call `call`, the way a
    /// permission request asks (for an editor without elicitation); `Answered` holds
    /// `{"answer": choice}`.
    fn choose<'a>(
        &'a self,
        session: &'a str,
        call: &'a ToolCallView,
        choices: &'a [String],
    ) -> BoxFuture<'a, Result<Reply, ClientError>> {
        let _ = (session, call, choices);
        Box::pin(async { Err(ClientError::unsupported("questions")) })
    }
}

/// A form for the user: what they read, and the JSON Schema of the answer (an object of flat
/// fields, as MCP and ACP elicitation define it).
#[derive(Debug, Clone, PartialEq)]
pub struct Form {
    /// What the user reads.
    pub message: String,
    /// The answer's schema.
    pub schema: serde_json::Value,
}

/// A question for the user, with the fields of the answer (`ask_user`).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Question {
    /// What the user reads.
    pub(crate) text: String,
    /// What the answer is made of (one `answer` field for a plain question).
    pub(crate) fields: Vec<Field>,
}

/// One field of an answer.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Field {
    /// The key the answer has it under.
    pub(crate) name: String,
    /// What the user reads beside it.
    pub(crate) title: Option<String>,
    /// Text, a number, a whole number or yes/no.
    pub(crate) kind: FieldKind,
    /// For text: the values to pick from (none: free text).
    pub(crate) choices: Vec<String>,
    /// Whether the user must fill it.
    pub(crate) required: bool,
}

impl Question {
    /// The question as a form: one property per field.
    pub(crate) fn form(&self) -> Form {
        let mut properties = serde_json::Map::new();
        for field in &self.fields {
            let mut property = serde_json::Map::new();
            let kind = match field.kind {
                FieldKind::Text => "string",
                FieldKind::Number => "number",
                FieldKind::Integer => "integer",
                FieldKind::Boolean => "boolean",
            };
            property.insert("type".into(), kind.into());
            if let Some(title) = &field.title {
                property.insert("title".into(), title.clone().into());
            }
            if !field.choices.is_empty() {
                property.insert("enum".into(), field.choices.clone().into());
            }
            properties.insert(field.name.clone(), property.into());
        }
        let required: Vec<&str> = self
            .fields
            .iter()
            .filter(|f| f.required)
            .map(|f| f.name.as_str())
            .collect();
        let mut schema = serde_json::json!({"type": "object", "properties": properties});
        if !required.is_empty() {
            schema["required"] = required.into();
        }
        Form {
            message: self.text.clone(),
            schema,
        }
    }
}

/// The kind of value a [`Field`] takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FieldKind {
    /// A string.
    Text,
    /// Any number.
    Number,
    /// A whole number.
    Integer,
    /// Yes or no.
    Boolean,
}

/// What became of a question.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// The user answered: each field's value.
    Answered(serde_json::Map<String, serde_json::Value>),
    /// The user chose not to answer.
    Declined,
    /// The question was dismissed (or the turn cancelled).
    Cancelled,
}

impl ClientError {
    /// The editor cannot do `what` at all.
    pub(crate) fn unsupported(what: &str) -> Self {
        Self {
            code: None,
            message: format!("the editor cannot take {what}"),
        }
    }
}
