//! What hosted chat-completions providers demand back, enforced the way they enforce it: the
//! mock remembers the provider state each scripted answer carried and answers a later request
//! that drops or changes it with HTTP 400 and the provider's own message.
//!
//! - DeepSeek (thinking mode): an assistant message with tool calls must carry its
//!   `reasoning_content`.
//! - Gemini (OpenAI-compatible endpoint): a tool call must carry its
//!   `extra_content.google.thought_signature`, and the first call of every answer in the
//!   current turn (after the last user message) must carry one, whoever wrote it.
//! - OpenRouter (reasoning models with tools): `reasoning_details` come back unchanged.
//! - DeepSeek and Kimi (thinking modes): every assistant message with calls carries a
//!   `reasoning_content` field, whoever wrote it (another model's reasoning cannot be sent,
//!   so an empty one stands in); Kimi refuses an assistant message whose content is `""`.
//! - Mistral: every call id, and every result's `tool_call_id`, is nine letters and digits.
//! - All of them: each `tool` message answers a call of the assistant message before it.

use std::collections::HashMap;

use serde_json::{Value, json};

use super::mock_model::{Piece, Reply, delta, finish, usage};

/// Which provider's rules the mock applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Contract {
    DeepSeek,
    Gemini,
    OpenRouter,
    Kimi,
    Mistral,
}

/// What one answer sent with its calls.
#[derive(Clone, Debug, Default)]
struct Sent {
    reasoning_content: String,
    details: Vec<Value>,
    extra: Option<Value>,
    /// Whether this is the first call of its answer (the one the message is found by).
    first: bool,
    /// The model the answer was served for (empty: any); its state is that model's only.
    model: String,
}

/// The state each call id went out with.
#[derive(Debug, Default)]
pub(crate) struct Issued {
    by_call: HashMap<String, Sent>,
}

impl Issued {
    /// Notes what `reply` sends, before it is served.
    pub(crate) fn note(&mut self, reply: &Reply) {
        self.served(reply, "");
    }

    /// Notes what `reply` sends to a request for `model`, before it is served.
    pub(crate) fn served(&mut self, reply: &Reply, model: &str) {
        let Reply::Stream { pieces, .. } = reply else {
            return;
        };
        let mut reasoning = String::new();
        let mut details: Vec<Value> = Vec::new();
        let mut calls: Vec<(u64, String, Option<Value>)> = Vec::new();
        for piece in pieces {
            let Piece::Data(text) = piece else { continue };
            let Ok(chunk) = serde_json::from_str::<Value>(text) else {
                continue;
            };
            let d = &chunk["choices"][0]["delta"];
            if let Some(r) = d["reasoning_content"].as_str() {
                reasoning.push_str(r);
            }
            for piece in d["reasoning_details"].as_array().into_iter().flatten() {
                merge(&mut details, piece);
            }
            for call in d["tool_calls"].as_array().into_iter().flatten() {
                let index = call["index"].as_u64().unwrap_or(0);
                match calls.iter_mut().find(|(i, ..)| *i == index) {
                    Some(existing) => {
                        if !call["extra_content"].is_null() {
                            existing.2 = Some(call["extra_content"].clone());
                        }
                    }
                    None => calls.push((
                        index,
                        call["id"].as_str().unwrap_or_default().to_string(),
                        Some(call["extra_content"].clone()).filter(|e| !e.is_null()),
                    )),
                }
            }
        }
        for (n, (_, id, extra)) in calls.into_iter().enumerate() {
            let sent = Sent {
                reasoning_content: reasoning.clone(),
                details: details.clone(),
                extra,
                first: n == 0,
                model: model.to_string(),
            };
            self.by_call.insert(id, sent);
        }
    }

    /// The provider's refusal of `body`, when it breaks `contract`'s rule.
    pub(crate) fn check(&self, contract: Contract, body: &Value) -> Option<(u16, String)> {
        let messages = body["messages"].as_array()?;
        self.own_state(contract, body)
            .or_else(|| shape(contract, messages))
    }

