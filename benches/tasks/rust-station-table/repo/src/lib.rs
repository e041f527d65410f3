//! The network's station register: look stations up by code or name, and work out fare
//! zones between them.

mod stations;

pub use stations::STATIONS;

/// One station.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Station {
    /// Three-letter code, upper case, unique.
    pub code: &'static str,
    pub name: &'static str,
    /// Fare zone, 1 (centre) to 6.
    pub zone: u8,
    pub platforms: u8,
}

/// The station with this code (case-insensitive).
pub fn find(code: &str) -> Option<&'static Station> {
    // A linear scan of a few thousand entries is well under a microsecond's worry.
    STATIONS.iter().find(|s| s.code.eq_ignore_ascii_case(code))
}

/// The station with this name (case-insensitive, surrounding spaces ignored).
pub fn find_by_name(name: &str) -> Option<&'static Station> {
    let name = name.trim();
    STATIONS.iter().find(|s| s.name.eq_ignore_ascii_case(name))
}

/// Every station in `zone`, in code order.
pub fn in_zone(zone: u8) -> impl Iterator<Item = &'static Station> {
    STATIONS.iter().filter(move |s| s.zone == zone)
}

/// How many fare zones a trip between two stations crosses (0 within one zone), or `None`
/// if either code is unknown.
pub fn zones_crossed(from: &str, to: &str) -> Option<u8> {
    let a = find(from)?;
    let b = find(to)?;
    Some(a.zone.abs_diff(b.zone))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookups() {
        let s = find_by_name("  hollins wharf ").unwrap();
        assert_eq!(s.zone, 3);
        assert_eq!(find("hlx"), find("HLX"));
        assert_eq!(find("hlx").map(|s| s.name), Some("Sutly"));
    }

    #[test]
    fn zones() {
        assert!((1..=6).all(|z| in_zone(z).count() > 100));
        assert_eq!(in_zone(7).count(), 0);
        assert_eq!(zones_crossed("HLX", "HLU"), Some(1));
        assert_eq!(zones_crossed("HLX", "???"), None);
    }
}
