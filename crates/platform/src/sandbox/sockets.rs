//! Linux: which Unix sockets a sandboxed command may connect to, decided outside it.
//!
//! A socket file is a door to whatever listens behind it: Docker's daemon (root to whoever
//! connects), a desktop's session bus, an agent holding keys. A network namespace does not
//! close it, and Landlock (up to ABI 7) does not see `connect`. So the command runs under a
//! seccomp filter (filter.rs) that hands every `connect(2)` to pid 1 of its namespace
//! (processes.rs), which decides and makes the call itself, on the command's own socket
//! (`pidfd_getfd`):
//!
//! - a **pathname** socket is opened once, its real path read from the open descriptor, and
//!   connected to through that descriptor (`/proc/self/fd/N`), so no link or rename the
//!   command races in between changes what was decided. Allowed: sockets inside the writable
//!   folders and the private temp folder (the workspace's own servers, a test's), and those
//!   `[sandbox] unix_sockets` names. Anything else is refused with `EACCES`, and a line on
//!   the command's stderr says which socket and how to allow it.
//! - an **abstract** socket: allowed where nothing outside can be reached by one (the
//!   network namespace when the network is off, Landlock's scope otherwise); refused on a
//!   kernel with neither.
//! - every other family (TCP, UDP, …) is connected as asked; the network namespace decides.

use std::ffi::OsStr;
use std::io::Write;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use super::SandboxPolicy;
use super::calls::{
    as_theirs, descriptor_of, last_errno, process_of, read_memory, shares_our_mounts,
};
use super::linux::{Inner, Outer};

/// What the command may connect to.
#[derive(Debug)]
pub(crate) struct Connectable {
    /// Folders whose sockets are the sandbox's own: the writable ones and the temp folder, as
    /// the command sees them.
    own: Vec<PathBuf>,
    /// Sockets elsewhere the user allowed (`[sandbox] unix_sockets`), files or folders.
    allowed: Vec<PathBuf>,
    /// Whether abstract sockets reach only the sandbox's own.
    abstract_own: bool,
    /// Whether `/proc/<pid>` names the command's processes (for relative socket paths).
    own_proc: bool,
}

impl Connectable {
    /// What a command in `policy`'s sandbox may connect to.
    pub(crate) fn new(policy: &SandboxPolicy, outer: &Outer, inner: &Inner) -> Self {
        let mut own = policy.writable.clone();
        own.push(outer.temp.clone());
        Connectable {
            own,
            allowed: policy.unix_sockets.clone(),
            abstract_own: !policy.network || inner.scoped,
            own_proc: inner.own_proc,
        }
    }

    /// Whether the socket whose real path is `path` may be connected to.
    fn allows(&self, path: &Path) -> bool {
        self.own
            .iter()
            .chain(&self.allowed)
            .any(|p| path.starts_with(p))
    }
}

/// The largest address `connect` takes (`sizeof(struct sockaddr_storage)`).
const ADDRESS_MAX: usize = 128;

/// Makes the command's `connect` call, as decided (see the module docs).
pub(crate) fn connect_for(call: &libc::seccomp_notif, reach: &Connectable) -> Result<(), i32> {
    let pid = i32::try_from(call.pid).map_err(|_| libc::ESRCH)?;
    let fd = i32::try_from(call.data.args[0]).map_err(|_| libc::EBADF)?;
    let length = usize::try_from(call.data.args[2]).map_err(|_| libc::EINVAL)?;
    if length > ADDRESS_MAX {
        return Err(libc::EINVAL);
    }
    let process = process_of(pid).ok_or(libc::ESRCH)?;
    let socket = descriptor_of(&process, fd)?;
    let mut address = vec![0u8; length];
    read_memory(pid, call.data.args[1], &mut address)?;
    if domain(&socket)? != libc::AF_UNIX || length <= 2 {
        return connect_raw(&socket, &address);
    }
    let path = &address[2..];
    if path.first() == Some(&0) {
        return match reach.abstract_own {
            true => connect_raw(&socket, &address),
            false => Err(refused("an abstract socket", "")),
        };
    }
    let end = path.iter().position(|b| *b == 0).unwrap_or(path.len());
    connect_path(&socket, pid, OsStr::from_bytes(&path[..end]), reach)
}

