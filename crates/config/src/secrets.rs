//! The API keys tandem knows: kept out of everything tandem writes (logs, stdout, transcripts,
//! `tandem exec` output), out of everything it sends the model, and out of the environment of
//! the processes it starts.
//!
//! The key in use is registered once at start-up ([`protect`]); the keys `tandem login`
//! stored in its credentials file, for any server, are learnt at the first model request and
//! again whenever the file changes ([`watch_key_file`], [`refresh_stored_keys`]), never at
//! start-up and never from the system keyring. [`redact`] replaces every known key, and any
//! `Bearer` token, with `[redacted]`; [`redact_json`] replaces the keys (only) in every string
//! of a model request, whatever part of it (a command's output, a file, an MCP result) holds
//! one. A stream of pieces (a model's answer, its reasoning) goes through a
//! [`StreamRedactor`], which holds back the end of what came so far while it could be the
//! start of a key, so a key split across two pieces is caught too.
//!
//! What is held sits in a process-wide static on purpose: the log writer
//! ([`RedactingWriter`]) runs inside tracing's global subscriber, which `main` installs
//! before the configuration (and so the key) is read and which every thread reaches, so
//! there is no owner to hand the key to. State that has an owner (MCP child processes, what
//! `tandem exec` shows) lives in that owner instead.

use parking_lot::RwLock;
use std::borrow::Cow;
use std::time::SystemTime;

use crate::credentials::KeyFile;

/// What replaces a secret.
pub(crate) const REDACTED: &str = "[redacted]";

/// Values shorter than this are not treated as secrets (they would match ordinary text).
const MIN_SECRET_LEN: usize = 8;

#[derive(Default)]
struct Held {
    /// Secret values to redact.
    values: Vec<String>,
    /// Environment variables removed from child processes.
    vars: Vec<String>,
    /// `tandem login`'s credentials file, whose keys are redacted too.
    key_file: Option<KeyFile>,
    /// The file's modification time and size when its keys were last read.
    key_file_seen: Option<(Option<SystemTime>, u64)>,
}

static HELD: RwLock<Held> = RwLock::new(Held {
    values: Vec::new(),
    vars: Vec::new(),
    key_file: None,
    key_file_seen: None,
});

fn held() -> parking_lot::RwLockReadGuard<'static, Held> {
    HELD.read()
}

/// Registers `key` for redaction, and `hidden` as the environment variables child processes
/// must not inherit (those that carry the key, unless the user shares it: see
/// `Config::key_vars`). Called once at start-up.
pub fn protect(key: &str, hidden: Vec<String>) {
    let mut h = HELD.write();
    if key.len() >= MIN_SECRET_LEN && !h.values.iter().any(|v| v == key) {
        h.values.push(key.to_string());
    }
    h.vars = hidden;
}

/// Registers `tandem login`'s credentials file: the keys in it (for any server) are redacted
/// like the one in use, from the first model request on. Nothing is read here, so start-up
/// pays nothing for it.
pub fn watch_key_file(file: KeyFile) {
    let mut h = HELD.write();
    h.key_file = Some(file);
    h.key_file_seen = None;
}

/// Learns the keys in the credentials file when it changed since the last look (one `stat`
/// when it did not). Called before each model request: a command may read the file, and
/// another `tandem login` may have added to it meanwhile.
pub fn refresh_stored_keys() {
    let Some(file) = held().key_file.clone() else {
        return;
    };
    let seen = std::fs::metadata(file.path())
        .ok()
        .map(|m| (m.modified().ok(), m.len()));
    if seen.is_none() || seen == held().key_file_seen {
        return;
    }
    let keys = match file.keys() {
        Ok(keys) => keys,
        Err(e) => {
            tracing::debug!("cannot learn the stored keys to redact: {e}");
            Vec::new()
        }
    };
    let mut h = HELD.write();
    h.key_file_seen = seen;
    for key in keys {
        let key = key.trim();
        if looks_like_a_key(key) && !h.values.iter().any(|v| v == key) {
            h.values.push(key.to_string());
        }
    }
}

