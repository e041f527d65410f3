//! The session actor: one task owns a session's history and settings; callers send commands
//! with oneshot replies. A running turn is a child task the actor can cancel at any time.

use std::sync::Arc;

use tokio::sync::{mpsc, oneshot, watch};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::SessionError;
use super::commands::{self, Action, SlashCommand};
use super::options;
use crate::config::Settings;
use crate::model::Message;
use crate::output_schema::OutputSchema;
use crate::store::{History, Record};
use crate::turn::{self, TurnContext, TurnOutcome};
use crate::types::Mode;
use crate::types::OptionView;
use crate::types::StopReason;
use crate::types::TurnEvent;
use crate::types::{Prompt, UserPart};

/// How a prompt ended.
#[derive(Debug)]
pub struct Ran {
    /// Why it stopped.
    pub stop: StopReason,
    /// What a command action printed (only for those).
    pub output: Option<String>,
    /// With an output schema: the validated answer, or why it did not validate.
    pub structured: Option<Result<serde_json::Value, String>>,
}

/// A request to the actor.
pub(super) enum Command {
    Prompt {
        prompt: Prompt,
        output: Option<Arc<OutputSchema>>,
        reply: oneshot::Sender<Result<Ran, SessionError>>,
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

/// The actor's state: everything a session is, owned by the one task that changes it.
pub(super) struct Actor {
    /// What its turns run with (its id, config, sink and scope).
    turn: TurnContext,
    /// Its settings; turns and the manager see them through receivers.
    settings: watch::Sender<Settings>,
    /// The conversation. A running turn works on a copy and hands it back.
    history: History,
    /// Set after the first exchange.
    title: Option<String>,
    /// Slash commands a prompt may start with.
    commands: Vec<SlashCommand>,
}

struct Running {
    task: JoinHandle<TurnOutcome>,
    cancel: CancellationToken,
    reply: oneshot::Sender<Result<Ran, SessionError>>,
}

impl Actor {
    /// A session's actor, not yet running.
    pub(super) fn new(
        turn: TurnContext,
        settings: watch::Sender<Settings>,
        history: History,
        title: Option<String>,
        commands: Vec<SlashCommand>,
    ) -> Self {
        Self {
            turn,
            settings,
            history,
            title,
            commands,
        }
    }

    /// Serves commands until every handle is dropped; a running turn is cancelled then.
    pub(super) async fn run(mut self, mut inbox: mpsc::UnboundedReceiver<Command>) {
        let mut running: Option<Running> = None;
        loop {
            tokio::select! {
                command = inbox.recv() => match command {
                    Some(command) => self.handle(command, &mut running).await,
                    None => break,
                },
                outcome = async {
                    match running.as_mut() {
                        Some(r) => (&mut r.task).await,
                        None => std::future::pending().await,
                    }
                } => {
                    if let Some(r) = running.take() {
                        self.finish(outcome, r.reply).await;
                    }
                }
            }
        }
        if let Some(r) = running {
            // Closed or deleted mid-turn: the prompt still gets its answer, `cancelled`.
            r.cancel.cancel();
            self.end_closed(r).await;
        }
        // Closing or deleting the session stops its MCP servers.
        self.turn.services.mcp.shutdown();
        tracing::debug!(session = %self.turn.facts.session_id, "session closed");
    }

    /// Handles one command; a reply that follows a change waits until the change is on disk.
    async fn handle(&mut self, command: Command, running: &mut Option<Running>) {
        match command {
            Command::Prompt {
                prompt,
                output,
                reply,
            } => {
                if running.is_some() {
                    let _ = reply.send(Err(SessionError::Busy(self.turn.facts.session_id.clone())));
                    return;
                }
                *running = Some(self.start_prompt(prompt, output, reply));
            }
            Command::Cancel => {
                if let Some(r) = running.as_ref() {
                    tracing::info!(session = %self.turn.facts.session_id, "cancelling the running turn");
                    r.cancel.cancel();
                }
            }
            Command::SetMode { mode, reply } => {
                let result = match Mode::parse(&mode) {
                    Some(mode) => {
                        self.settings.send_modify(|s| s.mode = mode);
                        self.record_settings().await;
                        self.emit(TurnEvent::ModeChanged(mode));
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
                let before = self.settings.borrow().mode;
                let mut result = Ok(());
                let server = self.turn.meters.discovered.borrow().clone();
                self.settings.send_if_modified(|settings| {
                    result = options::apply(
                        settings,
                        &self.turn.facts.config,
                        server.as_deref(),
                        &option,
                        &value,
                    );
                    result.is_ok()
                });
                if result.is_ok() {
                    self.record_settings().await;
                }
                let result = result.map(|()| self.views()).map_err(SessionError::from);
                let now = self.settings.borrow().mode;
                if now != before {
                    self.emit(TurnEvent::ModeChanged(now));
                }
                let _ = reply.send(result);
            }
        }
    }

    /// Starts a prompt: a slash command's action, or a normal turn.
    fn start_prompt(
        &mut self,
        prompt: Prompt,
        output: Option<Arc<OutputSchema>>,
        reply: oneshot::Sender<Result<Ran, SessionError>>,
    ) -> Running {
        let Prompt { mut parts, sent } = prompt;
        let invoked = match parts.first() {
            Some(UserPart::Text(text)) => commands::parse(text).and_then(|(name, args)| {
                self.commands
                    .iter()
                    .find(|c| c.name == name)
                    .map(|c| (c.action.clone(), args.to_string()))
            }),
            _ => None,
        };
        let cancel = CancellationToken::new();
        let task = match invoked {
            Some((Action::Compact, _)) => tokio::spawn(turn::compact_now(
                self.turn.clone(),
                self.history.clone(),
                parts,
                cancel.clone(),
            )),
            Some((Action::Permissions, args)) => tokio::spawn(turn::permissions(
                self.turn.clone(),
                self.history.clone(),
                args,
            )),
            Some((Action::Command { line, declared_by }, _)) => {
                let name = match parts.first() {
                    Some(UserPart::Text(text)) => commands::parse(text)
                        .map(|(n, _)| n.to_string())
                        .unwrap_or_default(),
                    _ => String::new(),
                };
                tokio::spawn(turn::run_action(
                    self.turn.clone(),
                    self.history.clone(),
                    turn::Invoked {
                        name,
                        line,
                        declared_by,
                    },
                    cancel.clone(),
                ))
            }
            other => {
                if let Some((Action::Prompt(template), args)) = other {
                    // The model sees the command's prompt; the transcript keeps it as sent.
                    parts[0] = UserPart::Text(commands::expand(&template, &args));
                }
                // Hooks may add to the prompt (or block it) before it is recorded.
                let mut ctx = self.turn.clone();
                ctx.output = output;
                tokio::spawn(turn::run_prompt(
                    ctx,
                    self.history.clone(),
                    Prompt { parts, sent },
                    cancel.clone(),
                ))
            }
        };
        Running {
            task,
            cancel,
            reply,
        }
    }

    /// Takes back a finished turn's history and says how the prompt ended.
    fn take_outcome(
        &mut self,
        outcome: Result<TurnOutcome, tokio::task::JoinError>,
    ) -> Result<Ran, SessionError> {
        match outcome {
            Ok(outcome) => {
                self.history = outcome.history;
                let (output, structured) = (outcome.output, outcome.structured);
                outcome
                    .result
                    .map(|stop| Ran {
                        stop,
                        output,
                        structured,
                    })
                    .map_err(SessionError::Model)
            }
            Err(join) => {
                tracing::error!(session = %self.turn.facts.session_id, "turn task failed: {join}");
                Err(SessionError::Internal(format!(
                    "the turn failed unexpectedly: {join}"
                )))
            }
        }
    }

    /// Waits for the cancelled turn of a session that was closed or deleted and answers its
    /// prompt; unlike [`Self::finish`] nothing more is told to the editor about the session.
    async fn end_closed(&mut self, running: Running) {
        let result = self.take_outcome(running.task.await);
        self.history.transcript().flush().await;
        let _ = running.reply.send(result);
    }

    /// Takes a finished turn's history, titles the session after its first exchange, and
    /// replies once all of it is on disk.
    async fn finish(
        &mut self,
        outcome: Result<TurnOutcome, tokio::task::JoinError>,
        reply: oneshot::Sender<Result<Ran, SessionError>>,
    ) {
        let result = self.take_outcome(outcome);
        if self.title.is_none() {
            let first = self.history.messages().iter().find_map(|m| match &**m {
                Message::User(parts) => super::playback::title_from(parts),
                _ => None,
            });
            if let Some(title) = first {
                self.history.transcript().append(Record::Title {
                    title: title.clone(),
                });
                self.emit(TurnEvent::Title(title.clone()));
                self.title = Some(title);
            }
        }
        self.history.transcript().flush().await;
        if let Some(unsaved) = self.history.transcript().unsaved() {
            // Answered all the same: the turn is whole in memory, and written once the disk
            // takes it; the user is told what is at risk meanwhile.
            self.emit(TurnEvent::Text(format!(
                "\n\n_tandem cannot write this session to disk ({}): {} records are kept in memory and written as soon as the disk takes them, but would be lost if tandem stopped first._\n",
                unsaved.error, unsaved.records
            )));
        }
        let _ = reply.send(result);
    }

    /// Records the settings as they now are, and waits until that is on disk.
    async fn record_settings(&self) {
        let s = self.settings.borrow().clone();
        let transcript = self.history.transcript();
        transcript.append(Record::Settings {
            mode: s.mode.id().to_string(),
            model: s.model,
            reasoning_effort: s.reasoning_effort,
        });
        transcript.flush().await;
    }

    fn views(&self) -> Vec<OptionView> {
        options::views(
            &self.settings.borrow(),
            &self.turn.facts.config,
            self.turn.meters.discovered.borrow().as_deref(),
        )
    }

    fn emit(&self, event: TurnEvent) {
        self.turn.emit(event);
    }
}

#[cfg(test)]
#[path = "actor_tests.rs"]
mod tests;
