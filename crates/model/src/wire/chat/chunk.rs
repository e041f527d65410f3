//! Lenient chat-completions chunk and error types.
//!
//! Real servers differ from OpenAI in small ways: reasoning arrives as `reasoning_content`
//! (DeepSeek, vLLM, llama.cpp) or `reasoning` (Ollama, OpenRouter), `finish_reason` can be any
//! string, tool-call `index` may be missing, an `error` object may arrive inside a 200 stream,
//! error `code`s may be numbers and error bodies arrays (Gemini), and cached prompt tokens
//! are counted in three places (OpenAI's `prompt_tokens_details`, DeepSeek's
//! `prompt_cache_hit_tokens`, Moonshot's top-level `cached_tokens`). These types accept all
//! of that.
//!
//! What must go back to the server is gathered too (see [`Gathered`]): the name of the
//! reasoning field, OpenRouter's `reasoning_details`, and tool calls' `extra_content`.

use serde::Deserialize;
use serde_json::Value;

use super::accumulate::{ToolCallAccumulator, ToolCallDelta};
use crate::types::FinishReason;
use crate::{Carried, ModelEvent, Origin, Usage};

/// One `data:` line of the stream.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct Chunk {
    /// Usually one choice; empty on the final usage chunk.
    #[serde(default, deserialize_with = "null_as_default")]
    pub(crate) choices: Vec<ChunkChoice>,
    /// Present on the final chunk when `stream_options.include_usage` is honoured.
    #[serde(default)]
    pub(crate) usage: Option<ChunkUsage>,
    /// An error reported mid-stream with HTTP 200.
    #[serde(default)]
    pub(crate) error: Option<Value>,
}

/// A choice's delta.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct ChunkChoice {
    /// What changed.
    #[serde(default)]
    pub(crate) delta: Option<Delta>,
    /// Why the model stopped, on the last content chunk.
    #[serde(default)]
    pub(crate) finish_reason: Option<String>,
}

/// New content in a chunk.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct Delta {
    /// Visible answer text.
    #[serde(default)]
    pub(crate) content: Option<String>,
    /// Reasoning as DeepSeek, vLLM and llama.cpp name it.
    #[serde(default)]
    pub(crate) reasoning_content: Option<String>,
    /// Reasoning as Ollama and OpenRouter name it.
    #[serde(default)]
    pub(crate) reasoning: Option<String>,
    /// OpenRouter's structured reasoning (text, summaries, encrypted pieces with
    /// signatures), streamed as pieces keyed by `index`; it must come back unchanged.
    #[serde(default, deserialize_with = "null_as_default")]
    pub(crate) reasoning_details: Vec<Value>,
    /// A refusal message (OpenAI structured refusals).
    #[serde(default)]
    pub(crate) refusal: Option<String>,
    /// Tool-call fragments.
    #[serde(default, deserialize_with = "null_as_default")]
    pub(crate) tool_calls: Vec<ToolCallDelta>,
}

/// Usage as servers report it.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct ChunkUsage {
    /// Tokens in the request.
    #[serde(default)]
    pub(crate) prompt_tokens: Option<u64>,
    /// Tokens generated.
    #[serde(default)]
    pub(crate) completion_tokens: Option<u64>,
    /// `prompt_tokens_details.cached_tokens` (OpenAI, llama.cpp, vLLM, most compatible
    /// servers).
    #[serde(default)]
    pub(crate) prompt_tokens_details: Option<TokenDetails>,
    /// Prompt tokens DeepSeek served from its cache (`prompt_cache_hit_tokens`).
    #[serde(default)]
    pub(crate) prompt_cache_hit_tokens: Option<u64>,
    /// Prompt tokens DeepSeek did not find in its cache (`prompt_cache_miss_tokens`).
    #[serde(default)]
    pub(crate) prompt_cache_miss_tokens: Option<u64>,
    /// Cached prompt tokens as Moonshot (Kimi) reports them, at the top of `usage`.
    #[serde(default)]
    pub(crate) cached_tokens: Option<u64>,
    /// `completion_tokens_details.reasoning_tokens`.
    #[serde(default)]
    pub(crate) completion_tokens_details: Option<TokenDetails>,
    /// What the request cost in US dollars (OpenRouter).
    #[serde(default)]
    pub(crate) cost: Option<f64>,
}

/// Breakdowns some servers add to usage.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct TokenDetails {
    /// Cached prompt tokens.
    #[serde(default)]
    pub(crate) cached_tokens: Option<u64>,
    /// Reasoning tokens.
    #[serde(default)]
    pub(crate) reasoning_tokens: Option<u64>,
}

fn null_as_default<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Default + Deserialize<'de>,
{
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}

