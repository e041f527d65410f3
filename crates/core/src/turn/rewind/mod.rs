//! Taking turns back: `/rewind` lists the turns, `/rewind N` (and `/undo`, for the last
//! one, and `_tandem/session/rewind`) goes back to before turn N. The conversation continues
//! from before that prompt, and every file tandem changed since is put back, once checked:
//! a file that no longer holds what tandem last wrote (the user or a command changed it) is
//! not overwritten unless the user says so. What commands did cannot be taken back; the
//! answer names them. The transcript stays append-only: the rewind is one more record
//! (`store::timeline` reads the conversation through it).
//!
//! A rewind that puts files back is write-ahead: once every question is answered, the files
//! and what each will hold are recorded ([`Record::RewindIntent`]) and written before the
//! first is touched, and the [`Record::Rewind`] that completes it follows the last. A kill
//! part-way leaves the intent, which the next load completes (`session::settle`); a rewind
//! whose intent the transcript refuses (a full disk) touches nothing.

mod files;
pub(super) mod report;

use std::path::PathBuf;

use tokio_util::sync::CancellationToken;

use super::context::TurnContext;
use super::outcome::TurnOutcome;
use crate::store::history::Flight;
use crate::store::timeline::{FileBack, Timeline, Touch};
use crate::store::{History, Line, Record, Restored, Snapshot, Transcript};
use crate::types::TurnEvent;
use crate::types::{Location, StopReason, ToolCallView, ToolContent, ToolKind, ToolStatus};
use crate::types::{PermissionAnswer, PermissionChoice};
use files::PutBack;
use report::{Conflicts, FileOutcome, FileResult, RewindReport};

/// How many turns `/rewind` lists.
const LISTED: usize = 10;

/// Where a rewind goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Back {
    /// Nowhere: list the turns.
    List,
    /// To before turn N (1-based).
    Turn(usize),
    /// To before the last turn (`/undo`).
    Last,
    /// `/rewind` with an argument that is not a turn number (as typed).
    Unknown(String),
}

impl Back {
    /// What `/rewind`'s arguments ask for.
    pub(crate) fn parse(args: &str) -> Back {
        let args = args.trim();
        if args.is_empty() {
            return Back::List;
        }
        match args.parse::<usize>() {
            Ok(n) => Back::Turn(n),
            Err(_) => Back::Unknown(args.to_string()),
        }
    }
}

