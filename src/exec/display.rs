//! How `tandem exec` shows a session: in `text` output the answer on stdout and reasoning,
//! tool calls, diffs, plans and progress on stderr; in `json` one summary object on stdout at
//! the end; in `ndjson` every `session/update` on stdout as it happens.

use crate::secrets::redact;
use std::collections::HashMap;
use std::io::Write;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};

use parking_lot::Mutex;

use agent_client_protocol::v1::schema::{
    ContentBlock, Plan, PlanEntryStatus, SessionNotification, SessionUpdate, ToolCallContent,
    ToolCallStatus, ToolKind,
};

use crate::cli::Output;

/// Whether the last answer (stdout) or reasoning (stderr) text ended mid-line.
static ANSWER_OPEN: AtomicBool = AtomicBool::new(false);
static THOUGHT_OPEN: AtomicBool = AtomicBool::new(false);
/// With `--output-schema`: whether the answer streaming to stderr ended mid-line.
static ERR_ANSWER_OPEN: AtomicBool = AtomicBool::new(false);

/// Titles and kinds of the calls seen so far, for their status lines.
static CALLS: Mutex<Option<HashMap<String, (String, ToolKind)>>> = Mutex::new(None);

/// The chosen output.
static OUTPUT: OnceLock<Output> = OnceLock::new();

/// With `--output-schema`: the streamed answer goes to stderr, and only the validated value
/// to stdout.
static STRUCTURED: AtomicBool = AtomicBool::new(false);

/// What `json` output reports at the end.
#[derive(Default)]
struct Summary {
    session: String,
    answer: String,
    usage: Option<(u64, u64)>,
    calls: Vec<(String, String, String)>,
    /// `--output-schema`: the validated value, or why the answer did not validate.
    structured: Option<Result<serde_json::Value, String>>,
}

static SUMMARY: Mutex<Option<Summary>> = Mutex::new(None);

fn summary<T>(f: impl FnOnce(&mut Summary) -> T) -> T {
    let mut guard = SUMMARY.lock();
    f(guard.get_or_insert_with(Summary::default))
}

fn output() -> Output {
    OUTPUT.get().copied().unwrap_or(Output::Text)
}

/// Chooses the output format (once, before anything is shown).
pub fn set_output(output: Output) {
    let _ = OUTPUT.set(output);
}

/// Switches to `--output-schema` output (before anything is shown).
pub fn set_structured() {
    STRUCTURED.store(true, Ordering::Relaxed);
}

/// `--output-schema`: the validated answer, on stdout in the chosen format.
pub fn structured_output(value: &serde_json::Value) {
    match output() {
        Output::Json => summary(|s| s.structured = Some(Ok(value.clone()))),
        Output::Ndjson => write_out(&serde_json::json!({ "structuredOutput": value }).to_string()),
        Output::Text => write_out(&value.to_string()),
    }
}

/// `--output-schema`: the answer did not validate; says why on stderr, with the answer (in
/// `text` output it is already there, streamed).
pub fn structured_failure(error: &str) {
    progress(&format!(
        "the answer does not match the output schema: {error}"
    ));
    if output() == Output::Json {
        summary(|s| s.structured = Some(Err(error.to_string())));
    }
    if output() != Output::Text {
        let answer = summary(|s| s.answer.clone());
        write_err(&format!(
            "{}
",
            answer.trim_end()
        ));
    }
}

fn write_out(line: &str) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{}", redact(line));
    let _ = out.flush();
}

/// Notes the session id, reported by `json` output.
pub fn started(session: &str) {
    summary(|s| s.session = session.to_string());
}

