//! ANSI colours for level labels.

use crate::Level;

const RESET: &str = "\x1b[0m";

fn color_code(level: Level) -> &'static str {
    match level {
        Level::Trace => "\x1b[90m",
        Level::Debug => "\x1b[36m",
        Level::Info => "\x1b[32m",
        Level::Warn => "\x1b[33m",
        Level::Error => "\x1b[1;31m",
    }
}

/// The level's label, coloured for a terminal.
pub(crate) fn level_label(level: Level) -> String {
    format!("{}{}{}", color_code(level), level.as_str(), RESET)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warn_is_yellow() {
        assert_eq!(level_label(Level::Warn), "\x1b[33mWARN\x1b[0m");
    }
}
