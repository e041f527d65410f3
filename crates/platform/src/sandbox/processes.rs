//! Linux: the three processes of a sandboxed command, so that nothing it starts outlives it,
//! its session or tandem, and every Unix socket it connects to is decided outside it.
//!
//! 1. **The sandbox process** (`tandem sandbox`, the one tandem or the editor started): takes
//!    the first step of entering (linux.rs `outer`: namespaces, a new PID namespace among
//!    them, and the mounts), starts the second process, passes on the signals a process
//!    sends it, and ends as the command ended (its exit code, or the signal that killed it).
//!    When tandem started it, it watches tandem: if tandem dies, even by SIGKILL, the command
//!    is killed.
//! 2. **The first process of the new PID namespace** (pid 1 there): takes the second step
//!    (linux.rs `inner`: its own `/proc`, the namespace that locks the mounts, Landlock),
//!    starts the command, reaps what is orphaned, and answers the calls the command's filter
//!    hands it (filter.rs: every `connect`, and the calls that give a file a name). When it ends, the kernel kills every process left in the namespace: a
//!    daemon the command started with `setsid` or `nohup` included. It dies with the sandbox
//!    process (`PR_SET_PDEATHSIG`), and cannot be inspected (not dumpable).
//! 3. **The command**, started by pid 1 from a thread that installs the filter first
//!    (filter.rs), so the command runs under it and pid 1's other threads do not.

use std::convert::Infallible;
use std::ffi::OsString;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};

use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use nix::sys::signal::{SigHandler, SigSet, Signal, kill, sigaction};
use nix::sys::signalfd::SignalFd;
use nix::sys::wait::{WaitPidFlag, WaitStatus, waitpid};
use nix::unistd::{ForkResult, Pid, fork, pipe2};

use crate::ties::{PASSED_ON, end_as, pass_on, pidfd_open, quiet_fd, signals, tandem_parent};

use super::filter::{self, Rules};
use super::linux::{self, Outer};
use super::repositories::Workspace;
use super::sockets::Connectable;
use super::{CANNOT_ENTER, SandboxError, SandboxPolicy};

/// Runs `command` in the sandbox `policy` describes (see the module docs). Never returns
/// but with the error that kept the command from starting.
#[allow(unsafe_code)]
pub(crate) fn run(
    policy: &SandboxPolicy,
    command: &[OsString],
) -> Result<Infallible, SandboxError> {
    let owner = tandem_parent();
    let outer = linux::outer(policy)?;
    let step = |what: &'static str| move |e: nix::Error| SandboxError::Step(what, e.to_string());
    let (alive_read, alive_write) = pipe2(nix::fcntl::OFlag::O_CLOEXEC).map_err(step("a pipe"))?;
    let (status_read, status_write) =
        pipe2(nix::fcntl::OFlag::O_CLOEXEC).map_err(step("a pipe"))?;
    let watched = signals(&[Signal::SIGCHLD]);
    watched.thread_block().map_err(step("blocking signals"))?;
    // SAFETY: the sandbox process is single-threaded (it runs before tandem's runtime starts),
    // so the child may run any code until it executes the command.
    match unsafe { fork() }.map_err(step("starting the sandbox's first process"))? {
        ForkResult::Child => {
            drop((alive_write, status_read, owner));
            let code = match first(policy, &outer, command, &alive_read, status_write) {
                Ok(never) => match never {},
                Err(e) => say(&e),
            };
            std::process::exit(code)
        }
        ForkResult::Parent { child } => {
            drop((alive_read, status_write));
            let ended = watch(child, owner.as_ref(), &status_read);
            drop(alive_write);
            end_as(ended)
        }
    }
}

/// Writes why the command did not run, as `tandem sandbox` says it; the exit code that tells.
fn say(e: &SandboxError) -> i32 {
    let _ = std::io::Write::write_all(
        &mut std::io::stderr(),
        format!("tandem sandbox: {e}; the command did not run\n").as_bytes(),
    );
    i32::from(CANNOT_ENTER)
}

