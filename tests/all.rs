//! The one integration test binary: every suite drives the real `tandem` binary over stdio.
// The driver runs on Unix (signals, process groups, POSIX shell lines). The Windows binary is
// driven from here too, under wine (suite::windows); the driver is not built on Windows.
#![cfg(unix)]
// Test code fails loudly on purpose.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
mod suite;
