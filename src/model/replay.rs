//! The `replay` provider: scripted model turns from a fixture file, so tandem runs offline
//! (README's first command, demos, editor setup checks) with no model server at all.
//!
//! Fixture format (`fixtures/demo/*.json`):
//! ```json
//! { "description": "…",
//!   "turns": [ { "delay_ms": 15,
//!                "events": [ {"thought": "…"}, {"text": "…"},
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

use super::{ErrorClass, EventStream, ModelClient, ModelError, ModelEvent, ModelRequest, Usage};

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
    pub events: Vec<ScriptEvent>,
    /// The finish reason sent at the end.
    #[serde(default = "default_finish")]
    pub finish_reason: String,
}

fn default_finish() -> String {
    "stop".to_string()
}

/// One scripted event.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum ScriptEvent {
    /// A piece of reasoning.
    Thought(String),
    /// A piece of the answer.
    Text(String),
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
    pub fn load(path: &Path) -> Result<Self, ModelError> {
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
            let mut events: Vec<ModelEvent> = turn
                .events
                .into_iter()
                .map(|e| match e {
                    ScriptEvent::Thought(t) => ModelEvent::Reasoning(t),
                    ScriptEvent::Text(t) => ModelEvent::Text(t),
                    ScriptEvent::Usage {
                        prompt_tokens,
                        completion_tokens,
                    } => ModelEvent::Usage(Usage {
                        prompt_tokens,
                        completion_tokens,
                    }),
                })
                .collect();
            events.push(ModelEvent::Finish(turn.finish_reason));
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
        };
        let first: Vec<_> = client.open(req.clone()).await.unwrap().collect().await;
        assert_eq!(first.len(), 2);
        let second: Vec<_> = client.open(req.clone()).await.unwrap().collect().await;
        assert_eq!(
            second.last().unwrap().as_ref().unwrap(),
            &ModelEvent::Finish("length".into())
        );
        let third: Vec<_> = client.open(req).await.unwrap().collect().await;
        assert_eq!(third, first);
    }

    #[test]
    fn empty_script_is_rejected() {
        let script: Script = serde_json::from_str(r#"{"turns":[]}"#).unwrap();
        assert!(ReplayClient::new(script).is_err());
    }
}
