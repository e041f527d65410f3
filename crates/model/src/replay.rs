//! The `replay` provider: scripted model turns from a fixture file, so tandem runs offline
//! (README's first command, demos, editor setup checks) with no model server at all.
//!
//! Fixture format (`fixtures/demo/*.json`):
//! ```json
//! { "description": "…",
//!   "turns": [ { "delay_ms": 15,
//!                "events": [ {"thought": "…"}, {"text": "…"},
//!                            {"tool_call": {"name": "read_file", "arguments": {"path": "README.md"}}},
//!                            {"usage": {"prompt_tokens": 10, "completion_tokens": 5}} ],
//!                "finish_reason": "stop" } ] }
//! ```
//! Each model request is answered by the next turn; after the last one it starts over.

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use futures::StreamExt;
use futures::future::BoxFuture;
use serde::Deserialize;

use super::{
    ErrorClass, EventStream, ModelClient, ModelError, ModelEvent, ModelRequest, ToolCall, Usage,
};
use crate::types::FinishReason;

/// A whole fixture file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Script {
    /// What the fixture demonstrates.
    #[serde(default)]
    pub description: String,
    /// Model responses, served in order.
    pub turns: Vec<ScriptTurn>,
}

/// One model response.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScriptTurn {
    /// Pause before each event, to look like a real stream.
    #[serde(default)]
    pub delay_ms: u64,
    /// What the model "says", in order.
    pub(crate) events: Vec<ScriptEvent>,
    /// The finish reason sent at the end (default `tool_calls` when the turn calls tools,
    /// `stop` otherwise).
    #[serde(default)]
    pub(crate) finish_reason: Option<String>,
}

/// One scripted event.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub(crate) enum ScriptEvent {
    /// A piece of reasoning.
    Thought(String),
    /// A piece of the answer.
    Text(String),
    /// A tool call, sent whole before the finish reason.
    ToolCall {
        /// The call id (default `call_N`).
        #[serde(default)]
        id: Option<String>,
        /// The tool.
        name: String,
        /// The arguments, as a JSON value.
        arguments: serde_json::Value,
    },
    /// Token counts.
    Usage {
        /// Tokens in the request.
        prompt_tokens: u64,
        /// Tokens generated.
        completion_tokens: u64,
    },
}

/// A [`ModelClient`] that plays a [`Script`].
pub struct ReplayClient {
    script: Script,
    next: AtomicUsize,
}

impl ReplayClient {
    /// Reads and checks a fixture file.
    pub(crate) fn load(path: &Path) -> Result<Self, ModelError> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            ModelError::new(
                ErrorClass::Replay,
                format!("cannot read replay fixture {}: {e}", path.display()),
            )
        })?;
        let script: Script = serde_json::from_str(&text).map_err(|e| {
            ModelError::new(
                ErrorClass::Replay,
                format!("replay fixture {} is not valid: {e}", path.display()),
            )
        })?;
        Self::new(script).map_err(|e| {
            ModelError::new(
                ErrorClass::Replay,
                format!("{}: {}", path.display(), e.message),
            )
        })
    }

    /// Plays `script`; it needs at least one turn.
    pub fn new(script: Script) -> Result<Self, ModelError> {
        if script.turns.is_empty() {
            return Err(ModelError::new(
                ErrorClass::Replay,
                "replay fixture has no turns",
            ));
        }
        Ok(Self {
            script,
            next: AtomicUsize::new(0),
        })
    }
}

impl ModelClient for ReplayClient {
    fn open(&self, _request: ModelRequest) -> BoxFuture<'_, Result<EventStream, ModelError>> {
        let index = self.next.fetch_add(1, Ordering::Relaxed) % self.script.turns.len();
        let turn = self.script.turns[index].clone();
        Box::pin(async move {
            let delay = Duration::from_millis(turn.delay_ms);
            let mut events = Vec::new();
            let mut calls = Vec::new();
            let mut usage = None;
            for event in turn.events {
                match event {
                    ScriptEvent::Thought(t) => events.push(ModelEvent::Reasoning(t)),
                    ScriptEvent::Text(t) => events.push(ModelEvent::Text(t)),
                    ScriptEvent::ToolCall {
                        id,
                        name,
                        arguments,
                    } => calls.push(ToolCall::new(
                        id.unwrap_or_else(|| format!("call_{index}_{}", calls.len())),
                        name,
                        arguments.to_string(),
                    )),
                    ScriptEvent::Usage {
                        prompt_tokens,
                        completion_tokens,
                    } => {
                        usage = Some(Usage {
                            prompt_tokens,
                            completion_tokens,
                            ..Usage::default()
                        });
                    }
                }
            }
            let finish = turn.finish_reason.unwrap_or_else(|| {
                if calls.is_empty() {
                    "stop".into()
                } else {
                    "tool_calls".into()
                }
            });
            if !calls.is_empty() {
                events.push(ModelEvent::ToolCalls(calls));
            }
            events.push(ModelEvent::Finish(FinishReason::parse(&finish)));
            events.extend(usage.map(ModelEvent::Usage));
            let stream = futures::stream::iter(events).then(move |event| async move {
                if !delay.is_zero() {
                    tokio::time::sleep(delay).await;
                }
                Ok(event)
            });
            Ok(stream.boxed())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn turns_play_in_order_and_wrap() {
        let script: Script = serde_json::from_str(
            r#"{"turns":[{"events":[{"text":"one"}]},{"events":[{"thought":"hm"},{"text":"two"}],"finish_reason":"length"}]}"#,
        )
        .unwrap();
        let client = ReplayClient::new(script).unwrap();
        let req = ModelRequest {
            model: "replay".into(),
            messages: vec![],
            reasoning_effort: None,
            tools: vec![],
            max_tokens: None,
            response_format: None,
            cache_key: None,
        };
        let first: Vec<_> = client.open(req.clone()).await.unwrap().collect().await;
        assert_eq!(first.len(), 2);
        assert_eq!(
            first[1].as_ref().unwrap(),
            &ModelEvent::Finish(FinishReason::parse("stop"))
        );
        let second: Vec<_> = client.open(req.clone()).await.unwrap().collect().await;
        assert_eq!(
            second.last().unwrap().as_ref().unwrap(),
            &ModelEvent::Finish(FinishReason::parse("length"))
        );
        let third: Vec<_> = client.open(req).await.unwrap().collect().await;
        assert_eq!(third, first);
    }

    #[tokio::test]
    async fn tool_calls_come_whole_before_the_finish() {
        let script: Script = serde_json::from_str(
            r#"{"turns":[{"events":[{"text":"look"},{"tool_call":{"name":"read_file","arguments":{"path":"a"}}}]}]}"#,
        )
        .unwrap();
        let client = ReplayClient::new(script).unwrap();
        let req = ModelRequest {
            model: "r".into(),
            messages: vec![],
            reasoning_effort: None,
            tools: vec![],
            max_tokens: None,
            response_format: None,
            cache_key: None,
        };
        let events: Vec<_> = client
            .open(req)
            .await
            .unwrap()
            .map(Result::unwrap)
            .collect()
            .await;
        assert_eq!(
            events[1],
            ModelEvent::ToolCalls(vec![ToolCall::new(
                "call_0_0",
                "read_file",
                r#"{"path":"a"}"#
            )])
        );
        assert_eq!(events[2], ModelEvent::Finish(FinishReason::ToolCalls));
    }

    #[test]
    fn empty_script_is_rejected() {
        let script: Script = serde_json::from_str(r#"{"turns":[]}"#).unwrap();
        assert!(ReplayClient::new(script).is_err());
    }
}