/// Whether a stored value for another server is a key rather than a placeholder some local
/// servers take (`lm-studio`, `sk-no-key-required`), whose every mention in code or docs
/// would otherwise read `[redacted]`: 16 characters or more with a digit, or 32 or more.
fn looks_like_a_key(value: &str) -> bool {
    let digit = value.bytes().any(|b| b.is_ascii_digit());
    (value.len() >= 16 && digit) || value.len() >= 32
}

/// The variables a child process must not inherit.
pub fn hidden_vars() -> Vec<String> {
    held().vars.clone()
}

/// Removes the hidden variables from `command`'s environment.
pub fn scrub(command: &mut tokio::process::Command) {
    for var in hidden_vars() {
        command.env_remove(var);
    }
}

/// `text` with every registered secret and every `Bearer` token replaced by `[redacted]`.
pub fn redact(text: &str) -> Cow<'_, str> {
    let out = redact_keys(text);
    match redact_bearer(&out) {
        Some(clean) => Cow::Owned(clean),
        None => out,
    }
}

/// Whether `text` holds one of the keys tandem knows (so it must not leave in a URL or a
/// query).
pub fn holds_key(text: &str) -> bool {
    matches!(redact_keys(text), Cow::Owned(_))
}

/// [`holds_key`], whatever the case of either (a URL's host is lower-cased on parsing).
pub fn holds_key_in_any_case(text: &str) -> bool {
    let lower = text.to_lowercase();
    held()
        .values
        .iter()
        .any(|key| lower.contains(&key.to_lowercase()))
}

/// `text` with every known key replaced by `[redacted]`, and nothing else changed: for what
/// the model reads, where code that merely says `Bearer {token}` must stay as written.
pub(crate) fn redact_keys(text: &str) -> Cow<'_, str> {
    replace_keys(&held().values, text)
}

/// Replaces every known key in every string of `value` (a model request's body) in place.
/// Whatever reached the request (a command's output, a file read, an MCP result, a hook's
/// words, the user's own text) reaches the model without a key; a key cut into pieces or
/// transformed (base64, reversed) is not recognised.
pub fn redact_json(value: &mut serde_json::Value) {
    let h = held();
    if !h.values.is_empty() {
        redact_strings(&h.values, value);
    }
}

fn redact_strings(keys: &[String], value: &mut serde_json::Value) {
    use serde_json::Value;
    match value {
        Value::String(text) => {
            if let Cow::Owned(clean) = replace_keys(keys, text) {
                *text = clean;
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| redact_strings(keys, v)),
        Value::Object(map) => map.values_mut().for_each(|v| redact_strings(keys, v)),
        Value::Null | Value::Bool(_) | Value::Number(_) => {}
    }
}

/// `text` with each of `keys` replaced by `[redacted]`.
fn replace_keys<'a>(keys: &[String], text: &'a str) -> Cow<'a, str> {
    let mut out = Cow::Borrowed(text);
    for key in keys {
        if out.contains(key.as_str()) {
            out = Cow::Owned(out.replace(key.as_str(), REDACTED));
        }
    }
    out
}

/// Redacts a stream of text pieces. The end of what came so far is held back while it could
/// be the start of a secret (never more than the longest secret's length minus one bytes),
/// so a secret split across pieces is replaced like a whole one.
#[derive(Debug, Default)]
pub struct StreamRedactor {
    pending: String,
}

impl StreamRedactor {
    /// What of the stream so far, with `piece` added, is safe to show now (possibly empty).
    pub fn push(&mut self, piece: &str) -> String {
        self.pending.push_str(piece);
        let mut cut = self.pending.len() - held_back(&self.pending);
        while !self.pending.is_char_boundary(cut) {
            cut -= 1;
        }
        let ready: String = self.pending.drain(..cut).collect();
        redact(&ready).into_owned()
    }

