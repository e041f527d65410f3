//! The ACP side: one handler per method, registered on the SDK's v1 agent builder.
//!
//! Handlers that wait on a session (and so maybe on the model) move their responder into a
//! spawned task, so the dispatch loop always stays free for `session/cancel`.

pub mod client;
pub mod convert;
pub mod errors;

use std::sync::Arc;

use parking_lot::Mutex;

use agent_client_protocol::v1::schema::{
    AgentCapabilities, AuthMethod, AuthMethodAgent, AuthenticateRequest, AuthenticateResponse,
    CancelNotification, CloseSessionRequest, CloseSessionResponse, DeleteSessionRequest,
    DeleteSessionResponse, Implementation, InitializeRequest, InitializeResponse,
    ListSessionsRequest, ListSessionsResponse, LoadSessionRequest, LoadSessionResponse,
    McpCapabilities, NewSessionRequest, NewSessionResponse, PromptCapabilities, PromptRequest,
    PromptResponse, ResumeSessionRequest, ResumeSessionResponse, SessionCapabilities,
    SessionCloseCapabilities, SessionDeleteCapabilities, SessionInfo, SessionListCapabilities,
    SessionNotification, SessionResumeCapabilities, SetSessionConfigOptionRequest,
    SetSessionConfigOptionResponse, SetSessionModeRequest, SetSessionModeResponse,
};
use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{Agent, Client, ConnectTo, Error, schema::ProtocolVersion};

use crate::client::ClientCaps;
use crate::types::{EventSink, TurnEvent};
pub mod ext;
use crate::session::{EditorLink, SessionManager};

/// The id of the one authentication method tandem offers.
pub const AUTH_METHOD_ID: &str = "api-key";

/// Sends a connection's events as `session/update` notifications.
struct ConnectionSink {
    cx: ConnectionTo<Client>,
}

impl EventSink for ConnectionSink {
    fn emit(&self, session_id: &str, event: TurnEvent) {
        for update in convert::session_updates(event) {
            if let Err(e) = self
                .cx
                .send_notification(SessionNotification::new(session_id.to_string(), update))
            {
                tracing::debug!(session = %session_id, "could not send session/update: {e}");
            }
        }
    }
}

