//! The Anthropic Messages API on the mock: a scripted chat-completions stream translated into
//! the Messages API's SSE events, and the API's request rules enforced with its own errors.
//!
//! Translation: `message_start` (usage from the script's usage chunk) and a `ping` come
//! before the first chunk's events; reasoning becomes a `thinking` block that closes with a
//! `signature_delta` (`sig-` + [`fnv_hex`] of its text), content a `text` block, each tool
//! call a `tool_use` block; the finish closes the open block and sends `message_delta`
//! (stop reason mapped) and `message_stop`; an `error` chunk becomes an `error` event.
//!
//! Rules, checked in this order (the first broken one answers; see [`check`]): `x-api-key`
//! when `authorization` is sent (401; no key at all is let through), the `anthropic-version`
//! header, every `anthropic-beta` value (a comma-separated list) one of the betas the API
//! knows ([`BETAS`]), `max_tokens`, the thinking budget, no `system` role in `messages`, at
//! most 4 `cache_control` blocks, `tool_use` ids (and `tool_result`s' `tool_use_id`) matching
//! `^[a-zA-Z0-9_-]+$` and no two `tool_use` blocks sharing one, `tool_use`/`tool_result`
//! pairing, with thinking on the last answer of a tool loop starting with thinking (a
//! `tool_result` must answer a
//! `tool_use` of the message right before it, as the API's own message says), and thinking
//! blocks sent back unchanged at the start of any assistant message holding a `tool_use` of a
//! served reply (stricter than the API, which only demands them in the last turn).

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use super::mock_model::{Piece, Recorded, content_text};
use super::wire::{Part, Usage, Wire, each_chunk, fnv_hex, sse};

/// The thinking blocks (`{"type","thinking","signature"}`) each served reply sent, by the
/// ids of its `tool_use` blocks.
#[derive(Debug, Default)]
pub(crate) struct Issued {
    by_tool_use: HashMap<String, Vec<Value>>,
}

/// The block being streamed.
enum Block {
    Thinking { index: usize, text: String },
    Text { index: usize },
    Tool { index: usize, call: u64 },
}

impl Block {
    fn index(&self) -> usize {
        match self {
            Block::Thinking { index, .. } | Block::Text { index } | Block::Tool { index, .. } => {
                *index
            }
        }
    }
}

/// One reply's translation.
pub(crate) struct Translator {
    n: usize,
    model: Value,
    usage: Usage,
    issued: Arc<Mutex<Issued>>,
    started: bool,
    next: usize,
    open: Option<Block>,
    /// The closed thinking blocks, as the client must send them back.
    thinking: Vec<Value>,
    /// Each call index's (id, name).
    calls: Vec<(u64, String, String)>,
}

impl Translator {
    /// The translation of the reply to the `n`th request, `body`.
    pub(crate) fn new(n: usize, body: &Value, issued: Arc<Mutex<Issued>>) -> Translator {
        Translator {
            n,
            model: body["model"].clone(),
            usage: Usage::default(),
            issued,
            started: false,
            next: 0,
            open: None,
            thinking: Vec::new(),
            calls: Vec::new(),
        }
    }

    fn start(&mut self, out: &mut Vec<Value>) {
        if self.started {
            return;
        }
        self.started = true;
        let u = self.usage;
        out.push(json!({"type": "message_start", "message": {
            "id": format!("msg_mock_{}", self.n), "type": "message", "role": "assistant",
            "content": [], "model": self.model, "stop_reason": null, "stop_sequence": null,
            "usage": {"input_tokens": u.prompt.saturating_sub(u.cached),
                      "cache_read_input_tokens": u.cached, "cache_creation_input_tokens": 0,
                      "output_tokens": 1}}}));
        out.push(json!({"type": "ping"}));
    }

