//! This machine's own addresses: every address of every network interface, IPv4 and IPv6,
//! loopback and link-local included, up or down, read from the system each time they are
//! asked for (so an address added a moment ago counts). `getifaddrs` on Unix,
//! `GetAdaptersAddresses` on Windows (its unicast and anycast addresses, in every state an
//! address can receive in: preferred, deprecated or tentative). web_fetch never reaches them
//! (web/guard.rs).

use std::io;
use std::net::IpAddr;

/// One address of this machine, and the interface that has it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OwnAddress {
    /// The address.
    pub ip: IpAddr,
    /// The interface's name as the system shows it (`eth0`, `en0`, `Ethernet`).
    pub interface: String,
}

/// Every address of this machine's interfaces, read now.
pub fn own_addresses() -> io::Result<Vec<OwnAddress>> {
    read()
}

#[cfg(unix)]
fn read() -> io::Result<Vec<OwnAddress>> {
    let found = nix::ifaddrs::getifaddrs().map_err(io::Error::from)?;
    Ok(found
        .filter_map(|entry| {
            let address = entry.address?;
            let ip = if let Some(v4) = address.as_sockaddr_in() {
                IpAddr::V4(v4.ip())
            } else {
                IpAddr::V6(address.as_sockaddr_in6()?.ip())
            };
            Some(OwnAddress {
                ip,
                interface: entry.interface_name,
            })
        })
        .collect())
}

#[cfg(windows)]
#[allow(unsafe_code)]
fn read() -> io::Result<Vec<OwnAddress>> {
    use windows_sys::Win32::Foundation::{ERROR_BUFFER_OVERFLOW, ERROR_NO_DATA, ERROR_SUCCESS};
    use windows_sys::Win32::NetworkManagement::IpHelper::{
        GAA_FLAG_INCLUDE_ALL_INTERFACES, GAA_FLAG_SKIP_DNS_SERVER, GAA_FLAG_SKIP_MULTICAST,
        GetAdaptersAddresses, IP_ADAPTER_ADDRESSES_LH,
    };
    use windows_sys::Win32::Networking::WinSock::AF_UNSPEC;

    // The list is written into one buffer, aligned for its structures (8 bytes); the call
    // says how large it must be when it is not, and an adapter may appear in between.
    let mut size: u32 = 16 * 1024;
    let mut buffer: Vec<u64>;
    let mut tries = 0;
    loop {
        buffer = vec![0; (size as usize).div_ceil(8)];
        size = u32::try_from(buffer.len() * 8).unwrap_or(u32::MAX);
        // SAFETY: `buffer` holds `size` bytes, aligned for IP_ADAPTER_ADDRESSES_LH, and lives
        // through the call; the reserved argument is null as the API requires.
        let done = unsafe {
            GetAdaptersAddresses(
                u32::from(AF_UNSPEC),
                GAA_FLAG_INCLUDE_ALL_INTERFACES
                    | GAA_FLAG_SKIP_MULTICAST
                    | GAA_FLAG_SKIP_DNS_SERVER,
                std::ptr::null(),
                buffer.as_mut_ptr().cast::<IP_ADAPTER_ADDRESSES_LH>(),
                &mut size,
            )
        };
        match done {
            ERROR_SUCCESS => break,
            ERROR_NO_DATA => return Ok(Vec::new()),
            ERROR_BUFFER_OVERFLOW if tries < 5 => tries += 1,
            code => return Err(io::Error::from_raw_os_error(code as i32)),
        }
    }
    let mut found = Vec::new();
    let mut adapter = buffer.as_ptr().cast::<IP_ADAPTER_ADDRESSES_LH>();
    while !adapter.is_null() {
        // SAFETY: `adapter` is the buffer's start or a `Next` of the list the call wrote into
        // `buffer`, which is still alive and not written to again.
        let here = unsafe { &*adapter };
        // SAFETY: the name is null or a terminated UTF-16 string in the same buffer.
        let interface = unsafe { wide(here.FriendlyName) };
        let mut unicast = here.FirstUnicastAddress;
        while !unicast.is_null() {
            // SAFETY: a node of the unicast list in `buffer`, as above.
            let node = unsafe { &*unicast };
            // SAFETY: the node's socket address points into `buffer` with its length.
            if let Some(ip) = unsafe { ip_of(&node.Address) } {
                found.push(OwnAddress {
                    ip,
                    interface: interface.clone(),
                });
            }
            unicast = node.Next;
        }
        let mut anycast = here.FirstAnycastAddress;
        while !anycast.is_null() {
            // SAFETY: a node of the anycast list in `buffer`, as above.
            let node = unsafe { &*anycast };
            // SAFETY: as for the unicast addresses.
            if let Some(ip) = unsafe { ip_of(&node.Address) } {
                found.push(OwnAddress {
                    ip,
                    interface: interface.clone(),
                });
            }
            anycast = node.Next;
        }
        adapter = here.Next;
    }
    Ok(found)
}