    /// The rest, at the end of the stream.
    pub fn finish(&mut self) -> String {
        let rest = std::mem::take(&mut self.pending);
        redact(&rest).into_owned()
    }
}

/// How many bytes at the end of `text` could be the start of a registered secret.
fn held_back(text: &str) -> usize {
    let h = held();
    let bytes = text.as_bytes();
    h.values
        .iter()
        .filter_map(|secret| {
            let secret = secret.as_bytes();
            (1..secret.len().min(bytes.len() + 1))
                .rev()
                .find(|&k| bytes.ends_with(&secret[..k]))
        })
        .max()
        .unwrap_or(0)
}

/// Replaces the token after each `Bearer ` (any case); `None` when there is none.
fn redact_bearer(text: &str) -> Option<String> {
    const WORD: &str = "bearer ";
    // The common spellings first, without allocating: this runs on every line tandem writes.
    if !(text.contains("earer ") || text.contains("EARER ")) {
        return None;
    }
    let lower = text.to_ascii_lowercase();
    lower.find(WORD)?;
    let mut out = String::with_capacity(text.len());
    let mut rest = 0;
    let mut from = 0;
    while let Some(found) = lower[from..].find(WORD) {
        let start = from + found + WORD.len();
        let end = text[start..]
            .find(|c: char| c.is_whitespace() || matches!(c, '"' | '\'' | ',' | ';' | '\\'))
            .map_or(text.len(), |n| start + n);
        if end > start && text[start..end] != *REDACTED {
            out.push_str(&text[rest..start]);
            out.push_str(REDACTED);
            rest = end;
        }
        from = end.max(start);
    }
    if rest == 0 {
        return None;
    }
    out.push_str(&text[rest..]);
    Some(out)
}

/// Longest log line written whole: a debug dump of a large message keeps its start and size.
pub(crate) const MAX_LOG_LINE: usize = 4096;

/// A `std::io::Write` for logs that redacts each write (tracing's formatter writes whole
/// events at once) and cuts a line longer than [`MAX_LOG_LINE`] bytes, so no log level
/// writes megabyte lines.
pub struct RedactingWriter<W>(pub W);