/// What one response's chunks leave for the end: its tool-call fragments and the state
/// that goes back to the server.
#[derive(Debug)]
pub(crate) struct Gathered {
    /// Tool-call fragments so far.
    pub(crate) calls: ToolCallAccumulator,
    /// Where this response comes from.
    origin: Origin,
    /// The field reasoning arrived in (`reasoning_content` or `reasoning`), which is where
    /// the server reads it back.
    field: Option<&'static str>,
    /// `reasoning_details` pieces, merged by index.
    details: Vec<Value>,
}

impl Gathered {
    /// Nothing gathered yet from a response of `origin`.
    pub(crate) fn new(origin: Origin) -> Self {
        Self {
            calls: ToolCallAccumulator::default(),
            origin,
            field: None,
            details: Vec::new(),
        }
    }

    /// The response's calls and state, emptied into `events` when a choice finishes.
    fn finish(&mut self, events: &mut Vec<ModelEvent>) {
        let calls = std::mem::take(&mut self.calls).finish();
        let extras = calls.iter().any(|c| c.extra.is_some());
        if !calls.is_empty() {
            events.push(ModelEvent::ToolCalls(calls));
        }
        if self.field.is_none() && self.details.is_empty() && !extras {
            return;
        }
        let mut data = serde_json::Map::new();
        if let Some(field) = self.field.take() {
            data.insert("reasoning_field".into(), Value::from(field));
        }
        if !self.details.is_empty() {
            data.insert(
                "reasoning_details".into(),
                Value::Array(std::mem::take(&mut self.details)),
            );
        }
        events.push(ModelEvent::Carried(Carried {
            origin: self.origin.clone(),
            data: Value::Object(data),
        }));
    }
}

impl Chunk {
    /// The model events this chunk carries, in order. Tool-call fragments and state to send
    /// back go into `gathered`, which is emptied into [`ModelEvent::ToolCalls`] and
    /// [`ModelEvent::Carried`] when the choice finishes.
    pub(crate) fn events(self, gathered: &mut Gathered) -> Vec<ModelEvent> {
        let mut events = Vec::new();
        for choice in self.choices {
            if let Some(delta) = choice.delta {
                let reasoning = match (delta.reasoning_content, delta.reasoning) {
                    (Some(r), _) => Some(("reasoning_content", r)),
                    (None, Some(r)) => Some(("reasoning", r)),
                    (None, None) => None,
                };
                if let Some((field, r)) = reasoning.filter(|(_, r)| !r.is_empty()) {
                    gathered.field.get_or_insert(field);
                    events.push(ModelEvent::Reasoning(r));
                }
                crate::carried::merge_indexed(&mut gathered.details, &delta.reasoning_details);
                if let Some(t) = delta.content.filter(|s| !s.is_empty()) {
                    events.push(ModelEvent::Text(t));
                }
                if let Some(t) = delta.refusal.filter(|s| !s.is_empty()) {
                    events.push(ModelEvent::Text(t));
                }
                for fragment in delta.tool_calls {
                    if let Some((id, name)) = gathered.calls.push(fragment) {
                        events.push(ModelEvent::CallStarted { id, name });
                    }
                }
            }
            if let Some(reason) = choice.finish_reason.filter(|s| !s.is_empty()) {
                gathered.finish(&mut events);
                events.push(ModelEvent::Finish(FinishReason::parse(&reason)));
            }
        }
        if let Some(u) = self.usage {
            events.push(ModelEvent::Usage(u.read()));
        }
        events
    }
}

