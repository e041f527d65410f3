//! `task`: hands a self-contained task to a subagent, which works on it in a conversation of
//! its own (its system prompt, its tools, maybe its model) under the session's mode and
//! permissions, and returns only its final answer. Running one is the turn's business: the
//! call reaches it through [`Subagents`] in its [`ToolEnv`].

use futures::future::BoxFuture;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::{Call, PathBase, Prepared, ToolEnv, ToolError, ToolOutput, TypedTool, parameters};
use crate::customize::agents::{AgentDef, GENERAL};
use crate::types::{Access, ToolKind};

/// What runs a subagent for a `task` call (the turn).
pub(crate) trait Subagents: Send + Sync {
    /// Runs `task` for the call `env.call_id`; the editor follows its work (in that call's
    /// content, or in a session of its own), and the parent model reads the output.
    fn run(&self, task: Delegation, env: ToolEnv) -> BoxFuture<'static, ToolOutput>;
}

/// A task handed to a subagent.
pub(crate) struct Delegation {
    /// The subagent.
    pub(crate) agent: AgentDef,
    /// The task, as the parent model wrote it.
    pub(crate) prompt: String,
    /// What the editor shows for it ("general: Map the crate").
    pub(crate) title: String,
}

/// Arguments of `task`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct TaskArgs {
    /// Which subagent (default `general`)
    #[serde(default)]
    #[schemars(with = "String")]
    pub(crate) agent: Option<String>,
    /// A short title for the task (3-8 words)
    pub(crate) description: String,
    /// The task, complete and self-contained
    pub(crate) prompt: String,
}

/// The `task` tool over a session's subagents.
pub(crate) struct Task {
    agents: Vec<AgentDef>,
    description: String,
}

impl Task {
    /// The tool, listing `agents` for the model.
    pub(crate) fn new(agents: Vec<AgentDef>) -> Self {
        let mut description = String::from(
            "Hand a self-contained task to a subagent. It works on it alone with its own tools, \
             under the session's mode and permissions, and returns only its final answer, so put \
             everything it needs in `prompt`. Use it for research across many files or a \
             multi-step job whose details you do not need to keep. Subagents:",
        );
        for agent in &agents {
            description.push_str(&format!("\n- {}: {}", agent.name, agent.description));
        }
        Self {
            agents,
            description,
        }
    }
}

impl TypedTool for Task {
    type Args = TaskArgs;
    const NAME: &'static str = "task";
    const KIND: ToolKind = ToolKind::Other;
    const LABEL: &'static str = "Subagent task";

    fn description(&self) -> &str {
        &self.description
    }

    /// The derived schema, with the subagents' names as the values `agent` may take, laid
    /// out as models have always been sent it (a changed request costs a server's cache).
    fn parameters(&self) -> Value {
        let derived = parameters::<TaskArgs>(Self::NAME);
        let names: Vec<&str> = self.agents.iter().map(|a| a.name.as_str()).collect();
        let property = |name: &str, values: Option<Value>| {
            let derived = &derived["properties"][name];
            let mut property = Map::new();
            property.insert("type".into(), derived["type"].clone());
            if let Some(values) = values {
                property.insert("enum".into(), values);
            }
            property.insert("description".into(), derived["description"].clone());
            Value::Object(property)
        };
        json!({
            "type": derived["type"],
            "properties": {
                "agent": property("agent", Some(names.into())),
                "description": property("description", None),
                "prompt": property("prompt", None),
            },
            "required": derived["required"],
            "additionalProperties": derived["additionalProperties"],
        })
    }

    fn prepare(&self, args: TaskArgs, _place: &PathBase) -> Result<Prepared, ToolError> {
        let name = args.agent.as_deref().unwrap_or(GENERAL);
        let Some(agent) = self.agents.iter().find(|a| a.name == name).cloned() else {
            let names: Vec<&str> = self.agents.iter().map(|a| a.name.as_str()).collect();
            return Err(ToolError::Refused(format!(
                "unknown subagent `{name}`; the subagents are: {}",
                names.join(", ")
            )));
        };
        let title = format!("{}: {}", agent.name, args.description.trim());
        Ok(Prepared {
            title: title.clone(),
            locations: Vec::new(),
            access: Access::Free,
            call: Box::new(TaskCall(Delegation {
                agent,
                prompt: args.prompt,
                title,
            })),
        })
    }
}

/// A `task` call, ready to hand to the turn.
struct TaskCall(Delegation);

impl Call for TaskCall {
    fn run(self: Box<Self>, env: ToolEnv) -> BoxFuture<'static, ToolOutput> {
        match env.subagents.clone() {
            Some(subagents) => subagents.run(self.0, env),
            None => Box::pin(async { ToolOutput::error("a subagent cannot start another") }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::customize::agents;
    use crate::tools::Tool;

    /// The schema the model was sent before it was derived, byte for byte: a changed request
    /// would cost a server's prompt cache (and the real-model tests count tokens).
    #[test]
    fn the_derived_schema_is_the_one_models_were_sent() {
        let general = agents::general();
        let tool = Task::new(vec![general.clone()]);
        let names = vec![general.name.as_str()];
        let before = json!({
            "type": "object",
            "properties": {
                "agent": {
                    "type": "string",
                    "enum": names,
                    "description": format!("Which subagent (default `{GENERAL}`)"),
                },
                "description": {
                    "type": "string",
                    "description": "A short title for the task (3-8 words)",
                },
                "prompt": {
                    "type": "string",
                    "description": "The task, complete and self-contained",
                },
            },
            "required": ["description", "prompt"],
            "additionalProperties": false,
        });
        assert_eq!(
            serde_json::to_string(&Tool::parameters(&tool)).unwrap(),
            serde_json::to_string(&before).unwrap()
        );
    }
}
