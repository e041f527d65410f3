//! How `tandem exec` shows a session: in `text` output the answer on stdout and reasoning,
//! tool calls, diffs, plans and progress on stderr; in `json` one summary object on stdout at
//! the end; in `ndjson` every `session/update` on stdout as it happens. [`Display`] holds what
//! that takes (open lines, the calls seen, the summary) for one run. What it shows came over
//! the wire, whose writer redacts tandem's secrets: nothing is redacted here again.

use std::collections::HashMap;
use std::io::Write;

use parking_lot::Mutex;

use agent_client_protocol::v1::schema::{
    ContentBlock, Plan, PlanEntryStatus, SessionNotification, SessionUpdate, ToolCallContent,
    ToolCallStatus, ToolKind,
};

use crate::cli::Output;

/// What one `tandem exec` run shows, and the state that showing it needs; shared by the
/// notification and permission handlers and the run itself.
pub(crate) struct Display {
    /// The chosen output.
    output: Output,
    /// With `--output-schema`: the streamed answer goes to stderr, and only the validated
    /// value to stdout.
    structured: bool,
    state: Mutex<State>,
}

/// What changes while the run is shown.
#[derive(Default)]
struct State {
    /// Whether the last answer (stdout) text ended mid-line.
    answer_open: bool,
    /// Whether the last reasoning (stderr) text ended mid-line.
    thought_open: bool,
    /// With `--output-schema`: whether the answer streaming to stderr ended mid-line.
    err_answer_open: bool,
    /// Titles and kinds of the calls seen so far, for their status lines.
    calls: HashMap<String, (String, ToolKind)>,
    /// Calls shown while the model was still writing them, whose `→` line waits for their
    /// whole title.
    unannounced: std::collections::HashSet<String>,
    /// What `json` output reports at the end.
    summary: Summary,
}

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

impl Display {
    /// Shows a run in `output`; `structured` with `--output-schema`.
    pub(crate) fn new(output: Output, structured: bool) -> Self {
        Self {
            output,
            structured,
            state: Mutex::new(State::default()),
        }
    }

    /// `--output-schema`: the validated answer, on stdout in the chosen format.
    pub(crate) fn structured_output(&self, value: &serde_json::Value) {
        match self.output {
            Output::Json => self.state.lock().summary.structured = Some(Ok(value.clone())),
            Output::Ndjson => {
                write_out(&serde_json::json!({ "structuredOutput": value }).to_string());
            }
            Output::Text => write_out(&value.to_string()),
        }
    }

    /// `--output-schema`: the answer did not validate; says why on stderr, with the answer
    /// (in `text` output it is already there, streamed).
    pub(crate) fn structured_failure(&self, error: &str) {
        let mut state = self.state.lock();
        state.progress(&format!(
            "the answer does not match the output schema: {error}"
        ));
        if self.output == Output::Json {
            state.summary.structured = Some(Err(error.to_string()));
        }
        if self.output != Output::Text {
            let answer = state.summary.answer.clone();
            state.write_err(&format!("{}\n", answer.trim_end()));
        }
    }

    /// Notes the session id, reported by `json` output.
    pub(crate) fn started(&self, session: &str) {
        self.state.lock().summary.session = session.to_string();
    }

    /// Ends the run: the stop reason on stderr, and the summary object in `json` output.
    pub(crate) fn finished(&self, stop: &str) {
        let mut state = self.state.lock();
        state.progress(&format!("stopped: {stop}"));
        if self.output != Output::Json {
            return;
        }
        let s = &state.summary;
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
        write_out(&value.to_string());
    }

    /// Shows one notification in the chosen output.
    pub(crate) fn show(&self, note: SessionNotification) {
        let mut state = self.state.lock();
        match self.output {
            Output::Ndjson => {
                if let SessionUpdate::AgentMessageChunk(chunk) = &note.update
                    && let ContentBlock::Text(t) = &chunk.content
                {
                    state.summary.answer.push_str(&t.text);
                }
                if let Ok(line) = serde_json::to_string(&note) {
                    write_out(&line);
                }
            }
            Output::Json => state.collect(note.update),
            Output::Text => state.show_text(note.update, self.structured),
        }
    }

    /// A progress line on stderr, prefixed with `tandem:`.
    pub(crate) fn progress(&self, line: &str) {
        self.state.lock().progress(line);
    }

    /// Ends the answer with a newline so nothing else runs into it.
    pub(crate) fn end_answer_line(&self) {
        self.state.lock().end_answer_line();
    }
}

fn write_out(line: &str) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{}", line);
    let _ = out.flush();
}

impl State {
    /// Keeps what the `json` summary reports.
    fn collect(&mut self, update: SessionUpdate) {
        let summary = &mut self.summary;
        match update {
            SessionUpdate::AgentMessageChunk(chunk) => {
                if let ContentBlock::Text(t) = chunk.content {
                    summary.answer.push_str(&t.text);
                }
            }
            SessionUpdate::ToolCall(call) => {
                summary.calls.push((
                    call.tool_call_id.0.to_string(),
                    call.title.clone(),
                    status_name(call.status).into(),
                ));
            }
            SessionUpdate::ToolCallUpdate(update) => {
                if let Some(c) = summary
                    .calls
                    .iter_mut()
                    .find(|c| c.0 == update.tool_call_id.0.as_ref())
                {
                    if let Some(status) = update.fields.status {
                        c.2 = status_name(status).into();
                    }
                    if let Some(title) = &update.fields.title {
                        c.1 = title.clone();
                    }
                }
            }
            SessionUpdate::UsageUpdate(u) => summary.usage = Some((u.used, u.size)),
            _ => {}
        }
    }

