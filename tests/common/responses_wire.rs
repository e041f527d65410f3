//! The OpenAI Responses API on the mock: a scripted chat-completions stream translated into
//! the Responses API's SSE events, and the API's rules on `input` enforced with its errors.
//!
//! Translation: every event has a rising `sequence_number` (from 0); `response.created` and
//! `response.in_progress` come before the first chunk's events; reasoning becomes a
//! `reasoning` item (`rs_mock_N_O`, a summary streamed as `reasoning_summary_text` deltas,
//! `encrypted_content` `enc-` + [`fnv_hex`] of the text when the request's `include` asks for
//! `reasoning.encrypted_content`), content a `message` item (`msg_mock_N_O`), each tool call
//! a `function_call` item (`fc_mock_N_O`, `call_id` as scripted); N is the request's number,
//! O the item's output index. The finish closes the open item and sends `response.completed`
//! (`response.incomplete` for `length`, reason `max_output_tokens`, and for `content_filter`,
//! reason `content_filter`); an `error` chunk becomes `response.failed`.
//!
//! Rules, in this order (see [`check`]): no `messages`, `input` required; under
//! `store: false` an input item of type `reasoning` carries no `id` (404 "Item with id … not
//! found": nothing was stored under it), and is known by its `encrypted_content`, which must
//! be one the mock issued (400 when it is not); with `store: true` an issued item may come
//! back by its id, its encrypted content unchanged if sent; a function call the mock issued
//! after a reasoning item comes back after that reasoning item (since the last user message);
//! every `function_call_output` follows its `function_call`.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use super::mock_model::{Piece, Recorded, content_text};
use super::wire::{Part, Usage, Wire, each_chunk, fnv_hex, parts, sse};

/// What the served replies sent.
#[derive(Debug, Default)]
pub(crate) struct Issued {
    /// Every reasoning item: its id and the `encrypted_content` it went out with.
    reasoning: HashMap<String, Option<String>>,
    /// A function call that followed a reasoning item, by call id: its item id and the
    /// reasoning item's id.
    calls: HashMap<String, (String, String)>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Reasoning,
    Message,
    Call,
}

/// The item being streamed.
struct Open {
    kind: Kind,
    output: usize,
    id: String,
    text: String,
    /// The call's index, call id and name.
    call: Option<(u64, String, String)>,
}

/// One reply's translation.
pub(crate) struct Translator {
    n: usize,
    encrypted: bool,
    usage: Usage,
    issued: Arc<Mutex<Issued>>,
    sequence: u64,
    started: bool,
    open: Option<Open>,
    /// The finished items, in their done form.
    output: Vec<Value>,
    /// Each call index's (call id, name).
    calls: Vec<(u64, String, String)>,
    /// The last reasoning item finished.
    reasoning: Option<String>,
    noted: Issued,
}

impl Translator {
    /// The translation of the reply to the `n`th request, `body`.
    pub(crate) fn new(n: usize, body: &Value, issued: Arc<Mutex<Issued>>) -> Translator {
        let include = body["include"].as_array().cloned().unwrap_or_default();
        Translator {
            n,
            encrypted: include.iter().any(|i| i == "reasoning.encrypted_content"),
            usage: Usage::default(),
            issued,
            sequence: 0,
            started: false,
            open: None,
            output: Vec::new(),
            calls: Vec::new(),
            reasoning: None,
            noted: Issued::default(),
        }
    }

    fn event(&mut self, out: &mut Vec<Value>, kind: &str, mut data: Value) {
        data["type"] = json!(kind);
        data["sequence_number"] = json!(self.sequence);
        self.sequence += 1;
        out.push(data);
    }

    fn response(&self, status: &str) -> Value {
        json!({"id": format!("resp_mock_{}", self.n), "object": "response", "status": status,
               "output": self.output})
    }

    fn start(&mut self, out: &mut Vec<Value>) {
        if self.started {
            return;
        }
        self.started = true;
        for kind in ["response.created", "response.in_progress"] {
            let response = self.response("in_progress");
            self.event(out, kind, json!({ "response": response }));
        }
    }

