//! The address blocks web_fetch never reaches, row by row from IANA's IPv4 and IPv6
//! Special-Purpose Address Registries, the multicast blocks, and the IPv6 space IANA has not
//! allocated for global unicast (everything outside 2000::/3), each with its name, where it is
//! defined, and why it is refused, in words the model is told (guard.rs judges with them).
//!
//! A block is refused when the registry says it is not globally reachable, and also, where the
//! registry says it is, when it is anycast (the instance that answers is the nearest one, and
//! for Port Control Protocol, TURN, DNS-SD, AS112 and AMT that is often on the user's own
//! network: the PCP anycast address is the user's own router by design), when it holds
//! identifiers the internet does not route to (ORCHIDv2, DETs), or when it is a tunnel whose
//! far end cannot be judged (Teredo). Addresses that carry an IPv4 address the system or a
//! gateway will connect to (IPv4-mapped, NAT64's 64:ff9b::/96, 6to4) are judged by the
//! address they carry instead.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Why a block is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Why {
    /// The registry says it is not globally reachable.
    NotGlobal,
    /// Anycast: answered by the nearest instance, which may be on the user's network.
    Anycast,
    /// Identifiers, not addresses the internet routes to.
    Identifiers,
    /// A tunnel whose ends are hidden in the address.
    Tunnel,
    /// Multicast: a group, not one host.
    Multicast,
    /// IPv6 outside 2000::/3, which IANA has not allocated for global unicast.
    Unallocated,
}

impl fmt::Display for Why {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Why::NotGlobal => "which IANA lists as not globally reachable",
            Why::Anycast => {
                "an anycast block: whichever server is nearest answers, and that may be one on \
                 the user's own network"
            }
            Why::Identifiers => "identifiers the internet does not route to",
            Why::Tunnel => {
                "a tunnel whose IPv4 ends are hidden in the address, so where it leads cannot \
                 be judged"
            }
            Why::Multicast => "multicast, a group rather than one host",
            Why::Unallocated => {
                "outside 2000::/3, the only IPv6 space IANA allocates for global unicast"
            }
        })
    }
}

/// One refused block: a registry row (or a multicast or unallocated block).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Block {
    /// Its first address.
    pub(crate) net: IpAddr,
    /// Its prefix length.
    pub(crate) len: u8,
    /// Its name in the registry.
    pub(crate) name: &'static str,
    /// Where it is defined.
    pub(crate) rfc: &'static str,
    /// Why it is refused.
    pub(crate) why: Why,
}

impl Block {
    /// Whether `ip` is in the block.
    pub(crate) fn contains(&self, ip: IpAddr) -> bool {
        match (self.net, ip) {
            (IpAddr::V4(net), IpAddr::V4(ip)) => {
                let shift = 32 - u32::from(self.len);
                u32::from(net).checked_shr(shift) == u32::from(ip).checked_shr(shift)
            }
            (IpAddr::V6(net), IpAddr::V6(ip)) => {
                let shift = 128 - u32::from(self.len);
                u128::from(net).checked_shr(shift) == u128::from(ip).checked_shr(shift)
            }
            _ => false,
        }
    }

    /// Its last address.
    #[cfg(test)]
    pub(crate) fn last(&self) -> IpAddr {
        match self.net {
            IpAddr::V4(net) => {
                let host = u32::MAX.checked_shr(u32::from(self.len)).unwrap_or(0);
                IpAddr::V4(Ipv4Addr::from(u32::from(net) | host))
            }
            IpAddr::V6(net) => {
                let host = u128::MAX.checked_shr(u32::from(self.len)).unwrap_or(0);
                IpAddr::V6(Ipv6Addr::from(u128::from(net) | host))
            }
        }
    }
}

impl fmt::Display for Block {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "in {}/{} ({}, {}), {}",
            self.net, self.len, self.name, self.rfc, self.why
        )
    }
}

