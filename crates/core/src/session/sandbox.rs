//! A session's command sandbox, made from the user's `[sandbox]` settings and the session's
//! folders: what its commands may write, what they may not read.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::config::Config;
use crate::config::sandbox::SandboxMode;
use crate::platform::sandbox::{Inputs, SessionSandbox, Writes, key_sockets};
use crate::types::{EventSink, Severity, TurnEvent};

/// The sandbox for a session in `roots` (its folder first, then its other folders, all
/// canonical); `None` when the user turned it off.
pub(super) fn for_session(config: &Config, roots: Vec<PathBuf>) -> Option<Arc<SessionSandbox>> {
    let writes = match config.sandbox.mode {
        SandboxMode::Off => return None,
        SandboxMode::WorkspaceWrite => Writes::WorkspaceWrite,
        SandboxMode::ReadOnly => Writes::ReadOnly,
    };
    let program = match std::env::current_exe() {
        Ok(program) => program,
        Err(e) => {
            tracing::warn!("commands cannot be sandboxed: tandem cannot find its own binary: {e}");
            return None;
        }
    };
    let home = config.user_home.as_deref().map(real);
    // A folder that is the whole disk or holds the home folder is no project (as for the
    // permission policy): commands write only their temp folder there.
    let roots = roots
        .into_iter()
        .filter(|root| {
            root.parent().is_some() && !home.as_ref().is_some_and(|h| h.starts_with(root))
        })
        .collect();
    let all_real = |paths: &[PathBuf]| -> Vec<PathBuf> { paths.iter().map(|p| real(p)).collect() };
    // tandem's own files: its config folder and file (the credential file is beside it) and
    // its data (transcripts, trust answers).
    let own = [config.config_dir.clone(), config.home.clone()]
        .into_iter()
        .chain(config.config_file.clone())
        .map(|p| real(&p))
        .collect();
    let mut hidden = all_real(&config.sandbox.deny_read);
    hidden.extend(
        key_sockets(&|name| std::env::var(name).ok())
            .iter()
            .map(|p| real(p)),
    );
    let inputs = Inputs {
        roots,
        home,
        own,
        writes,
        network: config.sandbox.network,
        extra_writable: all_real(&config.sandbox.writable),
        extra_hidden: hidden,
        unix_sockets: all_real(&config.sandbox.unix_sockets),
    };
    Some(Arc::new(SessionSandbox::new(inputs, program)))
}

/// Starts learning whether the system can sandbox commands (once per process; a spawn of
/// tandem itself), when sessions are sandboxed: known before the first command. Called once
/// a session's answer has gone out, so it never competes with opening one (a long load's
/// replay).
pub(super) fn check_soon(config: &Config) {
    if config.sandbox.mode == SandboxMode::Off {
        return;
    }
    if let Ok(runtime) = tokio::runtime::Handle::try_current() {
        runtime.spawn(crate::platform::sandbox::availability());
    }
}

/// Tells the session, as soon as the system's check is done (it starts once a session's
/// answer has gone out, [`check_soon`]), when its commands will run unconfined, with why and
/// the fix: the editor shows it live, before any command runs, not only in the first
/// command's result.
pub(super) fn tell_when_unconfined(
    sandbox: Arc<SessionSandbox>,
    sink: Arc<dyn EventSink>,
    session: String,
) {
    // Where the system has no sandbox at all (Windows), that is no news to tell at every
    // session: the first command's card and `tandem doctor` say it.
    let Some(_) = crate::platform::sandbox::backend() else {
        return;
    };
    let Ok(runtime) = tokio::runtime::Handle::try_current() else {
        return;
    };
    runtime.spawn(async move {
        if crate::platform::sandbox::checked().await.is_ok() {
            return;
        }
        if let Some(text) = sandbox.unconfined_note() {
            sink.emit(
                &session,
                TurnEvent::Notice {
                    severity: Severity::Warning,
                    text,
                },
            );
        }
    });
}

/// `path` with its links resolved, as the kernel compares paths; as given when it does not
/// exist.
fn real(path: &Path) -> PathBuf {
    crate::platform::canonical(path).unwrap_or_else(|_| path.to_path_buf())
}