    /// Starts an item of `kind` (closing the open one) unless one is open already.
    fn begin(&mut self, kind: Kind, call: Option<(u64, String, String)>, out: &mut Vec<Value>) {
        let same_call = |open: &Open| open.call.as_ref().map(|c| c.0) == call.as_ref().map(|c| c.0);
        if self
            .open
            .as_ref()
            .is_some_and(|o| o.kind == kind && same_call(o))
        {
            return;
        }
        self.close(out);
        let output = self.output.len();
        let prefix = match kind {
            Kind::Reasoning => "rs",
            Kind::Message => "msg",
            Kind::Call => "fc",
        };
        let id = format!("{prefix}_mock_{}_{output}", self.n);
        let (item, part) = match (kind, &call) {
            (Kind::Reasoning, _) => (
                json!({"type": "reasoning", "id": id, "summary": []}),
                Some((
                    "response.reasoning_summary_part.added",
                    json!({"summary_index": 0, "part": {"type": "summary_text", "text": ""}}),
                )),
            ),
            (Kind::Message, _) => (
                json!({"type": "message", "id": id, "role": "assistant",
                       "status": "in_progress", "content": []}),
                Some((
                    "response.content_part.added",
                    json!({"content_index": 0,
                      "part": {"type": "output_text", "text": "", "annotations": []}}),
                )),
            ),
            (Kind::Call, call) => {
                let (_, call_id, name) = call.clone().unwrap_or_default();
                (
                    json!({"type": "function_call", "id": id, "call_id": call_id, "name": name,
                        "arguments": "", "status": "in_progress"}),
                    None,
                )
            }
        };
        self.event(
            out,
            "response.output_item.added",
            json!({"output_index": output, "item": item}),
        );
        if let Some((kind, mut data)) = part {
            data["item_id"] = json!(id);
            data["output_index"] = json!(output);
            self.event(out, kind, data);
        }
        self.open = Some(Open {
            kind,
            output,
            id,
            text: String::new(),
            call,
        });
    }

    fn delta(&mut self, piece: &str, out: &mut Vec<Value>) {
        let Some(open) = &mut self.open else { return };
        open.text.push_str(piece);
        let mut data = json!({"item_id": open.id, "output_index": open.output, "delta": piece});
        let kind = match open.kind {
            Kind::Reasoning => {
                data["summary_index"] = json!(0);
                "response.reasoning_summary_text.delta"
            }
            Kind::Message => {
                data["content_index"] = json!(0);
                "response.output_text.delta"
            }
            Kind::Call => "response.function_call_arguments.delta",
        };
        self.event(out, kind, data);
    }

    fn close(&mut self, out: &mut Vec<Value>) {
        let Some(open) = self.open.take() else {
            return;
        };
        let item = match open.kind {
            Kind::Reasoning => self.close_reasoning(&open, out),
            Kind::Message => self.close_message(&open, out),
            Kind::Call => self.close_call(&open, out),
        };
        let done = json!({"output_index": open.output, "item": item});
        self.event(out, "response.output_item.done", done);
        self.output.push(item);
    }

    /// `extra` with the open item's `item_id` and `output_index`.
    fn at(open: &Open, extra: Value) -> Value {
        let mut data = json!({"item_id": open.id, "output_index": open.output});
        for (k, v) in extra.as_object().into_iter().flatten() {
            data[k] = v.clone();
        }
        data
    }

    fn close_reasoning(&mut self, open: &Open, out: &mut Vec<Value>) -> Value {
        let (id, text) = (&open.id, &open.text);
        let part = json!({"type": "summary_text", "text": text});
        let done = Self::at(open, json!({"summary_index": 0, "text": text}));
        self.event(out, "response.reasoning_summary_text.done", done);
        let done = Self::at(open, json!({"summary_index": 0, "part": part}));
        self.event(out, "response.reasoning_summary_part.done", done);
        let mut item = json!({"type": "reasoning", "id": id, "summary": [part]});
        let encrypted = self.encrypted.then(|| format!("enc-{}", fnv_hex(text)));
        if let Some(e) = &encrypted {
            item["encrypted_content"] = json!(e);
        }
        self.noted.reasoning.insert(id.clone(), encrypted);
        self.reasoning = Some(id.clone());
        item
    }