    fn close(&mut self, out: &mut Vec<Value>) {
        let Some(block) = self.open.take() else {
            return;
        };
        let index = block.index();
        if let Block::Thinking { text, .. } = block {
            let signature = format!("sig-{}", fnv_hex(&text));
            out.push(json!({"type": "content_block_delta", "index": index,
                            "delta": {"type": "signature_delta", "signature": signature}}));
            self.thinking
                .push(json!({"type": "thinking", "thinking": text, "signature": signature}));
        }
        out.push(json!({"type": "content_block_stop", "index": index}));
    }

    /// Closes the open block and starts `block` (whose index is the next one).
    fn begin(&mut self, block: Block, content_block: Value, out: &mut Vec<Value>) {
        self.close(out);
        out.push(
            json!({"type": "content_block_start", "index": block.index(),
                        "content_block": content_block}),
        );
        self.next += 1;
        self.open = Some(block);
    }

    fn delta(index: usize, delta: Value) -> Value {
        json!({"type": "content_block_delta", "index": index, "delta": delta})
    }

    fn text(&mut self, t: &str, out: &mut Vec<Value>) {
        if !matches!(self.open, Some(Block::Text { .. })) {
            let index = self.next;
            self.begin(
                Block::Text { index },
                json!({"type": "text", "text": ""}),
                out,
            );
        }
        let index = self.open.as_ref().map_or(0, Block::index);
        out.push(Self::delta(index, json!({"type": "text_delta", "text": t})));
    }

    fn part(&mut self, part: Part, out: &mut Vec<Value>) {
        match part {
            Part::Reasoning(r) => {
                if !matches!(self.open, Some(Block::Thinking { .. })) {
                    let index = self.next;
                    let block = Block::Thinking {
                        index,
                        text: String::new(),
                    };
                    let start = json!({"type": "thinking", "thinking": "", "signature": ""});
                    self.begin(block, start, out);
                }
                if let Some(Block::Thinking { index, text }) = &mut self.open {
                    text.push_str(&r);
                    out.push(Self::delta(
                        *index,
                        json!({"type": "thinking_delta", "thinking": r}),
                    ));
                }
            }
            Part::Text(t) => self.text(&t, out),
            Part::Call {
                index: call,
                id,
                name,
                arguments,
            } => {
                if !matches!(self.open, Some(Block::Tool { call: c, .. }) if c == call) {
                    if !self.calls.iter().any(|(c, ..)| *c == call) {
                        let (id, name) = (id.unwrap_or_default(), name.unwrap_or_default());
                        self.calls.push((call, id, name));
                    }
                    let (_, id, name) = self.calls.iter().find(|(c, ..)| *c == call).unwrap();
                    let start = json!({"type": "tool_use", "id": id, "name": name, "input": {}});
                    let index = self.next;
                    self.begin(Block::Tool { index, call }, start, out);
                }
                if !arguments.is_empty() {
                    let index = self.open.as_ref().map_or(0, Block::index);
                    let delta = json!({"type": "input_json_delta", "partial_json": arguments});
                    out.push(Self::delta(index, delta));
                }
            }
            Part::Finish(reason) => {
                self.close(out);
                let stop = match reason.as_str() {
                    "stop" => "end_turn",
                    "tool_calls" => "tool_use",
                    "length" => "max_tokens",
                    "content_filter" => "refusal",
                    other => other,
                };
                out.push(json!({"type": "message_delta",
                    "delta": {"stop_reason": stop, "stop_sequence": null},
                    "usage": {"output_tokens": self.usage.completion}}));
                out.push(json!({"type": "message_stop"}));
            }
            Part::Error(message, kind) => out.push(json!({"type": "error",
                "error": {"type": kind.as_deref().unwrap_or("api_error"), "message": message}})),
        }
    }
}

fn joined(events: &[Value]) -> String {
    events.iter().map(sse).collect()
}

impl Wire for Translator {
    fn translate(&mut self, pieces: Vec<Piece>) -> Vec<Piece> {
        self.usage = Usage::of(&pieces);
        let out = each_chunk(pieces, |chunk| {
            let mut events = Vec::new();
            self.start(&mut events);
            for part in super::wire::parts(chunk) {
                self.part(part, &mut events);
            }
            joined(&events)
        });
        if !self.thinking.is_empty() {
            let mut issued = self.issued.lock().unwrap();
            for (_, id, _) in &self.calls {
                issued.by_tool_use.insert(id.clone(), self.thinking.clone());
            }
        }
        out
    }

