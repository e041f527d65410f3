//! A scripted model for in-process tests: each request plays the next [`Reply`] and is kept,
//! so a test asserts both what the turn did and what the model was sent.

use std::collections::VecDeque;
use std::sync::Arc;

use futures::StreamExt;
use futures::future::BoxFuture;
use parking_lot::Mutex;

use crate::model::{
    ErrorClass, EventStream, ModelClient, ModelError, ModelEvent, ModelRequest, ToolCall, Usage,
};
use crate::types::FinishReason;

/// What the model answers one request with.
pub enum Reply {
    /// These events, then the end of the stream.
    Events(Vec<ModelEvent>),
    /// The request fails before anything streams.
    Fails(ModelError),
    /// These events, then nothing more: the stream stays open (the turn must be cancelled).
    Hangs(Vec<ModelEvent>),
    /// The request is never answered at all: not even its headers come.
    Stalls,
    /// This reply once the gate opens (`Notify::notify_one`): a turn held at a known point.
    Gated(Arc<tokio::sync::Notify>, Box<Reply>),
}

impl Reply {
    /// An answer of `text`, finished with `stop` and a small usage report.
    pub fn text(text: &str) -> Self {
        Reply::Events(vec![
            ModelEvent::Text(text.into()),
            ModelEvent::Usage(Usage {
                prompt_tokens: 100,
                completion_tokens: 10,
                ..Usage::default()
            }),
            ModelEvent::Finish(FinishReason::Stop),
        ])
    }

    /// Tool calls (id, tool, JSON arguments), finished with `tool_calls`.
    pub fn calls(calls: &[(&str, &str, serde_json::Value)]) -> Self {
        let calls = calls
            .iter()
            .map(|(id, name, args)| ToolCall::new(*id, *name, args.to_string()))
            .collect();
        Reply::Events(vec![
            ModelEvent::ToolCalls(calls),
            ModelEvent::Finish(FinishReason::ToolCalls),
        ])
    }

    /// A server error the turn cannot retry.
    pub fn server_error(message: &str) -> Self {
        Reply::Fails(ModelError::new(ErrorClass::ServerError, message))
    }
}

/// The scripted model.
#[derive(Default)]
pub struct FakeModel {
    script: Mutex<VecDeque<Reply>>,
    requests: Mutex<Vec<ModelRequest>>,
}

impl FakeModel {
    /// A model that answers with `replies`, in order.
    pub fn new(replies: Vec<Reply>) -> Arc<Self> {
        Arc::new(Self {
            script: Mutex::new(replies.into()),
            ..Self::default()
        })
    }

    /// Waits until the model has been asked `n` times (at most ten seconds).
    pub async fn asked_times(&self, n: usize) {
        let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(10);
        while self.requests.lock().len() < n {
            assert!(
                tokio::time::Instant::now() < deadline,
                "the model was not asked {n} times"
            );
            tokio::time::sleep(std::time::Duration::from_millis(2)).await;
        }
    }

    /// Adds `reply` to the end of the script.
    pub fn push(&self, reply: Reply) {
        self.script.lock().push_back(reply);
    }

    /// Every request so far.
    pub fn requests(&self) -> Vec<ModelRequest> {
        self.requests.lock().clone()
    }
}

impl ModelClient for FakeModel {
    fn open(&self, request: ModelRequest) -> BoxFuture<'_, Result<EventStream, ModelError>> {
        self.requests.lock().push(request);
        let reply = self.script.lock().pop_front();
        Box::pin(async move {
            let reply = match reply {
                Some(Reply::Gated(gate, reply)) => {
                    gate.notified().await;
                    Some(*reply)
                }
                other => other,
            };
            match reply {
                Some(Reply::Events(events)) => {
                    Ok(futures::stream::iter(events.into_iter().map(Ok)).boxed())
                }
                Some(Reply::Hangs(events)) => Ok(futures::stream::iter(events.into_iter().map(Ok))
                    .chain(futures::stream::pending())
                    .boxed()),
                Some(Reply::Fails(error)) => Err(error),
                Some(Reply::Stalls) => std::future::pending().await,
                Some(Reply::Gated(..)) => Err(ModelError::new(
                    ErrorClass::ServerError,
                    "a gated reply cannot hold another gate",
                )),
                None => Err(ModelError::new(
                    ErrorClass::ServerError,
                    "the fake model has no reply scripted for this request",
                )),
            }
        })
    }
}
