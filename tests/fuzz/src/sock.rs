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