    fn flood(&mut self, t: &str) -> String {
        let mut events = Vec::new();
        self.start(&mut events);
        self.text(t, &mut events);
        joined(&events)
    }
}

// ---- requests -------------------------------------------------------------------------

/// `system`: a string, or its text blocks joined with newlines.
pub(crate) fn system_prompt(body: &Value) -> String {
    content_text(&body["system"])
}

/// The last user message's text: a string content, or its `text` blocks joined with
/// newlines. A user message that holds only `tool_result` blocks (a tool round's answer, the
/// counterpart of chat completions' trailing `tool` message) gives their contents instead.
pub(crate) fn last_user_text(body: &Value) -> String {
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    let Some(last) = messages.iter().rev().find(|m| m["role"] == "user") else {
        return String::new();
    };
    let Some(blocks) = last["content"].as_array() else {
        return content_text(&last["content"]);
    };
    let texts: Vec<&str> = blocks
        .iter()
        .filter(|b| b["type"] == "text")
        .filter_map(|b| b["text"].as_str())
        .collect();
    if !texts.is_empty() {
        return texts.join("\n");
    }
    let results: Vec<String> = blocks
        .iter()
        .filter(|b| b["type"] == "tool_result")
        .map(|b| content_text(&b["content"]))
        .collect();
    results.join("\n")
}

fn refusal(status: u16, kind: &str, message: &str) -> Option<(u16, String)> {
    let body = json!({"type": "error", "error": {"type": kind, "message": message}});
    Some((status, body.to_string()))
}

fn invalid(message: &str) -> Option<(u16, String)> {
    refusal(400, "invalid_request_error", message)
}

/// A message's content blocks (a string content is one text block).
fn blocks(message: &Value) -> Vec<Value> {
    match &message["content"] {
        Value::String(s) => vec![json!({"type": "text", "text": s})],
        Value::Array(blocks) => blocks.clone(),
        _ => Vec::new(),
    }
}

fn ids_of<'a>(blocks: impl IntoIterator<Item = &'a Value>, kind: &str, key: &str) -> Vec<String> {
    blocks
        .into_iter()
        .filter(|b| b["type"] == kind)
        .map(|b| b[key].as_str().unwrap_or_default().to_string())
        .collect()
}

/// The Messages API's refusal of `request`, when it breaks a rule.
pub(crate) fn check(request: &Recorded, issued: &Issued) -> Option<(u16, String)> {
    let header = |name: &str| request.headers.get(name).is_some();
    if header("authorization") && !header("x-api-key") {
        return refusal(401, "authentication_error", "invalid x-api-key");
    }
    if !header("anthropic-version") {
        return invalid("anthropic-version: header is required");
    }
    if let Some(message) = unknown_betas(request) {
        return invalid(&message);
    }
    let body = &request.body;
    if let Some(message) = params(body) {
        return invalid(&message);
    }
    let Some(messages) = body["messages"].as_array() else {
        return invalid("messages: Field required");
    };
    if messages.iter().any(|m| m["role"] == "system") {
        return invalid(
            "messages: Unexpected role \"system\". The Messages API accepts a top-level `system` parameter, not \"system\" as an input message role.",
        );
    }
    let cached = cache_controls(body);
    if cached > 4 {
        return invalid(&format!(
            "A maximum of 4 blocks with cache_control may be provided. Found {cached}."
        ));
    }
    id_rules(messages)
        .or_else(|| pairing(messages))
        .or_else(|| last_answer_thinks(body, messages))
        .or_else(|| issued.round_trip(messages))
        .and_then(|message| invalid(&message))
}

