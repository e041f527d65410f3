//! A session's conversation and its transcript records, owned together: the one place that
//! keeps the invariant "every tool call has exactly one result, in the order of the calls".
//!
//! The turn pushes what happens ([`History::push_user`], [`History::push_assistant`],
//! [`History::answer`], [`History::close_unanswered`], [`History::compact`]); each is recorded
//! in the transcript and applied to the messages the model sees. Loading a session replays
//! the records through the same steps ([`History::rebuild`]), so a loaded conversation is the
//! one that was live. It lives in store/ rather than session/ because the turn, which sits
//! below the session, is what writes it.
//!
//! [`WriteAhead`] is the ledger the turn's tool calls record their file changes in before
//! they make them (see [`crate::types::Journal`]); [`Flight`] marks an intent this process
//! is carrying out, so a load of the same session meanwhile does not take it for one a
//! crash left unfinished.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, LazyLock};

use parking_lot::Mutex;

use super::call_ids::CallIds;
use super::frame::Frame;
use super::record::{self, Line, Outcome, Record, Snapshot};
use super::timeline::Timeline;
use super::transcript::Transcript;
use crate::conversation::{Message, ToolResult};
use crate::types::{Effect, Intending, Ledger, PromptBlock, ToolCallView, UserPart};

/// What a call whose result never reached the transcript (tandem stopped mid-turn) reads.
pub(crate) const NOT_FINISHED: &str = "Not run: tandem stopped before this call finished.";

/// The conversation and where it is recorded.
#[derive(Debug, Clone)]
pub(crate) struct History {
    conversation: Conversation,
    transcript: Transcript,
    /// The editor's ids for the calls so far.
    call_ids: CallIds,
    /// The fixed start of the requests, once the first one was made; a compaction drops it.
    frame: Option<Frame>,
}

impl History {
    /// An empty conversation recorded in `transcript`.
    pub(crate) fn new(transcript: Transcript) -> Self {
        Self {
            conversation: Conversation::default(),
            transcript,
            call_ids: CallIds::default(),
            frame: None,
        }
    }

    /// An empty conversation of the subagent run by the call the editor knows as `task_id`.
    pub(crate) fn nested(transcript: Transcript, task_id: &str) -> Self {
        Self {
            call_ids: CallIds::nested(task_id),
            ..Self::new(transcript)
        }
    }

    /// The conversation `lines` recorded, going on in `transcript`: the turns a rewind took
    /// back are left out (see [`Timeline`]), though their calls' ids stay taken. A call whose
    /// result is missing (a crash mid-turn) is answered with [`NOT_FINISHED`].
    pub(crate) fn rebuild(lines: &[Line], transcript: Transcript) -> Self {
        let timeline = Timeline::new(lines);
        let mut conversation = Conversation::default();
        let mut call_ids = CallIds::default();
        for (i, line) in lines.iter().enumerate() {
            if !timeline.kept(i) {
                call_ids.pass(&line.record);
                continue;
            }
            match &line.record {
                Record::User { parts, .. } => conversation.user(parts.clone()),
                Record::Assistant {
                    text,
                    reasoning,
                    tool_calls,
                    carried,
                } => {
                    call_ids.issue_all(tool_calls);
                    conversation.assistant(Message::Assistant {
                        text: text.clone(),
                        reasoning: reasoning.clone(),
                        tool_calls: tool_calls.clone(),
                        carried: carried.clone().map(Box::new),
                    });
                }
                Record::ToolResult {
                    call_id,
                    content,
                    images,
                    ..
                } => conversation.answer(
                    call_id,
                    ToolResult {
                        content: content.clone(),
                        images: images.clone(),
                    },
                ),
                Record::Context { text } => conversation.context(text.clone()),
                Record::CutOff { call_ids: cut } => call_ids.reserve(cut),
                Record::Compaction { summary, kept } => conversation.compact(summary, *kept),
                Record::ImagesLeftOut { note } => conversation.leave_out_images(note),
                Record::Meta { .. }
                | Record::Command { .. }
                | Record::Note { .. }
                | Record::Folders { .. }
                | Record::Plan { .. }
                | Record::Settings { .. }
                | Record::Title { .. }
                | Record::FileChange { .. }
                | Record::FileIntent { .. }
                | Record::FileOutcome { .. }
                | Record::CommandRan { .. }
                | Record::RewindIntent { .. }
                | Record::RewindDropped { .. }
                | Record::Rewind { .. }
                | Record::Subagent { .. } => {}
            }
        }
        conversation.settle(NOT_FINISHED);
        Self {
            conversation,
            transcript,
            call_ids,
            frame: None,
        }
    }