const fn v4(a: [u8; 4], len: u8, name: &'static str, rfc: &'static str, why: Why) -> Block {
    Block {
        net: IpAddr::V4(Ipv4Addr::new(a[0], a[1], a[2], a[3])),
        len,
        name,
        rfc,
        why,
    }
}

const fn v6(s: [u16; 8], len: u8, name: &'static str, rfc: &'static str, why: Why) -> Block {
    Block {
        net: IpAddr::V6(Ipv6Addr::new(
            s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7],
        )),
        len,
        name,
        rfc,
        why,
    }
}

use Why::{Anycast, Identifiers, Multicast, NotGlobal, Tunnel, Unallocated};

/// The IPv4 Special-Purpose Address Registry, every row, and multicast.
#[rustfmt::skip]
pub(crate) const IPV4: &[Block] = &[
    v4([0, 0, 0, 0], 8, "\"This network\"", "RFC 791", NotGlobal),
    v4([0, 0, 0, 0], 32, "\"This host on this network\"", "RFC 1122", NotGlobal),
    v4([10, 0, 0, 0], 8, "Private-Use", "RFC 1918", NotGlobal),
    v4([100, 64, 0, 0], 10, "Shared Address Space, carrier-grade NAT", "RFC 6598", NotGlobal),
    v4([127, 0, 0, 0], 8, "Loopback", "RFC 1122", NotGlobal),
    v4([169, 254, 0, 0], 16, "Link Local", "RFC 3927", NotGlobal),
    v4([172, 16, 0, 0], 12, "Private-Use", "RFC 1918", NotGlobal),
    v4([192, 0, 0, 0], 24, "IETF Protocol Assignments", "RFC 6890", NotGlobal),
    v4([192, 0, 0, 0], 29, "IPv4 Service Continuity Prefix", "RFC 7335", NotGlobal),
    v4([192, 0, 0, 8], 32, "IPv4 dummy address", "RFC 7600", NotGlobal),
    v4([192, 0, 0, 9], 32, "Port Control Protocol Anycast", "RFC 7723", Anycast),
    v4([192, 0, 0, 10], 32, "Traversal Using Relays around NAT Anycast", "RFC 8155", Anycast),
    v4([192, 0, 0, 170], 32, "NAT64/DNS64 Discovery", "RFC 8880", NotGlobal),
    v4([192, 0, 0, 171], 32, "NAT64/DNS64 Discovery", "RFC 8880", NotGlobal),
    v4([192, 0, 2, 0], 24, "Documentation (TEST-NET-1)", "RFC 5737", NotGlobal),
    v4([192, 31, 196, 0], 24, "AS112-v4", "RFC 7535", Anycast),
    v4([192, 52, 193, 0], 24, "AMT", "RFC 7450", Anycast),
    v4([192, 88, 99, 0], 24, "Deprecated (6to4 Relay Anycast)", "RFC 7526", Anycast),
    v4([192, 168, 0, 0], 16, "Private-Use", "RFC 1918", NotGlobal),
    v4([192, 175, 48, 0], 24, "Direct Delegation AS112 Service", "RFC 7534", Anycast),
    v4([198, 18, 0, 0], 15, "Benchmarking", "RFC 2544", NotGlobal),
    v4([198, 51, 100, 0], 24, "Documentation (TEST-NET-2)", "RFC 5737", NotGlobal),
    v4([203, 0, 113, 0], 24, "Documentation (TEST-NET-3)", "RFC 5737", NotGlobal),
    v4([224, 0, 0, 0], 4, "Multicast", "RFC 5771", Multicast),
    v4([240, 0, 0, 0], 4, "Reserved", "RFC 1112", NotGlobal),
    v4([255, 255, 255, 255], 32, "Limited Broadcast", "RFC 919", NotGlobal),
];

