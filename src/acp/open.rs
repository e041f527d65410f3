//! The answer to every way of opening a session (new, load, resume, fork): the response
//! names how the session starts (its modes and config options), and the session's slash
//! commands follow it as an `available_commands_update`.

use agent_client_protocol::v1::schema::{
    AuthMethod, LoadSessionResponse, NewSessionResponse, ResumeSessionResponse,
    SessionNotification, SessionUpdate,
};
use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{Client, Error, JsonRpcResponse};

use crate::client::ClientCaps;

use super::session_models::{self, WithModelList};
use super::{ConnectionSink, Handlers, convert, errors, ext, replay};
use crate::session::{NewSession, SessionError};
use crate::types::{EventSink, TurnEvent};

/// A response that tells the editor how an opened session starts.
pub(super) trait Opening {
    /// The response for `session`.
    fn opening(session: &NewSession) -> Self;

    /// What the editor is sent after the response, before the commands (nothing, unless the
    /// response cannot carry the modes and options itself).
    fn after(_cx: &ConnectionTo<Client>, _session: &NewSession) {}
}

impl Opening for NewSessionResponse {
    fn opening(s: &NewSession) -> Self {
        NewSessionResponse::new(s.id.clone())
            .modes(convert::mode_state(s.settings.mode))
            .config_options(convert::config_options(&s.options))
    }
}

impl Opening for LoadSessionResponse {
    fn opening(s: &NewSession) -> Self {
        LoadSessionResponse::new()
            .modes(convert::mode_state(s.settings.mode))
            .config_options(convert::config_options(&s.options))
    }
}

impl Opening for ResumeSessionResponse {
    fn opening(s: &NewSession) -> Self {
        ResumeSessionResponse::new()
            .modes(convert::mode_state(s.settings.mode))
            .config_options(convert::config_options(&s.options))
    }
}

/// The answers of `session/new`, `session/load` and `session/resume` also carry the older
/// `models` field, for clients that read only that (agent-shell).
impl<R: Opening> Opening for WithModelList<R> {
    fn opening(s: &NewSession) -> Self {
        WithModelList {
            response: R::opening(s),
            models: session_models::model_state(&s.options),
        }
    }

    fn after(cx: &ConnectionTo<Client>, s: &NewSession) {
        R::after(cx, s);
    }
}

#[cfg(feature = "acp-session-fork")]
impl Opening for agent_client_protocol::v1::schema::ForkSessionResponse {
    fn opening(s: &NewSession) -> Self {
        Self::new(s.id.clone())
            .modes(convert::mode_state(s.settings.mode))
            .config_options(convert::config_options(&s.options))
    }
}

impl Opening for ext::ForkResponse {
    fn opening(s: &NewSession) -> Self {
        ext::ForkResponse {
            session_id: s.id.clone(),
        }
    }

    /// What session/new's response carries, for the new session.
    fn after(cx: &ConnectionTo<Client>, s: &NewSession) {
        // Neither update depends on what the editor advertised.
        let sink = ConnectionSink::new(cx.clone(), ClientCaps::default());
        sink.emit(&s.id, TurnEvent::ModeChanged(s.settings.mode));
        sink.emit(&s.id, TurnEvent::OptionsChanged(s.options.clone()));
    }
}

/// How a stored session is opened again: `session/load` (its conversation replayed first),
/// `session/resume` (not replayed), or a fork (a new session with a copy of its history).
pub(super) enum Reopen {
    Load,
    Resume,
    Fork,
}

/// What reopening a stored session is asked with.
pub(super) struct Stored {
    /// The stored session.
    pub(crate) id: String,
    /// Its working directory (a fork may keep the stored one).
    pub(crate) cwd: Option<std::path::PathBuf>,
    /// The workspace's other folders, when the editor sends them.
    pub(crate) folders: Option<Vec<std::path::PathBuf>>,
    /// The editor's MCP servers.
    pub(crate) servers: Vec<crate::config::ServerSpec>,
    /// For a fork: the turn its copy stops before (1-based).
    pub(crate) turn: Option<usize>,
    /// The editor's `systemPrompt` for the session as it is opened.
    pub(crate) system_prompt: Option<agent_client_protocol::v1::schema::SystemPrompt>,
}

