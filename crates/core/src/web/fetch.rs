//! Reading one web page for the model: GET with a timeout and a byte cap, redirects followed
//! by hand so each hop is checked again (scheme, an address of this machine or one that is
//! not globally reachable, a key in the URL), HTML turned into Markdown, JSON and plain text
//! as they are, anything else refused with its type.

use std::time::Duration;

use reqwest::Url;
use reqwest::header::{CONTENT_TYPE, LOCATION};

use super::guard;

/// Most redirects followed.
const MOST_HOPS: usize = 10;

/// How a fetch is bounded.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    /// The whole fetch, every hop and the body.
    pub(crate) timeout: Duration,
    /// Most bytes of the body read.
    pub(crate) max_bytes: usize,
    /// Whether this machine, its networks and addresses that are not globally reachable may
    /// be reached (`[web] allow_private`).
    pub(crate) allow_private: bool,
}

/// A page as the model reads it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Page {
    /// Where it was read from, after redirects.
    pub(crate) url: String,
    /// Its media type.
    pub(crate) media_type: String,
    /// Its text: Markdown for HTML.
    pub(crate) text: String,
    /// Whether the body was cut at the byte cap.
    pub(crate) cut: bool,
}

/// Why a page could not be read; the text is what the model is told.
#[derive(Debug, thiserror::Error)]
pub(crate) enum FetchError {
    /// Not an http(s) URL.
    #[error("`{0}` is not an http or https URL")]
    Url(String),
    /// The URL would carry one of the user's keys out.
    #[error("the URL holds one of the user's secrets; it is not sent")]
    Secret,
    /// An address that is this machine's or not globally reachable, without `allow_private`.
    #[error(
        "{0}: tandem does not fetch from the user's own machine or network, nor from any \
         address that is not globally reachable"
    )]
    Private(String),
    /// Too many redirects.
    #[error("more than {MOST_HOPS} redirects")]
    TooManyRedirects,
    /// A redirect to another host, which is the model's to fetch (and the user's to allow).
    #[error("it redirects to {0}, on another host; fetch that URL to follow it")]
    Elsewhere(String),
    /// A redirect without a usable `Location`.
    #[error("a redirect without a usable Location")]
    BadRedirect,
    /// The request failed.
    #[error("{0}")]
    Http(String),
    /// An error status.
    #[error("the server answered {0}")]
    Status(u16),
    /// A type that is not text.
    #[error("it is {0}, which the model cannot read as text")]
    Type(String),
    /// Longer than the timeout.
    #[error("it took longer than {0} s")]
    Timeout(u64),
}

/// Reads `url` within `limits`.
pub(crate) async fn fetch(url: &str, limits: Limits) -> Result<Page, FetchError> {
    let seconds = limits.timeout.as_secs();
    tokio::time::timeout(limits.timeout, read(url, limits))
        .await
        .unwrap_or(Err(FetchError::Timeout(seconds)))
}

async fn read(url: &str, limits: Limits) -> Result<Page, FetchError> {
    let client = client(limits)?;
    let mut at = checked(url, limits).await?;
    let mut hops = 0;
    let response = loop {
        let response = client
            .get(at.clone())
            .header(
                reqwest::header::ACCEPT,
                "text/html, text/markdown, text/plain, application/json;q=0.9, */*;q=0.5",
            )
            .send()
            .await
            .map_err(|e| FetchError::Http(crate::platform::net::describe_reqwest(&e)))?;
        if !response.status().is_redirection() {
            break response;
        }
        hops += 1;
        if hops > MOST_HOPS {
            return Err(FetchError::TooManyRedirects);
        }
        let next = response
            .headers()
            .get(LOCATION)
            .and_then(|l| l.to_str().ok())
            .and_then(|l| at.join(l).ok())
            .ok_or(FetchError::BadRedirect)?;
        let next = checked(next.as_str(), limits).await?;
        // The user allowed this host, not the one a redirect names: the model must ask for
        // that one itself (and the user is asked about it).
        if host_of(&next) != host_of(&at) {
            return Err(FetchError::Elsewhere(next.to_string()));
        }
        at = next;
    };
    if !response.status().is_success() {
        return Err(FetchError::Status(response.status().as_u16()));
    }
    let media_type = response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("text/plain")
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    let kind = Kind::of(&media_type).ok_or_else(|| FetchError::Type(media_type.clone()))?;
    let (bytes, cut) = body(response, limits.max_bytes).await;
    let raw = String::from_utf8_lossy(&bytes);
    let text = match kind {
        Kind::Html => {
            let raw = raw.into_owned();
            tokio::task::spawn_blocking(move || super::markdown::of_html(&raw))
                .await
                .map_err(|e| FetchError::Http(format!("converting the page failed: {e}")))?
        }
        Kind::Text => raw.into_owned(),
    };
    Ok(Page {
        url: at.to_string(),
        media_type,
        text,
        cut,
    })
}

