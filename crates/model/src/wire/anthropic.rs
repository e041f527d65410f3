//! Anthropic's Messages API (`POST {base}/messages`): Claude, and the servers that speak it
//! (llama-server, vLLM, LiteLLM, DeepSeek's and Kimi's Anthropic endpoints).
//!
//! What the API demands and this file does:
//! - the key in `x-api-key` and the `anthropic-version` header; `max_tokens` on every request;
//! - the system prompt as the top-level `system`, tool results as `tool_result` blocks that
//!   open the user message after the call;
//! - thinking (from the reasoning-effort option, as `budget_tokens`) with its blocks sent back
//!   verbatim, signatures included, in the order they came, before the calls they led to; off
//!   for a request in a tool loop whose last answer has no thinking of this model's (the user
//!   switched model during the turn), which the API refuses with thinking on;
//! - call ids that match `^[a-zA-Z0-9_-]+$` and are unique in the request, whoever wrote
//!   them (see `model::dialect`);
//! - prompt caching through `cache_control` breakpoints on the fixed start (tools and system),
//!   where the previous request ended, and the moving end, so each request after the first
//!   reads the conversation up to there from the cache;
//! - the `anthropic-beta: interleaved-thinking-2025-05-14` header when a Claude 4 model
//!   thinks and is offered tools, so it may think again between its tool calls (joined to an
//!   `anthropic-beta` the user set, see [`super::merged_headers`]).
//!
//! The provider state kept per answer ([`Carried::data`]) is `{"layout": [...]}`: the answer's
//! blocks in order, thinking and redacted-thinking blocks verbatim and the text and calls as
//! placeholders (see [`carried::in_order`]).

use futures::future::BoxFuture;
use serde_json::{Value, json};

use super::{Decoder, Link};
use crate::carried::{self, Slot};
use crate::config::Config;
use crate::conversation::Api;
use crate::conversation::split_data_url;
use crate::dialect::Dialect;
use crate::types::{FinishReason, UserPart};
use crate::{
    Carried, EventStream, Message, ModelClient, ModelError, ModelEvent, ModelRequest, Origin,
    ToolCall, Usage,
};

/// Output tokens asked for (besides a thinking budget) when nothing else is said: within
/// every current model's limit, and small enough for the output-rate limits of new accounts,
/// which count `max_tokens` up front.
const DEFAULT_MAX_TOKENS: u32 = 8192;

/// The output tokens to ask of `model` when its profile sets none.
fn answer_tokens(model: &str) -> u32 {
    crate::config::presets::known_output_limit(model).unwrap_or(DEFAULT_MAX_TOKENS)
}

/// A [`ModelClient`] for one server's Messages API.
pub(crate) struct AnthropicClient {
    link: Link,
}

impl AnthropicClient {
    /// A client for `config`'s endpoint; nothing is sent until the first prompt.
    pub(crate) fn new(config: &Config) -> Self {
        Self {
            link: Link::new(config, Api::AnthropicMessages),
        }
    }

    async fn open_stream(&self, request: ModelRequest) -> Result<EventStream, ModelError> {
        let origin = self.link.origin(&request.model);
        let body = request_body(&request, &origin);
        let betas = betas(&request.model, &body);
        let decoder = Decode::new(origin, &self.link.endpoint().base_url, &request.model);
        self.link
            .open_with("/messages", body, &request.model, &betas, decoder)
            .await
    }
}

impl ModelClient for AnthropicClient {
    fn open(&self, request: ModelRequest) -> BoxFuture<'_, Result<EventStream, ModelError>> {
        Box::pin(self.open_stream(request))
    }
}

/// The beta that lets a model think between its tool calls.
pub(crate) const INTERLEAVED_THINKING: &str = "interleaved-thinking-2025-05-14";

/// The `anthropic-beta` features a request `body` to `model` uses: interleaved thinking when
/// the model thinks, is offered tools, and is of a family that can think between calls.
fn betas(model: &str, body: &Value) -> Vec<(&'static str, String)> {
    let thinks = body["thinking"]["type"] == "enabled";
    let tools = body["tools"].as_array().is_some_and(|t| !t.is_empty());
    if thinks && tools && crate::config::presets::known_interleaved_thinking(model) {
        vec![("anthropic-beta", INTERLEAVED_THINKING.to_string())]
    } else {
        Vec::new()
    }
}

/// The thinking budget for a reasoning effort.
fn thinking_budget(effort: &str) -> u32 {
    match effort {
        "low" | "minimal" => 1024,
        "high" => 16_384,
        _ => 4096,
    }
}

