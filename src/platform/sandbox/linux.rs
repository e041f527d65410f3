//! Linux: the sandbox is entered by the `tandem sandbox` process itself, single-threaded,
//! just before it becomes the command (`exec`). Three layers, each doing what it does best:
//!
//! 1. A new user and mount namespace (`unshare(2)`, unprivileged): credentials are covered
//!    by an empty read-only tmpfs (folders) or `/dev/null` (files and sockets), `.git/hooks`,
//!    `.git/config` and `.tandem` are bound read-only onto themselves, and the folders that
//!    hold them are pinned as mount points so they cannot be renamed away and replaced; the
//!    private temp folder is bound over `/tmp` when no workspace lives there.
//! 2. With the network off, a new network namespace: no interface but a loopback that is
//!    down, so no address (127.0.0.1 included) can be reached, and abstract Unix sockets
//!    outside (per network namespace) cannot be either.
//! 3. Landlock: read and execute anywhere, write only in the writable folders, the temp
//!    folder and terminal devices; no ptrace, `/proc/<pid>/environ` or memory of any process
//!    outside (tandem's, the editor's), no signals to them, no abstract sockets.
//!
//! Every step fails closed: if one cannot be taken, the command does not run.

use std::path::{Path, PathBuf};

use landlock::{
    ABI, Access, AccessFs, CompatLevel, Compatible, Ruleset, RulesetAttr, RulesetCreatedAttr,
    RulesetStatus, Scope, path_beneath_rules,
};
use nix::mount::{MsFlags, mount};
use nix::sched::{CloneFlags, unshare};
use nix::sys::statvfs::{FsFlags, statvfs};

use super::{Policy, SandboxError};

/// The newest Landlock ABI tandem asks for; older kernels enforce what they know.
const ABI_WANTED: ABI = ABI::V6;

/// Devices a command may open for writing: the null and terminal devices, shared memory.
const DEVICES: [&str; 8] = [
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/tty",
    "/dev/pts",
    "/dev/ptmx",
    "/dev/shm",
    "/dev/random",
];

/// Enters the sandbox `policy` describes; returns the folder the command's `TMPDIR` names.
pub fn enter(policy: &Policy) -> Result<PathBuf, SandboxError> {
    namespaces(policy.network)?;
    let step = |what: &'static str| move |e: nix::Error| SandboxError::Step(what, e.to_string());
    mount(
        None::<&str>,
        "/",
        None::<&str>,
        MsFlags::MS_REC | MsFlags::MS_PRIVATE,
        None::<&str>,
    )
    .map_err(step("making mounts private"))?;
    hide(&policy.hidden)?;
    protect(policy)?;
    let temp = private_tmp(policy)?;
    landlock(policy, &temp)?;
    Ok(temp)
}

/// A new user and mount namespace, and a network namespace when the network is off, with
/// the user mapped to themself.
fn namespaces(network: bool) -> Result<(), SandboxError> {
    let uid = nix::unistd::getuid();
    let gid = nix::unistd::getgid();
    let mut flags = CloneFlags::CLONE_NEWUSER | CloneFlags::CLONE_NEWNS;
    if !network {
        flags |= CloneFlags::CLONE_NEWNET;
    }
    unshare(flags).map_err(|e| {
        SandboxError::Unsupported(format!(
            "cannot create a user namespace ({e}); the kernel or a security policy forbids unprivileged user namespaces (kernel.unprivileged_userns_clone, kernel.apparmor_restrict_unprivileged_userns, or a container's seccomp profile)"
        ))
    })?;
    let write = |file: &str, text: String| {
        std::fs::write(file, text).map_err(|e| SandboxError::Io(file.to_string(), e))
    };
    write("/proc/self/setgroups", "deny".into())?;
    write("/proc/self/uid_map", format!("{uid} {uid} 1"))?;
    write("/proc/self/gid_map", format!("{gid} {gid} 1"))
}

/// Covers each hidden path that exists: a folder with an empty read-only tmpfs, anything
/// else with `/dev/null`. Parents come first, so what lies under a covered folder is gone.
fn hide(hidden: &[PathBuf]) -> Result<(), SandboxError> {
    let mut hidden: Vec<&PathBuf> = hidden.iter().collect();
    hidden.sort_by_key(|p| p.components().count());
    for path in hidden {
        let Ok(meta) = std::fs::metadata(path) else {
            continue;
        };
        let covered = if meta.is_dir() {
            mount(
                Some("tmpfs"),
                path,
                Some("tmpfs"),
                MsFlags::MS_RDONLY | MsFlags::MS_NOSUID | MsFlags::MS_NODEV | MsFlags::MS_NOEXEC,
                Some("size=4k,mode=0500"),
            )
        } else {
            mount(
                Some("/dev/null"),
                path,
                None::<&str>,
                MsFlags::MS_BIND,
                None::<&str>,
            )
        };
        covered.map_err(|e| SandboxError::Path("hiding", path.clone(), e.to_string()))?;
    }
    Ok(())
}

