//! Linux: which Unix sockets a sandboxed command may connect to, decided outside it.
//!
//! A socket file is a door to whatever listens behind it: Docker's daemon (root to whoever
//! connects), a desktop's session bus, an agent holding keys. A network namespace does not
//! close it, and Landlock (up to ABI 7) does not see `connect`. So the command runs under a
//! seccomp filter that hands every `connect(2)` to pid 1 of its namespace (processes.rs),
//! which decides and makes the call itself, on the command's own socket (`pidfd_getfd`):
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
//!
//! The filter also refuses datagram Unix sockets (`socket` and `socketpair` with
//! `SOCK_DGRAM`: a datagram can be sent to any named socket with `sendto`, which no filter
//! can read the address of) and io_uring (which connects without a system call). Other
//! architectures' system calls (32-bit on a 64-bit kernel) are refused.

use std::ffi::OsStr;
use std::io::Write;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::linux::{Inner, Outer};
use super::{Policy, SandboxError};

/// What the command may connect to.
#[derive(Debug)]
pub struct Reach {
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

impl Reach {
    /// What a command in `policy`'s sandbox may connect to.
    pub fn new(policy: &Policy, outer: &Outer, inner: Inner) -> Self {
        let mut own = policy.writable.clone();
        own.push(outer.temp.clone());
        Reach {
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

/// The architecture the filter accepts system calls of (`AUDIT_ARCH_*`, linux/audit.h).
#[cfg(target_arch = "x86_64")]
const ARCH: u32 = 0xC000_003E;
#[cfg(target_arch = "aarch64")]
const ARCH: u32 = 0xC000_00B7;
#[cfg(target_arch = "riscv64")]
const ARCH: u32 = 0xC000_00F3;

/// x86_64's x32 system calls carry this bit in their number.
#[cfg(target_arch = "x86_64")]
const X32_BIT: u32 = 0x4000_0000;

/// One instruction of the filter, with jumps to labels resolved when it is assembled.
enum Op {
    /// Loads the 32-bit word at this offset of `seccomp_data`.
    Load(u32),
    /// `A &= k`.
    And(u32),
    /// Jumps to the first label when `A == k`, else to the second.
    Equal(u32, &'static str, &'static str),
    /// Jumps to the first label when `A >= k`, else to the second.
    AtLeast(u32, &'static str, &'static str),
    /// Returns this action.
    Return(u32),
    /// Marks a place to jump to.
    Label(&'static str),
}

/// Offsets in `seccomp_data`: the call's number, the architecture, the low words of the
/// first two arguments.
const NR: u32 = 0;
const ARCH_AT: u32 = 4;
const ARG0: u32 = 16;
const ARG1: u32 = 24;

/// The filter's program (see the module docs).
fn program() -> Vec<Op> {
    let refuse = libc::SECCOMP_RET_ERRNO | libc::EPERM as u32;
    let unknown = libc::SECCOMP_RET_ERRNO | libc::ENOSYS as u32;
    let mut ops = vec![
        Op::Load(ARCH_AT),
        Op::Equal(ARCH, "native", "foreign"),
        Op::Label("foreign"),
        Op::Return(unknown),
        Op::Label("native"),
        Op::Load(NR),
    ];
    #[cfg(target_arch = "x86_64")]
    ops.extend([
        Op::AtLeast(X32_BIT, "x32", "call"),
        Op::Label("x32"),
        Op::Return(unknown),
    ]);
    ops.extend([
        Op::Label("call"),
        Op::Equal(libc::SYS_connect as u32, "decide", "not-connect"),
        Op::Label("decide"),
        Op::Return(libc::SECCOMP_RET_USER_NOTIF),
        Op::Label("not-connect"),
        Op::Equal(libc::SYS_socket as u32, "socket", "not-socket"),
        Op::Label("not-socket"),
        Op::Equal(libc::SYS_socketpair as u32, "socket", "not-pair"),
        Op::Label("not-pair"),
        Op::Equal(libc::SYS_io_uring_setup as u32, "refuse", "allow"),
        Op::Label("socket"),
        Op::Load(ARG0),
        Op::Equal(libc::AF_UNIX as u32, "unix", "allow"),
        Op::Label("unix"),
        Op::Load(ARG1),
        Op::And(0xf),
        Op::Equal(libc::SOCK_DGRAM as u32, "refuse", "allow"),
        Op::Label("refuse"),
        Op::Return(refuse),
        Op::Label("allow"),
        Op::Return(libc::SECCOMP_RET_ALLOW),
    ]);
    ops
}

/// The program in the kernel's form; jumps only go forward, as BPF requires.
fn assemble(ops: &[Op]) -> Result<Vec<libc::sock_filter>, SandboxError> {
    let bad = |why: &str| SandboxError::Step("building the socket filter", why.to_string());
    let mut at = std::collections::HashMap::new();
    let mut n = 0usize;
    for op in ops {
        match op {
            Op::Label(name) => {
                at.insert(*name, n);
            }
            _ => n += 1,
        }
    }
    let mut out = Vec::with_capacity(n);
    for op in ops {
        let here = out.len();
        let to = |label: &str| -> Result<u8, SandboxError> {
            let target = *at.get(label).ok_or_else(|| bad("a jump to no label"))?;
            let skip = target
                .checked_sub(here + 1)
                .ok_or_else(|| bad("a jump back"))?;
            u8::try_from(skip).map_err(|_| bad("a jump too far"))
        };
        let code = |c: u32| c as u16;
        let instruction = match op {
            Op::Label(_) => continue,
            Op::Load(offset) => (
                code(libc::BPF_LD | libc::BPF_W | libc::BPF_ABS),
                0,
                0,
                *offset,
            ),
            Op::And(k) => (code(libc::BPF_ALU | libc::BPF_AND | libc::BPF_K), 0, 0, *k),
            Op::Equal(k, yes, no) => (
                code(libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K),
                to(yes)?,
                to(no)?,
                *k,
            ),
            Op::AtLeast(k, yes, no) => (
                code(libc::BPF_JMP | libc::BPF_JGE | libc::BPF_K),
                to(yes)?,
                to(no)?,
                *k,
            ),
            Op::Return(action) => (code(libc::BPF_RET | libc::BPF_K), 0, 0, *action),
        };
        let (code, jt, jf, k) = instruction;
        out.push(libc::sock_filter { code, jt, jf, k });
    }
    Ok(out)
}

/// Installs the filter on this process (the command, about to become its program) and
/// sends its listener to pid 1 over `to_first`.
pub fn filter(to_first: &OwnedFd) -> Result<(), SandboxError> {
    let failed = |e: std::io::Error| SandboxError::Step("filtering sockets", e.to_string());
    let listener = install()?;
    let fds = [listener.as_raw_fd()];
    let message = [nix::sys::socket::ControlMessage::ScmRights(&fds)];
    let iov = [std::io::IoSlice::new(b"l")];
    nix::sys::socket::sendmsg::<()>(
        to_first.as_raw_fd(),
        &iov,
        &message,
        nix::sys::socket::MsgFlags::empty(),
        None,
    )
    .map_err(|e| failed(e.into()))?;
    Ok(())
}

/// Installs the filter on the calling thread (and what it starts); its listener.
#[allow(unsafe_code)]
fn install() -> Result<OwnedFd, SandboxError> {
    let failed = |e: std::io::Error| SandboxError::Step("filtering sockets", e.to_string());
    let mut code = assemble(&program())?;
    let program = libc::sock_fprog {
        len: u16::try_from(code.len())
            .map_err(|_| failed(std::io::Error::from_raw_os_error(libc::E2BIG)))?,
        filter: code.as_mut_ptr(),
    };
    // SAFETY: `program` points at `code`, alive for the call; the kernel copies the filter.
    // This process holds CAP_SYS_ADMIN in its user namespace, which seccomp takes in place
    // of no_new_privs.
    let listener = unsafe {
        libc::syscall(
            libc::SYS_seccomp,
            libc::SECCOMP_SET_MODE_FILTER,
            libc::SECCOMP_FILTER_FLAG_NEW_LISTENER,
            &program as *const libc::sock_fprog,
        )
    };
    if listener < 0 {
        return Err(failed(std::io::Error::last_os_error()));
    }
    // SAFETY: a non-negative result is the listener's new descriptor, ours to own.
    Ok(unsafe { OwnedFd::from_raw_fd(listener as RawFd) })
}

/// The listener the command sent over `from_command`; `None` if it ended first.
pub fn receive_listener(from_command: &OwnedFd) -> Option<OwnedFd> {
    let mut byte = [0u8; 1];
    let mut iov = [std::io::IoSliceMut::new(&mut byte)];
    let mut space = nix::cmsg_space!([RawFd; 1]);
    let message = nix::sys::socket::recvmsg::<()>(
        from_command.as_raw_fd(),
        &mut iov,
        Some(&mut space),
        nix::sys::socket::MsgFlags::MSG_CMSG_CLOEXEC,
    )
    .ok()?;
    for cmsg in message.cmsgs().ok()? {
        if let nix::sys::socket::ControlMessageOwned::ScmRights(fds) = cmsg
            && let Some(fd) = fds.first()
        {
            #[allow(unsafe_code)]
            // SAFETY: a descriptor received with SCM_RIGHTS is new in this process, ours.
            return Some(unsafe { OwnedFd::from_raw_fd(*fd) });
        }
    }
    None
}

/// Takes the next `connect` the command made and answers it on a thread of its own, so a
/// slow connection (TCP with the network on) holds up no other.
#[allow(unsafe_code)]
pub fn answer_next(listener: RawFd, reach: &Arc<Reach>) {
    // SAFETY: all-zero is a valid seccomp_notif, which the kernel requires zeroed.
    let mut call: libc::seccomp_notif = unsafe { std::mem::zeroed() };
    // SAFETY: RECV writes one seccomp_notif into `call`, which is that size.
    let got = unsafe { libc::ioctl(listener, libc::SECCOMP_IOCTL_NOTIF_RECV, &mut call) };
    if got != 0 {
        return;
    }
    let reach = reach.clone();
    let answered = std::thread::Builder::new().spawn(move || {
        let result = connect_for(&call, &reach);
        respond(listener, call.id, result);
    });
    if answered.is_err() {
        respond(listener, call.id, Err(libc::EAGAIN));
    }
}

/// Sends the answer to call `id`: `Ok` for success, or the error number the call fails with.
#[allow(unsafe_code)]
fn respond(listener: RawFd, id: u64, result: Result<(), i32>) {
    let answer = libc::seccomp_notif_resp {
        id,
        val: 0,
        error: result.err().map_or(0, |e| -e),
        flags: 0,
    };
    // SAFETY: SEND reads one seccomp_notif_resp, which `answer` is. A call whose process was
    // interrupted or died fails with ENOENT, which changes nothing.
    let _ = unsafe { libc::ioctl(listener, libc::SECCOMP_IOCTL_NOTIF_SEND, &answer) };
}

/// The largest address `connect` takes (`sizeof(struct sockaddr_storage)`).
const ADDRESS_MAX: usize = 128;

/// Makes the command's `connect` call, as decided (see the module docs).
fn connect_for(call: &libc::seccomp_notif, reach: &Reach) -> Result<(), i32> {
    let pid = i32::try_from(call.pid).map_err(|_| libc::ESRCH)?;
    let fd = i32::try_from(call.data.args[0]).map_err(|_| libc::EBADF)?;
    let length = usize::try_from(call.data.args[2]).map_err(|_| libc::EINVAL)?;
    if length > ADDRESS_MAX {
        return Err(libc::EINVAL);
    }
    let process = super::processes::pidfd_open(pid).ok_or(libc::ESRCH)?;
    let socket = socket_of(&process, fd)?;
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

/// The command's descriptor `fd` (the same socket, shared), from `process`.
#[allow(unsafe_code)]
fn socket_of(process: &OwnedFd, fd: i32) -> Result<OwnedFd, i32> {
    // SAFETY: pidfd_getfd takes a pidfd, a number and flags, and returns a new descriptor.
    let got = unsafe { libc::syscall(libc::SYS_pidfd_getfd, process.as_raw_fd(), fd, 0) };
    if got < 0 {
        return Err(last_errno());
    }
    // SAFETY: a non-negative result is a new descriptor, ours to own.
    Ok(unsafe { OwnedFd::from_raw_fd(got as RawFd) })
}

/// Reads `into.len()` bytes at `address` in process `pid`.
#[allow(unsafe_code)]
fn read_memory(pid: i32, address: u64, into: &mut [u8]) -> Result<(), i32> {
    if into.is_empty() {
        return Ok(());
    }
    let local = libc::iovec {
        iov_base: into.as_mut_ptr().cast(),
        iov_len: into.len(),
    };
    let remote = libc::iovec {
        iov_base: address as usize as *mut libc::c_void,
        iov_len: into.len(),
    };
    // SAFETY: one local buffer of the length given, written by the kernel; the remote one is
    // only read, in the other process.
    let read = unsafe { libc::process_vm_readv(pid, &local, 1, &remote, 1, 0) };
    match usize::try_from(read) {
        Ok(n) if n == into.len() => Ok(()),
        _ => Err(libc::EFAULT),
    }
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
fn connect_path(socket: &OwnedFd, pid: i32, path: &OsStr, reach: &Reach) -> Result<(), i32> {
    let path = Path::new(path);
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

/// The error number of the last failed call.
fn last_errno() -> i32 {
    std::io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EIO)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_filter_assembles_with_every_jump_forward_and_in_range() {
        let code = assemble(&program()).unwrap();
        let last = code.len();
        for (i, op) in code.iter().enumerate() {
            let jump = op.code & 0x07 == libc::BPF_JMP as u16;
            if jump {
                assert!(
                    i + 1 + (op.jt as usize) < last,
                    "jt of {i} runs off the end"
                );
                assert!(
                    i + 1 + (op.jf as usize) < last,
                    "jf of {i} runs off the end"
                );
            }
        }
        let returns = code
            .iter()
            .filter(|op| op.code == (libc::BPF_RET | libc::BPF_K) as u16);
        assert!(returns.count() >= 4);
    }

    /// What `socket(domain, kind)` does on this thread: the descriptor closed again, or the
    /// error number.
    #[allow(unsafe_code)]
    fn made(domain: i32, kind: i32) -> Result<(), i32> {
        // SAFETY: socket takes three integers; a descriptor it returns is closed at once.
        let fd = unsafe { libc::socket(domain, kind, 0) };
        if fd < 0 {
            return Err(last_errno());
        }
        // SAFETY: `fd` is ours, just made.
        unsafe { libc::close(fd) };
        Ok(())
    }

    #[allow(unsafe_code)]
    #[test]
    fn the_filter_refuses_datagram_unix_sockets_and_io_uring_and_nothing_else() {
        // On a thread of its own: a filter holds the thread that installs it and what that
        // thread starts, not the test's other threads.
        let outcome = std::thread::spawn(|| {
            // SAFETY: PR_SET_NO_NEW_PRIVS takes integers; this thread may then install a
            // filter without CAP_SYS_ADMIN.
            unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) };
            let _listener = install().unwrap();
            let mut pair = [0i32; 2];
            // SAFETY: socketpair writes two descriptors into `pair`.
            let dgram_pair =
                unsafe { libc::socketpair(libc::AF_UNIX, libc::SOCK_DGRAM, 0, pair.as_mut_ptr()) };
            let dgram_pair_errno = (dgram_pair != 0).then(last_errno);
            // SAFETY: io_uring_setup with no parameters fails or is refused; nothing is read.
            let ring = unsafe { libc::syscall(libc::SYS_io_uring_setup, 1, std::ptr::null::<u8>()) };
            let ring_errno = (ring < 0).then(last_errno);
            (
                made(libc::AF_UNIX, libc::SOCK_DGRAM),
                made(libc::AF_UNIX, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC),
                made(libc::AF_UNIX, libc::SOCK_STREAM),
                made(libc::AF_UNIX, libc::SOCK_SEQPACKET),
                made(libc::AF_INET, libc::SOCK_DGRAM),
                dgram_pair_errno,
                ring_errno,
            )
        })
        .join()
        .unwrap();
        assert_eq!(outcome.0, Err(libc::EPERM));
        assert_eq!(outcome.1, Err(libc::EPERM));
        assert_eq!(outcome.2, Ok(()));
        assert_eq!(outcome.3, Ok(()));
        assert_eq!(outcome.4, Ok(()));
        assert_eq!(outcome.5, Some(libc::EPERM));
        assert_eq!(outcome.6, Some(libc::EPERM));
        // The test's own thread is not filtered.
        assert_eq!(made(libc::AF_UNIX, libc::SOCK_DGRAM), Ok(()));
    }

    #[test]
    fn sockets_of_the_sandbox_and_those_the_user_allowed_are_reached() {
        let reach = Reach {
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
