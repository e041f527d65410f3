use std::cmp::Ordering;
use vercmp::Version;

fn v(s: &str) -> Version {
    Version::parse(s).unwrap()
}

#[test]
fn numeric_identifiers_compare_as_numbers() {
    assert!(v("1.0.0-rc.9") < v("1.0.0-rc.10"));
    assert!(v("1.0.0-alpha.2") < v("1.0.0-alpha.11"));
    assert!(v("1.0.0-2") < v("1.0.0-10"));
    assert!(v("1.0.0-100") > v("1.0.0-99"));
    assert!(v("0.1.0-7.beta") < v("0.1.0-12.alpha"));
    assert_eq!(v("1.0.0-rc.10").cmp(&v("1.0.0-rc.10")), Ordering::Equal);
}

#[test]
fn numeric_identifiers_sort_below_alphanumeric() {
    assert!(v("1.0.0-alpha.1") < v("1.0.0-alpha.beta"));
    assert!(v("1.0.0-999") < v("1.0.0-a"));
    assert!(v("1.0.0-rc.1") < v("1.0.0-rc.1a"));
}

#[test]
fn full_precedence_chain() {
    let chain = [
        "1.0.0-alpha",
        "1.0.0-alpha.1",
        "1.0.0-alpha.beta",
        "1.0.0-beta",
        "1.0.0-beta.2",
        "1.0.0-beta.11",
        "1.0.0-rc.1",
        "1.0.0",
        "1.0.1-rc.3",
        "1.0.1",
        "1.10.0-rc.2",
        "1.10.0-rc.12",
        "1.10.0",
    ];
    for pair in chain.windows(2) {
        assert!(v(pair[0]) < v(pair[1]), "{} should sort before {}", pair[0], pair[1]);
        assert!(v(pair[1]) > v(pair[0]), "{} should sort after {}", pair[1], pair[0]);
    }
    let mut shuffled: Vec<Version> = chain.iter().rev().map(|s| v(s)).collect();
    shuffled.swap(0, 5);
    shuffled.swap(3, 9);
    shuffled.sort();
    let sorted: Vec<String> = shuffled.iter().map(|v| v.to_string()).collect();
    assert_eq!(sorted, chain);
}

#[test]
fn alphanumeric_identifiers_still_compare_lexically() {
    assert!(v("1.0.0-alpha") < v("1.0.0-beta"));
    assert!(v("1.0.0-Beta") < v("1.0.0-alpha")); // ASCII order: uppercase first
    assert!(v("1.0.0-x10") < v("1.0.0-x9"));
}

#[test]
fn build_metadata_still_ignored_for_precedence() {
    assert_eq!(v("1.0.0-rc.10+b1").cmp_precedence(&v("1.0.0-rc.10+b2")), Ordering::Equal);
    assert_eq!(v("1.0.0-rc.9+zzz").cmp_precedence(&v("1.0.0-rc.10+aaa")), Ordering::Less);
}

#[test]
fn leading_zeros_still_rejected() {
    assert!(Version::parse("1.0.0-rc.01").is_err());
    assert!(Version::parse("1.0.0-rc.0").is_ok());
}
