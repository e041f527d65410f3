//! Linux: no git repository can be made inside the workspace by a sandboxed command.
//!
//! A `.git` folder (or a `.git` file naming one) anywhere in the workspace makes its folder
//! a repository whose config runs programs (`core.fsmonitor`, hooks, filters) for the next
//! git that looks there: an editor's git integration, the user's shell, a command outside
//! the sandbox. The workspace's own `.git` is read-only in the sandbox, and so is every
//! nested one that exists when the session's sandbox is made (policy.rs). A new one cannot
//! be made: the filter (filter.rs) hands every call that gives a file a name to pid 1, which
//! reads the call's paths once, opens the folder the name goes in, and, unless the name is
//! `.git` in a workspace folder, makes the call itself through that folder's descriptor —
//! so what was judged is what is done, whatever the command changes in between. A folder
//! moved in from outside the workspace (another writable folder) fails with `EXDEV`, which
//! makes `mv` copy it name by name, each name judged. Elsewhere (the private temp folder,
//! `[sandbox] writable` extras such as `~/.cargo`) repositories are made as usual.

use std::ffi::{CString, OsStr, OsString};
use std::io::Write;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};

use super::SandboxPolicy;
use super::calls::{
    CallEnd, as_theirs, descriptor_of, last_errno, process_of, read_memory, respond,
    send_descriptor, shares_our_mounts,
};
use super::linux::Inner;

/// The workspace folders no repository may be made in, as the command sees them.
#[derive(Debug)]
pub(crate) struct Workspace {
    roots: Vec<PathBuf>,
}

impl Workspace {
    /// The folders of `policy` where no repository may be made; empty (nothing handed over)
    /// where the sandbox writes none, or where `/proc` is not the namespace's own and a
    /// command's working folder could not be found.
    pub(crate) fn new(policy: &SandboxPolicy, inner: &Inner) -> Self {
        let roots = match inner.own_proc {
            true => policy.no_repositories.clone(),
            false => Vec::new(),
        };
        Workspace { roots }
    }

    /// Whether calls that name files are handed over at all.
    pub(crate) fn guarded(&self) -> bool {
        !self.roots.is_empty()
    }

    /// Whether `folder` (a real path) is in the workspace.
    fn holds(&self, folder: &Path) -> bool {
        self.roots.iter().any(|r| folder.starts_with(r))
    }
}

/// The name git looks for.
const GIT: &str = ".git";

/// `AT_FDCWD` as the low word of a call's argument.
const AT_FDCWD: i32 = libc::AT_FDCWD;

/// A place a call names: the folder it is in (opened) and the last component, when there is
/// one (`a/..` and `/` have none).
struct Place {
    folder: OwnedFd,
    name: Option<OsString>,
    /// Whether the path ended in `/` (kept, so `open("x/", O_CREAT)` fails as the kernel says).
    slash: bool,
}

/// What a call that names a file is, read from its arguments.
enum Naming {
    /// `mkdirat(dir, path, mode)`.
    Folder { at: (i32, u64), mode: u32 },
    /// `mknodat(dir, path, mode, dev)`.
    Node { at: (i32, u64), mode: u32, dev: u64 },
    /// `openat(dir, path, flags, mode)` with `O_CREAT`.
    Open {
        at: (i32, u64),
        flags: i32,
        mode: u32,
    },
    /// `renameat2(old dir, old, new dir, new, flags)`.
    Rename {
        from: (i32, u64),
        to: (i32, u64),
        flags: u32,
    },
    /// `linkat(old dir, old, new dir, new, flags)`.
    Link {
        from: (i32, u64),
        to: (i32, u64),
        flags: i32,
    },
    /// `symlinkat(target, new dir, new)`.
    Symlink { target: u64, to: (i32, u64) },
}

