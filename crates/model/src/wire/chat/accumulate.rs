//! Joins tool-call fragments into whole calls. Servers split a call's id, name and JSON
//! arguments across many chunks; most number them with `index`, some (older llama.cpp,
//! some proxies) leave `index` out, in which case a fragment with a new `id` starts a call
//! and one without continues the last.

use serde::Deserialize;

use crate::conversation::ToolCall;

/// A fragment of a tool call; the pieces are joined by `index` (or by position when absent).
#[derive(Debug, Default, Deserialize)]
pub(crate) struct ToolCallDelta {
    /// Which call this fragment belongs to.
    #[serde(default)]
    pub(crate) index: Option<u32>,
    /// The call id, on the first fragment.
    #[serde(default)]
    pub(crate) id: Option<String>,
    /// Name and argument text.
    #[serde(default)]
    pub(crate) function: Option<FunctionDelta>,
    /// Provider extras on the call (Gemini's `extra_content`), kept to send back.
    #[serde(default)]
    pub(crate) extra_content: Option<serde_json::Value>,
}

/// Function name and a piece of its JSON arguments.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct FunctionDelta {
    /// The tool name, on the first fragment.
    #[serde(default)]
    pub(crate) name: Option<String>,
    /// A piece of the arguments' JSON text.
    #[serde(default)]
    pub(crate) arguments: Option<String>,
}

/// Collects fragments in arrival order.
#[derive(Debug, Default)]
pub(crate) struct ToolCallAccumulator {
    calls: Vec<(Option<u32>, ToolCall)>,
    /// How many calls have been told as started (see [`ToolCallAccumulator::push`]).
    started: usize,
}

impl ToolCallAccumulator {
    /// Adds one fragment; returns the id and name of a call this fragment starts (its id and
    /// name both known, the calls before it started too), so it can be shown while its
    /// arguments stream. Calls without an id from the server are never told early: their id
    /// is only made up at the end.
    pub(crate) fn push(&mut self, delta: ToolCallDelta) -> Option<(String, String)> {
        self.add(delta);
        let (_, next) = self.calls.get(self.started)?;
        if next.id.is_empty()
            || next.name.is_empty()
            || self.calls[..self.started]
                .iter()
                .any(|(_, c)| c.id == next.id)
        {
            return None;
        }
        self.started += 1;
        Some((next.id.clone(), next.name.clone()))
    }

    fn add(&mut self, delta: ToolCallDelta) {
        let slot = match delta.index {
            Some(index) => self.calls.iter().position(|(i, _)| *i == Some(index)),
            None => {
                let starts_new = delta.id.as_ref().is_some_and(|id| {
                    self.calls
                        .last()
                        .is_none_or(|(_, c)| !c.id.is_empty() && &c.id != id)
                });
                if starts_new {
                    None
                } else {
                    self.calls.len().checked_sub(1)
                }
            }
        };
        let slot = match slot {
            Some(slot) => slot,
            None => {
                self.calls.push((delta.index, ToolCall::new("", "", "")));
                self.calls.len() - 1
            }
        };
        let call = &mut self.calls[slot].1;
        if let Some(id) = delta.id.filter(|id| !id.is_empty()) {
            call.id = id;
        }
        if let Some(extra) = delta.extra_content.filter(|e| !e.is_null()) {
            call.extra = Some(Box::new(extra));
        }
        if let Some(function) = delta.function {
            if let Some(name) = function.name {
                // Most servers send the name once; a few repeat it whole on every fragment.
                if !call.name.ends_with(&name) {
                    call.name.push_str(&name);
                }
            }
            if let Some(arguments) = function.arguments {
                call.arguments.push_str(&arguments);
            }
        }
    }

    /// The finished calls, in the model's order. A call without an id, or with one an
    /// earlier call of the response already has (each result must answer one call), gets
    /// `call_N` from its position.
    pub(crate) fn finish(self) -> Vec<ToolCall> {
        let mut calls: Vec<ToolCall> = self.calls.into_iter().map(|(_, call)| call).collect();
        crate::wire::ids::unique_ids(&mut calls);
        calls
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds the tool-call fragments of one streamed chunk, as a server sends it.
    fn feed(acc: &mut ToolCallAccumulator, json: &str) {
        let chunk: serde_json::Value = serde_json::from_str(json).unwrap();
        for choice in chunk["choices"].as_array().unwrap() {
            for d in choice["delta"]["tool_calls"].as_array().unwrap() {
                acc.push(serde_json::from_value(d.clone()).unwrap());
            }
        }
    }

    #[test]
    fn indexed_fragments_interleave() {
        let mut acc = ToolCallAccumulator::default();
        feed(
            &mut acc,
            r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"read_file","arguments":""}}]}}]}"#,
        );
        feed(
            &mut acc,
            r#"{"choices":[{"delta":{"tool_calls":[{"index":1,"id":"b","function":{"name":"glob","arguments":"{\"pat"}}]}}]}"#,
        );
        feed(
            &mut acc,
            r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"path\":\"x\"}"}}]}}]}"#,
        );
        feed(
            &mut acc,
            r#"{"choices":[{"delta":{"tool_calls":[{"index":1,"function":{"arguments":"tern\":\"*\"}"}}]}}]}"#,
        );
        let calls = acc.finish();
        assert_eq!(calls[0], ToolCall::new("a", "read_file", r#"{"path":"x"}"#));
        assert_eq!(calls[1].arguments, r#"{"pattern":"*"}"#);
    }

    #[test]
    fn missing_index_uses_ids_and_order() {
        let mut acc = ToolCallAccumulator::default();
        feed(
            &mut acc,
            r#"{"choices":[{"delta":{"tool_calls":[{"id":"a","function":{"name":"one","arguments":"{"}}]}}]}"#,
        );
        feed(
            &mut acc,
            r#"{"choices":[{"delta":{"tool_calls":[{"function":{"arguments":"}"}}]}}]}"#,
        );
        feed(
            &mut acc,
            r#"{"choices":[{"delta":{"tool_calls":[{"id":"b","function":{"name":"two","arguments":"[]"}}]}}]}"#,
        );
        let calls = acc.finish();
        assert_eq!(calls.len(), 2);
        assert_eq!(
            (calls[0].name.as_str(), calls[0].arguments.as_str()),
            ("one", "{}")
        );
        assert_eq!((calls[1].id.as_str(), calls[1].name.as_str()), ("b", "two"));
    }

    #[test]
    fn calls_without_ids_get_one() {
        let mut acc = ToolCallAccumulator::default();
        feed(
            &mut acc,
            r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"name":"x","arguments":"{}"}}]}}]}"#,
        );
        assert_eq!(acc.finish()[0].id, "call_0");
    }

    #[test]
    fn an_id_repeated_within_a_response_is_replaced() {
        let mut acc = ToolCallAccumulator::default();
        feed(
            &mut acc,
            r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"same","function":{"name":"x","arguments":"{}"}},{"index":1,"id":"same","function":{"name":"y","arguments":"{}"}},{"index":2,"function":{"name":"z","arguments":"{}"}}]}}]}"#,
        );
        let ids: Vec<String> = acc.finish().into_iter().map(|c| c.id).collect();
        assert_eq!(ids, ["same", "call_1", "call_2"]);
    }
}
