//! Turning a stored transcript back into what the editor saw, for `session/load`.

use crate::model::ToolCall;
use crate::store::record;
use crate::store::timeline::Timeline;
use crate::store::{CallIds, Line, Record};
use crate::types::{CompactionStatus, PromptBlock};
use crate::types::{Severity, ToolCallView, ToolContent, ToolKind, ToolStatus, TurnEvent};

/// What a replayed command shows when its transcript kept no output (written by an older
/// tandem): its terminal is long gone.
const OUTPUT_NOT_KEPT: &str = "Ran in the editor's terminal; its output was not kept.";

/// The updates that show the conversation in `lines`, in order: user messages (slash
/// commands included), reasoning and answers, tool calls in their final state and in the
/// order the model made them, plans, and compaction points.
#[cfg(test)]
pub(crate) fn events(lines: &[Line]) -> Vec<TurnEvent> {
    let mut playback = Playback::new(lines);
    let mut events = Vec::new();
    while let Some(batch) = playback.next_batch(usize::MAX) {
        events.extend(batch);
    }
    events
}

/// The same updates as [`events`], made a batch at a time, so a long session's replay is
/// never all in memory at once.
pub struct Playback<'a> {
    lines: &'a [Line],
    /// The conversation as it stands: turns a rewind took back are not shown, though their
    /// calls keep the ids the live session gave them.
    timeline: Timeline<'a>,
    ids: CallIds,
    /// The last model response's calls, in order, with their results so far.
    open: Open,
    /// The next line to play.
    next: usize,
}

impl<'a> Playback<'a> {
    /// Ready to play `lines` from the start.
    pub(crate) fn new(lines: &'a [Line]) -> Self {
        Playback {
            lines,
            timeline: Timeline::new(lines),
            ids: CallIds::default(),
            open: Open::default(),
            next: 0,
        }
    }

    /// At least `size` updates (fewer only at the end), or `None` once all were given.
    pub fn next_batch(&mut self, size: usize) -> Option<Vec<TurnEvent>> {
        if self.next > self.lines.len() {
            return None;
        }
        let mut events = Vec::new();
        while events.len() < size && self.next < self.lines.len() {
            self.step(self.next, &mut events);
            self.next += 1;
        }
        if self.next == self.lines.len() {
            self.open.interrupted(&mut events);
            self.next += 1;
        }
        Some(events)
    }

