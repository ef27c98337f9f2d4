// SPDX-License-Identifier: GPL-2.0

//! Real servers (destinations): their parameters, live counters and
//! overload state, and the view the schedulers read.
//!
//! C counterpart: the destination parts of net/netfilter/ipvs/ip_vs_ctl.c
//! (`struct ip_vs_dest`). A server is reference counted: a connection keeps
//! it alive after it is deleted from its service, as IPVS's trash list does.

#![forbid(unsafe_code)]

use crate::lb::stats::Stats;
use crate::rvs_core::config::{self, AddrFamily, FwdMethod};
use crate::rvs_core::expiry::expired;
use crate::rvs_core::sched::{self, DestView, Dests};
use crate::rvs_core::svcattr::DestParams;
use crate::rvs_core::tunnel::Tunnel;
use crate::sys::rcu::WriterToken;
use crate::sys::route::RouteCache;
use crate::sys::time::{hz, jiffies, secs_to_jiffies};
use core::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering::Relaxed};
use kernel::prelude::*;
use kernel::sync::Arc;

/// A real server of a service.
pub(crate) struct Dest {
    /// Address family: the service's, or the other one for a tunnelled
    /// real server (IPv4 in IPv6, IPv6 in IPv4).
    pub(crate) af: AddrFamily,
    /// Address, 16-byte form (IPv4 in the first 4 bytes).
    pub(crate) addr: [u8; 16],
    /// Port, host order.
    pub(crate) port: u16,
    fwd: AtomicU32,
    /// Tunnel encapsulation (`Tunnel::pack`), read when transmitting.
    tunnel: AtomicU32,
    weight: AtomicU32,
    /// Latest non-zero weight (mh keeps a quiesced server's table slots).
    last_weight: AtomicU32,
    u_thresh: AtomicU32,
    l_thresh: AtomicU32,
    /// Connections in an active state (ESTABLISHED, SYN_*).
    pub(crate) active_conns: AtomicU32,
    /// Connections in any other state.
    pub(crate) inactive_conns: AtomicU32,
    /// Persistence templates pointing here.
    pub(crate) persist_conns: AtomicU32,
    /// Deleted from its service: templates must not send new clients here.
    pub(crate) removed: core::sync::atomic::AtomicBool,
    /// Over its upper connection threshold and not yet below the lower
    /// one (`-x`/`-y` hysteresis, see [`Dest::refresh_overload`]).
    overloaded: AtomicBool,
    /// Draining (`rvsadm -d --drain`): jiffies of the deadline, 0 when
    /// not draining. A draining server takes no new connection (the
    /// schedulers see weight 0, its persistence templates are void); its
    /// connections carry on until the deadline, when `lb::drain` ends
    /// them and deletes it.
    drain_until: AtomicU64,
    /// Names the server in lblc/lblcr tables (unique while it exists).
    id: u32,
    /// Traffic counters.
    pub(crate) stats: Stats,
    /// Its service's traffic counters, which its connections count in
    /// too (a connection reaches its service's counters through its
    /// server, so the entry need not hold the service).
    pub(crate) svc_stats: Arc<Stats>,
    /// Output route to this server, cached per CPU.
    pub(crate) route: RouteCache,
    /// Its service's firewall mark (0: an address service): the mark its
    /// connections' packets carried when they matched the service, which
    /// a sync master sends along for the fast path's packets (they reach
    /// rvs before any rule marks them).
    pub(crate) svc_fwmark: u32,
}

impl Dest {
    pub(super) fn new(p: &DestParams, svc_stats: Arc<Stats>, svc_fwmark: u32) -> Result<Arc<Self>> {
        Ok(Arc::new(
            Dest {
                af: p.af,
                addr: p.addr,
                port: p.port,
                fwd: AtomicU32::new(p.fwd.to_uapi()),
                tunnel: AtomicU32::new(p.tunnel.pack()),
                weight: AtomicU32::new(p.weight),
                last_weight: AtomicU32::new(p.weight),
                u_thresh: AtomicU32::new(p.u_thresh),
                l_thresh: AtomicU32::new(p.l_thresh),
                active_conns: AtomicU32::new(0),
                inactive_conns: AtomicU32::new(0),
                persist_conns: AtomicU32::new(0),
                removed: core::sync::atomic::AtomicBool::new(false),
                overloaded: AtomicBool::new(false),
                drain_until: AtomicU64::new(0),
                id: next_dest_id(),
                stats: Stats::new()?,
                svc_stats,
                route: RouteCache::new()?,
                svc_fwmark,
            },
            GFP_KERNEL_ACCOUNT,
        )?)
    }

    pub(super) fn apply(&self, p: &DestParams) {
        // Direct routing looks routes up differently (known next hop).
        if self.fwd.swap(p.fwd.to_uapi(), Relaxed) != p.fwd.to_uapi() {
            self.route.reset();
        }
        self.tunnel.store(p.tunnel.pack(), Relaxed);
        self.weight.store(p.weight, Relaxed);
        if p.weight != 0 {
            self.last_weight.store(p.weight, Relaxed);
        }
        self.u_thresh.store(p.u_thresh, Relaxed);
        self.l_thresh.store(p.l_thresh, Relaxed);
        self.refresh_overload();
    }

