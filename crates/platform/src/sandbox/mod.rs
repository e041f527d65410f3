//! The command sandbox: what a command the model asked for may touch, enforced by the
//! operating system rather than judged from the command's text (DESIGN.md §3, "Commands").
//!
//! - [`SandboxPolicy`] (policy.rs): the plain data — writable folders, read-only paths inside them,
//!   hidden paths, the network, a private temp folder — made once per session from the
//!   workspace and `[sandbox]`.
//! - `tandem sandbox --policy FILE -- program args…` ([`run`]) applies a policy and runs the
//!   program in it: on Linux through three processes (processes.rs: the sandbox, pid 1 of a
//!   PID namespace of its own, the command), with namespaces and Landlock (linux.rs) and a
//!   seccomp filter that hands every `connect` and every call that names a file to pid 1
//!   (filter.rs; the calling process reached through calls.rs; sockets.rs,
//!   repositories.rs), so nothing the command starts outlives it or tandem; on macOS it becomes the program under Seatbelt (macos.rs). Local
//!   runs and editor terminals start commands through it alike, so the terminal's command and
//!   tandem's own run are held to the same policy.
//! - [`SessionSandbox`] (session.rs): a session's sandbox, made at its first command, and
//!   whether this system can sandbox at all ([`availability`], checked once per process).
//! - [`explain`] (explain.rs): what a failed command's output says the sandbox denied, for
//!   the model, which may then ask the user to run it outside.

#[cfg(target_os = "linux")]
mod calls;
mod explain;
#[cfg(target_os = "linux")]
mod filter;
pub mod folders;
#[cfg(target_os = "linux")]
mod linux;
#[cfg(any(target_os = "macos", test))]
mod macos;
mod policy;
#[cfg(target_os = "linux")]
mod processes;
#[cfg(target_os = "linux")]
mod repositories;
mod session;
#[cfg(target_os = "linux")]
mod sockets;

use std::process::ExitCode;

pub use explain::explain;
pub use policy::{Inputs, SandboxPolicy, Writes, key_sockets};
pub use session::{
    Confined, Sandbox, SessionSandbox, View, availability, checked, remedy, unconfined,
};

/// Why a command could not be put in the sandbox.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SandboxError {
    /// This system cannot sandbox commands.
    #[cfg(not(target_os = "macos"))]
    #[error("{0}")]
    Unsupported(String),
    /// A step of entering the sandbox failed.
    #[cfg(target_os = "linux")]
    #[error("{0} failed: {1}")]
    Step(&'static str, String),
    /// A step about one path failed.
    #[cfg(target_os = "linux")]
    #[error("{0} {1} failed: {2}")]
    Path(&'static str, std::path::PathBuf, String),
    /// A file could not be read or written.
    #[error("{0}: {1}")]
    Io(String, std::io::Error),
    /// The policy given is not one.
    #[error("the policy is not valid: {0}")]
    Policy(String),
}

/// Exit status when the sandbox could not be entered (as `env` and `timeout` use it for a
/// command they could not start); the command did not run.
const CANNOT_ENTER: u8 = 125;

/// Which sandbox this system has, in words; `None` where there is none.
pub fn backend() -> Option<&'static str> {
    if cfg!(target_os = "linux") {
        Some("Linux namespaces and Landlock")
    } else if cfg!(target_os = "macos") {
        Some("macOS Seatbelt (sandbox-exec)")
    } else {
        None
    }
}

/// `tandem sandbox --policy P -- command…` as tandem starts it, read straight from the
/// process's arguments: every command a session runs passes here, and the full command-line
/// parser costs more than the rest of the start. `None` for any other form (`--help`, a
/// typo), which the parser then reads and answers.
pub fn run_early() -> Option<ExitCode> {
    let mut args = std::env::args_os().skip(1);
    if args.next()? != "sandbox" || args.next()? != "--policy" {
        return None;
    }
    let policy = args.next()?.into_string().ok()?;
    if args.next()? != "--" {
        return None;
    }
    let command: Vec<std::ffi::OsString> = args.collect();
    (!command.is_empty()).then(|| run(&policy, &command))
}

/// `tandem sandbox --policy GIVEN -- COMMAND…`: reads the policy (a file, or the JSON
/// itself), enters the sandbox and becomes the command. Returns only when that failed; the
/// command never runs unconfined.
pub fn run(given: &str, command: &[std::ffi::OsString]) -> ExitCode {
    let result = read_policy(given).and_then(|policy| become_command(&policy, command));
    let e = match result {
        Ok(never) => match never {},
        Err(e) => e,
    };
    let _ = std::io::Write::write_all(
        &mut std::io::stderr(),
        format!("tandem sandbox: {e}; the command did not run\n").as_bytes(),
    );
    ExitCode::from(CANNOT_ENTER)
}

/// The policy `given` names: inline JSON, or a file of it.
fn read_policy(given: &str) -> Result<SandboxPolicy, SandboxError> {
    let text = if given.trim_start().starts_with('{') {
        given.to_string()
    } else {
        std::fs::read_to_string(given).map_err(|e| SandboxError::Io(given.to_string(), e))?
    };
    serde_json::from_str(&text).map_err(|e| SandboxError::Policy(e.to_string()))
}

/// Runs `command` in the sandbox (processes.rs); returns only when it could not start.
#[cfg(target_os = "linux")]
fn become_command(
    policy: &SandboxPolicy,
    command: &[std::ffi::OsString],
) -> Result<std::convert::Infallible, SandboxError> {
    if command.is_empty() {
        return Err(SandboxError::Policy("no command given".into()));
    }
    processes::run(policy, command)
}

/// Executes `command` under `sandbox-exec` with the policy's profile; returns only on failure.
#[cfg(target_os = "macos")]
fn become_command(
    policy: &SandboxPolicy,
    command: &[std::ffi::OsString],
) -> Result<std::convert::Infallible, SandboxError> {
    use std::os::unix::process::CommandExt;
    if command.is_empty() {
        return Err(SandboxError::Policy("no command given".into()));
    }
    let e = std::process::Command::new(macos::SANDBOX_EXEC)
        .arg("-p")
        .arg(macos::profile(policy))
        .arg("--")
        .args(command)
        .env("TMPDIR", &policy.temp)
        .exec();
    Err(SandboxError::Io(macos::SANDBOX_EXEC.into(), e))
}

/// No sandbox here: says so.
#[cfg(not(any(target_os = "linux", target_os = "macos")))]
fn become_command(
    _policy: &SandboxPolicy,
    _command: &[std::ffi::OsString],
) -> Result<std::convert::Infallible, SandboxError> {
    Err(SandboxError::Unsupported(
        "commands cannot be sandboxed on this system yet".into(),
    ))
}
