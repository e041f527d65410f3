//! One async method per ACP method, on one [`Handlers`] value the connection shares. This
//! file holds the methods that hand a request to the session manager; the rest of
//! `impl Handlers` lives with its own concern, one file each:
//! - auth.rs: `authenticate`, and the errors that name the login methods;
//! - open.rs: what every way of opening a session answers, and the commands that follow it;
//! - session_models.rs: the older session-models API agent-shell still speaks;
//! - providers.rs: `providers/*` (the model endpoint, behind `acp-providers`);
//! - lifecycle.rs: serving until the editor's side closes, and ending in order;
//! - ext/methods.rs: the `_tandem/*` methods.
//!
//! A method that waits on a session (a prompt, a settings change) or does real work (opening
//! a session reads the project and replays its transcript) moves its responder into a task
//! of its own, so the dispatch loop stays free for `session/cancel`. Requests about a
//! session that is still opening wait for it, in order ([`Order`]).

use std::sync::Arc;

use agent_client_protocol::v1::schema::{
    CancelNotification, CloseSessionRequest, CloseSessionResponse, DeleteSessionRequest,
    DeleteSessionResponse, InitializeRequest, InitializeResponse, ListSessionsRequest,
    ListSessionsResponse, LoadSessionRequest, LoadSessionResponse, NewSessionRequest,
    NewSessionResponse, PromptRequest, PromptResponse, ResumeSessionRequest, ResumeSessionResponse,
    SessionInfo, SetSessionConfigOptionRequest, SetSessionConfigOptionResponse,
    SetSessionModeRequest, SetSessionModeResponse,
};
use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{Client, Error, JsonRpcResponse};
use futures::future::BoxFuture;
use parking_lot::Mutex;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::open::{self, Reopen, Stored, log_unsent};
use super::order::{Order, SessionWork};
use super::session_models::{WithModelList, WithModels};
use super::{ConnectionSink, capabilities, client, convert, errors, ext};
use crate::client::ClientCaps;
use crate::session::{EditorLink, SessionError, SessionManager};
use crate::transport::Lines;

/// What the handlers of one connection share.
pub(crate) struct Handlers {
    /// The sessions.
    pub(super) manager: Arc<SessionManager>,
    /// What the editor can do, learned at `initialize`, used by every session it opens.
    caps: Mutex<ClientCaps>,
    /// The login methods the editor can run, learned at `initialize`.
    pub(super) auth: Mutex<capabilities::AuthCaps>,
    /// Sessions being opened, and the requests waiting for them.
    order: Order,
    /// Cancelled once the editor's side of the connection has closed (stdin ended): no
    /// request to it can be answered any more.
    pub(super) editor_gone: CancellationToken,
    /// The requests being answered off the dispatch loop: the connection ends once none is
    /// left (lifecycle.rs).
    pub(super) tasks: TaskTracker,
    /// Where a load's replay goes as lines written here, when the transport takes them.
    pub(super) lines: Option<Lines>,
}

/// What a handler returns to the SDK (an error only when a response could not be sent).
pub(super) type Handled = Result<(), Error>;

impl Handlers {
    /// Handlers over `manager`'s sessions; `lines` when the transport takes lines (replay.rs).
    pub(crate) fn new(manager: Arc<SessionManager>, lines: Option<Lines>) -> Self {
        Self {
            manager,
            caps: Mutex::default(),
            auth: Mutex::default(),
            order: Order::default(),
            editor_gone: CancellationToken::new(),
            tasks: TaskTracker::new(),
            lines,
        }
    }

    /// `initialize`: remembers what the editor can do; answers with what tandem can.
    pub(crate) async fn initialize(
        self: Arc<Self>,
        req: InitializeRequest,
        responder: Responder<InitializeResponse>,
        _cx: ConnectionTo<Client>,
    ) -> Handled {
        let c = &req.client_capabilities;
        *self.caps.lock() = ClientCaps {
            read_text_file: c.fs.read_text_file,
            write_text_file: c.fs.write_text_file,
            terminal: c.terminal,
            compaction: c.session.as_ref().is_some_and(|s| s.compaction.is_some()),
            notices: c.session.as_ref().is_some_and(|s| s.notices.is_some()),
            plan_updates: c.plan.is_some(),
            elicitation: c.elicitation.as_ref().is_some_and(|e| e.supports_form()),
            boolean_options: c
                .session
                .as_ref()
                .and_then(|s| s.config_options.as_ref())
                .is_some_and(|o| o.boolean.is_some()),
            subagents: c.subagents.is_some(),
        };
        let auth = capabilities::AuthCaps::of(c);
        *self.auth.lock() = auth;
        responder.respond(capabilities::initialize_response(
            &self.manager.config(),
            auth,
            self.manager.looking_up_stored_keys(),
        ))
    }

