// SPDX-License-Identifier: GPL-2.0

//! Output routes to real servers, cached per real server and CPU.
//!
//! C headers: [`include/net/dst_cache.h`], [`include/net/route.h`],
//! [`include/net/ip6_route.h`]
//!
//! Every packet rvs forwards needs the route to its real server. A FIB
//! lookup per packet is what IPVS avoids with its per-destination
//! `dest_dst`; rvs keeps a `struct dst_cache` per real server (one slot
//! per CPU, so CPUs never share a cache line on the packet path) for both
//! IPv4 and IPv6. A cached route is reused until routing changes (its
//! generation or cookie check fails) or the server's forwarding method
//! changes.
//!
//! A cached route holds a reference that can keep a network device from
//! being unregistered, and the per-CPU slots cannot be emptied from another
//! CPU while packets use them. So, as IPVS does on `NETDEV_DOWN`
//! (`ip_vs_dst_event`), [`RouteCache::forget`] swaps the whole cache for a
//! fresh one and frees the old one after an RCU grace period; the
//! namespace calls it for every real server when one of its devices goes
//! down or away (`crate::sys::netdev`).

use super::error::ehostunreach;
use super::ffi;
use super::inet::{addr4, in6, in6_bytes};
use super::netns::Net;
use super::rcu::{BhGuard, ReadGuard, WriterToken};
use crate::rvs_core::config::AddrFamily;
use core::ptr::{self, NonNull};
use core::sync::atomic::{AtomicBool, AtomicPtr, Ordering};
use kernel::error::from_err_ptr;
use kernel::prelude::*;
use kernel::types::Opaque;

/// A referenced route (`struct dst_entry`), released on drop unless handed
/// to a packet with [`Skb::set_route`].
///
/// # Invariants
///
/// `dst` is a valid route on which this value owns one reference.
pub(crate) struct Route {
    dst: NonNull<ffi::dst_entry>,
}

impl Route {
    /// # Safety
    ///
    /// `dst` is null or a valid route whose reference the caller hands over.
    unsafe fn from_raw(dst: *mut ffi::dst_entry) -> Option<Self> {
        // INVARIANT: the caller hands over the reference on a valid route.
        NonNull::new(dst).map(|dst| Self { dst })
    }

    /// The route's path MTU.
    pub(crate) fn mtu(&self) -> u32 {
        // SAFETY: valid route (invariant); read only.
        unsafe { ffi::rvs_dst_mtu(self.dst.as_ptr()) }
    }

    /// Gives up ownership of the reference (to the packet).
    pub(super) fn into_raw(self) -> *mut ffi::dst_entry {
        let dst = self.dst.as_ptr();
        core::mem::forget(self);
        dst
    }
}

impl Drop for Route {
    fn drop(&mut self) {
        // SAFETY: we own this reference (invariant) and drop it here.
        unsafe { ffi::rvs_dst_release(self.dst.as_ptr()) };
    }
}

/// What [`route_to`] found: the new route's MTU and source address.
pub(crate) struct RouteInfo {
    /// Path MTU of the new route.
    pub(crate) mtu: u32,
    /// Preferred source address for the route (16-byte form).
    pub(crate) saddr: [u8; 16],
}

/// A `dst_cache` and the RCU head that frees it once it was swapped out.
#[repr(C)]
struct CacheNode {
    head: Opaque<ffi::callback_head>,
    cache: Opaque<ffi::dst_cache>,
}

impl CacheNode {
    /// A fresh, empty cache (may sleep).
    fn new() -> Result<*mut CacheNode> {
        let node = KBox::new(
            CacheNode {
                head: Opaque::uninit(),
                cache: Opaque::uninit(),
            },
            GFP_KERNEL_ACCOUNT,
        )?;
        // SAFETY: `cache` is valid storage for a `dst_cache`; init fills it
        // in (it holds no pointer to itself).
        let ret = unsafe { ffi::rvs_dst_cache_init(node.cache.get()) };
        if ret != 0 {
            return Err(Error::from_errno(ret));
        }
        Ok(KBox::into_raw(node))
    }

