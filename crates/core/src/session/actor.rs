//! The session actor: one task owns a session's history and settings; callers send commands
//! with oneshot replies. A running turn is a child task the actor can cancel at any time.
//! Work that comes while a turn runs waits in a queue (queue.rs) and runs, in order, once it
//! ends; a message meant for the running turn goes to its steering (`turn::Steering`).

use std::sync::Arc;

use tokio::sync::{mpsc, oneshot, watch};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::SessionError;
use super::commands::{self, Action, SlashCommand};
use super::options;
use super::queue::{Queue, QueuedWork};
pub(crate) use super::ran::Ran;
use super::ran::Running;
use crate::config::{QueuedPrompts, Settings};
use crate::model::Message;
use crate::output_schema::OutputSchema;
use crate::store::{History, Record};
use crate::turn::{self, Back, Conflicts, Totals, TurnContext, TurnOutcome};
use crate::types::Mode;
use crate::types::OptionView;
use crate::types::{Prompt, UserPart};
use crate::types::{Severity, TurnEvent};

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
    /// `_tandem/session/rewind`.
    Rewind {
        back: Back,
        conflicts: Conflicts,
        reply: oneshot::Sender<Result<Ran, SessionError>>,
    },
    /// `_tandem/session/steer`: answered once the message reached the model.
    Steer {
        prompt: Prompt,
        reply: oneshot::Sender<Result<(), SessionError>>,
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
    /// What waits for the running turn to end.
    queue: Queue,
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
            queue: Queue::default(),
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
                        self.finish(outcome, r.reply, r.before).await;
                        self.next(&mut running);
                    }
                }
            }
        }
        // Closed or deleted: what waited is answered `cancelled`.
        self.queue.cancel_all(&self.turn.services.steering);
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
                let job = QueuedWork::Prompt { prompt, output };
                match running.as_ref() {
                    None => *running = Some(self.start(job, reply)),
                    Some(r) => self.wait(job, reply, r.steerable),
                }
            }
            Command::Rewind {
                back,
                conflicts,
                reply,
            } => {
                let job = QueuedWork::Rewind { back, conflicts };
                match running {
                    None => *running = Some(self.start(job, reply)),
                    Some(_) => self.queue.push(job, reply),
                }
            }
            Command::Steer { prompt, reply } => match running.as_ref() {
                Some(r) if r.steerable => {
                    let landed = self.turn.services.steering.send(prompt);
                    tokio::spawn(async move {
                        let _ = reply.send(match landed.await {
                            Ok(Ok(())) => Ok(()),
                            Ok(Err(why)) => Err(SessionError::SteerRefused(why)),
                            Err(_) => Err(SessionError::NotDelivered),
                        });
                    });
                }
                Some(_) => {
                    let _ = reply.send(Err(SessionError::NotSteerable));
                }
                None => {
                    let _ = reply.send(Err(SessionError::Idle(self.turn.facts.session_id.clone())));
                }
            },
            Command::Cancel => {
                if let Some(r) = running.as_ref() {
                    tracing::info!(session = %self.turn.facts.session_id, "cancelling the running turn");
                    r.cancel.cancel();
                }
                // Everything that waited for it goes with it.
                self.queue.cancel_all(&self.turn.services.steering);
            }
            Command::SetMode { mode, reply } => {
                let _ = reply.send(self.set_mode(&mode).await);
            }
            Command::SetOption {
                option,
                value,
                reply,
            } => {
                let _ = reply.send(self.set_option(&option, &value).await);
            }
        }
    }

    /// `session/set_mode`: the new mode is recorded and told.
    async fn set_mode(&mut self, mode: &str) -> Result<(), SessionError> {
        let Some(mode) = Mode::parse(mode) else {
            return Err(SessionError::InvalidParams(format!(
                "unknown mode `{mode}`; modes: {}",
                Mode::ALL.map(Mode::id).join(", ")
            )));
        };
        self.settings.send_modify(|s| s.mode = mode);
        self.record_settings().await;
        self.emit(TurnEvent::ModeChanged(mode));
        self.emit(TurnEvent::OptionsChanged(self.views()));
        Ok(())
    }

    /// `session/set_config_option`: every option as it now stands (a changed mode is told).
    async fn set_option(
        &mut self,
        option: &str,
        value: &str,
    ) -> Result<Vec<OptionView>, SessionError> {
        let before = self.settings.borrow().mode;
        let mut result = Ok(());
        let server = self.turn.meters.discovered.borrow().clone();
        self.settings.send_if_modified(|settings| {
            result = options::apply(
                settings,
                &self.turn.facts.config,
                server.as_deref(),
                option,
                value,
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
        result
    }

    /// A prompt or rewind that came while a turn runs: it steers that turn when the config
    /// says so and it is a plain prompt for a model turn; otherwise it waits its turn.
    fn wait(
        &mut self,
        job: QueuedWork,
        reply: oneshot::Sender<Result<Ran, SessionError>>,
        steerable: bool,
    ) {
        // Behind work already waiting it waits too: it must not overtake a queued rewind.
        let steers = steerable
            && self.queue.is_empty()
            && self.turn.facts.config.queued_prompts == QueuedPrompts::Steer
            && matches!(&job, QueuedWork::Prompt { prompt, output: None } if self.invoked(prompt).is_none());
        match job {
            QueuedWork::Prompt { prompt, .. } if steers => {
                let landed = self.turn.services.steering.send(prompt.clone());
                self.queue.ride(prompt, landed, reply);
            }
            job => self.queue.push(job, reply),
        }
    }

    /// Starts what waited longest, once the running turn ended.
    fn next(&mut self, running: &mut Option<Running>) {
        if let Some((job, reply)) = self.queue.pop() {
            *running = Some(self.start(job, reply));
        }
    }

    /// Starts `job`.
    fn start(
        &mut self,
        job: QueuedWork,
        reply: oneshot::Sender<Result<Ran, SessionError>>,
    ) -> Running {
        match job {
            QueuedWork::Prompt { prompt, output } => self.start_prompt(prompt, output, reply),
            QueuedWork::Rewind { back, conflicts } => {
                let cancel = CancellationToken::new();
                let task = tokio::spawn(turn::rewind(
                    self.turn.clone(),
                    self.history.clone(),
                    back,
                    conflicts,
                    false,
                    cancel.clone(),
                ));
                self.running(task, cancel, reply, false)
            }
        }
    }

    /// The slash command `prompt` starts with, when it names one, with its arguments and the
    /// text after its line.
    fn invoked(&self, prompt: &Prompt) -> Option<(Action, String, String)> {
        match prompt.parts.first() {
            Some(UserPart::Text(text)) => commands::parse(text).and_then(|invoked| {
                self.commands
                    .iter()
                    .find(|c| c.name == invoked.name)
                    .map(|c| {
                        let (args, after) = (invoked.args.to_string(), invoked.after.to_string());
                        (c.action.clone(), args, after)
                    })
            }),
            _ => None,
        }
    }

    /// Starts a prompt: a slash command's action, or a normal turn.
    fn start_prompt(
        &mut self,
        prompt: Prompt,
        output: Option<Arc<OutputSchema>>,
        reply: oneshot::Sender<Result<Ran, SessionError>>,
    ) -> Running {
        let invoked = self.invoked(&prompt);
        let Prompt { mut parts, sent } = prompt;
        let cancel = CancellationToken::new();
        let mut steerable = false;
        let task = match invoked {
            Some((Action::Rewind, args, _)) => tokio::spawn(turn::rewind(
                self.turn.clone(),
                self.history.clone(),
                Back::parse(&args),
                Conflicts::Ask,
                true,
                cancel.clone(),
            )),
            Some((Action::Undo, ..)) => tokio::spawn(turn::rewind(
                self.turn.clone(),
                self.history.clone(),
                Back::Last,
                Conflicts::Ask,
                true,
                cancel.clone(),
            )),
            Some((Action::Compact, ..)) => tokio::spawn(turn::compact_now(
                self.turn.clone(),
                self.history.clone(),
                parts,
                cancel.clone(),
            )),
            Some((Action::Permissions, args, _)) => tokio::spawn(turn::permissions(
                self.turn.clone(),
                self.history.clone(),
                args,
            )),
            Some((Action::Command { line, declared_by }, ..)) => {
                let name = match parts.first() {
                    Some(UserPart::Text(text)) => commands::parse(text)
                        .map(|invoked| invoked.name.to_string())
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
                if let Some((Action::Prompt(template), args, after)) = other {
                    // The model sees the command's prompt, then what followed its line; the
                    // transcript keeps it as sent.
                    let mut text = commands::expand(&template, &args);
                    if !after.is_empty() {
                        text = format!("{text}\n\n{after}");
                    }
                    parts[0] = UserPart::Text(text);
                }
                // Hooks may add to the prompt (or block it) before it is recorded.
                let mut ctx = self.turn.clone();
                ctx.output = output;
                steerable = true;
                tokio::spawn(turn::run_prompt(
                    ctx,
                    self.history.clone(),
                    Prompt { parts, sent },
                    cancel.clone(),
                ))
            }
        };
        self.running(task, cancel, reply, steerable)
    }

    /// A job just started: its task, its cancel, who waits for its answer, and whether
    /// messages can steer it.
    fn running(
        &self,
        task: JoinHandle<TurnOutcome>,
        cancel: CancellationToken,
        reply: oneshot::Sender<Result<Ran, SessionError>>,
        steerable: bool,
    ) -> Running {
        let before = *self.turn.meters.totals.borrow();
        Running::new(task, cancel, reply, steerable, before)
    }

    /// Takes back a finished turn's history and says how the prompt ended and what it spent
    /// since the session's totals were `before`.
    fn take_outcome(
        &mut self,
        outcome: Result<TurnOutcome, tokio::task::JoinError>,
        before: Totals,
    ) -> Result<Ran, SessionError> {
        match outcome {
            Ok(outcome) => {
                self.history = outcome.history;
                let spent = self.turn.meters.totals.borrow().since(&before);
                let ran = Ran::of(outcome.output, outcome.structured, outcome.rewound, spent);
                outcome.result.map(ran).map_err(SessionError::Model)
            }
            Err(join) => {
                tracing::error!(session = %self.turn.facts.session_id, "turn task failed: {join}");
                Err(SessionError::Internal(format!(
                    "the turn failed unexpectedly: {join}"
                )))
            }
        }
    }

    /// Titles the session after its first exchange, and again after a rewind took turns back:
    /// the first turn kept gives the title, or when none is, the next prompt does. Recorded,
    /// and told to the editor when it changed.
    fn retitle(&mut self, result: &Result<Ran, SessionError>) {
        let rewound = match result {
            Ok(Ran {
                rewound: Some(report),
                ..
            }) if report.turn.is_some() && report.problem.is_none() && report.failure.is_none() => {
                Some(report.turns.first().and_then(|turn| turn.title.clone()))
            }
            _ => None,
        };
        let title = match rewound {
            Some(None) => {
                self.title = None;
                return;
            }
            Some(first) => first,
            None if self.title.is_none() => {
                // The first prompt: its words as the history holds them (no compaction yet).
                self.history.messages().iter().find_map(|m| match &**m {
                    Message::User(parts) => crate::store::title::from_prompt(parts),
                    _ => None,
                })
            }
            None => None,
        };
        let Some(title) = title.filter(|t| self.title.as_ref() != Some(t)) else {
            return;
        };
        self.history.transcript().retitle(&title);
        self.emit(TurnEvent::Title(title.clone()));
        self.title = Some(title);
    }

    /// Waits for the cancelled turn of a session that was closed or deleted and answers its
    /// prompt; unlike [`Self::finish`] nothing more is told to the editor about the session.
    async fn end_closed(&mut self, running: Running) {
        let result = self.take_outcome(running.task.await, running.before);
        self.history.transcript().flush().await;
        let _ = running.reply.send(result);
    }

    /// Takes a finished turn's history, titles the session after its first exchange, and
    /// replies once all of it is on disk.
    async fn finish(
        &mut self,
        outcome: Result<TurnOutcome, tokio::task::JoinError>,
        reply: oneshot::Sender<Result<Ran, SessionError>>,
        before: Totals,
    ) {
        let result = self.take_outcome(outcome, before);
        // Prompts that steered the turn end with it; those that came too late run next.
        self.queue
            .settle_riders(&self.turn.services.steering, &result);
        self.retitle(&result);
        self.history.transcript().flush().await;
        if let Some(unsaved) = self.history.transcript().unsaved() {
            // Answered all the same: the turn is whole in memory, and written once the disk
            // takes it; the user is told what is at risk meanwhile.
            let text = unsaved.told();
            self.emit(TurnEvent::Notice {
                severity: Severity::Error,
                text,
            });
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
            auto_compact: Some(s.auto_compact),
        });
        transcript.flush().await;
    }

    fn views(&self) -> Vec<OptionView> {
        options::views(
            &self.settings.borrow(),
            &self.turn.facts.config,
            self.turn.meters.discovered.borrow().as_deref(),
            self.turn.services.caps.boolean_options,
        )
    }

    fn emit(&self, event: TurnEvent) {
        self.turn.emit(event);
    }
}

#[cfg(test)]
#[path = "actor_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "steer_tests.rs"]
mod steer_tests;