/// The call's arguments as a [`Naming`]; `None` for a call this module does not take.
fn naming(call: &libc::seccomp_notif) -> Option<Naming> {
    let a = call.data.args;
    let dir = |i: usize| a[i] as i32;
    let nr = i64::from(call.data.nr);
    let cwd = AT_FDCWD;
    Some(match nr {
        n if n == libc::SYS_mkdirat => Naming::Folder {
            at: (dir(0), a[1]),
            mode: a[2] as u32,
        },
        n if n == libc::SYS_mknodat => Naming::Node {
            at: (dir(0), a[1]),
            mode: a[2] as u32,
            dev: a[3],
        },
        n if n == libc::SYS_openat => Naming::Open {
            at: (dir(0), a[1]),
            flags: a[2] as i32,
            mode: a[3] as u32,
        },
        n if n == libc::SYS_renameat2 => Naming::Rename {
            from: (dir(0), a[1]),
            to: (dir(2), a[3]),
            flags: a[4] as u32,
        },
        n if n == libc::SYS_linkat => Naming::Link {
            from: (dir(0), a[1]),
            to: (dir(2), a[3]),
            flags: a[4] as i32,
        },
        n if n == libc::SYS_symlinkat => Naming::Symlink {
            target: a[0],
            to: (dir(1), a[2]),
        },
        #[cfg(target_arch = "x86_64")]
        n if n == libc::SYS_mkdir => Naming::Folder {
            at: (cwd, a[0]),
            mode: a[1] as u32,
        },
        #[cfg(target_arch = "x86_64")]
        n if n == libc::SYS_mknod => Naming::Node {
            at: (cwd, a[0]),
            mode: a[1] as u32,
            dev: a[2],
        },
        #[cfg(target_arch = "x86_64")]
        n if n == libc::SYS_open => Naming::Open {
            at: (cwd, a[0]),
            flags: a[1] as i32,
            mode: a[2] as u32,
        },
        #[cfg(target_arch = "x86_64")]
        n if n == libc::SYS_creat => Naming::Open {
            at: (cwd, a[0]),
            flags: libc::O_CREAT | libc::O_WRONLY | libc::O_TRUNC,
            mode: a[1] as u32,
        },
        #[cfg(target_arch = "x86_64")]
        n if n == libc::SYS_rename => Naming::Rename {
            from: (cwd, a[0]),
            to: (cwd, a[1]),
            flags: 0,
        },
        #[cfg(target_arch = "x86_64")]
        n if n == libc::SYS_renameat => Naming::Rename {
            from: (dir(0), a[1]),
            to: (dir(2), a[3]),
            flags: 0,
        },
        #[cfg(target_arch = "x86_64")]
        n if n == libc::SYS_link => Naming::Link {
            from: (cwd, a[0]),
            to: (cwd, a[1]),
            flags: 0,
        },
        #[cfg(target_arch = "x86_64")]
        n if n == libc::SYS_symlink => Naming::Symlink {
            target: a[0],
            to: (cwd, a[1]),
        },
        _ => return None,
    })
}

/// Makes the command's call that names a file, as decided (see the module docs).
pub(crate) fn name_for(
    listener: RawFd,
    call: &libc::seccomp_notif,
    workspace: &Workspace,
) -> CallEnd {
    match make(listener, call, workspace) {
        Ok(answer) => answer,
        Err(e) => CallEnd::Error(e),
    }
}

