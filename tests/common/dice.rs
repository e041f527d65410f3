//! A small deterministic generator for tests that pick random moments or offsets: seeded
//! from the clock unless a seed is given, and the seed goes in every failure message, so a
//! failure can be replayed.

use std::time::{SystemTime, UNIX_EPOCH};

/// A linear congruential generator: plenty for picking offsets, and the same on every run
/// with the same seed.
pub(crate) struct Dice(u64);

impl Dice {
    /// Seeded from `$var` when set (to replay a failure), else from the clock; the seed is
    /// returned for the test's failure messages.
    pub(crate) fn from_env(var: &str) -> (Dice, u64) {
        let seed = std::env::var(var)
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| {
                SystemTime::now()
                    .duration_since(UNIX_EPOCH)
                    .map_or(1, |d| d.as_nanos() as u64)
            });
        (Dice(seed), seed)
    }

    /// A number in `0..n` (0 when `n` is 0).
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 33) % n.max(1)
    }
}
