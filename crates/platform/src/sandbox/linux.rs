//! Linux: the sandbox is entered in two steps by the sandbox's own processes (processes.rs),
//! single-threaded, before the command's program starts (`exec`). Four layers, each doing
//! what it does best:
//!
//! 1. A new user, mount and PID namespace (`unshare(2)`, unprivileged; [`outer`]). The
//!    folders between a writable root and each protected or hidden path in it become mount
//!    points, which cannot be renamed or removed (so `.git` cannot be moved aside and
//!    rebuilt, nor a secret's folder moved out from under its cover); credentials are covered
//!    by an empty read-only tmpfs (folders) or `/dev/null` (files and sockets); `.git`,
//!    `.tandem` and the like are bound read-only onto themselves; `/dev/pts` becomes a new
//!    instance (no other terminal can be read or typed into) and `/dev/shm` a private tmpfs;
//!    the private temp folder is bound over `/tmp`, with the workspaces that live under
//!    `/tmp` bound back into it (and tandem's own binary, read-only, when it lives there), so
//!    no socket another program left in `/tmp` (tmux, screen, an editor's) can be reached.
//!    Then, in the first process of the new PID namespace ([`inner`]), a `/proc` of its own
//!    and a second user namespace inside the first: every mount made so far becomes locked,
//!    so not even a root user's command can clear a read-only flag or clone a folder
//!    without its covers.
//! 2. With the network off, a new network namespace: no interface but a loopback that is
//!    down, so no address (127.0.0.1 included) can be reached, and abstract Unix sockets
//!    outside (per network namespace) cannot be either.
//! 3. Landlock: read and execute anywhere, write only in the writable folders, the temp
//!    folder and terminal devices; no mounts; no ptrace, `/proc/<pid>/environ` or memory of
//!    any process outside (tandem's, the editor's), no signals to them, no abstract sockets.
//! 4. A seccomp filter (sockets.rs): every `connect` is decided outside the command, so only
//!    the workspace's own Unix sockets and those the user allowed can be reached.
//!
//! Descriptors other than stdin, stdout and stderr are closed at `exec`. Every step fails
//! closed: if one cannot be taken, the command does not run.

use std::path::{Path, PathBuf};

use landlock::{
    ABI, Access, AccessFs, CompatLevel, Compatible, Ruleset, RulesetAttr, RulesetCreatedAttr,
    RulesetStatus, Scope, path_beneath_rules,
};
use nix::fcntl::{OFlag, open, openat};
use nix::mount::{MsFlags, mount};
use nix::sched::{CloneFlags, unshare};
use nix::sys::stat::{Mode, mkdirat};
use nix::sys::statvfs::{FsFlags, statvfs};
use nix::unistd::{Gid, Uid, UnlinkatFlags, unlinkat};
use std::os::fd::{AsRawFd, OwnedFd};

use super::{SandboxError, SandboxPolicy};

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

/// What the first step of entering leaves for the second: the folder the command's
/// `TMPDIR` names, and the user and group to map again in the namespace that locks the mounts.
pub(crate) struct Outer {
    /// The command's temp folder, as the command sees it.
    pub(crate) temp: PathBuf,
    uid: Uid,
    gid: Gid,
}

/// The first step, taken by the `tandem sandbox` process itself: new user, mount and PID
/// namespaces (and a network namespace when the network is off), and every mount of the
/// command's view but `/proc`. The next process it starts is the first of the new PID
/// namespace, and takes the second step ([`inner`]).
pub(crate) fn outer(policy: &SandboxPolicy) -> Result<Outer, SandboxError> {
    let (uid, gid) = (nix::unistd::getuid(), nix::unistd::getgid());
    let mut flags = CloneFlags::CLONE_NEWUSER | CloneFlags::CLONE_NEWNS | CloneFlags::CLONE_NEWPID;
    if !policy.network {
        flags |= CloneFlags::CLONE_NEWNET;
    }
    user_namespace(flags, uid, gid)?;
    let step = |what: &'static str| move |e: nix::Error| SandboxError::Step(what, e.to_string());
    mount(
        None::<&str>,
        "/",
        None::<&str>,
        MsFlags::MS_REC | MsFlags::MS_PRIVATE,
        None::<&str>,
    )
    .map_err(step("making mounts private"))?;
    let read_only: Vec<&PathBuf> = policy
        .read_only
        .iter()
        .filter(|p| p.exists() || make_room(p))
        .collect();
    pin(policy, read_only.iter().copied().chain(&policy.hidden))?;
    hide(&policy.hidden)?;
    for path in read_only {
        bind(path, true)?;
    }
    devices()?;
    let temp = private_tmp(policy)?;
    Ok(Outer { temp, uid, gid })
}

