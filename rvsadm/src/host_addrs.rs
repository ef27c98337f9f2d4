//! The addresses of this host (of rvsadm's network namespace), to warn
//! about FullNAT local addresses (`--laddr`) that are not among them:
//! replies to such an address never come back to the director, so its
//! connections would hang. A warning, not a refusal: an address managed
//! by another daemon (keepalived, a DHCP client) may come later.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Every address configured on an interface of this namespace.
pub fn host_addresses() -> std::io::Result<Vec<IpAddr>> {
    let mut head: *mut libc::ifaddrs = std::ptr::null_mut();
    // SAFETY: `head` is a valid place for the list pointer; on success the
    // list is ours until `freeifaddrs`.
    if unsafe { libc::getifaddrs(&mut head) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    let mut out = Vec::new();
    let mut p = head;
    while !p.is_null() {
        // SAFETY: `p` is a node of the list `getifaddrs` returned, not yet
        // freed.
        let ifa = unsafe { &*p };
        if !ifa.ifa_addr.is_null() {
            // SAFETY: `ifa_addr` points to a sockaddr whose family says
            // which larger sockaddr it is.
            match i32::from(unsafe { (*ifa.ifa_addr).sa_family }) {
                libc::AF_INET => {
                    // SAFETY: an AF_INET address is a sockaddr_in.
                    let sin = unsafe { &*(ifa.ifa_addr as *const libc::sockaddr_in) };
                    out.push(IpAddr::V4(Ipv4Addr::from(u32::from_be(
                        sin.sin_addr.s_addr,
                    ))));
                }
                libc::AF_INET6 => {
                    // SAFETY: an AF_INET6 address is a sockaddr_in6.
                    let sin6 = unsafe { &*(ifa.ifa_addr as *const libc::sockaddr_in6) };
                    out.push(IpAddr::V6(Ipv6Addr::from(sin6.sin6_addr.s6_addr)));
                }
                _ => {}
            }
        }
        p = ifa.ifa_next;
    }
    // SAFETY: the list from `getifaddrs`, freed once; no node is used after.
    unsafe { libc::freeifaddrs(head) };
    Ok(out)
}

/// The addresses of `laddrs` that are not in `host`, in order.
pub fn foreign<'a>(laddrs: &'a [IpAddr], host: &[IpAddr]) -> Vec<&'a IpAddr> {
    laddrs.iter().filter(|a| !host.contains(a)).collect()
}

/// The warning for a local address that is not this host's.
pub fn warning(a: &IpAddr) -> String {
    format!(
        "rvsadm: warning: local address {a} is not an address of this host: \
         FullNAT replies to it cannot reach the director (add it to an interface)"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_is_a_host_address() {
        let host = host_addresses().expect("getifaddrs");
        assert!(host.contains(&IpAddr::V4(Ipv4Addr::LOCALHOST)), "{host:?}");
    }

    #[test]
    fn only_the_missing_ones_are_named() {
        let a: IpAddr = "10.0.2.1".parse().unwrap();
        let b: IpAddr = "192.0.2.9".parse().unwrap();
        let c: IpAddr = "fd00::1".parse().unwrap();
        assert_eq!(foreign(&[a, b, c], &[a, c]), vec![&b]);
        assert!(foreign(&[a], &[a]).is_empty());
        assert_eq!(
            warning(&b),
            "rvsadm: warning: local address 192.0.2.9 is not an address of this host: \
             FullNAT replies to it cannot reach the director (add it to an interface)"
        );
    }
}