    /// The updates line `i` adds.
    fn step(&mut self, i: usize, events: &mut Vec<TurnEvent>) {
        let (ids, open) = (&mut self.ids, &mut self.open);
        let line = &self.lines[i];
        if !self.timeline.kept(i) {
            ids.pass(&line.record);
            return;
        }
        match &line.record {
            Record::User { .. } | Record::Command { .. } => {
                open.interrupted(events);
                events.push(TurnEvent::NewMessage);
                events.push(TurnEvent::UserMessage(user_blocks(&line.record)));
            }
            Record::Assistant {
                text,
                reasoning,
                tool_calls,
                ..
            } => {
                open.interrupted(events);
                events.push(TurnEvent::NewMessage);
                if !reasoning.is_empty() {
                    events.push(TurnEvent::Thought(reasoning.clone()));
                }
                if !text.is_empty() {
                    events.push(TurnEvent::Text(text.clone()));
                }
                open.start(tool_calls, ids.issue_all(tool_calls));
            }
            Record::ToolResult {
                call_id,
                view,
                images,
                ..
            } => {
                let view = view.clone().map(|v| record::view_in_full(v, images));
                open.answer(call_id, view, events);
            }
            Record::Plan { entries } => events.push(TurnEvent::Plan(entries.clone())),
            Record::CutOff { call_ids } => ids.reserve(call_ids),
            Record::Note { text } => events.push(TurnEvent::Notice {
                severity: Severity::Info,
                text: text.clone(),
            }),
            Record::Compaction { summary, .. } => {
                open.interrupted(events);
                events.push(TurnEvent::Compaction {
                    id: format!("compaction-{i}"),
                    status: CompactionStatus::Completed,
                    summary: Some(summary.clone()),
                    error: None,
                });
            }
            // A subagent's work was shown inside its `task` call, which is replayed whole.
            Record::Meta { .. }
            | Record::ImagesLeftOut { .. }
            | Record::Context { .. }
            | Record::Folders { .. }
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
}

/// A user message's or slash command's blocks as the user sent them.
fn user_blocks(record: &Record) -> Vec<PromptBlock> {
    match record {
        Record::User { parts, sent, .. } => {
            sent.clone().unwrap_or_else(|| PromptBlock::of_parts(parts))
        }
        Record::Command { parts } => PromptBlock::of_parts(parts),
        _ => Vec::new(),
    }
}

/// One response's calls (as the model made them, with the editor's id) and, per call, its
/// result once recorded (`Some(None)`: answered but never shown).
#[derive(Default)]
struct Open {
    calls: Vec<(ToolCall, String)>,
    results: Vec<Option<Option<ToolCallView>>>,
    /// How many calls from the front have been replayed.
    shown: usize,
}

impl Open {
    /// A new response's `calls`, shown under the editor's ids `shown`, none answered yet.
    fn start(&mut self, calls: &[ToolCall], shown: Vec<String>) {
        self.calls = calls.iter().cloned().zip(shown).collect();
        self.results = vec![None; self.calls.len()];
    }

    /// Takes the first result of the open call `call_id`; replays every call whose
    /// predecessors are all answered, so the editor sees them in the order the model made
    /// them, not the order they finished.
    fn answer(&mut self, call_id: &str, view: Option<ToolCallView>, events: &mut Vec<TurnEvent>) {
        let slot = self
            .calls
            .iter()
            .position(|(c, _)| c.id == call_id)
            .filter(|&i| self.results[i].is_none());
        let Some(i) = slot else {
            return;
        };
        self.results[i] = Some(view.map(|v| replayed(v, &self.calls[i].1)));
        while let Some(Some(result)) = self.results.get_mut(self.shown) {
            if let Some(view) = result.take() {
                events.push(TurnEvent::ToolCall(view));
            }
            self.shown += 1;
        }
    }

    /// Replays what is left: answered calls as they were, calls that never got a result
    /// (tandem stopped mid-turn) as failed; then forgets the response.
    fn interrupted(&mut self, events: &mut Vec<TurnEvent>) {
        let calls = std::mem::take(&mut self.calls);
        let results = std::mem::take(&mut self.results);
        for ((call, id), result) in calls.into_iter().zip(results).skip(self.shown) {
            match result {
                Some(Some(view)) => events.push(TurnEvent::ToolCall(view)),
                Some(None) => {}
                None => events.push(TurnEvent::ToolCall(ToolCallView {
                    id,
                    title: call.name.clone(),
                    kind: ToolKind::Think,
                    status: ToolStatus::Failed,
                    locations: Vec::new(),
                    raw_input: serde_json::from_str(&call.arguments).ok(),
                    content: vec![ToolContent::Text {
                        text: "Interrupted: tandem stopped before this call finished.".into(),
                    }],
                })),
            }
        }
        self.shown = 0;
    }
}

/// A recorded call as a load shows it: under the id the editor knows it by in this session,
/// and with a command's output as text, since its terminal was released long ago.
fn replayed(mut view: ToolCallView, id: &str) -> ToolCallView {
    view.id = id.to_string();
    for content in &mut view.content {
        if let ToolContent::Terminal { output, .. } = content {
            let text = output.take().unwrap_or_else(|| OUTPUT_NOT_KEPT.into());
            *content = ToolContent::Text { text };
        }
    }
    view
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Batches of any size add up to the whole replay, the end's unanswered call included.
    #[test]
    fn batches_add_up_to_the_whole_replay() {
        let at = r#""v":1,"at":"2026-11-28T00:00:00Z""#;
        let call = |i: usize| {
            format!(
                r#"{{{at},"type":"assistant","text":"t{i}","reasoning":"r{i}","tool_calls":[{{"id":"c{i}","name":"read_file","arguments":"{{}}"}},{{"id":"d{i}","name":"read_file","arguments":"{{}}"}}]}}"#
            )
        };
        let mut json = Vec::new();
        for i in 0..5 {
            json.push(format!(
                r#"{{{at},"type":"user","parts":[{{"text":"u{i}"}}]}}"#
            ));
            json.push(call(i));
            json.push(format!(
                r#"{{{at},"type":"tool_result","call_id":"d{i}","content":"x"}}"#
            ));
            json.push(format!(
                r#"{{{at},"type":"tool_result","call_id":"c{i}","content":"x"}}"#
            ));
        }
        json.push(call(9));
        let lines: Vec<Line> = json
            .iter()
            .map(|l| Line::parse(l.as_bytes()).unwrap())
            .collect();
        let whole = format!("{:?}", events(&lines));
        assert!(whole.contains("t9"), "{whole}");
        for size in [1, 2, 3, 7, 1024] {
            let mut playback = Playback::new(&lines);
            let mut joined = Vec::new();
            while let Some(batch) = playback.next_batch(size) {
                assert!(batch.len() >= size || playback.next_batch(size).is_none());
                joined.extend(batch);
            }
            assert_eq!(format!("{joined:?}"), whole, "batches of {size}");
        }
    }
}
