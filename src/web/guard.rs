//! Which addresses the web tools may reach: not the user's own machine or network (loopback,
//! private, link-local, carrier-grade NAT, unique-local, multicast, unspecified), judged on
//! the addresses a name resolves to, at every hop, and again by the resolver the connection
//! itself uses, so a name that resolves differently the second time (DNS rebinding) gains
//! nothing. `[web] allow_private = true` lifts it.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use reqwest::dns::{Addrs, Name, Resolve, Resolving};

/// Why an address may not be reached: `None` for one on the public internet.
pub fn private_kind(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => v4_kind(v4),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => v4_kind(v4),
            None => v6_kind(v6),
        },
    }
}

fn v4_kind(ip: Ipv4Addr) -> Option<&'static str> {
    let [a, b, ..] = ip.octets();
    if ip.is_loopback() {
        Some("loopback")
    } else if ip.is_private() {
        Some("private")
    } else if ip.is_link_local() {
        Some("link-local")
    } else if a == 100 && (64..128).contains(&b) {
        Some("carrier-grade NAT")
    } else if ip.is_unspecified() || a == 0 {
        Some("unspecified")
    } else if ip.is_multicast() || ip.is_broadcast() || a >= 240 {
        Some("multicast or reserved")
    } else {
        None
    }
}

fn v6_kind(ip: Ipv6Addr) -> Option<&'static str> {
    let s = ip.segments();
    let first = s[0];
    let embedded = |hi: u16, lo: u16| Ipv4Addr::from((u32::from(hi) << 16) | u32::from(lo));
    // Prefixes that carry an IPv4 address: NAT64 (64:ff9b::/96), IPv4-translated
    // (::ffff:0:a.b.c.d), 6to4 (2002:a.b.c.d::/16): judged by the address they carry.
    if s[..6] == [0x64, 0xff9b, 0, 0, 0, 0] || s[..6] == [0, 0, 0, 0, 0xffff, 0] {
        return v4_kind(embedded(s[6], s[7]));
    }
    if first == 0x2002 {
        return v4_kind(embedded(s[1], s[2]));
    }
    if ip.is_loopback() {
        Some("loopback")
    } else if ip.is_unspecified() {
        Some("unspecified")
    } else if first & 0xfe00 == 0xfc00 {
        Some("unique-local")
    } else if first & 0xffc0 == 0xfe80 {
        Some("link-local")
    } else if ip.is_multicast() {
        Some("multicast")
    } else if (first, s[1]) == (0x64, 0xff9b) && s[2] == 1 {
        // Local-use NAT64 (64:ff9b:1::/48) reaches the site's own IPv4 network.
        Some("local NAT64")
    } else if (first, s[1]) == (0x2001, 0) {
        // Teredo: a tunnel whose IPv4 ends are hidden in the address.
        Some("Teredo tunnel")
    } else if s[..4] == [0x100, 0, 0, 0] {
        Some("discard-only")
    } else if let Some(v4) = ip.to_ipv4() {
        // The old IPv4-compatible form (::a.b.c.d).
        v4_kind(v4)
    } else {
        None
    }
}

/// A resolver that answers only public addresses, and fails when a name has none: the
/// connection to a page (and to every page a redirect leads to) goes through it. The hosts of
/// the environment's proxies are the exception: a proxy may well be on the user's network.
pub struct PublicOnly {
    proxies: Vec<String>,
}

impl PublicOnly {
    /// The resolver, knowing the environment's proxies.
    pub fn new() -> Self {
        let proxies = PROXY_VARS
            .iter()
            .filter_map(|v| std::env::var(v).ok())
            .filter_map(|p| {
                let p = if p.contains("://") {
                    p
                } else {
                    format!("http://{p}")
                };
                reqwest::Url::parse(&p)
                    .ok()?
                    .host_str()
                    .map(str::to_ascii_lowercase)
            })
            .collect();
        Self { proxies }
    }
}

