//! Issue 54, item 1: a command tandem runs cannot type into the user's terminal. Under
//! `tandem exec` in a terminal (here a pty from `script`, which makes it tandem's controlling
//! terminal), an allowed command opens `/dev/tty` and pushes a line into its input with
//! `TIOCSTI`; the user's shell would run that line, unconfined, after tandem exits. Every
//! command starts in a session of its own, with no controlling terminal, so there is no
//! `/dev/tty` to open.

use serde_json::json;

use crate::common::Workspace;

/// Opens the controlling terminal and pushes `touch OUTSIDE` and Enter into its input;
/// writes what happened to `tiocsti.txt` in the project.
const PUSH: &str = r#"/usr/bin/python3 -c "
import fcntl, termios
try:
    with open('/dev/tty', 'wb', buffering=0) as tty:
        for c in b'touch OUTSIDE\n':
            fcntl.ioctl(tty, termios.TIOCSTI, bytes([c]))
    said = 'pushed'
except OSError as e:
    said = 'refused: ' + str(e)
open('tiocsti.txt', 'w').write(said)
""#;

#[test]
fn an_allowed_command_cannot_push_keystrokes_into_the_terminal_tandem_runs_in() {
    let ws = Workspace::new();
    crate::common::copy_fixture("small", &ws.project());
    ws.write(
        "home/.config/tandem/config.toml",
        "[permissions]\nallow = [\"run_command(/usr/bin/python3:*)\"]\n",
    );
    let replay = ws.write(
        "replay.json",
        &json!({"turns": [
            {"events": [{"tool_call": {"id": "p", "name": "run_command", "arguments": {"command": PUSH}}}]},
            {"events": [{"text": "done"}]}
        ]})
        .to_string(),
    );
    let line = format!(
        "{} exec --mode accept-edits --replay {} --cwd {} go",
        crate::common::tandem_bin(),
        replay.display(),
        ws.project().display()
    );
    // `script` runs the line in a new pty that becomes its controlling terminal.
    let out = std::process::Command::new("script")
        .args(["-qec", &line, "/dev/null"])
        .env_clear()
        .envs(ws.base_env())
        .env("PATH", std::env::var("PATH").unwrap())
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let said = std::fs::read_to_string(ws.project().join("tiocsti.txt")).unwrap_or_else(|_| {
        panic!(
            "the command did not run: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    assert!(said.starts_with("refused"), "{said}");
}
