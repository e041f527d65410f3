//! Every line the agent writes, checked against the official ACP v1 JSON Schema vendored in
//! `protocol/acp/v1/schema.json` (and the unstable schema for the methods tandem serves from
//! it): the validators, built once, and the check of one message.

use std::collections::HashMap;
use std::path::Path;
use std::sync::LazyLock;

use serde_json::{Value, json};

/// Methods of ACP v1's unstable schema that tandem serves when built with their feature
/// (`acp-session-fork`); their messages are checked against `schema.unstable.json`, every
/// other message against the stable `schema.json`.
const UNSTABLE_METHODS: &[&str] = &[
    "session/fork",
    "providers/list",
    "providers/set",
    "providers/disable",
];

/// The session updates that are still unstable in the schema the SDK pins (plan operations,
/// subagent sessions), sent only to an editor that advertised them; checked against
/// `schema.unstable.json`.
const UNSTABLE_UPDATES: &[&str] = &[
    "plan_update",
    "plan_removed",
    "subagent_update",
    "session_message",
    "session_message_chunk",
];

/// Whether `message` is a `session/update` of an unstable kind.
fn unstable_update(message: &Value) -> bool {
    message["method"] == "session/update"
        && message["params"]["update"]["sessionUpdate"]
            .as_str()
            .is_some_and(|kind| UNSTABLE_UPDATES.contains(&kind))
}

fn read_schema(file: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("protocol/acp/v1")
        .join(file);
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The vendored schemas: stable, and unstable.
static SCHEMA: LazyLock<Value> = LazyLock::new(|| read_schema("schema.json"));
static UNSTABLE_SCHEMA: LazyLock<Value> = LazyLock::new(|| read_schema("schema.unstable.json"));

/// The validator for the envelope of messages the agent sends: the schema's `Agent` branch.
fn agent_branch(schema: &Value) -> jsonschema::Validator {
    let mut schema = schema.clone();
    let agent = schema["anyOf"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["title"] == "Agent")
        .cloned()
        .expect("schema has an Agent branch");
    schema["anyOf"] = json!([agent]);
    jsonschema::validator_for(&schema).expect("ACP schema compiles")
}

static AGENT_SCHEMA: LazyLock<jsonschema::Validator> = LazyLock::new(|| agent_branch(&SCHEMA));
static UNSTABLE_AGENT_SCHEMA: LazyLock<jsonschema::Validator> =
    LazyLock::new(|| agent_branch(&UNSTABLE_SCHEMA));

type MethodSchemas = HashMap<(String, String), jsonschema::Validator>;

/// One validator per `$defs` entry that names a method (`x-method`), keyed by
/// (method, kind) where kind is `Request`, `Response` or `Notification`, plus `Error`.
fn method_schemas(schema: &Value) -> MethodSchemas {
    let defs = schema["$defs"].as_object().unwrap();
    let compile = |name: &str| {
        let schema = json!({"$ref": format!("#/$defs/{name}"), "$defs": schema["$defs"].clone()});
        jsonschema::validator_for(&schema).expect("definition compiles")
    };
    let mut map = HashMap::new();
    for (name, def) in defs {
        if let Some(method) = def["x-method"].as_str() {
            let kind = ["Request", "Response", "Notification"]
                .into_iter()
                .find(|k| name.ends_with(k))
                .unwrap_or("Other");
            map.insert((method.to_string(), kind.to_string()), compile(name));
        }
    }
    map.insert(("".to_string(), "Error".to_string()), compile("Error"));
    map
}

static METHOD_SCHEMAS: LazyLock<MethodSchemas> = LazyLock::new(|| method_schemas(&SCHEMA));
static UNSTABLE_METHOD_SCHEMAS: LazyLock<MethodSchemas> =
    LazyLock::new(|| method_schemas(&UNSTABLE_SCHEMA));

/// ACP's older session-models API, which ACP's schema no longer has but agent-shell still
/// uses: `session/set_model` and the `models` field of session answers. Their shapes are
/// tandem's generated `protocol/extensions/session-models.json` (its `response` and
/// `models`); the agent's messages are checked against them like the rest.
static SESSION_MODELS: LazyLock<HashMap<&'static str, jsonschema::Validator>> =
    LazyLock::new(|| {
        let path =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("protocol/extensions/session-models.json");
        let doc: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        ["response", "models"]
            .into_iter()
            .map(|part| (part, jsonschema::validator_for(&doc[part]).unwrap()))
            .collect()
    });

/// The answers that carry the older `models` field.
const ANSWERS_WITH_MODELS: &[&str] = &["session/new", "session/load", "session/resume"];

fn check(kind: &str, method: &str, value: &Value, unstable: bool, out: &mut Vec<String>) {
    let schemas = if unstable {
        &*UNSTABLE_METHOD_SCHEMAS
    } else {
        &*METHOD_SCHEMAS
    };
    let legacy = match (method, kind) {
        ("session/set_model", "Response") => SESSION_MODELS.get("response"),
        _ => None,
    };
    if kind == "Response"
        && ANSWERS_WITH_MODELS.contains(&method)
        && let Some(models) = value.get("models")
    {
        out.extend(
            SESSION_MODELS["models"]
                .iter_errors(models)
                .map(|e| format!("{method} models: {e} at {}", e.instance_path())),
        );
    }
    match schemas
        .get(&(method.to_string(), kind.to_string()))
        .or(legacy)
    {
        Some(validator) => out.extend(
            validator
                .iter_errors(value)
                .map(|e| format!("{method} {kind}: {e} at {}", e.instance_path())),
        ),
        None if method.starts_with('_') => {}
        None => out.push(format!(
            "`{method}` is not an ACP v1 {kind} the agent may send"
        )),
    }
}

/// Checks one message the agent sent; `answered` is the method of the request a response
/// answers, when known. Returns what is wrong with it.
pub(crate) fn schema_violations_for(message: &Value, answered: Option<&str>) -> Vec<String> {
    let unstable = message["method"]
        .as_str()
        .or(answered)
        .is_some_and(|m| UNSTABLE_METHODS.contains(&m))
        || unstable_update(message);
    let envelope = if unstable {
        &*UNSTABLE_AGENT_SCHEMA
    } else {
        &*AGENT_SCHEMA
    };
    let mut out: Vec<String> = envelope
        .iter_errors(message)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    if let Some(method) = message["method"].as_str() {
        let kind = if message.get("id").is_some() {
            "Request"
        } else {
            "Notification"
        };
        check(
            kind,
            method,
            message.get("params").unwrap_or(&Value::Null),
            unstable,
            &mut out,
        );
    } else if let Some(error) = message.get("error") {
        check("Error", "", error, false, &mut out);
    } else if let (Some(method), Some(result)) = (answered, message.get("result")) {
        check("Response", method, result, unstable, &mut out);
        if ["initialize", "session/prompt"].contains(&method) {
            // Fields stable in the schema the SDK pins but not yet in the published stable
            // file (`sessionCapabilities.systemPrompt`), or unstable ones tandem sends (a
            // prompt's `usage`), are checked in the unstable file too.
            check("Response", method, result, true, &mut out);
        }
    }
    out
}

/// Checks a message without knowing which request a response answers.
pub(crate) fn schema_violations(message: &Value) -> Vec<String> {
    schema_violations_for(message, None)
}