    /// Sends `result` as the answer (a session error as its JSON-RPC error).
    fn respond<R: JsonRpcResponse>(
        &self,
        responder: Responder<R>,
        result: Result<R, SessionError>,
    ) {
        log_unsent(match result {
            Ok(response) => responder.respond(response),
            Err(e) => responder.respond_with_error(self.error_for(e)),
        });
    }

    /// `session/new`. `_meta.tandem.sessionId` lets a script choose the id it will refer to.
    pub(crate) async fn new_session(
        self: Arc<Self>,
        WithModels(req): WithModels<NewSessionRequest>,
        responder: Responder<WithModelList<NewSessionResponse>>,
        cx: ConnectionTo<Client>,
    ) -> Handled {
        let requested = req
            .meta
            .as_ref()
            .and_then(|m| m.get("tandem"))
            .and_then(|t| t.get("sessionId"))
            .and_then(|v| v.as_str())
            .map(String::from);
        let editor = match self.editor_with(&cx, req.system_prompt) {
            Ok(editor) => editor,
            Err(e) => {
                self.respond(responder, Err(e));
                return Ok(());
            }
        };
        let servers = convert::mcp_servers(req.mcp_servers);
        let (h, id) = (self.clone(), requested.clone());
        let open: SessionWork = Box::new(move || {
            Box::pin(async move {
                let opened = h
                    .manager
                    .create(
                        req.cwd,
                        req.additional_directories,
                        editor,
                        servers,
                        requested,
                    )
                    .await;
                open::answer(&cx, responder, opened, &h).await;
                h.manager.begin_background_work();
            })
        });
        self.opening(id.as_deref(), open);
        Ok(())
    }

    /// `session/load`: the conversation is replayed before the answer.
    pub(crate) async fn load_session(
        self: Arc<Self>,
        WithModels(req): WithModels<LoadSessionRequest>,
        responder: Responder<WithModelList<LoadSessionResponse>>,
        cx: ConnectionTo<Client>,
    ) -> Handled {
        let stored = Stored {
            id: req.session_id.0.to_string(),
            cwd: Some(req.cwd),
            folders: Some(req.additional_directories),
            turn: None,
            servers: convert::mcp_servers(req.mcp_servers),
            system_prompt: req.system_prompt,
        };
        self.reopen(Reopen::Load, stored, responder, cx).await;
        Ok(())
    }

    /// `session/resume`: like load, without the replay.
    pub(crate) async fn resume_session(
        self: Arc<Self>,
        WithModels(req): WithModels<ResumeSessionRequest>,
        responder: Responder<WithModelList<ResumeSessionResponse>>,
        cx: ConnectionTo<Client>,
    ) -> Handled {
        let stored = Stored {
            id: req.session_id.0.to_string(),
            cwd: Some(req.cwd),
            folders: Some(req.additional_directories),
            turn: None,
            servers: convert::mcp_servers(req.mcp_servers),
            system_prompt: req.system_prompt,
        };
        self.reopen(Reopen::Resume, stored, responder, cx).await;
        Ok(())
    }

    /// `session/fork` (unstable in ACP, so only with the `acp-session-fork` feature).
    #[cfg(feature = "acp-session-fork")]
    pub(crate) async fn fork_session(
        self: Arc<Self>,
        req: agent_client_protocol::v1::schema::ForkSessionRequest,
        responder: Responder<agent_client_protocol::v1::schema::ForkSessionResponse>,
        cx: ConnectionTo<Client>,
    ) -> Handled {
        let stored = Stored {
            id: req.session_id.0.to_string(),
            cwd: Some(req.cwd),
            folders: Some(req.additional_directories),
            turn: None,
            servers: convert::mcp_servers(req.mcp_servers),
            system_prompt: req.system_prompt,
        };
        self.reopen(Reopen::Fork, stored, responder, cx).await;
        Ok(())
    }

    /// `session/list`.
    pub(crate) async fn list_sessions(
        self: Arc<Self>,
        req: ListSessionsRequest,
        responder: Responder<ListSessionsResponse>,
        _cx: ConnectionTo<Client>,
    ) -> Handled {
        let (page, next) = self.manager.list(req.cwd.as_deref(), req.cursor.as_deref());
        let sessions = page
            .into_iter()
            .map(|s| {
                SessionInfo::new(s.id, s.cwd)
                    .additional_directories(s.folders)
                    .title(s.title)
                    .updated_at(s.updated_at)
            })
            .collect();
        responder.respond(ListSessionsResponse::new(sessions).next_cursor(next))
    }