    /// Re-evaluates the overload flag from the current connection count
    /// and thresholds (IPVS's hysteresis, `rvs_core::sched::overload_next`).
    /// Called whenever the count or the thresholds change and before each
    /// scheduling decision; concurrent callers may race, but each stores a
    /// state computed from a count that was current, and the next call
    /// corrects any stale one.
    pub(crate) fn refresh_overload(&self) -> bool {
        let conns = self
            .active_conns
            .load(Relaxed)
            .saturating_add(self.inactive_conns.load(Relaxed));
        let (u, l) = self.thresholds();
        let cur = self.overloaded.load(Relaxed);
        let next = sched::overload_next(cur, conns, u, l);
        if next != cur {
            self.overloaded.store(next, Relaxed);
        }
        next
    }

    /// The forwarding method for new connections.
    pub(crate) fn fwd(&self) -> FwdMethod {
        config::validate_fwd_method(self.fwd.load(Relaxed)).unwrap_or(FwdMethod::Route)
    }

    /// Marks the server deleted from its service. Its connections live on
    /// and route their packets without a cache: no device event would make
    /// an unlisted server forget a cached route.
    pub(super) fn retire(&self, w: &impl WriterToken) {
        self.removed.store(true, Relaxed);
        self.route.retire(w);
    }

    /// Whether the server was deleted from its service.
    pub(crate) fn is_removed(&self) -> bool {
        self.removed.load(Relaxed)
    }

    /// How tunnelled packets to this server are encapsulated.
    pub(crate) fn tunnel(&self) -> Tunnel {
        Tunnel::unpack(self.tunnel.load(Relaxed))
    }

    /// Weight.
    pub(crate) fn weight(&self) -> u32 {
        self.weight.load(Relaxed)
    }

    /// The weight new connections see: 0 while draining.
    pub(crate) fn sched_weight(&self) -> u32 {
        if self.is_draining() {
            0
        } else {
            self.weight()
        }
    }

    /// Whether the server drains (see `drain_until`).
    pub(crate) fn is_draining(&self) -> bool {
        self.drain_until.load(Relaxed) != 0
    }

    /// Starts (or moves) a drain ending `secs` from now; returns the
    /// deadline (jiffies, never 0).
    pub(super) fn start_drain(&self, secs: u32) -> u64 {
        // Jiffies wrap (they start 5 minutes before it): 0 means "not
        // draining", so a deadline that lands on it moves one tick on.
        let at = match jiffies().wrapping_add(secs_to_jiffies(secs)) {
            0 => 1,
            t => t,
        };
        self.drain_until.store(at, Relaxed);
        at
    }

    /// Cancels a drain (`-e`): the server takes new connections again.
    pub(super) fn cancel_drain(&self) {
        self.drain_until.store(0, Relaxed);
    }

    /// The drain's deadline (jiffies) if it drains.
    pub(crate) fn drain_deadline(&self) -> Option<u64> {
        let at = self.drain_until.load(Relaxed);
        (at != 0).then_some(at)
    }

    /// Whole seconds left of a drain (rounded up; 0 once due), if it drains.
    pub(crate) fn drain_secs_left(&self) -> Option<u32> {
        let at = self.drain_deadline()?;
        let now = jiffies();
        let left = if expired(at, now) {
            0
        } else {
            at.wrapping_sub(now)
        };
        let hz = hz().max(1);
        Some(u32::try_from(left.div_ceil(hz)).unwrap_or(u32::MAX))
    }

    /// Upper and lower connection thresholds.
    pub(crate) fn thresholds(&self) -> (u32, u32) {
        (self.u_thresh.load(Relaxed), self.l_thresh.load(Relaxed))
    }

    /// What the scheduler sees of this server now (computed when a
    /// scheduler asks, see the [`Dests`] implementation below).
    pub(super) fn view(&self) -> DestView {
        let active = self.active_conns.load(Relaxed);
        let inactive = self.inactive_conns.load(Relaxed);
        DestView {
            weight: self.sched_weight(),
            active_conns: active,
            inactive_conns: inactive,
            overloaded: self.refresh_overload(),
            hash_key: sched::dest_hash_key(&self.addr, self.port),
            last_weight: self.last_weight.load(Relaxed),
            id: self.id,
        }
    }

    pub(crate) fn same(&self, af: AddrFamily, addr: &[u8; 16], port: u16) -> bool {
        self.af == af && self.addr == *addr && self.port == port
    }
}

/// A fresh [`Dest::id`]: never 0; wraps after 2^32 - 1 servers were
/// created, far beyond any table's lifetime in practice.
fn next_dest_id() -> u32 {
    static NEXT: AtomicU32 = AtomicU32::new(1);
    loop {
        let id = NEXT.fetch_add(1, Relaxed);
        if id != 0 {
            return id;
        }
    }
}

/// The destinations of a service, newest first (IPVS's order).
pub(crate) type DestList = KVec<Arc<Dest>>;

/// The scheduler reads a list of servers directly: each server's view is
/// computed when the scheduler asks for it, so a decision copies nothing
/// and allocates nothing, whatever the number of servers.
impl Dests for [Arc<Dest>] {
    fn len(&self) -> usize {
        <[Arc<Dest>]>::len(self)
    }

    fn view(&self, i: usize) -> Option<DestView> {
        self.get(i).map(|d| d.view())
    }
}