/// `/rewind`, `/rewind N`, `/undo` and `_tandem/session/rewind`: goes `back` to before a
/// turn, or lists the turns. `speak`: the answer is also shown as the agent's
/// text (a slash command's), not only returned.
pub(crate) async fn rewind(
    ctx: TurnContext,
    history: History,
    back: Back,
    conflicts: Conflicts,
    speak: bool,
    cancel: CancellationToken,
) -> TurnOutcome {
    let transcript = history.transcript().clone();
    transcript.flush().await;
    let lines = match read_lines(&transcript) {
        Ok(lines) => lines,
        Err(why) => {
            let mut outcome = told(&ctx, history, speak, Err(why.clone()));
            if let Some(report) = &mut outcome.rewound {
                report.problem = None;
                report.failure = Some(why);
            }
            return outcome;
        }
    };
    let timeline = Timeline::new(&lines);
    let n = match back {
        Back::List => return told(&ctx, history, speak, Ok(listing(&ctx, &timeline))),
        Back::Turn(n) => n,
        Back::Last => timeline.len(),
        Back::Unknown(args) => {
            let why = format!(
                "`/rewind {args}`: give the number of a turn (`/rewind` lists them), or use `/undo` for the last one."
            );
            return told(&ctx, history, speak, Err(why));
        }
    };
    let Some(plan) = timeline.rewind(n) else {
        let why = match timeline.len() {
            0 => "There is nothing to rewind: this session has no turn yet.".to_string(),
            k => format!("There is no turn {n}: this session has {k} turn(s), 1 to {k}."),
        };
        return told(&ctx, history, speak, Err(why));
    };
    let mut report = RewindReport {
        turn: Some(n),
        commands: plan.turns.iter().flat_map(|t| t.commands.clone()).collect(),
        taken_back: plan.turns,
        through_editor: ctx.services.caps.write_text_file,
        ..RewindReport::default()
    };
    let Some(decided) = decide(&ctx, n, plan.files, conflicts, &cancel).await else {
        // Cancelled while the user was asked: nothing was changed.
        return TurnOutcome::ended(history, Ok(StopReason::Cancelled));
    };
    let planned: Vec<Restored> = decided.iter().filter_map(Decided::planned).collect();
    crate::types::pause("rewind-decided").await;
    let intent = match intend(&transcript, n, planned).await {
        Ok(intent) => intent,
        Err(why) => return told(&ctx, history, speak, Err(why)),
    };
    let mut restored = Vec::new();
    for file in decided {
        let writes = file.writes();
        report.files.push(apply(&ctx, file, &mut restored).await);
        if writes {
            crate::types::pause("rewind-restored").await;
        }
    }
    transcript.append(Record::Rewind {
        turn: n,
        restored,
        intent: intent.as_ref().map(|(id, _)| id.clone()),
    });
    transcript.flush().await;
    drop(intent);
    let history = match read_lines(&transcript) {
        Ok(lines) => {
            report.turns = Timeline::new(&lines).turns();
            History::rebuild(&lines, transcript)
        }
        // The record is queued all the same; the next load reads it.
        Err(why) => {
            tracing::warn!("cannot read the transcript back after a rewind: {why}");
            history
        }
    };
    report.message = described(&ctx, &report);
    told(&ctx, history, speak, Ok(report))
}

/// Records the rewind to before turn `n` as intended, with the `files` it puts back, and
/// waits until that is written: its id, and its [`Flight`] while it is applied (`None` when
/// it puts no file back: its [`Record::Rewind`] alone is then all of it), or why it cannot be
/// recorded, and then no file may be touched.
async fn intend(
    transcript: &Transcript,
    n: usize,
    files: Vec<Restored>,
) -> Result<Option<(String, Flight)>, String> {
    if files.is_empty() {
        return Ok(None);
    }
    let id = uuid::Uuid::new_v4().to_string();
    let flight = Flight::start(&id);
    transcript.append(Record::RewindIntent {
        id: id.clone(),
        turn: n,
        files,
    });
    transcript.flush().await;
    if let Some(unsaved) = transcript.unsaved() {
        // The intent waits in memory; this follows it, so a later load does not apply it.
        transcript.append(Record::RewindDropped {
            id,
            why: format!("its record could not be written first ({})", unsaved.error),
        });
        return Err(format!(
            "Nothing was rewound, and no file touched: tandem records a rewind before it puts any file back, so that a crash part-way leaves a rewind it can finish, and this session's transcript cannot be written ({}). Free some space and try again.",
            unsaved.error
        ));
    }
    crate::types::pause("rewind-intended").await;
    Ok(Some((id, flight)))
}

/// The transcript's records, with those still waiting for the disk.
fn read_lines(transcript: &crate::store::Transcript) -> Result<Vec<Line>, String> {
    transcript
        .lines()
        .map_err(|e| format!("tandem cannot read this session's transcript: {e}"))
}

/// Ends a rewind or listing: its answer shown (when `speak`) and returned.
fn told(
    ctx: &TurnContext,
    history: History,
    speak: bool,
    report: Result<RewindReport, String>,
) -> TurnOutcome {
    let report = report.unwrap_or_else(|why| RewindReport {
        message: why.clone(),
        problem: Some(why),
        ..RewindReport::default()
    });
    if speak {
        ctx.emit(TurnEvent::Text(report.message.clone()));
    }
    let mut outcome = TurnOutcome::ended(history, Ok(StopReason::EndTurn));
    outcome.output = Some(report.message.clone());
    outcome.rewound = Some(report);
    outcome
}