/// Ends the run: the stop reason on stderr, and the summary object in `json` output.
pub fn finished(stop: &str) {
    progress(&format!("stopped: {stop}"));
    if output() != Output::Json {
        return;
    }
    let value = summary(|s| {
        let mut value = serde_json::json!({
            "sessionId": s.session,
            "stopReason": stop,
            "answer": s.answer,
            "usage": s.usage.map(|(used, size)| serde_json::json!({"used": used, "size": size})),
            "toolCalls": s.calls.iter().map(|(id, title, status)| serde_json::json!({"id": id, "title": title, "status": status})).collect::<Vec<_>>(),
        });
        match &s.structured {
            Some(Ok(v)) => value["structuredOutput"] = v.clone(),
            Some(Err(e)) => value["structuredOutputError"] = serde_json::json!(e),
            None => {}
        }
        value
    });
    write_out(&value.to_string());
}

/// Shows one notification in the chosen output.
pub fn show(note: SessionNotification) {
    match output() {
        Output::Ndjson => {
            if let SessionUpdate::AgentMessageChunk(chunk) = &note.update
                && let ContentBlock::Text(t) = &chunk.content
            {
                summary(|s| s.answer.push_str(&t.text));
            }
            if let Ok(line) = serde_json::to_string(&note) {
                write_out(&line);
            }
        }
        Output::Json => collect(note.update),
        Output::Text => show_text(note.update),
    }
}

/// Keeps what the `json` summary reports.
fn collect(update: SessionUpdate) {
    match update {
        SessionUpdate::AgentMessageChunk(chunk) => {
            if let ContentBlock::Text(t) = chunk.content {
                summary(|s| s.answer.push_str(&t.text));
            }
        }
        SessionUpdate::ToolCall(call) => summary(|s| {
            s.calls.push((
                call.tool_call_id.0.to_string(),
                call.title.clone(),
                status_name(call.status).into(),
            ));
        }),
        SessionUpdate::ToolCallUpdate(update) => {
            if let Some(status) = update.fields.status {
                summary(|s| {
                    if let Some(c) = s
                        .calls
                        .iter_mut()
                        .find(|c| c.0 == update.tool_call_id.0.as_ref())
                    {
                        c.2 = status_name(status).into();
                    }
                });
            }
        }
        SessionUpdate::UsageUpdate(u) => summary(|s| s.usage = Some((u.used, u.size))),
        _ => {}
    }
}

fn status_name(status: ToolCallStatus) -> &'static str {
    match status {
        ToolCallStatus::InProgress => "in_progress",
        ToolCallStatus::Completed => "completed",
        ToolCallStatus::Failed => "failed",
        _ => "pending",
    }
}

/// Shows one update as text.
fn show_text(update: SessionUpdate) {
    match update {
        SessionUpdate::AgentMessageChunk(chunk) => {
            if let ContentBlock::Text(t) = chunk.content {
                if STRUCTURED.load(Ordering::Relaxed) {
                    // stdout is kept for the validated value; the answer streams to stderr.
                    summary(|s| s.answer.push_str(&t.text));
                    end_thought_line();
                    let mut err = std::io::stderr().lock();
                    let _ = err.write_all(redact(&t.text).as_bytes());
                    ERR_ANSWER_OPEN.store(!t.text.ends_with('\n'), Ordering::Relaxed);
                    return;
                }
                end_thought_line();
                ANSWER_OPEN.store(!t.text.ends_with('\n'), Ordering::Relaxed);
                let mut out = std::io::stdout().lock();
                let _ = out.write_all(redact(&t.text).as_bytes());
                let _ = out.flush();
            }
        }
        SessionUpdate::AgentThoughtChunk(chunk) => {
            if let ContentBlock::Text(t) = chunk.content {
                end_err_answer_line();
                THOUGHT_OPEN.store(!t.text.ends_with('\n'), Ordering::Relaxed);
                let mut err = std::io::stderr().lock();
                let _ = err.write_all(redact(&t.text).as_bytes());
                let _ = err.flush();
            }
        }
        SessionUpdate::ToolCall(call) => {
            remember(call.tool_call_id.0.as_ref(), &call.title, call.kind);
            progress(&format!("→ {}", call.title));
        }
        SessionUpdate::ToolCallUpdate(update) => {
            let id = update.tool_call_id.0.to_string();
            let (title, kind) = recall(&id);
            let fields = update.fields;
            if let Some(content) = &fields.content {
                show_content(content, fields.status, kind);
            }
            match fields.status {
                Some(ToolCallStatus::Completed) => progress(&format!("✓ {title}")),
                Some(ToolCallStatus::Failed) => {
                    let why = fields
                        .content
                        .as_deref()
                        .and_then(first_text)
                        .unwrap_or_default();
                    progress(&format!(
                        "✗ {title}{}",
                        if why.is_empty() {
                            String::new()
                        } else {
                            format!(": {why}")
                        }
                    ));
                }
                _ => {}
            }
        }
        SessionUpdate::Plan(plan) => show_plan(&plan),
        SessionUpdate::UsageUpdate(u) => {
            progress(&format!("context {} / {} tokens", u.used, u.size))
        }
        _ => {}
    }
}