    /// The refusal of a history that changes or drops the state a served answer carried.
    fn own_state(&self, contract: Contract, body: &Value) -> Option<(u16, String)> {
        let messages = body["messages"].as_array()?;
        let asked = body["model"].as_str().unwrap_or_default();
        for message in messages.iter().filter(|m| m["role"] == "assistant") {
            for (position, call) in message["tool_calls"]
                .as_array()
                .into_iter()
                .flatten()
                .enumerate()
            {
                let id = call["id"].as_str().unwrap_or_default();
                // Another model's state is not this one's to check.
                let Some(sent) = self
                    .by_call
                    .get(id)
                    .filter(|s| s.model.is_empty() || s.model == asked)
                else {
                    continue;
                };
                let broken = match contract {
                    Contract::DeepSeek => {
                        sent.first
                            && message["reasoning_content"].as_str()
                                != Some(sent.reasoning_content.as_str())
                    }
                    Contract::OpenRouter => {
                        sent.first
                            && !sent.details.is_empty()
                            && message["reasoning_details"] != Value::Array(sent.details.clone())
                    }
                    Contract::Gemini => sent
                        .extra
                        .as_ref()
                        .is_some_and(|e| &call["extra_content"] != e),
                    Contract::Kimi | Contract::Mistral => false,
                };
                if broken {
                    return Some(refusal(contract, call, position));
                }
            }
        }
        None
    }
}

fn refusal(contract: Contract, call: &Value, position: usize) -> (u16, String) {
    let body = match contract {
        Contract::DeepSeek => json!({"error": {
            "message": "The reasoning_content in the thinking mode must be passed back to the API.",
            "type": "invalid_request_error", "param": null, "code": "invalid_request_error"}}),
        Contract::Gemini => json!([{"error": {"code": 400, "status": "INVALID_ARGUMENT",
            "message": format!("Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance. Additional data, function call `default_api:{}` , position {}. Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details.",
                call["function"]["name"].as_str().unwrap_or_default(), position + 1)}}]),
        Contract::OpenRouter => json!({"error": {"code": 400,
            "message": "Provider returned error: reasoning_details must be passed back unchanged with the assistant message that produced them"}}),
        // Their rules hold for every message alike (`shape`), not for served state.
        Contract::Kimi | Contract::Mistral => json!({}),
    };
    (400, body.to_string())
}

/// The refusal of a history by the rules that hold for every message, whoever wrote it:
/// DeepSeek's and Kimi's `reasoning_content` on each assistant message with calls, Kimi's
/// non-empty content, Mistral's call ids.
fn shape(contract: Contract, messages: &[Value]) -> Option<(u16, String)> {
    // Gemini 3 checks the calls of the current turn: those after the last user message.
    let turn_starts = messages
        .iter()
        .rposition(|m| m["role"] == "user")
        .map_or(0, |i| i + 1);
    for (i, message) in messages.iter().enumerate() {
        if let Some(refused) = unanswering(messages, i) {
            return Some(refused);
        }
        let calls = message["tool_calls"].as_array().filter(|c| !c.is_empty());
        let assistant = message["role"] == "assistant";
        let refused = match contract {
            Contract::DeepSeek
                if assistant && calls.is_some() && !message["reasoning_content"].is_string() =>
            {
                json!({"error": {"message": format!("Missing `reasoning_content` field in the assistant message at message index {i}. For more information, please refer to https://api-docs.deepseek.com/guides/thinking_mode#tool-calls"),
                    "type": "invalid_request_error", "param": null, "code": "invalid_request_error"}})
            }
            Contract::Kimi
                if assistant && calls.is_some() && !message["reasoning_content"].is_string() =>
            {
                json!({"error": {"message": format!("thinking is enabled but reasoning_content is missing in assistant tool call message at index {i}"),
                    "type": "invalid_request_error"}})
            }
            Contract::Kimi if assistant && message["content"] == "" => {
                json!({"error": {"message": format!("the message at position {i} with role 'assistant' must not be empty"),
                    "type": "invalid_request_error"}})
            }
            Contract::Gemini
                if assistant
                    && i >= turn_starts
                    && calls.is_some_and(|c| {
                        !c[0]["extra_content"]["google"]["thought_signature"].is_string()
                    }) =>
            {
                let call = &calls.unwrap()[0];
                return Some(refusal(contract, call, 0));
            }
            Contract::Mistral => {
                let ids = calls
                    .into_iter()
                    .flatten()
                    .filter_map(|c| c["id"].as_str())
                    .chain(message["tool_call_id"].as_str());
                let Some(bad) = ids.into_iter().find(|id| !mistral_id(id)) else {
                    continue;
                };
                json!({"object": "error", "message": format!("Tool call id was {bad} but must be a-z, A-Z, 0-9, with a length of 9."),
                    "type": "invalid_request_message_order", "param": null, "code": "3230"})
            }
            _ => continue,
        };
        return Some((400, refused.to_string()));
    }
    None
}

