//! Child processes with a timeout, bounded output and kill on cancel, for editors without
//! the `terminal` capability (and for hooks and `tandem exec`).

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::client::ExitStatus;
use crate::platform;

/// What a finished local command produced.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct CommandRun {
    /// stdout and stderr in the order written, bounded to `max_bytes` (head and tail kept).
    pub(crate) output: String,
    /// Bytes dropped from the middle.
    pub(crate) dropped: usize,
    /// How it ended; `None` when it was killed for a timeout or cancel.
    pub(crate) exit: Option<ExitStatus>,
    /// It ran past its timeout and was killed.
    pub(crate) timed_out: bool,
    /// The turn was cancelled and it was killed.
    pub(crate) cancelled: bool,
}

/// `output` bounded to `max` bytes as a local command's is: its first and last halves, with
/// how much was left out between them.
pub(crate) fn head_and_tail(output: &str, max: usize) -> String {
    let mut bounded = Bounded::new(max);
    bounded.push(output.as_bytes());
    bounded.finish().0
}

/// Keeps the first and last halves of a byte budget.
struct Bounded {
    head: Vec<u8>,
    tail: std::collections::VecDeque<u8>,
    half: usize,
    dropped: usize,
}

impl Bounded {
    fn new(max: usize) -> Self {
        Self {
            head: Vec::new(),
            tail: std::collections::VecDeque::new(),
            half: max / 2,
            dropped: 0,
        }
    }
    fn push(&mut self, bytes: &[u8]) {
        for &b in bytes {
            if self.head.len() < self.half {
                self.head.push(b);
            } else {
                self.tail.push_back(b);
                if self.tail.len() > self.half {
                    self.tail.pop_front();
                    self.dropped += 1;
                }
            }
        }
    }
    fn finish(self) -> (String, usize) {
        let mut text = String::from_utf8_lossy(&self.head).into_owned();
        if self.dropped > 0 {
            text.push_str(&format!(
                "\n[… {} bytes of output omitted …]\n",
                self.dropped
            ));
        }
        let tail: Vec<u8> = self.tail.into_iter().collect();
        text.push_str(&String::from_utf8_lossy(&tail));
        (text, self.dropped)
    }
}

/// Where a running command's latest output goes while it runs: its last [`LIVE_BYTES`]
/// (from a line start), at most every [`LIVE_EVERY`], and only when there is more.
pub(crate) type Live<'a> = &'a (dyn Fn(&str) + Send + Sync);

/// Most bytes of a running command's output shown live.
pub(crate) const LIVE_BYTES: usize = 4096;
/// How often at most a running command's output is shown live.
pub(crate) const LIVE_EVERY: Duration = Duration::from_millis(250);

/// The last bytes a command wrote, for showing it live.
struct Recent {
    bytes: std::collections::VecDeque<u8>,
    /// Whether bytes have left the front.
    cut: bool,
    /// Whether bytes arrived since it was last shown.
    fresh: bool,
}

impl Recent {
    fn new() -> Self {
        Self {
            bytes: std::collections::VecDeque::new(),
            cut: false,
            fresh: false,
        }
    }

    fn push(&mut self, bytes: &[u8]) {
        self.bytes.extend(bytes);
        while self.bytes.len() > LIVE_BYTES {
            self.bytes.pop_front();
            self.cut = true;
        }
        self.fresh = true;
    }

    /// The text to show, starting at a whole line once the front was cut.
    fn text(&mut self) -> String {
        self.fresh = false;
        let (a, b) = self.bytes.as_slices();
        let all = String::from_utf8_lossy(&[a, b].concat()).into_owned();
        match all.find('\n').filter(|_| self.cut) {
            Some(at) => format!("…\n{}", &all[at + 1..]),
            None => all,
        }
    }
}

