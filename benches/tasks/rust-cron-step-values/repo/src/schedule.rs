//! A whole five-field expression.

use std::fmt;

use crate::field::{Field, ParseError};

/// A point in time, broken into the parts cron looks at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Moment {
    pub minute: u32,
    pub hour: u32,
    /// Day of the month, 1-31.
    pub day: u32,
    /// Month, 1-12.
    pub month: u32,
    /// Day of the week, 0 (Sunday) to 6.
    pub weekday: u32,
}

/// Why an expression was rejected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScheduleError {
    /// Not exactly five whitespace-separated fields.
    FieldCount(usize),
    /// A field failed to parse; `field` names it ("minute", "hour", ...).
    Field { field: &'static str, error: ParseError },
}

impl fmt::Display for ScheduleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ScheduleError::FieldCount(n) => write!(f, "expected 5 fields, found {n}"),
            ScheduleError::Field { field, error } => write!(f, "{field}: {error}"),
        }
    }
}

impl std::error::Error for ScheduleError {}

/// A parsed cron expression.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Schedule {
    pub minute: Field,
    pub hour: Field,
    pub day: Field,
    pub month: Field,
    pub weekday: Field,
}

const FIELDS: [(&str, u32, u32); 5] = [
    ("minute", 0, 59),
    ("hour", 0, 23),
    ("day", 1, 31),
    ("month", 1, 12),
    ("weekday", 0, 6),
];

impl Schedule {
    /// Parses `minute hour day-of-month month day-of-week`.
    pub fn parse(expr: &str) -> Result<Schedule, ScheduleError> {
        let parts: Vec<&str> = expr.split_whitespace().collect();
        if parts.len() != FIELDS.len() {
            return Err(ScheduleError::FieldCount(parts.len()));
        }
        let mut fields = Vec::with_capacity(5);
        for (spec, (name, min, max)) in parts.iter().zip(FIELDS) {
            let field = Field::parse(spec, min, max)
                .map_err(|error| ScheduleError::Field { field: name, error })?;
            fields.push(field);
        }
        Ok(Schedule {
            minute: fields[0],
            hour: fields[1],
            day: fields[2],
            month: fields[3],
            weekday: fields[4],
        })
    }

    /// Whether `t` matches. As in classic cron, when both day-of-month and day-of-week
    /// are restricted, a day matching either one is enough.
    pub fn matches(&self, t: &Moment) -> bool {
        let day_ok = match (self.day.is_every(), self.weekday.is_every()) {
            (false, false) => self.day.contains(t.day) || self.weekday.contains(t.weekday),
            _ => self.day.contains(t.day) && self.weekday.contains(t.weekday),
        };
        self.minute.contains(t.minute)
            && self.hour.contains(t.hour)
            && self.month.contains(t.month)
            && day_ok
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(minute: u32, hour: u32, day: u32, month: u32, weekday: u32) -> Moment {
        Moment { minute, hour, day, month, weekday }
    }

    #[test]
    fn weekday_office_hours() {
        let s = Schedule::parse("0,30 9-17 * * 1-5").unwrap();
        assert!(s.matches(&at(30, 9, 3, 6, 2)));
        assert!(!s.matches(&at(15, 9, 3, 6, 2)));
        assert!(!s.matches(&at(0, 18, 3, 6, 2)));
        assert!(!s.matches(&at(0, 10, 7, 6, 0)));
    }

    #[test]
    fn day_or_weekday() {
        let s = Schedule::parse("0 0 1 * 0").unwrap();
        assert!(s.matches(&at(0, 0, 1, 3, 4)));
        assert!(s.matches(&at(0, 0, 9, 3, 0)));
        assert!(!s.matches(&at(0, 0, 9, 3, 4)));
    }

    #[test]
    fn errors_name_the_field() {
        assert_eq!(Schedule::parse("* * *"), Err(ScheduleError::FieldCount(3)));
        assert!(matches!(
            Schedule::parse("* 24 * * *"),
            Err(ScheduleError::Field { field: "hour", .. })
        ));
    }
}
