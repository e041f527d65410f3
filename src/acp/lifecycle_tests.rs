//! The lifecycle over a transport that is not tandem's: the ACP SDK's own byte streams on an
//! in-memory pipe. The same handlers answer, the end of input ends the connection in order,
//! and a shutdown cancels a running prompt, which still gets its answer.

use std::sync::Arc;
use std::time::Duration;

use agent_client_protocol::v1::schema::{
    ContentBlock, InitializeRequest, NewSessionRequest, PromptRequest, SessionNotification,
    SessionUpdate, StopReason, TextContent,
};
use agent_client_protocol::{ByteStreams, Client, schema::ProtocolVersion};
use parking_lot::Mutex;
use tokio_util::compat::{TokioAsyncReadCompatExt, TokioAsyncWriteCompatExt};

use crate::model::ModelClient;
use crate::testkit::{FakeModel, Reply, Scratch};

/// One end of an in-memory pipe as the SDK's byte-stream transport.
fn sdk_streams(
    end: tokio::io::DuplexStream,
) -> ByteStreams<
    tokio_util::compat::Compat<tokio::io::WriteHalf<tokio::io::DuplexStream>>,
    tokio_util::compat::Compat<tokio::io::ReadHalf<tokio::io::DuplexStream>>,
> {
    let (read, write) = tokio::io::split(end);
    ByteStreams::new(write.compat_write(), read.compat())
}

/// The answer's text, from the updates a client collected.
fn answer(updates: &Mutex<Vec<SessionUpdate>>) -> String {
    updates
        .lock()
        .iter()
        .filter_map(|u| match u {
            SessionUpdate::AgentMessageChunk(chunk) => match &chunk.content {
                ContentBlock::Text(t) => Some(t.text.clone()),
                _ => None,
            },
            _ => None,
        })
        .collect()
}