fn remember(id: &str, title: &str, kind: ToolKind) {
    let mut calls = CALLS.lock();
    calls
        .get_or_insert_with(HashMap::new)
        .insert(id.to_string(), (title.to_string(), kind));
}

fn recall(id: &str) -> (String, ToolKind) {
    let calls = CALLS.lock();
    calls
        .as_ref()
        .and_then(|c| c.get(id).cloned())
        .unwrap_or_else(|| (id.to_string(), ToolKind::Other))
}

fn first_text(content: &[ToolCallContent]) -> Option<String> {
    content.iter().find_map(|c| match c {
        ToolCallContent::Content(c) => match &c.content {
            ContentBlock::Text(t) => t.text.lines().next().map(String::from),
            _ => None,
        },
        _ => None,
    })
}

/// Final diffs of edits and the output of commands; what reads return stays off the screen.
fn show_content(content: &[ToolCallContent], status: Option<ToolCallStatus>, kind: ToolKind) {
    if status != Some(ToolCallStatus::Completed) && status != Some(ToolCallStatus::Failed) {
        return;
    }
    for item in content {
        match item {
            ToolCallContent::Diff(diff) => {
                let old = diff.old_text.clone().unwrap_or_default();
                let path = diff.path.display().to_string();
                let text = similar::TextDiff::from_lines(&old, &diff.new_text)
                    .unified_diff()
                    .context_radius(2)
                    .header(&path, &path)
                    .to_string();
                write_err(&text);
            }
            ToolCallContent::Content(c) if kind == ToolKind::Execute => {
                if let ContentBlock::Text(t) = &c.content {
                    write_err(&format!("{}\n", t.text.trim_end()));
                }
            }
            _ => {}
        }
    }
}

fn show_plan(plan: &Plan) {
    let mut text = String::from("Plan:\n");
    for entry in &plan.entries {
        let mark = match entry.status {
            PlanEntryStatus::Completed => "[x]",
            PlanEntryStatus::InProgress => "[~]",
            _ => "[ ]",
        };
        text.push_str(&format!("  {mark} {}\n", entry.content));
    }
    write_err(&text);
}

fn write_err(text: &str) {
    end_answer_line();
    end_thought_line();
    end_err_answer_line();
    let mut err = std::io::stderr().lock();
    let _ = err.write_all(redact(text).as_bytes());
}

/// A progress line on stderr, prefixed with `tandem:`.
pub fn progress(line: &str) {
    write_err(&format!("tandem: {line}\n"));
}

/// Ends the answer with a newline so nothing else runs into it.
pub fn end_answer_line() {
    if ANSWER_OPEN.swap(false, Ordering::Relaxed) {
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(b"\n");
        let _ = out.flush();
    }
}

/// Ends the answer streamed to stderr (`--output-schema`) before anything else is written.
fn end_err_answer_line() {
    if ERR_ANSWER_OPEN.swap(false, Ordering::Relaxed) {
        let mut err = std::io::stderr().lock();
        let _ = err.write_all(b"\n");
    }
}

/// Ends the reasoning with a newline before anything else is written.
fn end_thought_line() {
    if THOUGHT_OPEN.swap(false, Ordering::Relaxed) {
        let mut err = std::io::stderr().lock();
        let _ = err.write_all(b"\n");
    }
}