/// What a media type is read as.
enum Kind {
    Html,
    Text,
}

impl Kind {
    fn of(media_type: &str) -> Option<Kind> {
        match media_type {
            "text/html" | "application/xhtml+xml" => Some(Kind::Html),
            t if t.starts_with("text/") => Some(Kind::Text),
            t if t == "application/json" || t.ends_with("+json") => Some(Kind::Text),
            "application/xml"
            | "application/javascript"
            | "application/x-yaml"
            | "application/yaml"
            | "application/toml" => Some(Kind::Text),
            _ => None,
        }
    }
}

/// The client: no redirects of its own (each hop is checked here), connections only to
/// addresses the guard lets through unless `allow_private`, proxies from the environment.
fn client(limits: Limits) -> Result<reqwest::Client, FetchError> {
    // reqwest is built without a default TLS provider; ring is ours.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let mut builder = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .connect_timeout(Duration::from_secs(10))
        .user_agent(concat!("tandem/", env!("CARGO_PKG_VERSION")));
    // Every name a connection resolves is checked, but for the proxies' own hosts (which may
    // well be on the user's network); through a proxy, the proxy resolves the page's name.
    if !limits.allow_private {
        builder = builder.dns_resolver(std::sync::Arc::new(guard::PublicOnly::new()));
    }
    builder
        .build()
        .map_err(|e| FetchError::Http(crate::platform::net::describe_reqwest(&e)))
}

/// A URL's host as permissions name it: lower case, without a trailing dot.
pub(crate) fn host_of(url: &Url) -> String {
    url.host_str()
        .unwrap_or("")
        .trim_end_matches('.')
        .to_ascii_lowercase()
}

/// `url` parsed, if it may be fetched: http(s), no key in it, not an address the guard
/// refuses.
async fn checked(url: &str, limits: Limits) -> Result<Url, FetchError> {
    let parsed = Url::parse(url.trim()).map_err(|_| FetchError::Url(url.to_string()))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(FetchError::Url(url.to_string()));
    }
    // Decoded as often as it takes (a key escaped twice is still a key), and compared
    // without case (a host is lower-cased on parsing).
    let mut decoded = parsed.as_str().to_string();
    for _ in 0..5 {
        let next = percent_decoded(&decoded);
        if next == decoded {
            break;
        }
        decoded = next;
    }
    if crate::secrets::holds_key_in_any_case(url) || crate::secrets::holds_key_in_any_case(&decoded)
    {
        return Err(FetchError::Secret);
    }
    let host = parsed
        .host_str()
        .ok_or_else(|| FetchError::Url(url.to_string()))?;
    if !limits.allow_private
        && let Some(why) = guard::refused(host).await
    {
        return Err(FetchError::Private(why));
    }
    Ok(parsed)
}

/// `text` with its `%XX` escapes decoded (lossily), so a key written escaped is seen too.
fn percent_decoded(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        match (bytes[i], bytes.get(i + 1), bytes.get(i + 2)) {
            (b'%', Some(&h), Some(&l)) if hex(h).is_some() && hex(l).is_some() => {
                out.push((hex(h).unwrap_or(0) * 16 + hex(l).unwrap_or(0)) as u8);
                i += 3;
            }
            (b, ..) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The body, at most `max` bytes of it, and whether there was more.
async fn body(mut response: reqwest::Response, max: usize) -> (Vec<u8>, bool) {
    let mut bytes = Vec::new();
    while let Ok(Some(piece)) = response.chunk().await {
        let room = max.saturating_sub(bytes.len());
        if piece.len() > room {
            bytes.extend_from_slice(&piece[..room]);
            return (bytes, true);
        }
        bytes.extend_from_slice(&piece);
    }
    (bytes, false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_are_decoded_so_an_escaped_key_is_seen() {
        assert_eq!(percent_decoded("a%2Fb%41%zz%4"), "a/bA%zz%4");
    }

    #[test]
    fn text_types_are_read_and_others_refused() {
        assert!(matches!(Kind::of("text/html"), Some(Kind::Html)));
        assert!(matches!(Kind::of("application/json"), Some(Kind::Text)));
        assert!(matches!(Kind::of("application/ld+json"), Some(Kind::Text)));
        assert!(matches!(Kind::of("text/plain"), Some(Kind::Text)));
        assert!(Kind::of("image/png").is_none());
        assert!(Kind::of("application/pdf").is_none());
        assert!(Kind::of("application/octet-stream").is_none());
    }
}