/// The IPv6 Special-Purpose Address Registry, every row but the three that carry an IPv4
/// address (`carried`), multicast, and the space outside 2000::/3.
#[rustfmt::skip]
pub(crate) const IPV6: &[Block] = &[
    v6([0, 0, 0, 0, 0, 0, 0, 1], 128, "Loopback Address", "RFC 4291", NotGlobal),
    v6([0, 0, 0, 0, 0, 0, 0, 0], 128, "Unspecified Address", "RFC 4291", NotGlobal),
    v6([0, 0, 0, 0, 0, 0, 0, 0], 96, "IPv4-compatible, deprecated", "RFC 4291", Unallocated),
    v6([0x64, 0xff9b, 1, 0, 0, 0, 0, 0], 48, "Local-use IPv4/IPv6 Translation", "RFC 8215", NotGlobal),
    v6([0x100, 0, 0, 0, 0, 0, 0, 0], 64, "Discard-Only Address Block", "RFC 6666", NotGlobal),
    v6([0x100, 0, 0, 1, 0, 0, 0, 0], 64, "Dummy IPv6 Prefix", "RFC 9780", NotGlobal),
    v6([0x2001, 0, 0, 0, 0, 0, 0, 0], 23, "IETF Protocol Assignments", "RFC 2928", NotGlobal),
    v6([0x2001, 0, 0, 0, 0, 0, 0, 0], 32, "TEREDO", "RFC 4380", Tunnel),
    v6([0x2001, 1, 0, 0, 0, 0, 0, 1], 128, "Port Control Protocol Anycast", "RFC 7723", Anycast),
    v6([0x2001, 1, 0, 0, 0, 0, 0, 2], 128, "Traversal Using Relays around NAT Anycast", "RFC 8155", Anycast),
    v6([0x2001, 1, 0, 0, 0, 0, 0, 3], 128, "DNS-SD Service Registration Protocol Anycast", "RFC 9665", Anycast),
    v6([0x2001, 2, 0, 0, 0, 0, 0, 0], 48, "Benchmarking", "RFC 5180", NotGlobal),
    v6([0x2001, 3, 0, 0, 0, 0, 0, 0], 32, "AMT", "RFC 7450", Anycast),
    v6([0x2001, 4, 0x112, 0, 0, 0, 0, 0], 48, "AS112-v6", "RFC 7535", Anycast),
    v6([0x2001, 0x10, 0, 0, 0, 0, 0, 0], 28, "Deprecated (previously ORCHID)", "RFC 4843", NotGlobal),
    v6([0x2001, 0x20, 0, 0, 0, 0, 0, 0], 28, "ORCHIDv2", "RFC 7343", Identifiers),
    v6([0x2001, 0x30, 0, 0, 0, 0, 0, 0], 28, "Drone Remote ID Protocol Entity Tags (DETs) Prefix", "RFC 9374", Identifiers),
    v6([0x2001, 0xdb8, 0, 0, 0, 0, 0, 0], 32, "Documentation", "RFC 3849", NotGlobal),
    v6([0x2620, 0x4f, 0x8000, 0, 0, 0, 0, 0], 48, "Direct Delegation AS112 Service", "RFC 7534", Anycast),
    v6([0x3fff, 0, 0, 0, 0, 0, 0, 0], 20, "Documentation", "RFC 9637", NotGlobal),
    v6([0x5f00, 0, 0, 0, 0, 0, 0, 0], 16, "Segment Routing (SRv6) SIDs", "RFC 9602", NotGlobal),
    v6([0xfc00, 0, 0, 0, 0, 0, 0, 0], 7, "Unique-Local", "RFC 4193", NotGlobal),
    v6([0xfe80, 0, 0, 0, 0, 0, 0, 0], 10, "Link-Local Unicast", "RFC 4291", NotGlobal),
    v6([0xfec0, 0, 0, 0, 0, 0, 0, 0], 10, "Site-Local, deprecated", "RFC 3879", Unallocated),
    v6([0xff00, 0, 0, 0, 0, 0, 0, 0], 8, "Multicast", "RFC 4291", Multicast),
    v6([0, 0, 0, 0, 0, 0, 0, 0], 3, "Reserved by the IETF", "RFC 4291", Unallocated),
    v6([0x4000, 0, 0, 0, 0, 0, 0, 0], 2, "Reserved by the IETF", "RFC 4291", Unallocated),
    v6([0x8000, 0, 0, 0, 0, 0, 0, 0], 1, "Reserved by the IETF", "RFC 4291", Unallocated),
];

