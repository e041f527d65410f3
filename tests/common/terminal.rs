//! A program run in a pseudo-terminal, as a person (or an editor's terminal panel) runs it,
//! and a person's typing at its prompts.
#![cfg(unix)]

use std::process::Command;
use std::time::{Duration, Instant};

pub(crate) use expectrl::session::OsSession as Terminal;

/// `program ARGS` in a pseudo-terminal with exactly `env` (and PATH, and TERM=xterm). The
/// terminal starts with echo on, as a user's does (the pty library turns it off), so that
/// [`type_secret`] can tell when a hidden-input prompt is reading.
pub(crate) fn spawn(program: &str, args: &[String], env: &[(String, String)]) -> Terminal {
    let mut command = Command::new("sh");
    command
        .args(["-c", "stty echo && exec \"$0\" \"$@\"", program])
        .args(args)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("TERM", "xterm")
        .envs(env.iter().cloned());
    let mut term = expectrl::Session::spawn(command).unwrap();
    term.set_expect_timeout(Some(Duration::from_secs(30)));
    term
}

/// Types `text` at a hidden-input prompt once the prompt reads: the terminal's echo goes off
/// then, and switching it off discards what was typed before (`TCSAFLUSH`), as a real
/// terminal would lose keys typed that early.
pub(crate) fn type_secret(term: &mut Terminal, text: &str) {
    use expectrl::Expect;
    use expectrl::process::Termios;
    let deadline = Instant::now() + Duration::from_secs(30);
    while term.is_echo().unwrap() {
        assert!(
            Instant::now() < deadline,
            "the hidden-input prompt never started reading"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    term.send(text).unwrap();
}

/// Reads what is left until the program exits; its exit status (-1 when killed).
pub(crate) fn exit_status(term: &mut Terminal) -> i32 {
    use expectrl::Expect;
    let _ = term.expect(expectrl::Eof);
    match term.get_process().wait().unwrap() {
        expectrl::process::unix::WaitStatus::Exited(_, code) => code,
        _ => -1,
    }
}
