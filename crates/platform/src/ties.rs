//! Linux: what ties a command to tandem, so nothing it starts outlives tandem, even when
//! tandem is killed with SIGKILL.
//!
//! Commands in the sandbox run under `tandem sandbox` (sandbox/processes.rs), which ends with
//! its PID namespace. Commands outside it (the sandbox turned off, `full-access` mode) run
//! under `tandem tie -- program args…` ([`run_early`]): a process that becomes the reaper of
//! everything the command leaves behind (`PR_SET_CHILD_SUBREAPER`: a daemon that left its
//! process group with `setsid` still comes back to it), watches tandem through a pidfd, and
//! when the command ends or tandem dies, kills whatever the command left and ends as the
//! command ended. Both pass on the signals a process sends them.
//!
//! What it cannot reach: a process that escapes while its tie is killed at once with its
//! group (tandem's own cancel kills the group, tie included); the editor's terminals, which
//! the editor runs and tandem kills through `terminal/kill`.

use std::ffi::OsString;
use std::os::fd::{AsFd, FromRawFd, OwnedFd, RawFd};
use std::process::ExitCode;

use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use nix::sys::signal::{SigHandler, SigSet, SigmaskHow, Signal, kill, sigaction, sigprocmask};
use nix::sys::signalfd::{SfdFlags, SignalFd};
use nix::sys::wait::{WaitPidFlag, WaitStatus, waitpid};
use nix::unistd::Pid;

/// Exit status when the command could not start (as `env` uses it).
const CANNOT_START: u8 = 127;

/// Whether this process is tandem's own binary, which answers `tandem tie` ([`run_early`]):
/// set by `main`, so a program that only links the library (a test harness) runs commands
/// as they are.
static TIES: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Says that this process is tandem's binary: commands outside the sandbox are tied from now.
pub fn enable() {
    TIES.store(true, std::sync::atomic::Ordering::Relaxed);
}

/// Whether commands are tied ([`enable`]).
pub(crate) fn enabled() -> bool {
    TIES.load(std::sync::atomic::Ordering::Relaxed)
}

/// `tandem tie -- program args…` as tandem starts it, read straight from the process's
/// arguments (as `tandem sandbox` is); `None` for any other form.
pub fn run_early() -> Option<ExitCode> {
    let mut args = std::env::args_os().skip(1);
    if args.next()? != "tie" || args.next()? != "--" {
        return None;
    }
    let command: Vec<OsString> = args.collect();
    (!command.is_empty()).then(|| tie(&command))
}

/// Runs `command` tied to tandem (see the module docs).
fn tie(command: &[OsString]) -> ExitCode {
    let owner = tandem_parent();
    let said = |e: String| {
        let _ = std::io::Write::write_all(
            &mut std::io::stderr(),
            format!("tandem tie: {e}; the command did not run\n").as_bytes(),
        );
        ExitCode::from(CANNOT_START)
    };
    // As tandem itself is: the user's other processes (the command among them) cannot read
    // this one's memory or environment.
    let _ = nix::sys::prctl::set_dumpable(false);
    if let Err(e) = nix::sys::prctl::set_child_subreaper(true) {
        return said(format!("cannot reap what the command leaves: {e}"));
    }
    let Some((program, args)) = command.split_first() else {
        return said("no command given".into());
    };
    // Started before this process blocks the signals it passes on: the command's mask is
    // this process's, none blocked.
    let child = match std::process::Command::new(program).args(args).spawn() {
        Ok(child) => Pid::from_raw(child.id() as i32),
        Err(e) => return said(format!("{}: {e}", program.to_string_lossy())),
    };
    if let Err(e) = signals(&[]).thread_block() {
        let _ = kill(child, Signal::SIGKILL);
        return said(format!("cannot take signals: {e}"));
    }
    let status = wait_tied(child, owner.as_ref());
    kill_leftovers();
    end_as(status)
}

/// Waits for `child` to end, passing on the signals this process is sent and killing it if
/// tandem (`owner`) dies; how it ended.
fn wait_tied(child: Pid, owner: Option<&OwnedFd>) -> WaitStatus {
    let ended = pidfd_open(child.as_raw());
    let signals = SignalFd::with_flags(&signals(&[]), quiet_fd()).ok();
    while let Some(ended) = &ended {
        let mut fds = vec![PollFd::new(ended.as_fd(), PollFlags::POLLIN)];
        if let Some(signals) = &signals {
            fds.push(PollFd::new(signals.as_fd(), PollFlags::POLLIN));
        }
        if let Some(owner) = owner {
            fds.push(PollFd::new(owner.as_fd(), PollFlags::POLLIN));
        }
        if poll(&mut fds, PollTimeout::NONE).is_err() {
            break;
        }
        let ready = |i: usize| {
            fds.get(i)
                .and_then(PollFd::revents)
                .is_some_and(|r| !r.is_empty())
        };
        let (done, signalled) = (ready(0), ready(1) && signals.is_some());
        let owner_gone = if signals.is_some() {
            ready(2)
        } else {
            ready(1)
        };
        if done {
            break;
        }
        if signalled && let Some(signals) = &signals {
            pass_on(signals, child);
        }
        if owner_gone {
            let _ = kill(child, Signal::SIGKILL);
        }
    }
    loop {
        match waitpid(child, None) {
            Err(nix::Error::EINTR) => continue,
            Ok(status) => return status,
            Err(_) => return WaitStatus::Exited(child, i32::from(CANNOT_START)),
        }
    }
}

