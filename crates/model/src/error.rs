//! Model failures, classified so the editor can tell the user what happened in their terms.

use std::time::Duration;

use crate::error_body::ErrorDetail;

/// The kind of failure; sent to the editor as `data.class`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorClass {
    /// No API key is set for a server that needs one.
    MissingApiKey,
    /// 401 / 403 from a server tandem offers the editor an API-key auth method for.
    Auth,
    /// 401 / 403 from a server set up without a key: no auth method can fix it, so it is not
    /// answered as ACP's "authentication required".
    AccessDenied,
    /// 429 after every retry.
    RateLimited,
    /// 5xx after every retry.
    ServerError,
    /// The server could not be reached after every retry.
    Connection,
    /// The request does not fit the model's context window.
    ContextLength,
    /// 404: usually an unknown model id.
    NotFound,
    /// Any other 4xx.
    BadRequest,
    /// The stream ended or broke before the answer was complete.
    StreamInterrupted,
    /// A chunk was not valid chat-completions JSON.
    MalformedResponse,
    /// The server reported an error inside a 200 stream.
    StreamError,
    /// The replay fixture could not be used.
    Replay,
    /// The server did not start answering, or went quiet mid-answer, for longer than allowed.
    Timeout,
    /// The response passed `max_response_bytes`.
    ResponseTooLarge,
    /// The server takes no `tools` for this model (llama.cpp without `--jinja`, an Ollama
    /// model without a tool template, vLLM without a tool parser).
    ToolsUnsupported,
    /// The server refused the `response_format` (llama-cpp-python takes no `json_schema`).
    FormatUnsupported,
}

impl ErrorClass {
    /// The stable name used in `data.class`.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorClass::MissingApiKey => "missing_api_key",
            ErrorClass::Auth => "auth",
            ErrorClass::AccessDenied => "access_denied",
            ErrorClass::RateLimited => "rate_limited",
            ErrorClass::ServerError => "server_error",
            ErrorClass::Connection => "connection",
            ErrorClass::ContextLength => "context_length",
            ErrorClass::NotFound => "not_found",
            ErrorClass::BadRequest => "bad_request",
            ErrorClass::StreamInterrupted => "stream_interrupted",
            ErrorClass::MalformedResponse => "malformed_response",
            ErrorClass::StreamError => "stream_error",
            ErrorClass::Replay => "replay",
            ErrorClass::Timeout => "timeout",
            ErrorClass::ResponseTooLarge => "response_too_large",
            ErrorClass::ToolsUnsupported => "tools_unsupported",
            ErrorClass::FormatUnsupported => "format_unsupported",
        }
    }

    /// Whether the user must fix credentials (answered as ACP `auth_required`).
    pub fn is_auth(self) -> bool {
        matches!(self, ErrorClass::MissingApiKey | ErrorClass::Auth)
    }
}

/// How the endpoint uses an API key, for the words and the code of a 401 or 403.
#[derive(Debug, Clone, Copy)]
pub(crate) struct KeyUse<'a> {
    /// The environment variable the key is read from.
    pub(crate) env: &'a str,
    /// Whether tandem offers the editor its login for this server (it needs a key, or one
    /// is sent): then a rejected key is for a new login to fix.
    pub(crate) offered: bool,
    /// Whether a key was sent.
    pub(crate) sent: bool,
    /// Where the key sent came from, so a refusal names the place to fix.
    pub(crate) from: KeySource<'a>,
}

/// Where the key a request carried came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum KeySource<'a> {
    /// This environment variable.
    Env(&'a str),
    /// The store `tandem login` saved it in.
    Store,
    /// Typed or piped into `tandem login`, which is testing it.
    Given,
    /// No key was sent.
    Nowhere,
}

impl KeySource<'_> {
    /// What to do about a key the server refused.
    fn fix(self, env: &str) -> String {
        let tandem = crate::config::invocation::command();
        match self {
            KeySource::Env(var) => format!(
                "The key came from {var} in the environment tandem runs in (it is used before a key `{tandem} login` saved): correct or unset it."
            ),
            KeySource::Store => format!(
                "The key is the one `{tandem} login` saved: run `{tandem} login` to replace it."
            ),
            KeySource::Given => "Check the key you gave.".to_string(),
            KeySource::Nowhere => format!("Set {env}, or run `{tandem} login`."),
        }
    }
}

