//! The API key tandem holds: kept out of everything tandem writes (logs, stdout, transcripts,
//! `tandem exec` output) and out of the environment of the processes it starts.
//!
//! The key is registered once at start-up ([`protect`]); [`redact`] replaces it, and any
//! `Bearer` token, with `[redacted]`. A stream of pieces (a model's answer, its reasoning)
//! goes through a [`StreamRedactor`], which holds back the end of what came so far while it
//! could be the start of the key, so a key split across two pieces is caught too.
//!
//! What is held sits in a process-wide static on purpose: the log writer
//! ([`RedactingWriter`]) runs inside tracing's global subscriber, which `main` installs
//! before the configuration (and so the key) is read and which every thread reaches, so
//! there is no owner to hand the key to. State that has an owner (MCP child processes, what
//! `tandem exec` shows) lives in that owner instead.

use parking_lot::RwLock;
use std::borrow::Cow;

/// What replaces a secret.
pub const REDACTED: &str = "[redacted]";

/// Values shorter than this are not treated as secrets (they would match ordinary text).
const MIN_SECRET_LEN: usize = 8;

#[derive(Default)]
struct Held {
    /// Secret values to redact.
    values: Vec<String>,
    /// Environment variables removed from child processes.
    vars: Vec<String>,
}

static HELD: RwLock<Held> = RwLock::new(Held {
    values: Vec::new(),
    vars: Vec::new(),
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
    let h = held();
    let mut out = Cow::Borrowed(text);
    for secret in &h.values {
        if out.contains(secret.as_str()) {
            out = Cow::Owned(out.replace(secret.as_str(), REDACTED));
        }
    }
    drop(h);
    match redact_bearer(&out) {
        Some(clean) => Cow::Owned(clean),
        None => out,
    }
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
pub const MAX_LOG_LINE: usize = 4096;

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
