//! The HTTP layer every wire API shares ([`send`]): bounded retries with backoff that honour
//! `Retry-After`, the first-byte timeout, and failures that keep their status, headers and raw
//! body for classification. Reading the answer (its byte cap and idle timeout) is
//! [`super::wire`]'s.

use std::time::Duration;

use reqwest::StatusCode;
use reqwest::header::HeaderMap;
use tokio::time::Instant;

use crate::config::RetryPolicy;
use crate::platform::net::{describe_reqwest, read_capped};

/// A final non-success HTTP response, carried through async-openai as a boxed error.
#[derive(Debug, thiserror::Error)]
#[error("HTTP {status}")]
pub(super) struct HttpFailure {
    pub(crate) status: u16,
    pub(crate) body: Vec<u8>,
    pub(crate) attempts: u32,
    pub(crate) retry_after: Option<Duration>,
}

/// The server could not be reached (connect, TLS, or the request failed before a response).
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub(super) struct ConnectFailure {
    pub(crate) message: String,
    pub(crate) attempts: u32,
}

/// The server did not start answering in time.
#[derive(Debug, thiserror::Error)]
#[error("no response within {waited:?}")]
pub(super) struct FirstByteTimeout {
    pub(crate) waited: Duration,
}

/// A 200 answer that is JSON instead of an event stream (an error object, usually).
#[derive(Debug, thiserror::Error)]
#[error("a JSON body instead of an event stream")]
pub(super) struct NotAStream {
    pub(crate) body: Vec<u8>,
}

/// Why a request got no streaming answer.
#[derive(Debug)]
pub(super) enum Failure {
    /// A final non-success status.
    Http(HttpFailure),
    /// The server could not be reached.
    Connect(ConnectFailure),
    /// No answer in time.
    FirstByte(FirstByteTimeout),
    /// A JSON body instead of a stream.
    NotAStream(NotAStream),
    /// A web page instead of a stream: the base URL names a site, not its API.
    Html(HtmlPage),
}

/// A 200 answer that is an HTML page; its title, when it has one.
#[derive(Debug)]
pub(super) struct HtmlPage {
    pub(crate) title: Option<String>,
}

/// Sends `request` with `client`, again per `policy` while the server is busy or unreachable,
/// waiting at most `first_byte` for each answer's headers, and returns the response once it
/// is a stream (its body is capped as it is read: see [`super::wire`]).
pub(super) async fn send(
    client: &reqwest::Client,
    request: reqwest::Request,
    policy: RetryPolicy,
    first_byte: Duration,
) -> Result<reqwest::Response, Failure> {
    let response = send_with_retries(client, &request, policy, first_byte).await?;
    if is_json(&response) {
        let body = read_capped(response, MOST_ERROR_BODY).await;
        return Err(Failure::NotAStream(NotAStream { body }));
    }
    if content_type(&response).contains("html") {
        let body = read_capped(response, 64 * 1024).await;
        return Err(Failure::Html(HtmlPage {
            title: page_title(&String::from_utf8_lossy(&body)),
        }));
    }
    Ok(response)
}

/// A response's `Content-Type`, lowercase (empty when none).
fn content_type(response: &reqwest::Response) -> String {
    response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_ascii_lowercase()
}

/// The text of a page's `<title>`, trimmed and short.
fn page_title(page: &str) -> Option<String> {
    let lower = page.to_ascii_lowercase();
    let start = lower.find("<title")?;
    let open_end = start + lower[start..].find('>')? + 1;
    let end = open_end + lower[open_end..].find("</title")?;
    let title: String = page[open_end..end]
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    (!title.is_empty()).then(|| title.chars().take(80).collect())
}

/// Whether a response says its body is JSON.
fn is_json(response: &reqwest::Response) -> bool {
    content_type(response).contains("json")
}

/// Most of a model list that is read: a list of thousands of models is a few MiB, and a
/// hostile server must not fill tandem's memory before a key is even typed.
pub(crate) const MOST_LIST_BODY: usize = 16 << 20;

/// Most of an error or other non-stream body that is read: enough for any server's error
/// object or a page's title, and a bound when the body never ends.
pub(crate) const MOST_ERROR_BODY: usize = 1 << 20;

fn retryable(status: StatusCode) -> bool {
    status == StatusCode::TOO_MANY_REQUESTS || status.is_server_error()
}

/// `retry-after-ms` (OpenAI, Azure), or `retry-after` in seconds or as an HTTP date.
fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let text = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
    };
    let seconds = |v: &str| v.parse::<f64>().ok().filter(|v| v.is_finite() && *v >= 0.0);
    if let Some(ms) = text("retry-after-ms").and_then(seconds) {
        return Some(Duration::from_secs_f64(ms / 1000.0));
    }
    let value = text("retry-after")?;
    seconds(value).map(Duration::from_secs_f64).or_else(|| {
        let at = httpdate::parse_http_date(value).ok()?;
        Some(
            at.duration_since(std::time::SystemTime::now())
                .unwrap_or_default(),
        )
    })
}

/// How long to wait before try `attempt + 1`, or `None` when the policy says stop.
fn next_delay(
    policy: &RetryPolicy,
    attempt: u32,
    waited: Duration,
    server_says: Option<Duration>,
) -> Option<Duration> {
    if attempt >= policy.max_attempts {
        return None;
    }
    let backoff = policy
        .initial_delay
        .saturating_mul(2u32.saturating_pow(attempt.saturating_sub(1)));
    let delay = server_says.unwrap_or(backoff);
    (waited + delay <= policy.max_total).then_some(delay)
}

