//! The `[sandbox]` table: whether and how commands run in the operating system's sandbox
//! (crates/platform/src/sandbox). Only the user's own config file and `TANDEM_SANDBOX` set it; a
//! project's `.tandem/config.toml` cannot, so a cloned repository cannot loosen it.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::ConfigError;

/// How much sandboxed commands may write (`[sandbox] mode`, `TANDEM_SANDBOX`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SandboxMode {
    /// The workspace folders and a private temp folder (the default).
    #[default]
    WorkspaceWrite,
    /// Only a private temp folder.
    ReadOnly,
    /// No sandbox: commands run with the user's own rights (as in `full-access` mode).
    Off,
}

impl SandboxMode {
    fn parse(text: &str) -> Result<Self, ConfigError> {
        match text {
            "workspace-write" => Ok(SandboxMode::WorkspaceWrite),
            "read-only" => Ok(SandboxMode::ReadOnly),
            "off" => Ok(SandboxMode::Off),
            other => Err(ConfigError::Invalid(format!(
                "sandbox mode `{other}` is not one of workspace-write, read-only, off"
            ))),
        }
    }
}

/// The sandbox as the user configured it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SandboxSettings {
    /// How much commands may write.
    pub mode: SandboxMode,
    /// Whether commands may use the network (`network = true`; off by default).
    pub network: bool,
    /// More folders commands may write (`writable = [...]`), e.g. `~/.cargo/registry`.
    pub writable: Vec<PathBuf>,
    /// More paths commands may not read at all (`deny_read = [...]`).
    pub deny_read: Vec<PathBuf>,
    /// Unix sockets outside the workspace commands may connect to (`unix_sockets = [...]`,
    /// files or folders), e.g. `~/.docker/run/docker.sock`; none by default.
    pub unix_sockets: Vec<PathBuf>,
}

/// The `[sandbox]` table as written.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct FileSandbox {
    mode: Option<String>,
    network: Option<bool>,
    #[serde(default)]
    writable: Vec<PathBuf>,
    #[serde(default)]
    deny_read: Vec<PathBuf>,
    #[serde(default)]
    unix_sockets: Vec<PathBuf>,
}

impl FileSandbox {
    /// The settings: `TANDEM_SANDBOX` (a mode) over the file's; `~/` and paths relative to the
    /// config file resolved.
    pub(super) fn resolve(
        &self,
        from_env: Option<String>,
        resolve_dir: &dyn Fn(&Path) -> PathBuf,
    ) -> Result<SandboxSettings, ConfigError> {
        let mode = match from_env.or_else(|| self.mode.clone()) {
            Some(text) => SandboxMode::parse(text.trim())?,
            None => SandboxMode::default(),
        };
        let absolute =
            |paths: &[PathBuf]| -> Vec<PathBuf> { paths.iter().map(|p| resolve_dir(p)).collect() };
        Ok(SandboxSettings {
            mode,
            network: self.network.unwrap_or(false),
            writable: absolute(&self.writable),
            deny_read: absolute(&self.deny_read),
            unix_sockets: absolute(&self.unix_sockets),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolve(text: &str, env: Option<&str>) -> Result<SandboxSettings, ConfigError> {
        let file: FileSandbox = toml::from_str(text).unwrap();
        file.resolve(
            env.map(str::to_string),
            &|p: &Path| match p.strip_prefix("~") {
                Ok(rest) => Path::new("/home/u").join(rest),
                Err(_) => p.to_path_buf(),
            },
        )
    }

    #[test]
    fn the_default_writes_the_workspace_with_the_network_off() {
        let s = resolve("", None).unwrap();
        assert_eq!(s.mode, SandboxMode::WorkspaceWrite);
        assert!(!s.network);
    }

    #[test]
    fn the_table_and_the_environment() {
        let s = resolve(
            "mode = \"read-only\"\nnetwork = true\nwritable = [\"~/.cargo/registry\"]\ndeny_read = [\"/srv/keys\"]\nunix_sockets = [\"~/.docker/run/docker.sock\"]",
            None,
        )
        .unwrap();
        assert_eq!(s.mode, SandboxMode::ReadOnly);
        assert!(s.network);
        assert_eq!(s.writable, [PathBuf::from("/home/u/.cargo/registry")]);
        assert_eq!(s.deny_read, [PathBuf::from("/srv/keys")]);
        assert_eq!(
            s.unix_sockets,
            [PathBuf::from("/home/u/.docker/run/docker.sock")]
        );
        let off = resolve("mode = \"read-only\"", Some("off")).unwrap();
        assert_eq!(off.mode, SandboxMode::Off);
        assert!(resolve("mode = \"loose\"", None).is_err());
        assert!(toml::from_str::<FileSandbox>("netwrok = true").is_err());
    }
}
