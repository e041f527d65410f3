//! Five-field cron expressions: parse them and test times against them.

mod field;
mod schedule;

pub use field::{Field, ParseError};
pub use schedule::{Moment, Schedule, ScheduleError};