    /// Releases every cached route and frees the node.
    ///
    /// # Safety
    ///
    /// `node` came from [`CacheNode::new`] and nothing else can reach it.
    unsafe fn destroy(node: *mut CacheNode) {
        // SAFETY: the caller owns the node; its cache was initialized.
        unsafe { ffi::dst_cache_destroy((*node).cache.get()) };
        // SAFETY: from `KBox::into_raw` in `new`.
        drop(unsafe { KBox::from_raw(node) });
    }
}

/// # Safety
///
/// Called by RCU only, with the head of a node that [`RouteCache::forget`]
/// swapped out.
unsafe extern "C" fn free_cache_node(head: *mut ffi::callback_head) {
    // `head` is the first field of the `#[repr(C)]` node.
    // SAFETY: the node is unreachable since a grace period ended: no
    // packet can still be using its per-CPU slots.
    unsafe { CacheNode::destroy(head.cast::<CacheNode>()) };
}

/// A real server's cached output routes, one per CPU.
///
/// # Invariants
///
/// `node` is null (no cache: the server was deleted, or an allocation
/// failed) or a node from [`CacheNode::new`]; a node swapped out of it is
/// freed only after an RCU grace period.
pub(crate) struct RouteCache {
    node: AtomicPtr<CacheNode>,
    /// A route was stored since the last [`RouteCache::forget`]: only then
    /// does forgetting need a new cache.
    used: AtomicBool,
    /// Deleted real server: [`RouteCache::forget`] must not bring the
    /// cache back.
    retired: AtomicBool,
}

// SAFETY: the per-CPU slots are only touched with bottom halves disabled on
// their own CPU; the node pointer is swapped atomically and freed after a
// grace period.
unsafe impl Send for RouteCache {}
// SAFETY: as above.
unsafe impl Sync for RouteCache {}

impl RouteCache {
    /// An empty cache.
    pub(crate) fn new() -> Result<Self> {
        Ok(Self {
            node: AtomicPtr::new(CacheNode::new()?),
            used: AtomicBool::new(false),
            retired: AtomicBool::new(false),
        })
    }

    /// Forgets the cached routes lazily (the forwarding method changed):
    /// each CPU drops its route at its next use.
    pub(crate) fn reset(&self) {
        let _rcu = ReadGuard::new();
        let node = self.node.load(Ordering::Acquire);
        if !node.is_null() {
            // SAFETY: a non-null node stays allocated until a grace period
            // after it is swapped out, and we are in a read-side section;
            // reset only writes a time stamp.
            unsafe { ffi::rvs_dst_cache_reset((*node).cache.get()) };
        }
    }

    /// Releases the cached routes now (a network device went down or
    /// away): the cache is replaced by an empty one and the old one is
    /// freed, with its route references, after a grace period. Process
    /// context (allocates); the configuration lock (`_w`) orders it with
    /// [`RouteCache::retire`].
    pub(crate) fn forget(&self, _w: &impl WriterToken) {
        if self.retired.load(Ordering::Relaxed) {
            return;
        }
        // An empty slot (an earlier allocation failed) gets a new try.
        let no_cache = self.node.load(Ordering::Acquire).is_null();
        if !self.used.swap(false, Ordering::AcqRel) && !no_cache {
            return;
        }
        // Without memory the server goes uncached (a lookup per packet)
        // rather than keeping routes that pin a device.
        let new = CacheNode::new().unwrap_or(core::ptr::null_mut());
        self.swap_out(new);
    }

    /// Drops the cache for good: the server was deleted, and its
    /// connections, which may outlive it for a while, route every packet
    /// afresh (no device event reaches a deleted server to make it forget
    /// its routes).
    pub(crate) fn retire(&self, _w: &impl WriterToken) {
        self.retired.store(true, Ordering::Relaxed);
        self.swap_out(core::ptr::null_mut());
    }

    fn swap_out(&self, new: *mut CacheNode) {
        let old = self.node.swap(new, Ordering::AcqRel);
        if !old.is_null() {
            // SAFETY: `old` is no longer reachable through the cache; the
            // packets that loaded it are in RCU read-side sections (bottom
            // halves off), which `call_rcu` waits for.
            unsafe { ffi::call_rcu((*old).head.get(), Some(free_cache_node)) };
        }
    }

