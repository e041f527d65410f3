//! [`ClientOps`] over the ACP connection: `fs/*`, `terminal/*`,
//! `session/request_permission` and `elicitation/create` (questions.rs) requests to the editor, awaited from turn tasks (never from
//! the dispatch loop).

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    CreateTerminalRequest, KillTerminalRequest, PermissionOption, PermissionOptionKind,
    ReadTextFileRequest, ReleaseTerminalRequest, RequestPermissionOutcome,
    RequestPermissionRequest, TerminalExitStatus, TerminalOutputRequest,
    WaitForTerminalExitRequest, WriteTextFileRequest,
};
use agent_client_protocol::{Client, Error, JsonRpcRequest, RawJsonRpcMessage, TransportFrame};
use futures::future::BoxFuture;
use tokio_util::sync::CancellationToken;

use super::questions;
use crate::client::{
    ClientError, ClientOps, ExitStatus, Form, Reply, TerminalOutput, TerminalSpec,
};
use crate::transport::Lines;
use crate::types::{PermissionAnswer, PermissionChoice, ToolCallView};

/// The editor on the other end of the connection.
pub(crate) struct AcpClient {
    /// The connection to the editor.
    pub(crate) cx: ConnectionTo<Client>,
    /// How long `fs/*` and `terminal/*` requests may go unanswered (`timeouts.editor_secs`).
    pub(crate) timeout: Duration,
    /// Cancelled once the editor's side of the connection has closed: a request waiting
    /// for an answer then fails at once (only model work gets the grace after stdin ends).
    pub(crate) gone: CancellationToken,
    /// Where a request the editor acts on without answering goes once its side has closed
    /// (tandem's own wire): straight to the output, which the editor may still read. Killing
    /// and releasing a terminal go this way as tandem ends after the end of input, so no
    /// command outlives tandem in the editor's terminal; `None` over a transport that takes
    /// no lines.
    pub(crate) parting: Option<Lines>,
}

/// How long a request written after the editor's side closed may wait for the output to
/// take it (an editor that reads nothing any more).
const PARTING: Duration = Duration::from_secs(2);

/// The number in the id of the next request written after the editor's side closed (`tandem-
/// parting-N`: a string, so it meets none of the SDK's own ids).
static PARTING_ID: AtomicU64 = AtomicU64::new(1);

impl AcpClient {
    /// A request the editor answers when a person does (permission) or when a command ends
    /// (`terminal/wait_for_exit`, bounded by the command's own timeout): no time limit.
    async fn call<R: JsonRpcRequest>(&self, request: R) -> Result<R::Response, ClientError> {
        let method = request.method().to_string();
        self.answer(request).await.unwrap_or_else(|| {
            Err(ClientError {
                code: None,
                message: format!(
                    "the editor closed the connection, so {method} cannot be answered"
                ),
            })
        })
    }

    /// The editor's answer to `request`; `None` once its side has closed (before or while
    /// waiting), when no answer can arrive.
    async fn answer<R: JsonRpcRequest>(
        &self,
        request: R,
    ) -> Option<Result<R::Response, ClientError>> {
        if self.gone.is_cancelled() {
            return None;
        }
        tokio::select! {
            answer = self.cx.send_request(request).block_task() => match answer {
                Ok(answer) => Some(Ok(answer)),
                // The SDK fails what is pending when the editor's side closes, maybe before
                // the lifecycle has told the handlers: closed either way.
                Err(e) if agent_client_protocol::is_incoming_transport_closed(&e) => None,
                Err(e) => Some(Err(client_error(e))),
            },
            () = self.gone.cancelled() => None,
        }
    }

    /// A request the editor answers by itself: an editor that never does is an error after
    /// [`Self::timeout`] rather than a turn that hangs.
    async fn call_bounded<R: JsonRpcRequest>(
        &self,
        request: R,
    ) -> Result<R::Response, ClientError> {
        let method = request.method().to_string();
        match tokio::time::timeout(self.timeout, self.call(request)).await {
            Ok(answer) => answer,
            Err(_) => Err(self.unanswered(&method)),
        }
    }

    /// Why `method` failed: the editor did not answer it within [`Self::timeout`].
    fn unanswered(&self, method: &str) -> ClientError {
        ClientError {
            code: None,
            message: format!(
                "the editor did not answer {method} within {:?} (timeouts.editor_secs)",
                self.timeout
            ),
        }
    }

