//! One registry per session: every tool the session offers (the built-ins, `load_skill`,
//! its MCP servers' tools as they connect, and `task`), all behind [`Tool`], in the order the
//! model is shown them. [`Registry::prepare`] turns a model's call into a ready call, or into
//! the tool result the model reads instead.

use std::sync::Arc;

use serde_json::Value;

use super::{Prepared, Tool};
use crate::model::ToolCall;
use crate::platform::named::PathBase;
use crate::types::{ToolKind, ToolSpec};

/// Tools that come and go while a session runs (an MCP server's, once it connects).
pub(crate) trait ToolSource: Send + Sync {
    /// The tools offered now, in a stable order.
    fn tools(&self) -> Vec<Arc<dyn Tool>>;
    /// Why `name`, which would be one of these, cannot be used (its server failed).
    fn unavailable(&self, name: &str) -> Option<String>;
}

/// A tool and the spec the model is sent for it, built once and shared by every session's
/// registry (each starts from a copy of the built-in entries).
#[derive(Clone)]
pub(crate) struct Entry {
    tool: Arc<dyn Tool>,
    spec: Arc<ToolSpec>,
}

impl Entry {
    /// `tool`, with its spec.
    pub(crate) fn new(tool: Arc<dyn Tool>) -> Self {
        Self {
            spec: Arc::new(spec(tool.as_ref())),
            tool,
        }
    }
}

/// A call ready to be shown, judged and run.
pub(crate) struct Ready {
    /// The tool.
    pub(crate) tool: Arc<dyn Tool>,
    /// The arguments as the model sent them.
    pub(crate) args: Value,
    /// Title, locations, access and the work.
    pub(crate) prepared: Prepared,
}

/// A call that cannot run: how to show it, and what the model reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Unusable {
    /// The tool call's title.
    pub(crate) title: String,
    /// Its kind.
    pub(crate) kind: ToolKind,
    /// What went wrong, for the model and the editor.
    pub(crate) message: String,
    /// Something the user should be told in the answer too (an MCP server that failed).
    pub(crate) notice: Option<String>,
}

/// Every tool one session offers.
pub(crate) struct Registry {
    /// Fixed when the session opens, shown first (the built-ins, `load_skill`).
    front: Vec<Entry>,
    /// Tools that appear while the session runs (MCP servers).
    sources: Vec<Arc<dyn ToolSource>>,
    /// Fixed, shown last (`task`).
    back: Vec<Entry>,
}

impl Registry {
    /// A registry of `front`, then what `sources` offer, then `back`.
    pub(crate) fn new(
        front: Vec<Entry>,
        sources: Vec<Arc<dyn ToolSource>>,
        back: Vec<Entry>,
    ) -> Self {
        Self {
            front,
            sources,
            back,
        }
    }

    /// The specs of the tools `offers` lets the model call now, in the order it is shown
    /// them: fixed tools first, then MCP tools, then `task`.
    pub(crate) fn specs(&self, offers: impl Fn(&str) -> bool) -> Vec<ToolSpec> {
        let sourced = self
            .sources
            .iter()
            .flat_map(|s| s.tools())
            .filter(|t| offers(t.name()))
            .map(|t| spec(t.as_ref()));
        let fixed = |list: &[Entry]| -> Vec<ToolSpec> {
            list.iter()
                .filter(|e| offers(&e.spec.name))
                .map(|e| ToolSpec::clone(&e.spec))
                .collect()
        };
        let mut specs = fixed(&self.front);
        specs.extend(sourced);
        specs.extend(fixed(&self.back));
        specs
    }

    /// The tool called `name`, if there is one.
    pub(crate) fn get(&self, name: &str) -> Option<Arc<dyn Tool>> {
        let fixed = self.front.iter().chain(&self.back);
        if let Some(entry) = fixed.into_iter().find(|e| e.spec.name == name) {
            return Some(entry.tool.clone());
        }
        self.sources
            .iter()
            .flat_map(|s| s.tools())
            .find(|t| t.name() == name)
    }

    /// Makes `call` ready to run in `place`, or says what the model reads instead: the tool
    /// is unknown (or not one `offers` lets it call), its MCP server failed, or the arguments
    /// are not valid JSON or not what the tool takes.
    pub(crate) fn prepare(
        &self,
        call: &ToolCall,
        place: &PathBase,
        offers: impl Fn(&str) -> bool,
    ) -> Result<Ready, Unusable> {
        let found = offers(&call.name).then(|| self.get(&call.name)).flatten();
        let Some(tool) = found else {
            return Err(self.unknown(call, offers));
        };
        let unusable = |message: String| Unusable {
            title: tool.label(),
            kind: tool.kind(),
            message,
            notice: None,
        };
        let args: Value = if call.arguments.trim().is_empty() {
            Value::Object(Default::default())
        } else {
            serde_json::from_str(&call.arguments).map_err(|e| {
                let shown: String = call.arguments.chars().take(200).collect();
                unusable(format!(
                    "the arguments of {} are not valid JSON ({e}): {shown}. Send the call again with complete JSON arguments.",
                    call.name
                ))
            })?
        };
        let prepared = tool
            .prepare(args.clone(), place)
            .map_err(|e| unusable(e.to_string()))?;
        Ok(Ready {
            tool,
            args,
            prepared,
        })
    }

    /// What the model reads for a tool it may not call: its server failed, or there is no
    /// such tool (with the list of those there are).
    fn unknown(&self, call: &ToolCall, offers: impl Fn(&str) -> bool) -> Unusable {
        if let Some(message) = self.sources.iter().find_map(|s| s.unavailable(&call.name)) {
            return Unusable {
                title: call.name.clone(),
                kind: ToolKind::Other,
                notice: Some(message.clone()),
                message,
            };
        }
        let names: Vec<String> = self.specs(offers).into_iter().map(|s| s.name).collect();
        Unusable {
            title: format!("Unknown tool `{}`", call.name),
            kind: ToolKind::Think,
            message: format!(
                "unknown tool `{}`; the tools are: {}",
                call.name,
                names.join(", ")
            ),
            notice: None,
        }
    }
}

/// What the model is sent for `tool`.
fn spec(tool: &dyn Tool) -> ToolSpec {
    ToolSpec {
        name: tool.name().to_string(),
        description: tool.description().to_string(),
        parameters: tool.parameters(),
    }
}