/// The JSON body of a streaming Messages request to `origin`.
pub(crate) fn request_body(request: &ModelRequest, origin: &Origin) -> Value {
    let mut system: Vec<Value> = Vec::new();
    let mut messages: Vec<Value> = Vec::new();
    // Calls another server wrote may have ids the API refuses (`functions.list_dir:0`) or
    // share one (`call_0` from a server that sends none).
    let dialect = Dialect::of(Api::AnthropicMessages, &origin.server, &origin.model);
    let conformed = dialect.conform_ids(&request.messages);
    for message in conformed.as_deref().unwrap_or(&request.messages) {
        match &**message {
            Message::System(text) => system.push(json!({"type": "text", "text": text})),
            Message::User(parts) => push_blocks(&mut messages, "user", user_blocks(parts)),
            Message::Assistant {
                text,
                reasoning: _,
                tool_calls,
                carried,
            } => {
                let blocks = assistant_blocks(text, tool_calls, carried.as_deref(), origin);
                push_blocks(&mut messages, "assistant", blocks);
            }
            Message::Tool {
                call_id,
                content,
                images,
            } => {
                let content = if images.is_empty() {
                    json!(content)
                } else {
                    let mut blocks = vec![json!({"type": "text", "text": content})];
                    blocks.extend(images.iter().map(|url| image_block(url)));
                    Value::Array(blocks)
                };
                let block =
                    json!({"type": "tool_result", "tool_use_id": call_id, "content": content});
                push_blocks(&mut messages, "user", vec![block]);
            }
        }
    }
    mark_cache_points(&mut system, &mut messages);
    let thinking = request.reasoning_effort.as_deref().map(thinking_budget);
    let max_tokens = request
        .max_tokens
        .unwrap_or_else(|| answer_tokens(&request.model) + thinking.unwrap_or(0));
    // The budget must leave room for the answer; the API's least budget is 1,024.
    let thinking = thinking
        .map(|b| b.min(max_tokens.saturating_sub(1024)))
        .filter(|b| *b >= 1024)
        .filter(|_| thinking_may_go_on(&messages));
    let mut body = json!({
        "model": request.model,
        "max_tokens": max_tokens,
        "messages": messages,
        "stream": true,
    });
    if !system.is_empty() {
        body["system"] = Value::Array(system);
    }
    if let Some(budget) = thinking {
        body["thinking"] = json!({"type": "enabled", "budget_tokens": budget});
    }
    if !request.tools.is_empty() {
        let tools: Vec<Value> = request
            .tools
            .iter()
            .map(|t| json!({"name": t.name, "description": t.description, "input_schema": t.parameters}))
            .collect();
        body["tools"] = Value::Array(tools);
    }
    body
}

/// Whether thinking may be on for a request with `messages`: in the middle of a tool loop
/// the API demands that the last answer start with its thinking block, which an answer from
/// another model (the user switched during the turn) or one written without thinking does
/// not have. Such a request goes without thinking; the next turn has it again.
fn thinking_may_go_on(messages: &[Value]) -> bool {
    let Some((last, before)) = messages.split_last() else {
        return true;
    };
    let in_loop = last["role"] == "user" && last["content"][0]["type"] == "tool_result";
    if !in_loop {
        return true;
    }
    let answer = before.last().map(|m| &m["content"][0]["type"]);
    matches!(
        answer.and_then(Value::as_str),
        Some("thinking" | "redacted_thinking")
    )
}

/// Adds `blocks` as a message of `role`, joining the last message when it has that role
/// (tool results and the prompt after them go in one user message, results first).
fn push_blocks(messages: &mut Vec<Value>, role: &str, blocks: Vec<Value>) {
    if blocks.is_empty() {
        return;
    }
    if let Some(last) = messages.last_mut()
        && last["role"] == role
        && let Some(content) = last["content"].as_array_mut()
    {
        content.extend(blocks);
        return;
    }
    messages.push(json!({"role": role, "content": blocks}));
}

fn user_blocks(parts: &[UserPart]) -> Vec<Value> {
    parts
        .iter()
        .map(|part| match (part, part.as_text()) {
            (UserPart::Image { url }, _) => image_block(url),
            (_, text) => json!({"type": "text", "text": text.unwrap_or_default()}),
        })
        .collect()
}

/// An image as a base64 source (from a `data:` URL) or a URL source.
fn image_block(url: &str) -> Value {
    let inline = split_data_url(url)
        .map(|(kind, data)| json!({"type": "base64", "media_type": kind, "data": data}));
    let source = inline.unwrap_or_else(|| json!({"type": "url", "url": url}));
    json!({"type": "image", "source": source})
}