/// Sends `request` (a copy of it for each try) until it succeeds or `policy` says stop.
async fn send_with_retries(
    client: &reqwest::Client,
    request: &reqwest::Request,
    policy: RetryPolicy,
    first_byte: Duration,
) -> Result<reqwest::Response, Failure> {
    let mut waited = Duration::ZERO;
    let mut attempt = 0u32;
    loop {
        attempt += 1;
        let Some(request) = request.try_clone() else {
            return Err(Failure::Connect(ConnectFailure {
                message: "the request could not be sent again".into(),
                attempts: attempt,
            }));
        };
        let url = request.url().clone();
        let sent = tokio::time::timeout(first_byte, client.execute(request)).await;
        let Ok(sent) = sent else {
            // Not retried: a server this slow is busy or stuck, and a second try doubles its load.
            return Err(Failure::FirstByte(FirstByteTimeout { waited: first_byte }));
        };
        let (reason, server_says, failure) = match sent {
            Ok(response) if response.status().is_success() => return Ok(response),
            Ok(response) => {
                let status = response.status();
                let server_says = retry_after(response.headers());
                let body = read_capped(response, MOST_ERROR_BODY).await;
                // Asked again, such a server would answer the same.
                let final_answer = !retryable(status)
                    || super::error::tools_unsupported(&body)
                    || super::error::format_refused(status.as_u16(), &body);
                let failure = Failure::Http(HttpFailure {
                    status: status.as_u16(),
                    body,
                    attempts: attempt,
                    retry_after: server_says,
                });
                if final_answer {
                    return Err(failure);
                }
                (format!("HTTP {}", status.as_u16()), server_says, failure)
            }
            Err(error) => {
                let message = describe_reqwest(&error);
                let failure = Failure::Connect(ConnectFailure {
                    message: message.clone(),
                    attempts: attempt,
                });
                (message, None, failure)
            }
        };
        let Some(delay) = next_delay(&policy, attempt, waited, server_says) else {
            return Err(failure);
        };
        tracing::warn!(
            %url,
            attempt,
            max_attempts = policy.max_attempts,
            delay_ms = delay.as_millis() as u64,
            "model request failed ({reason}); trying again in {:.1} s (attempt {} of {})",
            delay.as_secs_f64(),
            attempt + 1,
            policy.max_attempts
        );
        let start = Instant::now();
        tokio::time::sleep(delay).await;
        waited += start.elapsed().max(delay);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy() -> RetryPolicy {
        RetryPolicy {
            max_attempts: 4,
            initial_delay: Duration::from_millis(500),
            max_total: Duration::from_secs(30),
            stream_retries: 5,
        }
    }

    #[test]
    fn backoff_doubles_until_attempts_run_out() {
        let p = policy();
        assert_eq!(
            next_delay(&p, 1, Duration::ZERO, None),
            Some(Duration::from_millis(500))
        );
        assert_eq!(
            next_delay(&p, 2, Duration::ZERO, None),
            Some(Duration::from_secs(1))
        );
        assert_eq!(
            next_delay(&p, 3, Duration::ZERO, None),
            Some(Duration::from_secs(2))
        );
        assert_eq!(next_delay(&p, 4, Duration::ZERO, None), None);
    }

    #[test]
    fn retry_after_wins_but_never_past_the_budget() {
        let p = policy();
        let server = Some(Duration::from_secs(3));
        assert_eq!(
            next_delay(&p, 1, Duration::ZERO, server),
            Some(Duration::from_secs(3))
        );
        assert_eq!(next_delay(&p, 1, Duration::from_secs(28), server), None);
        assert_eq!(
            next_delay(&p, 1, Duration::ZERO, Some(Duration::from_secs(60))),
            None
        );
    }

    #[test]
    fn retry_after_headers() {
        let mut h = HeaderMap::new();
        h.insert("retry-after", "2".parse().unwrap());
        assert_eq!(retry_after(&h), Some(Duration::from_secs(2)));
        h.insert("retry-after-ms", "150".parse().unwrap());
        assert_eq!(retry_after(&h), Some(Duration::from_millis(150)));
        let mut h = HeaderMap::new();
        h.insert(
            "retry-after",
            "Wed, 21 Oct 2015 07:28:00 GMT".parse().unwrap(),
        );
        // A date already past: try again at once.
        assert_eq!(retry_after(&h), Some(Duration::ZERO));
        let later = std::time::SystemTime::now() + Duration::from_secs(30);
        h.insert(
            "retry-after",
            httpdate::fmt_http_date(later).parse().unwrap(),
        );
        let wait = retry_after(&h).unwrap();
        assert!(wait > Duration::from_secs(28) && wait <= Duration::from_secs(30));
        h.insert("retry-after", "soon".parse().unwrap());
        assert_eq!(retry_after(&h), None);
    }

    #[test]
    fn a_page_title_is_read_short_and_plain() {
        let page = "<html><HEAD><Title lang=en>\n  Welcome   to\tnginx!\n</title></head>";
        assert_eq!(page_title(page).as_deref(), Some("Welcome to nginx!"));
        assert_eq!(page_title("<html><body>no title</body></html>"), None);
        assert_eq!(page_title("<title></title>"), None);
    }
}