    /// The cached route to a server of family `af` and its source address
    /// (16-byte form), if this CPU has a valid one. Bottom halves must be
    /// off (`_bh`).
    fn get(&self, _bh: &BhGuard, af: AddrFamily) -> Option<(Route, [u8; 16])> {
        let node = self.node.load(Ordering::Acquire);
        if node.is_null() {
            return None;
        }
        // The node is alive while bottom halves are off (an RCU read-side
        // section, see `swap_out`), and this CPU's slot is ours meanwhile.
        let mut saddr = [0u8; 16];
        let dst = match af {
            AddrFamily::Inet => {
                let mut s4: u32 = 0;
                // SAFETY: live node, bottom halves off (above); `s4` is a
                // local. Returns a referenced route or null.
                let rt = unsafe { ffi::dst_cache_get_ip4((*node).cache.get(), &mut s4) };
                saddr[..4].copy_from_slice(&s4.to_ne_bytes());
                // SAFETY: `rt` is null or a valid route.
                unsafe { ffi::rvs_rt_dst(rt) }
            }
            AddrFamily::Inet6 => {
                let mut s6 = in6(&[0; 16]);
                // SAFETY: as for IPv4.
                let dst = unsafe { ffi::dst_cache_get_ip6((*node).cache.get(), &mut s6) };
                saddr = in6_bytes(&s6);
                dst
            }
        };
        // SAFETY: null or a route whose reference is ours.
        unsafe { Route::from_raw(dst) }.map(|r| (r, saddr))
    }

    /// Stores `route` (source address `saddr`) in this CPU's slot; the
    /// cache takes a reference of its own.
    fn set(&self, _bh: &BhGuard, af: AddrFamily, route: &Route, saddr: &[u8; 16]) {
        let node = self.node.load(Ordering::Acquire);
        if node.is_null() {
            return;
        }
        let dst = route.dst.as_ptr();
        match af {
            // SAFETY: as in `get`; `dst` is a valid referenced route (the
            // cache takes its own reference).
            AddrFamily::Inet => unsafe {
                ffi::dst_cache_set_ip4((*node).cache.get(), dst, u32::from_ne_bytes(addr4(saddr)))
            },
            // SAFETY: as for IPv4; the address is a temporary read during
            // the call.
            AddrFamily::Inet6 => unsafe {
                ffi::dst_cache_set_ip6((*node).cache.get(), dst, &in6(saddr))
            },
        }
        // After the store: a concurrent `forget` that missed this flag
        // leaves a route that the next device event releases.
        self.used.store(true, Ordering::Release);
    }
}

impl Drop for RouteCache {
    fn drop(&mut self) {
        let node = *self.node.get_mut();
        if !node.is_null() {
            // SAFETY: `&mut self`: the server is unreachable by packets (it
            // was unpublished a grace period ago), so the node is ours.
            unsafe { CacheNode::destroy(node) };
        }
    }
}