/// What the second step achieved, for deciding the command's `connect` calls.
pub(crate) struct Inner {
    /// Whether Landlock keeps abstract sockets to the sandbox (its scopes are enforced).
    pub(crate) scoped: bool,
    /// Whether `/proc` is this namespace's own, so `/proc/<pid>` names the command's processes.
    pub(crate) own_proc: bool,
}

/// The second step, taken by the first process of the new PID namespace before it starts the
/// command: a `/proc` of this namespace (the command sees only its own processes, and
/// `/proc/self` and `$$` agree), a user namespace inside the first that locks every mount,
/// Landlock, descriptors closed at `exec`, a session keyring of its own.
pub(crate) fn inner(policy: &SandboxPolicy, outer: &Outer) -> Result<Inner, SandboxError> {
    let own_proc = own_proc();
    // Mounts made in a namespace are the namespace's to change; from a namespace inside it,
    // they are locked.
    user_namespace(CloneFlags::CLONE_NEWUSER, outer.uid, outer.gid)?;
    let scoped = landlock(policy, &outer.temp)?;
    close_other_descriptors();
    fresh_session_keyring();
    Ok(Inner { scoped, own_proc })
}

/// Mounts a `/proc` for this process's PID namespace over the one it inherited. Where the
/// kernel refuses (a container that masks parts of `/proc`), the inherited one stays: it
/// shows other processes' numbers, but Landlock keeps the command from inspecting or
/// signalling any of them.
fn own_proc() -> bool {
    let flags = MsFlags::MS_NOSUID | MsFlags::MS_NODEV | MsFlags::MS_NOEXEC;
    mount(Some("proc"), "/proc", Some("proc"), flags, None::<&str>).is_ok()
}

/// Enters the namespaces `flags` name (a user namespace among them), with the user mapped to
/// themself.
fn user_namespace(flags: CloneFlags, uid: Uid, gid: Gid) -> Result<(), SandboxError> {
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

/// Makes the folders between a writable root and each of `paths` in it mount points (bound
/// onto themselves), which cannot be renamed or removed: a protected path cannot be moved
/// aside and rebuilt, nor a hidden one carried out from under its cover.
fn pin<'a>(
    policy: &SandboxPolicy,
    paths: impl Iterator<Item = &'a PathBuf>,
) -> Result<(), SandboxError> {
    let mut wanted: Vec<PathBuf> = Vec::new();
    for path in paths.filter(|p| p.exists()) {
        for root in policy.writable.iter().filter(|r| path.starts_with(r)) {
            wanted.extend(pins(root, path));
        }
    }
    // A writable root inside another is pinned itself too, or a command could swap it for a
    // link and the next command's Landlock rule would follow it anywhere.
    for inner in policy.writable.iter().filter(|r| r.exists()) {
        for outer in policy
            .writable
            .iter()
            .filter(|o| *o != inner && inner.starts_with(o))
        {
            wanted.extend(pins(outer, inner));
            wanted.push(inner.clone());
        }
    }
    let mut pinned: Vec<PathBuf> = Vec::new();
    for folder in wanted {
        if !pinned.contains(&folder) {
            bind(&folder, false)?;
            pinned.push(folder);
        }
    }
    Ok(())
}

/// Creates a missing `.tandem` (empty; git does not show an empty folder), so a command
/// cannot create one with a project configuration in it. Whether the path now exists; never
/// through a symbolic link, which could point outside the workspace.
fn make_room(path: &Path) -> bool {
    let is_tandem = path.file_name().is_some_and(|n| n == ".tandem");
    let parent_is_dir = path
        .parent()
        .and_then(|p| std::fs::symlink_metadata(p).ok())
        .is_some_and(|m| m.is_dir());
    is_tandem
        && parent_is_dir
        && std::fs::symlink_metadata(path).is_err()
        && std::fs::create_dir(path).is_ok()
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
    let flags = MsFlags::MS_BIND | MsFlags::MS_REMOUNT | MsFlags::MS_RDONLY;
    let locked = statvfs(path).map_err(failed)?.flags();
    mount(
        None::<&str>,
        path,
        None::<&str>,
        flags | kept_flags(locked),
        None::<&str>,
    )
    .map_err(failed)
}

