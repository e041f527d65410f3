//! The one integration test binary: every suite drives the real `tandem` binary over stdio.
// Test code fails loudly on purpose.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
mod suite;