    /// `request`, which the editor acts on whether or not its answer can arrive
    /// (`terminal/kill`, `terminal/release`): asked as usual (bounded by [`Self::timeout`])
    /// while the editor's side is open; once it has closed, written to the output all the same
    /// ([`Self::parting`]). One asked just as the side closed may reach the editor twice.
    async fn call_or_part<R: JsonRpcRequest>(&self, request: R) -> Result<(), ClientError> {
        let method = request.method().to_string();
        match tokio::time::timeout(self.timeout, self.answer(request.clone())).await {
            Ok(Some(answer)) => answer.map(drop),
            Ok(None) => self.part(&request).await,
            Err(_) => Err(self.unanswered(&method)),
        }
    }

    /// Writes `request` to the output with no answer awaited (the editor's side has closed),
    /// within [`PARTING`].
    async fn part<R: JsonRpcRequest>(&self, request: &R) -> Result<(), ClientError> {
        let method = request.method().to_string();
        let failed = |why: String| ClientError {
            code: None,
            message: format!(
                "the editor closed the connection, and {method} could not be written to it: {why}"
            ),
        };
        let Some(lines) = &self.parting else {
            return Err(failed(
                "this connection takes no lines of tandem's own".into(),
            ));
        };
        let (name, params) = request
            .to_untyped_message()
            .map_err(|e| failed(e.message))?
            .into_parts();
        let id = format!(
            "tandem-parting-{}",
            PARTING_ID.fetch_add(1, Ordering::Relaxed)
        );
        let line = RawJsonRpcMessage::request(name, params, id)
            .and_then(|message| TransportFrame::Single(message).to_json())
            .map_err(|e| failed(e.message))?;
        match tokio::time::timeout(PARTING, lines.send(line + "\n")).await {
            Ok(true) => Ok(()),
            Ok(false) => Err(failed("the output is closed".into())),
            Err(_) => Err(failed(format!(
                "the output did not take it within {PARTING:?}"
            ))),
        }
    }
}

fn client_error(e: Error) -> ClientError {
    let message = match &e.data {
        Some(data) => format!("{} ({data})", e.message),
        None => e.message.clone(),
    };
    ClientError {
        code: Some(e.code.value()),
        message,
    }
}

fn exit(status: TerminalExitStatus) -> ExitStatus {
    ExitStatus {
        code: status.exit_code,
        signal: status.signal,
    }
}

/// The option id and kind of each answer; the ids are what the editor sends back.
fn option(answer: PermissionAnswer) -> Option<(&'static str, PermissionOptionKind)> {
    Some(match answer {
        PermissionAnswer::AllowOnce => ("allow_once", PermissionOptionKind::AllowOnce),
        PermissionAnswer::AllowAlways => ("allow_always", PermissionOptionKind::AllowAlways),
        PermissionAnswer::RejectOnce => ("reject_once", PermissionOptionKind::RejectOnce),
        PermissionAnswer::RejectAlways => ("reject_always", PermissionOptionKind::RejectAlways),
        PermissionAnswer::Cancelled => return None,
    })
}