    fn close_message(&mut self, open: &Open, out: &mut Vec<Value>) -> Value {
        let part = json!({"type": "output_text", "text": open.text, "annotations": []});
        let done = Self::at(open, json!({"content_index": 0, "text": open.text}));
        self.event(out, "response.output_text.done", done);
        let done = Self::at(open, json!({"content_index": 0, "part": part}));
        self.event(out, "response.content_part.done", done);
        json!({"type": "message", "id": open.id, "role": "assistant", "status": "completed",
               "content": [part]})
    }

    fn close_call(&mut self, open: &Open, out: &mut Vec<Value>) -> Value {
        let (_, call_id, name) = open.call.clone().unwrap_or_default();
        let done = Self::at(open, json!({"arguments": open.text}));
        self.event(out, "response.function_call_arguments.done", done);
        if let Some(reasoning) = &self.reasoning {
            let needs = (open.id.clone(), reasoning.clone());
            self.noted.calls.insert(call_id.clone(), needs);
        }
        json!({"type": "function_call", "id": open.id, "call_id": call_id, "name": name,
               "arguments": open.text, "status": "completed"})
    }

    fn finish(&mut self, reason: &str, out: &mut Vec<Value>) {
        self.close(out);
        let u = self.usage;
        let incomplete = match reason {
            "length" => Some("max_output_tokens"),
            "content_filter" => Some("content_filter"),
            _ => None,
        };
        let mut response = self.response(if incomplete.is_some() {
            "incomplete"
        } else {
            "completed"
        });
        response["incomplete_details"] = match incomplete {
            Some(reason) => json!({ "reason": reason }),
            None => Value::Null,
        };
        response["usage"] = json!({"input_tokens": u.prompt,
            "input_tokens_details": {"cached_tokens": u.cached},
            "output_tokens": u.completion, "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": u.prompt + u.completion});
        let kind = if incomplete.is_some() {
            "response.incomplete"
        } else {
            "response.completed"
        };
        self.event(out, kind, json!({ "response": response }));
    }

    fn part(&mut self, part: Part, out: &mut Vec<Value>) {
        match part {
            Part::Reasoning(r) => {
                self.begin(Kind::Reasoning, None, out);
                self.delta(&r, out);
            }
            Part::Text(t) => {
                self.begin(Kind::Message, None, out);
                self.delta(&t, out);
            }
            Part::Call {
                index,
                id,
                name,
                arguments,
            } => {
                if !self.calls.iter().any(|(c, ..)| *c == index) {
                    let (id, name) = (id.unwrap_or_default(), name.unwrap_or_default());
                    self.calls.push((index, id, name));
                }
                let call = self.calls.iter().find(|(c, ..)| *c == index).cloned();
                self.begin(Kind::Call, call, out);
                if !arguments.is_empty() {
                    self.delta(&arguments, out);
                }
            }
            Part::Finish(reason) => self.finish(&reason, out),
            Part::Error(message, _) => {
                let mut response = self.response("failed");
                response["error"] = json!({"code": "server_error", "message": message});
                self.event(out, "response.failed", json!({ "response": response }));
            }
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
            for part in parts(chunk) {
                self.part(part, &mut events);
            }
            joined(&events)
        });
        let noted = std::mem::take(&mut self.noted);
        let mut issued = self.issued.lock().unwrap();
        issued.reasoning.extend(noted.reasoning);
        issued.calls.extend(noted.calls);
        out
    }

    fn flood(&mut self, t: &str) -> String {
        let mut events = Vec::new();
        self.start(&mut events);
        self.begin(Kind::Message, None, &mut events);
        self.delta(t, &mut events);
        joined(&events)
    }
}

// ---- requests -------------------------------------------------------------------------

