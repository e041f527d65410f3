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

use std::os::fd::{FromRawFd, OwnedFd, RawFd};
use std::sync::Arc;

use super::SandboxError;
use super::calls::{CallEnd, respond};
use super::repositories::{self, Workspace};
use super::sockets::{self, Connectable};

/// What pid 1 decides the handed-over calls by.
#[derive(Debug)]
pub(crate) struct Rules {
    /// Which sockets may be connected to.
    pub(crate) sockets: Connectable,
    /// Where no git repository may be made.
    pub(crate) repositories: Workspace,
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
pub(crate) fn install(names: bool) -> Result<OwnedFd, SandboxError> {
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

/// Takes the next call the command handed over and answers it: a `connect` on a thread of
/// its own, so a slow one (TCP with the network on) holds up no other; a call that names a
/// file here, at once (it is quick, and a thread would cost more than the call; an open that
/// waits, a FIFO's, gets a thread of its own).
#[allow(unsafe_code)]
pub(crate) fn answer_next(listener: RawFd, rules: &Arc<Rules>) {
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
            Ok(()) => CallEnd::Value(0),
            Err(e) => CallEnd::Error(e),
        };
        respond(listener, call.id, answer);
    });
    if answered.is_err() {
        respond(listener, call.id, CallEnd::Error(libc::EAGAIN));
    }
}

#[cfg(test)]
mod tests {
    use super::super::calls::last_errno;
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
