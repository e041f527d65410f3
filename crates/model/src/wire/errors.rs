//! The errors every wire API reports in the same words: a missing key, a server that does
//! not answer or goes quiet, one that cannot be reached (or a process out of files), an
//! answer too large alone or together, a web page where a stream should be, a stream that
//! broke off or cannot be read.

use std::time::Duration;

use crate::{ErrorClass, ModelError};

/// The error for a hosted server whose key variable is unset.
pub fn missing_key_error(base_url: &str, key_env: &str) -> ModelError {
    ModelError::new(
        ErrorClass::MissingApiKey,
        format!(
            "no API key for the model server at {base_url}: run `{tandem} login` in a terminal, or set {key_env} in the environment tandem runs in",
            tandem = crate::config::invocation::command()
        ),
    )
}

/// The server did not start answering (`mid_answer` false) or went quiet mid-answer.
pub(crate) fn timeout_error(base_url: &str, mid_answer: bool, waited: Duration) -> ModelError {
    let message = if mid_answer {
        format!(
            "the model server at {base_url} sent nothing for {waited:?} in the middle of an answer (timeouts.idle_secs); tandem stopped waiting"
        )
    } else {
        format!(
            "the model server at {base_url} did not start answering within {waited:?} (timeouts.first_byte_secs); tandem stopped waiting"
        )
    };
    ModelError::new(ErrorClass::Timeout, message)
}

/// The server could not be reached.
pub(crate) fn connection_error(base_url: &str, detail: &str, attempts: u32) -> ModelError {
    let tries = if attempts > 1 {
        format!(" after {attempts} attempts")
    } else {
        String::new()
    };
    let message = if out_of_files(detail) {
        format!(
            "tandem could not open a connection to the model server at {base_url}{tries}: this process has as many files open as it may (its open-files limit, `ulimit -n`); raise the limit or close other sessions ({detail})"
        )
    } else {
        format!(
            "could not reach the model server at {base_url}{tries}: {detail}. Check that it is running at that address; `{tandem} doctor` checks the address and the server",
            tandem = crate::config::invocation::command()
        )
    };
    let mut e = ModelError::new(ErrorClass::Connection, message);
    e.attempts = attempts;
    e
}

/// Whether a connection failed because the process is at its open-files limit (EMFILE, or
/// Windows' WSAEMFILE), not because the server is away.
fn out_of_files(detail: &str) -> bool {
    detail.contains("Too many open files")
        || detail.contains("os error 24)")
        || detail.contains("os error 10024)")
}

/// The response passed `max_response_bytes`.
pub(crate) fn too_large(base_url: &str, max_bytes: u64) -> ModelError {
    ModelError::new(
        ErrorClass::ResponseTooLarge,
        format!(
            "the model server at {base_url} sent more than {max_bytes} bytes in one response (max_response_bytes); tandem stopped reading it"
        ),
    )
}

/// The responses read at once passed twice `max_bytes` together.
pub(crate) fn too_large_together(base_url: &str, max_bytes: u64) -> ModelError {
    ModelError::new(
        ErrorClass::ResponseTooLarge,
        format!(
            "the answers tandem is reading at once passed {} bytes together (twice max_response_bytes); tandem stopped reading this one from the model server at {base_url}",
            max_bytes.saturating_mul(2)
        ),
    )
}

/// A web page where a stream should be: the base URL names a site, not its API.
pub(crate) fn html_page(base_url: &str, title: Option<&str>) -> ModelError {
    let titled = title.map(|t| format!(" (\"{t}\")")).unwrap_or_default();
    ModelError::new(
        ErrorClass::MalformedResponse,
        format!(
            "the model server at {base_url} answered with a web page{titled} instead of a stream: the base URL likely points at a website rather than its API (OpenAI-compatible APIs usually end in /v1)"
        ),
    )
}

/// The stream broke off (a reset, bad bytes) before the answer was complete.
pub(crate) fn broken_off(base_url: &str, detail: &str) -> ModelError {
    ModelError::new(
        ErrorClass::StreamInterrupted,
        format!(
            "the model server at {base_url} broke off the stream before the answer was complete: {detail}"
        ),
    )
}

/// An event whose JSON tandem cannot read.
pub(crate) fn unreadable(base_url: &str, error: &serde_json::Error, data: &str) -> ModelError {
    let mut shown: String = data.chars().take(200).collect();
    if shown.len() < data.len() {
        shown.push('…');
    }
    ModelError::new(
        ErrorClass::MalformedResponse,
        format!(
            "the model server at {base_url} sent an event tandem could not parse ({error}): {shown}"
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_open_files_limit_is_told_apart_from_an_unreachable_server() {
        let full = connection_error(
            "http://s/v1",
            "error sending request: Too many open files (os error 24)",
            1,
        );
        assert!(
            full.message.contains("open-files limit"),
            "{}",
            full.message
        );
        assert!(
            !full.message.contains("could not reach"),
            "{}",
            full.message
        );
        let away = connection_error("http://s/v1", "Connection refused (os error 111)", 3);
        assert!(
            away.message
                .starts_with("could not reach the model server at http://s/v1 after 3 attempts"),
            "{}",
            away.message
        );
    }
}
