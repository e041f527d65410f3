//! `tandem doctor`'s sandbox line: whether commands run in the operating system's sandbox
//! here, with what, and what to do when they cannot.

use super::{Check, bad, ok};
use crate::config::Config;
use crate::config::sandbox::SandboxMode;

/// Whether commands run sandboxed: checked for real, by entering a sandbox.
pub(super) async fn check(config: &Config) -> Check {
    let settings = &config.sandbox;
    if settings.mode == SandboxMode::Off {
        return ok(
            "commands are not sandboxed: [sandbox] mode = \"off\" (or TANDEM_SANDBOX=off); each command is judged and asked about",
        );
    }
    let network = if settings.network { "on" } else { "off" };
    match crate::platform::sandbox::availability().await {
        Ok(backend) => ok(format!(
            "commands run in a sandbox ({backend}): {}, network {network}; keys and tandem's own files hidden (off in full-access mode)",
            match settings.mode {
                SandboxMode::ReadOnly => "they write only a private temp folder",
                _ => "they write only the workspace and a private temp folder",
            }
        )),
        Err(why) if crate::platform::sandbox::backend().is_none() => ok(format!(
            "commands are not sandboxed on this system ({why}); each command is judged and asked about"
        )),
        Err(why) => {
            let fix = crate::platform::sandbox::remedy(&why);
            bad(format!("commands cannot be sandboxed here: {why}"), fix)
        }
    }
}