/// The mount flags a read-only remount must keep: those the kernel locks for a user
/// namespace, read from the mount's `statvfs` flags.
fn kept_flags(locked: FsFlags) -> MsFlags {
    // The kernel's ST_RELATIME (linux/statfs.h); musl's headers leave it out, so nix does too.
    const ST_RELATIME: FsFlags = FsFlags::from_bits_retain(0x1000);
    let mut flags = MsFlags::empty();
    for (fs, ms) in [
        (FsFlags::ST_NOSUID, MsFlags::MS_NOSUID),
        (FsFlags::ST_NODEV, MsFlags::MS_NODEV),
        (FsFlags::ST_NOEXEC, MsFlags::MS_NOEXEC),
        (FsFlags::ST_NOATIME, MsFlags::MS_NOATIME),
        (FsFlags::ST_NODIRATIME, MsFlags::MS_NODIRATIME),
        (ST_RELATIME, MsFlags::MS_RELATIME),
    ] {
        if locked.contains(fs) {
            flags |= ms;
        }
    }
    flags
}

/// The terminals and shared memory of the command's own: a new `/dev/pts` instance (other
/// terminals' keystrokes cannot be read nor typed into; the command's own terminal stays
/// open, and `/dev/tty` reaches it) or, where the kernel refuses one, an empty tmpfs; and a
/// private `/dev/shm`.
fn devices() -> Result<(), SandboxError> {
    let failed = |what: &'static str, path: &'static str| {
        move |e: nix::Error| SandboxError::Path(what, path.into(), e.to_string())
    };
    let quiet = MsFlags::MS_NOSUID | MsFlags::MS_NOEXEC;
    let fresh = mount(
        Some("devpts"),
        "/dev/pts",
        Some("devpts"),
        quiet,
        Some("newinstance,ptmxmode=0666,mode=0620"),
    );
    match fresh {
        Ok(()) => mount(
            Some("/dev/pts/ptmx"),
            "/dev/ptmx",
            None::<&str>,
            MsFlags::MS_BIND,
            None::<&str>,
        )
        .map_err(failed(
            "binding the new terminals' multiplexer over",
            "/dev/ptmx",
        ))?,
        Err(_) => mount(
            Some("tmpfs"),
            "/dev/pts",
            Some("tmpfs"),
            quiet | MsFlags::MS_RDONLY,
            Some("size=4k,mode=0555"),
        )
        .map_err(failed("covering", "/dev/pts"))?,
    }
    if Path::new("/dev/shm").is_dir() {
        mount(
            Some("tmpfs"),
            "/dev/shm",
            Some("tmpfs"),
            quiet | MsFlags::MS_NODEV,
            Some("mode=1777"),
        )
        .map_err(failed("a private", "/dev/shm"))?;
    }
    Ok(())
}

/// The temp folder the command uses: `/tmp` itself, with the private folder bound over it and
/// the writable folders that live under `/tmp` bound back into it where they were; the
/// private folder by its own name when `/tmp` itself is writable (a session opened there).
fn private_tmp(policy: &SandboxPolicy) -> Result<PathBuf, SandboxError> {
    let tmp = Path::new("/tmp");
    let failed = |what: &'static str, path: &Path| {
        let path = path.to_path_buf();
        move |e: nix::Error| SandboxError::Path(what, path, e.to_string())
    };
    if policy.writable.iter().any(|w| w == tmp) || !tmp.is_dir() {
        return Ok(policy.temp.clone());
    }
    for root in &policy.writable {
        let Ok(inside) = root.strip_prefix(tmp) else {
            continue;
        };
        if root.starts_with(&policy.temp) || !root.exists() {
            continue;
        }
        // The temp folder is the commands' own: an earlier one may have left a link where
        // this folder goes. Made and opened without following any, and mounted on by the
        // descriptor, so what is mounted on is the folder made here.
        let place = folder_in(&policy.temp, inside).map_err(failed("making room for", root))?;
        let target = format!("/proc/self/fd/{}", place.as_raw_fd());
        let rec = MsFlags::MS_BIND | MsFlags::MS_REC;
        mount(
            Some(root.as_path()),
            target.as_str(),
            None::<&str>,
            rec,
            None::<&str>,
        )
        .map_err(failed("binding back", root))?;
    }
    if let Some(binary) = own_binary(policy) {
        bind_back_binary(policy, &binary)?;
    }
    mount(
        Some(policy.temp.as_path()),
        tmp,
        None::<&str>,
        MsFlags::MS_BIND | MsFlags::MS_REC,
        None::<&str>,
    )
    .map_err(failed("binding the temp folder over", tmp))?;
    Ok(tmp.to_path_buf())
}