/// A file with what it holds now and what to do with it.
struct Decided {
    back: FileBack,
    now: Result<Option<String>, String>,
    /// Put it back (`Some(diff)`: it changed since tandem wrote it, and the user agreed).
    write: Option<Option<String>>,
    /// Left as it is because it changed since: the diff.
    left: Option<String>,
}

impl Decided {
    /// Whether it is to be put back.
    fn writes(&self) -> bool {
        matches!((&self.now, &self.write), (Ok(_), Some(_))) && self.back.target.text().is_ok()
    }

    /// What the rewind's intent records of this file: from what it holds now to what it
    /// will hold, when it is to be put back.
    fn planned(&self) -> Option<Restored> {
        let (true, Ok(now)) = (self.writes(), &self.now) else {
            return None;
        };
        Some(Restored {
            path: self.back.path.clone(),
            before: Snapshot::of(now.as_deref()),
            after: self.back.target.clone(),
        })
    }
}

/// Reads every file and decides what to do with it, asking the user about those that
/// changed since tandem wrote them (all questions come before any write); `None` when the
/// turn was cancelled meanwhile.
async fn decide(
    ctx: &TurnContext,
    n: usize,
    files: Vec<FileBack>,
    conflicts: Conflicts,
    cancel: &CancellationToken,
) -> Option<Vec<Decided>> {
    let mut decided = Vec::new();
    for back in files {
        // A read the editor or a planted FIFO never answers must not hold the session.
        let now = match &back.unknown {
            // Never overwrite a file whose content tandem does not know.
            Some(why) => Err(format!(
                "{why}, so tandem does not know what it holds and leaves it as it is"
            )),
            None => tokio::select! {
                now = files::read_now(ctx, &back.path) => now,
                () = cancel.cancelled() => return None,
            },
        };
        let mut file = Decided {
            back,
            now,
            write: None,
            left: None,
        };
        let Ok(now) = &file.now else {
            decided.push(file);
            continue;
        };
        let now = now.as_deref();
        if files::holds(ctx, &file.back.target, now) {
            // Already as it was.
        } else if let Err(why) = file.back.target.text() {
            file.now = Err(format!("tandem did not keep its earlier text: {why}"));
        } else {
            let changed = !files::holds(ctx, &file.back.expected, now);
            // A file outside the session's folders (a fork or reload elsewhere, or a file the
            // user let tandem write out there) is never written back unasked.
            let outside = !ctx.tool_scope().in_editor_folders(&file.back.path);
            let diff =
                changed.then(|| files::short_diff(file.back.expected.text().ok().flatten(), now));
            let write = match (conflicts, changed || outside) {
                (_, false) => true,
                (Conflicts::Ask, true) => {
                    let why = if changed {
                        Question::Changed
                    } else {
                        Question::Outside
                    };
                    ask(ctx, n, &file.back, now, why, cancel).await?
                }
                (Conflicts::Overwrite, true) => !outside,
                (Conflicts::Keep, true) => false,
            };
            match (write, diff) {
                (true, diff) => file.write = Some(diff),
                (false, Some(diff)) => file.left = Some(diff),
                (false, None) => {
                    file.now =
                        Err("it is outside this session's folders, and was not asked about".into());
                }
            }
        }
        decided.push(file);
    }
    Some(decided)
}

/// Why the user is asked about a file.
#[derive(Clone, Copy)]
enum Question {
    /// It changed after tandem last wrote it.
    Changed,
    /// It is outside the session's folders.
    Outside,
}

