//! Which addresses the web tools may reach: only globally reachable ones. Never this
//! machine (every address of every interface, read afresh at each check, and every address
//! that carries one of them), and never a block of IANA's special-purpose registries that is
//! not globally reachable, nor an anycast, identifier or tunnel block, nor multicast, nor IPv6
//! outside 2000::/3 (special.rs has the rows). Judged on the addresses a name resolves to, at
//! every hop, and again by the resolver the connection itself uses, so the connection goes to
//! an address that was judged and a name that resolves differently the second time (DNS
//! rebinding) gains nothing. `[web] allow_private = true` lifts it.

use std::fmt;
use std::net::{IpAddr, SocketAddr};

use reqwest::dns::{Addrs, Name, Resolve, Resolving};

use super::special::{self, Block, Carrier};
use crate::platform::interfaces::{self, OwnAddress};

/// This machine's own addresses as read at one moment, or why they could not be read.
pub(crate) struct Own(Result<Vec<OwnAddress>, String>);

impl Own {
    /// The addresses, read now.
    pub(crate) fn read() -> Self {
        Self(interfaces::own_addresses().map_err(|e| e.to_string()))
    }
}

/// Why an address may not be reached; shown after "X is".
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Refusal {
    /// One of this machine's own addresses.
    Own {
        /// The interface that has it.
        interface: String,
    },
    /// In a refused block.
    Block(&'static Block),
    /// Carries an IPv4 address that is refused.
    Carries {
        /// How it carries it.
        how: Carrier,
        /// The address carried.
        v4: std::net::Ipv4Addr,
        /// Why that one is refused.
        why: Box<Refusal>,
    },
    /// This machine's addresses could not be read, so none can be told apart from them.
    Unknown(String),
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refusal::Own { interface } => {
                write!(f, "an address of this machine (interface {interface})")
            }
            Refusal::Block(block) => write!(f, "{block}"),
            Refusal::Carries { how, v4, why } => write!(f, "{how} of {v4}, which is {why}"),
            Refusal::Unknown(e) => write!(
                f,
                "not to be told apart from this machine's own addresses, which could not be \
                 read ({e})"
            ),
        }
    }
}

/// Why `ip` may not be reached, `None` for a globally reachable address that is not this
/// machine's.
pub(crate) fn judged(ip: IpAddr, own: &Own) -> Option<Refusal> {
    if let Ok(found) = &own.0
        && let Some(mine) = found.iter().find(|a| a.ip == ip)
    {
        return Some(Refusal::Own {
            interface: mine.interface.clone(),
        });
    }
    if let IpAddr::V6(v6) = ip
        && let Some((how, v4)) = special::carried(v6)
    {
        if let Some(why) = judged(IpAddr::V4(v4), own) {
            return Some(Refusal::Carries {
                how,
                v4,
                why: Box::new(why),
            });
        }
    } else if let Some(block) = special::block_of(ip) {
        return Some(Refusal::Block(block));
    }
    own.0.as_ref().err().map(|e| Refusal::Unknown(e.clone()))
}

/// `ip` and why it may not be reached, for a host that resolved to it.
fn resolved_to(host: &str, ip: IpAddr, why: &Refusal) -> String {
    format!("{host} resolves to {ip}, which is {why}")
}

/// A resolver that answers only the addresses `judged` lets through, and fails when a name
/// has none: the connection to a page (and to every page a redirect leads to) goes through
/// it, so the address connected to is one that was judged, just now. The hosts of
/// the environment's proxies are the exception: a proxy may well be on the user's network.
pub(crate) struct PublicOnly {
    proxies: Vec<String>,
}

impl PublicOnly {
    /// The resolver, knowing the environment's proxies.
    pub(crate) fn new() -> Self {
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
            let own = Own::read();
            let mut refused = None;
            let mut public = Vec::new();
            for addr in found {
                match judged(addr.ip(), &own) {
                    None => public.push(addr),
                    Some(why) => {
                        refused.get_or_insert((addr.ip(), why));
                    }
                }
            }
            if public.is_empty() {
                return Err(match refused {
                    Some((ip, why)) => resolved_to(&host, ip, &why),
                    None => format!("{host} resolves to no address"),
                }
                .into());
            }
            Ok(Box::new(public.into_iter()) as Addrs)
        })
    }
}