/// The refusal every chat-completions provider gives a `tool` message (at `i`) that does
/// not answer a call of the assistant message before the results it is among.
fn unanswering(messages: &[Value], i: usize) -> Option<(u16, String)> {
    let message = &messages[i];
    if message["role"] != "tool" {
        return None;
    }
    let id = message["tool_call_id"].as_str().unwrap_or_default();
    let asked = messages[..i]
        .iter()
        .rev()
        .find(|m| m["role"] != "tool")
        .filter(|m| m["role"] == "assistant");
    let answers = asked
        .and_then(|m| m["tool_calls"].as_array())
        .is_some_and(|calls| calls.iter().any(|c| c["id"] == id));
    (!answers).then(|| {
        let body = json!({"error": {"message": format!("Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls' (tool_call_id {id} at index {i})."),
            "type": "invalid_request_error", "param": "messages", "code": null}});
        (400, body.to_string())
    })
}

/// Whether `id` is a call id Mistral takes.
fn mistral_id(id: &str) -> bool {
    id.len() == 9 && id.chars().all(|c| c.is_ascii_alphanumeric())
}

/// Joins a streamed `reasoning_details` piece into `into` by its `index`.
fn merge(into: &mut Vec<Value>, piece: &Value) {
    let index = piece["index"].as_u64();
    let Some(existing) = into.iter_mut().find(|e| e["index"].as_u64() == index) else {
        into.push(piece.clone());
        return;
    };
    for (key, value) in piece.as_object().into_iter().flatten() {
        match (existing.get(key).and_then(Value::as_str), value.as_str()) {
            (Some(old), Some(more))
                if ["text", "summary", "data", "signature"].contains(&key.as_str()) =>
            {
                existing[key] = json!(format!("{old}{more}"));
            }
            _ => existing[key] = value.clone(),
        }
    }
}

/// One tool call chunk, with `extra` on it when given.
fn call_chunk(index: usize, id: &str, name: &str, args: &Value, extra: Option<Value>) -> Value {
    let mut call = json!({"index": index, "id": id, "type": "function",
        "function": {"name": name, "arguments": args.to_string()}});
    if let Some(extra) = extra {
        call["extra_content"] = extra;
    }
    delta(json!({"tool_calls": [call]}))
}

/// A DeepSeek thinking-mode answer: `thought` as `reasoning_content` in two pieces, then
/// the calls.
pub(crate) fn deepseek_round(thought: &str, calls: &[(&str, &str, Value)]) -> Reply {
    let (a, b) = thought.split_at(thought.len() / 2);
    let mut chunks = vec![
        delta(json!({"role": "assistant", "content": null, "reasoning_content": a})),
        delta(json!({"reasoning_content": b})),
    ];
    for (i, (id, name, args)) in calls.iter().enumerate() {
        chunks.push(call_chunk(i, id, name, args, None));
    }
    chunks.push(finish("tool_calls"));
    chunks.push(usage(300, 40));
    Reply::chunks(chunks)
}

/// A Gemini 3 answer: the first call carries a thought signature, as Google sends it.
pub(crate) fn gemini_round(calls: &[(&str, &str, Value)]) -> Reply {
    let mut chunks = Vec::new();
    for (i, (id, name, args)) in calls.iter().enumerate() {
        let extra = (i == 0)
            .then(|| json!({"google": {"thought_signature": format!("sig-{id}-Cq0BAXLI")}}));
        chunks.push(call_chunk(i, id, name, args, extra));
    }
    chunks.push(finish("tool_calls"));
    chunks.push(usage(300, 40));
    Reply::chunks(chunks)
}

/// An OpenRouter reasoning answer: `reasoning` text and `reasoning_details` streamed in
/// pieces (text, then its signature, then an encrypted block), then the calls.
pub(crate) fn openrouter_round(thought: &str, calls: &[(&str, &str, Value)]) -> Reply {
    let (a, b) = thought.split_at(thought.len() / 2);
    let text = |t: &str| json!({"type": "reasoning.text", "index": 0, "format": "anthropic-claude-v1", "text": t});
    let mut chunks = vec![
        delta(
            json!({"role": "assistant", "content": "", "reasoning": a, "reasoning_details": [text(a)]}),
        ),
        delta(json!({"reasoning": b, "reasoning_details": [text(b)]})),
        delta(
            json!({"reasoning_details": [{"type": "reasoning.text", "index": 0, "signature": "EqQBCkgIBhABGAIiQ"}]}),
        ),
        delta(
            json!({"reasoning_details": [{"type": "reasoning.encrypted", "index": 1, "format": "anthropic-claude-v1", "data": "RXJyb3IgZGVjcnlwdGluZw=="}]}),
        ),
    ];
    for (i, (id, name, args)) in calls.iter().enumerate() {
        chunks.push(call_chunk(i, id, name, args, None));
    }
    chunks.push(finish("tool_calls"));
    chunks.push(usage(300, 40));
    Reply::chunks(chunks)
}
