//! Commands that keep running while the turn goes on (`run_command` with `background: true`):
//! a dev server, a watcher, a long test run. Each lives with its session, not its turn:
//! cancelling a turn leaves it running; closing, deleting or ending the session stops it (the
//! whole process tree, or the editor's terminal), however the session ends (`session/close`,
//! `session/delete`, the end of input, SIGTERM or SIGINT). `command_output` reads what it
//! wrote since the last read, `stop_command` stops it. At most `limit` run at once.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use parking_lot::Mutex;
use tokio_util::sync::CancellationToken;

use crate::client::{ClientOps, ExitStatus};

/// Most of a job's output kept (its tail).
const KEPT: usize = 1 << 20;
/// Most of it one read returns (its tail).
pub(crate) const MOST_READ: usize = 30 * 1024;
/// How long stopping a local job waits for its process group to be killed and reaped.
const REAPED: std::time::Duration = std::time::Duration::from_secs(5);

/// A session's background commands.
pub(crate) struct Background {
    jobs: Mutex<Vec<Arc<BackgroundJob>>>,
    next: AtomicU32,
    limit: usize,
}

/// Where a job runs.
pub(crate) enum JobHost {
    /// A local process group, whose output tandem reads.
    Local,
    /// The editor's terminal: the editor holds the output.
    Terminal {
        /// The editor.
        client: Arc<dyn ClientOps>,
        /// The session the terminal belongs to.
        session: String,
        /// The terminal.
        terminal: String,
    },
}

/// One background command.
pub(crate) struct BackgroundJob {
    /// Its id (`bg-1`), which the model names.
    pub(crate) id: String,
    /// The command line.
    pub(crate) command: String,
    place: Mutex<Option<JobHost>>,
    state: Mutex<State>,
    /// Stops it.
    pub(crate) stop: CancellationToken,
    /// Cancelled once it has ended (its end recorded by [`BackgroundJob::finished`]).
    done: CancellationToken,
}

#[derive(Default)]
struct State {
    /// The tail of the output (local jobs).
    text: String,
    /// Bytes ever written.
    total: usize,
    /// `total` at the last read.
    read: usize,
    /// For the editor's terminal: the length of its output at the last read.
    terminal_seen: usize,
    exit: Option<ExitStatus>,
    ended: bool,
}

/// What one read of a job gives.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Reading {
    /// New output since the last read (its tail, when long).
    pub(crate) output: String,
    /// Bytes of it left out.
    pub(crate) dropped: usize,
    /// How it ended, once it has.
    pub(crate) ended: Option<Option<ExitStatus>>,
}

/// A job as `_tandem/status` and `/permissions` list it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listed {
    /// Its id.
    pub id: String,
    /// The command line.
    pub command: String,
    /// Whether it still runs.
    pub running: bool,
    /// Its exit code, once it ended with one.
    pub exit_code: Option<u32>,
}

impl Background {
    /// No jobs, at most `limit` at once.
    pub(crate) fn new(limit: usize) -> Self {
        Self {
            jobs: Mutex::default(),
            next: AtomicU32::new(1),
            limit: limit.max(1),
        }
    }

    /// A new job for `command`; refused when `limit` run already.
    pub(crate) fn start(&self, command: &str) -> Result<Arc<BackgroundJob>, String> {
        let mut jobs = self.jobs.lock();
        let running = jobs.iter().filter(|j| !j.ended()).count();
        if running >= self.limit {
            return Err(format!(
                "{running} background commands are running, the most this session allows; stop one first (stop_command)"
            ));
        }
        let id = format!("bg-{}", self.next.fetch_add(1, Ordering::Relaxed));
        let job = Arc::new(BackgroundJob {
            id,
            command: command.to_string(),
            place: Mutex::new(None),
            state: Mutex::default(),
            stop: CancellationToken::new(),
            done: CancellationToken::new(),
        });
        jobs.push(job.clone());
        Ok(job)
    }

    /// Whether any job was started in the session.
    pub(crate) fn any(&self) -> bool {
        !self.jobs.lock().is_empty()
    }

    /// Whether any job is still running.
    pub(crate) fn running(&self) -> bool {
        self.jobs.lock().iter().any(|job| !job.ended())
    }

    /// The job `id`.
    pub(crate) fn find(&self, id: &str) -> Option<Arc<BackgroundJob>> {
        self.jobs.lock().iter().find(|j| j.id == id.trim()).cloned()
    }

    /// Every job, oldest first.
    pub(crate) fn list(&self) -> Vec<Listed> {
        self.jobs
            .lock()
            .iter()
            .map(|j| {
                let st = j.state.lock();
                Listed {
                    id: j.id.clone(),
                    command: j.command.clone(),
                    running: !st.ended,
                    exit_code: st.exit.as_ref().and_then(|e| e.code),
                }
            })
            .collect()
    }

    /// Stops every job (the session ends), all at once; resolves once each has been stopped.
    pub(crate) async fn stop_all(&self) {
        let jobs: Vec<Arc<BackgroundJob>> = self.jobs.lock().clone();
        futures::future::join_all(jobs.iter().map(|job| job.halt())).await;
    }
}

impl BackgroundJob {
    /// Where it runs, once it started.
    pub(crate) fn placed(&self, place: JobHost) {
        *self.place.lock() = Some(place);
    }

    /// Runs `show` with whether the job is still where it was started (no stop has taken it
    /// away), holding its place meanwhile: a stop waits for `show`, so what `show` sends the
    /// editor goes before the stop's `terminal/release`.
    pub(crate) fn while_placed(&self, show: impl FnOnce(bool)) {
        let place = self.place.lock();
        show(place.is_some());
    }