impl ChunkUsage {
    /// The counts, wherever this server put them: the cached prompt tokens under
    /// `prompt_tokens_details` (OpenAI's place), else DeepSeek's `prompt_cache_hit_tokens`,
    /// else Moonshot's top-level `cached_tokens`; the prompt, when a server gives only
    /// DeepSeek's hits and misses, as their sum.
    fn read(self) -> Usage {
        let cached = self
            .prompt_tokens_details
            .and_then(|d| d.cached_tokens)
            .or(self.prompt_cache_hit_tokens)
            .or(self.cached_tokens);
        let split = match (self.prompt_cache_hit_tokens, self.prompt_cache_miss_tokens) {
            (Some(hit), Some(miss)) => Some(hit + miss),
            _ => None,
        };
        Usage {
            prompt_tokens: self.prompt_tokens.or(split).unwrap_or(0),
            completion_tokens: self.completion_tokens.unwrap_or(0),
            cached_tokens: cached.unwrap_or(0),
            reasoning_tokens: self
                .completion_tokens_details
                .and_then(|d| d.reasoning_tokens)
                .unwrap_or(0),
            cost: self.cost.filter(|c| c.is_finite() && *c >= 0.0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn origin() -> Origin {
        Origin {
            api: crate::conversation::Api::ChatCompletions,
            server: "http://s/v1".into(),
            model: "m".into(),
        }
    }

    fn events(json: &str) -> Vec<ModelEvent> {
        serde_json::from_str::<Chunk>(json)
            .unwrap()
            .events(&mut Gathered::new(origin()))
    }

    #[test]
    fn what_goes_back_is_gathered_until_the_finish() {
        let mut g = Gathered::new(origin());
        let mut all = Vec::new();
        for json in [
            r#"{"choices":[{"delta":{"reasoning":"hm","reasoning_details":[{"type":"reasoning.text","index":0,"text":"hm"}]}}]}"#,
            r#"{"choices":[{"delta":{"reasoning_details":[{"type":"reasoning.text","index":0,"text":"!","signature":"S"}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"c","function":{"name":"x","arguments":"{}"},"extra_content":{"google":{"thought_signature":"T"}}}]}}]}"#,
            r#"{"choices":[{"delta":{},"finish_reason":"tool_calls"}]}"#,
        ] {
            all.extend(serde_json::from_str::<Chunk>(json).unwrap().events(&mut g));
        }
        assert_eq!(
            all[1],
            ModelEvent::CallStarted {
                id: "c".into(),
                name: "x".into()
            }
        );
        let ModelEvent::ToolCalls(calls) = &all[2] else {
            panic!("{all:?}")
        };
        assert_eq!(
            calls[0].extra,
            Some(Box::new(
                serde_json::json!({"google": {"thought_signature": "T"}})
            ))
        );
        let ModelEvent::Carried(c) = &all[3] else {
            panic!("{all:?}")
        };
        assert_eq!(c.origin, origin());
        assert_eq!(
            c.data,
            serde_json::json!({"reasoning_field": "reasoning",
                "reasoning_details": [{"type": "reasoning.text", "index": 0, "text": "hm!", "signature": "S"}]})
        );
    }

    #[test]
    fn both_reasoning_names() {
        assert_eq!(
            events(r#"{"choices":[{"delta":{"reasoning_content":"a"}}]}"#),
            [ModelEvent::Reasoning("a".into())]
        );
        assert_eq!(
            events(r#"{"choices":[{"delta":{"reasoning":"b"}}]}"#),
            [ModelEvent::Reasoning("b".into())]
        );
    }

    #[test]
    fn any_finish_reason_and_null_fields() {
        assert_eq!(
            events(
                r#"{"choices":[{"delta":{"content":null,"tool_calls":null},"finish_reason":"eos"}]}"#
            ),
            [ModelEvent::Finish(FinishReason::parse("eos"))]
        );
        assert_eq!(
            events(r#"{"choices":null,"usage":{"prompt_tokens":3,"completion_tokens":4}}"#),
            [ModelEvent::Usage(Usage {
                prompt_tokens: 3,
                completion_tokens: 4,
                ..Usage::default()
            })]
        );
    }

    #[test]
    fn cached_tokens_in_each_servers_place() {
        let cached = |usage: &str| {
            let chunk = format!(r#"{{"choices":[],"usage":{usage}}}"#);
            match events(&chunk).as_slice() {
                [ModelEvent::Usage(u)] => (u.prompt_tokens, u.cached_tokens),
                other => panic!("{other:?}"),
            }
        };
        let openai = r#"{"prompt_tokens":90,"completion_tokens":1,"prompt_tokens_details":{"cached_tokens":64}}"#;
        assert_eq!(cached(openai), (90, 64));
        let deepseek = r#"{"prompt_tokens":90,"completion_tokens":1,"prompt_cache_hit_tokens":80,"prompt_cache_miss_tokens":10}"#;
        assert_eq!(cached(deepseek), (90, 80));
        let split =
            r#"{"completion_tokens":1,"prompt_cache_hit_tokens":80,"prompt_cache_miss_tokens":10}"#;
        assert_eq!(cached(split), (90, 80));
        let kimi = r#"{"prompt_tokens":90,"completion_tokens":1,"cached_tokens":32}"#;
        assert_eq!(cached(kimi), (90, 32));
        let none = r#"{"prompt_tokens":90,"completion_tokens":1,"prompt_tokens_details":null}"#;
        assert_eq!(cached(none), (90, 0));
    }

    #[test]
    fn tool_call_index_may_be_missing() {
        let c: Chunk = serde_json::from_str(
            r#"{"choices":[{"delta":{"tool_calls":[{"id":"c1","function":{"name":"x","arguments":"{"}}]}}]}"#,
        )
        .unwrap();
        let delta = c.choices[0].delta.as_ref().unwrap();
        assert_eq!(delta.tool_calls[0].index, None);
    }
}
