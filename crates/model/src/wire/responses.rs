//! OpenAI's Responses API (`POST {base}/responses`): OpenAI's reasoning models keep their
//! reasoning across tool calls only here; vLLM, Ollama, LiteLLM and llama-server serve it too.
//!
//! Nothing is stored on the server (`store: false`): every request carries the whole
//! conversation as input items, and reasoning comes back as the reasoning items the server
//! sent (with their `encrypted_content`, asked for through `include`), in the order they came,
//! before the calls they led to, without their `rs_` ids (under `store: false` an id names an
//! item the server does not have, and it refuses the request). Calls and their outputs pair
//! by `call_id`. The system prompt goes as `instructions`; reasoning effort as
//! `reasoning.effort`, with summaries asked for (shown as the model's thoughts) unless the
//! server refused them once. Every request of a session carries the session id as
//! `prompt_cache_key`, so OpenAI serves them from one cache.
//!
//! The provider state kept per answer ([`Carried::data`]) is `{"layout": [...]}`: its output
//! items in order, reasoning items verbatim (without `status`) and its text and calls as
//! placeholders (see [`carried::in_order`]).

use std::sync::atomic::{AtomicBool, Ordering};

use futures::future::BoxFuture;
use serde_json::{Value, json};

use super::{Decoder, Link};
use crate::carried::{self, Slot};
use crate::config::Config;
use crate::conversation::Api;
use crate::dialect::Dialect;
use crate::types::{FinishReason, UserPart};
use crate::{
    Carried, EventStream, Message, ModelClient, ModelError, ModelEvent, ModelRequest, Origin,
    ToolCall, Usage,
};

/// A [`ModelClient`] for one server's Responses API.
pub(crate) struct ResponsesClient {
    link: Link,
    /// Whether the server refused reasoning summaries (OpenAI asks organizations to verify
    /// first); later requests then ask for none.
    no_summaries: AtomicBool,
}

impl ResponsesClient {
    /// A client for `config`'s endpoint; nothing is sent until the first prompt.
    pub(crate) fn new(config: &Config) -> Self {
        Self {
            link: Link::new(config, Api::Responses),
            no_summaries: AtomicBool::new(false),
        }
    }

    async fn open_stream(&self, request: ModelRequest) -> Result<EventStream, ModelError> {
        let summaries = !self.no_summaries.load(Ordering::Relaxed);
        match self.send(&request, summaries).await {
            Err(e) if summaries && refuses_summaries(&e) => {
                tracing::info!("the server gives no reasoning summaries; asking for none: {e}");
                self.no_summaries.store(true, Ordering::Relaxed);
                self.send(&request, false).await
            }
            other => other,
        }
    }

    async fn send(
        &self,
        request: &ModelRequest,
        summaries: bool,
    ) -> Result<EventStream, ModelError> {
        let origin = self.link.origin(&request.model);
        let body = request_body(request, &origin, summaries);
        let decoder = Decode::new(origin, &self.link.endpoint().base_url, &request.model);
        self.link
            .open("/responses", body, &request.model, decoder)
            .await
    }
}

impl ModelClient for ResponsesClient {
    fn open(&self, request: ModelRequest) -> BoxFuture<'_, Result<EventStream, ModelError>> {
        Box::pin(self.open_stream(request))
    }
}

/// Whether `error` is a refusal of reasoning summaries.
fn refuses_summaries(error: &ModelError) -> bool {
    let m = error.message.to_ascii_lowercase();
    error.status == Some(400)
        && m.contains("summar")
        && (m.contains("verif") || m.contains("not supported"))
}

/// A call's output: its text, or with images a list of text and images.
fn call_output(content: &str, images: &[String]) -> Value {
    if images.is_empty() {
        return json!(content);
    }
    let mut parts = vec![json!({"type": "input_text", "text": content})];
    parts.extend(
        images
            .iter()
            .map(|url| json!({"type": "input_image", "image_url": url})),
    );
    Value::Array(parts)
}