/// Drives a session over the SDK's byte streams like an editor: initialize, a new session,
/// one prompt; returns how the prompt ended and the answer it streamed.
async fn one_prompt(
    end: tokio::io::DuplexStream,
    cwd: std::path::PathBuf,
    on_prompt: impl FnOnce() + Send + 'static,
) -> (StopReason, String) {
    let updates = Arc::new(Mutex::new(Vec::new()));
    let seen = updates.clone();
    let stop = Client
        .v1()
        .name("in-memory-editor")
        .on_receive_notification(
            async move |note: SessionNotification, _cx| {
                seen.lock().push(note.update);
                Ok(())
            },
            agent_client_protocol::on_receive_notification!(),
        )
        .connect_with(sdk_streams(end), async move |cx| {
            cx.send_request(InitializeRequest::new(ProtocolVersion::V1))
                .block_task()
                .await?;
            let session = cx
                .send_request(NewSessionRequest::new(cwd))
                .block_task()
                .await?
                .session_id;
            let prompt =
                PromptRequest::new(session, vec![ContentBlock::Text(TextContent::new("hello"))]);
            let asked = cx.send_request(prompt);
            on_prompt();
            Ok(asked.block_task().await?.stop_reason)
        })
        .await;
    match stop {
        Ok(stop) => (stop, answer(&updates)),
        Err(e) => panic!("the in-memory editor failed: {e:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_handlers_serve_over_the_sdks_own_byte_streams() {
    let scratch = Scratch::new();
    let model = FakeModel::new(vec![Reply::text("Hello over a pipe.")]);
    let client: Arc<dyn ModelClient> = model.clone();
    let (agent_end, editor_end) = tokio::io::duplex(64 * 1024);
    let server = tokio::spawn(crate::serve(
        Arc::new(scratch.config(&[])),
        client,
        sdk_streams(agent_end),
        std::future::pending(),
    ));
    let (stop, text) = one_prompt(editor_end, scratch.project(), || {}).await;
    assert_eq!(stop, StopReason::EndTurn);
    assert_eq!(text, "Hello over a pipe.");
    assert_eq!(model.requests().len(), 1);
    // The editor's side closed: the connection ends by itself, in order.
    let served = tokio::time::timeout(Duration::from_secs(10), server)
        .await
        .expect("the connection ends once the editor's side closes");
    assert!(matches!(served, Ok(Ok(()))), "{served:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shutdown_cancels_the_running_prompt_which_still_gets_its_answer() {
    let scratch = Scratch::new();
    let model = FakeModel::new(vec![Reply::Hangs(vec![crate::model::ModelEvent::Text(
        "Thinking".into(),
    )])]);
    let client: Arc<dyn ModelClient> = model.clone();
    let (agent_end, editor_end) = tokio::io::duplex(64 * 1024);
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let shutdown = async move {
        let _ = stop_rx.await;
    };
    let server = tokio::spawn(crate::serve(
        Arc::new(scratch.config(&[])),
        client,
        sdk_streams(agent_end),
        shutdown,
    ));
    let asked = model.clone();
    let (stop, _) = one_prompt(editor_end, scratch.project(), move || {
        // Once the model is streaming, the caller asks the agent to stop.
        tokio::spawn(async move {
            asked.asked_times(1).await;
            let _ = stop_tx.send(());
        });
    })
    .await;
    assert_eq!(stop, StopReason::Cancelled);
    let served = tokio::time::timeout(Duration::from_secs(10), server)
        .await
        .expect("the connection closes after the shutdown");
    assert!(matches!(served, Ok(Ok(()))), "{served:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_error_answer_leaves_complete_over_any_transport() {
    let scratch = Scratch::new();
    let model = FakeModel::new(vec![Reply::server_error("the model is loading")]);
    let client: Arc<dyn ModelClient> = model.clone();
    let (agent_end, editor_end) = tokio::io::duplex(64 * 1024);
    let server = tokio::spawn(crate::serve(
        Arc::new(scratch.config(&[])),
        client,
        sdk_streams(agent_end),
        std::future::pending(),
    ));
    // A raw editor: the error object exactly as it was written.
    let (read, mut write) = tokio::io::split(editor_end);
    let mut lines = tokio::io::AsyncBufReadExt::lines(tokio::io::BufReader::new(read));
    let cwd = scratch.project().to_string_lossy().into_owned();
    for line in [
        serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                           "params": {"protocolVersion": "1", "clientCapabilities": {}}}),
        serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": "session/new",
                           "params": {"cwd": cwd, "mcpServers": [],
                                      "_meta": {"tandem": {"sessionId": "s"}}}}),
        serde_json::json!({"jsonrpc": "2.0", "id": 3, "method": "session/prompt",
                           "params": {"sessionId": "s",
                                      "prompt": [{"type": "text", "text": "hi"}]}}),
        serde_json::json!({"jsonrpc": "2.0", "id": 4, "method": "no/such/method"}),
    ] {
        let text = format!("{line}\n");
        tokio::io::AsyncWriteExt::write_all(&mut write, text.as_bytes())
            .await
            .unwrap();
    }
    let mut answers = std::collections::HashMap::new();
    while answers.len() < 4 {
        let line = tokio::time::timeout(Duration::from_secs(10), lines.next_line())
            .await
            .expect("every request is answered")
            .unwrap()
            .expect("the agent writes on");
        let message: serde_json::Value = serde_json::from_str(&line).unwrap();
        if let Some(id) = message.get("id").and_then(serde_json::Value::as_i64) {
            answers.insert(id, message);
        }
    }
    // `initialize` with its version as a string was read as the number (the relay).
    assert_eq!(answers[&1]["result"]["protocolVersion"], 1);
    let failed = &answers[&3]["error"];
    assert_eq!(
        failed["data"],
        serde_json::json!({"details": "The model is loading."})
    );
    assert_eq!(failed["_meta"]["tandem"]["class"], "server_error");
    let unknown = &answers[&4]["error"];
    assert_eq!(unknown["code"], -32601);
    assert!(unknown["data"]["details"].is_string(), "{unknown}");
    tokio::io::AsyncWriteExt::shutdown(&mut write)
        .await
        .unwrap();
    let served = tokio::time::timeout(Duration::from_secs(10), server).await;
    assert!(matches!(served, Ok(Ok(Ok(())))), "{served:?}");
}
