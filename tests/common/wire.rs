//! How the mock's replies go out on each API's wire. Scripts are written once, as
//! chat-completions chunks; a request to `…/messages` (Anthropic Messages) or `…/responses`
//! (OpenAI Responses) gets the same scripted stream translated, chunk by chunk, into that
//! API's SSE events ([`super::anthropic_wire`], [`super::responses_wire`]), and is refused
//! the way that API refuses a request that breaks its rules.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::http::StatusCode;
use axum::response::Response;
use futures::StreamExt;
use futures::future::BoxFuture;
use serde_json::Value;

use super::mock_model::{End, Piece, Recorded, Reply, text};
use super::{anthropic_wire, responses_wire};

/// The API a request speaks, by its path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Api {
    Chat,
    Anthropic,
    Responses,
}

impl Api {
    /// `…/chat/completions`, `…/messages` or `…/responses`; `None` for anything else.
    pub(crate) fn of(path: &str) -> Option<Api> {
        if path.ends_with("/chat/completions") {
            Some(Api::Chat)
        } else if path.ends_with("/messages") {
            Some(Api::Anthropic)
        } else if path.ends_with("/responses") {
            Some(Api::Responses)
        } else {
            None
        }
    }
}

/// How one reply's stream goes out.
pub(crate) trait Wire: Send {
    /// The stream's pieces as sent: `Data` chunks translated, the other pieces kept in place.
    fn translate(&mut self, pieces: Vec<Piece>) -> Vec<Piece>;
    /// What a clean end ([`End::Done`]) sends after the pieces.
    fn done(&self) -> Option<String> {
        None
    }
    /// The next event of an endless flood of `text` ([`End::Flood`]).
    fn flood(&mut self, text: &str) -> String;
}

/// Chat completions: the script as written, then `data: [DONE]`.
pub(crate) struct ChatWire;

impl Wire for ChatWire {
    fn translate(&mut self, pieces: Vec<Piece>) -> Vec<Piece> {
        pieces
    }
    fn done(&self) -> Option<String> {
        Some("data: [DONE]\n\n".into())
    }
    fn flood(&mut self, t: &str) -> String {
        format!("data: {}\n\n", text(t))
    }
}

/// What the mock remembers of the replies it served on the other APIs, to hold later
/// requests to those APIs' rules.
#[derive(Debug, Default)]
pub(crate) struct Wires {
    anthropic: Arc<Mutex<anthropic_wire::Issued>>,
    responses: Arc<Mutex<responses_wire::Issued>>,
}

impl Wires {
    /// The API's refusal of `request` (status, body), when it breaks one of its rules.
    pub(crate) fn check(&self, api: Api, request: &Recorded) -> Option<(u16, String)> {
        match api {
            Api::Chat => None,
            Api::Anthropic => anthropic_wire::check(request, &self.anthropic.lock().unwrap()),
            Api::Responses => responses_wire::check(request, &self.responses.lock().unwrap()),
        }
    }

    /// The wire for the reply to `request`, the `n`th request the mock received.
    pub(crate) fn wire(&self, api: Api, n: usize, request: &Recorded) -> Box<dyn Wire> {
        match api {
            Api::Chat => Box::new(ChatWire),
            Api::Anthropic => Box::new(anthropic_wire::Translator::new(
                n,
                &request.body,
                self.anthropic.clone(),
            )),
            Api::Responses => Box::new(responses_wire::Translator::new(
                n,
                &request.body,
                self.responses.clone(),
            )),
        }
    }
}

/// Translates `reply`'s stream (also behind a stall) for `wire`; other replies go as they are.
pub(crate) fn translate(reply: &mut Reply, wire: &mut dyn Wire) {
    match reply {
        Reply::Stall(_, then) => translate(then, wire),
        Reply::Stream { pieces, .. } => *pieces = wire.translate(std::mem::take(pieces)),
        _ => {}
    }
}

/// `FNV-1a-64` of `text` in 16 hex digits: how the mock signs thinking (`sig-…`) and
/// encrypts reasoning (`enc-…`), so tests can compute both.
pub(crate) fn fnv_hex(text: &str) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in text.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("{hash:016x}")
}

/// `event: TYPE\ndata: JSON\n\n`, TYPE being the JSON's own `type`.
pub(crate) fn sse(data: &Value) -> String {
    let kind = data["type"].as_str().unwrap_or_default();
    format!("event: {kind}\ndata: {data}\n\n")
}

/// The usage a script reports (in its last chunk carrying one): known before the stream
/// starts, as the Anthropic and Responses APIs report it early.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Usage {
    pub prompt: u64,
    pub completion: u64,
    pub cached: u64,
}

impl Usage {
    /// The usage of the last `Data` chunk in `pieces` that has one (zeros if none does).
    pub(crate) fn of(pieces: &[Piece]) -> Usage {
        let last = pieces
            .iter()
            .rev()
            .filter_map(|p| match p {
                Piece::Data(json) => serde_json::from_str::<Value>(json).ok(),
                _ => None,
            })
            .find(|c| c["usage"].is_object());
        let Some(chunk) = last else {
            return Usage::default();
        };
        let usage = &chunk["usage"];
        Usage {
            prompt: usage["prompt_tokens"].as_u64().unwrap_or(0),
            completion: usage["completion_tokens"].as_u64().unwrap_or(0),
            cached: usage["prompt_tokens_details"]["cached_tokens"]
                .as_u64()
                .unwrap_or(0),
        }
    }
}