/// [`name_for`], with errors as error numbers.
#[allow(unsafe_code)]
fn make(
    listener: RawFd,
    call: &libc::seccomp_notif,
    workspace: &Workspace,
) -> Result<CallEnd, i32> {
    let pid = i32::try_from(call.pid).map_err(|_| libc::ESRCH)?;
    let process = process_of(pid).ok_or(libc::ESRCH)?;
    let command = Command {
        pid,
        process: &process,
    };
    let naming = naming(call).ok_or(libc::ENOSYS)?;
    let umask = command.umask();
    let done = match naming {
        Naming::Folder { at, mode } => {
            let place = command.place(at, workspace)?;
            let (folder, name) = place.call_args()?;
            // SAFETY: a descriptor, a NUL-terminated name alive for the call, a mode.
            check(unsafe { libc::mkdirat(folder, name.as_ptr(), (mode & !umask) as libc::mode_t) })
        }
        Naming::Node { at, mode, dev } => {
            let place = command.place(at, workspace)?;
            let (folder, name) = place.call_args()?;
            let kind = mode & libc::S_IFMT;
            let perms = (mode & !libc::S_IFMT) & !umask;
            // SAFETY: a descriptor, a NUL-terminated name alive for the call, mode and device.
            check(unsafe {
                libc::mknodat(
                    folder,
                    name.as_ptr(),
                    (kind | perms) as libc::mode_t,
                    dev as libc::dev_t,
                )
            })
        }
        Naming::Open { at, flags, mode } => {
            let mut place = command.place(at, workspace)?;
            // The kernel follows a link in the last place unless asked not to (or to make
            // the file only if nothing is there): so is it followed here, each link's target
            // judged as a name of its own, and the file opened where judged, not following
            // any link.
            if flags & (libc::O_NOFOLLOW | libc::O_EXCL) == 0 {
                place = command.through_links(place, workspace)?;
            }
            return Ok(open_for(listener, call.id, place, flags, mode & !umask));
        }
        Naming::Rename { from, to, flags } => {
            let source = command.place(from, workspace)?;
            let place = command.place(to, workspace)?;
            // Both ways for an exchange, which brings the other folder in too.
            let exchange = flags & libc::RENAME_EXCHANGE != 0;
            if source.moves_a_folder_in(&place, workspace)
                || (exchange && place.moves_a_folder_in(&source, workspace))
            {
                return Err(libc::EXDEV);
            }
            let (old_folder, old) = source.call_args()?;
            let (folder, name) = place.call_args()?;
            // SAFETY: renameat2 takes descriptors, NUL-terminated names alive for the call,
            // and flags.
            check(unsafe {
                libc::syscall(
                    libc::SYS_renameat2,
                    old_folder,
                    old.as_ptr(),
                    folder,
                    name.as_ptr(),
                    flags,
                ) as libc::c_int
            })
        }
        Naming::Link { from, to, flags } => {
            let place = command.place(to, workspace)?;
            let (folder, name) = place.call_args()?;
            let (old_folder, old) = command.raw(from)?;
            let old_name = CString::new(old.into_vec()).map_err(|_| libc::EINVAL)?;
            // SAFETY: descriptors and NUL-terminated names alive for the call, flags.
            check(unsafe {
                libc::linkat(
                    old_folder.as_raw_fd(),
                    old_name.as_ptr(),
                    folder,
                    name.as_ptr(),
                    flags,
                )
            })
        }
        Naming::Symlink { target, to } => {
            let target = command.string(target)?;
            let place = command.place(to, workspace)?;
            let (folder, name) = place.call_args()?;
            let target = CString::new(target.into_vec()).map_err(|_| libc::EINVAL)?;
            // SAFETY: NUL-terminated strings alive for the call and a descriptor.
            check(unsafe { libc::symlinkat(target.as_ptr(), folder, name.as_ptr()) })
        }
    };
    done.map(|()| CallEnd::Value(0))
}

/// Opens `place` as the command asked and sends it the descriptor. Opened without waiting
/// first (`O_NONBLOCK`, cleared again unless asked for): a FIFO, whose open waits for its
/// other end, is opened again, waiting, on a thread of its own, so pid 1 is never held up —
/// whatever the name turned into since it was judged.
fn open_for(listener: RawFd, id: u64, place: Place, flags: i32, mode: u32) -> CallEnd {
    let cloexec = flags & libc::O_CLOEXEC != 0;
    let quick = place.open(flags | libc::O_NONBLOCK | libc::O_NOFOLLOW, mode);
    let waits = match &quick {
        Ok(opened) => {
            nix::sys::stat::fstat(opened).is_ok_and(|s| s.st_mode & libc::S_IFMT == libc::S_IFIFO)
        }
        Err(e) => *e == libc::ENXIO,
    };
    if !waits {
        return match quick {
            Ok(opened) => {
                if flags & libc::O_NONBLOCK == 0 {
                    let kept = nix::fcntl::OFlag::from_bits_truncate(flags & !libc::O_NONBLOCK);
                    let _ = nix::fcntl::fcntl(&opened, nix::fcntl::FcntlArg::F_SETFL(kept));
                }
                send_descriptor(listener, id, &opened, cloexec)
            }
            Err(e) => CallEnd::Error(e),
        };
    }
    drop(quick);
    let slow = move || match place.open(flags | libc::O_NOFOLLOW, mode) {
        Ok(opened) => send_descriptor(listener, id, &opened, cloexec),
        Err(e) => CallEnd::Error(e),
    };
    match std::thread::Builder::new().spawn(move || respond(listener, id, slow())) {
        Ok(_) => CallEnd::Sent,
        Err(_) => CallEnd::Error(libc::EAGAIN),
    }
}

