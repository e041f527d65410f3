//! The typed adapter: a built-in tool declares its argument struct, name, kind and
//! description, and prepares calls from typed arguments; the schema and the parsing are
//! done once, here, for all of them (the blanket [`Tool`] impl).

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::paths::Place;
use super::{Prepared, Tool, ToolError};
use crate::types::ToolKind;

/// A tool whose arguments are a Rust type.
pub trait TypedTool: Send + Sync {
    /// What the model sends; its JSON Schema is what the model is shown.
    type Args: DeserializeOwned + JsonSchema;
    /// The stable name the model calls.
    const NAME: &'static str;
    /// The ACP kind of its calls.
    const KIND: ToolKind;
    /// What it does, for the model.
    fn description(&self) -> &str;
    /// Whether calls are shown as tool calls (`update_plan` is shown as a plan instead).
    fn announced(&self) -> bool {
        true
    }
    /// The schema of the arguments (the derived one, unless the tool adds to it).
    fn parameters(&self) -> Value {
        schema::<Self::Args>()
    }
    /// Resolves paths against `place` and makes the call ready.
    fn prepare(&self, args: Self::Args, place: &Place) -> Result<Prepared, ToolError>;
}

impl<T: TypedTool> Tool for T {
    fn name(&self) -> &str {
        T::NAME
    }
    fn description(&self) -> &str {
        TypedTool::description(self)
    }
    fn parameters(&self) -> Value {
        TypedTool::parameters(self)
    }
    fn kind(&self) -> ToolKind {
        T::KIND
    }
    fn announced(&self) -> bool {
        TypedTool::announced(self)
    }
    fn prepare(&self, args: Value, place: &Place) -> Result<Prepared, ToolError> {
        let args = serde_json::from_value(args).map_err(|e| ToolError::Arguments {
            tool: T::NAME,
            message: e.to_string(),
        })?;
        TypedTool::prepare(self, args, place)
    }
}

/// The JSON Schema of an argument struct, without the noise models do not need: every
/// request carries it, and on a local server its tokens are paid for in prompt processing.
pub fn schema<T: JsonSchema>() -> Value {
    let mut value = serde_json::to_value(schemars::schema_for!(T)).unwrap_or(Value::Null);
    if let Some(obj) = value.as_object_mut() {
        obj.remove("$schema");
        obj.remove("title");
        // "Arguments of `tool`.": the tool's own description says more.
        obj.remove("description");
        if let Some(Value::Object(defs)) = obj.get_mut("$defs") {
            for def in defs.values_mut() {
                if let Some(def) = def.as_object_mut() {
                    def.remove("description");
                }
            }
        }
    }
    tidy(&mut value);
    value
}

/// Drops what schemars adds for Rust's sake: integer formats and their zero minimum, `null`
/// as a type of optional fields (leaving them out says the same), and `default: null`.
fn tidy(value: &mut Value) {
    match value {
        Value::Object(obj) => {
            if obj.remove("format").is_some() && obj.get("minimum") == Some(&Value::from(0)) {
                obj.remove("minimum");
            }
            if obj.get("default") == Some(&Value::Null) {
                obj.remove("default");
            }
            if let Some(Value::Array(types)) = obj.get("type") {
                let types: Vec<Value> = types.iter().filter(|t| *t != "null").cloned().collect();
                if types.len() == 1 {
                    obj.insert("type".into(), types[0].clone());
                }
            }
            obj.values_mut().for_each(tidy);
        }
        Value::Array(items) => items.iter_mut().for_each(tidy),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Arguments of `example`.
    #[derive(serde::Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct Example {
        /// How many.
        count: Option<u32>,
        /// Where.
        #[serde(default)]
        path: Option<String>,
    }

    #[test]
    fn schemas_keep_what_a_model_reads() {
        assert_eq!(
            schema::<Example>(),
            serde_json::json!({
                "type": "object",
                "properties": {
                    "count": {"description": "How many.", "type": "integer"},
                    "path": {"description": "Where.", "type": "string"}
                }
            })
        );
    }
}
