//! What an error body says, however the server shaped it: every wire API's error bodies
//! and the errors that arrive inside a stream are read here.

use serde_json::Value;

/// What an error body says, however the server shaped it.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct ErrorDetail {
    /// Human-readable message.
    pub(crate) message: String,
    /// `code`, as text whether the server sent a string or a number.
    pub(crate) code: Option<String>,
    /// `type`, when given.
    pub(crate) kind: Option<String>,
}

impl ErrorDetail {
    /// Reads an error body: `{"error": {...}}`, `{"error": "text"}`, a bare `{message, code}`
    /// object (vLLM), `{"detail": ...}`, an array of such objects (Gemini's OpenAI-compatible
    /// endpoint: the first says it), or plain text.
    pub(crate) fn parse(body: &[u8]) -> ErrorDetail {
        serde_json::from_slice::<Value>(body)
            .ok()
            .and_then(|value| Self::from_value(&value))
            .unwrap_or_else(|| ErrorDetail {
                message: crate::excerpt::of(body),
                ..ErrorDetail::default()
            })
    }

    /// Reads an error value found in a JSON body or chunk; of an array, its first element.
    pub(crate) fn from_value(value: &Value) -> Option<ErrorDetail> {
        let value = match value {
            Value::Array(items) => items.first()?,
            other => other,
        };
        let inner = value.get("error").unwrap_or(value);
        if let Some(s) = inner.as_str() {
            return Some(ErrorDetail {
                message: s.to_string(),
                ..ErrorDetail::default()
            });
        }
        let obj = inner.as_object()?;
        let message = obj
            .get("message")
            .or_else(|| obj.get("detail"))
            .map(|m| match m {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            })?;
        let text_of = |v: &Value| match v {
            Value::String(s) => Some(s.clone()),
            Value::Number(n) => Some(n.to_string()),
            _ => None,
        };
        Some(ErrorDetail {
            message,
            code: obj.get("code").and_then(text_of),
            kind: obj.get("type").and_then(text_of),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_bodies_in_every_shape() {
        let d = ErrorDetail::parse(br#"{"error":{"message":"bad key","type":"auth","code":401}}"#);
        assert_eq!(d.code.as_deref(), Some("401"));
        assert_eq!(d.message, "bad key");
        let d = ErrorDetail::parse(br#"{"error":"model 'x' not found"}"#);
        assert_eq!(d.message, "model 'x' not found");
        let d = ErrorDetail::parse(br#"{"object":"error","message":"too long","code":400}"#);
        assert_eq!(d.message, "too long");
        let d = ErrorDetail::parse(
            br#"[{"error":{"code":400,"message":"The input token count (9) exceeds the maximum number of tokens allowed (8).","status":"INVALID_ARGUMENT"}}]"#,
        );
        assert_eq!(
            d.message,
            "The input token count (9) exceeds the maximum number of tokens allowed (8)."
        );
        assert_eq!(d.code.as_deref(), Some("400"));
        let d =
            ErrorDetail::parse(b"<html><title>502 Bad Gateway</title>\n<body>nginx</body></html>");
        assert_eq!(d.message, "an HTML page titled \"502 Bad Gateway\"");
    }
}
