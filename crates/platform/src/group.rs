//! A child process together with everything it starts: on Unix it leads a session (and so
//! a process group) of its own, without tandem's controlling terminal; on Windows it runs in
//! a Job Object (both through `process-wrap`). Killing the
//! group ends grandchildren too (a shell's pipeline, `npx`'s node), and a group dropped
//! while still running is killed, so nothing tandem starts outlives a timeout, a cancel or
//! the end of the connection.

use std::io;
use std::process::ExitStatus;

use process_wrap::tokio::{ChildWrapper, CommandWrap, KillOnDrop};
use tokio::process::{ChildStderr, ChildStdin, ChildStdout};

/// A started child leading its own process group or job.
#[derive(Debug)]
pub struct Group {
    child: Box<dyn ChildWrapper>,
    finished: bool,
}

impl Group {
    /// Starts `command` (with its directory, environment and pipes already set) in a group
    /// of its own.
    pub fn spawn(command: tokio::process::Command) -> io::Result<Group> {
        let mut wrap = CommandWrap::from(command);
        super::native::isolate(&mut wrap);
        wrap.wrap(KillOnDrop);
        // `wrap` (and the pipe ends the command held) is dropped here, so a pipe shared by
        // the child's stdout and stderr ends when the child's side closes.
        Ok(Group {
            child: wrap.spawn()?,
            finished: false,
        })
    }

    /// The child's stdin, if piped and not taken yet.
    pub fn take_stdin(&mut self) -> Option<ChildStdin> {
        self.child.stdin().take()
    }

    /// The child's stdout, if piped and not taken yet.
    pub fn take_stdout(&mut self) -> Option<ChildStdout> {
        self.child.stdout().take()
    }

    /// The child's stderr, if piped and not taken yet.
    pub fn take_stderr(&mut self) -> Option<ChildStderr> {
        self.child.stderr().take()
    }

    /// Waits for the child to exit (and, where the system tracks it, for the rest of its
    /// group).
    pub async fn wait(&mut self) -> io::Result<ExitStatus> {
        let status = self.child.wait().await?;
        self.finished = true;
        Ok(status)
    }

    /// Kills the child and everything in its group; a group that is already gone is not
    /// an error.
    pub fn kill(&mut self) {
        if let Err(e) = self.child.start_kill() {
            tracing::debug!("killing a process group: {e}");
        }
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        if !self.finished {
            self.kill();
        }
    }
}