    /// The messages the model sees (after the system prompt). Each is shared: a request
    /// holds the same messages, not copies of them.
    pub(crate) fn messages(&self) -> &[Arc<Message>] {
        &self.conversation.messages
    }

    /// The editor's ids as they stand: the next response's calls get the ids this gives out
    /// (see [`CallIds`]).
    pub(crate) fn call_ids(&self) -> CallIds {
        self.call_ids.clone()
    }

    /// Where the conversation is recorded.
    pub(crate) fn transcript(&self) -> &Transcript {
        &self.transcript
    }

    /// Adds a user message tandem wrote itself within a turn (a subagent's task, a request to
    /// redo an answer).
    pub(crate) fn push_user(&mut self, parts: Vec<UserPart>) {
        self.push(parts, None, true);
    }

    /// Adds the user's prompt, which starts a turn: `parts` as the model reads them, `sent`
    /// as the editor sent them (recorded only where a load would not show them from `parts`).
    pub(crate) fn push_prompt(&mut self, parts: Vec<UserPart>, sent: Vec<PromptBlock>) {
        let sent = (sent != PromptBlock::of_parts(&parts)).then_some(sent);
        self.push(parts, sent, false);
    }

    /// Adds a message the user sent while a turn ran (steering it), where it reached the
    /// model.
    pub(crate) fn push_steer(&mut self, parts: Vec<UserPart>, sent: Vec<PromptBlock>) {
        let sent = (sent != PromptBlock::of_parts(&parts)).then_some(sent);
        self.push(parts, sent, true);
    }

    fn push(&mut self, parts: Vec<UserPart>, sent: Option<Vec<PromptBlock>>, within_turn: bool) {
        self.close_unanswered(NOT_FINISHED);
        self.transcript.append(Record::User {
            parts: parts.clone(),
            sent,
            within_turn,
        });
        self.conversation.user(parts);
    }

    /// Records what a tool call did (the commands it started, and the files it changed
    /// without a ledger: those of a journal with one are recorded already), before its
    /// result.
    pub(crate) fn effects(&mut self, effects: Vec<Effect>) {
        for effect in effects {
            self.transcript.append(match effect {
                Effect::File {
                    path,
                    before,
                    after,
                } => Record::FileChange {
                    path,
                    before: Snapshot::of(before.as_deref()),
                    after: Snapshot::of(after.as_deref()),
                },
                Effect::Command { line } => Record::CommandRan { line },
            });
        }
    }

    /// Adds one model response (a [`Message::Assistant`]). It is recorded when it said
    /// anything (reasoning included); the model sees it again when it has text or calls, and
    /// its calls wait for results. Returns the ids the editor knows its calls by (see
    /// [`CallIds`]).
    pub(crate) fn push_assistant(&mut self, answer: Message) -> Vec<String> {
        self.close_unanswered(NOT_FINISHED);
        let Message::Assistant {
            text,
            reasoning,
            tool_calls,
            carried,
        } = &answer
        else {
            return Vec::new();
        };
        let shown = self.call_ids.issue_all(tool_calls);
        if !text.is_empty() || !reasoning.is_empty() || !tool_calls.is_empty() {
            self.transcript.append(Record::Assistant {
                text: text.clone(),
                reasoning: reasoning.clone(),
                tool_calls: tool_calls.clone(),
                carried: carried.as_deref().cloned(),
            });
        }
        self.conversation.assistant(answer);
        shown
    }

    /// Keeps the editor ids of calls shown while they streamed and cut off before they were
    /// complete taken, in the live session and in a reload of it (see [`Record::CutOff`]).
    pub(crate) fn cut_off(&mut self, ids: Vec<String>) {
        if ids.is_empty() {
            return;
        }
        self.call_ids.reserve(&ids);
        self.transcript.append(Record::CutOff { call_ids: ids });
    }

    /// Records the result of the open call `call_id` (with how the editor last showed it) at
    /// once; the model sees the results in call order once every call has one.
    pub(crate) fn answer(&mut self, call_id: &str, result: ToolResult, view: Option<ToolCallView>) {
        self.transcript.append(Record::ToolResult {
            call_id: call_id.to_string(),
            content: result.content.clone(),
            view: view.map(|v| record::view_by_reference(v, &result.images)),
            images: result.images.clone(),
        });
        self.conversation.answer(call_id, result);
    }

    /// The fixed start of the requests, when one was made since the last compaction.
    pub(crate) fn frame(&mut self) -> Option<&mut Frame> {
        self.frame.as_mut()
    }

    /// Fixes the start of the requests from now on.
    pub(crate) fn set_frame(&mut self, frame: Frame) {
        self.frame = Some(frame);
    }

    /// Tells the model `text` at this point of the conversation (see [`Record::Context`]).
    /// It joins the last message, so roles still alternate the way chat templates expect.
    pub(crate) fn push_context(&mut self, text: String) {
        self.transcript
            .append(Record::Context { text: text.clone() });
        self.conversation.context(text);
    }

