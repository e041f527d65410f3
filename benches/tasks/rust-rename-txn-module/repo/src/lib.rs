//! A plain-text household ledger: parse entries and build reports from them.

pub mod date;
pub mod money;
pub mod parse;
pub mod report;

pub use date::Date;
pub use parse::{parse_ledger, parse_line, ParseError, Txn};
pub use report::{largest_expense, monthly_net, totals_by_category};
