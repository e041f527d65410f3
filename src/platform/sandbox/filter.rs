//! Linux: the seccomp filter a sandboxed command runs under, and how pid 1 of its namespace
//! (processes.rs) answers the calls the filter hands it.
//!
//! The filter hands over the calls whose decision needs more than their numbers: every
//! `connect` (sockets.rs), and, where the sandbox may write a workspace folder, every call
//! that gives a file a name (`mkdir`, `open` with `O_CREAT`, `mknod`, `rename`, `link`,
//! `symlink` and their `*at` forms; repositories.rs). Pid 1 reads each call's arguments
//! once, decides, and makes the call itself on the command's behalf, so nothing the command
//! changes in its memory or its folders between the decision and the call counts.
//!
//! It refuses outright: Unix sockets of any kind but stream and seqpacket (`socket` and
//! `socketpair` with `SOCK_DGRAM`, or `SOCK_RAW`, which the kernel makes a datagram socket:
//! a datagram can be sent to any named socket with `sendto`, whose address no filter can
//! read), io_uring (which connects and opens without a system call), `openat2` (whose
//! arguments are a structure; callers fall back to `openat`), and every call of another
//! architecture (32-bit calls on a 64-bit kernel, x32).

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::Arc;

use super::SandboxError;
use super::repositories::{self, Workspace};
use super::sockets::{self, Reach};

