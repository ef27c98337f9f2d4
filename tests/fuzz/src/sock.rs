//! A raw NETLINK_GENERIC socket (libc only).

use std::io;
use std::time::Duration;

const SOL_NETLINK: libc::c_int = 270;
const NETLINK_EXT_ACK: libc::c_int = 11;
const NETLINK_CAP_ACK: libc::c_int = 10;

pub struct NlSock {
    fd: libc::c_int,
    pub portid: u32,
}

fn check(r: libc::c_int) -> io::Result<libc::c_int> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

impl NlSock {
    /// A bound socket with extended ACKs on (and capped ACKs if `cap_ack`)
    /// and a receive timeout.
    pub fn open(timeout: Duration, cap_ack: bool) -> io::Result<NlSock> {
        // SAFETY: plain syscalls on a descriptor we own; every pointer
        // passed points to a live local of the size given.
        unsafe {
            let fd = check(libc::socket(
                libc::AF_NETLINK,
                libc::SOCK_RAW | libc::SOCK_CLOEXEC,
                libc::NETLINK_GENERIC,
            ))?;
            // Owned from here on: closed on every error path by its drop.
            let mut s = NlSock { fd, portid: 0 };
            let one: libc::c_int = 1;
            let setopt = |level, name, val: &libc::c_int| {
                check(libc::setsockopt(
                    fd,
                    level,
                    name,
                    val as *const _ as *const libc::c_void,
                    std::mem::size_of::<libc::c_int>() as libc::socklen_t,
                ))
            };
            setopt(SOL_NETLINK, NETLINK_EXT_ACK, &one)?;
            if cap_ack {
                setopt(SOL_NETLINK, NETLINK_CAP_ACK, &one)?;
            }
            let rcvbuf: libc::c_int = 1 << 20;
            setopt(libc::SOL_SOCKET, libc::SO_RCVBUF, &rcvbuf)?;
            let tv = libc::timeval {
                tv_sec: timeout.as_secs() as libc::time_t,
                tv_usec: timeout.subsec_micros() as libc::suseconds_t,
            };
            check(libc::setsockopt(
                fd,
                libc::SOL_SOCKET,
                libc::SO_RCVTIMEO,
                &tv as *const _ as *const libc::c_void,
                std::mem::size_of::<libc::timeval>() as libc::socklen_t,
            ))?;
            let mut sa: libc::sockaddr_nl = std::mem::zeroed();
            sa.nl_family = libc::AF_NETLINK as libc::sa_family_t;
            check(libc::bind(
                fd,
                &sa as *const _ as *const libc::sockaddr,
                std::mem::size_of::<libc::sockaddr_nl>() as libc::socklen_t,
            ))?;
            let mut len = std::mem::size_of::<libc::sockaddr_nl>() as libc::socklen_t;
            check(libc::getsockname(
                fd,
                &mut sa as *mut _ as *mut libc::sockaddr,
                &mut len,
            ))?;
            s.portid = sa.nl_pid;
            Ok(s)
        }
    }

    /// Sends one datagram to the kernel.
    pub fn send(&self, buf: &[u8]) -> io::Result<()> {
        // SAFETY: `sa` and `buf` are live for the call.
        unsafe {
            let mut sa: libc::sockaddr_nl = std::mem::zeroed();
            sa.nl_family = libc::AF_NETLINK as libc::sa_family_t;
            let n = libc::sendto(
                self.fd,
                buf.as_ptr() as *const libc::c_void,
                buf.len(),
                0,
                &sa as *const _ as *const libc::sockaddr,
                std::mem::size_of::<libc::sockaddr_nl>() as libc::socklen_t,
            );
            if n < 0 {
                return Err(io::Error::last_os_error());
            }
            if n as usize != buf.len() {
                return Err(io::Error::other(format!(
                    "short send: {n} of {}",
                    buf.len()
                )));
            }
        }
        Ok(())
    }

    /// Receives one datagram into `buf`; returns its full length (which
    /// exceeds `buf.len()` if it was truncated, MSG_TRUNC).
    pub fn recv(&self, buf: &mut [u8]) -> io::Result<usize> {
        // SAFETY: `buf` is valid for writes of its length.
        let n = unsafe {
            libc::recv(
                self.fd,
                buf.as_mut_ptr() as *mut libc::c_void,
                buf.len(),
                libc::MSG_TRUNC,
            )
        };
        if n < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(n as usize)
        }
    }
}

impl Drop for NlSock {
    fn drop(&mut self) {
        // SAFETY: we own the descriptor.
        unsafe { libc::close(self.fd) };
    }
}

/// The unicast addresses of this network namespace's interfaces (not
/// loopback, multicast, broadcast, unspecified or IPv6 link-local), IPv4
/// and IPv6, from getifaddrs(3): local addresses a module that wants
/// them to be the director's own accepts. Empty lists if it fails.
pub fn host_addrs() -> crate::msg::HostAddrs {
    let (mut v4, mut v6) = (Vec::new(), Vec::new());
    let mut head: *mut libc::ifaddrs = std::ptr::null_mut();
    // SAFETY: getifaddrs fills `head` with a list it allocates, which is
    // only read below and freed once, by freeifaddrs; each `ifa_addr`,
    // when not null, points to a sockaddr of the family it names.
    unsafe {
        if libc::getifaddrs(&mut head) != 0 {
            return (v4, v6);
        }
        let mut p = head;
        while !p.is_null() {
            let sa = (*p).ifa_addr;
            if !sa.is_null() {
                match i32::from((*sa).sa_family) {
                    libc::AF_INET => {
                        let sin = &*(sa as *const libc::sockaddr_in);
                        v4.push(sin.sin_addr.s_addr.to_ne_bytes());
                    }
                    libc::AF_INET6 => {
                        let sin6 = &*(sa as *const libc::sockaddr_in6);
                        v6.push(sin6.sin6_addr.s6_addr);
                    }
                    _ => {}
                }
            }
            p = (*p).ifa_next;
        }
        libc::freeifaddrs(head);
    }
    v4.retain(|a| {
        let ip = std::net::Ipv4Addr::from(*a);
        !(ip.is_loopback() || ip.is_multicast() || ip.is_broadcast() || ip.is_unspecified())
    });
    v6.retain(|a| {
        let ip = std::net::Ipv6Addr::from(*a);
        let link_local = a[0] == 0xfe && a[1] & 0xc0 == 0x80;
        !(ip.is_loopback() || ip.is_multicast() || ip.is_unspecified() || link_local)
    });
    v4.dedup();
    v6.dedup();
    (v4, v6)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_addrs_are_unicast() {
        let (v4, v6) = host_addrs();
        assert!(v4.iter().all(|a| a[0] != 127 && *a != [0; 4]), "{v4:?}");
        assert!(
            v6.iter().all(|a| a[0] != 0xff && a[..15] != [0; 15]),
            "{v6:?}"
        );
    }
}
