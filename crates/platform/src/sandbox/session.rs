//! A session's sandbox: its policy written to a private folder (folders.rs) at the session's
//! first command, with the temp folder its commands use; the folder is removed when the
//! session ends ([`SessionSandbox::end`]), after its commands were stopped. Whether this
//! system can sandbox at all is checked once per process, by entering a sandbox for real
//! (`tandem sandbox … -- tandem --version`, in a folder of its own, removed as the check
//! ends), since namespaces and Landlock can be switched off by the kernel, a container or a
//! security module in ways no version number tells.

use std::path::PathBuf;
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use parking_lot::Mutex;
use tokio::sync::OnceCell;

use super::folders::{self, PrivateFolder};
use super::{Inputs, SandboxPolicy, Writes, backend};

/// How long the check of whether the system can sandbox may take.
const CHECK_TIMEOUT: Duration = Duration::from_secs(10);

/// A sandbox ready for commands: its policy, in a file in a private folder (0700) that also
/// holds the commands' temp folder and the lock that says the folder is in use.
#[derive(Debug)]
pub struct Sandbox {
    policy: SandboxPolicy,
    file: PathBuf,
    program: PathBuf,
    folder: PrivateFolder,
}

impl Sandbox {
    /// Writes the policy made from `inputs`; `program` is tandem's own binary.
    fn create(inputs: &Inputs, program: PathBuf) -> std::io::Result<Sandbox> {
        let folder = PrivateFolder::create()?;
        let temp = folder.path().join("tmp");
        private_folder(&temp)?;
        // Real paths: the kernel and Seatbelt compare resolved ones (`/tmp` is a link on macOS).
        let temp = crate::canonical(&temp).unwrap_or(temp);
        let mut policy = SandboxPolicy::new(inputs, temp);
        policy.protect_nested_repositories();
        let base = crate::canonical(folder.path()).unwrap_or_else(|_| folder.path().into());
        let file = base.join("policy.json");
        // What decides the next command's confinement, when a writable folder holds it (a
        // workspace in /tmp, tandem built in the workspace, `~/.cargo` made writable): the
        // policy and tandem's own binary stay read-only, or a command could loosen the next.
        // So does the folder's lock, or a command could swap it for one no process holds and
        // have the next tandem remove the folder of a session that still runs.
        for decides in [file.clone(), program.clone(), base.join(folders::LOCK)] {
            if policy.writable.iter().any(|w| decides.starts_with(w)) {
                policy.read_only.push(decides);
            }
        }
        std::fs::write(&file, serde_json::to_vec_pretty(&policy)?)?;
        Ok(Sandbox {
            policy,
            file,
            program,
            folder,
        })
    }

    /// Removes the private folder now (the session ended, its commands are stopped): a
    /// command started after this finds no policy, and does not run.
    fn remove_folder(&self) {
        self.folder.remove();
    }

    /// The policy.
    pub fn policy(&self) -> &SandboxPolicy {
        &self.policy
    }

    /// The program and arguments that run `program args` in this sandbox.
    pub fn wrap(&self, program: String, args: Vec<String>) -> (String, Vec<String>) {
        let mut wrapped = vec![
            "sandbox".to_string(),
            "--policy".to_string(),
            self.file.display().to_string(),
            "--".to_string(),
            program,
        ];
        wrapped.extend(args);
        (self.program.display().to_string(), wrapped)
    }

    /// The process that runs `program args` in this sandbox.
    pub fn command(&self, program: String, args: Vec<String>) -> tokio::process::Command {
        let (program, args) = self.wrap(program, args);
        let mut command = tokio::process::Command::new(program);
        command.args(args);
        command
    }
}

/// Whether a session's command runs confined.
#[derive(Debug, Clone)]
pub enum Confined {
    /// In this sandbox.
    In(Arc<Sandbox>),
    /// Not: the system cannot sandbox (why), and whether this is the first time the session
    /// is told.
    Not {
        /// Why not.
        why: String,
        /// The session's first command that ran without the sandbox.
        first: bool,
    },
}

/// A session's sandbox, made at its first command.
#[derive(Debug)]
pub struct SessionSandbox {
    inputs: Inputs,
    program: PathBuf,
    ready: OnceCell<Result<Arc<Sandbox>, String>>,
    told: AtomicBool,
    /// The sandbox once made, until the session ends.
    made: Mutex<Made>,
}

/// A session's sandbox as made and ended: one lock over both, so a sandbox made as the
/// session ends is never left behind.
#[derive(Debug, Default)]
struct Made {
    sandbox: Option<Arc<Sandbox>>,
    ended: bool,
}

impl SessionSandbox {
    /// The sandbox for a session with `inputs`; `program` is tandem's own binary.
    pub fn new(inputs: Inputs, program: PathBuf) -> Self {
        Self {
            inputs,
            program,
            ready: OnceCell::new(),
            told: AtomicBool::new(false),
            made: Mutex::default(),
        }
    }