/// Kills every process the command left behind: this process's children (orphans come back
/// to it, as their reaper) until none is left.
fn kill_leftovers() {
    loop {
        let children = children();
        if children.is_empty() {
            // Reap what ended between the look and now; stop when nothing is left at all.
            match waitpid(None::<Pid>, Some(WaitPidFlag::WNOHANG)) {
                Ok(WaitStatus::StillAlive) | Err(_) => return,
                Ok(_) => continue,
            }
        }
        for pid in children {
            let _ = kill(pid, Signal::SIGKILL);
        }
        while let Ok(status) = waitpid(None::<Pid>, Some(WaitPidFlag::WNOHANG)) {
            if status == WaitStatus::StillAlive {
                break;
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
}

/// This process's children, from `/proc/self/task/*/children`.
fn children() -> Vec<Pid> {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return Vec::new();
    };
    tasks
        .flatten()
        .filter_map(|task| std::fs::read_to_string(task.path().join("children")).ok())
        .flat_map(|list| {
            list.split_whitespace()
                .filter_map(|p| p.parse().ok())
                .map(Pid::from_raw)
                .collect::<Vec<_>>()
        })
        .collect()
}

/// Signals a process may send tandem's process between it and a command: passed on to the
/// command. Those a terminal sends
/// to its whole foreground group reach the command by themselves and are not passed twice.
pub(crate) const PASSED_ON: [Signal; 6] = [
    Signal::SIGTERM,
    Signal::SIGINT,
    Signal::SIGHUP,
    Signal::SIGQUIT,
    Signal::SIGUSR1,
    Signal::SIGUSR2,
];

/// `si_code` of a signal the kernel itself sent (a terminal's, a child's end).
pub(crate) const SI_KERNEL: i32 = 0x80;

/// The set of [`PASSED_ON`] and `more`.
pub(crate) fn signals(more: &[Signal]) -> SigSet {
    let mut set = SigSet::empty();
    for signal in PASSED_ON.iter().chain(more) {
        set.add(*signal);
    }
    set
}

/// A descriptor that ends when tandem ends, when tandem (the same binary) started this
/// process; `None` when something else did (the editor's terminal), whose life is its own.
pub(crate) fn tandem_parent() -> Option<OwnedFd> {
    use std::os::unix::fs::MetadataExt;
    let parent = nix::unistd::getppid();
    let same =
        |a: &std::fs::Metadata, b: &std::fs::Metadata| a.dev() == b.dev() && a.ino() == b.ino();
    let ours = std::fs::metadata("/proc/self/exe").ok()?;
    let theirs = std::fs::metadata(format!("/proc/{parent}/exe")).ok()?;
    if !same(&ours, &theirs) {
        return None;
    }
    let pidfd = pidfd_open(parent.as_raw())?;
    // The parent may have ended between the two looks, and its number been reused.
    (nix::unistd::getppid() == parent).then_some(pidfd)
}

/// `pidfd_open(2)`: a descriptor that becomes readable when process `pid` ends.
#[allow(unsafe_code)]
pub(crate) fn pidfd_open(pid: i32) -> Option<OwnedFd> {
    // SAFETY: pidfd_open takes two integers and returns a new descriptor or -1.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    // SAFETY: a non-negative result is a descriptor this process now owns.
    (fd >= 0).then(|| unsafe { OwnedFd::from_raw_fd(fd as RawFd) })
}

/// Ends this process as the command ended: with its exit code, or killed by its signal.
#[allow(unsafe_code)]
pub(crate) fn end_as(status: WaitStatus) -> ! {
    match status {
        WaitStatus::Signaled(_, signal, _) => {
            // SAFETY: restoring the default action of a signal this process is about to
            // raise on itself; no handler runs.
            let _ = unsafe { sigaction(signal, &default_action()) };
            let mut only = SigSet::empty();
            only.add(signal);
            let _ = sigprocmask(SigmaskHow::SIG_UNBLOCK, Some(&only), None);
            let _ = nix::sys::signal::raise(signal);
            std::process::exit(128 + signal as i32)
        }
        WaitStatus::Exited(_, code) => std::process::exit(code),
        _ => std::process::exit(i32::from(CANNOT_START)),
    }
}

/// The default action, no flags.
fn default_action() -> nix::sys::signal::SigAction {
    nix::sys::signal::SigAction::new(
        SigHandler::SigDfl,
        nix::sys::signal::SaFlags::empty(),
        SigSet::empty(),
    )
}

/// Flags of a signalfd read only when ready: not blocking, closed at `exec`.
pub(crate) fn quiet_fd() -> SfdFlags {
    SfdFlags::SFD_NONBLOCK | SfdFlags::SFD_CLOEXEC
}

/// Passes every signal waiting on `signals` that a process sent (not the kernel: a
/// terminal's reach the whole group by themselves; a child's end is reaped) on to `to`.
pub(crate) fn pass_on(signals: &SignalFd, to: Pid) {
    while let Ok(Some(info)) = signals.read_signal() {
        let Ok(signal) = Signal::try_from(info.ssi_signo as i32) else {
            continue;
        };
        if info.ssi_code != SI_KERNEL && signal != Signal::SIGCHLD {
            let _ = kill(to, signal);
        }
    }
}
