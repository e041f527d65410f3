use railnet::{find, find_by_name, zones_crossed, STATIONS};

#[test]
fn hlw_is_hollins_wharf() {
    let s = find("HLW").expect("HLW");
    assert_eq!(s.name, "Hollins Wharf");
    assert_eq!((s.zone, s.platforms), (3, 5));
}

#[test]
fn ashdown_vale_has_the_free_code_between_its_neighbours() {
    let s = find_by_name("Ashdown Vale").expect("Ashdown Vale is still in the register");
    assert_eq!(s.code, "HLV");
    assert_eq!((s.zone, s.platforms), (4, 2));
    assert_eq!(find("hlv").map(|s| s.name), Some("Ashdown Vale"));
    assert_eq!(zones_crossed("HLV", "HLW"), Some(1));
}

#[test]
fn register_is_sorted_with_one_entry_per_code() {
    for pair in STATIONS.windows(2) {
        assert!(pair[0].code < pair[1].code, "{} then {}", pair[0].code, pair[1].code);
    }
    for s in STATIONS {
        assert!(s.code.len() == 3 && s.code.bytes().all(|b| b.is_ascii_uppercase()), "{}", s.code);
    }
}

#[test]
fn no_station_lost_or_changed() {
    assert_eq!(STATIONS.len(), 3200);
    let platforms: u32 = STATIONS.iter().map(|s| s.platforms as u32).sum();
    assert_eq!(platforms, 13431);
    let zone_counts: Vec<usize> =
        (1..=6).map(|z| STATIONS.iter().filter(|s| s.zone == z).count()).collect();
    assert_eq!(zone_counts, [539, 814, 753, 564, 261, 269]);
    let mut names: Vec<&str> = STATIONS.iter().map(|s| s.name).collect();
    names.sort();
    names.dedup();
    assert_eq!(names.len(), 3200);
    assert_eq!(find("HLU").map(|s| s.name), Some("Penborough Town"));
    assert_eq!(find("HLX").map(|s| s.name), Some("Sutly"));
}
