//! Structured output: a prompt whose final answer must be one JSON value that validates
//! against a JSON Schema (`tandem exec --output-schema`, or `_meta.tandem.outputSchema` on
//! `session/prompt`).

use serde_json::Value;

/// Most validation errors quoted back to the model or the user.
const MAX_ERRORS: usize = 5;

/// Why a schema cannot be used.
#[derive(Debug, thiserror::Error)]
#[error("the output schema is not a valid JSON Schema: {0}")]
pub struct SchemaError(String);

/// A compiled output schema.
pub struct OutputSchema {
    schema: Value,
    validator: jsonschema::Validator,
}

impl std::fmt::Debug for OutputSchema {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OutputSchema")
            .field("schema", &self.schema)
            .finish()
    }
}

impl OutputSchema {
    /// Compiles `schema`.
    pub fn new(schema: Value) -> Result<Self, SchemaError> {
        if !schema.is_object() && !schema.is_boolean() {
            return Err(SchemaError("it must be a JSON object".into()));
        }
        let validator =
            jsonschema::validator_for(&schema).map_err(|e| SchemaError(e.to_string()))?;
        Ok(Self { schema, validator })
    }

    /// The schema as given.
    pub fn schema(&self) -> &Value {
        &self.schema
    }

    /// The JSON value in `answer` if it validates, else what is wrong (for the model to fix
    /// or the user to read). A Markdown code fence around the JSON is tolerated.
    pub fn check(&self, answer: &str) -> Result<Value, String> {
        let text = unfenced(answer.trim());
        if text.is_empty() {
            return Err("the answer is empty".into());
        }
        let value: Value = serde_json::from_str(text)
            .map_err(|e| format!("the answer is not a single JSON value ({e})"))?;
        let errors: Vec<String> = self
            .validator
            .iter_errors(&value)
            .take(MAX_ERRORS)
            .map(|e| {
                let at = e.instance_path().to_string();
                if at.is_empty() {
                    e.to_string()
                } else {
                    format!("at {at}: {e}")
                }
            })
            .collect();
        if errors.is_empty() {
            Ok(value)
        } else {
            Err(format!(
                "the JSON does not match the schema: {}",
                errors.join("; ")
            ))
        }
    }

    /// What the system prompt says about the answer's form.
    pub fn instructions(&self) -> String {
        format!(
            "\n\n## Answer format\n\nYour final answer must be only one JSON value, with no \
             prose and no code fence around it, that validates against this JSON Schema:\n\n{}",
            serde_json::to_string_pretty(&self.schema).unwrap_or_default()
        )
    }

    /// The message that asks the model, once, to correct an answer that failed `check`.
    pub fn repair_prompt(error: &str) -> String {
        format!(
            "[Your answer was not accepted: {error}. Answer again with only the corrected JSON \
             value, which must validate against the schema given earlier.]"
        )
    }
}

/// `text` without a surrounding Markdown code fence (```json … ```).
fn unfenced(text: &str) -> &str {
    let Some(rest) = text.strip_prefix("```") else {
        return text;
    };
    let Some(body) = rest.strip_suffix("```") else {
        return text;
    };
    // Drop the info string (`json`) on the opening line.
    match body.split_once('\n') {
        Some((_, inner)) => inner.trim(),
        None => body.trim(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> OutputSchema {
        OutputSchema::new(json!({
            "type": "object",
            "properties": {"verdict": {"enum": ["pass", "fail"]}, "score": {"type": "integer"}},
            "required": ["verdict"]
        }))
        .unwrap()
    }

    #[test]
    fn accepts_valid_json_also_inside_a_fence() {
        let s = schema();
        assert_eq!(
            s.check(r#" {"verdict": "pass"} "#).unwrap(),
            json!({"verdict": "pass"})
        );
        assert_eq!(
            s.check("```json\n{\"verdict\": \"fail\", \"score\": 2}\n```")
                .unwrap()["score"],
            2
        );
    }

    #[test]
    fn explains_what_is_wrong() {
        let s = schema();
        assert!(s.check("").unwrap_err().contains("empty"));
        assert!(
            s.check("Sure! Here it is")
                .unwrap_err()
                .contains("not a single JSON value")
        );
        let e = s
            .check(r#"{"verdict": "maybe", "score": "x"}"#)
            .unwrap_err();
        assert!(e.contains("/verdict") && e.contains("/score"), "{e}");
        assert!(s.check("{}").unwrap_err().contains("required"));
    }

    #[test]
    fn refuses_a_broken_schema() {
        assert!(OutputSchema::new(json!("string")).is_err());
        assert!(OutputSchema::new(json!({"type": "no-such-type"})).is_err());
    }
}