    /// The sandbox a command runs in now (made at the first call), or why there is none.
    pub async fn enter(&self) -> Confined {
        let ready = self
            .ready
            .get_or_init(|| async {
                availability().await?;
                let sandbox = Sandbox::create(&self.inputs, self.program.clone())
                    .map(Arc::new)
                    .map_err(|e| format!("cannot make the sandbox's private folder: {e}"))?;
                let mut made = self.made.lock();
                if made.ended {
                    // Made as the session ended: gone at once, so the command does not run.
                    sandbox.remove_folder();
                } else {
                    made.sandbox = Some(sandbox.clone());
                }
                Ok(sandbox)
            })
            .await;
        match ready {
            Ok(sandbox) => Confined::In(sandbox.clone()),
            Err(why) => Confined::Not {
                why: why.clone(),
                first: !self.told.swap(true, Ordering::Relaxed),
            },
        }
    }

    /// The session has ended and its commands are stopped: its private folder is removed
    /// before this resolves (and one made later is removed as it is made).
    pub async fn end(&self) {
        let sandbox = {
            let mut made = self.made.lock();
            made.ended = true;
            made.sandbox.take()
        };
        if let Some(sandbox) = sandbox {
            // A temp folder a command filled may take a while to remove.
            let removed = tokio::task::spawn_blocking(move || sandbox.remove_folder()).await;
            if let Err(e) = removed {
                tracing::warn!("removing the sandbox's private folder failed: {e}");
            }
        }
    }

    /// The note that commands run unconfined here, with its cause and fix, the first time
    /// the session is told (at its first command, or as soon as the check is done); `None`
    /// when they are confined or the session was told.
    pub fn unconfined_note(&self) -> Option<String> {
        let Some(Err(why)) = CHECKED.get() else {
            return None;
        };
        (!self.told.swap(true, Ordering::Relaxed)).then(|| unconfined(why))
    }

    /// What the model is told of the sandbox: where commands may write, the network, and
    /// how to ask to leave it; `None` when this system cannot sandbox.
    pub fn for_model(&self) -> Option<String> {
        if let Some(Err(_)) = CHECKED.get() {
            return None;
        }
        let writes = match self.inputs.writes {
            Writes::WorkspaceWrite => "the workspace folders and $TMPDIR",
            Writes::ReadOnly => "only $TMPDIR",
        };
        let network = if self.inputs.network { "on" } else { "off" };
        Some(format!(
            "Sandbox: commands may write {writes} (not .git or .tandem: run git commands that write, such as commit, outside); network {network}. If a command fails because the sandbox denied it, its result says so; then you may run it with outside_sandbox and a reason, and the user decides."
        ))
    }

    /// Whether commands run sandboxed and with which policy, for `/permissions` and
    /// `_tandem/status`; call [`availability`] first for an answer past "not checked yet".
    pub fn view(&self) -> View {
        let policy = SandboxPolicy::new(&self.inputs, PathBuf::from("(private)"));
        let (state, backend, summary) = match CHECKED.get() {
            Some(Ok(backend)) => ("on", Some(*backend), policy.summary()),
            Some(Err(why)) => (
                "unavailable",
                None,
                format!(
                    "not available here ({why}); each command is judged and asked about as without it"
                ),
            ),
            None => (
                "unchecked",
                None,
                format!("checked at the first command; then it {}", policy.summary()),
            ),
        };
        View {
            state,
            backend,
            summary,
            network: policy.network,
            writable: policy.writable,
        }
    }
}

/// The note that commands are not sandboxed, for `why`, with what to do.
pub fn unconfined(why: &str) -> String {
    format!(
        "Commands are not sandboxed here: {why}. Each command is judged and asked about as without a sandbox. To fix it: {}.",
        remedy(why)
    )
}

/// A session's sandbox as the user is shown it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct View {
    /// `on`, `unavailable`, `unchecked` (nothing has asked yet), or `off` (see [`View::off`]).
    pub state: &'static str,
    /// What enforces it, when on.
    pub backend: Option<&'static str>,
    /// One line: what commands may write and reach, or why there is no sandbox.
    pub summary: String,
    /// Whether commands may use the network.
    pub network: bool,
    /// The folders commands may write (besides their private temp folder).
    pub writable: Vec<PathBuf>,
}

impl View {
    /// No sandbox, for the reason `why`.
    pub fn off(why: &str) -> View {
        View {
            state: "off",
            backend: None,
            summary: format!("off ({why}): commands run with your own rights"),
            network: true,
            writable: Vec::new(),
        }
    }
}

/// Makes the private folder `path` (0700: what commands leave there is theirs alone).
fn private_folder(path: &std::path::Path) -> std::io::Result<()> {
    #[cfg(unix)]
    return std::os::unix::fs::DirBuilderExt::mode(&mut std::fs::DirBuilder::new(), 0o700)
        .create(path);
    #[cfg(not(unix))]
    std::fs::create_dir(path)
}