impl<W: std::io::Write> std::io::Write for RedactingWriter<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let text = String::from_utf8_lossy(buf);
        let clean = redact(&text);
        // One write for the whole event: stderr is locked per write, so another thread's
        // event cannot land between a cut line and its note.
        let mut out = String::with_capacity(clean.len().min(2 * MAX_LOG_LINE));
        for line in clean.split_inclusive('\n') {
            if line.len() <= MAX_LOG_LINE {
                out.push_str(line);
                continue;
            }
            let mut end = MAX_LOG_LINE;
            while !line.is_char_boundary(end) {
                end -= 1;
            }
            let rest = line.len() - end;
            out.push_str(&line[..end]);
            out.push_str(&format!(" … [{rest} more bytes]\n"));
        }
        self.0.write_all(out.as_bytes())?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bearer_tokens_are_replaced_wherever_they_appear() {
        assert_eq!(
            redact_bearer("authorization: Bearer sk-abc123 next").as_deref(),
            Some("authorization: Bearer [redacted] next")
        );
        assert_eq!(
            redact_bearer(r#"{"h":"bearer xyz","i":"BEARER q"}"#).as_deref(),
            Some(r#"{"h":"bearer [redacted]","i":"BEARER [redacted]"}"#)
        );
        assert_eq!(redact_bearer("no tokens here"), None);
        assert_eq!(redact_bearer("Bearer [redacted]"), None);
        assert_eq!(redact_bearer("a bearer "), None);
    }

    #[test]
    fn registered_values_are_replaced() {
        HELD.write().values.push("sk-test-secret-42".into());
        assert_eq!(
            redact("key sk-test-secret-42, again sk-test-secret-42"),
            "key [redacted], again [redacted]"
        );
        assert!(matches!(redact("nothing"), Cow::Borrowed(_)));
    }

    #[test]
    fn keys_leave_a_request_and_code_that_says_bearer_stays() {
        HELD.write().values.push("sk-json-secret-31".into());
        let mut body = serde_json::json!({"messages": [
            {"role": "tool", "content": "OPENAI_API_KEY=sk-json-secret-31\nHOME=/h"},
            {"role": "assistant", "tool_calls": [{"function": {
                "arguments": "{\"command\":\"echo sk-json-secret-31\"}"}}]},
            {"role": "user", "content": [{"type": "text", "text": "let h = format!(\"Bearer {token}\");"}]},
        ], "max_tokens": 5});
        redact_json(&mut body);
        let m = &body["messages"];
        assert_eq!(m[0]["content"], "OPENAI_API_KEY=[redacted]\nHOME=/h");
        assert_eq!(
            m[1]["tool_calls"][0]["function"]["arguments"],
            "{\"command\":\"echo [redacted]\"}"
        );
        assert_eq!(
            m[2]["content"][0]["text"],
            "let h = format!(\"Bearer {token}\");"
        );
        assert_eq!(body["max_tokens"], 5);
    }

    #[test]
    fn keys_stored_for_any_server_are_learnt_when_the_file_changes() {
        let dir = tempfile::tempdir().unwrap();
        let file = KeyFile::new(dir.path());
        file.set("https://a/v1", "sk-stored-aaaa1111").unwrap();
        file.set("http://localhost:1234/v1", "sk-no-key-required")
            .unwrap();
        watch_key_file(file.clone());
        refresh_stored_keys();
        assert_eq!(redact_keys("k=sk-stored-aaaa1111"), "k=[redacted]");
        let placeholder = "api_key = \"sk-no-key-required\"";
        assert_eq!(redact_keys(placeholder), placeholder);
        file.set("https://b/v1", "sk-stored-bbbb2222").unwrap();
        refresh_stored_keys();
        assert_eq!(redact_keys("sk-stored-bbbb2222"), REDACTED);
    }

    #[test]
    fn placeholders_are_not_taken_for_keys() {
        for placeholder in ["lm-studio", "sk-no-key-required", "password1", "ollama"] {
            assert!(!looks_like_a_key(placeholder), "{placeholder}");
        }
        for key in [
            "sk-stored-aaaa1111",
            "gsk_abcdefghijklmnopqrstuvwxyzABCDEF",
            "sk-or-v1-0123456789abcdef0123456789abcdef",
        ] {
            assert!(looks_like_a_key(key), "{key}");
        }
    }

    #[test]
    fn long_log_lines_are_cut() {
        use std::io::Write;
        let mut out = RedactingWriter(Vec::new());
        let line = format!("short\n{}\n", "y".repeat(3 * MAX_LOG_LINE));
        out.write_all(line.as_bytes()).unwrap();
        let text = String::from_utf8(out.0).unwrap();
        assert!(text.starts_with("short\n"));
        assert!(text.len() < MAX_LOG_LINE + 100, "{}", text.len());
        assert!(
            text.ends_with(&format!(" … [{} more bytes]\n", 2 * MAX_LOG_LINE + 1)),
            "{}",
            &text[text.len() - 40..]
        );
    }

    #[test]
    fn a_secret_split_across_pieces_is_caught_and_nothing_else_waits() {
        HELD.write().values.push("sk-split-secret-77".into());
        let mut r = StreamRedactor::default();
        let mut shown = String::new();
        for piece in ["the key is sk-sp", "lit-sec", "ret-77 and ", "more"] {
            shown.push_str(&r.push(piece));
        }
        shown.push_str(&r.finish());
        assert_eq!(shown, "the key is [redacted] and more");
        // Text that cannot start a secret is never held.
        let mut r = StreamRedactor::default();
        assert_eq!(r.push("plain words "), "plain words ");
        assert_eq!(r.push("ending in sk-sp"), "ending in ");
        assert_eq!(
            r.finish(),
            "sk-sp",
            "a prefix that never became the key is shown at the end"
        );
    }
}
