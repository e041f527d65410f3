//! Summaries of a list of transactions.

use std::collections::BTreeMap;

use crate::parse::Txn;

/// Net amount per category, in cents.
pub fn totals_by_category(txns: &[Txn]) -> BTreeMap<String, i64> {
    let mut totals = BTreeMap::new();
    for t in txns {
        *totals.entry(t.category.clone()).or_insert(0) += t.amount_cents;
    }
    totals
}

/// Net amount per `(year, month)`, in cents.
pub fn monthly_net(txns: &[Txn]) -> BTreeMap<(i32, u32), i64> {
    let mut net = BTreeMap::new();
    for t in txns {
        *net.entry((t.date.year, t.date.month)).or_insert(0) += t.amount_cents;
    }
    net
}

/// The expense with the largest absolute amount (the earliest one on a tie).
pub fn largest_expense(txns: &[Txn]) -> Option<&Txn> {
    txns.iter()
        .filter(|t| t.is_expense())
        .fold(None, |best: Option<&Txn>, t| match best {
            Some(b) if b.amount_cents <= t.amount_cents => Some(b),
            _ => Some(t),
        })
}