/// The address family of `socket`.
#[allow(unsafe_code)]
fn domain(socket: &OwnedFd) -> Result<i32, i32> {
    let mut value: libc::c_int = 0;
    let mut size = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: SO_DOMAIN writes one int into `value`, whose size is passed.
    let got = unsafe {
        libc::getsockopt(
            socket.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_DOMAIN,
            (&mut value as *mut libc::c_int).cast(),
            &mut size,
        )
    };
    if got != 0 {
        return Err(last_errno());
    }
    Ok(value)
}

/// `connect(socket, address)` with the address as the command gave it.
#[allow(unsafe_code)]
fn connect_raw(socket: &OwnedFd, address: &[u8]) -> Result<(), i32> {
    let length = libc::socklen_t::try_from(address.len()).map_err(|_| libc::EINVAL)?;
    // SAFETY: `address` is `length` bytes, read by the kernel for the call.
    let done = unsafe { libc::connect(socket.as_raw_fd(), address.as_ptr().cast(), length) };
    if done != 0 {
        return Err(last_errno());
    }
    Ok(())
}

/// Connects `socket` to the pathname socket `path` names for process `pid`, if allowed.
fn connect_path(socket: &OwnedFd, pid: i32, path: &OsStr, reach: &Connectable) -> Result<(), i32> {
    if !shares_our_mounts(pid) {
        return Err(refused(
            "a socket named from a mount namespace the command made",
            "",
        ));
    }
    let path = as_theirs(pid, path);
    let path = Path::new(&path);
    let opened = if path.is_absolute() {
        open_path(Path::new("/"), path)?
    } else if reach.own_proc {
        open_path(&PathBuf::from(format!("/proc/{pid}/cwd")), path)?
    } else {
        return Err(refused("a socket named from the working folder", ""));
    };
    let through = PathBuf::from(format!("/proc/self/fd/{}", opened.as_raw_fd()));
    let real =
        std::fs::read_link(&through).map_err(|e| e.raw_os_error().unwrap_or(libc::EACCES))?;
    let is_socket = std::fs::metadata(&through)
        .map(|m| std::os::unix::fs::FileTypeExt::is_socket(&m.file_type()))
        .unwrap_or(false);
    if !is_socket {
        return Err(libc::ECONNREFUSED);
    }
    if !reach.allows(&real) {
        return Err(refused("the socket", &real.display().to_string()));
    }
    let mut address = Vec::with_capacity(2 + 24);
    address.extend_from_slice(&(libc::AF_UNIX as libc::sa_family_t).to_ne_bytes());
    address.extend_from_slice(through.as_os_str().as_bytes());
    address.push(0);
    connect_raw(socket, &address)
}

/// Opens `path` (relative to `base` when relative) to name it, following links: what is
/// decided and connected to is this one file.
fn open_path(base: &Path, path: &Path) -> Result<OwnedFd, i32> {
    use nix::fcntl::{OFlag, open};
    let full = base.join(path);
    open(
        &full,
        OFlag::O_PATH | OFlag::O_CLOEXEC,
        nix::sys::stat::Mode::empty(),
    )
    .map_err(|e| e as i32)
}

/// Tells the command (on its stderr) which socket was refused and how to allow it; the
/// error the call fails with.
fn refused(what: &str, path: &str) -> i32 {
    let named = if path.is_empty() {
        what.to_string()
    } else {
        format!("{what} {path}")
    };
    let _ = std::io::stderr().write_all(
        format!(
            "tandem sandbox: refused connecting to {named}: it is outside the workspace; to allow it, add it to `unix_sockets` under [sandbox] in your config file\n"
        )
        .as_bytes(),
    );
    libc::EACCES
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sockets_of_the_sandbox_and_those_the_user_allowed_are_reached() {
        let reach = Connectable {
            own: vec![PathBuf::from("/ws"), PathBuf::from("/tmp")],
            allowed: vec![PathBuf::from("/home/u/.docker/run/docker.sock")],
            abstract_own: true,
            own_proc: true,
        };
        assert!(reach.allows(Path::new("/ws/target/test.sock")));
        assert!(reach.allows(Path::new("/tmp/pytest-1/s.sock")));
        assert!(reach.allows(Path::new("/home/u/.docker/run/docker.sock")));
        assert!(!reach.allows(Path::new("/home/u/.docker/desktop/docker.sock")));
        assert!(!reach.allows(Path::new("/wsother/x.sock")));
        assert!(!reach.allows(Path::new("/run/docker.sock")));
    }
}
