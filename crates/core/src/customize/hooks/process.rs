//! Running one hook command: in the configured shell, in the session's directory, in its own process group,
//! the event as JSON on stdin, bounded in time and output.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::platform::{Group, Shell};

/// Most bytes kept from a hook's stdout and from its stderr.
const MAX_OUTPUT: u64 = 64 * 1024;

/// How a hook process ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Exit {
    /// It exited with this code (`None`: killed by a signal).
    Code(Option<i32>, String, String),
    /// It ran past its time and was killed.
    TimedOut,
    /// It could not be started.
    NotStarted(String),
}

/// Runs `command` in `shell` with `input` on stdin and `env` added to tandem's environment
/// (without the API key variables), killing its whole process group after `timeout`.
pub(crate) async fn run(
    shell: &Shell,
    command: &str,
    cwd: &Path,
    env: &[(&str, String)],
    input: &str,
    timeout: Duration,
) -> Exit {
    let mut started = shell.tied_command(command);
    crate::secrets::scrub(&mut started);
    started
        .current_dir(cwd)
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = match Group::spawn(started) {
        Ok(child) => child,
        Err(e) => return Exit::NotStarted(e.to_string()),
    };
    let stdin = child.take_stdin();
    let stdout = child.take_stdout();
    let stderr = child.take_stderr();
    let input = input.to_string();
    let work = async {
        // A hook may ignore its input: a closed pipe is not an error.
        let feed = async move {
            if let Some(mut stdin) = stdin {
                let _ = stdin.write_all(input.as_bytes()).await;
                let _ = stdin.shutdown().await;
            }
        };
        let (_, out, err, status) =
            tokio::join!(feed, read_all(stdout), read_all(stderr), child.wait());
        (out, err, status)
    };
    let finished = tokio::time::timeout(timeout, work).await;
    match finished {
        Ok((out, err, Ok(status))) => Exit::Code(status.code(), out, err),
        Ok((_, _, Err(e))) => Exit::NotStarted(e.to_string()),
        Err(_) => {
            // The whole group goes, grandchildren included.
            child.kill();
            Exit::TimedOut
        }
    }
}

async fn read_all<R: tokio::io::AsyncRead + Unpin>(reader: Option<R>) -> String {
    let Some(reader) = reader else {
        return String::new();
    };
    let mut bytes = Vec::new();
    let mut limited = reader.take(MAX_OUTPUT);
    let _ = limited.read_to_end(&mut bytes).await;
    // Drain the rest so the hook never blocks on a full pipe.
    let mut rest = limited.into_inner();
    let mut sink = [0u8; 8192];
    while matches!(rest.read(&mut sink).await, Ok(n) if n > 0) {}
    String::from_utf8_lossy(&bytes).into_owned()
}
