//! The heap of a long-lived process on glibc: one malloc arena instead of one per thread.
//!
//! glibc gives each thread that allocates under contention an arena of its own (up to eight
//! per core) and keeps what is freed there for that arena. tandem's work moves between the
//! runtime's threads (a session is opened on one, its replay sent from another, its messages
//! dropped wherever it closes), so memory freed by one session stayed resident in arenas the
//! next one never used: after a 20,000-message `session/load` the process held 88-97 MiB
//! with the default against 62-65 MiB with one arena, at the same load time and streaming
//! rate (docs/benchmarks.md). Each thread's allocation cache still takes the common case
//! without the arena's lock.
#![allow(unsafe_code)]

/// Hands the heap's free pages back to the system (`malloc_trim`): after a short-lived peak
/// such as a `session/load`, whose records and replayed updates are freed once sent, glibc
/// keeps the freed memory for later unless told, and RSS stays at the peak.
pub(crate) fn give_back() {
    // SAFETY: `malloc_trim` only walks the allocator's own free lists under its lock; it takes
    // a plain integer (the padding to keep) and touches no memory the program owns.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Limits malloc to one arena, unless the user set the limit themselves (`MALLOC_ARENA_MAX`
/// or a `glibc.malloc.arena_max` tunable). Must run before any other thread starts.
pub(crate) fn use_one_arena() {
    let tunables = std::env::var("GLIBC_TUNABLES").unwrap_or_default();
    if std::env::var_os("MALLOC_ARENA_MAX").is_some() || tunables.contains("arena_max") {
        return;
    }
    // SAFETY: `mallopt` only changes a setting of glibc's allocator; it takes plain integers,
    // and this runs at the top of `main`, before the runtime or any other thread exists.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 1);
    }
}