/// The IP address in a socket address of the adapter list, if it is IPv4 or IPv6.
///
/// # Safety
/// `address.lpSockaddr` is null or points to `address.iSockaddrLength` readable bytes.
#[cfg(windows)]
#[allow(unsafe_code)]
unsafe fn ip_of(
    address: &windows_sys::Win32::Networking::WinSock::SOCKET_ADDRESS,
) -> Option<IpAddr> {
    use std::net::{Ipv4Addr, Ipv6Addr};
    use windows_sys::Win32::Networking::WinSock::{
        AF_INET, AF_INET6, SOCKADDR, SOCKADDR_IN, SOCKADDR_IN6,
    };
    let raw = address.lpSockaddr;
    let len = usize::try_from(address.iSockaddrLength).unwrap_or(0);
    if raw.is_null() || len < size_of::<SOCKADDR>() {
        return None;
    }
    // SAFETY: at least a SOCKADDR's bytes are readable (the caller's promise, checked
    // length); read unaligned, so no alignment is assumed.
    let family = unsafe { raw.read_unaligned() }.sa_family;
    if family == AF_INET && len >= size_of::<SOCKADDR_IN>() {
        // SAFETY: as above, for a SOCKADDR_IN's bytes.
        let v4 = unsafe { raw.cast::<SOCKADDR_IN>().read_unaligned() };
        // SAFETY: every variant of the union is plain bytes; S_addr is in network order.
        let bits = unsafe { v4.sin_addr.S_un.S_addr };
        Some(IpAddr::V4(Ipv4Addr::from(bits.to_ne_bytes())))
    } else if family == AF_INET6 && len >= size_of::<SOCKADDR_IN6>() {
        // SAFETY: as above, for a SOCKADDR_IN6's bytes.
        let v6 = unsafe { raw.cast::<SOCKADDR_IN6>().read_unaligned() };
        // SAFETY: every variant of the union is plain bytes.
        let bytes = unsafe { v6.sin6_addr.u.Byte };
        Some(IpAddr::V6(Ipv6Addr::from(bytes)))
    } else {
        None
    }
}

/// A null-terminated UTF-16 string (at most 256 units of it), as text.
///
/// # Safety
/// `text` is null or points to a null-terminated UTF-16 string.
#[cfg(windows)]
#[allow(unsafe_code)]
unsafe fn wide(text: *const u16) -> String {
    if text.is_null() {
        return String::new();
    }
    let mut len = 0;
    // SAFETY: the string is terminated, so every unit up to the terminator is readable.
    while len < 256 && unsafe { *text.add(len) } != 0 {
        len += 1;
    }
    // SAFETY: the `len` units just read.
    String::from_utf16_lossy(unsafe { std::slice::from_raw_parts(text, len) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_loopback_interface_is_among_this_machines_addresses() {
        let own = own_addresses().unwrap();
        assert!(own.iter().any(|a| a.ip.is_loopback()), "{own:?}");
        assert!(own.iter().all(|a| !a.interface.is_empty()), "{own:?}");
    }
}