    /// Records a slash command the model does not see, so a load shows it where it ran.
    pub(crate) fn push_command(&mut self, parts: Vec<UserPart>) {
        self.transcript.append(Record::Command { parts });
    }

    /// Records what tandem told the user outside the model's answers.
    pub(crate) fn push_note(&mut self, text: String) {
        self.transcript.append(Record::Note { text });
    }

    /// Answers every open call that has no result yet with `why`.
    pub(crate) fn close_unanswered(&mut self, why: &str) {
        for id in self.conversation.unanswered() {
            self.answer(&id, why.to_string().into(), None);
        }
    }

    /// Whether any message holds an image (the user's, or one a call gave).
    pub(crate) fn holds_images(&self) -> bool {
        self.conversation.messages.iter().any(|m| match &**m {
            Message::User(parts) => parts.iter().any(|p| matches!(p, UserPart::Image { .. })),
            Message::Tool { images, .. } => !images.is_empty(),
            _ => false,
        })
    }

    /// Leaves every image the conversation holds out of it from now on, each replaced by
    /// `note` (the model server refused a request that held them).
    pub(crate) fn leave_out_images(&mut self, note: &str) {
        self.transcript.append(Record::ImagesLeftOut {
            note: note.to_string(),
        });
        self.conversation.leave_out_images(note);
    }

    /// Replaces all but the last `kept` messages with `summary`.
    pub(crate) fn compact(&mut self, summary: &str, kept: usize) {
        self.close_unanswered(NOT_FINISHED);
        self.transcript.append(Record::Compaction {
            summary: summary.to_string(),
            kept,
        });
        self.conversation.compact(summary, kept);
        self.frame = None;
    }
}

/// The ids of the intents (file changes, rewinds) this process is carrying out.
static IN_FLIGHT: LazyLock<Mutex<HashSet<String>>> = LazyLock::new(Mutex::default);

/// An intent this process is carrying out, from its record until its outcome is queued:
/// while it lives, [`Flight::is_on`] says so for its id.
#[derive(Debug)]
pub(crate) struct Flight(String);

impl Flight {
    /// Marks `id` as being carried out.
    pub(crate) fn start(id: &str) -> Self {
        IN_FLIGHT.lock().insert(id.to_string());
        Self(id.to_string())
    }

    /// Whether the intent `id` is being carried out in this process.
    pub(crate) fn is_on(id: &str) -> bool {
        IN_FLIGHT.lock().contains(id)
    }
}

impl Drop for Flight {
    fn drop(&mut self) {
        IN_FLIGHT.lock().remove(&self.0);
    }
}

/// The ledger of a call's file changes: each is recorded in `transcript` as a
/// [`Record::FileIntent`], and written, before the file is touched, and its
/// [`Record::FileOutcome`] after. The intent holds the text before (what a rewind puts
/// back) and only the hash of the text after, which the outcome holds whole: the record a
/// change waits for is half the size, and a 3 MB write is not slowed by writing 6. The disk taking the intent is what the change waits for:
/// [`Transcript::flush`] returns once the writer has handed it to the kernel, which a kill
/// cannot undo (no fsync: a power cut is not what this guards against).
pub(crate) struct WriteAhead {
    transcript: Transcript,
    flights: Mutex<HashMap<String, Flight>>,
}

impl WriteAhead {
    /// The ledger of changes recorded in `transcript`.
    pub(crate) fn new(transcript: Transcript) -> Self {
        Self {
            transcript,
            flights: Mutex::default(),
        }
    }
}

impl Ledger for WriteAhead {
    fn intend<'a>(&'a self, change: &'a Effect) -> Intending<'a> {
        Box::pin(async move {
            let Effect::File {
                path,
                before,
                after,
            } = change
            else {
                return Err("only file changes are recorded ahead".to_string());
            };
            let id = uuid::Uuid::new_v4().to_string();
            self.flights.lock().insert(id.clone(), Flight::start(&id));
            self.transcript.append(Record::FileIntent {
                id: id.clone(),
                path: path.clone(),
                before: Snapshot::of(before.as_deref()),
                after: Snapshot::digest(after.as_deref()),
            });
            self.transcript.flush().await;
            if let Some(unsaved) = self.transcript.unsaved() {
                // The intent waits in memory with the rest; its outcome follows it there, so
                // a transcript the disk takes later says the change was not made.
                self.settle(&id, change, Err("its record could not be written first"));
                return Err(format!(
                    "this session's transcript cannot be written ({})",
                    unsaved.error
                ));
            }
            Ok(id)
        })
    }