/// `instructions` (or, without them, the first system or developer message in `input`).
pub(crate) fn system_prompt(body: &Value) -> String {
    if let Some(instructions) = body["instructions"].as_str() {
        return instructions.to_string();
    }
    let input = body["input"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    input
        .iter()
        .find(|i| i["role"] == "system" || i["role"] == "developer")
        .map(|i| content_text(&i["content"]))
        .unwrap_or_default()
}

/// The last user message's text: a string `input` itself; else the last input item with role
/// `user`: its string content, or its `input_text` parts joined with newlines.
pub(crate) fn last_user_text(body: &Value) -> String {
    if let Some(input) = body["input"].as_str() {
        return input.to_string();
    }
    let input = body["input"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    let Some(last) = input.iter().rev().find(|i| i["role"] == "user") else {
        return String::new();
    };
    match &last["content"] {
        Value::Array(parts) => parts
            .iter()
            .filter(|p| p["type"] == "input_text")
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        other => content_text(other),
    }
}

fn refusal(status: u16, message: &str, param: Option<&str>) -> Option<(u16, String)> {
    let body = json!({"error": {"message": message, "type": "invalid_request_error",
                                "param": param, "code": null}});
    Some((status, body.to_string()))
}

/// The Responses API's refusal of `request`, when it breaks a rule.
pub(crate) fn check(request: &Recorded, issued: &Issued) -> Option<(u16, String)> {
    let body = &request.body;
    if body.get("messages").is_some() {
        return refusal(400, "Unknown parameter: 'messages'.", Some("messages"));
    }
    let Some(input) = body.get("input").filter(|i| !i.is_null()) else {
        return refusal(400, "Missing required parameter: 'input'.", Some("input"));
    };
    let items = input.as_array().map(Vec::as_slice).unwrap_or_default();
    let store_off = body["store"] == false;
    // Reasoning items since the last user message, and the calls so far.
    let mut reasoning: Vec<&str> = Vec::new();
    let mut calls: HashSet<&str> = HashSet::new();
    for item in items {
        if item["role"] == "user" {
            reasoning.clear();
        }
        let id = item["id"].as_str().unwrap_or_default();
        let call_id = item["call_id"].as_str().unwrap_or_default();
        match item["type"].as_str().unwrap_or_default() {
            "reasoning" => {
                match reasoning_item(id, item["encrypted_content"].as_str(), store_off, issued) {
                    Ok(known) => reasoning.extend(known),
                    Err(refused) => return Some(refused),
                }
            }
            "function_call" => {
                if let Some((fc, rs)) = issued.calls.get(call_id)
                    && !reasoning.contains(&rs.as_str())
                {
                    let message = format!(
                        "Item '{fc}' of type 'function_call' was provided without its required 'reasoning' item: '{rs}'."
                    );
                    return refusal(400, &message, None);
                }
                calls.insert(call_id);
            }
            "function_call_output" if !calls.contains(call_id) => {
                let message =
                    format!("No tool call found for function call output with call_id {call_id}.");
                return refusal(400, &message, Some("input"));
            }
            _ => {}
        }
    }
    None
}

/// Which issued reasoning item an input item of type `reasoning` is (`None`: one the mock
/// never issued), with `id` (empty when none) and `encrypted` content, or the refusal: an
/// id under `store: false` names an item never stored; encrypted content the mock did not
/// issue, or changed, cannot be verified.
fn reasoning_item<'a>(
    id: &'a str,
    encrypted: Option<&str>,
    store_off: bool,
    issued: &'a Issued,
) -> Result<Option<&'a str>, (u16, String)> {
    let refused =
        |status, message: String, param| Err(refusal(status, &message, param).unwrap_or_default());
    if store_off && !id.is_empty() {
        let message = format!(
            "Item with id '{id}' not found. Items are not persisted when `store` is set to false. Try again with `store` set to true, or remove this item from your input."
        );
        return refused(404, message, Some("input"));
    }
    if !id.is_empty() {
        return match (issued.reasoning.get(id), encrypted) {
            (Some(sent), Some(got)) if sent.as_deref() != Some(got) => {
                let message = format!("The encrypted content for item {id} could not be verified.");
                refused(400, message, None)
            }
            (Some(_), _) => Ok(Some(id)),
            (None, _) => Ok(None),
        };
    }
    let Some(got) = encrypted else {
        return Ok(None);
    };
    let known = issued
        .reasoning
        .iter()
        .find(|(_, sent)| sent.as_deref() == Some(got))
        .map(|(id, _)| id.as_str());
    match known {
        Some(id) => Ok(Some(id)),
        None => refused(
            400,
            "The encrypted content could not be verified.".into(),
            None,
        ),
    }
}
