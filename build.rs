//! How the tandem binary is linked, where the target allows it.
//!
//! Relative relocations packed (`-z pack-relative-relocs`, the `DT_RELR` format): a
//! position-independent Linux binary carries one 24-byte entry per pointer the loader must
//! adjust at start, about 72,000 of them (1.7 MB of the 24 MB binary). Packed, they take
//! 18 KB, and start-up no longer reads and faults in the 1.7 MB: idle RSS 17.6 → 16.0 MiB,
//! `session/new` 1.07× faster (docs/benchmarks.md). The loader must understand the format:
//!
//! - static musl builds (the released Linux archives) relocate themselves with musl's own
//!   start code, which does;
//! - glibc does from 2.36 on, and a binary that needs it says so (the `GLIBC_ABI_DT_RELR`
//!   version), so it is packed only when built for the machine that builds it and that
//!   machine's glibc is 2.36 or later: a build never makes a binary its own system cannot run;
//! - zig's linker driver (cargo-zigbuild, used for some cross builds) refuses the option, so
//!   those builds keep the plain format.

// Cargo reads its instructions from this script's standard output.
#![allow(clippy::print_stdout)]

use std::env;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=RUSTC_LINKER");
    if pack_relative_relocs() {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
}

fn pack_relative_relocs() -> bool {
    let var = |name: &str| env::var(name).unwrap_or_default();
    if var("CARGO_CFG_TARGET_OS") != "linux" || var("RUSTC_LINKER").contains("zig") {
        return false;
    }
    match var("CARGO_CFG_TARGET_ENV").as_str() {
        "musl" => true,
        "gnu" => var("HOST") == var("TARGET") && host_glibc_at_least(2, 36),
        _ => false,
    }
}

/// Whether the glibc this build script runs on is `major.minor` or later.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[allow(unsafe_code)]
fn host_glibc_at_least(major: u32, minor: u32) -> bool {
    unsafe extern "C" {
        fn gnu_get_libc_version() -> *const std::ffi::c_char;
    }
    // SAFETY: glibc returns a static, NUL-terminated string such as "2.36".
    let version = unsafe { std::ffi::CStr::from_ptr(gnu_get_libc_version()) };
    let mut parts = version
        .to_str()
        .unwrap_or_default()
        .split('.')
        .map(|p| p.parse::<u32>().unwrap_or(0));
    let found = (parts.next().unwrap_or(0), parts.next().unwrap_or(0));
    found >= (major, minor)
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn host_glibc_at_least(_major: u32, _minor: u32) -> bool {
    false
}
