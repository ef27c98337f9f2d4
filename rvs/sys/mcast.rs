// SPDX-License-Identifier: GPL-2.0

//! Kernel UDP sockets for multicast: one that sends to a group from an
//! interface, one that receives a group's datagrams on an interface (the
//! connection sync daemon's, as IPVS's `make_send_sock` and
//! `make_receive_sock`).
//!
//! C headers: [`include/linux/net.h`], [`include/net/sock.h`],
//! [`include/uapi/linux/in.h`], [`include/uapi/linux/in6.h`]
//!
//! A kernel socket holds no reference to its namespace: its owner closes
//! it before the namespace goes (rvs's sync daemons stop in the pernet
//! exit). Sending and receiving never block.

use super::error::eaddrnotavail;
use super::ffi;
use super::netns::Net;
use core::ffi::{c_int, c_void, CStr};
use core::ptr::NonNull;
use kernel::prelude::*;

fn check(ret: c_int) -> Result<usize> {
    if ret < 0 {
        Err(Error::from_errno(ret))
    } else {
        Ok(ret as usize)
    }
}

/// What a sync daemon needs to know of its interface.
#[derive(Clone, Copy)]
pub(crate) struct Device {
    /// Its index.
    pub(crate) ifindex: i32,
    /// Its MTU.
    pub(crate) mtu: u32,
    /// Its primary IPv4 address (global scope), if it has one.
    pub(crate) addr4: Option<[u8; 4]>,
}

impl Device {
    /// The device named `name` in `net` (`ENODEV` if none).
    pub(crate) fn by_name(net: &Net, name: &CStr) -> Result<Self> {
        let (mut ifindex, mut mtu, mut addr4): (c_int, u32, u32) = (0, 0, 0);
        // SAFETY: `net` is alive (`&Net`), `name` is NUL-terminated, and the
        // out pointers are to locals.
        let r = unsafe {
            ffi::rvs_netdev_by_name(
                net.as_ptr(),
                name.as_ptr(),
                &mut ifindex,
                &mut mtu,
                &mut addr4,
            )
        };
        check(r)?;
        // `__be32` as the bytes in memory: network order.
        let a = addr4.to_ne_bytes();
        Ok(Self {
            ifindex,
            mtu,
            addr4: (addr4 != 0).then_some(a),
        })
    }
}

/// A multicast group and port: `addr` holds 4 bytes (then zeros) or 16.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct Group {
    /// IPv6 or IPv4.
    pub(crate) v6: bool,
    /// The group's address, network order.
    pub(crate) addr: [u8; 16],
    /// UDP port, host order.
    pub(crate) port: u16,
}

/// A kernel UDP socket.
///
/// # Invariants
///
/// `sock` is a socket from `sock_create_kern`, owned by this value and
/// released only by its drop.
pub(crate) struct McastSocket {
    sock: NonNull<ffi::socket>,
}

// SAFETY: a kernel socket may be used and released from any process
// context; the socket layer locks its own state.
unsafe impl Send for McastSocket {}
// SAFETY: `send` and `recv` go through the socket layer, which serializes
// concurrent callers.
unsafe impl Sync for McastSocket {}

impl McastSocket {
    fn create(net: &Net, v6: bool) -> Result<Self> {
        let mut sock: *mut ffi::socket = core::ptr::null_mut();
        // SAFETY: `net` is alive; `sock` is an out pointer to a local.
        check(unsafe { ffi::rvs_sock_create_udp(net.as_ptr(), v6, &mut sock) })?;
        let sock = NonNull::new(sock).ok_or(ENOMEM)?;
        // INVARIANT: just created, owned here.
        Ok(Self { sock })
    }

    fn setopt(&self, level: u32, opt: u32, val: &[u8]) -> Result {
        let len = u32::try_from(val.len()).map_err(|_| EINVAL)?;
        // SAFETY: the socket is live (invariant); `val` is a kernel buffer
        // of `len` bytes, read during the call only.
        let r = unsafe {
            ffi::rvs_sock_setopt(
                self.sock.as_ptr(),
                level as c_int,
                opt as c_int,
                val.as_ptr().cast::<c_void>(),
                len,
            )
        };
        check(r).map(|_| ())
    }

    fn setopt_int(&self, level: u32, opt: u32, v: i32) -> Result {
        self.setopt(level, opt, &v.to_ne_bytes())
    }

    fn bind_or_connect(&self, v6: bool, addr: &[u8; 16], port: u16, connect: bool) -> Result {
        // SAFETY: the socket is live (invariant); `addr` holds 16 bytes, of
        // which the helper reads 4 or 16.
        let r = unsafe {
            ffi::rvs_sock_bind_addr(self.sock.as_ptr(), v6, addr.as_ptr(), port, connect)
        };
        check(r).map(|_| ())
    }

