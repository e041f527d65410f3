use std::path::Path;

use ledger::transaction::Transaction;
use ledger::{largest_expense, monthly_net, parse_ledger, parse_line, totals_by_category, Date};

#[test]
fn root_and_module_paths_name_the_same_type() {
    let t: Transaction = parse_line("2024-05-06 | Books | Paper Lane | -19.99", 3).unwrap();
    let same: ledger::Transaction = t.clone();
    assert_eq!(same, t);
}

#[test]
fn behaviour_is_unchanged() {
    let text = "2024-05-01 | salary | Acme | 100\n# note\n2024-05-02 | Books | Paper Lane | -19.99\n2024-06-02 | books | Paper Lane | -5\n";
    let txns: Vec<Transaction> = parse_ledger(text).unwrap();
    assert_eq!(txns.len(), 3);
    let t = &txns[1];
    assert_eq!(t.date, Date { year: 2024, month: 5, day: 2 });
    assert_eq!(t.category, "books");
    assert_eq!(t.payee, "Paper Lane");
    assert_eq!(t.amount_cents, -1999);
    assert!(t.is_expense());
    assert_eq!(t.to_string(), "2024-05-02 | books | Paper Lane | -19.99");
    assert_eq!(totals_by_category(&txns)["books"], -2499);
    assert_eq!(monthly_net(&txns)[&(2024, 5)], 10000 - 1999);
    let biggest: &Transaction = largest_expense(&txns).unwrap();
    assert_eq!(biggest.amount_cents, -1999);
    assert!(parse_line("2024-05-02 | a | b", 9).is_err());
}

#[test]
fn can_be_built_directly() {
    let t = Transaction {
        date: Date::parse("2024-01-31").unwrap(),
        category: "fees".to_string(),
        payee: "Bank".to_string(),
        amount_cents: -300,
    };
    assert_eq!(t.to_string(), "2024-01-31 | fees | Bank | -3.00");
}

#[test]
fn definition_lives_in_the_transaction_module() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let file = ["src/transaction.rs", "src/transaction/mod.rs"]
        .iter()
        .map(|p| root.join(p))
        .find(|p| p.exists())
        .expect("a src/transaction.rs (or src/transaction/mod.rs) module file");
    let text = std::fs::read_to_string(file).unwrap();
    assert!(text.contains("struct Transaction"), "Transaction should be defined in the transaction module");
    let parse = std::fs::read_to_string(root.join("src/parse.rs")).unwrap_or_default();
    assert!(!parse.contains("struct Txn") && !parse.contains("struct Transaction"),
        "the struct should no longer be defined in parse.rs");
}