/// What pid 1 decides the handed-over calls by.
#[derive(Debug)]
pub struct Rules {
    /// Which sockets may be connected to.
    pub sockets: Reach,
    /// Where no git repository may be made.
    pub repositories: Workspace,
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

/// One instruction of the filter; jumps go to labels, resolved when it is assembled.
enum Op {
    /// Loads the 32-bit word at this offset of `seccomp_data`.
    Load(u32),
    /// `A &= k`.
    And(u32),
    /// Jumps to the label when `A == k`; else goes on.
    If(u32, &'static str),
    /// Jumps to the label when `A != k`; else goes on.
    Unless(u32, &'static str),
    /// Jumps to the label when `A >= k`; else goes on.
    AtLeast(u32, &'static str),
    /// Returns this action.
    Return(u32),
    /// Marks a place to jump to.
    Label(&'static str),
}

/// Offsets in `seccomp_data`: the call's number, the architecture, the low words of the
/// first three arguments.
const NR: u32 = 0;
const ARCH_AT: u32 = 4;
const ARG0: u32 = 16;
const ARG1: u32 = 24;
const ARG2: u32 = 32;

/// The calls that give a file a name, handed over whatever their arguments (see the module
/// docs); `open` and `openat` only with `O_CREAT`.
fn naming_calls() -> Vec<u32> {
    let mut calls = vec![
        libc::SYS_mkdirat,
        libc::SYS_mknodat,
        libc::SYS_renameat2,
        libc::SYS_linkat,
        libc::SYS_symlinkat,
    ];
    #[cfg(target_arch = "x86_64")]
    calls.extend([
        libc::SYS_mkdir,
        libc::SYS_mknod,
        libc::SYS_creat,
        libc::SYS_rename,
        libc::SYS_renameat,
        libc::SYS_link,
        libc::SYS_symlink,
    ]);
    calls.into_iter().map(|n| n as u32).collect()
}

/// The filter's program (see the module docs); `names` when the calls that name files are
/// handed over too.
fn program(names: bool) -> Vec<Op> {
    let mut ops = vec![Op::Load(ARCH_AT), Op::Unless(ARCH, "unknown"), Op::Load(NR)];
    #[cfg(target_arch = "x86_64")]
    ops.push(Op::AtLeast(X32_BIT, "unknown"));
    ops.extend([
        Op::If(libc::SYS_connect as u32, "hand-over"),
        Op::If(libc::SYS_socket as u32, "socket"),
        Op::If(libc::SYS_socketpair as u32, "socket"),
        Op::If(libc::SYS_io_uring_setup as u32, "refuse"),
        Op::If(libc::SYS_openat2 as u32, "unknown"),
    ]);
    if names {
        ops.extend(naming_calls().into_iter().map(|n| Op::If(n, "hand-over")));
        ops.push(Op::If(libc::SYS_openat as u32, "openat"));
        #[cfg(target_arch = "x86_64")]
        ops.push(Op::If(libc::SYS_open as u32, "open"));
    }
    ops.extend([
        Op::Return(libc::SECCOMP_RET_ALLOW),
        // A Unix socket only of the kinds that connect to one peer: the kernel makes a
        // `SOCK_RAW` Unix socket a datagram one.
        Op::Label("socket"),
        Op::Load(ARG0),
        Op::Unless(libc::AF_UNIX as u32, "allow"),
        Op::Load(ARG1),
        Op::And(0xf),
        Op::If(libc::SOCK_STREAM as u32, "allow"),
        Op::If(libc::SOCK_SEQPACKET as u32, "allow"),
        Op::Return(libc::SECCOMP_RET_ERRNO | libc::EPERM as u32),
    ]);
    if names {
        ops.extend([
            Op::Label("openat"),
            Op::Load(ARG2),
            Op::And(libc::O_CREAT as u32),
            Op::If(0, "allow"),
            Op::Return(libc::SECCOMP_RET_USER_NOTIF),
        ]);
        #[cfg(target_arch = "x86_64")]
        ops.extend([
            Op::Label("open"),
            Op::Load(ARG1),
            Op::And(libc::O_CREAT as u32),
            Op::If(0, "allow"),
            Op::Return(libc::SECCOMP_RET_USER_NOTIF),
        ]);
    }
    ops.extend([
        Op::Label("hand-over"),
        Op::Return(libc::SECCOMP_RET_USER_NOTIF),
        Op::Label("refuse"),
        Op::Return(libc::SECCOMP_RET_ERRNO | libc::EPERM as u32),
        Op::Label("unknown"),
        Op::Return(libc::SECCOMP_RET_ERRNO | libc::ENOSYS as u32),
        Op::Label("allow"),
        Op::Return(libc::SECCOMP_RET_ALLOW),
    ]);
    ops
}

/// The program in the kernel's form; jumps only go forward, as BPF requires.
fn assemble(ops: &[Op]) -> Result<Vec<libc::sock_filter>, SandboxError> {
    let bad = |why: &str| SandboxError::Step("building the sandbox's filter", why.to_string());
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
        let jump = |how: u32| code(libc::BPF_JMP | how | libc::BPF_K);
        let (code, jt, jf, k) = match op {
            Op::Label(_) => continue,
            Op::Load(offset) => (
                code(libc::BPF_LD | libc::BPF_W | libc::BPF_ABS),
                0,
                0,
                *offset,
            ),
            Op::And(k) => (code(libc::BPF_ALU | libc::BPF_AND | libc::BPF_K), 0, 0, *k),
            Op::If(k, label) => (jump(libc::BPF_JEQ), to(label)?, 0, *k),
            Op::Unless(k, label) => (jump(libc::BPF_JEQ), 0, to(label)?, *k),
            Op::AtLeast(k, label) => (jump(libc::BPF_JGE), to(label)?, 0, *k),
            Op::Return(action) => (code(libc::BPF_RET | libc::BPF_K), 0, 0, *action),
        };
        out.push(libc::sock_filter { code, jt, jf, k });
    }
    Ok(out)
}

/// Installs the filter on the calling thread (and what it starts), with the calls that name
/// files handed over too when `names`; its listener.
#[allow(unsafe_code)]
pub fn install(names: bool) -> Result<OwnedFd, SandboxError> {
    let failed = |e: std::io::Error| SandboxError::Step("filtering calls", e.to_string());
    let mut code = assemble(&program(names))?;
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

/// How a handed-over call ends.
pub enum Answer {
    /// It returns this value (0 for most calls; a descriptor number is sent on its own).
    Value(i64),
    /// It fails with this error number.
    Error(i32),
    /// It was already answered (a descriptor was sent with the answer).
    Sent,
}

/// Takes the next call the command handed over and answers it: a `connect` on a thread of
/// its own, so a slow one (TCP with the network on) holds up no other; a call that names a
/// file here, at once (it is quick, and a thread would cost more than the call; an open that
/// waits, a FIFO's, gets a thread of its own).
#[allow(unsafe_code)]
pub fn answer_next(listener: RawFd, rules: &Arc<Rules>) {
    // SAFETY: all-zero is a valid seccomp_notif, which the kernel requires zeroed.
    let mut call: libc::seccomp_notif = unsafe { std::mem::zeroed() };
    // SAFETY: RECV writes one seccomp_notif into `call`, which is that size.
    let got = unsafe { libc::ioctl(listener, libc::SECCOMP_IOCTL_NOTIF_RECV, &mut call) };
    if got != 0 {
        return;
    }
    if call.data.nr != libc::SYS_connect as i32 {
        let answer = repositories::name_for(listener, &call, &rules.repositories);
        respond(listener, call.id, answer);
        return;
    }
    let rules = rules.clone();
    let answered = std::thread::Builder::new().spawn(move || {
        let answer = match sockets::connect_for(&call, &rules.sockets) {
            Ok(()) => Answer::Value(0),
            Err(e) => Answer::Error(e),
        };
        respond(listener, call.id, answer);
    });
    if answered.is_err() {
        respond(listener, call.id, Answer::Error(libc::EAGAIN));
    }
}

/// Sends the answer to call `id`.
#[allow(unsafe_code)]
pub fn respond(listener: RawFd, id: u64, answer: Answer) {
    let (val, error) = match answer {
        Answer::Value(v) => (v, 0),
        Answer::Error(e) => (0, -e),
        Answer::Sent => return,
    };
    let answer = libc::seccomp_notif_resp {
        id,
        val,
        error,
        flags: 0,
    };
    // SAFETY: SEND reads one seccomp_notif_resp, which `answer` is. A call whose process was
    // interrupted or died fails with ENOENT, which changes nothing.
    let _ = unsafe { libc::ioctl(listener, libc::SECCOMP_IOCTL_NOTIF_SEND, &answer) };
}

/// Sends `fd` into the process that made call `id` as the call's result (its new
/// descriptor, close-on-exec when `cloexec`).
#[allow(unsafe_code)]
pub fn send_descriptor(listener: RawFd, id: u64, fd: &OwnedFd, cloexec: bool) -> Answer {
    let mut add = libc::seccomp_notif_addfd {
        id,
        flags: libc::SECCOMP_ADDFD_FLAG_SEND as u32,
        srcfd: fd.as_raw_fd() as u32,
        newfd: 0,
        newfd_flags: if cloexec { libc::O_CLOEXEC as u32 } else { 0 },
    };
    // SAFETY: ADDFD reads one seccomp_notif_addfd, which `add` is; with SEND the call is
    // answered with the new descriptor's number.
    let sent = unsafe { libc::ioctl(listener, libc::SECCOMP_IOCTL_NOTIF_ADDFD, &add) };
    if sent >= 0 {
        return Answer::Sent;
    }
    if last_errno() != libc::EINVAL {
        return Answer::Error(last_errno());
    }
    // A kernel before 5.14: the descriptor is added, then the call answered with its number.
    add.flags = 0;
    // SAFETY: as above, without SEND.
    let number = unsafe { libc::ioctl(listener, libc::SECCOMP_IOCTL_NOTIF_ADDFD, &add) };
    if number < 0 {
        return Answer::Error(last_errno());
    }
    Answer::Value(i64::from(number))
}

/// The command's descriptor `fd`, from the process `process` names.
#[allow(unsafe_code)]
pub fn descriptor_of(process: &OwnedFd, fd: i32) -> Result<OwnedFd, i32> {
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
pub fn read_memory(pid: i32, address: u64, into: &mut [u8]) -> Result<(), i32> {
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

/// Whether process `pid` is in this process's mount namespace. Where a command made one of
/// its own (in a user namespace of its own it may), the folders and descriptors it names may
/// be mounts this process cannot place: a decision by path is then refused, never guessed.
pub fn shares_our_mounts(pid: i32) -> bool {
    use std::os::unix::fs::MetadataExt;
    let ours = std::fs::metadata("/proc/self/ns/mnt");
    let theirs = std::fs::metadata(format!("/proc/{pid}/ns/mnt"));
    match (ours, theirs) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

/// A pidfd of the process (thread group) task `tid` belongs to: the kernel names the thread
/// that made a call, and only a thread group's leader has a pidfd (before Linux 6.9); its
/// descriptors are the whole group's.
pub fn process_of(tid: i32) -> Option<OwnedFd> {
    let status = std::fs::read_to_string(format!("/proc/{tid}/status")).ok()?;
    let tgid: i32 = status
        .lines()
        .find_map(|l| l.strip_prefix("Tgid:"))?
        .trim()
        .parse()
        .ok()?;
    crate::platform::ties::pidfd_open(tgid)
}

/// `path` as process `tid` means it: `/proc/self` and `/proc/thread-self` name that task,
/// not the process making the call for it.
pub fn as_theirs(tid: i32, path: &std::ffi::OsStr) -> std::ffi::OsString {
    use std::os::unix::ffi::{OsStrExt, OsStringExt};
    let bytes = path.as_bytes();
    for prefix in [&b"/proc/thread-self"[..], &b"/proc/self"[..]] {
        if let Some(rest) = bytes.strip_prefix(prefix)
            && (rest.is_empty() || rest.starts_with(b"/"))
        {
            let mut out = format!("/proc/{tid}").into_bytes();
            if prefix == b"/proc/thread-self" {
                out = format!("/proc/{tid}/task/{tid}").into_bytes();
            }
            out.extend_from_slice(rest);
            return std::ffi::OsString::from_vec(out);
        }
    }
    path.to_os_string()
}

/// The error number of the last failed call.
pub fn last_errno() -> i32 {
    std::io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EIO)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_filter_assembles_with_every_jump_forward_and_in_range() {
        let code = assemble(&program(true)).unwrap();
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
            let _listener = install(false).unwrap();
            let mut pair = [0i32; 2];
            // SAFETY: socketpair writes two descriptors into `pair`.
            let dgram_pair =
                unsafe { libc::socketpair(libc::AF_UNIX, libc::SOCK_DGRAM, 0, pair.as_mut_ptr()) };
            let dgram_pair_errno = (dgram_pair != 0).then(last_errno);
            // SAFETY: io_uring_setup with no parameters fails or is refused; nothing is read.
            let ring =
                unsafe { libc::syscall(libc::SYS_io_uring_setup, 1, std::ptr::null::<u8>()) };
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
}
