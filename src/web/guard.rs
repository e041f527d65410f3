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
    let first = ip.segments()[0];
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
    } else if let Some(v4) = ip.to_ipv4() {
        // The old IPv4-compatible form (::a.b.c.d).
        v4_kind(v4)
    } else {
        None
    }
}

/// A resolver that answers only public addresses, and fails when a name has none: the
/// connection to a page (and to every page a redirect leads to) goes through it.
pub struct PublicOnly;

impl Resolve for PublicOnly {
    fn resolve(&self, name: Name) -> Resolving {
        let host = name.as_str().to_string();
        Box::pin(async move {
            let found: Vec<SocketAddr> =
                tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
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
    [
        "HTTPS_PROXY",
        "https_proxy",
        "HTTP_PROXY",
        "http_proxy",
        "ALL_PROXY",
        "all_proxy",
    ]
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