/// Runs `started` (a line in a shell, [`crate::platform::Shell::command`], or that in the
/// sandbox) in its own process group (a Job Object on Windows); the group is killed on
/// timeout or cancel so no grandchild outlives the call. stdout and stderr share one pipe, so
/// the output reads in the order it was written, as in a terminal. `live`, when given, is
/// shown the latest output while the command runs.
pub(crate) async fn run_command(
    mut started: tokio::process::Command,
    cwd: &Path,
    limits: (Duration, usize),
    cancel: &CancellationToken,
    live: Option<Live<'_>>,
) -> std::io::Result<CommandRun> {
    let (timeout, max_bytes) = limits;
    crate::secrets::scrub(&mut started);
    started.current_dir(cwd).stdin(Stdio::null());
    let mut output = Some(platform::Merged::attach(&mut started)?);
    let mut child = platform::Group::spawn(started)?;
    let mut out = Bounded::new(max_bytes);
    let mut recent = Recent::new();
    let mut shown = tokio::time::interval(LIVE_EVERY);
    shown.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let deadline = tokio::time::sleep(timeout);
    tokio::pin!(deadline);
    let (mut timed_out, mut cancelled) = (false, false);
    let status = loop {
        tokio::select! {
            chunk = async { match output.as_mut() { Some(o) => o.next().await, None => std::future::pending().await } } => {
                match chunk {
                    Some(Ok(bytes)) => {
                        out.push(&bytes);
                        if live.is_some() {
                            recent.push(&bytes);
                        }
                    }
                    None | Some(Err(_)) => output = None,
                }
            }
            _ = shown.tick(), if recent.fresh => {
                if let Some(live) = live {
                    live(&recent.text());
                }
            }
            status = child.wait(), if output.is_none() => break Some(status?),
            () = &mut deadline => { timed_out = true; break None; }
            () = cancel.cancelled() => { cancelled = true; break None; }
        }
    };
    if status.is_none() {
        child.kill();
        let _ = child.wait().await;
    }
    let (output, dropped) = out.finish();
    Ok(CommandRun {
        output,
        dropped,
        exit: status.map(|s| exit_status(&s)),
        timed_out,
        cancelled,
    })
}

fn exit_status(status: &std::process::ExitStatus) -> ExitStatus {
    ExitStatus {
        code: status.code().and_then(|c| u32::try_from(c).ok()),
        signal: platform::exit_signal(status).map(|s| format!("signal {s}")),
    }
}

// POSIX shell lines and Unix file modes.
#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use crate::platform::Shell;

    #[tokio::test]
    async fn runs_and_bounds_output() {
        let dir = tempfile::tempdir().unwrap();
        let cancel = CancellationToken::new();
        let run = run_command(
            Shell::system().command("echo first >&2; seq 1 20000; echo done >&2; exit 3"),
            dir.path(),
            (Duration::from_secs(20), 1000),
            &cancel,
            None,
        )
        .await
        .unwrap();
        assert_eq!(run.exit.unwrap().code, Some(3));
        assert!(
            run.output.starts_with("first\n1\n2\n"),
            "stderr and stdout in order"
        );
        assert!(run.output.contains("bytes of output omitted"));
        assert!(run.output.trim_end().ends_with("done"));
        assert!(run.dropped > 0);
    }

    #[tokio::test]
    async fn output_is_shown_while_the_command_runs_bounded_and_throttled() {
        let dir = tempfile::tempdir().unwrap();
        let cancel = CancellationToken::new();
        let seen = std::sync::Mutex::new(Vec::<String>::new());
        let live = |text: &str| seen.lock().unwrap().push(text.to_string());
        let start = std::time::Instant::now();
        let run = run_command(
            Shell::system().command("echo early; sleep 0.6; seq 1 5000; sleep 0.6; echo late"),
            dir.path(),
            (Duration::from_secs(20), 100_000),
            &cancel,
            Some(&live),
        )
        .await
        .unwrap();
        let took = start.elapsed();
        let seen = seen.into_inner().unwrap();
        assert!(run.output.ends_with("late\n"));
        assert!(seen.len() >= 2, "shown while it ran: {seen:?}");
        assert!(seen[0].starts_with("early\n"), "{seen:?}");
        assert!(seen.iter().all(|t| t.len() <= LIVE_BYTES + 8), "bounded");
        assert!(
            seen.iter()
                .any(|t| t.starts_with("…\n") && t.contains("\n5000\n")),
            "the latest lines, from a line start: {seen:?}"
        );
        let most = took.as_millis() / LIVE_EVERY.as_millis() + 2;
        assert!(
            seen.len() as u128 <= most,
            "{} updates in {took:?}",
            seen.len()
        );
    }

    #[tokio::test]
    async fn timeout_kills_the_group() {
        let dir = tempfile::tempdir().unwrap();
        let cancel = CancellationToken::new();
        let start = std::time::Instant::now();
        let run = run_command(
            Shell::system().command("sleep 30 & sleep 30"),
            dir.path(),
            (Duration::from_millis(200), 1000),
            &cancel,
            None,
        )
        .await
        .unwrap();
        assert!(run.timed_out && run.exit.is_none());
        assert!(start.elapsed() < Duration::from_secs(10));
    }
}
