//! The old HTTP+SSE MCP transport (protocol 2024-11-05), for servers that speak only it: rmcp
//! no longer has a client for it. A GET opens an event stream whose first `endpoint` event
//! names where to POST the client's messages; the server's own messages (answers, requests,
//! notifications) arrive as `message` events on that stream. When the stream ends the
//! transport ends: rmcp reports the server gone, and the hub connects again.
//!
//! The endpoint must be on the stream's origin (scheme, host and port): a server cannot make
//! tandem send the configured headers (a key) anywhere else.

use std::pin::Pin;

use futures::{Sink, Stream, StreamExt};
use reqwest::header::{ACCEPT, HeaderMap, HeaderValue};
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};

/// Why the stream could not be opened, or a message not delivered.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SseError {
    /// The URL is not one.
    #[error("`{0}` is not a URL")]
    Url(String),
    /// The request failed.
    #[error("{0}")]
    Http(#[from] reqwest::Error),
    /// The server answered with an error status.
    #[error("the server answered {0}")]
    Status(reqwest::StatusCode),
    /// The stream ended, or broke, before naming its endpoint.
    #[error("the event stream ended before it named the endpoint to post to")]
    NoEndpoint,
    /// The endpoint named is on another origin.
    #[error("the server named an endpoint on another origin ({0}); refused")]
    OtherOrigin(String),
}

/// Messages to the server (each POSTed to the endpoint).
pub(crate) type Outgoing = Pin<Box<dyn Sink<ClientJsonRpcMessage, Error = SseError> + Send>>;
/// Messages from the server, until the stream ends.
pub(crate) type Incoming = Pin<Box<dyn Stream<Item = ServerJsonRpcMessage> + Send>>;

/// Opens the event stream at `url` with `headers`, waits for its endpoint, and returns the
/// two halves of the transport.
pub(crate) async fn open(url: &str, headers: HeaderMap) -> Result<(Outgoing, Incoming), SseError> {
    let base = reqwest::Url::parse(url).map_err(|_| SseError::Url(url.to_string()))?;
    // No redirects: one could carry the headers to another origin.
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()?;
    let response = http
        .get(base.clone())
        .headers(headers.clone())
        .header(ACCEPT, HeaderValue::from_static("text/event-stream"))
        .send()
        .await?;
    if !response.status().is_success() {
        return Err(SseError::Status(response.status()));
    }
    let mut events = sse_stream::SseStream::from_bytes_stream(response.bytes_stream());
    let endpoint = loop {
        match events.next().await {
            Some(Ok(event)) if event.event.as_deref() == Some("endpoint") => {
                break endpoint_of(&base, event.data.as_deref().unwrap_or(""))?;
            }
            Some(Ok(_)) => continue,
            Some(Err(_)) | None => return Err(SseError::NoEndpoint),
        }
    };
    let incoming = events.filter_map(|event| async move {
        let event = match event {
            Ok(event) => event,
            Err(e) => {
                tracing::warn!("the MCP server's event stream broke: {e}");
                return None;
            }
        };
        if !matches!(event.event.as_deref(), None | Some("message")) {
            return None;
        }
        let data = event.data?;
        match serde_json::from_str::<ServerJsonRpcMessage>(&data) {
            Ok(message) => Some(message),
            Err(e) => {
                tracing::warn!("the MCP server sent a message that is not JSON-RPC: {e}");
                None
            }
        }
    });
    let outgoing = futures::sink::unfold(
        (http, endpoint, headers),
        |(http, endpoint, headers), message: ClientJsonRpcMessage| async move {
            let response = http
                .post(endpoint.clone())
                .headers(headers.clone())
                .json(&message)
                .send()
                .await?;
            if !response.status().is_success() {
                return Err(SseError::Status(response.status()));
            }
            Ok((http, endpoint, headers))
        },
    );
    Ok((Box::pin(outgoing), Box::pin(incoming)))
}

/// The endpoint `data` names, resolved against the stream's URL, if it is on the same origin.
fn endpoint_of(base: &reqwest::Url, data: &str) -> Result<reqwest::Url, SseError> {
    let endpoint = base
        .join(data.trim())
        .map_err(|_| SseError::Url(data.trim().to_string()))?;
    if endpoint.origin() != base.origin() {
        return Err(SseError::OtherOrigin(
            endpoint.origin().ascii_serialization(),
        ));
    }
    Ok(endpoint)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_endpoint_is_resolved_on_the_stream_origin_only() {
        let base = reqwest::Url::parse("http://127.0.0.1:8000/sse").unwrap();
        let same = endpoint_of(&base, "/messages/?session_id=ab12\n").unwrap();
        assert_eq!(
            same.as_str(),
            "http://127.0.0.1:8000/messages/?session_id=ab12"
        );
        let relative = endpoint_of(&base, "messages?x=1").unwrap();
        assert_eq!(relative.as_str(), "http://127.0.0.1:8000/messages?x=1");
        for elsewhere in [
            "http://evil.example/collect",
            "//evil.example/collect",
            "https://127.0.0.1:8000/messages",
            "http://127.0.0.1:8001/messages",
        ] {
            assert!(
                matches!(endpoint_of(&base, elsewhere), Err(SseError::OtherOrigin(_))),
                "{elsewhere}"
            );
        }
    }
}
