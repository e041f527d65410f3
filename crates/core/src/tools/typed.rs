//! The typed adapter: a built-in tool declares its argument struct, name, kind and
//! description, and prepares calls from typed arguments; the schema and the parsing are
//! done once, here, for all of them (the blanket [`Tool`] impl).
//!
//! The schemas the model is shown are derived from the argument structs ([`schema`]) and
//! checked in, as `parameters.json`: deriving them took more work than everything else a
//! first `session/new` does (1.3 M of its 2.8 M instructions), and reading them back takes a
//! fraction of it. A unit test keeps the file equal to what the structs derive, byte for byte;
//! `TANDEM_UPDATE_SCHEMAS=1 cargo test --all-features checked_in_parameters` rewrites it.

use std::sync::LazyLock;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use super::{Prepared, Tool, ToolError};
use crate::platform::named::PathBase;
use crate::types::ToolKind;

/// A tool whose arguments are a Rust type.
pub(crate) trait TypedTool: Send + Sync {
    /// What the model sends; its JSON Schema is what the model is shown.
    type Args: DeserializeOwned + JsonSchema;
    /// The stable name the model calls.
    const NAME: &'static str;
    /// The ACP kind of its calls.
    const KIND: ToolKind;
    /// What the editor calls one of its calls before the arguments say more ("Edit file").
    const LABEL: &'static str;
    /// What it does, for the model.
    fn description(&self) -> &str;
    /// Whether calls are shown as tool calls (`update_plan` is shown as a plan instead).
    fn announced(&self) -> bool {
        true
    }
    /// The schema of the arguments (the derived one, unless the tool adds to it).
    fn parameters(&self) -> Value {
        parameters::<Self::Args>(Self::NAME)
    }
    /// Resolves paths against `place` and makes the call ready.
    fn prepare(&self, args: Self::Args, place: &PathBase) -> Result<Prepared, ToolError>;
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
    fn label(&self) -> String {
        T::LABEL.to_string()
    }
    fn announced(&self) -> bool {
        TypedTool::announced(self)
    }
    fn prepare(&self, args: Value, place: &PathBase) -> Result<Prepared, ToolError> {
        let args = serde_json::from_value(args).map_err(|e| ToolError::Arguments {
            tool: T::NAME,
            message: e.to_string(),
        })?;
        TypedTool::prepare(self, args, place)
    }
}

/// The checked-in schemas of the typed tools' arguments, by tool name.
static CHECKED_IN: LazyLock<Map<String, Value>> =
    LazyLock::new(|| serde_json::from_str(include_str!("parameters.json")).unwrap_or_default());

/// The schema of `T`, the arguments of the tool `name`: the checked-in one, derived only if
/// the file lacks it (which the unit test below does not let happen).
pub(crate) fn parameters<T: JsonSchema>(name: &str) -> Value {
    match CHECKED_IN.get(name) {
        Some(checked_in) => checked_in.clone(),
        None => schema::<T>(),
    }
}

/// The JSON Schema of an argument struct, without the noise models do not need: every
/// request carries it, and on a local server its tokens are paid for in prompt processing.
fn schema<T: JsonSchema>() -> Value {
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
    use super::super::{apply_patch, ask_user, edit_file, glob, grep, jobs, list_dir};
    use super::super::{load_skill, read_file, run_command, task, update_plan};
    use super::super::{web_fetch, web_search, write_file};
    use super::*;

    /// Every typed tool's name and the schema its argument struct derives.
    fn derived() -> Vec<(&'static str, Value)> {
        fn of<T: TypedTool>() -> (&'static str, Value) {
            (T::NAME, schema::<T::Args>())
        }
        vec![
            of::<read_file::ReadFile>(),
            of::<write_file::WriteFile>(),
            of::<edit_file::EditFile>(),
            of::<apply_patch::ApplyPatch>(),
            of::<run_command::RunCommand>(),
            of::<jobs::CommandOutput>(),
            of::<jobs::StopCommand>(),
            of::<list_dir::ListDir>(),
            of::<glob::Glob>(),
            of::<grep::Grep>(),
            of::<update_plan::UpdatePlan>(),
            of::<ask_user::AskUser>(),
            of::<web_fetch::WebFetch>(),
            of::<web_search::WebSearch>(),
            of::<load_skill::LoadSkill>(),
            of::<task::Task>(),
        ]
    }

    #[test]
    fn checked_in_parameters_are_what_the_argument_structs_derive() {
        let derived = derived();
        let mut text = String::from("{\n");
        for (n, (name, schema)) in derived.iter().enumerate() {
            let comma = if n + 1 < derived.len() { "," } else { "" };
            let schema = serde_json::to_string(schema).unwrap();
            text.push_str(&format!("  \"{name}\": {schema}{comma}\n"));
        }
        text.push_str("}\n");
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/src/tools/parameters.json");
        if std::env::var_os("TANDEM_UPDATE_SCHEMAS").is_some() {
            // Compiled in before the write: the next run checks what was written.
            std::fs::write(path, &text).unwrap();
            return;
        }
        assert!(
            include_str!("parameters.json") == text,
            "crates/core/src/tools/parameters.json is stale: TANDEM_UPDATE_SCHEMAS=1 cargo test --all-features checked_in_parameters"
        );
        // Read back, each is the same JSON, its keys in the same order (a request that
        // changes costs a model server its cache).
        for (name, schema) in &derived {
            let checked_in = CHECKED_IN.get(*name).unwrap();
            assert_eq!(
                serde_json::to_string(checked_in).unwrap(),
                serde_json::to_string(schema).unwrap(),
                "{name}"
            );
        }
        assert_eq!(CHECKED_IN.len(), derived.len());
    }

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