/// The sandbox process's part: waits for the first process to end, passing on the signals
/// it is sent and killing it if tandem dies. The wait status the command ended with (or, if
/// it never started, the first process's).
fn watch(first: Pid, owner: Option<&OwnedFd>, status: &OwnedFd) -> WaitStatus {
    let ended = pidfd_open(first.as_raw());
    let signals = SignalFd::with_flags(&signals(&[]), quiet_fd()).ok();
    loop {
        let mut fds = Vec::with_capacity(3);
        if let Some(ended) = &ended {
            fds.push(PollFd::new(ended.as_fd(), PollFlags::POLLIN));
        }
        if let Some(signals) = &signals {
            fds.push(PollFd::new(signals.as_fd(), PollFlags::POLLIN));
        }
        if let Some(owner) = owner {
            fds.push(PollFd::new(owner.as_fd(), PollFlags::POLLIN));
        }
        if ended.is_none() || poll(&mut fds, PollTimeout::NONE).is_err() {
            break;
        }
        let ready = |i: usize| {
            fds.get(i)
                .and_then(PollFd::revents)
                .is_some_and(|r| !r.is_empty())
        };
        let (first_ended, signalled, owner_gone) = (ready(0), ready(1), ready(2));
        if first_ended {
            break;
        }
        if signalled && let Some(signals) = &signals {
            pass_on(signals, first);
        }
        if owner_gone {
            let _ = kill(first, Signal::SIGKILL);
        }
    }
    let own = loop {
        match waitpid(first, None) {
            Err(nix::Error::EINTR) => continue,
            Ok(status) => break status,
            Err(_) => break WaitStatus::Exited(first, i32::from(CANNOT_ENTER)),
        }
    };
    let mut word = [0u8; 4];
    match nix::unistd::read(status, &mut word) {
        Ok(4) => decode(first, i32::from_ne_bytes(word)),
        _ => own,
    }
}

/// A raw wait status as nix reads it.
fn decode(pid: Pid, raw: i32) -> WaitStatus {
    WaitStatus::from_raw(pid, raw).unwrap_or(WaitStatus::Exited(pid, i32::from(CANNOT_ENTER)))
}

/// Does nothing: installed so that pid 1 of a namespace, which the kernel spares every signal
/// it has no handler for, still receives them (blocked, they are read from a signalfd).
extern "C" fn noted(_: libc::c_int) {}

/// The first process's part (see the module docs); returns only with what kept the command
/// from starting.
#[allow(unsafe_code)]
fn first(
    policy: &SandboxPolicy,
    outer: &Outer,
    command: &[OsString],
    alive: &OwnedFd,
    status: OwnedFd,
) -> Result<Infallible, SandboxError> {
    let step = |what: &'static str| move |e: nix::Error| SandboxError::Step(what, e.to_string());
    nix::sys::prctl::set_pdeathsig(Signal::SIGKILL).map_err(step("tying to the sandbox"))?;
    if gone(alive) {
        std::process::exit(i32::from(CANNOT_ENTER));
    }
    nix::sys::prctl::set_dumpable(false).map_err(step("closing to inspection"))?;
    let note = nix::sys::signal::SigAction::new(
        SigHandler::Handler(noted),
        nix::sys::signal::SaFlags::SA_RESTART,
        SigSet::empty(),
    );
    for signal in PASSED_ON.iter().chain([&Signal::SIGCHLD]) {
        // SAFETY: the handler does nothing, so it is safe whenever it runs.
        unsafe { sigaction(*signal, &note) }.map_err(step("listening for signals"))?;
    }
    let inner = linux::inner(policy, outer)?;
    let rules = Rules {
        sockets: Connectable::new(policy, outer, &inner),
        repositories: Workspace::new(policy, &inner),
    };
    let names = rules.repositories.guarded();
    let (child, listener) = start_command(outer, command, names)?;
    let ended = tend(child, Some(listener), rules, alive);
    let _ = nix::unistd::write(&status, &ended.to_ne_bytes());
    std::process::exit(0)
}