/// Whether requests go through a proxy from the environment (as reqwest reads it).
pub(crate) fn proxied() -> bool {
    PROXY_VARS
        .iter()
        .any(|v| std::env::var(v).is_ok_and(|p| !p.trim().is_empty()))
}

/// Why `host` may not be reached: an address literal is judged as it is, a name by every
/// address it resolves to (one refused address is enough: which one a connection takes is
/// not up to tandem). A name that does not resolve here is refused, unless a proxy resolves
/// names instead.
pub(crate) async fn refused(host: &str) -> Option<String> {
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    if let Ok(ip) = bare.parse::<IpAddr>() {
        return judged(ip, &Own::read()).map(|why| format!("{host} is {why}"));
    }
    let found = match tokio::net::lookup_host((bare, 0)).await {
        Ok(found) => found,
        Err(_) if proxied() => return None,
        Err(e) => return Some(format!("{host} could not be resolved: {e}")),
    };
    let own = Own::read();
    found
        .into_iter()
        .find_map(|addr| judged(addr.ip(), &own).map(|why| resolved_to(host, addr.ip(), &why)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    /// A machine whose only addresses are these (global ones, so that only being its own
    /// refuses them).
    fn machine() -> Own {
        Own(Ok(vec![
            OwnAddress {
                ip: ip("93.184.216.34"),
                interface: "eth9".into(),
            },
            OwnAddress {
                ip: ip("2606:2800:220:1::1"),
                interface: "wlan9".into(),
            },
        ]))
    }

    #[test]
    fn the_users_own_machine_and_network_and_every_special_block_are_refused() {
        let own = Own(Ok(Vec::new()));
        for addr in [
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
            "239.255.255.250",
            "255.255.255.255",
            "240.0.0.1",
            "192.0.0.1",
            "192.0.0.9",
            "192.0.0.10",
            "192.0.2.2",
            "192.31.196.1",
            "192.52.193.1",
            "192.88.99.1",
            "192.175.48.1",
            "198.18.0.1",
            "198.19.255.255",
            "198.51.100.7",
            "203.0.113.9",
            "::1",
            "::",
            "fd00::1",
            "fc00::1",
            "fe80::1",
            "fec0::1",
            "ff02::1",
            "::127.0.0.1",
            "::1.1.1.1",
            "64:ff9b:1::1",
            "100::1",
            "100:0:0:1::1",
            "2001::1",
            "2001:0:4136:e378:8000:63bf:3fff:fdd2",
            "2001:1::1",
            "2001:2::1",
            "2001:3::1",
            "2001:4:112::1",
            "2001:10::1",
            "2001:20::1",
            "2001:30::1",
            "2001:1ff::1",
            "2001:db8::1",
            "2620:4f:8000::1",
            "3fff::1",
            "5f00::1",
            "::ffff:0:7f00:1",
            "4000::1",
            "e000::1",
        ] {
            assert!(judged(ip(addr), &own).is_some(), "{addr}");
        }
        for addr in [
            "93.184.216.34",
            "1.1.1.1",
            "172.32.0.1",
            "100.128.0.1",
            "2606:4700::1111",
            "2001:200::1",
            "::ffff:1.1.1.1",
            "64:ff9b::101:101",
            "2002:101:101::1",
        ] {
            assert_eq!(judged(ip(addr), &own), None, "{addr}");
        }
    }

    #[test]
    fn ipv4_carried_in_ipv6_is_judged_as_the_ipv4_it_carries() {
        let own = Own(Ok(Vec::new()));
        for (v6, v4) in [
            ("::ffff:127.0.0.1", "127.0.0.1"),
            ("::ffff:169.254.169.254", "169.254.169.254"),
            ("64:ff9b::a00:1", "10.0.0.1"),
            ("64:ff9b::c0a8:101", "192.168.1.1"),
            ("2002:a9fe:a9fe::", "169.254.169.254"),
            ("2002:c000:202::1", "192.0.2.2"),
            ("2002:c612:1::", "198.18.0.1"),
        ] {
            let why = judged(ip(v6), &own).unwrap_or_else(|| panic!("{v6}"));
            assert!(
                matches!(&why, Refusal::Carries { v4: carried, .. } if carried.to_string() == v4),
                "{v6}: {why}"
            );
        }
        let why = judged(ip("::ffff:127.0.0.1"), &own).unwrap().to_string();
        assert_eq!(
            why,
            "an IPv4-mapped address (::ffff:0:0/96) of 127.0.0.1, which is in 127.0.0.0/8 \
             (Loopback, RFC 1122), which IANA lists as not globally reachable"
        );
    }

    #[test]
    fn this_machines_own_addresses_are_refused_however_they_are_written() {
        let own = machine();
        for (addr, interface) in [
            ("93.184.216.34", "eth9"),
            ("::ffff:93.184.216.34", "eth9"),
            ("64:ff9b::5db8:d822", "eth9"),
            ("2002:5db8:d822::1", "eth9"),
            ("2606:2800:220:1::1", "wlan9"),
        ] {
            let why = judged(ip(addr), &own).unwrap_or_else(|| panic!("{addr}"));
            assert!(
                why.to_string().contains(&format!(
                    "an address of this machine (interface {interface})"
                )),
                "{addr}: {why}"
            );
        }
        assert_eq!(judged(ip("93.184.216.35"), &own), None);
        assert_eq!(judged(ip("2606:2800:220:1::2"), &own), None);
    }

    #[test]
    fn when_the_machines_addresses_cannot_be_read_nothing_is_reached() {
        let own = Own(Err("no netlink".into()));
        let why = judged(ip("1.1.1.1"), &own).unwrap();
        assert!(
            why.to_string().contains("could not be read (no netlink)"),
            "{why}"
        );
    }

    #[test]
    fn the_machine_this_runs_on_is_refused_at_each_of_its_addresses() {
        let own = Own::read();
        let found = interfaces::own_addresses().unwrap();
        assert!(!found.is_empty());
        for mine in found {
            assert_eq!(
                judged(mine.ip, &own),
                Some(Refusal::Own {
                    interface: mine.interface.clone()
                }),
                "{mine:?}"
            );
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
        let why = refused("198.18.0.1").await.unwrap();
        assert_eq!(
            why,
            "198.18.0.1 is in 198.18.0.0/15 (Benchmarking, RFC 2544), which IANA lists as not \
             globally reachable"
        );
        assert_eq!(refused("93.184.216.34").await, None);
    }

    /// Every way a URL can spell this machine's loopback or "any" address, as the URL parser
    /// leaves it for the guard.
    #[tokio::test]
    async fn every_spelling_of_home_in_a_url_is_refused() {
        for url in [
            "http://127.0.0.1/",
            "http://127.1/",
            "http://127.0.1/",
            "http://0x7f.1/",
            "http://0x7f000001/",
            "http://017700000001/",
            "http://0177.0.0.1/",
            "http://2130706433/",
            "http://127.000.000.001/",
            "http://0/",
            "http://0.0.0.0/",
            "http://[::1]/",
            "http://[0:0:0:0:0:0:0:1]/",
            "http://[::]/",
            "http://[::ffff:127.0.0.1]/",
            "http://[::ffff:7f00:1]/",
            "http://[0::ffff:127.0.0.1]/",
            "http://[64:ff9b::127.0.0.1]/",
            "http://[2002:7f00:1::]/",
            "http://localhost/",
            "http://LOCALHOST./",
            "http://%6c%6fcalhost/",
        ] {
            let parsed = reqwest::Url::parse(url).unwrap();
            let host = parsed.host_str().unwrap();
            assert!(refused(host).await.is_some(), "{url} ({host})");
        }
    }
}