/// `Ok` for a call that returned 0, else its error number.
fn check(result: libc::c_int) -> Result<(), i32> {
    if result == 0 {
        Ok(())
    } else {
        Err(last_errno())
    }
}

/// The process that made a call.
struct Command<'a> {
    pid: i32,
    process: &'a OwnedFd,
}

impl Command<'_> {
    /// The NUL-terminated string at `address` in the command's memory (a path, at most
    /// `PATH_MAX` bytes), read a page at most at a time so the end of its memory is not
    /// crossed.
    fn string(&self, address: u64) -> Result<OsString, i32> {
        const PATH_MAX: usize = 4096;
        const PAGE: u64 = 4096;
        let mut out = Vec::new();
        let mut at = address;
        while out.len() < PATH_MAX {
            let room = (PAGE - at % PAGE) as usize;
            let mut chunk = vec![0u8; room.min(PATH_MAX - out.len())];
            read_memory(self.pid, at, &mut chunk)?;
            if let Some(end) = chunk.iter().position(|b| *b == 0) {
                out.extend_from_slice(&chunk[..end]);
                return Ok(OsString::from_vec(out));
            }
            at += chunk.len() as u64;
            out.extend_from_slice(&chunk);
        }
        Err(libc::ENAMETOOLONG)
    }

    /// The folder `dir` names for the command: its working folder for `AT_FDCWD`, else its
    /// descriptor.
    fn folder(&self, dir: i32) -> Result<OwnedFd, i32> {
        if dir == AT_FDCWD {
            return open_folder(Path::new(&format!("/proc/{}/cwd", self.pid)));
        }
        descriptor_of(self.process, dir)
    }

    /// The folder and the path a call's `(dir, path)` pair names, as given.
    fn raw(&self, (dir, path): (i32, u64)) -> Result<(OwnedFd, OsString), i32> {
        let path = as_theirs(self.pid, &self.string(path)?);
        let folder = if Path::new(&path).is_absolute() {
            open_folder(Path::new("/"))?
        } else {
            self.folder(dir)?
        };
        Ok((folder, path))
    }

    /// The place `(dir, path)` names: the folder its name goes in, opened (following links,
    /// as the kernel does for the folders on the way), refused when the name is `.git` in
    /// the workspace.
    fn place(&self, at: (i32, u64), workspace: &Workspace) -> Result<Place, i32> {
        let (base, path) = self.raw(at)?;
        self.place_at(&base, &path, workspace)
    }

    /// The place `path` names under `base` (see [`Command::place`]).
    fn place_at(&self, base: &OwnedFd, path: &OsStr, workspace: &Workspace) -> Result<Place, i32> {
        let bytes = path.as_bytes();
        let slash = bytes.len() > 1 && bytes.ends_with(b"/");
        let path = Path::new(path);
        let (parent, name) = match path.file_name() {
            Some(name) => (
                path.parent().unwrap_or(Path::new("")),
                Some(name.to_os_string()),
            ),
            None => (path, None),
        };
        let parent = if parent.as_os_str().is_empty() {
            Path::new(".")
        } else {
            parent
        };
        let folder = open_folder_at(base, parent)?;
        if name.as_deref() == Some(OsStr::new(GIT)) {
            let real = real_path(&folder)?;
            // From a mount namespace of the command's own, where the folder is cannot be
            // told: no `.git` is made from there at all.
            if !shares_our_mounts(self.pid) || workspace.holds(&real) {
                refuse(&real.join(GIT));
                return Err(libc::EPERM);
            }
        }
        Ok(Place {
            folder,
            name,
            slash,
        })
    }

    /// `place`, or where the links in its last place lead (at most 40, as the kernel
    /// follows), each target judged as a place of its own.
    fn through_links(&self, mut place: Place, workspace: &Workspace) -> Result<Place, i32> {
        for _ in 0..40 {
            let Some(name) = place.name.clone() else {
                return Ok(place);
            };
            let is_link = nix::sys::stat::fstatat(
                &place.folder,
                name.as_os_str(),
                nix::fcntl::AtFlags::AT_SYMLINK_NOFOLLOW,
            )
            .is_ok_and(|s| s.st_mode & libc::S_IFMT == libc::S_IFLNK);
            if !is_link {
                return Ok(place);
            }
            let target =
                nix::fcntl::readlinkat(&place.folder, name.as_os_str()).map_err(|e| e as i32)?;
            let target = as_theirs(self.pid, &target);
            let base = if Path::new(&target).is_absolute() {
                open_folder(Path::new("/"))?
            } else {
                place.folder
            };
            place = self.place_at(&base, &target, workspace)?;
        }
        Err(libc::ELOOP)
    }

    /// The command's file creation mask (from `/proc/<pid>/status`), 022 if unreadable.
    fn umask(&self) -> u32 {
        std::fs::read_to_string(format!("/proc/{}/status", self.pid))
            .ok()
            .and_then(|status| {
                status
                    .lines()
                    .find_map(|l| l.strip_prefix("Umask:"))
                    .and_then(|v| u32::from_str_radix(v.trim(), 8).ok())
            })
            .unwrap_or(0o022)
    }
}

