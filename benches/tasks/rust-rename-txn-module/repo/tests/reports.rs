use ledger::{largest_expense, monthly_net, parse_ledger, totals_by_category, Txn};

const SAMPLE: &str = "\
# date     | category  | payee          | amount
2024-03-01 | salary    | Acme Corp      | 3200.00
2024-03-02 | groceries | Fresh Market   | -42.17
2024-03-09 | groceries | Fresh Market   | -58.40
2024-03-15 | rent      | Oak Lettings   | -1150
2024-04-01 | salary    | Acme Corp      | 3200.00
2024-04-03 | Groceries | Corner Shop    | -12.05
";

fn sample() -> Vec<Txn> {
    parse_ledger(SAMPLE).expect("sample parses")
}

#[test]
fn totals_per_category() {
    let totals = totals_by_category(&sample());
    assert_eq!(totals["groceries"], -11262);
    assert_eq!(totals["rent"], -115000);
    assert_eq!(totals["salary"], 640000);
}

#[test]
fn net_per_month() {
    let net = monthly_net(&sample());
    assert_eq!(net[&(2024, 3)], 320000 - 4217 - 5840 - 115000);
    assert_eq!(net[&(2024, 4)], 320000 - 1205);
}

#[test]
fn biggest_expense_is_rent() {
    let txns = sample();
    let t: &Txn = largest_expense(&txns).unwrap();
    assert_eq!(t.payee, "Oak Lettings");
}