/// An answer's blocks: in the order they came, with thinking, when the state is this
/// origin's; else its text and calls.
fn assistant_blocks(
    text: &str,
    calls: &[ToolCall],
    carried: Option<&Carried>,
    origin: &Origin,
) -> Vec<Value> {
    carried::answer_slots(text, calls, carried, origin)
        .into_iter()
        .map(|slot| match slot {
            Slot::Kept(block) => block.clone(),
            Slot::Text(text) => json!({"type": "text", "text": text}),
            Slot::Call(call) => json!({"type": "tool_use", "id": call.id, "name": call.name,
                "input": call_input(&call.arguments)}),
        })
        .collect()
}

/// A call's arguments as the object `tool_use.input` must be; arguments that are not one
/// (the model wrote broken JSON, which its tool result told it) go back under `arguments`.
fn call_input(arguments: &str) -> Value {
    match serde_json::from_str::<Value>(arguments) {
        Ok(value @ Value::Object(_)) => value,
        _ if arguments.trim().is_empty() => json!({}),
        _ => json!({ "arguments": arguments }),
    }
}

/// Cache breakpoints: the end of the system prompt (tools and system), the end of the
/// message before the last user message (where the previous request ended), and the end of
/// the last message. At most three of the four the API allows.
fn mark_cache_points(system: &mut [Value], messages: &mut [Value]) {
    let point = || json!({"type": "ephemeral"});
    if let Some(last) = system.last_mut() {
        last["cache_control"] = point();
    }
    let n = messages.len();
    let mut ends = vec![n.checked_sub(1)];
    ends.push(n.checked_sub(3));
    for index in ends.into_iter().flatten() {
        let Some(block) = messages[index]["content"]
            .as_array_mut()
            .and_then(|c| c.iter_mut().rev().find(|b| cacheable(b)))
        else {
            continue;
        };
        block["cache_control"] = point();
    }
}

/// Whether a block may carry `cache_control` (thinking blocks may not).
fn cacheable(block: &Value) -> bool {
    !matches!(
        block["type"].as_str(),
        Some("thinking" | "redacted_thinking")
    )
}

/// One block of the answer being read.
#[derive(Debug)]
enum Block {
    Text(usize),
    Thinking(Value),
    Call(ToolCall),
    Other,
}

/// Reads Messages stream events.
pub(crate) struct Decode {
    origin: Origin,
    base_url: String,
    model: String,
    /// The block being streamed, by its index.
    open: Option<(u64, Block)>,
    layout: Vec<Value>,
    calls: Vec<ToolCall>,
    thought: bool,
    usage: Usage,
    finish: Option<FinishReason>,
    complete: bool,
}

impl Decode {
    /// A decoder for an answer from `origin`.
    pub(crate) fn new(origin: Origin, base_url: &str, model: &str) -> Self {
        Self {
            origin,
            base_url: base_url.to_string(),
            model: model.to_string(),
            open: None,
            layout: Vec::new(),
            calls: Vec::new(),
            thought: false,
            usage: Usage::default(),
            finish: None,
            complete: false,
        }
    }

    fn start(&mut self, index: u64, block: &Value, out: &mut Vec<ModelEvent>) {
        self.close();
        let started = match block["type"].as_str() {
            Some("text") => {
                let text = block["text"].as_str().unwrap_or_default();
                if !text.is_empty() {
                    out.push(ModelEvent::Text(text.to_string()));
                }
                Block::Text(text.len())
            }
            Some("thinking") => {
                let text = block["thinking"].as_str().unwrap_or_default();
                if !text.is_empty() {
                    out.push(ModelEvent::Reasoning(text.to_string()));
                }
                Block::Thinking(block.clone())
            }
            Some("redacted_thinking") => Block::Thinking(block.clone()),
            Some("tool_use") => {
                let id = block["id"].as_str().unwrap_or_default();
                let name = block["name"].as_str().unwrap_or_default();
                // A call shown early keeps its id: one without, or with a taken one, is shown
                // when complete instead.
                if !id.is_empty() && !self.calls.iter().any(|c| c.id == id) {
                    out.push(ModelEvent::CallStarted {
                        id: id.to_string(),
                        name: name.to_string(),
                    });
                }
                Block::Call(ToolCall::new(id, name, ""))
            }
            _ => Block::Other,
        };
        self.open = Some((index, started));
    }

    fn delta(&mut self, index: u64, delta: &Value, out: &mut Vec<ModelEvent>) {
        let Some((open, block)) = self.open.as_mut().filter(|(i, _)| *i == index) else {
            return;
        };
        let _ = open;
        let piece = |key: &str| delta[key].as_str().unwrap_or_default();
        match (block, delta["type"].as_str()) {
            (Block::Text(n), Some("text_delta")) => {
                let t = piece("text");
                *n += t.len();
                if !t.is_empty() {
                    out.push(ModelEvent::Text(t.to_string()));
                }
            }
            (Block::Thinking(b), Some("thinking_delta")) => {
                let t = piece("thinking");
                append(b, "thinking", t);
                if !t.is_empty() {
                    out.push(ModelEvent::Reasoning(t.to_string()));
                }
            }
            (Block::Thinking(b), Some("signature_delta")) => {
                append(b, "signature", piece("signature"))
            }
            (Block::Call(call), Some("input_json_delta")) => {
                call.arguments.push_str(piece("partial_json"));
            }
            _ => {}
        }
    }

