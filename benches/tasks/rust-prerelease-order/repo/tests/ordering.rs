use vercmp::{latest_release, Version};

fn v(s: &str) -> Version {
    s.parse().unwrap()
}

#[test]
fn release_candidates_sort_in_order() {
    // Reported from the release dashboard: rc.10 was listed before rc.9.
    let mut versions = vec![v("3.2.0-rc.10"), v("3.2.0-rc.9"), v("3.2.0-rc.1")];
    versions.sort();
    let shown: Vec<String> = versions.iter().map(|v| v.to_string()).collect();
    assert_eq!(shown, ["3.2.0-rc.1", "3.2.0-rc.9", "3.2.0-rc.10"]);
}

#[test]
fn latest_release_skips_prereleases() {
    let versions = [v("1.2.0"), v("1.3.0-beta.1"), v("1.2.5")];
    assert_eq!(latest_release(&versions), Some(&v("1.2.5")));
}