/// The JSON body of a streaming Responses request to `origin`.
pub(crate) fn request_body(request: &ModelRequest, origin: &Origin, summaries: bool) -> Value {
    let mut instructions = Vec::new();
    let mut input: Vec<Value> = Vec::new();
    // Calls and their outputs pair by `call_id`: one taken twice (`call_0` from a server
    // that sends no ids) would answer the wrong call.
    let dialect = Dialect::of(Api::Responses, &origin.server, &origin.model);
    let conformed = dialect.conform_ids(&request.messages);
    for message in conformed.as_deref().unwrap_or(&request.messages) {
        match &**message {
            Message::System(text) => instructions.push(text.as_str()),
            Message::User(parts) => input.push(json!({
                "type": "message", "role": "user", "content": user_content(parts)})),
            Message::Assistant {
                text,
                tool_calls,
                carried,
                ..
            } => input.extend(
                answer_items(text, tool_calls, carried.as_deref(), origin)
                    .into_iter()
                    .map(unstored),
            ),
            Message::Tool {
                call_id,
                content,
                images,
            } => input.push(json!({
                "type": "function_call_output", "call_id": call_id,
                "output": call_output(content, images)})),
        }
    }
    let mut body = json!({
        "model": request.model,
        "input": input,
        "stream": true,
        "store": false,
    });
    if !instructions.is_empty() {
        body["instructions"] = json!(instructions.join("\n\n"));
    }
    if let Some(key) = &request.cache_key {
        body["prompt_cache_key"] = json!(key);
    }
    if let Some(effort) = &request.reasoning_effort {
        body["reasoning"] = json!({ "effort": effort });
        if summaries {
            body["reasoning"]["summary"] = json!("auto");
        }
        body["include"] = json!(["reasoning.encrypted_content"]);
    }
    if let Some(max) = request.max_tokens {
        // OpenAI refuses fewer than 16 (a one-token check from login or doctor asks for 1).
        body["max_output_tokens"] = json!(max.max(16));
    }
    if let Some(schema) = &request.response_format {
        body["text"] = json!({"format": {"type": "json_schema", "name": "answer",
            "schema": schema, "strict": false}});
    }
    if !request.tools.is_empty() {
        let tools: Vec<Value> = request
            .tools
            .iter()
            .map(|t| {
                json!({"type": "function", "name": t.name, "description": t.description,
                "parameters": t.parameters, "strict": false})
            })
            .collect();
        body["tools"] = Value::Array(tools);
    }
    body
}

/// An answer's item as it can go back with `store: false`: a reasoning item without its
/// `id`, which would name an item the server never stored (OpenAI answers 404 "Item with id
/// 'rs_…' not found"); its encrypted content is what carries it. Transcripts recorded the
/// ids, so they are dropped here, on the way out.
fn unstored(mut item: Value) -> Value {
    if item["type"] == "reasoning"
        && let Some(fields) = item.as_object_mut()
    {
        fields.remove("id");
    }
    item
}

fn user_content(parts: &[UserPart]) -> Vec<Value> {
    parts
        .iter()
        .map(|part| match (part, part.as_text()) {
            (UserPart::Image { url }, _) => json!({"type": "input_image", "image_url": url}),
            (_, text) => json!({"type": "input_text", "text": text.unwrap_or_default()}),
        })
        .collect()
}

/// An answer's items: in the order they came, with reasoning, when the state is this
/// origin's; else its text and calls.
fn answer_items(
    text: &str,
    calls: &[ToolCall],
    carried: Option<&Carried>,
    origin: &Origin,
) -> Vec<Value> {
    carried::answer_slots(text, calls, carried, origin)
        .into_iter()
        .map(|slot| match slot {
            Slot::Kept(item) => item.clone(),
            Slot::Text(text) => json!({"type": "message", "role": "assistant",
                "content": [{"type": "output_text", "text": text}]}),
            Slot::Call(call) => json!({"type": "function_call", "call_id": call.id,
                "name": call.name, "arguments": call.arguments}),
        })
        .collect()
}