impl Default for PublicOnly {
    fn default() -> Self {
        Self::new()
    }
}

/// The variables reqwest reads proxies from.
const PROXY_VARS: [&str; 6] = [
    "HTTPS_PROXY",
    "https_proxy",
    "HTTP_PROXY",
    "http_proxy",
    "ALL_PROXY",
    "all_proxy",
];

impl Resolve for PublicOnly {
    fn resolve(&self, name: Name) -> Resolving {
        let host = name.as_str().to_string();
        let proxy = self.proxies.contains(&host.to_ascii_lowercase());
        Box::pin(async move {
            let found: Vec<SocketAddr> =
                tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            if proxy {
                return Ok(Box::new(found.into_iter()) as Addrs);
            }
            let public: Vec<SocketAddr> = found
                .iter()
                .copied()
                .filter(|a| private_kind(a.ip()).is_none())
                .collect();
            if public.is_empty() {
                let why = found
                    .first()
                    .and_then(|a| private_kind(a.ip()))
                    .unwrap_or("no address");
                return Err(format!("{host} resolves to a {why} address").into());
            }
            Ok(Box::new(public.into_iter()) as Addrs)
        })
    }
}

/// Whether requests go through a proxy from the environment (as reqwest reads it).
pub fn proxied() -> bool {
    PROXY_VARS
        .iter()
        .any(|v| std::env::var(v).is_ok_and(|p| !p.trim().is_empty()))
}

/// Why `host` may not be reached, when one of its addresses is private: an address literal
/// is judged as it is, a name by every address it resolves to (one private address is
/// enough: which one a connection takes is not up to tandem). A name that does not resolve
/// here is refused, unless a proxy resolves names instead.
pub async fn refused(host: &str) -> Option<String> {
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    if let Ok(ip) = bare.parse::<IpAddr>() {
        return private_kind(ip).map(|kind| format!("{host} is a {kind} address"));
    }
    let found = match tokio::net::lookup_host((bare, 0)).await {
        Ok(found) => found,
        Err(_) if proxied() => return None,
        Err(e) => return Some(format!("{host} could not be resolved: {e}")),
    };
    for addr in found {
        if let Some(kind) = private_kind(addr.ip()) {
            return Some(format!(
                "{host} resolves to {} (a {kind} address)",
                addr.ip()
            ));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_users_own_machine_and_network_are_private() {
        for ip in [
            "127.0.0.1",
            "127.8.9.10",
            "10.1.2.3",
            "172.16.0.1",
            "172.31.255.255",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "0.0.0.0",
            "0.1.2.3",
            "224.0.0.1",
            "255.255.255.255",
            "::1",
            "::",
            "fd00::1",
            "fe80::1",
            "::ffff:127.0.0.1",
            "::ffff:169.254.169.254",
            "::127.0.0.1",
            "ff02::1",
            "64:ff9b::a00:1",
            "64:ff9b:1::1",
            "2002:a9fe:a9fe::",
            "2001::1",
            "100::1",
            "::ffff:0:7f00:1",
        ] {
            let ip: IpAddr = ip.parse().unwrap();
            assert!(private_kind(ip).is_some(), "{ip}");
        }
        for ip in [
            "93.184.216.34",
            "1.1.1.1",
            "172.32.0.1",
            "100.128.0.1",
            "2606:4700::1111",
        ] {
            let ip: IpAddr = ip.parse().unwrap();
            assert_eq!(private_kind(ip), None, "{ip}");
        }
    }

    #[tokio::test]
    async fn literals_and_names_that_resolve_home_are_refused() {
        assert!(refused("127.0.0.1").await.is_some());
        assert!(refused("[::1]").await.is_some());
        assert!(refused("localhost").await.is_some());
        assert!(
            refused("2130706433").await.is_some(),
            "127.0.0.1 as one number"
        );
        assert_eq!(refused("93.184.216.34").await, None);
    }
}