/// Starts the command from a thread of its own that installs the filter first: a filter
/// holds the thread that installs it and what that thread starts, so the command runs under
/// it while this process's other threads, which make the calls it hands over, do not. The
/// thread starts the command as `posix_spawn` does (no copy of this process's memory), with
/// the thread's signal mask, emptied; the handlers set here are the defaults again at
/// `exec`. The command's id and the filter's listener.
fn start_command(
    outer: &Outer,
    command: &[OsString],
    names: bool,
) -> Result<(Pid, OwnedFd), SandboxError> {
    let (program, args) = command
        .split_first()
        .ok_or_else(|| SandboxError::Policy("no command given".into()))?;
    std::thread::scope(|scope| {
        let starter = std::thread::Builder::new()
            .spawn_scoped(scope, || -> Result<(Pid, OwnedFd), SandboxError> {
                let listener = filter::install(names)?;
                // The command's signal mask is this thread's: none blocked. (A signal sent
                // to this process in the moment the thread lives may be taken here and not
                // passed on; the command has not started then.)
                let _ = nix::sys::signal::pthread_sigmask(
                    nix::sys::signal::SigmaskHow::SIG_SETMASK,
                    Some(&SigSet::empty()),
                    None,
                );
                let child = std::process::Command::new(program)
                    .args(args)
                    .env("TMPDIR", &outer.temp)
                    .spawn()
                    .map_err(|e| SandboxError::Io(program.to_string_lossy().into_owned(), e))?;
                Ok((Pid::from_raw(child.id() as i32), listener))
            })
            .map_err(|e| SandboxError::Io("a thread to start the command".into(), e))?;
        starter.join().unwrap_or_else(|_| {
            Err(SandboxError::Step(
                "starting the command",
                "it panicked".into(),
            ))
        })
    })
}

/// Whether the sandbox process has ended (its end of the pipe closed).
fn gone(alive: &OwnedFd) -> bool {
    let mut fds = [PollFd::new(alive.as_fd(), PollFlags::POLLIN)];
    poll(&mut fds, PollTimeout::ZERO).is_ok_and(|n| n > 0)
}

/// Pid 1's work until the command ends: reaps every process orphaned to it, passes on the
/// signals a process sends it, answers the command's `connect` calls. The command's raw
/// wait status.
fn tend(command: Pid, listener: Option<OwnedFd>, rules: Rules, alive: &OwnedFd) -> i32 {
    let signals = SignalFd::with_flags(&signals(&[Signal::SIGCHLD]), quiet_fd()).ok();
    let rules = std::sync::Arc::new(rules);
    // What pid 1 makes for the command gets the command's own creation mask, applied here.
    nix::sys::stat::umask(nix::sys::stat::Mode::empty());
    let mut listening = listener.is_some();
    loop {
        if let Some(status) = reap(command) {
            return status;
        }
        let mut fds = Vec::with_capacity(3);
        fds.push(PollFd::new(alive.as_fd(), PollFlags::POLLIN));
        if let Some(signals) = &signals {
            fds.push(PollFd::new(signals.as_fd(), PollFlags::POLLIN));
        }
        if let (true, Some(listener)) = (listening, &listener) {
            fds.push(PollFd::new(listener.as_fd(), PollFlags::POLLIN));
        }
        match poll(&mut fds, PollTimeout::NONE) {
            Ok(_) | Err(nix::Error::EINTR) => {}
            Err(_) => return raw_exit(i32::from(CANNOT_ENTER)),
        }
        let events: Vec<PollFlags> = fds
            .iter()
            .map(|f| f.revents().unwrap_or(PollFlags::empty()))
            .collect();
        if events.first().is_some_and(|e| !e.is_empty()) {
            // The sandbox process is gone: so is everything here, as this process ends.
            std::process::exit(i32::from(CANNOT_ENTER));
        }
        if events.get(1).is_some_and(|e| !e.is_empty())
            && let Some(signals) = &signals
        {
            pass_on(signals, command);
        }
        if let (Some(e), Some(listener)) = (events.get(2), &listener) {
            if e.intersects(PollFlags::POLLHUP | PollFlags::POLLERR) {
                listening = false;
            } else if e.contains(PollFlags::POLLIN) {
                filter::answer_next(listener.as_raw_fd(), &rules);
            }
        }
    }
}

/// Reaps every ended child without waiting; the command's raw wait status once it ended.
fn reap(command: Pid) -> Option<i32> {
    loop {
        match waitpid(None::<Pid>, Some(WaitPidFlag::WNOHANG)) {
            Ok(WaitStatus::Exited(pid, code)) if pid == command => return Some(raw_exit(code)),
            Ok(WaitStatus::Signaled(pid, signal, core)) if pid == command => {
                return Some(raw_signal(signal as i32, core));
            }
            Ok(WaitStatus::StillAlive) | Err(_) => return None,
            Ok(_) => continue,
        }
    }
}

/// The raw wait status of an exit with `code`.
fn raw_exit(code: i32) -> i32 {
    (code & 0xff) << 8
}

/// The raw wait status of a death by `signal`.
fn raw_signal(signal: i32, core: bool) -> i32 {
    signal | if core { 0x80 } else { 0 }
}