/// How an IPv6 address carries an IPv4 one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Carrier {
    /// `::ffff:a.b.c.d` (::ffff:0:0/96): the system connects to the IPv4 address itself.
    Mapped,
    /// `64:ff9b::a.b.c.d` (64:ff9b::/96, RFC 6052): a NAT64 gateway connects to it.
    Nat64,
    /// `2002:aabb:ccdd::/48` (2002::/16, RFC 3056): a 6to4 relay tunnels to it.
    SixToFour,
}

impl fmt::Display for Carrier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Carrier::Mapped => "an IPv4-mapped address (::ffff:0:0/96)",
            Carrier::Nat64 => "a NAT64 address (64:ff9b::/96)",
            Carrier::SixToFour => "a 6to4 address (2002::/16)",
        })
    }
}

/// The IPv4 address `ip` carries, and how, if it is one of the forms a connection to it
/// reaches the IPv4 address by.
pub(crate) fn carried(ip: Ipv6Addr) -> Option<(Carrier, Ipv4Addr)> {
    let s = ip.segments();
    let of = |hi: u16, lo: u16| Ipv4Addr::from((u32::from(hi) << 16) | u32::from(lo));
    if let Some(v4) = ip.to_ipv4_mapped() {
        Some((Carrier::Mapped, v4))
    } else if s[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        Some((Carrier::Nat64, of(s[6], s[7])))
    } else if s[0] == 0x2002 {
        Some((Carrier::SixToFour, of(s[1], s[2])))
    } else {
        None
    }
}

