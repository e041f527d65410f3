//! Stand-ins for real programs: each only logs how it was called, first on the PATH, so a
//! test can tell what a command line really ran.

use super::{Workspace, path_str};

/// Puts a logging stand-in for each of `programs` first on the PATH; returns the environment
/// an agent needs to find them.
pub(crate) fn logging_programs(ws: &Workspace, programs: &[&str]) -> Vec<(String, String)> {
    // In the project too: the sandbox's /tmp is its own, so a folder beside the project (in
    // the test's temp folder) is not there for its commands.
    let bin = ws.project().join(".bin");
    std::fs::create_dir_all(&bin).unwrap();
    // In the project: the commands run in the sandbox, which writes nowhere else.
    let log = ws.project().join(".ran.log");
    for program in programs {
        let script = bin.join(program);
        std::fs::write(
            &script,
            format!("#!/bin/sh\necho \"{program} $*\" >> '{}'\n", log.display()),
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let path = format!("{}:{}", path_str(&bin), std::env::var("PATH").unwrap());
    vec![("PATH".into(), path)]
}

/// Every call of a stand-in so far, one line each: the program and its arguments.
pub(crate) fn ran(ws: &Workspace) -> String {
    std::fs::read_to_string(ws.project().join(".ran.log")).unwrap_or_default()
}
