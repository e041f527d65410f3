//! Pinning threads to CPUs, for tests that need a thread of their own to watch another
//! process closely (a watcher that shares a CPU with what it watches is preempted by it).

use nix::sched::{CpuSet, sched_getaffinity, sched_setaffinity};
use nix::unistd::Pid;

/// Two distinct CPUs this process may run on, when it may run on two.
pub(crate) fn two() -> Option<(usize, usize)> {
    let allowed = sched_getaffinity(Pid::from_raw(0)).ok()?;
    let mut cpus = (0..CpuSet::count()).filter(|&c| allowed.is_set(c).unwrap_or(false));
    Some((cpus.next()?, cpus.next()?))
}

fn only(cpu: usize) -> CpuSet {
    let mut set = CpuSet::new();
    set.set(cpu).unwrap();
    set
}

/// Pins the calling thread to `cpu`.
pub(crate) fn pin_this_thread(cpu: usize) {
    sched_setaffinity(Pid::from_raw(0), &only(cpu)).unwrap();
}

/// Pins every thread process `pid` has now to `cpu`; threads they start later inherit it.
pub(crate) fn pin_process(pid: u32, cpu: usize) {
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).unwrap();
    for task in tasks {
        let tid: i32 = task.unwrap().file_name().to_string_lossy().parse().unwrap();
        // A thread that has just ended cannot be pinned, and need not be.
        let _ = sched_setaffinity(Pid::from_raw(tid), &only(cpu));
    }
}