/// tandem's own binary, when it lives under `/tmp` outside every writable folder (a clone
/// built there): the private folder over `/tmp` would hide it, and a command that runs
/// tandem (its self-check among them) would find nothing.
fn own_binary(policy: &SandboxPolicy) -> Option<PathBuf> {
    let binary = std::fs::read_link("/proc/self/exe").ok()?;
    let outside = !policy.writable.iter().any(|w| binary.starts_with(w));
    (binary.starts_with("/tmp") && outside && binary.is_file()).then_some(binary)
}

/// Binds `binary` back, read-only, where it was under the private `/tmp`: a read-only clone
/// of its mount (made read-only before it is attached anywhere), attached onto a file made
/// here, in a folder opened without following links (what an earlier command left in the way
/// is removed first), by that file's descriptor: no link a command plants can move it.
fn bind_back_binary(policy: &SandboxPolicy, binary: &Path) -> Result<(), SandboxError> {
    let failed = |e: nix::Error| {
        SandboxError::Path(
            "binding back tandem's binary",
            binary.to_path_buf(),
            e.to_string(),
        )
    };
    let inside = binary
        .strip_prefix("/tmp")
        .map_err(|_| failed(nix::Error::EINVAL))?;
    let (Some(parent), Some(name)) = (inside.parent(), inside.file_name()) else {
        return Err(failed(nix::Error::EINVAL));
    };
    let folder = folder_in(&policy.temp, parent).map_err(failed)?;
    match unlinkat(&folder, name, UnlinkatFlags::NoRemoveDir) {
        Ok(()) | Err(nix::Error::ENOENT) => {}
        Err(nix::Error::EISDIR) => {
            unlinkat(&folder, name, UnlinkatFlags::RemoveDir).map_err(failed)?
        }
        Err(e) => return Err(failed(e)),
    }
    let create = OFlag::O_CREAT | OFlag::O_EXCL | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
    drop(
        openat(
            &folder,
            name,
            create | OFlag::O_WRONLY,
            Mode::from_bits_truncate(0o555),
        )
        .map_err(failed)?,
    );
    let place = openat(
        &folder,
        name,
        OFlag::O_PATH | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC,
        Mode::empty(),
    )
    .map_err(failed)?;
    let clone = read_only_clone(binary).map_err(failed)?;
    attach(&clone, &place).map_err(failed)
}

/// `open_tree(OPEN_TREE_CLONE)` of `path` with `mount_setattr(MOUNT_ATTR_RDONLY)`: a
/// detached read-only bind mount of it.
#[allow(unsafe_code)]
fn read_only_clone(path: &Path) -> Result<OwnedFd, nix::Error> {
    use std::os::fd::FromRawFd;
    use std::os::unix::ffi::OsStrExt;
    const OPEN_TREE_CLONE: libc::c_uint = 1;
    const MOUNT_ATTR_RDONLY: u64 = 1;
    let name =
        std::ffi::CString::new(path.as_os_str().as_bytes()).map_err(|_| nix::Error::EINVAL)?;
    // SAFETY: open_tree reads the NUL-terminated `name` and returns a new descriptor or -1.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_open_tree,
            libc::AT_FDCWD,
            name.as_ptr(),
            OPEN_TREE_CLONE | libc::O_CLOEXEC as libc::c_uint,
        )
    };
    if fd < 0 {
        return Err(nix::Error::last());
    }
    // SAFETY: a non-negative result is a new descriptor, ours to own.
    let tree = unsafe { OwnedFd::from_raw_fd(fd as libc::c_int) };
    // struct mount_attr (linux/mount.h): attr_set, attr_clr, propagation, userns_fd.
    let attr: [u64; 4] = [MOUNT_ATTR_RDONLY, 0, 0, 0];
    // SAFETY: mount_setattr reads `attr`, whose size is passed, and the empty path.
    let set = unsafe {
        libc::syscall(
            libc::SYS_mount_setattr,
            tree.as_raw_fd(),
            c"".as_ptr(),
            libc::AT_EMPTY_PATH,
            attr.as_ptr(),
            std::mem::size_of_val(&attr),
        )
    };
    if set != 0 {
        return Err(nix::Error::last());
    }
    Ok(tree)
}

