use cronspec::{Field, Moment, Schedule};

fn values(spec: &str, min: u32, max: u32) -> Vec<u32> {
    Field::parse(spec, min, max)
        .unwrap_or_else(|e| panic!("`{spec}` should parse, got {e:?}"))
        .values()
}

#[test]
fn star_with_step() {
    assert_eq!(values("*/15", 0, 59), vec![0, 15, 30, 45]);
    assert_eq!(values("*/6", 0, 23), vec![0, 6, 12, 18]);
    assert_eq!(values("*/1", 0, 6), vec![0, 1, 2, 3, 4, 5, 6]);
}

#[test]
fn star_step_starts_at_field_minimum() {
    assert_eq!(values("*/10", 1, 31), vec![1, 11, 21, 31]);
    assert_eq!(values("*/3", 1, 12), vec![1, 4, 7, 10]);
}

#[test]
fn range_with_step() {
    assert_eq!(values("10-40/10", 0, 59), vec![10, 20, 30, 40]);
    assert_eq!(values("5-10/2", 0, 59), vec![5, 7, 9]);
    assert_eq!(values("8-18/2", 0, 23), vec![8, 10, 12, 14, 16, 18]);
    assert_eq!(values("3-3/5", 0, 59), vec![3]);
}

#[test]
fn steps_inside_lists() {
    assert_eq!(values("0-10/5,30", 0, 59), vec![0, 5, 10, 30]);
    assert_eq!(values("1,*/20", 0, 59), vec![0, 1, 20, 40]);
    assert_eq!(values("0-6/3,20-30/5", 0, 59), vec![0, 3, 6, 20, 25, 30]);
}

#[test]
fn contains_agrees_with_values() {
    let f = Field::parse("*/15", 0, 59).unwrap();
    assert!(f.contains(45));
    assert!(!f.contains(44));
    assert!(!f.is_every());
    assert!(Field::parse("*/1", 0, 59).unwrap().is_every());
}

#[test]
fn bad_steps_are_errors() {
    for spec in ["*/0", "1-10/0", "*/x", "*/", "1-5/", "/5", "*/15/2", "*/-1", "*/1.5"] {
        assert!(Field::parse(spec, 0, 59).is_err(), "`{spec}` should be rejected");
    }
}

#[test]
fn existing_errors_still_reported() {
    assert!(Field::parse("17-9/2", 0, 23).is_err());
    assert!(Field::parse("0-60/5", 0, 59).is_err());
    assert!(Field::parse("", 0, 59).is_err());
    assert_eq!(Field::parse("1,5-7", 0, 59).unwrap().values(), vec![1, 5, 6, 7]);
}

#[test]
fn schedule_with_steps() {
    let s = Schedule::parse("*/15 9-17/4 * * 1-5").unwrap();
    let at = |minute, hour, weekday| Moment { minute, hour, day: 10, month: 4, weekday };
    assert!(s.matches(&at(30, 13, 2)));
    assert!(s.matches(&at(0, 9, 1)));
    assert!(s.matches(&at(45, 17, 5)));
    assert!(!s.matches(&at(31, 13, 2)));
    assert!(!s.matches(&at(30, 11, 2)));
    assert!(!s.matches(&at(30, 13, 6)));
    assert!(Schedule::parse("*/0 * * * *").is_err());
}