    /// `session/close`: the session stops here, answered once it has (its commands stopped,
    /// its sandbox folder removed); its transcript stays if it got a prompt.
    pub(crate) async fn close_session(
        self: Arc<Self>,
        req: CloseSessionRequest,
        responder: Responder<CloseSessionResponse>,
        _cx: ConnectionTo<Client>,
    ) -> Handled {
        let id = req.session_id.0.to_string();
        let session = id.clone();
        self.reply_later(&id, responder, move |manager| {
            let closed = manager.close(&session);
            Box::pin(async move {
                closed.await?;
                Ok(CloseSessionResponse::new())
            })
        })
        .await;
        Ok(())
    }

    /// `session/delete`: the session stops (answered once it has, as for `session/close`) and
    /// its transcript goes.
    pub(crate) async fn delete_session(
        self: Arc<Self>,
        req: DeleteSessionRequest,
        responder: Responder<DeleteSessionResponse>,
        _cx: ConnectionTo<Client>,
    ) -> Handled {
        let id = req.session_id.0.to_string();
        let session = id.clone();
        self.reply_later(&id, responder, move |manager| {
            let deleted = manager.delete(&session);
            Box::pin(async move { deleted.await.map(|()| DeleteSessionResponse::new()) })
        })
        .await;
        Ok(())
    }

    /// `session/prompt`: runs in a task of its own until the turn stops. A withdrawn request
    /// (`$/cancel_request`) cancels the turn, which then answers `cancelled`.
    pub(crate) async fn prompt(
        self: Arc<Self>,
        req: PromptRequest,
        responder: Responder<PromptResponse>,
        cx: ConnectionTo<Client>,
    ) -> Handled {
        let prompt = match convert::prompt(req.prompt) {
            Ok(prompt) => prompt,
            Err(message) => return responder.respond_with_error(errors::invalid_params(message)),
        };
        let output = match ext::output_schema(req.meta.as_ref()) {
            Ok(output) => output,
            Err(message) => return responder.respond_with_error(errors::invalid_params(message)),
        };
        let id = req.session_id.0.to_string();
        let manager = self.manager.clone();
        let session = id.clone();
        let h = self.clone();
        let tracked = self.tasks.token();
        let job: SessionWork = Box::new(move || {
            Box::pin(async move {
                // Sent now, so a cancel that came after the prompt finds it.
                let prompt = manager.run(&session, prompt, output);
                let spawned = cx.spawn(async move {
                    let _tracked = tracked;
                    let withdrawn = responder.cancellation();
                    tokio::pin!(prompt);
                    let result = tokio::select! {
                        result = &mut prompt => result,
                        () = withdrawn.cancelled() => {
                            // `$/cancel_request` for the prompt: cancel the turn, then report it.
                            let _ = manager.cancel(&session);
                            prompt.await
                        }
                    };
                    log_unsent(match result {
                        Ok(ran) => responder.respond(
                            PromptResponse::new(convert::stop_reason(ran.stop))
                                .usage(convert::turn_usage(&ran.spent))
                                .meta(ext::structured_meta(ran.structured)),
                        ),
                        Err(e) => responder.respond_with_error(h.error_for(e)),
                    });
                    Ok(())
                });
                log_unsent(spawned);
            })
        });
        self.after_opening(&id, job).await;
        Ok(())
    }

    /// `session/set_mode`.
    pub(crate) async fn set_mode(
        self: Arc<Self>,
        req: SetSessionModeRequest,
        responder: Responder<SetSessionModeResponse>,
        _cx: ConnectionTo<Client>,
    ) -> Handled {
        let id = req.session_id.0.to_string();
        let session = id.clone();
        self.reply_later(&id, responder, move |manager| {
            let set = manager.set_mode(&session, &req.mode_id.0);
            Box::pin(async move { set.await.map(|()| SetSessionModeResponse::new()) })
        })
        .await;
        Ok(())
    }

    /// `session/set_config_option`: answers with every option as it now stands.
    pub(crate) async fn set_config_option(
        self: Arc<Self>,
        req: SetSessionConfigOptionRequest,
        responder: Responder<SetSessionConfigOptionResponse>,
        _cx: ConnectionTo<Client>,
    ) -> Handled {
        let value = match (req.value.as_value_id(), req.value.as_bool()) {
            (Some(id), _) => id.0.to_string(),
            (None, Some(on)) => on.to_string(),
            (None, None) => {
                return responder.respond_with_error(errors::invalid_params(format!(
                    "config option `{}`: a value id or a boolean",
                    req.config_id.0
                )));
            }
        };
        let id = req.session_id.0.to_string();
        let session = id.clone();
        self.reply_later(&id, responder, move |manager| {
            let set = manager.set_option(&session, &req.config_id.0, &value);
            Box::pin(async move {
                let views = set.await?;
                Ok(SetSessionConfigOptionResponse::new(
                    convert::config_options(&views),
                ))
            })
        })
        .await;
        Ok(())
    }