    /// Ends the open block: it takes its place in the answer.
    fn close(&mut self) {
        match self.open.take().map(|(_, b)| b) {
            Some(Block::Text(n)) if n > 0 => self.layout.push(carried::text_entry(n)),
            Some(Block::Thinking(block)) => {
                self.thought = true;
                self.layout.push(block);
            }
            Some(Block::Call(mut call)) => {
                if call.arguments.trim().is_empty() {
                    call.arguments = "{}".into();
                }
                self.layout.push(carried::call_entry(&call.id));
                self.calls.push(call);
            }
            _ => {}
        }
    }

    fn stop(&mut self, out: &mut Vec<ModelEvent>) {
        self.close();
        self.complete = true;
        let mut calls = std::mem::take(&mut self.calls);
        crate::wire::ids::unique_ids(&mut calls);
        carried::relabel_calls(&mut self.layout, &calls);
        let called = !calls.is_empty();
        if called {
            out.push(ModelEvent::ToolCalls(calls));
        }
        if self.thought {
            out.push(ModelEvent::Carried(Carried {
                origin: self.origin.clone(),
                data: json!({ "layout": std::mem::take(&mut self.layout) }),
            }));
        }
        let finish = self.finish.take().unwrap_or(if called {
            FinishReason::ToolCalls
        } else {
            FinishReason::Stop
        });
        out.push(ModelEvent::Finish(finish));
        out.push(ModelEvent::Usage(self.usage));
    }

    fn read_usage(&mut self, usage: &Value) {
        let n = |key: &str| usage[key].as_u64();
        if let Some(input) = n("input_tokens") {
            let read = n("cache_read_input_tokens").unwrap_or(0);
            let written = n("cache_creation_input_tokens").unwrap_or(0);
            self.usage.prompt_tokens = input + read + written;
            self.usage.cached_tokens = read;
        }
        if let Some(output) = n("output_tokens") {
            self.usage.completion_tokens = output;
        }
    }
}

/// Appends `more` to the string field `key` of `block`, in place (a long thinking block
/// arrives in thousands of pieces: it must not be copied for each).
fn append(block: &mut Value, key: &str, more: &str) {
    if more.is_empty() {
        return;
    }
    match block.get_mut(key) {
        Some(Value::String(text)) => text.push_str(more),
        _ => block[key] = Value::String(more.to_string()),
    }
}

/// A Messages `stop_reason` as a finish reason.
fn finish_reason(reason: &str) -> FinishReason {
    match reason {
        "end_turn" | "stop_sequence" => FinishReason::Stop,
        "tool_use" => FinishReason::ToolCalls,
        "max_tokens" | "model_context_window_exceeded" => FinishReason::Length,
        "refusal" => FinishReason::ContentFilter,
        other => FinishReason::parse(other),
    }
}

impl Decoder for Decode {
    fn event(&mut self, event: Option<&str>, data: &str) -> Result<Vec<ModelEvent>, ModelError> {
        let value: Value =
            serde_json::from_str(data).map_err(|e| super::unreadable(&self.base_url, &e, data))?;
        let kind = value["type"].as_str().or(event).unwrap_or_default();
        let mut out = Vec::new();
        let index = value["index"].as_u64().unwrap_or(0);
        match kind {
            "message_start" => self.read_usage(&value["message"]["usage"]),
            "content_block_start" => self.start(index, &value["content_block"], &mut out),
            "content_block_delta" => self.delta(index, &value["delta"], &mut out),
            "content_block_stop" => self.close(),
            "message_delta" => {
                if let Some(reason) = value["delta"]["stop_reason"].as_str() {
                    self.finish = Some(finish_reason(reason));
                }
                self.read_usage(&value["usage"]);
            }
            "message_stop" => self.stop(&mut out),
            "error" => {
                return Err(ModelError::from_stream_error(
                    &self.base_url,
                    &self.model,
                    &value,
                ));
            }
            _ if value.get("error").is_some() => {
                return Err(ModelError::from_stream_error(
                    &self.base_url,
                    &self.model,
                    &value,
                ));
            }
            _ => {}
        }
        Ok(out)
    }

    fn complete(&self) -> bool {
        self.complete
    }
}

#[cfg(test)]
#[path = "anthropic_tests.rs"]
mod tests;