    /// Whether it has ended.
    pub(crate) fn ended(&self) -> bool {
        self.state.lock().ended
    }

    /// Adds output a local job wrote.
    pub(crate) fn wrote(&self, bytes: &[u8]) {
        let mut st = self.state.lock();
        st.total += bytes.len();
        st.text.push_str(&String::from_utf8_lossy(bytes));
        if st.text.len() > KEPT {
            let mut cut = st.text.len() - KEPT;
            while !st.text.is_char_boundary(cut) {
                cut += 1;
            }
            st.text.drain(..cut);
        }
    }

    /// Records how it ended.
    pub(crate) fn finished(&self, exit: Option<ExitStatus>) {
        {
            let mut st = self.state.lock();
            st.ended = true;
            st.exit = exit;
        }
        self.done.cancel();
    }

    /// The latest output (for the editor's view of a local job).
    pub(crate) fn tail(&self, max: usize) -> String {
        let st = self.state.lock();
        tail_of(&st.text, max).to_string()
    }

    /// What it wrote since the last read, and how it ended if it has.
    pub(crate) async fn read(&self) -> Reading {
        let terminal = match &*self.place.lock() {
            Some(JobHost::Terminal {
                client,
                session,
                terminal,
            }) => Some((client.clone(), session.clone(), terminal.clone())),
            _ => None,
        };
        if let Some((client, session, terminal)) = terminal {
            return self.read_terminal(&*client, &session, &terminal).await;
        }
        let mut st = self.state.lock();
        let new = st.total - st.read;
        st.read = st.total;
        let kept = new.min(st.text.len());
        let mut start = st.text.len() - kept;
        while !st.text.is_char_boundary(start) {
            start += 1;
        }
        let fresh = &st.text[start..];
        let output = tail_of(fresh, MOST_READ).to_string();
        Reading {
            dropped: new.saturating_sub(output.len()),
            output,
            ended: st.ended.then(|| st.exit.clone()),
        }
    }

    async fn read_terminal(
        &self,
        client: &dyn ClientOps,
        session: &str,
        terminal: &str,
    ) -> Reading {
        let Ok(out) = client.terminal_output(session, terminal).await else {
            let st = self.state.lock();
            return Reading {
                output: String::new(),
                dropped: 0,
                ended: st.ended.then(|| st.exit.clone()),
            };
        };
        let mut st = self.state.lock();
        let seen = st.terminal_seen;
        // The editor keeps a bounded tail: once it dropped output, the old length says
        // nothing, and the whole tail is new as far as can be told.
        let fresh =
            if !out.truncated && out.output.len() >= seen && out.output.is_char_boundary(seen) {
                &out.output[seen..]
            } else {
                out.output.as_str()
            };
        st.terminal_seen = out.output.len();
        if let Some(exit) = out.exit.clone() {
            st.ended = true;
            st.exit = Some(exit);
        }
        let output = tail_of(fresh, MOST_READ).to_string();
        Reading {
            dropped: fresh.len() - output.len(),
            output,
            ended: st.ended.then(|| st.exit.clone()),
        }
    }

    /// Stops it: a local job's process group is killed (resolving once it is reaped, or after
    /// [`REAPED`]); an editor's terminal is killed, unless the editor said the command exited,
    /// and released.
    pub(crate) async fn halt(&self) {
        self.stop.cancel();
        let place = self.place.lock().take();
        match place {
            Some(JobHost::Terminal {
                client,
                session,
                terminal,
            }) => {
                // Not "ended": a terminal whose exit could not be learned (the editor's side
                // closed while tandem waited for it) may still run.
                let exited = self.state.lock().exit.is_some();
                if !exited && let Err(e) = client.kill_terminal(&session, &terminal).await {
                    tracing::debug!(%terminal, "terminal/kill failed: {e}");
                }
                if let Err(e) = client.release_terminal(&session, &terminal).await {
                    tracing::debug!(%terminal, "terminal/release failed: {e}");
                }
                let mut st = self.state.lock();
                st.ended = true;
            }
            Some(JobHost::Local) => {
                // Its watcher kills the group on `stop`, then reaps it.
                let _ = tokio::time::timeout(REAPED, self.done.cancelled()).await;
            }
            None => {}
        }
    }
}

/// The last `max` bytes of `text`, on a character boundary.
fn tail_of(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut start = text.len() - max;
    while !text.is_char_boundary(start) {
        start += 1;
    }
    &text[start..]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn reads_give_what_is_new_and_the_limit_holds() {
        let bg = Background::new(2);
        let a = bg.start("a").unwrap();
        let _b = bg.start("b").unwrap();
        assert!(bg.start("c").err().unwrap().contains("stop one first"));
        a.wrote(b"one\n");
        assert_eq!(a.read().await.output, "one\n");
        a.wrote(b"two\n");
        let r = a.read().await;
        assert_eq!((r.output.as_str(), r.ended.clone()), ("two\n", None));
        a.finished(Some(ExitStatus {
            code: Some(0),
            signal: None,
        }));
        assert!(a.read().await.ended.is_some());
        assert!(bg.start("c").is_ok(), "an ended job does not count");
        assert_eq!(bg.find("bg-1").unwrap().command, "a");
        let listed = bg.list();
        assert_eq!(listed[0].exit_code, Some(0));
        assert!(!listed[0].running && listed[1].running);
    }

    #[tokio::test]
    async fn a_long_read_keeps_its_tail_and_counts_what_it_left_out() {
        let bg = Background::new(1);
        let a = bg.start("a").unwrap();
        a.wrote("é".repeat(MOST_READ).as_bytes());
        let r = a.read().await;
        assert!(r.output.len() <= MOST_READ);
        assert_eq!(r.dropped + r.output.len(), 2 * MOST_READ);
    }
}