impl Handlers {
    /// The one path every reopening takes (load, resume, ACP's fork and tandem's): the
    /// session's own requests wait for a load or resume, a fork waits for its source to be
    /// open; the opening runs off the dispatch loop, and its answer (with the replay, for a
    /// load) goes out as every opening's does.
    pub(super) async fn reopen<R: Opening + JsonRpcResponse + Send + 'static>(
        self: &std::sync::Arc<Self>,
        how: Reopen,
        stored: Stored,
        responder: Responder<R>,
        cx: ConnectionTo<Client>,
    ) {
        let mut stored = stored;
        let editor = match self.editor_with(&cx, stored.system_prompt.take()) {
            Ok(editor) => editor,
            Err(e) => {
                log_unsent(responder.respond_with_error(self.error_for(e)));
                return;
            }
        };
        let h = self.clone();
        let id = stored.id.clone();
        let forks = matches!(how, Reopen::Fork);
        let job: super::order::SessionWork = Box::new(move || {
            Box::pin(async move {
                let Stored {
                    id,
                    cwd,
                    folders,
                    servers,
                    turn,
                    ..
                } = stored;
                let manager = &h.manager;
                let opened = match (how, cwd) {
                    (Reopen::Fork, cwd) => {
                        manager.fork(&id, cwd, folders, editor, servers, turn).await
                    }
                    (how, Some(cwd)) => {
                        let replay = matches!(how, Reopen::Load);
                        let folders = folders.unwrap_or_default();
                        manager
                            .load(&id, cwd, folders, editor, replay, servers)
                            .await
                    }
                    (_, None) => Err(SessionError::InvalidParams(
                        "a working directory (`cwd`) is required".into(),
                    )),
                };
                answer(&cx, responder, opened, &h).await;
                manager.begin_background_work();
            })
        });
        if forks {
            // Copying a transcript is work: off the connection's own task, once the source
            // session (if it is opening) is open.
            let h = self.clone();
            let spawn: super::order::SessionWork = Box::new(move || {
                Box::pin(async move {
                    h.tasks.spawn(job());
                })
            });
            self.after_opening(&id, spawn).await;
        } else {
            self.opening(Some(&id), job);
        }
    }
}

/// Answers an opening: the replay (for a load, replay.rs), the response and what follows it,
/// or the error. The replay is sent from a task of the connection's own, in batches, and
/// other requests are still dispatched between batches. Returns once everything is sent, so
/// requests that waited for the session come after it.
pub(super) async fn answer<R: Opening + JsonRpcResponse + Send + 'static>(
    cx: &ConnectionTo<Client>,
    responder: Responder<R>,
    opened: Result<NewSession, SessionError>,
    h: &Handlers,
) {
    let (auth, caps, lines) = (h.auth_methods(), h.caps(), h.lines.clone());
    let (done, sent) = tokio::sync::oneshot::channel();
    let connection = cx.clone();
    let mut opened = opened;
    let replayed = opened
        .as_mut()
        .map(|s| std::mem::take(&mut s.replay))
        .unwrap_or_default();
    let spawned = cx.spawn(async move {
        let large = !replayed.lines.is_empty();
        if let Ok(session) = &opened {
            replay::send(&connection, lines.as_ref(), &session.id, &replayed, caps).await;
        }
        drop(replayed);
        respond(&connection, responder, opened, &auth);
        let _ = done.send(());
        if large {
            // The records and the updates made from them are freed now; only the
            // conversation the model needs stays. Off the answer's path.
            tokio::task::spawn_blocking(crate::platform::give_back_memory);
        }
        Ok(())
    });
    if spawned.is_ok() {
        let _ = sent.await;
    }
    log_unsent(spawned);
}

/// The response and what follows it, or the error.
fn respond<R: Opening + JsonRpcResponse>(
    cx: &ConnectionTo<Client>,
    responder: Responder<R>,
    opened: Result<NewSession, SessionError>,
    auth: &[AuthMethod],
) {
    match opened {
        Ok(session) => {
            if let Err(e) = responder.respond(R::opening(&session)) {
                log_unsent(Err(e));
                return;
            }
            R::after(cx, &session);
            let update =
                SessionUpdate::AvailableCommandsUpdate(convert::commands(&session.commands));
            if let Err(e) = cx.send_notification(SessionNotification::new(session.id, update)) {
                tracing::debug!("could not send available_commands_update: {e}");
            }
        }
        Err(e) => log_unsent(
            responder.respond_with_error(errors::with_auth_methods(errors::session_error(e), auth)),
        ),
    }
}

/// A response the SDK could not send is only worth a debug line: the connection is closing.
pub(super) fn log_unsent(sent: Result<(), Error>) {
    if let Err(e) = sent {
        tracing::debug!("response not sent (connection closing?): {e}");
    }
}
