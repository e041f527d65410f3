//! A scripted OpenAI-compatible chat-completions server on loopback. Each request is answered
//! by the next scripted [`Reply`] (SSE chunks with optional delays, a stream that breaks off,
//! or an HTTP error with headers), and every request is recorded for assertions. Requests to
//! the Anthropic Messages API (`…/messages`) and the OpenAI Responses API (`…/responses`)
//! take replies from the same script, translated to their wire ([`super::wire`]).

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Bytes;
use axum::http::HeaderMap;
use axum::response::Response;
use futures::future::BoxFuture;
use serde_json::{Value, json};

use super::acp_client::WAIT;
use super::wire::{self, Api};
use super::{anthropic_wire, responses_wire};

/// One piece of an SSE body.
#[derive(Clone, Debug)]
pub(crate) enum Piece {
    /// A `data: …` event carrying this JSON text.
    Data(String),
    /// Raw bytes, for malformed streams.
    Raw(String),
    /// A wait until the test opens this gate.
    Gate(super::gate::Gate),
    /// A pause.
    Delay(Duration),
}

/// How an SSE body ends.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum End {
    /// `data: [DONE]` and a clean close.
    Done,
    /// The connection breaks (the body errors) without `[DONE]`.
    Drop,
    /// The stream stays open and sends nothing more, ever.
    Hang,
    /// This text chunk again and again, as fast as the client reads, forever.
    Flood(&'static str),
}

/// One scripted answer.
#[derive(Clone, Debug)]
pub(crate) enum Reply {
    /// A 200 SSE stream.
    Stream { pieces: Vec<Piece>, end: End },
    /// No response at all (not even headers) for this long, then this reply.
    Stall(Duration, Box<Reply>),
    /// The request's last user message streamed back in this many pieces, `pause` apart:
    /// the same script item serves concurrent sessions, each getting its own words back.
    Echo { pieces: usize, pause: Duration },
    /// A non-streaming response.
    Status {
        status: u16,
        headers: Vec<(String, String)>,
        body: String,
    },
}

/// A request as the mock received it.
#[derive(Clone, Debug)]
pub(crate) struct Recorded {
    pub path: String,
    pub headers: HeaderMap,
    pub body: Value,
}

impl Recorded {
    /// The `Authorization` header.
    pub(crate) fn authorization(&self) -> Option<String> {
        self.headers
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .map(String::from)
    }
    /// The system prompt text (Anthropic: `system`; Responses: `instructions`).
    pub(crate) fn system_prompt(&self) -> String {
        match Api::of(&self.path) {
            Some(Api::Anthropic) => return anthropic_wire::system_prompt(&self.body),
            Some(Api::Responses) => return responses_wire::system_prompt(&self.body),
            _ => {}
        }
        self.body["messages"][0]["content"]
            .as_str()
            .unwrap_or("")
            .to_string()
    }
    /// The last message's content as text (string content, or the text parts joined); on
    /// the Anthropic and Responses APIs, the last user message's (see their `last_user_text`).
    pub(crate) fn last_user_text(&self) -> String {
        match Api::of(&self.path) {
            Some(Api::Anthropic) => return anthropic_wire::last_user_text(&self.body),
            Some(Api::Responses) => return responses_wire::last_user_text(&self.body),
            _ => {}
        }
        let messages = self.body["messages"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let last = messages.last().cloned().unwrap_or(Value::Null);
        content_text(&last["content"])
    }
}

/// The texts of a model request's user messages.
pub(crate) fn user_texts(body: &Value) -> Vec<String> {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| content_text(&m["content"]))
        .collect()
}