/// Makes the read-only paths read-only: a missing `.git/hooks` (in a repository) or
/// `.tandem` is made empty first, so nothing can be put there, and the folders between a
/// writable root and each of them become mount points first, which cannot be renamed or
/// removed (so `.git` cannot be moved aside and rebuilt with hooks of its own).
fn protect(policy: &Policy) -> Result<(), SandboxError> {
    let present: Vec<&PathBuf> = policy
        .read_only
        .iter()
        .filter(|p| p.exists() || make_room(p))
        .collect();
    let mut pinned: Vec<PathBuf> = Vec::new();
    for path in &present {
        if let Some(root) = policy.writable.iter().find(|r| path.starts_with(r)) {
            for folder in pins(root, path) {
                if !pinned.contains(&folder) && !present.contains(&&folder) {
                    bind(&folder, false)?;
                    pinned.push(folder);
                }
            }
        }
    }
    for path in present {
        bind(path, true)?;
    }
    Ok(())
}

/// Creates a missing protected folder where its absence would let a command create it: a
/// repository's `hooks`, a workspace's `.tandem`. Whether the path now exists.
fn make_room(path: &Path) -> bool {
    let name = path.file_name().and_then(|n| n.to_str());
    let parent_is_dir = path.parent().is_some_and(Path::is_dir);
    let wanted = match name {
        Some("hooks") => parent_is_dir,
        Some(".tandem") => parent_is_dir,
        _ => false,
    };
    wanted && std::fs::create_dir(path).is_ok()
}

/// The folders strictly between `root` and `path`, outermost first.
fn pins(root: &Path, path: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = path
        .ancestors()
        .skip(1)
        .take_while(|a| a.starts_with(root) && *a != root)
        .map(Path::to_path_buf)
        .collect();
    out.reverse();
    out
}

/// Binds `path` onto itself (a mount point that cannot be renamed away), read-only when
/// asked, keeping the flags the kernel locks for a user namespace.
fn bind(path: &Path, read_only: bool) -> Result<(), SandboxError> {
    let failed =
        |e: nix::Error| SandboxError::Path("protecting", path.to_path_buf(), e.to_string());
    mount(
        Some(path),
        path,
        None::<&str>,
        MsFlags::MS_BIND | MsFlags::MS_REC,
        None::<&str>,
    )
    .map_err(failed)?;
    if !read_only {
        return Ok(());
    }
    let mut flags = MsFlags::MS_BIND | MsFlags::MS_REMOUNT | MsFlags::MS_RDONLY;
    let locked = statvfs(path).map_err(failed)?.flags();
    for (fs, ms) in [
        (FsFlags::ST_NOSUID, MsFlags::MS_NOSUID),
        (FsFlags::ST_NODEV, MsFlags::MS_NODEV),
        (FsFlags::ST_NOEXEC, MsFlags::MS_NOEXEC),
        (FsFlags::ST_NOATIME, MsFlags::MS_NOATIME),
        (FsFlags::ST_NODIRATIME, MsFlags::MS_NODIRATIME),
        (FsFlags::ST_RELATIME, MsFlags::MS_RELATIME),
    ] {
        if locked.contains(fs) {
            flags |= ms;
        }
    }
    mount(None::<&str>, path, None::<&str>, flags, None::<&str>).map_err(failed)
}

/// The temp folder the command uses: `/tmp` itself, with the private folder bound over it,
/// unless a writable or protected path lives under `/tmp` (a workspace there must stay
/// visible); then the private folder by its own name.
fn private_tmp(policy: &Policy) -> Result<PathBuf, SandboxError> {
    let tmp = Path::new("/tmp");
    let under_tmp = policy
        .writable
        .iter()
        .chain(&policy.read_only)
        .any(|p| p.starts_with(tmp));
    if under_tmp || !tmp.is_dir() {
        return Ok(policy.temp.clone());
    }
    mount(
        Some(policy.temp.as_path()),
        tmp,
        None::<&str>,
        MsFlags::MS_BIND | MsFlags::MS_REC,
        None::<&str>,
    )
    .map_err(|e| SandboxError::Path("binding the temp folder over", tmp.into(), e.to_string()))?;
    Ok(tmp.to_path_buf())
}

/// Restricts this process and what it starts with Landlock.
fn landlock(policy: &Policy, temp: &Path) -> Result<(), SandboxError> {
    let failed = |e: landlock::RulesetError| SandboxError::Step("Landlock", e.to_string());
    let abi = ABI_WANTED;
    let writable = policy
        .writable
        .iter()
        .map(PathBuf::as_path)
        .chain([temp])
        .chain(DEVICES.iter().map(Path::new));
    let status = Ruleset::default()
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(AccessFs::from_all(abi))
        .map_err(failed)?
        .scope(Scope::from_all(abi))
        .map_err(failed)?
        .create()
        .map_err(failed)?
        .add_rules(path_beneath_rules(["/"], AccessFs::from_read(abi)))
        .map_err(failed)?
        .add_rules(path_beneath_rules(writable, AccessFs::from_all(abi)))
        .map_err(failed)?
        .restrict_self()
        .map_err(failed)?;
    if status.ruleset == RulesetStatus::NotEnforced {
        return Err(SandboxError::Unsupported(
            "Landlock is not enabled in this kernel".into(),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_folders_between_a_root_and_a_protected_path_are_pinned() {
        assert_eq!(
            pins(Path::new("/ws"), Path::new("/ws/.git/hooks")),
            [PathBuf::from("/ws/.git")]
        );
        assert!(pins(Path::new("/ws"), Path::new("/ws/.tandem")).is_empty());
        assert_eq!(
            pins(Path::new("/ws"), Path::new("/ws/a/b/.git/config")),
            [
                PathBuf::from("/ws/a"),
                PathBuf::from("/ws/a/b"),
                PathBuf::from("/ws/a/b/.git")
            ]
        );
    }
}
