//! Linux: the process that made a call the filter (filter.rs) handed to pid 1, as pid 1
//! reaches it: its memory, its descriptors, its view of paths and mounts, and the answer.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

/// How a handed-over call ends.
pub(crate) enum CallEnd {
    /// It returns this value (0 for most calls; a descriptor number is sent on its own).
    Value(i64),
    /// It fails with this error number.
    Error(i32),
    /// It was already answered (a descriptor was sent with the answer).
    Sent,
}

/// Sends the answer to call `id`.
#[allow(unsafe_code)]
pub(crate) fn respond(listener: RawFd, id: u64, answer: CallEnd) {
    let (val, error) = match answer {
        CallEnd::Value(v) => (v, 0),
        CallEnd::Error(e) => (0, -e),
        CallEnd::Sent => return,
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
pub(crate) fn send_descriptor(listener: RawFd, id: u64, fd: &OwnedFd, cloexec: bool) -> CallEnd {
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
        return CallEnd::Sent;
    }
    if last_errno() != libc::EINVAL {
        return CallEnd::Error(last_errno());
    }
    // A kernel before 5.14: the descriptor is added, then the call answered with its number.
    add.flags = 0;
    // SAFETY: as above, without SEND.
    let number = unsafe { libc::ioctl(listener, libc::SECCOMP_IOCTL_NOTIF_ADDFD, &add) };
    if number < 0 {
        return CallEnd::Error(last_errno());
    }
    CallEnd::Value(i64::from(number))
}

/// The command's descriptor `fd`, from the process `process` names.
#[allow(unsafe_code)]
pub(crate) fn descriptor_of(process: &OwnedFd, fd: i32) -> Result<OwnedFd, i32> {
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
pub(crate) fn read_memory(pid: i32, address: u64, into: &mut [u8]) -> Result<(), i32> {
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
pub(crate) fn shares_our_mounts(pid: i32) -> bool {
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
pub(crate) fn process_of(tid: i32) -> Option<OwnedFd> {
    let status = std::fs::read_to_string(format!("/proc/{tid}/status")).ok()?;
    let tgid: i32 = status
        .lines()
        .find_map(|l| l.strip_prefix("Tgid:"))?
        .trim()
        .parse()
        .ok()?;
    crate::ties::pidfd_open(tgid)
}

/// `path` as process `tid` means it: `/proc/self` and `/proc/thread-self` name that task,
/// not the process making the call for it.
pub(crate) fn as_theirs(tid: i32, path: &std::ffi::OsStr) -> std::ffi::OsString {
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
pub(crate) fn last_errno() -> i32 {
    std::io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EIO)
}
