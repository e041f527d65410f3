//! Where tandem's files are by default, from the environment it was given.

use std::path::{Path, PathBuf};

/// A folder named in the config file: `~/…` under the home directory, a relative path beside
/// the config file.
pub(super) fn resolve_dir(
    dir: &Path,
    config_file: Option<&Path>,
    env: &dyn Fn(&str) -> Option<String>,
) -> PathBuf {
    if let Ok(rest) = dir.strip_prefix("~") {
        return home_dir(env).join(rest);
    }
    match config_file.and_then(Path::parent) {
        Some(base) if dir.is_relative() => base.join(dir),
        _ => dir.to_path_buf(),
    }
}

/// The user's home directory (`HOME`, or `USERPROFILE` on Windows), when it is set to an
/// absolute path.
pub(super) fn user_home(env: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    env("HOME")
        .or_else(|| env("USERPROFILE"))
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
}

/// The user's home directory (`HOME`, or `USERPROFILE` as Windows sets it); `.` without
/// either.
pub(super) fn home_dir(env: &dyn Fn(&str) -> Option<String>) -> PathBuf {
    env("HOME")
        .or_else(|| env("USERPROFILE"))
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("."))
}

/// `$XDG_CONFIG_HOME/tandem/config.toml`, or `~/.config/tandem/config.toml`.
pub(super) fn default_config_path(env: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    let base = env("XDG_CONFIG_HOME")
        .filter(|v| Path::new(v).is_absolute())
        .map(PathBuf::from)
        .unwrap_or_else(|| home_dir(env).join(".config"));
    Some(base.join("tandem").join("config.toml"))
}

/// `$XDG_DATA_HOME/tandem`, or `~/.local/share/tandem`.
pub(super) fn default_home(env: &dyn Fn(&str) -> Option<String>) -> PathBuf {
    env("XDG_DATA_HOME")
        .filter(|v| Path::new(v).is_absolute())
        .map(PathBuf::from)
        .unwrap_or_else(|| home_dir(env).join(".local").join("share"))
        .join("tandem")
}