/// The ACP agent over `manager`'s sessions, ready to connect to any transport.
pub fn agent(manager: Arc<SessionManager>) -> impl ConnectTo<Client> + 'static {
    // What the editor can do, learned at `initialize`, used by every session it opens.
    let caps: Arc<Mutex<ClientCaps>> = Arc::default();
    let caps_init = caps.clone();
    let m_init = manager.clone();
    let m_auth = manager.clone();
    let m_new = manager.clone();
    let m_prompt = manager.clone();
    let m_mode = manager.clone();
    let m_option = manager.clone();
    let m_cancel = manager.clone();
    let m_load = manager.clone();
    let m_resume = manager.clone();
    let m_list = manager.clone();
    let m_close = manager.clone();
    let m_delete = manager.clone();
    let m_status = manager.clone();
    let m_usage = manager.clone();
    let m_export = manager.clone();
    let m_fork = manager.clone();
    let m_actions = manager.clone();
    #[cfg(feature = "acp-session-fork")]
    let (m_acp_fork, caps_acp_fork) = (manager.clone(), caps.clone());
    let m_run = manager;
    let caps_load = caps.clone();
    let caps_fork = caps.clone();
    let caps_resume = caps.clone();
    let agent = Agent
        .v1()
        .name("tandem")
        .on_receive_request(
            async move |req: InitializeRequest, responder: Responder<InitializeResponse>, _cx| {
                let c = &req.client_capabilities;
                *caps_init.lock() = ClientCaps {
                    read_text_file: c.fs.read_text_file,
                    write_text_file: c.fs.write_text_file,
                    terminal: c.terminal,
                    compaction: c.session.as_ref().is_some_and(|s| s.compaction.is_some()),
                };
                responder.respond(initialize_response(&m_init))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |req: AuthenticateRequest,
                        responder: Responder<AuthenticateResponse>,
                        _cx| {
                if req.method_id.0.as_ref() != AUTH_METHOD_ID {
                    return responder.respond_with_error(errors::invalid_params(format!(
                        "unknown authentication method `{}`; tandem offers `{AUTH_METHOD_ID}`",
                        req.method_id.0
                    )));
                }
                match m_auth.check_credentials() {
                    Ok(()) => responder.respond(AuthenticateResponse::new()),
                    Err(e) => responder.respond_with_error(errors::model_error(&e)),
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |req: NewSessionRequest, responder: Responder<NewSessionResponse>, cx| {
                let editor = editor_for(&cx, &caps, m_new.config().timeouts.editor);
                // `_meta.tandem.sessionId` lets a script choose the id it will refer to.
                let requested = req
                    .meta
                    .as_ref()
                    .and_then(|m| m.get("tandem"))
                    .and_then(|t| t.get("sessionId"))
                    .and_then(|v| v.as_str())
                    .map(String::from);
                match m_new
                    .create(
                        req.cwd,
                        editor,
                        convert::mcp_servers(req.mcp_servers),
                        requested,
                    )
                    .await
                {
                    Ok(s) => {
                        responder.respond(
                            NewSessionResponse::new(s.id.clone())
                                .modes(convert::mode_state(s.settings.mode))
                                .config_options(convert::config_options(&s.options)),
                        )?;
                        announce_commands(&cx, &s);
                        Ok(())
                    }
                    Err(e) => responder.respond_with_error(errors::session_error(e)),
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |req: PromptRequest, responder: Responder<PromptResponse>, cx| {
                let parts = match convert::prompt_parts(req.prompt) {
                    Ok(parts) => parts,
                    Err(message) => {
                        return responder.respond_with_error(errors::invalid_params(message));
                    }
                };
                let output = match ext::output_schema(req.meta.as_ref()) {
                    Ok(output) => output,
                    Err(message) => {
                        return responder.respond_with_error(errors::invalid_params(message));
                    }
                };
                let manager = m_prompt.clone();
                let id = req.session_id.0.to_string();
                cx.spawn(async move {
                    let withdrawn = responder.cancellation();
                    let prompt = manager.run(&id, parts, output);
                    tokio::pin!(prompt);
                    let result = tokio::select! {
                        result = &mut prompt => result,
                        () = withdrawn.cancelled() => {
                            // `$/cancel_request` for the prompt: cancel the turn, then report it.
                            let _ = manager.cancel(&id);
                            prompt.await
                        }
                    };
                    let sent = match result {
                        Ok(ran) => responder.respond(
                            PromptResponse::new(convert::stop_reason(ran.stop))
                                .meta(ext::structured_meta(ran.structured)),
                        ),
                        Err(e) => responder.respond_with_error(errors::session_error(e)),
                    };
                    log_unsent(sent);
                    Ok(())
                })
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |req: SetSessionModeRequest,
                        responder: Responder<SetSessionModeResponse>,
                        cx| {
                let manager = m_mode.clone();
                cx.spawn(async move {
                    let id = req.session_id.0.to_string();
                    let sent = match manager.set_mode(&id, &req.mode_id.0).await {
                        Ok(()) => responder.respond(SetSessionModeResponse::new()),
                        Err(e) => responder.respond_with_error(errors::session_error(e)),
                    };
                    log_unsent(sent);
                    Ok(())
                })
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |req: SetSessionConfigOptionRequest,
                        responder: Responder<SetSessionConfigOptionResponse>,
                        cx| {
                let manager = m_option.clone();
                cx.spawn(async move {
                    let id = req.session_id.0.to_string();
                    let Some(value) = req.value.as_value_id() else {
                        log_unsent(responder.respond_with_error(errors::invalid_params(format!(
                            "config option `{}` takes a value id, not a boolean",
                            req.config_id.0
                        ))));
                        return Ok(());
                    };
                    let sent = match manager.set_option(&id, &req.config_id.0, &value.0).await {
                        Ok(views) => responder.respond(SetSessionConfigOptionResponse::new(
                            convert::config_options(&views),
                        )),
                        Err(e) => responder.respond_with_error(errors::session_error(e)),
                    };
                    log_unsent(sent);
                    Ok(())
                })
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |req: LoadSessionRequest, responder: Responder<LoadSessionResponse>, cx| {
                // The replay is sent before the response, as session/load requires.
                let editor = editor_for(&cx, &caps_load, m_load.config().timeouts.editor);
                let servers = convert::mcp_servers(req.mcp_servers);
                match m_load
                    .load(&req.session_id.0, req.cwd, editor, true, servers)
                    .await
                {
                    Ok(s) => {
                        responder.respond(
                            LoadSessionResponse::new()
                                .modes(convert::mode_state(s.settings.mode))
                                .config_options(convert::config_options(&s.options)),
                        )?;
                        announce_commands(&cx, &s);
                        Ok(())
                    }
                    Err(e) => responder.respond_with_error(errors::session_error(e)),
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |req: ResumeSessionRequest,
                        responder: Responder<ResumeSessionResponse>,
                        cx| {
                let editor = editor_for(&cx, &caps_resume, m_resume.config().timeouts.editor);
                let servers = convert::mcp_servers(req.mcp_servers);
                match m_resume
                    .load(&req.session_id.0, req.cwd, editor, false, servers)
                    .await
                {
                    Ok(s) => {
                        responder.respond(
                            ResumeSessionResponse::new()
                                .modes(convert::mode_state(s.settings.mode))
                                .config_options(convert::config_options(&s.options)),
                        )?;
                        announce_commands(&cx, &s);
                        Ok(())
                    }
                    Err(e) => responder.respond_with_error(errors::session_error(e)),
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |req: ListSessionsRequest,
                        responder: Responder<ListSessionsResponse>,
                        _cx| {
                let (page, next) = m_list.list(req.cwd.as_deref(), req.cursor.as_deref());
                let sessions = page
                    .into_iter()
                    .map(|s| {
                        SessionInfo::new(s.id, s.cwd)
                            .title(s.title)
                            .updated_at(s.updated_at)
                    })
                    .collect();
                responder.respond(ListSessionsResponse::new(sessions).next_cursor(next))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |req: CloseSessionRequest,
                        responder: Responder<CloseSessionResponse>,
                        _cx| {
                match m_close.close(&req.session_id.0) {
                    Ok(()) => responder.respond(CloseSessionResponse::new()),
                    Err(e) => responder.respond_with_error(errors::session_error(e)),
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |req: DeleteSessionRequest,
                        responder: Responder<DeleteSessionResponse>,
                        _cx| {
                match m_delete.delete(&req.session_id.0) {
                    Ok(()) => responder.respond(DeleteSessionResponse::new()),
                    Err(e) => responder.respond_with_error(errors::session_error(e)),
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |_req: ext::StatusRequest,
                        responder: Responder<ext::StatusResponse>,
                        _cx| { responder.respond(ext::status(&m_status)) },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |req: ext::UsageRequest, responder: Responder<ext::UsageResponse>, _cx| {
                match ext::usage(&m_usage, &req.session_id) {
                    Some(usage) => responder.respond(usage),
                    None => responder.respond_with_error(errors::session_error(
                        crate::session::SessionError::NotFound(req.session_id),
                    )),
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |req: ext::ActionsListRequest,
                        responder: Responder<ext::ActionsListResponse>,
                        _cx| {
                match ext::actions(&m_actions, &req.session_id) {
                    Ok(list) => responder.respond(list),
                    Err(e) => responder.respond_with_error(errors::session_error(e)),
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |req: ext::ActionsRunRequest,
                        responder: Responder<ext::ActionsRunResponse>,
                        cx| {
                let known = match ext::actions(&m_run, &req.session_id) {
                    Ok(list) => list.actions.iter().any(|a| a.name == req.name),
                    Err(e) => return responder.respond_with_error(errors::session_error(e)),
                };
                if !known {
                    return responder.respond_with_error(errors::invalid_params(format!(
                        "no custom action `{}` in this session; _tandem/actions/list shows them",
                        req.name
                    )));
                }
                let manager = m_run.clone();
                cx.spawn(async move {
                    let slash = format!("/{} {}", req.name, req.arguments);
                    let sent = match manager
                        .run(
                            &req.session_id,
                            vec![crate::types::UserPart::Text(slash)],
                            None,
                        )
                        .await
                    {
                        Ok(ran) => responder.respond(ext::ActionsRunResponse {
                            stop_reason: serde_json::to_value(convert::stop_reason(ran.stop))
                                .ok()
                                .and_then(|v| v.as_str().map(String::from))
                                .unwrap_or_default(),
                            output: ran.output,
                        }),
                        Err(e) => responder.respond_with_error(errors::session_error(e)),
                    };
                    log_unsent(sent);
                    Ok(())
                })
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |req: ext::ForkRequest, responder: Responder<ext::ForkResponse>, cx| {
                let editor = editor_for(&cx, &caps_fork, m_fork.config().timeouts.editor);
                match m_fork
                    .fork(&req.session_id, req.cwd, editor, Vec::new())
                    .await
                {
                    Ok(s) => {
                        responder.respond(ext::ForkResponse {
                            session_id: s.id.clone(),
                        })?;
                        // What session/new's response carries, for the new session.
                        let sink = ConnectionSink { cx: cx.clone() };
                        sink.emit(&s.id, TurnEvent::ModeChanged(s.settings.mode));
                        sink.emit(&s.id, TurnEvent::OptionsChanged(s.options.clone()));
                        announce_commands(&cx, &s);
                        Ok(())
                    }
                    Err(e) => responder.respond_with_error(errors::session_error(e)),
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |req: ext::ExportRequest, responder: Responder<ext::ExportResponse>, _cx| {
                let lines = match m_export.records(&req.session_id).await {
                    Ok(lines) => lines,
                    Err(e) => return responder.respond_with_error(errors::session_error(e)),
                };
                let content = match req.format {
                    ext::ExportFormat::Markdown => ext::render(&lines),
                    ext::ExportFormat::Json => {
                        serde_json::to_string_pretty(&lines).unwrap_or_default()
                    }
                };
                responder.respond(ext::ExportResponse {
                    format: req.format,
                    content,
                })
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_notification(
            async move |note: CancelNotification, _cx| {
                if let Err(e) = m_cancel.cancel(&note.session_id.0) {
                    tracing::warn!("session/cancel ignored: {e}");
                }
                Ok(())
            },
            agent_client_protocol::on_receive_notification!(),
        );
    // ACP's own `session/fork` is still unstable in the protocol: only built on request.
    #[cfg(feature = "acp-session-fork")]
    let agent = agent.on_receive_request(
        async move |req: agent_client_protocol::v1::schema::ForkSessionRequest,
                    responder: Responder<
            agent_client_protocol::v1::schema::ForkSessionResponse,
        >,
                    cx| {
            let editor = editor_for(&cx, &caps_acp_fork, m_acp_fork.config().timeouts.editor);
            let servers = convert::mcp_servers(req.mcp_servers);
            match m_acp_fork
                .fork(&req.session_id.0, Some(req.cwd), editor, servers)
                .await
            {
                Ok(s) => {
                    responder.respond(
                        agent_client_protocol::v1::schema::ForkSessionResponse::new(s.id.clone())
                            .modes(convert::mode_state(s.settings.mode))
                            .config_options(convert::config_options(&s.options)),
                    )?;
                    announce_commands(&cx, &s);
                    Ok(())
                }
                Err(e) => responder.respond_with_error(errors::session_error(e)),
            }
        },
        agent_client_protocol::on_receive_request!(),
    );
    agent
}

/// tandem's answer to `initialize`: protocol v1 whatever the client asked (the SDK has
/// already settled the version), honest capabilities, and who we are.
fn initialize_response(manager: &SessionManager) -> InitializeResponse {
    let config = manager.config();
    let auth_methods = if config.replay.is_none() && config.endpoint.requires_key {
        vec![AuthMethod::Agent(
            AuthMethodAgent::new(AUTH_METHOD_ID, "API key from the environment").description(
                format!(
                    "Set {} in the environment the editor starts tandem with.",
                    config.endpoint.api_key_env
                ),
            ),
        )]
    } else {
        Vec::new()
    };
    InitializeResponse::new(ProtocolVersion::V1)
        .agent_capabilities(
            AgentCapabilities::new()
                .load_session(true)
                .prompt_capabilities(PromptCapabilities::new().image(true).embedded_context(true))
                // Streamable HTTP works; the old HTTP+SSE transport does not.
                .mcp_capabilities(McpCapabilities::new().http(true))
                // tandem's extension methods.
                .meta(
                    serde_json::json!({"tandem": ext::advertised()})
                        .as_object()
                        .cloned(),
                )
                .session_capabilities(session_capabilities()),
        )
        .auth_methods(auth_methods)
        .agent_info(Implementation::new("tandem", env!("CARGO_PKG_VERSION")).title("tandem"))
}

/// What a session opened on this connection talks to: the event sink, the editor's
/// operations, and the capabilities the editor announced.
fn editor_for(
    cx: &ConnectionTo<Client>,
    caps: &Mutex<ClientCaps>,
    timeout: std::time::Duration,
) -> EditorLink {
    EditorLink {
        sink: Arc::new(ConnectionSink { cx: cx.clone() }),
        ops: Arc::new(client::AcpClient {
            cx: cx.clone(),
            timeout,
        }),
        caps: *caps.lock(),
    }
}

/// Sends a session's slash commands; called after the response that names the session.
fn announce_commands(cx: &ConnectionTo<Client>, session: &crate::session::NewSession) {
    let update = agent_client_protocol::v1::schema::SessionUpdate::AvailableCommandsUpdate(
        convert::commands(&session.commands),
    );
    if let Err(e) = cx.send_notification(SessionNotification::new(session.id.clone(), update)) {
        tracing::debug!("could not send available_commands_update: {e}");
    }
}

fn log_unsent(sent: Result<(), Error>) {
    if let Err(e) = sent {
        tracing::debug!("response not sent (connection closing?): {e}");
    }
}

/// The session methods tandem serves beyond the baseline (`session/fork` only when built with
/// the `acp-session-fork` feature).
fn session_capabilities() -> SessionCapabilities {
    let caps = SessionCapabilities::new()
        .list(SessionListCapabilities::new())
        .resume(SessionResumeCapabilities::new())
        .close(SessionCloseCapabilities::new())
        .delete(SessionDeleteCapabilities::new());
    #[cfg(feature = "acp-session-fork")]
    let caps = caps.fork(agent_client_protocol::v1::schema::SessionForkCapabilities::new());
    caps
}