/// A message content (string or parts) as text.
pub(crate) fn content_text(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

// ---- chunk builders -------------------------------------------------------------------

/// `{"choices":[{"delta": …}]}`
pub(crate) fn delta(delta: Value) -> Value {
    json!({"id": "chatcmpl-mock", "object": "chat.completion.chunk", "created": 0, "model": "mock",
           "choices": [{"index": 0, "delta": delta, "finish_reason": null}]})
}
/// A text piece.
pub(crate) fn text(t: &str) -> Value {
    delta(json!({"content": t}))
}
/// Reasoning as DeepSeek/vLLM send it.
pub(crate) fn reasoning_content(t: &str) -> Value {
    delta(json!({"reasoning_content": t}))
}
/// Reasoning as Ollama/OpenRouter send it.
pub(crate) fn reasoning(t: &str) -> Value {
    delta(json!({"reasoning": t}))
}
/// The final content chunk.
pub(crate) fn finish(reason: &str) -> Value {
    json!({"id": "chatcmpl-mock", "object": "chat.completion.chunk", "created": 0, "model": "mock",
           "choices": [{"index": 0, "delta": {}, "finish_reason": reason}]})
}
/// The usage chunk sent when `stream_options.include_usage` is set.
pub(crate) fn usage(prompt: u64, completion: u64) -> Value {
    json!({"id": "chatcmpl-mock", "object": "chat.completion.chunk", "created": 0, "model": "mock",
           "choices": [], "usage": {"prompt_tokens": prompt, "completion_tokens": completion,
                                    "total_tokens": prompt + completion}})
}

/// The chunks llama.cpp's llama-server sends (seen against the real server in
/// `real_model.rs`): a role chunk whose content is `null`, the model's file path as `model`,
/// tool-call arguments one token per delta after a first delta with id and name, and a last
/// chunk with usage, `prompt_tokens_details` and llama.cpp's own `timings`.
pub(crate) mod llamacpp {
    use serde_json::{Value, json};

    fn chunk(choices: Value) -> Value {
        json!({"choices": choices, "created": 1_795_256_391, "id": "chatcmpl-llama",
               "model": "/models/SmolLM2-135M-Instruct.Q4_1.gguf",
               "system_fingerprint": "b0-unknown", "object": "chat.completion.chunk"})
    }
    /// `{"role": "assistant", "content": null}`
    pub(crate) fn role() -> Value {
        chunk(json!([{"finish_reason": null, "index": 0,
                      "delta": {"role": "assistant", "content": null}}]))
    }
    /// A text token.
    pub(crate) fn text(t: &str) -> Value {
        chunk(json!([{"finish_reason": null, "index": 0, "delta": {"content": t}}]))
    }
    /// A tool call: id and name with the first argument token, then a token per delta.
    pub(crate) fn tool_call(id: &str, name: &str, arguments: &str) -> Vec<Value> {
        let mut tokens = arguments.chars().map(String::from);
        let first = tokens.next().unwrap_or_default();
        let mut out = vec![chunk(
            json!([{"finish_reason": null, "index": 0, "delta": {"tool_calls": [
            {"index": 0, "id": id, "type": "function", "function": {"name": name, "arguments": first}}]}}]),
        )];
        out.extend(tokens.map(|t| {
            chunk(
                json!([{"finish_reason": null, "index": 0, "delta": {"tool_calls": [
                {"index": 0, "function": {"arguments": t}}]}}]),
            )
        }));
        out
    }
    /// The finish chunk.
    pub(crate) fn finish(reason: &str) -> Value {
        chunk(json!([{"finish_reason": reason, "index": 0, "delta": {}}]))
    }
    /// The last chunk: usage with cached tokens, and `timings`.
    pub(crate) fn usage(prompt: u64, completion: u64, cached: u64) -> Value {
        let mut c = chunk(json!([]));
        c["usage"] = json!({"completion_tokens": completion, "prompt_tokens": prompt,
                            "total_tokens": prompt + completion,
                            "prompt_tokens_details": {"cached_tokens": cached}});
        c["timings"] = json!({"cache_n": cached, "prompt_n": prompt - cached, "prompt_ms": 677.4,
                              "prompt_per_token_ms": 2.81, "prompt_per_second": 355.7,
                              "predicted_n": completion, "predicted_ms": 311.6,
                              "predicted_per_token_ms": 9.16, "predicted_per_second": 109.1});
        c
    }
}

/// A whole tool call in one delta.
pub(crate) fn tool_call(index: u32, id: &str, name: &str, arguments: &str) -> Value {
    delta(
        json!({"tool_calls": [{"index": index, "id": id, "type": "function",
                                  "function": {"name": name, "arguments": arguments}}]}),
    )
}

impl Reply {
    /// A response that calls these tools: (id, name, JSON arguments).
    pub(crate) fn tools(calls: &[(&str, &str, Value)]) -> Reply {
        let mut chunks: Vec<Value> = calls
            .iter()
            .enumerate()
            .map(|(i, (id, name, args))| tool_call(i as u32, id, name, &args.to_string()))
            .collect();
        chunks.push(finish("tool_calls"));
        chunks.push(usage(200, 20));
        Reply::chunks(chunks)
    }
    /// A stream of these chunks, then `[DONE]`.
    pub(crate) fn chunks(chunks: Vec<Value>) -> Reply {
        Reply::Stream {
            pieces: chunks
                .into_iter()
                .map(|c| Piece::Data(c.to_string()))
                .collect(),
            end: End::Done,
        }
    }
    /// A complete answer: role chunk, these text pieces, `stop`, usage.
    pub(crate) fn text(pieces: &[&str]) -> Reply {
        let mut chunks = vec![delta(json!({"role": "assistant", "content": ""}))];
        chunks.extend(pieces.iter().map(|p| text(p)));
        chunks.push(finish("stop"));
        chunks.push(usage(100, pieces.len() as u64));
        Reply::chunks(chunks)
    }
    /// An HTTP error.
    pub(crate) fn status(status: u16, body: &str) -> Reply {
        Reply::Status {
            status,
            headers: Vec::new(),
            body: body.to_string(),
        }
    }
    /// Adds a header to an HTTP error.
    pub(crate) fn header(mut self, name: &str, value: &str) -> Reply {
        if let Reply::Status { headers, .. } = &mut self {
            headers.push((name.to_string(), value.to_string()));
        }
        self
    }
    /// Puts `pause` before every piece of a stream.
    pub(crate) fn slow(mut self, pause: Duration) -> Reply {
        if let Reply::Stream { pieces, .. } = &mut self {
            *pieces = pieces
                .drain(..)
                .flat_map(|p| [Piece::Delay(pause), p])
                .collect();
        }
        self
    }
    /// Breaks the connection instead of ending the stream cleanly.
    pub(crate) fn dropped(mut self) -> Reply {
        if let Reply::Stream { end, .. } = &mut self {
            *end = End::Drop;
        }
        self
    }
}

struct State {
    script: Mutex<VecDeque<Reply>>,
    requests: Mutex<Vec<Recorded>>,
    /// Woken whenever a request is recorded, for [`MockModel::wait_until`].
    arrived: tokio::sync::Notify,
    /// What the server says about itself (`/v1/models`, `/props`, `/api/show`…), by path:
    /// such requests neither take a scripted reply nor count as requests.
    info: Mutex<std::collections::HashMap<String, (u16, String)>>,
    /// Every request for such a path, in order (method and path).
    asked: Mutex<Vec<String>>,
    /// The provider whose rules on returned state the mock enforces, if any.
    contract: Mutex<Option<super::contract::Contract>>,
    /// The provider state each scripted answer sent, by call id.
    issued: Mutex<super::contract::Issued>,
    /// What the Anthropic and Responses replies sent, for those APIs' rules.
    wires: wire::Wires,
}

/// The running mock server.
pub(crate) struct MockModel {
    /// `http://127.0.0.1:PORT/v1`
    pub base_url: String,
    state: Arc<State>,
}

impl MockModel {
    /// Starts a server that answers with `script`, in order.
    pub(crate) async fn start(script: Vec<Reply>) -> MockModel {
        let state = Arc::new(State {
            script: Mutex::new(script.into()),
            requests: Mutex::new(Vec::new()),
            arrived: tokio::sync::Notify::new(),
            info: Mutex::new(std::collections::HashMap::new()),
            asked: Mutex::new(Vec::new()),
            contract: Mutex::new(None),
            issued: Mutex::new(Default::default()),
            wires: Default::default(),
        });
        let app_state = state.clone();
        let app = axum::Router::new()
            .fallback(
                move |uri: axum::http::Uri, headers: HeaderMap, body: Bytes| {
                    let state = app_state.clone();
                    answer(state, uri.path().to_string(), headers, body)
                },
            )
            .layer(axum::extract::DefaultBodyLimit::disable());
        let base_url = serve_local(app).await;
        MockModel { base_url, state }
    }

    /// Every request received so far.
    pub(crate) fn requests(&self) -> Vec<Recorded> {
        self.state.requests.lock().unwrap().clone()
    }

    /// Waits until at least `n` requests have arrived (their replies may still be going out:
    /// a stalled or held reply is then what the agent is waiting on); fails the test after
    /// [`WAIT`].
    pub(crate) async fn wait_for_requests(&self, n: usize) -> Vec<Recorded> {
        self.wait_until(&format!("{n} requests"), |requests| requests.len() >= n)
            .await
    }

    /// Waits until the requests received so far satisfy `done`, and returns them; fails the
    /// test, naming `what` was awaited, after [`WAIT`].
    pub(crate) async fn wait_until(
        &self,
        what: &str,
        done: impl Fn(&[Recorded]) -> bool,
    ) -> Vec<Recorded> {
        let deadline = tokio::time::Instant::now() + WAIT;
        loop {
            // Registered before the check, so a request recorded in between still wakes us.
            let arrived = self.state.arrived.notified();
            tokio::pin!(arrived);
            arrived.as_mut().enable();
            let requests = self.requests();
            if done(&requests) {
                return requests;
            }
            if tokio::time::timeout_at(deadline, arrived).await.is_err() {
                panic!(
                    "the mock model never saw {what}; it got {} requests",
                    self.requests().len()
                );
            }
        }
    }

    /// Answers `path` (e.g. `/v1/models`, `/props`) with `status` and `body` from now on;
    /// other paths than the three APIs' (chat completions, messages, responses) answer 404.
    pub(crate) fn serve_info(&self, path: &str, status: u16, body: Value) {
        self.state
            .info
            .lock()
            .unwrap()
            .insert(path.to_string(), (status, body.to_string()));
    }

    /// Enforces `contract`'s rules on state sent back from now on: a request that breaks one
    /// is answered with the provider's 400 and takes no scripted reply.
    pub(crate) fn enforce(&self, contract: super::contract::Contract) {
        *self.state.contract.lock().unwrap() = Some(contract);
    }

    /// The paths asked that are not a model request (`/v1/models`, `/props`…), in order.
    pub(crate) fn asked(&self) -> Vec<String> {
        self.state.asked.lock().unwrap().clone()
    }

    /// Adds replies to the end of the script.
    pub(crate) fn push(&self, reply: Reply) {
        self.state.script.lock().unwrap().push_back(reply);
    }
}

fn answer(
    state: Arc<State>,
    path: String,
    headers: HeaderMap,
    body: Bytes,
) -> BoxFuture<'static, Response> {
    let Some(api) = Api::of(&path) else {
        state.asked.lock().unwrap().push(path.clone());
        let info = state.info.lock().unwrap().get(&path).cloned();
        let (status, body) = info.unwrap_or((404, r#"{"error":"not found"}"#.to_string()));
        let response = wire::status_response(status, &[], &body);
        return Box::pin(async move { response });
    };
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let recorded = Recorded {
        path,
        headers,
        body,
    };
    let refused = super::images::check(api, &recorded.body).or_else(|| match api {
        Api::Chat => {
            let contract = *state.contract.lock().unwrap();
            contract.and_then(|c| state.issued.lock().unwrap().check(c, &recorded.body))
        }
        _ => state.wires.check(api, &recorded),
    });
    let reply = match refused {
        Some((status, body)) => Some(Reply::Status {
            status,
            headers: Vec::new(),
            body,
        }),
        None => state.script.lock().unwrap().pop_front(),
    };
    if let (Api::Chat, Some(reply)) = (api, &reply) {
        let model = recorded.body["model"].as_str().unwrap_or_default();
        state.issued.lock().unwrap().served(reply, model);
    }
    let mut reply = match reply {
        Some(Reply::Echo { pieces, pause }) => {
            Some(echo(&recorded.last_user_text(), pieces, pause))
        }
        other => other,
    };
    let wire = {
        // Numbered (`msg_mock_N`…) by the request's place among all the mock received.
        let mut requests = state.requests.lock().unwrap();
        let mut wire = state.wires.wire(api, requests.len() + 1, &recorded);
        if let Some(reply) = &mut reply {
            wire::translate(reply, wire.as_mut());
        }
        requests.push(recorded);
        wire
    };
    state.arrived.notify_waiters();
    wire::respond(reply, wire)
}

/// `text` back as an answer in `pieces` parts.
fn echo(text: &str, pieces: usize, pause: Duration) -> Reply {
    let chars: Vec<char> = text.chars().collect();
    let size = chars.len().div_ceil(pieces.max(1)).max(1);
    let parts: Vec<String> = chars.chunks(size).map(|c| c.iter().collect()).collect();
    let refs: Vec<&str> = parts.iter().map(String::as_str).collect();
    Reply::text(&refs).slow(pause)
}

/// Serves `app` on a free loopback port in the background; its OpenAI-style base URL.
pub(crate) async fn serve_local(app: axum::Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        axum::serve(listener, app).await.unwrap();
    });
    format!("http://127.0.0.1:{port}/v1")
}