/// Reads Responses stream events.
pub(crate) struct Decode {
    origin: Origin,
    base_url: String,
    model: String,
    /// Calls being streamed: (item id, call).
    open_calls: Vec<(String, ToolCall)>,
    layout: Vec<Value>,
    calls: Vec<ToolCall>,
    reasoned: bool,
    complete: bool,
}

impl Decode {
    /// A decoder for an answer from `origin`.
    pub(crate) fn new(origin: Origin, base_url: &str, model: &str) -> Self {
        Self {
            origin,
            base_url: base_url.to_string(),
            model: model.to_string(),
            open_calls: Vec::new(),
            layout: Vec::new(),
            calls: Vec::new(),
            reasoned: false,
            complete: false,
        }
    }

    fn added(&mut self, item: &Value, out: &mut Vec<ModelEvent>) {
        if item["type"] != "function_call" {
            return;
        }
        let call_id = item["call_id"].as_str().unwrap_or_default();
        let name = item["name"].as_str().unwrap_or_default();
        let item_id = item["id"].as_str().unwrap_or(call_id);
        // A call shown early keeps its id: one without, or with a taken one, is shown when
        // complete instead.
        let taken = self
            .calls
            .iter()
            .chain(self.open_calls.iter().map(|(_, c)| c))
            .any(|c| c.id == call_id);
        if !call_id.is_empty() && !taken {
            out.push(ModelEvent::CallStarted {
                id: call_id.to_string(),
                name: name.to_string(),
            });
        }
        let call = ToolCall::new(
            call_id,
            name,
            item["arguments"].as_str().unwrap_or_default(),
        );
        self.open_calls.push((item_id.to_string(), call));
    }

    fn arguments(&mut self, item_id: &str, delta: &str) {
        if let Some((_, call)) = self.open_calls.iter_mut().find(|(id, _)| id == item_id) {
            call.arguments.push_str(delta);
        }
    }

    /// An item is complete: it takes its place in the answer.
    fn done(&mut self, item: &Value) {
        match item["type"].as_str() {
            Some("function_call") => {
                let item_id = item["id"].as_str();
                let call_id = item["call_id"].as_str().unwrap_or_default();
                let streamed = self
                    .open_calls
                    .iter()
                    .position(|(id, c)| Some(id.as_str()) == item_id || c.id == call_id)
                    .map(|n| self.open_calls.remove(n).1);
                let mut call = streamed.unwrap_or_else(|| {
                    ToolCall::new(call_id, item["name"].as_str().unwrap_or_default(), "")
                });
                if let Some(whole) = item["arguments"].as_str().filter(|a| !a.is_empty()) {
                    call.arguments = whole.to_string();
                }
                if call.arguments.trim().is_empty() {
                    call.arguments = "{}".into();
                }
                self.layout.push(carried::call_entry(&call.id));
                self.calls.push(call);
            }
            Some("message") => {
                let bytes: usize = item["content"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|part| part["text"].as_str().or(part["refusal"].as_str()))
                    .map(str::len)
                    .sum();
                if bytes > 0 {
                    self.layout.push(carried::text_entry(bytes));
                }
            }
            // Only an item that carries its reasoning can go back with nothing stored on the
            // server: its encrypted content (OpenAI) or its text (llama-server, vLLM).
            Some("reasoning") if replayable(item) => {
                let mut item = item.clone();
                if let Some(fields) = item.as_object_mut() {
                    fields.remove("status");
                }
                self.reasoned = true;
                self.layout.push(item);
            }
            _ => {}
        }
    }