    /// Shows one update as text; `structured` with `--output-schema`.
    fn show_text(&mut self, update: SessionUpdate, structured: bool) {
        match update {
            SessionUpdate::AgentMessageChunk(chunk) => {
                if let ContentBlock::Text(t) = chunk.content {
                    self.show_answer(&t.text, structured);
                }
            }
            SessionUpdate::AgentThoughtChunk(chunk) => {
                if let ContentBlock::Text(t) = chunk.content {
                    self.end_err_answer_line();
                    self.thought_open = !t.text.ends_with('\n');
                    let mut err = std::io::stderr().lock();
                    let _ = err.write_all(t.text.as_bytes());
                    let _ = err.flush();
                }
            }
            SessionUpdate::ToolCall(call) => {
                let id = call.tool_call_id.0.to_string();
                self.calls
                    .insert(id.clone(), (call.title.clone(), call.kind));
                // A call announced before its arguments came has no input yet: its line
                // waits for the title that says what it does.
                if call.raw_input.is_none() && call.status == ToolCallStatus::Pending {
                    self.unannounced.insert(id);
                } else {
                    self.progress(&format!("→ {}", call.title));
                }
            }
            SessionUpdate::ToolCallUpdate(update) => self.show_call_update(update),
            SessionUpdate::Plan(plan) => self.show_plan(&plan),
            SessionUpdate::UsageUpdate(u) => {
                self.progress(&format!("context {} / {} tokens", u.used, u.size))
            }
            _ => {}
        }
    }

    /// A piece of the answer: on stdout, or with `--output-schema` on stderr (stdout is kept
    /// for the validated value).
    fn show_answer(&mut self, text: &str, structured: bool) {
        self.end_thought_line();
        if structured {
            self.summary.answer.push_str(text);
            let mut err = std::io::stderr().lock();
            let _ = err.write_all(text.as_bytes());
            self.err_answer_open = !text.ends_with('\n');
            return;
        }
        self.answer_open = !text.ends_with('\n');
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(text.as_bytes());
        let _ = out.flush();
    }

    /// A call's new title, content or status.
    fn show_call_update(&mut self, update: agent_client_protocol::v1::schema::ToolCallUpdate) {
        let id = update.tool_call_id.0.to_string();
        if let (Some(title), Some(call)) = (&update.fields.title, self.calls.get_mut(&id)) {
            call.0 = title.clone();
            if let Some(kind) = update.fields.kind {
                call.1 = kind;
            }
            if self.unannounced.remove(&id) {
                self.progress(&format!("→ {title}"));
            }
        }
        let (title, kind) = self
            .calls
            .get(&id)
            .cloned()
            .unwrap_or_else(|| (id.clone(), ToolKind::Other));
        let fields = update.fields;
        if let Some(content) = &fields.content {
            self.show_content(content, fields.status, kind);
        }
        match fields.status {
            Some(ToolCallStatus::Completed) => self.progress(&format!("✓ {title}")),
            Some(ToolCallStatus::Failed) => {
                let why = fields
                    .content
                    .as_deref()
                    .and_then(first_text)
                    .unwrap_or_default();
                let why = if why.is_empty() {
                    String::new()
                } else {
                    format!(": {why}")
                };
                self.progress(&format!("✗ {title}{why}"));
            }
            _ => {}
        }
    }

    /// Final diffs of edits and the output of commands; what reads return stays off the
    /// screen.
    fn show_content(
        &mut self,
        content: &[ToolCallContent],
        status: Option<ToolCallStatus>,
        kind: ToolKind,
    ) {
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
                    self.write_err(&text);
                }
                ToolCallContent::Content(c) if kind == ToolKind::Execute => {
                    if let ContentBlock::Text(t) = &c.content {
                        self.write_err(&format!("{}\n", t.text.trim_end()));
                    }
                }
                _ => {}
            }
        }
    }

    fn show_plan(&mut self, plan: &Plan) {
        let mut text = String::from("Plan:\n");
        for entry in &plan.entries {
            let mark = match entry.status {
                PlanEntryStatus::Completed => "[x]",
                PlanEntryStatus::InProgress => "[~]",
                _ => "[ ]",
            };
            text.push_str(&format!("  {mark} {}\n", entry.content));
        }
        self.write_err(&text);
    }

    fn write_err(&mut self, text: &str) {
        self.end_answer_line();
        self.end_thought_line();
        self.end_err_answer_line();
        let mut err = std::io::stderr().lock();
        let _ = err.write_all(text.as_bytes());
    }

    /// A progress line on stderr, prefixed with `tandem:`.
    fn progress(&mut self, line: &str) {
        self.write_err(&format!("tandem: {line}\n"));
    }

    /// Ends the answer with a newline so nothing else runs into it.
    fn end_answer_line(&mut self) {
        if std::mem::take(&mut self.answer_open) {
            let mut out = std::io::stdout().lock();
            let _ = out.write_all(b"\n");
            let _ = out.flush();
        }
    }

    /// Ends the answer streamed to stderr (`--output-schema`) before anything else is
    /// written.
    fn end_err_answer_line(&mut self) {
        if std::mem::take(&mut self.err_answer_open) {
            let mut err = std::io::stderr().lock();
            let _ = err.write_all(b"\n");
        }
    }

    /// Ends the reasoning with a newline before anything else is written.
    fn end_thought_line(&mut self) {
        if std::mem::take(&mut self.thought_open) {
            let mut err = std::io::stderr().lock();
            let _ = err.write_all(b"\n");
        }
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

fn first_text(content: &[ToolCallContent]) -> Option<String> {
    content.iter().find_map(|c| match c {
        ToolCallContent::Content(c) => match &c.content {
            ContentBlock::Text(t) => t.text.lines().next().map(String::from),
            _ => None,
        },
        _ => None,
    })
}