/// The most specific refused block `ip` is in, if any (an address that carries an IPv4
/// address is not judged here: see `carried`).
pub(crate) fn block_of(ip: IpAddr) -> Option<&'static Block> {
    let table = match ip {
        IpAddr::V4(_) => IPV4,
        IpAddr::V6(_) => IPV6,
    };
    table
        .iter()
        .filter(|b| b.contains(ip))
        .max_by_key(|b| b.len)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    #[test]
    fn every_row_is_refused_from_its_first_address_to_its_last_as_itself() {
        for block in IPV4.iter().chain(IPV6) {
            for end in [block.net, block.last()] {
                let found = block_of(end).unwrap_or_else(|| panic!("{end} not refused"));
                assert!(found.len >= block.len, "{end}: {found} within {block}");
                assert!(block.contains(end) && found.contains(end));
            }
            // The row itself is what an address inside it (and in no narrower row) is named by.
            let narrower = |b: &&Block| b.len > block.len && b.contains(block.net);
            if !IPV4.iter().chain(IPV6).any(|b| narrower(&b)) {
                assert_eq!(block_of(block.net), Some(block), "{block}");
            }
        }
    }

    #[test]
    fn the_rows_the_registries_hold_are_all_here() {
        for (cidr, name) in [
            ("0.0.0.0/8", "\"This network\""),
            ("10.0.0.0/8", "Private-Use"),
            ("100.64.0.0/10", "Shared Address Space, carrier-grade NAT"),
            ("127.0.0.0/8", "Loopback"),
            ("169.254.0.0/16", "Link Local"),
            ("172.16.0.0/12", "Private-Use"),
            ("192.0.0.0/24", "IETF Protocol Assignments"),
            ("192.0.0.9/32", "Port Control Protocol Anycast"),
            ("192.0.0.10/32", "Traversal Using Relays around NAT Anycast"),
            ("192.0.2.0/24", "Documentation (TEST-NET-1)"),
            ("192.31.196.0/24", "AS112-v4"),
            ("192.52.193.0/24", "AMT"),
            ("192.88.99.0/24", "Deprecated (6to4 Relay Anycast)"),
            ("192.168.0.0/16", "Private-Use"),
            ("192.175.48.0/24", "Direct Delegation AS112 Service"),
            ("198.18.0.0/15", "Benchmarking"),
            ("198.51.100.0/24", "Documentation (TEST-NET-2)"),
            ("203.0.113.0/24", "Documentation (TEST-NET-3)"),
            ("224.0.0.0/4", "Multicast"),
            ("240.0.0.0/4", "Reserved"),
            ("255.255.255.255/32", "Limited Broadcast"),
            ("::1/128", "Loopback Address"),
            ("::/128", "Unspecified Address"),
            ("64:ff9b:1::/48", "Local-use IPv4/IPv6 Translation"),
            ("100::/64", "Discard-Only Address Block"),
            ("2001::/23", "IETF Protocol Assignments"),
            ("2001::/32", "TEREDO"),
            ("2001:2::/48", "Benchmarking"),
            ("2001:db8::/32", "Documentation"),
            ("3fff::/20", "Documentation"),
            ("5f00::/16", "Segment Routing (SRv6) SIDs"),
            ("fc00::/7", "Unique-Local"),
            ("fe80::/10", "Link-Local Unicast"),
            ("ff00::/8", "Multicast"),
        ] {
            let (net, len) = cidr.split_once('/').unwrap();
            let found = IPV4
                .iter()
                .chain(IPV6)
                .find(|b| b.net == ip(net) && b.len.to_string() == len)
                .unwrap_or_else(|| panic!("{cidr} is not a row"));
            assert_eq!(found.name, name);
        }
    }

    #[test]
    fn the_192_0_0_0_24_exceptions_are_refused_as_anycast() {
        for (addr, name) in [
            ("192.0.0.9", "Port Control Protocol Anycast"),
            ("192.0.0.10", "Traversal Using Relays around NAT Anycast"),
            ("192.0.0.8", "IPv4 dummy address"),
            ("192.0.0.5", "IPv4 Service Continuity Prefix"),
            ("192.0.0.171", "NAT64/DNS64 Discovery"),
            ("192.0.0.200", "IETF Protocol Assignments"),
        ] {
            let block = block_of(ip(addr)).unwrap();
            assert_eq!(block.name, name, "{addr}");
        }
        assert_eq!(block_of(ip("192.0.0.9")).unwrap().why, Why::Anycast);
    }

    #[test]
    fn global_addresses_are_in_no_block() {
        for addr in [
            "1.1.1.1",
            "8.8.8.8",
            "93.184.216.34",
            "100.63.255.255",
            "100.128.0.0",
            "172.15.255.255",
            "172.32.0.0",
            "192.0.1.1",
            "192.0.3.0",
            "192.88.98.255",
            "192.167.255.255",
            "192.169.0.0",
            "198.17.255.255",
            "198.20.0.0",
            "203.0.112.255",
            "223.255.255.255",
            "2606:4700::1111",
            "2001:4860:4860::8888",
            "2001:200::1",
            "2a00:1450::1",
            "3ffe::1",
            "3fff:1000::1",
        ] {
            assert_eq!(block_of(ip(addr)), None, "{addr}");
        }
    }

    #[test]
    fn ipv4_carried_in_ipv6_is_found() {
        let v4 = |t: &str| t.parse::<Ipv4Addr>().unwrap();
        let v6 = |t: &str| t.parse::<Ipv6Addr>().unwrap();
        assert_eq!(
            carried(v6("::ffff:127.0.0.1")),
            Some((Carrier::Mapped, v4("127.0.0.1")))
        );
        assert_eq!(
            carried(v6("64:ff9b::a9fe:a9fe")),
            Some((Carrier::Nat64, v4("169.254.169.254")))
        );
        assert_eq!(
            carried(v6("2002:c000:0202:1::5")),
            Some((Carrier::SixToFour, v4("192.0.2.2")))
        );
        // The local-use NAT64 prefix and the others are blocks of their own.
        assert_eq!(carried(v6("64:ff9b:1::1")), None);
        assert_eq!(carried(v6("2001::1")), None);
        assert_eq!(carried(v6("::127.0.0.1")), None);
    }
}