    /// `session/cancel` (a notification): cancels the running turn, if any.
    pub(crate) async fn cancel(
        self: Arc<Self>,
        note: CancelNotification,
        _cx: ConnectionTo<Client>,
    ) -> Handled {
        let id = note.session_id.0.to_string();
        let manager = self.manager.clone();
        let session = id.clone();
        let job: SessionWork = Box::new(move || {
            Box::pin(async move {
                if let Err(e) = manager.cancel(&session) {
                    tracing::warn!("session/cancel ignored: {e}");
                }
            })
        });
        self.after_opening(&id, job).await;
        Ok(())
    }

    /// Answers a request about the session `id` with what `answer` says, once the session
    /// is open (at once, when it is not opening).
    pub(super) async fn reply<R>(
        self: &Arc<Self>,
        id: &str,
        responder: Responder<R>,
        answer: impl FnOnce(&SessionManager) -> Result<R, SessionError> + Send + 'static,
    ) where
        R: JsonRpcResponse + Send + 'static,
    {
        let h = self.clone();
        let job: SessionWork =
            Box::new(move || Box::pin(async move { h.respond(responder, answer(&h.manager)) }));
        self.after_opening(id, job).await;
    }

    /// Like [`Self::reply`] for work that takes a while: `start` runs once the session is
    /// open (so what it sends the session keeps the requests' order), and the answer is
    /// awaited in a task of its own.
    pub(super) async fn reply_later<R>(
        self: &Arc<Self>,
        id: &str,
        responder: Responder<R>,
        start: impl FnOnce(&SessionManager) -> BoxFuture<'static, Result<R, SessionError>>
        + Send
        + 'static,
    ) where
        R: JsonRpcResponse + Send + 'static,
    {
        let h = self.clone();
        let job: SessionWork = Box::new(move || {
            Box::pin(async move {
                let answer = start(&h.manager);
                // The runtime's task, not the connection's: the work may read files.
                let tasks = h.tasks.clone();
                tasks.spawn(async move { h.respond(responder, answer.await) });
            })
        });
        self.after_opening(id, job).await;
    }

    /// Runs `job` about the session `id` now, or after the session has opened.
    pub(super) async fn after_opening(&self, id: &str, job: SessionWork) {
        if let Some(job) = self.order.enqueue(id, job) {
            job().await;
        }
    }

    /// Opens a session off the dispatch loop: `open` runs in a task of its own, and requests
    /// about `id` (when the editor knows it already) wait until it is done.
    pub(super) fn opening(self: &Arc<Self>, id: Option<&str>, open: SessionWork) {
        let run = match id {
            None => Some((open, None)),
            Some(id) => self
                .order
                .open(id, open)
                .map(|open| (open, Some(id.to_string()))),
        };
        let Some((open, id)) = run else {
            return;
        };
        let h = self.clone();
        // A task of the runtime's own, not the connection's (`cx.spawn` tasks are polled by
        // the connection itself): opening reads files and would hold up the dispatch loop.
        self.tasks.spawn(async move {
            open().await;
            if let Some(id) = id {
                h.order.finish(&id).await;
            }
        });
    }

    /// What a session opened on this connection talks to: the event sink, the editor's
    /// operations, and the capabilities the editor announced.
    pub(super) fn editor_for(&self, cx: &ConnectionTo<Client>) -> EditorLink {
        EditorLink {
            sink: Arc::new(ConnectionSink::new(cx.clone(), self.caps())),
            ops: Arc::new(client::AcpClient {
                cx: cx.clone(),
                timeout: self.manager.config().timeouts.editor,
                gone: self.editor_gone.clone(),
                parting: self.lines.clone(),
            }),
            caps: self.caps(),
            instructions: None,
        }
    }

    /// [`Self::editor_for`], with the editor's `systemPrompt` for the session being opened;
    /// an error (`-32602`) when tandem cannot take it, before anything is opened.
    pub(super) fn editor_with(
        &self,
        cx: &ConnectionTo<Client>,
        system_prompt: Option<agent_client_protocol::v1::schema::SystemPrompt>,
    ) -> Result<EditorLink, SessionError> {
        let mut editor = self.editor_for(cx);
        editor.instructions =
            convert::system_prompt(system_prompt).map_err(SessionError::InvalidParams)?;
        Ok(editor)
    }

    /// What the editor said it can do (nothing before `initialize`).
    pub(super) fn caps(&self) -> ClientCaps {
        *self.caps.lock()
    }
}