/// `move_mount` of the detached mount `tree` onto what `place` names.
#[allow(unsafe_code)]
fn attach(tree: &OwnedFd, place: &OwnedFd) -> Result<(), nix::Error> {
    const MOVE_MOUNT_F_EMPTY_PATH: libc::c_uint = 0x04;
    const MOVE_MOUNT_T_EMPTY_PATH: libc::c_uint = 0x40;
    // SAFETY: move_mount takes two descriptors, two empty paths and flags.
    let moved = unsafe {
        libc::syscall(
            libc::SYS_move_mount,
            tree.as_raw_fd(),
            c"".as_ptr(),
            place.as_raw_fd(),
            c"".as_ptr(),
            MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH,
        )
    };
    if moved != 0 {
        return Err(nix::Error::last());
    }
    Ok(())
}

/// The folder `inside` under `base` (the commands' temp folder), made where missing, opened
/// component by component without following a symbolic link: a link or file an earlier
/// command left in its place is removed first (it is in the commands' own folder), and one
/// that comes back between the two steps fails the step.
fn folder_in(base: &Path, inside: &Path) -> Result<OwnedFd, nix::Error> {
    let walk = OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC | OFlag::O_PATH;
    let mut folder = open(base, walk, Mode::empty())?;
    for part in inside.components() {
        let name = part.as_os_str();
        let next = match openat(&folder, name, walk, Mode::empty()) {
            Ok(next) => next,
            Err(nix::Error::ENOENT) => {
                mkdirat(&folder, name, Mode::from_bits_truncate(0o755))?;
                openat(&folder, name, walk, Mode::empty())?
            }
            Err(nix::Error::ENOTDIR | nix::Error::ELOOP) => {
                unlinkat(&folder, name, UnlinkatFlags::NoRemoveDir)?;
                mkdirat(&folder, name, Mode::from_bits_truncate(0o755))?;
                openat(&folder, name, walk, Mode::empty())?
            }
            Err(e) => return Err(e),
        };
        folder = next;
    }
    Ok(folder)
}

/// `keyctl(KEYCTL_JOIN_SESSION_KEYRING)` with no name: a new, empty session keyring, so the
/// command cannot read, plant or remove keys in the one it inherited (Kerberos caches and the
/// like).
const KEYCTL_JOIN_SESSION_KEYRING: libc::c_int = 1;

/// Gives the command a session keyring of its own.
#[allow(unsafe_code)]
fn fresh_session_keyring() {
    // SAFETY: keyctl with KEYCTL_JOIN_SESSION_KEYRING and a null name reads no memory of
    // ours. Where keys are not built in or a container's filter refuses the call, the
    // command cannot reach the keyring either, so a failure changes nothing.
    let _ = unsafe {
        libc::syscall(
            libc::SYS_keyctl,
            KEYCTL_JOIN_SESSION_KEYRING,
            std::ptr::null::<libc::c_char>(),
        )
    };
}

/// Marks every descriptor past stderr close-on-exec: nothing an editor or tandem left open
/// (a file outside the workspace, a socket) reaches the command.
#[allow(unsafe_code)]
fn close_other_descriptors() {
    // SAFETY: close_range takes three integers and touches no memory; with CLOEXEC it only
    // sets a flag on descriptors this single-threaded process is about to exec past. On a
    // kernel without it (before 5.11) the call fails and nothing changes.
    let _ = unsafe {
        libc::syscall(
            libc::SYS_close_range,
            3 as libc::c_uint,
            libc::c_uint::MAX,
            libc::CLOSE_RANGE_CLOEXEC,
        )
    };
}

/// Restricts this process and what it starts with Landlock; whether every restriction asked
/// for is enforced (an older kernel enforces what it knows).
fn landlock(policy: &SandboxPolicy, temp: &Path) -> Result<bool, SandboxError> {
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
    Ok(status.ruleset == RulesetStatus::FullyEnforced)
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