/// Looks the route to `daddr` up in the FIB. `known_nh`: `daddr` is the
/// next hop even though the packet's own destination differs (direct
/// routing keeps the VIP as destination but must reach the real server's
/// MAC). Rejects local destinations: rvs never forwards to its own
/// addresses.
fn lookup(
    net: &Net,
    af: AddrFamily,
    daddr: &[u8; 16],
    known_nh: bool,
) -> Result<(Route, [u8; 16])> {
    let unreachable = ehostunreach;
    let mut saddr = [0u8; 16];
    let route = match af {
        AddrFamily::Inet => {
            let mut fl4 = ffi::flowi4 {
                daddr: u32::from_ne_bytes(addr4(daddr)),
                ..Default::default()
            };
            if known_nh {
                fl4.__fl_common.flowic_flags = ffi::FLOWI_FLAG_KNOWN_NH as u8;
            }
            // SAFETY: `net` is alive and `fl4` is a local the lookup fills
            // in (the source address); no socket. Returns a referenced
            // route or an error pointer.
            let rt = unsafe { ffi::ip_route_output_flow(net.as_ptr(), &mut fl4, ptr::null()) };
            let rt = from_err_ptr(rt).map_err(|_| unreachable())?;
            // SAFETY: `rt` is a route (not an error), alive while we hold
            // the reference the lookup gave us.
            let local = unsafe { (*rt).rt_flags } & ffi::RTCF_LOCAL != 0;
            // SAFETY: `dst` is the route's own entry, and the reference
            // taken on the route is that entry's: it is handed over here.
            let dst = unsafe { Route::from_raw(ptr::addr_of_mut!((*rt).dst)) };
            let route = dst.ok_or_else(unreachable)?;
            if local {
                return Err(EINVAL);
            }
            saddr[..4].copy_from_slice(&fl4.saddr.to_ne_bytes());
            route
        }
        AddrFamily::Inet6 => {
            let mut fl6 = ffi::flowi6 {
                daddr: in6(daddr),
                ..Default::default()
            };
            if known_nh {
                fl6.__fl_common.flowic_flags = ffi::FLOWI_FLAG_KNOWN_NH as u8;
            }
            let (n, fl) = (net.as_ptr(), &mut fl6);
            // SAFETY: `net` is alive and `fl6` is a local; no socket. Always
            // returns a referenced route, which carries the error if the
            // lookup failed.
            let dst = unsafe { ffi::ip6_route_output_flags(n, ptr::null(), fl, 0) };
            // SAFETY: null or a route whose reference is ours.
            let route = unsafe { Route::from_raw(dst) }.ok_or_else(unreachable)?;
            // SAFETY: valid route (owned above); read only.
            if unsafe { (*dst).error } != 0 {
                return Err(unreachable());
            }
            // SAFETY: valid route (owned above).
            if unsafe { ffi::rvs_dst6_is_local(dst) } {
                return Err(EINVAL);
            }
            let d6 = in6(daddr);
            let mut s6 = in6(&[0; 16]);
            // SAFETY: `net` and the route are alive; the addresses are
            // locals.
            if unsafe { ffi::rvs_dst6_saddr(net.as_ptr(), dst, &d6, &mut s6) } != 0 {
                return Err(unreachable());
            }
            saddr = in6_bytes(&s6);
            route
        }
    };
    Ok((route, saddr))
}

/// The output route to `daddr` (family `af`, 16-byte form): the one in
/// `cache` if it is still valid, else a fresh lookup (then cached). See
/// [`lookup`] for `known_nh` and the errors. The caller attaches it to the
/// packet (`Skb::set_route`) once the checks that may answer the sender
/// (TTL, MTU) are done: ICMP errors take their source address from the
/// packet's input route (the VIP, as IPVS), not from the route out.
pub(crate) fn route_to(
    net: &Net,
    cache: &RouteCache,
    af: AddrFamily,
    daddr: &[u8; 16],
    known_nh: bool,
) -> Result<(Route, RouteInfo)> {
    // The per-CPU slots need this CPU to stay ours (LOCAL_OUT runs in
    // process context), and bottom halves off also keep the cache node
    // alive (an RCU read-side section).
    let bh = BhGuard::new();
    let (route, saddr) = match cache.get(&bh, af) {
        Some(hit) => hit,
        None => {
            let (route, saddr) = lookup(net, af, daddr, known_nh)?;
            cache.set(&bh, af, &route, &saddr);
            (route, saddr)
        }
    };
    let mtu = route.mtu();
    // IPv4: the address is in the first 4 bytes, the rest stays zero.
    Ok((route, RouteInfo { mtu, saddr }))
}

/// The output route to host `daddr` (family `af`, 16-byte form), looked
/// up afresh: for the rare packets rvs sends on its own (resets), which
/// need no cache. Errors as [`lookup`]'s (a local destination is EINVAL).
pub(crate) fn route_to_host(net: &Net, af: AddrFamily, daddr: &[u8; 16]) -> Result<Route> {
    lookup(net, af, daddr, false).map(|(route, _)| route)
}