/// What one chat-completions chunk says, in order.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Part {
    Reasoning(String),
    Text(String),
    /// A tool call fragment: the call's index, and id and name when this fragment has them.
    Call {
        index: u64,
        id: Option<String>,
        name: Option<String>,
        arguments: String,
    },
    Finish(String),
    /// An error: its message and, when the script names one, its `type` (Anthropic's
    /// `overloaded_error`…).
    Error(String, Option<String>),
}

/// The parts of `chunk`: reasoning, text, then call fragments, then the finish; or an error.
pub(crate) fn parts(chunk: &Value) -> Vec<Part> {
    if let Some(error) = chunk.get("error").filter(|e| !e.is_null()) {
        let message = error["message"].as_str().map(String::from);
        let kind = error["type"].as_str().map(String::from);
        return vec![Part::Error(
            message.unwrap_or_else(|| error.to_string()),
            kind,
        )];
    }
    let choice = &chunk["choices"][0];
    let delta = &choice["delta"];
    let mut out = Vec::new();
    let reasoning = delta["reasoning_content"]
        .as_str()
        .or(delta["reasoning"].as_str());
    if let Some(r) = reasoning.filter(|r| !r.is_empty()) {
        out.push(Part::Reasoning(r.to_string()));
    }
    if let Some(t) = delta["content"].as_str().filter(|t| !t.is_empty()) {
        out.push(Part::Text(t.to_string()));
    }
    for call in delta["tool_calls"].as_array().into_iter().flatten() {
        out.push(Part::Call {
            index: call["index"].as_u64().unwrap_or(0),
            id: call["id"].as_str().map(String::from),
            name: call["function"]["name"].as_str().map(String::from),
            arguments: call["function"]["arguments"]
                .as_str()
                .unwrap_or_default()
                .to_string(),
        });
    }
    if let Some(reason) = choice["finish_reason"].as_str() {
        out.push(Part::Finish(reason.to_string()));
    }
    out
}

/// Translates each `Data` piece with `chunk` (its events, joined into one piece), keeping the
/// other pieces; a `Data` piece that is not JSON goes out as the `data:` line it is.
pub(crate) fn each_chunk(
    pieces: Vec<Piece>,
    mut chunk: impl FnMut(&Value) -> String,
) -> Vec<Piece> {
    pieces
        .into_iter()
        .filter_map(|piece| match piece {
            Piece::Data(json) => match serde_json::from_str::<Value>(&json) {
                Ok(value) => Some(chunk(&value))
                    .filter(|s| !s.is_empty())
                    .map(Piece::Raw),
                Err(_) => Some(Piece::Raw(format!("data: {json}\n\n"))),
            },
            other => Some(other),
        })
        .collect()
}

/// Serves `reply` (500 when the script is exhausted), its stream going out through `wire`.
pub(crate) fn respond(reply: Option<Reply>, wire: Box<dyn Wire>) -> BoxFuture<'static, Response> {
    if let Some(Reply::Stall(pause, then)) = reply {
        return Box::pin(async move {
            tokio::time::sleep(pause).await;
            respond(Some(*then), wire).await
        });
    }
    let response = match reply {
        Some(Reply::Stall(..) | Reply::Echo { .. }) => unreachable!(),
        None => status_response(500, &[], r#"{"error":{"message":"mock script exhausted"}}"#),
        Some(Reply::Status {
            status,
            headers,
            body,
        }) => status_response(status, &headers, &body),
        Some(Reply::Stream { pieces, end }) => stream_response(pieces, end, wire),
    };
    Box::pin(async move { response })
}

fn stream_response(pieces: Vec<Piece>, end: End, wire: Box<dyn Wire>) -> Response {
    let mut items: Vec<Result<Piece, ()>> = pieces.into_iter().map(Ok).collect();
    match end {
        End::Done => items.extend(wire.done().map(|d| Ok(Piece::Raw(d)))),
        End::Drop => {
            // Let what was sent reach the client before the connection breaks.
            items.push(Ok(Piece::Delay(Duration::from_millis(50))));
            items.push(Err(()));
        }
        End::Hang => items.push(Ok(Piece::Delay(Duration::from_secs(3600)))),
        End::Flood(_) => {}
    }
    let flood = match end {
        End::Flood(t) => Some((wire, t)),
        _ => None,
    };
    let forever = futures::stream::iter(flood).flat_map(|(mut wire, t)| {
        futures::stream::repeat_with(move || Ok(Piece::Raw(wire.flood(t))))
    });
    let stream = futures::stream::iter(items)
        .chain(forever)
        .then(|item| async move {
            match item {
                Ok(Piece::Delay(d)) => {
                    tokio::time::sleep(d).await;
                    Ok(Bytes::new())
                }
                Ok(Piece::Gate(gate)) => {
                    gate.pass().await;
                    Ok(Bytes::new())
                }
                Ok(Piece::Data(json)) => Ok(Bytes::from(format!("data: {json}\n\n"))),
                Ok(Piece::Raw(raw)) => Ok(Bytes::from(raw)),
                Err(()) => Err(std::io::Error::other("mock drops the connection")),
            }
        });
    Response::builder()
        .status(200)
        .header("content-type", "text/event-stream")
        .body(Body::from_stream(stream))
        .unwrap()
}

/// A plain (non-streaming) response.
pub(crate) fn status_response(status: u16, headers: &[(String, String)], body: &str) -> Response {
    let mut builder = Response::builder().status(StatusCode::from_u16(status).unwrap());
    if !headers
        .iter()
        .any(|(name, _)| name.eq_ignore_ascii_case("content-type"))
    {
        builder = builder.header("content-type", "application/json");
    }
    for (name, value) in headers {
        builder = builder.header(name.as_str(), value.as_str());
    }
    builder.body(Body::from(body.to_string())).unwrap()
}
