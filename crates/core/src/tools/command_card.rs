//! What a command's card shows, for a command run in the foreground (run_command.rs) or in
//! the background (run_background.rs): its line with nothing hidden, the editor's terminal
//! attached, and a finished command's output fenced.

use crate::types::{ToolContent, TurnEvent};

use super::{ToolEnv, text};

/// `line` on one line with nothing hidden: each newline shown as `⏎`, a carriage return as
/// `␍`, and any other control character by its code.
pub(super) fn visible(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    for c in line.trim_end_matches('\n').chars() {
        match c {
            '\n' => out.push_str(" ⏎ "),
            '\r' => out.push('␍'),
            '\t' => out.push(' '),
            c if c.is_control() || hides_text(c) => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

/// Characters that change how the text around them is shown without showing themselves:
/// direction overrides and isolates (which can make `rm -rf ~ # safe` read backwards), and
/// line and paragraph separators.
pub(super) fn hides_text(c: char) -> bool {
    matches!(c, '\u{200e}' | '\u{200f}' | '\u{061c}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{2028}' | '\u{2029}')
}

/// Shows the editor's `terminal` in the call's card (then `notes`), and names the card after
/// `command` as the model wrote it. Zed labels a terminal with the line `terminal/create` ran
/// (the sandbox's and the shell's words) and relabels it only with a title that arrives once
/// the card shows the terminal, so the title is an update of its own, after the content; it
/// also replaces the title the permission question showed, with its note.
pub(super) fn attach(env: &ToolEnv, command: &str, terminal: &str, notes: &[ToolContent]) {
    let mut content = vec![ToolContent::Terminal {
        id: terminal.to_string(),
        output: None,
    }];
    content.extend(notes.iter().cloned());
    let update = |content, title| TurnEvent::ToolCallUpdate {
        id: env.call_id.clone(),
        status: None,
        content,
        title,
    };
    let session = &env.scope.session_id;
    env.scope.sink.emit(session, update(Some(content), None));
    env.scope
        .sink
        .emit(session, update(None, Some(visible(command))));
}

/// A finished command as the editor shows it in text: the output fenced, then how it ended.
pub(super) fn shown(output: &str, ending: &str) -> String {
    let output = text::cap(output, text::MAX_RESULT_BYTES);
    // A fence longer than any run of backticks in the output, so the output cannot end it.
    let mut longest = 0;
    let mut run = 0;
    for c in output.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    let fence = "`".repeat(longest.max(2) + 1);
    format!("{fence}\n{}\n{fence}\n{ending}", output.trim_end())
}