/// A model request that failed, with a message written for the user.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct ModelError {
    /// What kind of failure.
    pub class: ErrorClass,
    /// The sentence shown to the user.
    pub message: String,
    /// HTTP status, when there was one.
    pub status: Option<u16>,
    /// How many requests were made.
    pub attempts: u32,
    /// The server's `Retry-After`, when it gave one.
    pub retry_after: Option<Duration>,
}

impl ModelError {
    /// A failure without HTTP details.
    pub fn new(class: ErrorClass, message: impl Into<String>) -> Self {
        Self {
            class,
            message: message.into(),
            status: None,
            attempts: 1,
            retry_after: None,
        }
    }

    /// Classifies a final non-success HTTP response.
    pub(crate) fn from_http(
        base_url: &str,
        model: &str,
        key: KeyUse<'_>,
        status: u16,
        body: &[u8],
        attempts: u32,
        retry_after: Option<Duration>,
    ) -> Self {
        let detail = ErrorDetail::parse(body);
        // The server's own sentence, without its final stop: tandem's sentence goes on.
        let message = detail.message.trim_end_matches(['.', ' ']);
        let said = if message.is_empty() {
            String::new()
        } else {
            format!(": {message}")
        };
        let tries = if attempts > 1 {
            format!(" after {attempts} attempts")
        } else {
            String::new()
        };
        let (class, message) = if format_refused(status, body) {
            (
                ErrorClass::FormatUnsupported,
                format!("the model server at {base_url} takes no such response_format{said}"),
            )
        } else if tools_unsupported(body) {
            (
                ErrorClass::ToolsUnsupported,
                format!("the model server at {base_url} takes no tools for `{model}`{said}"),
            )
        } else if is_context_length(status, &detail, body) {
            (
                ErrorClass::ContextLength,
                format!(
                    "the conversation no longer fits the model's context window ({model}){said}"
                ),
            )
        } else {
            by_status(base_url, model, key, status, &said, &tries)
        };
        Self {
            class,
            message,
            status: Some(status),
            attempts,
            retry_after,
        }
    }

    /// Classifies a 200 answer whose body is JSON rather than an event stream: an error
    /// object (some servers report errors this way) or a non-streamed completion.
    pub(crate) fn from_json_body(base_url: &str, model: &str, body: &[u8]) -> Self {
        let value: serde_json::Value = serde_json::from_slice(body).unwrap_or_default();
        if let Some(error) = value.get("error") {
            return Self::reported(
                base_url,
                model,
                error,
                "answered with an error instead of a stream",
            );
        }
        let shown: String = String::from_utf8_lossy(body).chars().take(200).collect();
        Self::new(
            ErrorClass::MalformedResponse,
            format!(
                "the model server at {base_url} answered with JSON instead of an event stream (does it support `stream: true`?): {shown}"
            ),
        )
    }

    /// Classifies an error object that arrived inside a 200 stream.
    pub(crate) fn from_stream_error(
        base_url: &str,
        model: &str,
        value: &serde_json::Value,
    ) -> Self {
        Self::reported(base_url, model, value, "reported an error mid-answer")
    }

    /// An error object from the server; `how` says where it came ("reported an error …").
    fn reported(base_url: &str, model: &str, value: &serde_json::Value, how: &str) -> Self {
        let detail = ErrorDetail::from_value(value).unwrap_or_else(|| ErrorDetail {
            message: value.to_string(),
            ..ErrorDetail::default()
        });
        if is_context_length(400, &detail, detail.message.as_bytes()) {
            return Self::new(
                ErrorClass::ContextLength,
                format!(
                    "the conversation no longer fits the model's context window ({model}): {}",
                    detail.message
                ),
            );
        }
        let class = transient(&detail).unwrap_or(ErrorClass::StreamError);
        Self::new(
            class,
            format!("the model server at {base_url} {how}: {}", detail.message),
        )
    }

    /// Whether asking again may well succeed: the server was overloaded, rate-limited or
    /// failed on its side, or the stream broke off.
    pub fn is_transient(&self) -> bool {
        matches!(
            self.class,
            ErrorClass::ServerError | ErrorClass::RateLimited | ErrorClass::StreamInterrupted
        )
    }
}