    fn completed(&mut self, response: &Value, out: &mut Vec<ModelEvent>) {
        self.complete = true;
        // Calls whose `done` never came (some servers skip it) still count, as streamed.
        for (_, call) in std::mem::take(&mut self.open_calls) {
            self.layout.push(carried::call_entry(&call.id));
            self.calls.push(call);
        }
        let mut calls = std::mem::take(&mut self.calls);
        crate::wire::ids::unique_ids(&mut calls);
        carried::relabel_calls(&mut self.layout, &calls);
        let called = !calls.is_empty();
        if called {
            out.push(ModelEvent::ToolCalls(calls));
        }
        if self.reasoned {
            out.push(ModelEvent::Carried(Carried {
                origin: self.origin.clone(),
                data: json!({ "layout": std::mem::take(&mut self.layout) }),
            }));
        }
        let finish = match (
            response["status"].as_str(),
            response["incomplete_details"]["reason"].as_str(),
        ) {
            (Some("incomplete"), Some("content_filter")) => FinishReason::ContentFilter,
            (Some("incomplete"), _) => FinishReason::Length,
            _ if called => FinishReason::ToolCalls,
            _ => FinishReason::Stop,
        };
        out.push(ModelEvent::Finish(finish));
        let usage = &response["usage"];
        if usage.is_object() {
            let n = |v: &Value| v.as_u64().unwrap_or(0);
            out.push(ModelEvent::Usage(Usage {
                prompt_tokens: n(&usage["input_tokens"]),
                completion_tokens: n(&usage["output_tokens"]),
                cached_tokens: n(&usage["input_tokens_details"]["cached_tokens"]),
                reasoning_tokens: n(&usage["output_tokens_details"]["reasoning_tokens"]),
                cost: usage["cost"]
                    .as_f64()
                    .filter(|c| c.is_finite() && *c >= 0.0),
            }));
        }
    }

    fn failed(&self, error: &Value) -> ModelError {
        ModelError::from_stream_error(&self.base_url, &self.model, error)
    }
}

/// Whether a reasoning item can be sent back with `store: false`.
fn replayable(item: &Value) -> bool {
    let encrypted = item["encrypted_content"]
        .as_str()
        .is_some_and(|e| !e.is_empty());
    let content = item["content"].as_array().is_some_and(|c| !c.is_empty());
    encrypted || content
}

impl Decoder for Decode {
    fn event(&mut self, event: Option<&str>, data: &str) -> Result<Vec<ModelEvent>, ModelError> {
        let value: Value =
            serde_json::from_str(data).map_err(|e| super::unreadable(&self.base_url, &e, data))?;
        let kind = value["type"].as_str().or(event).unwrap_or_default();
        let mut out = Vec::new();
        let delta = || value["delta"].as_str().unwrap_or_default().to_string();
        match kind {
            "response.output_item.added" => self.added(&value["item"], &mut out),
            "response.output_text.delta" | "response.refusal.delta" => {
                let t = delta();
                if !t.is_empty() {
                    out.push(ModelEvent::Text(t));
                }
            }
            "response.reasoning_summary_text.delta" | "response.reasoning_text.delta" => {
                let t = delta();
                if !t.is_empty() {
                    out.push(ModelEvent::Reasoning(t));
                }
            }
            "response.reasoning_summary_part.added"
                if value["summary_index"].as_u64() > Some(0) =>
            {
                out.push(ModelEvent::Reasoning("\n\n".into()));
            }
            "response.function_call_arguments.delta" => {
                self.arguments(value["item_id"].as_str().unwrap_or_default(), &delta());
            }
            "response.output_item.done" => self.done(&value["item"]),
            "response.completed" | "response.incomplete" => {
                self.completed(&value["response"], &mut out);
            }
            "response.failed" => {
                let error = &value["response"]["error"];
                return Err(self.failed(if error.is_null() { &value } else { error }));
            }
            "error" => return Err(self.failed(&value)),
            _ if value.get("error").is_some_and(|e| !e.is_null()) => {
                return Err(self.failed(&value));
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
#[path = "responses_tests.rs"]
mod tests;