/// Asks whether to put back `back` (it holds `now`), changed since tandem wrote it or outside
/// the session's folders; `None` when the turn was cancelled meanwhile.
async fn ask(
    ctx: &TurnContext,
    n: usize,
    back: &FileBack,
    now: Option<&str>,
    why: Question,
    cancel: &CancellationToken,
) -> Option<bool> {
    let shown = ctx.facts.place().display(&back.path);
    let text = match why {
        Question::Changed => format!(
            "{shown} changed after tandem last wrote it (you or a command changed it). Put back the version from before turn {n}, discarding those changes, or leave it as it is?"
        ),
        Question::Outside => format!(
            "{shown} is outside this session's folders. Put back the version from before turn {n}, or leave it as it is?"
        ),
    };
    let mut content = vec![ToolContent::Text { text }];
    if let Ok(target) = back.target.text() {
        content.push(ToolContent::Diff {
            path: back.path.clone(),
            old: now.map(str::to_string),
            new: target.unwrap_or_default().to_string(),
        });
    }
    let mut view = ToolCallView {
        id: format!("rewind-{}", uuid::Uuid::new_v4()),
        title: format!("Put back {shown}?"),
        kind: ToolKind::Edit,
        status: ToolStatus::Pending,
        locations: vec![Location {
            path: back.path.clone(),
            line: None,
        }],
        raw_input: None,
        content,
    };
    // The change first, the question after it.
    view.diff_first();
    ctx.emit(TurnEvent::ToolCall(view.clone()));
    let choices = [
        PermissionChoice {
            answer: PermissionAnswer::AllowOnce,
            label: format!("Put back the version from before turn {n}"),
        },
        PermissionChoice {
            answer: PermissionAnswer::RejectOnce,
            label: "Leave it as it is".into(),
        },
    ];
    let answer = tokio::select! {
        answer = ctx.services.editor.request_permission(&ctx.facts.session_id, &view, &choices) => answer,
        () = cancel.cancelled() => Ok(PermissionAnswer::Cancelled),
    };
    let (put_back, status) = match answer {
        Ok(PermissionAnswer::AllowOnce | PermissionAnswer::AllowAlways) => {
            (Some(true), ToolStatus::Completed)
        }
        Ok(PermissionAnswer::Cancelled) => (None, ToolStatus::Failed),
        // A refusal, or an editor that could not ask: the file stays as it is.
        Ok(_) | Err(_) => (Some(false), ToolStatus::Failed),
    };
    ctx.emit(TurnEvent::ToolCallUpdate {
        id: view.id,
        status: Some(status),
        content: None,
        title: None,
    });
    put_back
}

/// Does what was decided for one file; a file written is added to `restored`.
async fn apply(ctx: &TurnContext, file: Decided, restored: &mut Vec<Restored>) -> FileOutcome {
    let path = file.back.path.clone();
    let result = match (file.now, file.write, file.left) {
        (Err(why), ..) => FileResult::Failed { why },
        (Ok(_), None, Some(diff)) => FileResult::LeftChanged { diff },
        (Ok(_), None, None) => FileResult::AlreadyBack,
        (Ok(now), Some(discarded), _) => match file.back.target.text() {
            Err(why) => FileResult::Failed {
                why: format!("tandem did not keep its earlier text: {why}"),
            },
            Ok(target) => match files::put_back(ctx, &path, target, now.as_deref()).await {
                Err(why) => FileResult::Failed { why },
                Ok(done) => {
                    let after = match done {
                        PutBack::Emptied => Snapshot::Text(String::new()),
                        _ => file.back.target.clone(),
                    };
                    restored.push(Restored {
                        path: path.clone(),
                        before: Snapshot::of(now.as_deref()),
                        after,
                    });
                    match (discarded, done, now.is_some()) {
                        (Some(diff), _, _) => FileResult::Overwritten { diff },
                        (None, PutBack::Removed | PutBack::Gone, _) => FileResult::Removed,
                        (None, PutBack::Emptied, _) => FileResult::Emptied,
                        (None, PutBack::Written, false) => FileResult::Recreated,
                        (None, PutBack::Written, true) => FileResult::Restored,
                    }
                }
            },
        },
    };
    FileOutcome { path, result }
}