/// The class of an error a server reported in words rather than a status (inside a 200
/// stream, or as a 200 JSON body) when it is one that passes: Anthropic's
/// `overloaded_error` and `api_error`, OpenAI's `server_error` and `rate_limit_exceeded`, a
/// numeric 429 or 5xx code (529 is Anthropic's "overloaded").
fn transient(detail: &ErrorDetail) -> Option<ErrorClass> {
    let said = |field: &Option<String>| field.as_deref().map(str::to_ascii_lowercase);
    let (kind, code) = (said(&detail.kind), said(&detail.code));
    let named = |names: &[&str]| {
        [&kind, &code]
            .iter()
            .any(|f| f.as_deref().is_some_and(|f| names.contains(&f)))
    };
    let status = code.as_deref().and_then(|c| c.parse::<u16>().ok());
    if named(&["rate_limit_error", "rate_limit_exceeded", "rate_limited"]) || status == Some(429) {
        return Some(ErrorClass::RateLimited);
    }
    let failed = named(&[
        "overloaded_error",
        "overloaded",
        "api_error",
        "server_error",
        "internal_error",
        "internal_server_error",
        "service_unavailable",
    ]) || status.is_some_and(|s| (500..600).contains(&s))
        || detail.message.to_ascii_lowercase().contains("overloaded");
    failed.then_some(ErrorClass::ServerError)
}

/// Whether an error body says the server cannot take `tools` for this model, as llama.cpp,
/// Ollama and vLLM word it. Such a request is not retried: it would fail the same way.
pub(crate) fn tools_unsupported(body: &[u8]) -> bool {
    let text = String::from_utf8_lossy(body).to_ascii_lowercase();
    [
        "tools param requires --jinja",
        "does not support tools",
        "tools are not supported",
        "tool choice requires --enable-auto-tool-choice",
        "function calling is not supported",
    ]
    .iter()
    .any(|needle| text.contains(needle))
}

/// Whether an error says the request's `response_format` is not one the server takes (a
/// validation error naming it). Not retried either.
pub(crate) fn format_refused(status: u16, body: &[u8]) -> bool {
    (400..600).contains(&status) && String::from_utf8_lossy(body).contains("response_format")
}

/// The class and words of an error answer by its status alone; `said` is the server's own
/// sentence (`: …` or empty), `tries` how many attempts were made (` after N attempts`).
fn by_status(
    base_url: &str,
    model: &str,
    key: KeyUse<'_>,
    status: u16,
    said: &str,
    tries: &str,
) -> (ErrorClass, String) {
    match status {
        401 | 403 if key.offered || key.sent => (
            if key.offered {
                ErrorClass::Auth
            } else {
                ErrorClass::AccessDenied
            },
            format!(
                "the model server at {base_url} rejected the API key ({status}){said}. {}",
                key.from.fix(key.env)
            ),
        ),
        401 | 403 => (
            ErrorClass::AccessDenied,
            format!(
                "the model server at {base_url} refused the request ({status}){said}. tandem sent no API key, because none is stored or set for this server; if it needs one, run `{tandem} login` in a terminal (or set {} in the environment tandem runs in).",
                key.env,
                tandem = crate::config::invocation::command()
            ),
        ),
        429 => (
            ErrorClass::RateLimited,
            format!("the model server at {base_url} is rate-limiting requests (429){tries}{said}"),
        ),
        404 => (
            ErrorClass::NotFound,
            format!(
                "the model server at {base_url} does not know model `{model}` or its API's address (404){said}. {}",
                not_found_fix(base_url)
            ),
        ),
        s if s >= 500 => (
            ErrorClass::ServerError,
            format!("the model server at {base_url} failed with HTTP {s}{tries}{said}"),
        ),
        s => (
            ErrorClass::BadRequest,
            format!("the model server at {base_url} rejected the request ({s}){said}"),
        ),
    }
}

/// What to check after a 404: a base URL without a version in its path (`http://host:8080`
/// for llama-server's `http://host:8080/v1`) is the usual cause, as `tandem login` and
/// `tandem doctor` also say; else the model id.
fn not_found_fix(base_url: &str) -> String {
    let tandem = crate::config::invocation::command();
    let (origin, path) = split_url(base_url);
    let path = path.trim_matches('/');
    if has_version_segment(path) {
        return format!("Check that `{tandem} doctor` lists the model as one this server has.");
    }
    let what = "The base URL is the part before the API's own path (/chat/completions, /responses or /messages) and usually ends in /v1";
    let how = format!("(--base-url, or base_url in the config file); `{tandem} doctor` checks it.");
    if path.is_empty() {
        format!("{what}: try {origin}/v1 {how}")
    } else {
        // A path of another kind (Ollama's native `/api`, say): what replaces it is not sure.
        format!("{what}, as in {origin}/v1: check the URL {how}")
    }
}

/// A URL's scheme and host, and its path (`""` when it has none).
fn split_url(url: &str) -> (&str, &str) {
    let start = url.find("://").map_or(0, |i| i + 3);
    match url[start..].find('/') {
        Some(slash) => url.split_at(start + slash),
        None => (url, ""),
    }
}

