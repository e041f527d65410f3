//! The Windows build driven from here, under wine: set `TANDEM_TEST_WINE_EXE` to a
//! `tandem.exe` (tests/windows/run.sh builds one) and the driver starts it through `wine`,
//! tells it paths as Windows spells them (`Z:\tmp\...`, wine's drive for `/`), and the fake
//! editor reads, writes and starts terminals at the host paths those name.

use std::path::{Path, PathBuf};

/// The Windows binary under test, when there is one.
pub(crate) fn exe() -> Option<PathBuf> {
    std::env::var_os("TANDEM_TEST_WINE_EXE").map(PathBuf::from)
}

/// Whether the agent under test is the Windows build.
pub(crate) fn active() -> bool {
    exe().is_some()
}

/// The variables wine itself needs, passed through to it (the driver otherwise starts the
/// agent with exactly the variables a test names).
pub(crate) const PASSED: &[&str] = &["WINEPREFIX", "WINEDEBUG", "WINELOADER", "WINEARCH"];

/// `p` as the agent is told it: itself, or `Z:\...` for the Windows build.
pub(crate) fn agent_path(p: &Path) -> String {
    let plain = p.to_string_lossy().into_owned();
    if active() && plain.starts_with('/') {
        format!("Z:{}", plain.replace('/', "\\"))
    } else {
        plain
    }
}

/// A path the agent named, on this machine: `Z:\tmp\x` is `/tmp/x`.
pub(crate) fn host_path(named: &str) -> PathBuf {
    match named
        .strip_prefix("Z:")
        .or_else(|| named.strip_prefix("z:"))
    {
        Some(rest) if active() => PathBuf::from(rest.replace('\\', "/")),
        _ => PathBuf::from(named),
    }
}