impl ClientOps for AcpClient {
    fn read_text_file<'a>(
        &'a self,
        session: &'a str,
        path: &'a Path,
        line: Option<u32>,
        limit: Option<u32>,
    ) -> BoxFuture<'a, Result<String, ClientError>> {
        Box::pin(async move {
            let request = ReadTextFileRequest::new(session.to_string(), path)
                .line(line)
                .limit(limit);
            Ok(self.call_bounded(request).await?.content)
        })
    }

    fn write_text_file<'a>(
        &'a self,
        session: &'a str,
        path: &'a Path,
        content: &'a str,
    ) -> BoxFuture<'a, Result<(), ClientError>> {
        Box::pin(async move {
            self.call_bounded(WriteTextFileRequest::new(
                session.to_string(),
                path,
                content,
            ))
            .await?;
            Ok(())
        })
    }

    fn request_permission<'a>(
        &'a self,
        session: &'a str,
        call: &'a ToolCallView,
        choices: &'a [PermissionChoice],
    ) -> BoxFuture<'a, Result<PermissionAnswer, ClientError>> {
        Box::pin(async move {
            let offered: Vec<(&str, PermissionOptionKind, &PermissionChoice)> = choices
                .iter()
                .filter_map(|c| option(c.answer).map(|(id, kind)| (id, kind, c)))
                .collect();
            let options = offered
                .iter()
                .map(|(id, kind, c)| PermissionOption::new(*id, c.label.clone(), *kind))
                .collect();
            let request = RequestPermissionRequest::new(
                session.to_string(),
                super::updates::tool_call_update(call),
                options,
            );
            let response = self.call(request).await?;
            match response.outcome {
                RequestPermissionOutcome::Cancelled => Ok(PermissionAnswer::Cancelled),
                RequestPermissionOutcome::Selected(selected) => offered
                    .iter()
                    .find(|(id, ..)| *id == selected.option_id.0.as_ref())
                    .map(|(.., c)| c.answer)
                    .ok_or_else(|| ClientError {
                        code: None,
                        message: format!(
                            "the editor chose an option tandem did not offer: `{}`",
                            selected.option_id.0
                        ),
                    }),
                _ => Err(ClientError {
                    code: None,
                    message: "unknown permission outcome".into(),
                }),
            }
        })
    }

    fn create_terminal<'a>(
        &'a self,
        session: &'a str,
        spec: &'a TerminalSpec,
    ) -> BoxFuture<'a, Result<String, ClientError>> {
        Box::pin(async move {
            let request = CreateTerminalRequest::new(session.to_string(), spec.command.clone())
                .args(spec.args.clone())
                .cwd(spec.cwd.clone())
                .output_byte_limit(spec.output_byte_limit);
            Ok(self.call_bounded(request).await?.terminal_id.0.to_string())
        })
    }

    fn wait_for_terminal_exit<'a>(
        &'a self,
        session: &'a str,
        terminal: &'a str,
    ) -> BoxFuture<'a, Result<ExitStatus, ClientError>> {
        Box::pin(async move {
            let response = self
                .call(WaitForTerminalExitRequest::new(
                    session.to_string(),
                    terminal.to_string(),
                ))
                .await?;
            Ok(exit(response.exit_status))
        })
    }

    fn terminal_output<'a>(
        &'a self,
        session: &'a str,
        terminal: &'a str,
    ) -> BoxFuture<'a, Result<TerminalOutput, ClientError>> {
        Box::pin(async move {
            let response = self
                .call_bounded(TerminalOutputRequest::new(
                    session.to_string(),
                    terminal.to_string(),
                ))
                .await?;
            Ok(TerminalOutput {
                output: response.output,
                truncated: response.truncated,
                exit: response.exit_status.map(exit),
            })
        })
    }

    fn kill_terminal<'a>(
        &'a self,
        session: &'a str,
        terminal: &'a str,
    ) -> BoxFuture<'a, Result<(), ClientError>> {
        Box::pin(async move {
            self.call_or_part(KillTerminalRequest::new(
                session.to_string(),
                terminal.to_string(),
            ))
            .await
        })
    }

    fn release_terminal<'a>(
        &'a self,
        session: &'a str,
        terminal: &'a str,
    ) -> BoxFuture<'a, Result<(), ClientError>> {
        Box::pin(async move {
            self.call_or_part(ReleaseTerminalRequest::new(
                session.to_string(),
                terminal.to_string(),
            ))
            .await
        })
    }

    fn elicit<'a>(
        &'a self,
        session: &'a str,
        call_id: Option<&'a str>,
        form: &'a Form,
    ) -> BoxFuture<'a, Result<Reply, ClientError>> {
        Box::pin(async move {
            let request =
                questions::form(session, call_id, form).map_err(|message| ClientError {
                    code: None,
                    message,
                })?;
            Ok(questions::form_reply(self.call(request).await?))
        })
    }

    fn choose<'a>(
        &'a self,
        session: &'a str,
        call: &'a ToolCallView,
        choices: &'a [String],
    ) -> BoxFuture<'a, Result<Reply, ClientError>> {
        Box::pin(async move {
            let answer = self
                .call(questions::choice_request(session, call, choices))
                .await?;
            questions::choice_reply(answer, choices).map_err(|message| ClientError {
                code: None,
                message,
            })
        })
    }
}