/// Whether a URL path has a segment like `v1`, `v1beta` or `v4` (an API version).
fn has_version_segment(path: &str) -> bool {
    path.split('/').any(|segment| {
        segment
            .strip_prefix('v')
            .is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_digit()))
    })
}

/// Whether the answer says the request does not fit the context window (servers say it in
/// many ways; this matches the common ones): by its code or type (OpenAI's
/// `context_length_exceeded`, llama.cpp's `exceed_context_size_error`), or by its words
/// anywhere in the body (the message shown may be a shortened excerpt of it), as OpenAI,
/// llama.cpp ("exceeds the available context size"), Anthropic ("prompt is too long",
/// "exceed context limit") and Gemini ("The input token count … exceeds the maximum number of
/// tokens allowed") word it.
fn is_context_length(status: u16, detail: &ErrorDetail, body: &[u8]) -> bool {
    if !(status == 400 || status == 413 || status == 422) {
        return false;
    }
    let named = |field: &Option<String>| {
        matches!(
            field.as_deref(),
            Some("context_length_exceeded" | "exceed_context_size_error")
        )
    };
    if named(&detail.code) || named(&detail.kind) {
        return true;
    }
    let m = String::from_utf8_lossy(body).to_ascii_lowercase();
    [
        "context length",
        "context_length",
        "context window",
        "maximum context",
        "too many tokens",
        "exceeds the context",
        "prompt is too long",
        "exceeds the available context size",
        "exceed context limit",
        "input token count",
    ]
    .iter()
    .any(|needle| m.contains(needle))
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: KeyUse<'static> = KeyUse {
        env: "OPENAI_API_KEY",
        offered: true,
        sent: true,
        from: KeySource::Env("OPENAI_API_KEY"),
    };

    #[test]
    fn a_keyless_provider_refused_is_not_an_auth_method_problem() {
        let keyless = KeyUse {
            env: "OPENAI_API_KEY",
            offered: false,
            sent: false,
            from: KeySource::Nowhere,
        };
        let e = ModelError::from_http("http://x", "m", keyless, 403, b"{}", 1, None);
        assert_eq!(e.class, ErrorClass::AccessDenied);
        assert!(!e.class.is_auth());
        assert!(e.message.contains("sent no API key"), "{}", e.message);
        assert!(e.message.contains("run `tandem login`"), "{}", e.message);
        let sent = KeyUse {
            sent: true,
            ..keyless
        };
        let e = ModelError::from_http("http://x", "m", sent, 401, b"{}", 1, None);
        assert_eq!(e.class, ErrorClass::AccessDenied);
        assert!(e.message.contains("rejected the API key (401)"));
    }

    #[test]
    fn a_refused_key_names_where_it_came_from_in_one_sentence() {
        let body = br#"{"error":{"message":"Invalid API key."}}"#;
        let given = KeyUse {
            from: KeySource::Given,
            offered: false,
            ..KEY
        };
        let e = ModelError::from_http("http://x", "m", given, 401, body, 1, None);
        assert_eq!(
            e.message,
            "the model server at http://x rejected the API key (401): Invalid API key. Check the key you gave."
        );
        let e = ModelError::from_http("http://x", "m", KEY, 401, body, 1, None);
        assert!(
            e.message
                .ends_with("Invalid API key. The key came from OPENAI_API_KEY in the environment tandem runs in (it is used before a key `tandem login` saved): correct or unset it."),
            "{}",
            e.message
        );
    }

    #[test]
    fn classes_by_status() {
        let e = ModelError::from_http("http://x", "m", KEY, 401, b"{}", 1, None);
        assert_eq!(e.class, ErrorClass::Auth);
        assert!(e.message.contains("rejected the API key (401)"));
        assert!(e.message.contains("OPENAI_API_KEY"));
        let stored = KeyUse {
            from: KeySource::Store,
            ..KEY
        };
        let e = ModelError::from_http("http://x", "m", stored, 403, b"{}", 1, None);
        assert_eq!(e.class, ErrorClass::Auth);
        assert!(e.message.contains("`tandem login` saved"), "{}", e.message);
        assert!(!e.message.contains("OPENAI_API_KEY"), "{}", e.message);
        let e = ModelError::from_http("http://x", "m", KEY, 503, b"down", 4, None);
        assert_eq!(e.class, ErrorClass::ServerError);
        assert!(
            e.message.contains("after 4 attempts: down"),
            "{}",
            e.message
        );
    }

    #[test]
    fn a_404_without_a_version_in_the_base_url_suggests_v1() {
        let page = b"<html><title>404 Not Found</title></html>";
        let e = ModelError::from_http("http://127.0.0.1:8080", "m", KEY, 404, page, 1, None);
        assert_eq!(e.class, ErrorClass::NotFound);
        assert!(
            e.message
                .contains("try http://127.0.0.1:8080/v1 (--base-url"),
            "{}",
            e.message
        );
        for versioned in [
            "http://h/v1",
            "https://h/v1beta/openai/",
            "https://h/api/v4",
        ] {
            let e = ModelError::from_http(versioned, "m", KEY, 404, b"{}", 1, None);
            assert!(!e.message.contains("/v1 (--base-url"), "{}", e.message);
            assert!(
                e.message.contains("doctor` lists the model"),
                "{}",
                e.message
            );
        }
        let e = ModelError::from_http("http://localhost:11434/api", "m", KEY, 404, b"{}", 1, None);
        assert!(
            e.message
                .contains("as in http://localhost:11434/v1: check the URL")
                && !e.message.contains("/api/v1"),
            "{}",
            e.message
        );
        assert!(!has_version_segment(split_url("http://v1.example.com").1));
        assert!(!has_version_segment(split_url("http://h/video").1));
    }

    #[test]
    fn errors_told_mid_stream_that_pass_are_the_servers_not_the_streams() {
        let class = |v: serde_json::Value| ModelError::from_stream_error("http://x", "m", &v).class;
        let anthropic = serde_json::json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}});
        assert_eq!(class(anthropic), ErrorClass::ServerError);
        let openai =
            serde_json::json!({"code": "server_error", "message": "The server had an error"});
        assert_eq!(class(openai), ErrorClass::ServerError);
        let limited = serde_json::json!({"error": {"type": "rate_limit_error", "message": "slow"}});
        assert_eq!(class(limited), ErrorClass::RateLimited);
        let numeric = serde_json::json!({"error": {"message": "model overloaded", "code": 529}});
        assert_eq!(class(numeric), ErrorClass::ServerError);
        let refused =
            serde_json::json!({"error": {"type": "invalid_request_error", "message": "bad"}});
        assert_eq!(class(refused), ErrorClass::StreamError);
        assert!(!ModelError::new(ErrorClass::StreamError, "x").is_transient());
        assert!(ModelError::new(ErrorClass::StreamInterrupted, "x").is_transient());
    }

    #[test]
    fn context_length_by_code_or_words() {
        let body = br#"{"error":{"message":"This model's maximum context length is 8192 tokens","code":"context_length_exceeded"}}"#;
        let e = ModelError::from_http("http://x", "m", KEY, 400, body, 1, None);
        assert_eq!(e.class, ErrorClass::ContextLength);
        assert!(e.message.starts_with("the conversation no longer fits"));
        let e = ModelError::from_http("http://x", "m", KEY, 400, b"{\"error\":\"bad\"}", 1, None);
        assert_eq!(e.class, ErrorClass::BadRequest);
    }

    #[test]
    fn context_length_as_llama_cpp_anthropic_and_gemini_say_it() {
        let llama = br#"{"error":{"code":400,"message":"request (9000 tokens) exceeds the available context size (4096 tokens), try increasing it","type":"exceed_context_size_error","n_prompt_tokens":9000,"n_ctx":4096}}"#;
        let anthropic = br#"{"type":"error","error":{"type":"invalid_request_error","message":"input length and `max_tokens` exceed context limit: 197000 + 8192 > 200000, decrease input length or `max_tokens` and try again"}}"#;
        let gemini = br#"[{"error":{"code":400,"message":"The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).","status":"INVALID_ARGUMENT"}}]"#;
        for body in [&llama[..], &anthropic[..], &gemini[..]] {
            let e = ModelError::from_http("http://x", "m", KEY, 400, body, 1, None);
            assert_eq!(e.class, ErrorClass::ContextLength, "{}", e.message);
        }
        // By its type alone, whatever the words.
        let typed =
            br#"{"error":{"code":400,"message":"no room","type":"exceed_context_size_error"}}"#;
        let e = ModelError::from_http("http://x", "m", KEY, 400, typed, 1, None);
        assert_eq!(e.class, ErrorClass::ContextLength);
        let e = ModelError::from_http("http://x", "m", KEY, 400, gemini, 1, None);
        assert!(
            e.message
                .ends_with("(m): The input token count (1200000) exceeds the maximum number of tokens allowed (1048576)"),
            "{}",
            e.message
        );
    }
}