impl Place {
    /// The folder's descriptor and the name (with its `/` when it had one; `.` when there
    /// is none, so the call fails as the kernel would have it) for an `*at` call.
    fn call_args(&self) -> Result<(RawFd, CString), i32> {
        let mut name = match &self.name {
            Some(name) => name.as_bytes().to_vec(),
            None => b".".to_vec(),
        };
        if self.slash {
            name.push(b'/');
        }
        let name = CString::new(name).map_err(|_| libc::EINVAL)?;
        Ok((self.folder.as_raw_fd(), name))
    }

    /// `openat` of the name with `flags` and `mode` (the creation mask applied), closed at
    /// `exec` here whatever the command asked (the descriptor it is sent gets its own flags).
    #[allow(unsafe_code)]
    fn open(&self, flags: i32, mode: u32) -> Result<OwnedFd, i32> {
        let (folder, name) = self.call_args()?;
        // SAFETY: a descriptor, a NUL-terminated name alive for the call, flags and mode.
        let opened = unsafe {
            libc::openat(
                folder,
                name.as_ptr(),
                flags | libc::O_CLOEXEC,
                mode as libc::c_uint,
            )
        };
        if opened < 0 {
            return Err(last_errno());
        }
        // SAFETY: a non-negative result is a new descriptor, ours to own.
        Ok(unsafe { <OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(opened) })
    }

    /// Whether renaming this (a folder outside the workspace) to `to` (inside) would carry a
    /// folder, and whatever it holds, into the workspace.
    fn moves_a_folder_in(&self, to: &Place, workspace: &Workspace) -> bool {
        let Some(name) = &self.name else {
            return false;
        };
        let inside = |p: &Place| real_path(&p.folder).is_ok_and(|r| workspace.holds(&r));
        let is_folder = nix::sys::stat::fstatat(
            &self.folder,
            name.as_os_str(),
            nix::fcntl::AtFlags::AT_SYMLINK_NOFOLLOW,
        )
        .is_ok_and(|s| s.st_mode & libc::S_IFMT == libc::S_IFDIR);
        is_folder && inside(to) && !inside(self)
    }
}

/// Opens `path` as a folder, to name it.
fn open_folder(path: &Path) -> Result<OwnedFd, i32> {
    use nix::fcntl::{OFlag, open};
    open(
        path,
        OFlag::O_PATH | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC,
        nix::sys::stat::Mode::empty(),
    )
    .map_err(|e| e as i32)
}

/// Opens `path` under `base` as a folder, following links as a lookup would.
fn open_folder_at(base: &OwnedFd, path: &Path) -> Result<OwnedFd, i32> {
    use nix::fcntl::{OFlag, openat};
    openat(
        base,
        path,
        OFlag::O_PATH | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC,
        nix::sys::stat::Mode::empty(),
    )
    .map_err(|e| e as i32)
}

/// Where the open `folder` is, as this process sees it.
fn real_path(folder: &OwnedFd) -> Result<PathBuf, i32> {
    std::fs::read_link(format!("/proc/self/fd/{}", folder.as_raw_fd()))
        .map_err(|e| e.raw_os_error().unwrap_or(libc::EACCES))
}

/// Tells the command (on its stderr) why `path` was not made.
fn refuse(path: &Path) {
    let _ = std::io::stderr().write_all(
        format!(
            "tandem sandbox: refused making {}: a git repository inside the workspace would run its config outside the sandbox (an editor's git, your shell); make it outside the sandbox if it is needed\n",
            path.display()
        )
        .as_bytes(),
    );
}