/// `max_tokens` and the thinking budget.
fn params(body: &Value) -> Option<String> {
    let max = match body.get("max_tokens") {
        None | Some(Value::Null) => return Some("max_tokens: Field required".into()),
        Some(v) if v.as_i64().is_some_and(|m| m < 1) => {
            return Some("max_tokens: Input should be greater than or equal to 1".into());
        }
        Some(v) => match v.as_u64() {
            Some(max) => max,
            None => return Some("max_tokens: Input should be a valid integer".into()),
        },
    };
    let thinking = &body["thinking"];
    if thinking["type"] != "enabled" {
        return None;
    }
    let Some(budget) = thinking["budget_tokens"].as_u64() else {
        return Some("thinking.enabled.budget_tokens: Field required".into());
    };
    if budget < 1024 {
        return Some(
            "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024".into(),
        );
    }
    (budget >= max).then(|| "`max_tokens` must be greater than `thinking.budget_tokens`".into())
}

/// The blocks with `cache_control`: tools, `system` blocks, message content blocks (and the
/// blocks inside a `tool_result`'s content).
fn cache_controls(body: &Value) -> usize {
    fn count(blocks: &Value) -> usize {
        let blocks = blocks.as_array().map(Vec::as_slice).unwrap_or_default();
        blocks
            .iter()
            .map(|b| usize::from(!b["cache_control"].is_null()) + count(&b["content"]))
            .sum()
    }
    let messages = body["messages"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    count(&body["tools"])
        + count(&body["system"])
        + messages.iter().map(|m| count(&m["content"])).sum::<usize>()
}

/// With thinking on, in the middle of a tool loop (the last message holds tool results), the
/// last answer starts with a thinking block, as the API demands of any answer, not only a
/// served one.
fn last_answer_thinks(body: &Value, messages: &[Value]) -> Option<String> {
    if body["thinking"]["type"] != "enabled" {
        return None;
    }
    let (last, before) = messages.split_last()?;
    let first = |m: &Value| blocks(m).first().cloned().unwrap_or(Value::Null);
    if last["role"] != "user" || first(last)["type"] != "tool_result" {
        return None;
    }
    let i = before.len().checked_sub(1)?;
    let kind = first(&before[i])["type"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    (kind != "thinking" && kind != "redacted_thinking").then(|| format!(
        "messages.{i}.content.0.type: Expected `thinking` or `redacted_thinking`, but found `{kind}`. When `thinking` is enabled, a final `assistant` message must start with a thinking block (preceeding the lastmost set of `tool_use` and `tool_result` blocks). We recommend you include thinking blocks from previous turns."
    ))
}

/// Each `tool_use` id (and each `tool_result`'s `tool_use_id`) matches the API's pattern, and
/// no two `tool_use` blocks of the request share an id.
fn id_rules(messages: &[Value]) -> Option<String> {
    let word = |id: &str| {
        !id.is_empty()
            && id
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    };
    let mut seen = HashSet::new();
    for (i, message) in messages.iter().enumerate() {
        for (k, block) in blocks(message).iter().enumerate() {
            let (field, id) = match block["type"].as_str() {
                Some("tool_use") => ("tool_use.id", block["id"].as_str().unwrap_or_default()),
                Some("tool_result") => (
                    "tool_result.tool_use_id",
                    block["tool_use_id"].as_str().unwrap_or_default(),
                ),
                _ => continue,
            };
            if !word(id) {
                return Some(format!(
                    "messages.{i}.content.{k}.{field}: String should match pattern '^[a-zA-Z0-9_-]+$'"
                ));
            }
            if block["type"] == "tool_use" && !seen.insert(id.to_string()) {
                return Some(format!(
                    "messages.{i}.content.{k}: `tool_use` ids must be unique"
                ));
            }
        }
    }
    None
}

/// Each `tool_use` answered by a leading `tool_result` in the next (user) message, and each
/// `tool_result` answering a `tool_use` of the previous message.
fn pairing(messages: &[Value]) -> Option<String> {
    for (i, message) in messages.iter().enumerate() {
        let content = blocks(message);
        if message["role"] == "user" {
            let previous = match i.checked_sub(1).map(|p| &messages[p]) {
                Some(p) if p["role"] == "assistant" => ids_of(&blocks(p), "tool_use", "id"),
                _ => Vec::new(),
            };
            for (k, block) in content.iter().enumerate() {
                let id = block["tool_use_id"].as_str().unwrap_or_default();
                if block["type"] == "tool_result" && !previous.iter().any(|p| p == id) {
                    return Some(format!(
                        "messages.{i}.content.{k}: unexpected `tool_use_id` found in `tool_result` blocks: {id}. Each `tool_result` block must have a corresponding `tool_use` block in the previous message."
                    ));
                }
            }
            continue;
        }
        let uses = ids_of(&content, "tool_use", "id");
        if uses.is_empty() {
            continue;
        }
        let answered = match messages.get(i + 1) {
            Some(next) if next["role"] == "user" => {
                let next = blocks(next);
                let leading = next.iter().take_while(|b| b["type"] == "tool_result");
                ids_of(leading, "tool_result", "tool_use_id")
            }
            _ => Vec::new(),
        };
        let missing: Vec<String> = uses.into_iter().filter(|u| !answered.contains(u)).collect();
        if !missing.is_empty() {
            return Some(format!(
                "messages.{i}: `tool_use` ids were found without `tool_result` blocks immediately after: {}. Each `tool_use` block must have a corresponding `tool_result` block in the next message.",
                missing.join(", ")
            ));
        }
    }
    None
}

impl Issued {
    /// An assistant message with a `tool_use` of a served reply starts with that reply's
    /// thinking blocks, unchanged.
    fn round_trip(&self, messages: &[Value]) -> Option<String> {
        for (i, message) in messages.iter().enumerate() {
            if message["role"] != "assistant" {
                continue;
            }
            let content = blocks(message);
            let uses = ids_of(&content, "tool_use", "id");
            let Some(expected) = uses.iter().find_map(|id| self.by_tool_use.get(id)) else {
                continue;
            };
            for (k, want) in expected.iter().enumerate() {
                let got = content.get(k).cloned().unwrap_or(Value::Null);
                let kind = got["type"].as_str().unwrap_or_default();
                if k == 0 && kind != "thinking" && kind != "redacted_thinking" {
                    return Some(format!(
                        "messages.{i}.content.0.type: Expected `thinking` or `redacted_thinking`, but found `{kind}`. When `thinking` is enabled, a final `assistant` message must start with a thinking block (preceeding the lastmost set of `tool_use` and `tool_result` blocks). We recommend you include thinking blocks from previous turns."
                    ));
                }
                let same = ["type", "thinking", "signature"]
                    .iter()
                    .all(|key| got[key] == want[key]);
                if !same {
                    return Some(format!(
                        "messages.{i}.content.{k}: Invalid `signature` in `thinking` block"
                    ));
                }
            }
        }
        None
    }
}

/// Betas the Messages API takes in `anthropic-beta` (some of them).
pub(crate) const BETAS: &[&str] = &[
    "interleaved-thinking-2025-05-14",
    "prompt-caching-2024-07-31",
    "fine-grained-tool-streaming-2025-05-14",
    "token-efficient-tools-2025-02-19",
    "output-128k-2025-02-19",
    "context-1m-2025-08-07",
    "files-api-2025-04-14",
];

/// The API's words for `anthropic-beta` values it does not know, if the request sent any.
fn unknown_betas(request: &Recorded) -> Option<String> {
    let unknown: Vec<String> = request
        .headers
        .get_all("anthropic-beta")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(str::trim)
        .filter(|beta| !BETAS.contains(beta))
        .map(|beta| format!("`{beta}`"))
        .collect();
    (!unknown.is_empty()).then(|| {
        format!(
            "Unexpected value(s) {} for the `anthropic-beta` header. Please consult our documentation at docs.anthropic.com or try again without the header.",
            unknown.join(", ")
        )
    })
}

/// The betas a request asked for in `anthropic-beta`, in order.
pub(crate) fn betas(request: &Recorded) -> Vec<String> {
    request
        .headers
        .get_all("anthropic-beta")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|beta| beta.trim().to_string())
        .collect()
}