/// `/rewind` without a turn: the last turns, newest first, with the files each changed.
fn listing(ctx: &TurnContext, timeline: &Timeline<'_>) -> RewindReport {
    let turns = timeline.turns();
    let mut message = if turns.is_empty() {
        "There is nothing to rewind: this session has no turn yet.".to_string()
    } else {
        String::from(
            "`/rewind N` goes back to before turn N (the conversation and the files tandem changed since); `/undo` takes back the last turn.\n\n",
        )
    };
    for turn in turns.iter().rev().take(LISTED) {
        message.push_str(&format!("{}. {}", turn.number, turn.first_line));
        let files: Vec<String> = turn
            .files
            .iter()
            .map(|(path, touch)| {
                let shown = ctx.facts.place().display(path);
                match touch {
                    Touch::Created => format!("created {shown}"),
                    Touch::Changed => format!("changed {shown}"),
                    Touch::Deleted => format!("deleted {shown}"),
                }
            })
            .collect();
        if !files.is_empty() {
            message.push_str(&format!(" — {}", files.join(", ")));
        }
        if !turn.commands.is_empty() {
            message.push_str(&format!("; ran {} command(s)", turn.commands.len()));
        }
        message.push('\n');
    }
    if turns.len() > LISTED {
        message.push_str(&format!("(and {} earlier)\n", turns.len() - LISTED));
    }
    RewindReport {
        turns,
        message,
        ..RewindReport::default()
    }
}

/// A rewind's answer in words.
fn described(ctx: &TurnContext, report: &RewindReport) -> String {
    let n = report.turn.unwrap_or_default();
    let first = report
        .taken_back
        .first()
        .map(|t| format!(" (\"{}\")", t.first_line))
        .unwrap_or_default();
    let count = report.taken_back.len();
    let mut out = format!(
        "Went back to before turn {n}{first}: {} out of the conversation, and the model no longer sees {}.\n",
        if count == 1 {
            "that turn is".to_string()
        } else {
            format!("{count} turns are")
        },
        if count == 1 { "it" } else { "them" }
    );
    let shown = |path: &PathBuf| ctx.facts.place().display(path);
    let how = if report.through_editor {
        "through the editor"
    } else {
        "on disk"
    };
    let mut lines = Vec::new();
    for file in &report.files {
        let name = shown(&file.path);
        lines.push(match &file.result {
            FileResult::Restored => format!("- {name}: put back ({how})"),
            FileResult::Recreated => format!("- {name}: written again ({how}; tandem had deleted it)"),
            FileResult::Removed => format!("- {name}: removed from the disk (tandem had created it)"),
            FileResult::Emptied => format!(
                "- {name}: emptied through the editor (tandem had created it, and only the editor has it; ACP cannot delete files, so delete it there)"
            ),
            FileResult::AlreadyBack => format!("- {name}: already as it was"),
            FileResult::LeftChanged { diff } => format!(
                "- {name}: **left as it is**: it changed after tandem wrote it:\n```diff\n{}```",
                diff
            ),
            FileResult::Overwritten { diff } => format!(
                "- {name}: put back ({how}), discarding the changes made after tandem wrote it:\n```diff\n{}```",
                diff
            ),
            FileResult::Failed { why } => format!("- {name}: **not put back**: {why}"),
        });
    }
    if lines.is_empty() {
        out.push_str("tandem changed no file in those turns.\n");
    } else {
        out.push_str("Files:\n");
        out.push_str(&lines.join("\n"));
        out.push('\n');
    }
    if !report.commands.is_empty() {
        let commands: Vec<String> = report.commands.iter().map(|c| format!("`{c}`")).collect();
        out.push_str(&format!(
            "Commands ran in those turns, and what they did is not undone: {}.\n",
            commands.join(", ")
        ));
    }
    out
}

#[cfg(test)]
mod tests;