    /// A socket that sends to `group` out of `dev` with `ttl`, loopback
    /// off, fragmentation allowed, from `dev`'s IPv4 address (IPv4).
    pub(crate) fn sender(net: &Net, group: &Group, dev: &Device, ttl: u8) -> Result<Self> {
        let s = Self::create(net, group.v6)?;
        let ttl = i32::from(ttl);
        if group.v6 {
            s.setopt_int(ffi::SOL_IPV6, ffi::IPV6_MULTICAST_IF, dev.ifindex)?;
            s.setopt_int(ffi::SOL_IPV6, ffi::IPV6_MULTICAST_LOOP, 0)?;
            s.setopt_int(ffi::SOL_IPV6, ffi::IPV6_MULTICAST_HOPS, ttl)?;
            s.setopt_int(
                ffi::SOL_IPV6,
                ffi::IPV6_MTU_DISCOVER,
                ffi::IPV6_PMTUDISC_DONT as i32,
            )?;
        } else {
            // struct ip_mreqn: multiaddr, address, ifindex.
            let mut mreqn = [0u8; 12];
            if let Some(ix) = mreqn.get_mut(8..12) {
                ix.copy_from_slice(&dev.ifindex.to_ne_bytes());
            }
            s.setopt(ffi::SOL_IP, ffi::IP_MULTICAST_IF, &mreqn)?;
            s.setopt_int(ffi::SOL_IP, ffi::IP_MULTICAST_LOOP, 0)?;
            s.setopt_int(ffi::SOL_IP, ffi::IP_MULTICAST_TTL, ttl)?;
            s.setopt_int(
                ffi::SOL_IP,
                ffi::IP_MTU_DISCOVER,
                ffi::IP_PMTUDISC_DONT as i32,
            )?;
            // From the interface's address, as IPVS: backups see which
            // director sent a message. An interface without one is refused
            // (IPVS only logs it, then cannot send).
            let a = dev.addr4.ok_or_else(eaddrnotavail)?;
            let mut src = [0u8; 16];
            if let Some(s4) = src.get_mut(..4) {
                s4.copy_from_slice(&a);
            }
            s.bind_or_connect(false, &src, 0, false)?;
        }
        s.bind_or_connect(group.v6, &group.addr, group.port, true)?;
        Ok(s)
    }

    /// A socket that receives `group`'s datagrams arriving on `dev`.
    pub(crate) fn receiver(net: &Net, group: &Group, dev: &Device) -> Result<Self> {
        let s = Self::create(net, group.v6)?;
        // Several backups of one host (namespaces aside) may share the port.
        s.setopt_int(ffi::SOL_SOCKET, ffi::SO_REUSEADDR, 1)?;
        // SAFETY: the socket is live (invariant) and its `sk` set by
        // `sock_create_kern`; `sock_bindtoindex` takes the socket lock.
        check(unsafe { ffi::sock_bindtoindex((*s.sock.as_ptr()).sk, dev.ifindex, true) })?;
        s.bind_or_connect(group.v6, &group.addr, group.port, false)?;
        // SAFETY: as above; `group.addr` holds 16 bytes.
        let r = unsafe {
            ffi::rvs_sock_join_group(s.sock.as_ptr(), group.v6, group.addr.as_ptr(), dev.ifindex)
        };
        check(r)?;
        Ok(s)
    }

    /// Sends `buf` as one datagram without blocking.
    pub(crate) fn send(&self, buf: &[u8]) -> Result<usize> {
        // SAFETY: the socket is live (invariant); `buf` is read during the
        // call only.
        check(unsafe {
            ffi::rvs_sock_send(self.sock.as_ptr(), buf.as_ptr().cast::<c_void>(), buf.len())
        })
    }

    /// Receives one datagram into `buf` without blocking (`EAGAIN` when
    /// none is queued). A longer one is cut to `buf.len()` bytes.
    pub(crate) fn recv(&self, buf: &mut [u8]) -> Result<usize> {
        // SAFETY: the socket is live (invariant); `buf` is written during
        // the call only, at most `buf.len()` bytes.
        check(unsafe {
            ffi::rvs_sock_recv(
                self.sock.as_ptr(),
                buf.as_mut_ptr().cast::<c_void>(),
                buf.len(),
            )
        })
    }

    /// Sleeps until a datagram is queued, the current thread is asked to
    /// stop, or `jiffies` pass. Call only from a kernel thread.
    pub(crate) fn wait_readable(&self, jiffies: u64) {
        let j = i64::try_from(jiffies).unwrap_or(i64::MAX);
        // SAFETY: the socket is live (invariant); the helper sleeps on its
        // wait queue, which lives as long as the socket.
        unsafe { ffi::rvs_sock_wait_readable(self.sock.as_ptr(), j as _) };
    }
}

impl Drop for McastSocket {
    fn drop(&mut self) {
        // SAFETY: owned (invariant), released once, here.
        unsafe { ffi::sock_release(self.sock.as_ptr()) };
    }
}
