//! A very small leveled logger that writes one line per record to any [`std::io::Write`].

mod level;
mod style;

use std::io::{self, Write};

pub use level::Level;

/// Formats one record as it is written: the level label, a space, the message.
pub fn format_line(level: Level, message: &str) -> String {
    format!("{} {}", style::level_label(level), message)
}

/// Writes records at or above a minimum level.
pub struct Logger<W: Write> {
    out: W,
    min: Level,
}

impl<W: Write> Logger<W> {
    /// A logger writing to `out` that drops records below `min`.
    pub fn new(out: W, min: Level) -> Self {
        Logger { out, min }
    }

    /// Writes `message` if `level` is at least the minimum.
    pub fn log(&mut self, level: Level, message: &str) -> io::Result<()> {
        if level < self.min {
            return Ok(());
        }
        writeln!(self.out, "{}", format_line(level, message))
    }

    /// Gives back the writer.
    pub fn into_inner(self) -> W {
        self.out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filters_by_level() {
        let mut log = Logger::new(Vec::new(), Level::Info);
        log.log(Level::Debug, "hidden").unwrap();
        log.log(Level::Error, "shown").unwrap();
        let text = String::from_utf8(log.into_inner()).unwrap();
        assert_eq!(text.lines().count(), 1);
        assert!(text.contains("shown"));
    }
}