/// Whether this system can sandbox commands, once checked.
static CHECKED: OnceCell<Result<&'static str, String>> = OnceCell::const_new();

/// Wakes those waiting for the check ([`checked`]) once it is done.
static DONE: tokio::sync::Notify = tokio::sync::Notify::const_new();

/// Whether this system can sandbox commands, and with what; checked once per process.
pub async fn availability() -> Result<&'static str, String> {
    let answer = CHECKED.get_or_init(check).await.clone();
    DONE.notify_waiters();
    answer
}

/// The answer of the check, once something has asked for it ([`availability`]); waits
/// without starting it.
pub async fn checked() -> Result<&'static str, String> {
    loop {
        let done = DONE.notified();
        tokio::pin!(done);
        done.as_mut().enable();
        if let Some(answer) = CHECKED.get() {
            return answer.clone();
        }
        done.await;
    }
}

/// What to do about `why` the system cannot sandbox, for the user.
pub fn remedy(why: &str) -> &'static str {
    if why.contains("user namespace") {
        "allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1, or on Ubuntu kernel.apparmor_restrict_unprivileged_userns=0), or set [sandbox] mode = \"off\" to run commands unconfined, asked about as before"
    } else if why.contains("Landlock") {
        "boot with Landlock enabled (lsm=…,landlock; Linux 5.13 or newer), or set [sandbox] mode = \"off\" to run commands unconfined, asked about as before"
    } else {
        "run `tandem doctor` for the details; if the cause is not yours to fix, report it, or set [sandbox] mode = \"off\" to run commands unconfined, asked about as before"
    }
}

/// Enters a sandbox for real and runs tandem's `--version` in it.
async fn check() -> Result<&'static str, String> {
    let backend = backend().ok_or("commands cannot be sandboxed on this system yet")?;
    let program =
        std::env::current_exe().map_err(|e| format!("cannot find tandem's own binary: {e}"))?;
    let inputs = Inputs::bare(Vec::new(), Writes::ReadOnly);
    // Its folder goes as the check ends, however it ends (dropped, it is removed).
    let sandbox = Sandbox::create(&inputs, program.clone())
        .map_err(|e| format!("cannot make a private folder: {e}"))?;
    let mut command = sandbox.command(program.display().to_string(), vec!["--version".into()]);
    command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let output = tokio::time::timeout(CHECK_TIMEOUT, command.output()).await;
    sandbox.remove_folder();
    let output = output
        .map_err(|_| "entering a sandbox did not finish".to_string())?
        .map_err(|e| format!("cannot start tandem's sandbox: {e}"))?;
    if output.status.success() {
        return Ok(backend);
    }
    let said = String::from_utf8_lossy(&output.stderr);
    let said = said.trim().trim_start_matches("tandem sandbox: ");
    let said = said.trim_end_matches("; the command did not run");
    Err(match said.is_empty() {
        true => format!("a sandboxed command ended with {}", output.status),
        false => said.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// In a test process tandem's own binary is the test harness, which cannot enter a
    /// sandbox: the system counts as unable, as a kernel without user namespaces would.
    #[tokio::test]
    async fn without_a_sandbox_a_session_is_told_once_and_commands_run_as_before() {
        let inputs = Inputs::bare(vec![PathBuf::from("/ws")], Writes::WorkspaceWrite);
        let exe = std::env::current_exe().unwrap();
        let session = SessionSandbox::new(inputs, exe);
        let Confined::Not { why, first } = session.enter().await else {
            panic!("a test harness entered a sandbox");
        };
        assert!(first && !why.is_empty());
        assert!(matches!(
            session.enter().await,
            Confined::Not { first: false, .. }
        ));
        let view = session.view();
        assert_eq!(view.state, "unavailable");
        assert!(
            view.summary.contains("asked about as without it"),
            "{}",
            view.summary
        );
        assert!(
            session.for_model().is_none(),
            "the model is not told of a sandbox"
        );
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_command_is_wrapped_in_tandems_sandbox_subcommand() {
        let inputs = Inputs::bare(vec![PathBuf::from("/ws")], Writes::WorkspaceWrite);
        let sandbox = Sandbox::create(&inputs, PathBuf::from("/bin/tandem")).unwrap();
        let (program, args) = sandbox.wrap("sh".into(), vec!["-c".into(), "ls".into()]);
        assert_eq!(program, "/bin/tandem");
        assert_eq!(args[..2], ["sandbox", "--policy"]);
        assert_eq!(args[3..], ["--", "sh", "-c", "ls"]);
        let written: SandboxPolicy =
            serde_json::from_slice(&std::fs::read(&args[2]).unwrap()).unwrap();
        assert_eq!(&written, sandbox.policy());
        assert!(written.temp.is_dir());
        let folder = written.temp.parent().unwrap().to_path_buf();
        drop(sandbox);
        assert!(!folder.exists(), "the private folder goes with the sandbox");
    }
}
