//! What every HTTP caller of tandem's shares, below the model layer and the web tools alike:
//! a body read with a cap, and a reqwest error said in words that name the real problem.

/// The body, or as much of it as came before an error or `max_bytes`. Every body tandem reads
/// whole (a model list, an error, a JSON answer) passes here: a server that never stops
/// sending must not fill tandem's memory before its timeout ends the read.
pub async fn read_capped(mut response: reqwest::Response, max_bytes: usize) -> Vec<u8> {
    let mut bytes = Vec::new();
    while let Ok(Some(piece)) = response.chunk().await {
        let room = max_bytes.saturating_sub(bytes.len());
        bytes.extend_from_slice(&piece[..piece.len().min(room)]);
        if bytes.len() >= max_bytes {
            break;
        }
    }
    bytes
}

/// A reqwest error in words, with its underlying cause (which names the real problem): an
/// unknown host and a refused connection are said plainly.
pub fn describe_reqwest(error: &reqwest::Error) -> String {
    use std::error::Error as _;
    let mut causes = Vec::new();
    let mut source = error.source();
    while let Some(s) = source {
        causes.push(s.to_string());
        source = s.source();
    }
    let host = error
        .url()
        .and_then(|u| Some(format!("{}:{}", u.host_str()?, u.port_or_known_default()?)));
    let last = causes.last().cloned().unwrap_or_default();
    let all = causes.join(": ").to_lowercase();
    let host_name = host.as_deref().map_or(String::new(), |h| {
        format!(" `{}`", h.rsplit_once(':').map_or(h, |(name, _)| name))
    });
    if all.contains("dns error") || all.contains("failed to lookup address") {
        return format!("could not resolve host{host_name} ({last})");
    }
    if all.contains("connection refused") {
        let at = host.map_or(String::new(), |h| format!(" at {h}"));
        return format!("connection refused: nothing is listening{at}");
    }
    let mut text = if error.is_connect() {
        "connection failed".to_string()
    } else if error.is_timeout() {
        "timed out".to_string()
    } else {
        "request failed".to_string()
    };
    if !last.is_empty() {
        text.push_str(": ");
        text.push_str(&last);
    }
    text
}
