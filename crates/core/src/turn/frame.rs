//! Keeps a conversation's requests prefix-stable: the system prompt and tool list are fixed
//! by the first request (and again after a compaction), and whatever changes later is told
//! to the model as a context note where it changed. A local server then reprocesses only
//! what was added since its last request.

use super::context::{Step, TurnContext};
use crate::store::{Frame, History, Told};
use crate::types::ToolSpec;

/// The tools a model is offered one family of, by its model (`EditTool`).
const EDIT_TOOLS: [&str; 3] = ["edit_file", "write_file", "apply_patch"];

/// How every context note starts, so the model does not take it for the user's words.
const NOTE: &str = "[Note from tandem, not the user]";

/// The system prompt and tools for the next request of `history`, fixing them on its first
/// request and telling the model what changed since the last one.
pub(super) fn prepare(
    ctx: &TurnContext,
    step: &Step,
    history: &mut History,
) -> (String, Vec<ToolSpec>) {
    let now = ctx.told_now(&step.settings);
    let offered = ctx.tool_specs(step);
    let Some(frame) = history.frame() else {
        // The system prompt never carries an answer format: it is told with the prompt that
        // asks for it, so the start stays the same for the prompts that do not.
        let output = now.output.clone();
        let frame = Frame {
            system: ctx.system_prompt(step, &now),
            tools: offered,
            told: now,
        };
        let start = (frame.system.clone(), frame.tools.clone());
        history.set_frame(frame);
        if let Some(instructions) = output {
            history.push_context(format!("{NOTE}{instructions}"));
        }
        return start;
    };
    let notes = changes(frame, now, offered);
    let start = (frame.system.clone(), frame.tools.clone());
    if !notes.is_empty() {
        tracing::debug!(session = %ctx.facts.session_id, "context note: {}", notes.join(" | "));
        history.push_context(format!("{NOTE} {}", notes.join("\n")));
    }
    start
}

/// What changed since the model was last told (and records it as told): one line each.
fn changes(frame: &mut Frame, now: Told, offered: Vec<ToolSpec>) -> Vec<String> {
    let mut notes = Vec::new();
    if frame.told.mode != now.mode {
        notes.push(format!(
            "The user switched the mode to {} ({}).",
            now.mode.id(),
            now.mode.description()
        ));
    }
    if frame.told.date != now.date {
        notes.push(format!("Today's date is now {}.", now.date));
    }
    if frame.told.output != now.output {
        notes.push(match &now.output {
            Some(instructions) => instructions.trim().to_string(),
            None => "The answer format asked for earlier no longer applies; answer normally."
                .to_string(),
        });
    }
    // A model that edits another way (`apply_patch`, or `edit_file` and `write_file`) is
    // not shown the other way's tools: after a model switch the old ones go.
    let gone: Vec<String> = frame
        .tools
        .iter()
        .filter(|f| EDIT_TOOLS.contains(&f.name.as_str()))
        .filter(|f| !offered.iter().any(|t| t.name == f.name))
        .map(|f| f.name.clone())
        .collect();
    if !gone.is_empty() {
        notes.push(format!(
            "These tools are no longer available: {}.",
            gone.join(", ")
        ));
        frame.tools.retain(|f| !gone.contains(&f.name));
    }
    let added: Vec<ToolSpec> = offered
        .into_iter()
        .filter(|t| !frame.tools.iter().any(|f| f.name == t.name))
        .collect();
    if !added.is_empty() {
        let names: Vec<&str> = added.iter().map(|t| t.name.as_str()).collect();
        notes.push(format!("New tools are available: {}.", names.join(", ")));
        frame.tools.extend(added);
    }
    frame.told = now;
    notes
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::Mode;

    fn spec(name: &str) -> ToolSpec {
        ToolSpec {
            name: name.into(),
            description: String::new(),
            parameters: serde_json::json!({}),
        }
    }

    fn told(mode: Mode, date: &str) -> Told {
        Told {
            mode,
            date: date.into(),
            output: None,
        }
    }

    #[test]
    fn each_change_is_one_line_and_tools_only_grow() {
        let mut frame = Frame {
            system: "s".into(),
            tools: vec![spec("a"), spec("b")],
            told: told(Mode::Ask, "2026-11-23"),
        };
        assert!(changes(&mut frame, told(Mode::Ask, "2026-11-23"), vec![spec("a")]).is_empty());
        assert_eq!(frame.tools.len(), 2, "a tool that went away stays listed");
        let notes = changes(
            &mut frame,
            told(Mode::ReadOnly, "2026-11-24"),
            vec![spec("c"), spec("a")],
        );
        assert_eq!(notes.len(), 3, "{notes:?}");
        assert!(notes[0].contains("read-only"));
        assert_eq!(notes[1], "Today's date is now 2026-11-24.");
        assert_eq!(notes[2], "New tools are available: c.");
        let names: Vec<_> = frame.tools.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["a", "b", "c"]);
        assert_eq!(frame.told.mode, Mode::ReadOnly);
    }
}
