//! The session actor: one task owns a session's history and settings; callers send commands
//! with oneshot replies. A running turn is a child task the actor can cancel at any time.

use std::path::PathBuf;
use std::sync::Arc;

use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::SessionError;
use super::options::{self, OptionView, Settings};
use crate::config::Config;
use crate::events::{EventSink, TurnEvent};
use crate::model::{Message, ModelClient, UserPart};
use crate::permission::Mode;
use crate::turn::{self, StopReason, TurnContext, TurnOutcome};

/// A request to the actor.
pub(super) enum Command {
    Prompt {
        parts: Vec<UserPart>,
        reply: oneshot::Sender<Result<StopReason, SessionError>>,
    },
    Cancel,
    SetMode {
        mode: String,
        reply: oneshot::Sender<Result<(), SessionError>>,
    },
    SetOption {
        option: String,
        value: String,
        reply: oneshot::Sender<Result<Vec<OptionView>, SessionError>>,
    },
}

/// The actor's state.
pub(super) struct Actor {
    pub id: String,
    pub cwd: PathBuf,
    pub config: Arc<Config>,
    pub client: Arc<dyn ModelClient>,
    pub sink: Arc<dyn EventSink>,
    pub settings: Settings,
    pub history: Vec<Message>,
}

struct Running {
    task: JoinHandle<TurnOutcome>,
    cancel: CancellationToken,
    reply: oneshot::Sender<Result<StopReason, SessionError>>,
}

impl Actor {
    /// Serves commands until every handle is dropped; a running turn is cancelled then.
    pub(super) async fn run(mut self, mut inbox: mpsc::UnboundedReceiver<Command>) {
        let mut running: Option<Running> = None;
        loop {
            tokio::select! {
                command = inbox.recv() => match command {
                    Some(command) => self.handle(command, &mut running),
                    None => break,
                },
                outcome = async {
                    match running.as_mut() {
                        Some(r) => (&mut r.task).await,
                        None => std::future::pending().await,
                    }
                } => {
                    if let Some(r) = running.take() {
                        self.finish(outcome, r.reply);
                    }
                }
            }
        }
        if let Some(r) = running {
            r.cancel.cancel();
        }
        tracing::debug!(session = %self.id, "session closed");
    }

    fn handle(&mut self, command: Command, running: &mut Option<Running>) {
        match command {
            Command::Prompt { parts, reply } => {
                if running.is_some() {
                    let _ = reply.send(Err(SessionError::Busy(self.id.clone())));
                    return;
                }
                *running = Some(self.start_turn(parts, reply));
            }
            Command::Cancel => {
                if let Some(r) = running.as_ref() {
                    tracing::info!(session = %self.id, "cancelling the running turn");
                    r.cancel.cancel();
                }
            }
            Command::SetMode { mode, reply } => {
                let result = match Mode::parse(&mode) {
                    Some(mode) => {
                        self.settings.mode = mode;
                        self.emit(TurnEvent::OptionsChanged(self.views()));
                        Ok(())
                    }
                    None => Err(SessionError::InvalidParams(format!(
                        "unknown mode `{mode}`; modes: {}",
                        Mode::ALL.map(Mode::id).join(", ")
                    ))),
                };
                let _ = reply.send(result);
            }
            Command::SetOption {
                option,
                value,
                reply,
            } => {
                let before = self.settings.mode;
                let result = options::apply(&mut self.settings, &self.config, &option, &value)
                    .map(|()| self.views())
                    .map_err(SessionError::from);
                if self.settings.mode != before {
                    self.emit(TurnEvent::ModeChanged(self.settings.mode));
                }
                let _ = reply.send(result);
            }
        }
    }

    fn start_turn(
        &mut self,
        parts: Vec<UserPart>,
        reply: oneshot::Sender<Result<StopReason, SessionError>>,
    ) -> Running {
        self.history.push(Message::User(parts));
        let spec = self
            .config
            .model(&self.settings.model)
            .cloned()
            .unwrap_or_else(|| self.config.models[0].clone());
        let ctx = TurnContext {
            session_id: self.id.clone(),
            client: self.client.clone(),
            reasoning_effort: self.settings.effort_for_request(&self.config),
            spec,
            system_prompt: self.system_prompt(),
            sink: self.sink.clone(),
        };
        let cancel = CancellationToken::new();
        let task = tokio::spawn(turn::run_turn(ctx, self.history.clone(), cancel.clone()));
        Running {
            task,
            cancel,
            reply,
        }
    }

    fn finish(
        &mut self,
        outcome: Result<TurnOutcome, tokio::task::JoinError>,
        reply: oneshot::Sender<Result<StopReason, SessionError>>,
    ) {
        let result = match outcome {
            Ok(outcome) => {
                self.history.extend(outcome.new_messages);
                outcome.result.map_err(SessionError::Model)
            }
            Err(join) => {
                tracing::error!(session = %self.id, "turn task failed: {join}");
                Err(SessionError::Internal(format!(
                    "the turn failed unexpectedly: {join}"
                )))
            }
        };
        let _ = reply.send(result);
    }

    fn views(&self) -> Vec<OptionView> {
        options::views(&self.settings, &self.config)
    }

    fn emit(&self, event: TurnEvent) {
        self.sink.emit(&self.id, event);
    }

    fn system_prompt(&self) -> String {
        let mut prompt = format!(
            "You are tandem, a coding agent working inside the user's editor. Answer clearly and \
             concisely; use Markdown for code.\n\n\
             Working directory: {}\nPlatform: {}\nMode: {} ({})",
            self.cwd.display(),
            std::env::consts::OS,
            self.settings.mode.id(),
            self.settings.mode.description(),
        );
        if let Some(extra) = &self.config.instructions {
            prompt.push_str("\n\n");
            prompt.push_str(extra);
        }
        prompt
    }
}
