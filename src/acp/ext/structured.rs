//! `_meta.tandem` on `session/prompt` and its answer: the output schema a prompt's final
//! answer must follow, and the validated value (or why it did not validate).

use std::sync::Arc;

use serde_json::{Map, Value, json};

use crate::output_schema::OutputSchema;

/// The schema in a prompt's `_meta.tandem.outputSchema`, compiled; an error message for the
/// client when it is not a usable JSON Schema.
pub(crate) fn output_schema(
    meta: Option<&Map<String, Value>>,
) -> Result<Option<Arc<OutputSchema>>, String> {
    let Some(schema) = meta
        .and_then(|m| m.get("tandem"))
        .and_then(|t| t.get("outputSchema"))
        .filter(|s| !s.is_null())
    else {
        return Ok(None);
    };
    OutputSchema::new(schema.clone())
        .map(|s| Some(Arc::new(s)))
        .map_err(|e| format!("_meta.tandem.outputSchema: {e}"))
}

/// The prompt answer's `_meta`: `{"tandem": {"structuredOutput": …}}` when the answer
/// validated, `{"tandem": {"structuredOutputError": "…"}}` when it did not.
pub(crate) fn structured_meta(
    structured: Option<Result<Value, String>>,
) -> Option<Map<String, Value>> {
    let tandem = match structured? {
        Ok(value) => json!({ "structuredOutput": value }),
        Err(error) => json!({ "structuredOutputError": error }),
    };
    json!({ "tandem": tandem }).as_object().cloned()
}