    fn settle(&self, id: &str, change: &Effect, made: Result<(), &str>) {
        let (outcome, after) = match (made, change) {
            (Ok(()), Effect::File { after, .. }) => {
                (Outcome::Done, Some(Snapshot::of(after.as_deref())))
            }
            (Ok(()), Effect::Command { .. }) => (Outcome::Done, None),
            (Err(why), _) => (
                Outcome::NotMade {
                    why: why.to_string(),
                },
                None,
            ),
        };
        self.transcript.append(Record::FileOutcome {
            id: id.to_string(),
            outcome,
            after,
            found: false,
        });
        self.flights.lock().remove(id);
    }
}

/// The messages, and the calls of the last response still waiting for results.
#[derive(Debug, Clone, Default)]
struct Conversation {
    messages: Vec<Arc<Message>>,
    open: Option<OpenCalls>,
}

/// A response's calls in their order, and the results that came so far.
#[derive(Debug, Clone)]
struct OpenCalls {
    ids: Vec<String>,
    results: HashMap<String, ToolResult>,
}

impl Conversation {
    fn user(&mut self, parts: Vec<UserPart>) {
        self.settle(NOT_FINISHED);
        self.messages.push(Arc::new(Message::User(parts)));
    }

    fn assistant(&mut self, answer: Message) {
        self.settle(NOT_FINISHED);
        let Message::Assistant {
            text, tool_calls, ..
        } = &answer
        else {
            return;
        };
        if text.is_empty() && tool_calls.is_empty() {
            return;
        }
        if !tool_calls.is_empty() {
            self.open = Some(OpenCalls {
                ids: tool_calls.iter().map(|c| c.id.clone()).collect(),
                results: HashMap::new(),
            });
        }
        self.messages.push(Arc::new(answer));
    }

    /// Takes the first result of an open call; a result for anything else is ignored.
    fn answer(&mut self, call_id: &str, result: ToolResult) {
        let Some(open) = self.open.as_mut() else {
            return;
        };
        if !open.ids.iter().any(|id| id == call_id) || open.results.contains_key(call_id) {
            return;
        }
        open.results.insert(call_id.to_string(), result);
        if open.results.len() == open.ids.len() {
            self.settle(NOT_FINISHED);
        }
    }

    fn unanswered(&self) -> Vec<String> {
        self.open.as_ref().map_or_else(Vec::new, |open| {
            open.ids
                .iter()
                .filter(|id| !open.results.contains_key(*id))
                .cloned()
                .collect()
        })
    }

    /// Closes the open calls: each gets its result (or `why`), in call order.
    fn settle(&mut self, why: &str) {
        let Some(OpenCalls { ids, mut results }) = self.open.take() else {
            return;
        };
        for id in ids {
            let ToolResult { content, images } = results
                .remove(&id)
                .unwrap_or_else(|| ToolResult::from(why.to_string()));
            self.messages.push(Arc::new(Message::Tool {
                call_id: id,
                content,
                images,
            }));
        }
    }

    /// Adds `text` to the last message: a tool result or user message gets it appended, and
    /// an empty conversation or a finished answer is followed by a user message holding it.
    fn context(&mut self, text: String) {
        self.settle(NOT_FINISHED);
        match self.messages.last_mut().map(Arc::make_mut) {
            Some(Message::Tool { content, .. }) => {
                content.push_str("\n\n");
                content.push_str(&text);
            }
            Some(Message::User(parts)) => parts.push(UserPart::Text(text)),
            _ => self
                .messages
                .push(Arc::new(Message::User(vec![UserPart::Text(text)]))),
        }
    }

    fn leave_out_images(&mut self, note: &str) {
        let text = |note: &str| format!("[image omitted: {note}]");
        for message in &mut self.messages {
            if message.holds_images() {
                Arc::make_mut(message).drop_images(&text(note), || true);
            }
        }
        if let Some(open) = &mut self.open {
            for result in open.results.values_mut() {
                for _ in result.images.drain(..) {
                    result.content.push('\n');
                    result.content.push_str(&text(note));
                }
            }
        }
    }

    /// Replaces all but the last `kept` messages with `summary`, put in front of the first
    /// kept user message (so user and assistant turns still alternate).
    fn compact(&mut self, summary: &str, kept: usize) {
        self.settle(NOT_FINISHED);
        let split = self.messages.len().saturating_sub(kept);
        let mut recent = self.messages.split_off(split);
        let note = UserPart::Text(record::summary_preamble(summary));
        match recent.first_mut().map(Arc::make_mut) {
            Some(Message::User(parts)) => parts.insert(0, note),
            _ => recent.insert(0, Arc::new(Message::User(vec![note]))),
        }
        self.messages = recent;
    }
}

#[cfg(test)]
#[path = "history_tests.rs"]
mod tests;
