// SPDX-License-Identifier: GPL-2.0

//! The service model of one namespace: virtual services, their schedulers
//! and the service table, read by the packet path without locks (the real
//! servers themselves are in `lb::dest`).
//!
//! C counterpart: the service parts of net/netfilter/ipvs/ip_vs_ctl.c.
//!
//! Writers (netlink commands) hold the namespace's configuration mutex and
//! publish new lists through [`RcuCell`]s; the packet path reads them under
//! RCU. A list is copied on change, so a reader always sees a consistent
//! one. Services and destinations are reference counted (`Arc`): a
//! connection keeps its destination alive after the destination is
//! deleted, as IPVS's trash list does.

#![forbid(unsafe_code)]

use crate::lb::dest::{Dest, DestList};
use crate::lb::stats::Stats;
use crate::rvs_core::config::{self, AddrFamily, ConfigError, EEXIST, ENOENT, ESRCH};
use crate::rvs_core::hash::{self, SipKey};
use crate::rvs_core::sched::{Flow, LblcTable, MhTable, SchedFlags, SchedKind, SchedState};
use crate::rvs_core::svcattr::{DestParams, ServiceKey, ServiceParams};
use crate::rvs_core::uapi::{RVS_SVC_F_ONEPACKET, RVS_SVC_F_PERSISTENT};
use crate::sys::alloc::zeroed_kvbox;
use crate::sys::rcu::{lock_bh, RcuCell, RcuOpt, ReadGuard, WriterToken};
use crate::sys::{random, sched as ksched, time};
use core::sync::atomic::{AtomicU32, Ordering::Relaxed};
use kernel::prelude::*;
use kernel::sync::{new_spinlock, Arc, SpinLock};

/// A service's scheduler: its state, the list of real servers that state
/// was built for and, for mh, its lookup table, for lblc/lblcr their
/// address table.
///
/// The scheduler keeps its own copy of the list, replaced together with the
/// state and tables in one critical section of its lock
/// ([`Service::commit_sched`]), and a decision picks from that copy: a
/// table's indices and rr/wrr's cursor always refer to the list they were
/// computed for, never to a newer [`Service::dests`] published just before
/// the rebuild (or an older one read just before it).
struct Scheduler {
    state: SchedState,
    dests: DestList,
    mh: Option<KVBox<MhTable>>,
    lblc: Option<KVBox<LblcTable>>,
}

/// A scheduler update, allocated outside the scheduler's lock
/// ([`Service::prepare_sched`]) and installed without allocating
/// ([`Service::commit_sched`]).
struct SchedUpdate {
    dests: DestList,
    replacement: Option<Scheduler>,
}

/// An empty lblc/lblcr table with a random hash key (about 72 KiB:
/// kvmalloc, never on the stack).
fn new_lblc_table() -> Result<KVBox<LblcTable>> {
    // An all-zero `LblcTable` is a valid empty table (rvs_core::sched::lblc).
    let mut t = zeroed_kvbox::<LblcTable>()?;
    let mut key = [0u8; 16];
    random::fill(&mut key);
    t.set_key(&key);
    Ok(t)
}

/// Seconds since boot, monotonic (lblc/lblcr entry ages).
fn now_secs() -> u64 {
    time::jiffies() / time::hz().max(1)
}

/// A zeroed Maglev table on the heap (32 KiB: kvmalloc, never on the
/// stack).
fn new_mh_table() -> Result<KVBox<MhTable>> {
    // An all-zero `MhTable` is a valid empty table (rvs_core::sched::mh).
    zeroed_kvbox::<MhTable>()
}

impl Scheduler {
    fn new(kind: SchedKind, flags: u32) -> Result<Self> {
        let mut state = SchedState::new(kind);
        state.set_flags(SchedFlags::from_svc_flags(flags));
        let mh = if kind.needs_mh_table() {
            Some(new_mh_table()?)
        } else {
            None
        };
        let lblc = if kind.needs_lblc_table() {
            Some(new_lblc_table()?)
        } else {
            None
        };
        Ok(Self {
            state,
            dests: KVec::new(),
            mh,
            lblc,
        })
    }
}

/// A virtual service.
#[pin_data]
pub(crate) struct Service {
    /// Protocol, virtual address and port.
    pub(crate) key: ServiceKey,
    #[pin]
    sched: SpinLock<Scheduler>,
    dests: RcuCell<DestList>,
    flags: AtomicU32,
    timeout: AtomicU32,
    netmask: AtomicU32,
    /// Traffic counters.
    pub(crate) stats: Stats,
}

impl Service {
    fn new(key: ServiceKey, p: &ServiceParams) -> Result<Arc<Self>> {
        let dests = RcuCell::new(KVec::new())?;
        let stats = Stats::new()?;
        let scheduler = Scheduler::new(p.sched, p.flags)?;
        Arc::pin_init(
            pin_init!(Service {
                key,
                sched <- new_spinlock!(scheduler, "rvs_service_sched"),
                dests,
                flags: AtomicU32::new(p.flags),
                timeout: AtomicU32::new(p.timeout),
                netmask: AtomicU32::new(p.netmask),
                stats,
            }),
            GFP_KERNEL_ACCOUNT,
        )
    }

    /// Persistence: `Some((timeout seconds, mask of client addresses))`
    /// when `-p` (the mask from `-M`, IPv6: a prefix length).
    pub(crate) fn persistence(&self) -> Option<(u32, [u8; 16])> {
        if self.flags.load(Relaxed) & RVS_SVC_F_PERSISTENT == 0 {
            return None;
        }
        Some((
            self.timeout.load(Relaxed),
            config::persistence_mask(self.key.af, self.netmask.load(Relaxed)),
        ))
    }

    /// One-packet scheduling (`-o`): each UDP datagram is scheduled on
    /// its own and no connection entry is kept.
    pub(crate) fn one_packet(&self) -> bool {
        self.flags.load(Relaxed) & RVS_SVC_F_ONEPACKET != 0
    }

    /// Scheduler kind, flags, persistence timeout and netmask (listing).
    pub(crate) fn settings(&self) -> (SchedKind, u32, u32, u32) {
        let kind = lock_bh(&self.sched).state.kind();
        (
            kind,
            self.flags.load(Relaxed),
            self.timeout.load(Relaxed),
            self.netmask.load(Relaxed),
        )
    }

    /// Picks a real server for a new connection, or `None` if none is
    /// available (all weight 0, overloaded, or no servers).
    ///
    /// Picks from the scheduler's own copy of the list, under its lock,
    /// reading only the servers the scheduler looks at: no allocation.
    pub(crate) fn schedule(&self, _g: &ReadGuard, flow: &Flow) -> Option<Arc<Dest>> {
        let now = now_secs();
        let s = &mut *lock_bh(&self.sched);
        let Scheduler {
            state,
            dests,
            mh,
            lblc,
        } = s;
        if dests.is_empty() {
            return None;
        }
        let list: &[Arc<Dest>] = dests;
        let index = match lblc.as_deref_mut() {
            Some(t) => t.schedule(state.kind(), list, flow, now)?,
            None => state.schedule_flow_with(list, flow, mh.as_deref())?,
        };
        list.get(index).cloned()
    }

    /// The service itself was deleted: its servers, which its connections
    /// keep using until they expire, no longer cache routes (see
    /// [`Dest::retire`]; they are not marked removed, so those connections
    /// carry on).
    fn retire_dests(&self, w: &impl WriterToken) {
        self.dests
            .get_writer(w)
            .iter()
            .for_each(|d| d.route.retire(w));
    }

    /// Prepares telling the scheduler the real servers are now `dests`;
    /// with `new`, switching to another scheduler (and flags) too. Does
    /// every allocation, outside the scheduler's lock; nothing changes
    /// until [`Self::commit_sched`].
    fn prepare_sched(
        &self,
        dests: &[Arc<Dest>],
        new: Option<(SchedKind, u32)>,
    ) -> Result<SchedUpdate, ModelError> {
        let dests = copy_without(dests, None)?;
        // lblc/lblcr keep what they learnt when the service is edited
        // without changing its scheduler (as IPVS keeps its scheduler).
        let current = lock_bh(&self.sched).state.kind();
        let new = new.filter(|&(kind, _)| !(kind == current && kind.needs_lblc_table()));
        let replacement = match new {
            Some((kind, flags)) => Some(Scheduler::new(kind, flags)?),
            None => None,
        };
        Ok(SchedUpdate { dests, replacement })
    }

    /// Installs a prepared update: in one critical section the scheduler
    /// takes the new list and rebuilds its state and tables for it.
    fn commit_sched(&self, update: SchedUpdate) {
        let SchedUpdate { dests, replacement } = update;
        let old = {
            let s = &mut *lock_bh(&self.sched);
            let old_sched = replacement.map(|r| core::mem::replace(s, r));
            let old_dests = core::mem::replace(&mut s.dests, dests);
            let Scheduler {
                state, dests, mh, ..
            } = s;
            let list: &[Arc<Dest>] = dests;
            // The mh rebuild (~100 us) runs with bottom halves off; a lookup
            // waits at most that long, and only on configuration changes.
            state.dests_changed_with(list, mh.as_deref_mut());
            (old_sched, old_dests)
        };
        // Free the old tables (up to 72 KiB) and list outside the lock.
        drop(old);
    }
}

/// All services of a namespace.
pub(crate) type ServiceList = KVec<Arc<Service>>;

/// Error of a configuration change: either a precise validation error for
/// the extended ACK, or a plain kernel error (allocation).
pub(crate) enum ModelError {
    /// Validation or lookup failure, with its message.
    Config(ConfigError),
    /// Kernel error, e.g. out of memory.
    Kernel(Error),
}

impl From<Error> for ModelError {
    fn from(e: Error) -> Self {
        ModelError::Kernel(e)
    }
}

impl From<kernel::alloc::AllocError> for ModelError {
    fn from(_: kernel::alloc::AllocError) -> Self {
        ModelError::Kernel(ENOMEM)
    }
}

fn cfg(errno: i32, msg: &'static core::ffi::CStr) -> ModelError {
    ModelError::Config(ConfigError::new(errno, msg))
}

/// A real server's port must be the service's unless it is NAT'ed; a
/// firewall-mark service has no port, so any goes (0 keeps the packet's).
fn check_port(key: &ServiceKey, p: &DestParams) -> Result<(), ModelError> {
    if key.is_fwmark() {
        return Ok(());
    }
    config::port_mapping_allowed(p.fwd, key.port, p.port).map_err(ModelError::Config)
}

/// log2 of the service table's bucket count: 4,096 buckets keep chains
/// short (2-3) even with 10,000 services. IPVS has 256.
pub(crate) const SVC_TAB_BITS: u32 = 12;

/// A firewall mark in the address slot of the bucket hash (with protocol
/// and port 0), so mark services share the table with address services.
fn mark_as_addr(mark: u32) -> [u8; 16] {
    let mut a = [0u8; 16];
    a[..4].copy_from_slice(&mark.to_be_bytes());
    a
}

/// The service table of a namespace: a fixed array of hash buckets, each a
/// short copy-on-write list published through RCU. The packet path hashes
/// the key and scans one bucket; a configuration change copies only that
/// bucket, so adding n services costs O(n), not O(n^2).
///
/// Buckets are chosen by SipHash of (protocol, address, port) under a
/// per-namespace random key (the connection table's hash); a firewall-mark
/// service hashes its mark as the address, with protocol and port 0.
pub(crate) struct Services {
    buckets: KVVec<RcuOpt<ServiceList>>,
    key: SipKey,
    /// Number of services (writer side).
    count: AtomicU32,
    /// How many of them are firewall-mark services: marked packets look
    /// for one only when there are some.
    fwmark_services: AtomicU32,
    /// How many are all-ports (port 0, persistent) services: a packet
    /// without a service of its own port looks for one only when there are
    /// some (IPVS's `nullsvc_counter`).
    all_ports_services: AtomicU32,
}

fn copy_without<T>(src: &[Arc<T>], skip: Option<usize>) -> Result<KVec<Arc<T>>, ModelError> {
    let mut out = KVec::with_capacity(src.len() + 1, GFP_KERNEL_ACCOUNT)?;
    for (i, item) in src.iter().enumerate() {
        if Some(i) != skip {
            out.push(item.clone(), GFP_KERNEL_ACCOUNT)?;
        }
    }
    Ok(out)
}

impl Services {
    /// An empty table.
    pub(crate) fn new() -> Result<Self> {
        let n = 1usize << SVC_TAB_BITS;
        let mut buckets = KVVec::with_capacity(n, GFP_KERNEL_ACCOUNT)?;
        for _ in 0..n {
            buckets.push(RcuOpt::empty(), GFP_KERNEL_ACCOUNT)?;
        }
        let mut key = [0u8; 16];
        random::fill(&mut key);
        Ok(Self {
            buckets,
            key: SipKey::from_bytes(&key),
            count: AtomicU32::new(0),
            fwmark_services: AtomicU32::new(0),
            all_ports_services: AtomicU32::new(0),
        })
    }

    fn bucket_of(&self, protocol: u8, addr: &[u8; 16], port: u16) -> Option<&RcuOpt<ServiceList>> {
        let h = hash::conn_hash(&self.key, protocol, addr, port);
        self.buckets.get(hash::bucket(h, SVC_TAB_BITS))
    }

    fn bucket_of_key(&self, key: &ServiceKey) -> Option<&RcuOpt<ServiceList>> {
        if key.is_fwmark() {
            return self.bucket_of(0, &mark_as_addr(key.fwmark), 0);
        }
        self.bucket_of(key.protocol, &key.addr, key.port)
    }

    /// Number of services.
    pub(crate) fn count(&self) -> u32 {
        self.count.load(Relaxed)
    }

    /// Updates the rate estimates of the services (and their real servers)
    /// in every other bucket, starting at bucket `half` (0 or 1): the
    /// namespace's periodic worker alternates the halves; `elapsed` is the
    /// time since that half's last estimate.
    pub(crate) fn estimate(&self, half: usize, elapsed: u64, hz: u64) {
        if self.count() == 0 {
            return;
        }
        let buckets = self.buckets.iter().enumerate().skip(half).step_by(2);
        for (n, (_, b)) in buckets.enumerate() {
            {
                let g = ReadGuard::new();
                for svc in b.get(&g).map_or(&[][..], |l| &l[..]) {
                    svc.stats.estimate(elapsed, hz);
                    for d in svc.dests.get(&g).iter() {
                        d.stats.estimate(elapsed, hz);
                    }
                }
            }
            if n % 512 == 511 {
                // Process context (the worker), no locks or RCU read
                // section held here.
                ksched::cond_resched();
            }
        }
    }

    /// The service for a packet to `addr:port` over `protocol`: the one of
    /// that port, else the address's all-ports (port 0) service, as IPVS's
    /// `ip_vs_service_find`.
    pub(crate) fn lookup<'g>(
        &'g self,
        g: &'g ReadGuard,
        af: AddrFamily,
        protocol: u8,
        addr: &[u8; 16],
        port: u16,
    ) -> Option<&'g Arc<Service>> {
        let exact = self.lookup_port(g, af, protocol, addr, port);
        if exact.is_some() || port == 0 || self.all_ports_services.load(Relaxed) == 0 {
            return exact;
        }
        self.lookup_port(g, af, protocol, addr, 0)
    }

    /// The service of exactly `addr:port` over `protocol`.
    fn lookup_port<'g>(
        &'g self,
        g: &'g ReadGuard,
        af: AddrFamily,
        protocol: u8,
        addr: &[u8; 16],
        port: u16,
    ) -> Option<&'g Arc<Service>> {
        self.bucket_of(protocol, addr, port)?
            .get(g)?
            .iter()
            .find(|s| {
                s.key.protocol == protocol
                    && s.key.port == port
                    && s.key.addr == *addr
                    && s.key.fwmark == 0
                    && s.key.af == af
            })
    }

    /// The firewall-mark service of family `af` for a packet of that
    /// family marked `mark`. As in IPVS (`ip_vs_service_find`, which keys
    /// mark services by (af, mark)), an IPv4 mark service never catches an
    /// IPv6 packet carrying the same mark, nor the reverse. The packet path
    /// asks this before [`Self::lookup`]; unmarked packets and namespaces
    /// without firewall-mark services pay one comparison.
    pub(crate) fn lookup_fwmark<'g>(
        &'g self,
        g: &'g ReadGuard,
        af: AddrFamily,
        mark: u32,
    ) -> Option<&'g Arc<Service>> {
        if mark == 0 || self.fwmark_services.load(Relaxed) == 0 {
            return None;
        }
        self.bucket_of(0, &mark_as_addr(mark), 0)?
            .get(g)?
            .iter()
            .find(|s| s.key.fwmark == mark && s.key.af == af)
    }

    /// The service at dump position (`bucket`, `index` in its chain) or the
    /// next one after it, with its position; `None` past the last
    /// (writer side, for resumable dumps).
    pub(crate) fn at<'a>(
        &'a self,
        w: &'a impl WriterToken,
        mut bucket: usize,
        mut index: usize,
    ) -> Option<(&'a Arc<Service>, usize, usize)> {
        while let Some(b) = self.buckets.get(bucket) {
            if let Some(svc) = b.get_writer(w).and_then(|l| l.get(index)) {
                return Some((svc, bucket, index));
            }
            bucket += 1;
            index = 0;
        }
        None
    }

    /// Every service (writer side), for zeroing all counters.
    fn all(&self, w: &mut impl WriterToken) -> Result<ServiceList, ModelError> {
        let mut out = KVec::with_capacity(self.count() as usize, GFP_KERNEL_ACCOUNT)?;
        for b in self.buckets.iter() {
            for svc in b.get_writer(&*w).map_or(&[][..], |l| &l[..]) {
                out.push(svc.clone(), GFP_KERNEL_ACCOUNT)?;
            }
        }
        Ok(out)
    }

    /// Calls `f` for every real server of every service (writer side).
    pub(crate) fn for_each_dest<W: WriterToken>(&self, w: &W, mut f: impl FnMut(&Dest, &W)) {
        for b in self.buckets.iter() {
            for svc in b.get_writer(w).map_or(&[][..], |l| &l[..]) {
                svc.dests.get_writer(w).iter().for_each(|d| f(d, w));
            }
        }
    }

    fn find(list: &[Arc<Service>], key: &ServiceKey) -> Option<usize> {
        list.iter().position(|s| s.key == *key)
    }

    /// The service with `key`, or ESRCH.
    pub(crate) fn get<'a>(
        &'a self,
        w: &'a mut impl WriterToken,
        key: &ServiceKey,
    ) -> Result<&'a Arc<Service>, ModelError> {
        let list = self
            .bucket_of_key(key)
            .and_then(|b| b.get_writer(&*w))
            .map_or(&[][..], |l| &l[..]);
        Self::find(list, key)
            .and_then(|i| list.get(i))
            .ok_or(cfg(ESRCH, c"no such service"))
    }

    /// Adds a service; EEXIST if one with the same key exists.
    pub(crate) fn add(
        &self,
        w: &mut impl WriterToken,
        key: ServiceKey,
        p: &ServiceParams,
    ) -> Result<(), ModelError> {
        let bucket = self.bucket_of_key(&key).ok_or(ModelError::Kernel(EINVAL))?;
        let list = bucket.get_writer(&*w).map_or(&[][..], |l| &l[..]);
        if Self::find(list, &key).is_some() {
            return Err(cfg(EEXIST, c"service already exists"));
        }
        let mut new = copy_without(list, None)?;
        new.push(Service::new(key, p)?, GFP_KERNEL_ACCOUNT)?;
        bucket.replace(Some(new), w)?;
        self.count.fetch_add(1, Relaxed);
        if key.is_fwmark() {
            self.fwmark_services.fetch_add(1, Relaxed);
        } else if key.port == 0 {
            self.all_ports_services.fetch_add(1, Relaxed);
        }
        Ok(())
    }

    /// Changes a service's scheduler and persistence settings.
    pub(crate) fn edit(
        &self,
        w: &mut impl WriterToken,
        key: &ServiceKey,
        p: &ServiceParams,
    ) -> Result<(), ModelError> {
        let svc = self.get(w, key)?.clone();
        let update = svc.prepare_sched(svc.dests.get_writer(w), Some((p.sched, p.flags)))?;
        svc.flags.store(p.flags, Relaxed);
        svc.timeout.store(p.timeout, Relaxed);
        svc.netmask.store(p.netmask, Relaxed);
        svc.commit_sched(update);
        Ok(())
    }

    /// Deletes a service. Its existing connections keep their servers
    /// until they expire, as in IPVS.
    pub(crate) fn delete(
        &self,
        w: &mut impl WriterToken,
        key: &ServiceKey,
    ) -> Result<(), ModelError> {
        let bucket = self.bucket_of_key(key).ok_or(ModelError::Kernel(EINVAL))?;
        let list = bucket.get_writer(&*w).map_or(&[][..], |l| &l[..]);
        let i = Self::find(list, key).ok_or(cfg(ESRCH, c"no such service"))?;
        let new = copy_without(list, Some(i))?;
        let gone = list.get(i).cloned();
        bucket.replace((!new.is_empty()).then_some(new), w)?;
        if let Some(svc) = gone {
            svc.retire_dests(w);
        }
        self.count.fetch_sub(1, Relaxed);
        if key.is_fwmark() {
            self.fwmark_services.fetch_sub(1, Relaxed);
        } else if key.port == 0 {
            self.all_ports_services.fetch_sub(1, Relaxed);
        }
        Ok(())
    }

    /// Deletes every service.
    pub(crate) fn flush(&self, w: &mut impl WriterToken) -> Result<(), ModelError> {
        // No server needs to retire its route cache (see `delete`): the
        // caller clears every connection too, so the servers are freed,
        // caches and all, a grace period from now.
        for b in self.buckets.iter() {
            if b.get_writer(&*w).is_some() {
                b.replace(None, &mut *w)?;
            }
        }
        self.count.store(0, Relaxed);
        self.fwmark_services.store(0, Relaxed);
        self.all_ports_services.store(0, Relaxed);
        Ok(())
    }

    /// Adds a real server to the service `key`.
    pub(crate) fn add_dest(
        &self,
        w: &mut impl WriterToken,
        key: &ServiceKey,
        p: &DestParams,
    ) -> Result<(), ModelError> {
        let svc = self.get(w, key)?.clone();
        check_port(key, p)?;
        let dests = svc.dests.get_writer(w);
        if dests.iter().any(|d| d.same(p.af, &p.addr, p.port)) {
            return Err(cfg(EEXIST, c"real server already exists"));
        }
        // Newest first, as IPVS lists them: ties in sed/nq/lc and the
        // sh/dh/mh tables then resolve the way they do in IPVS.
        let mut new = KVec::with_capacity(dests.len() + 1, GFP_KERNEL_ACCOUNT)?;
        new.push(Dest::new(p)?, GFP_KERNEL_ACCOUNT)?;
        for d in dests.iter() {
            new.push(d.clone(), GFP_KERNEL_ACCOUNT)?;
        }
        let update = svc.prepare_sched(&new, None)?;
        svc.dests.replace(new, w)?;
        svc.commit_sched(update);
        Ok(())
    }

    /// Changes a real server's forwarding method, weight and thresholds.
    pub(crate) fn edit_dest(
        &self,
        w: &mut impl WriterToken,
        key: &ServiceKey,
        p: &DestParams,
    ) -> Result<(), ModelError> {
        let svc = self.get(w, key)?.clone();
        check_port(key, p)?;
        let dests = svc.dests.get_writer(w);
        let d = dests
            .iter()
            .find(|d| d.same(p.af, &p.addr, p.port))
            .ok_or(cfg(ENOENT, c"no such real server"))?;
        let update = svc.prepare_sched(dests, None)?;
        d.apply(p);
        svc.commit_sched(update);
        Ok(())
    }

    /// Removes a real server; its connections live on until they expire.
    pub(crate) fn delete_dest(
        &self,
        w: &mut impl WriterToken,
        key: &ServiceKey,
        p: &DestParams,
    ) -> Result<(), ModelError> {
        let svc = self.get(w, key)?.clone();
        let dests = svc.dests.get_writer(w);
        let i = dests
            .iter()
            .position(|d| d.same(p.af, &p.addr, p.port))
            .ok_or(cfg(ENOENT, c"no such real server"))?;
        let gone = dests.get(i).cloned();
        let new = copy_without(dests, Some(i))?;
        let update = svc.prepare_sched(&new, None)?;
        svc.dests.replace(new, w)?;
        svc.commit_sched(update);
        // Only once nothing can fail: a refused delete leaves the server
        // listed and working, not listed but retired.
        if let Some(d) = gone {
            d.retire(&*w);
        }
        Ok(())
    }

    /// Zeroes the counters of one service (`Some`) or all, with their
    /// real servers.
    pub(crate) fn zero(
        &self,
        w: &mut impl WriterToken,
        key: Option<&ServiceKey>,
    ) -> Result<(), ModelError> {
        let list = match key {
            Some(k) => {
                let svc = self.get(w, k)?.clone();
                let mut one = KVec::new();
                one.push(svc, GFP_KERNEL_ACCOUNT)?;
                one
            }
            None => self.all(&mut *w)?,
        };
        for svc in list.iter() {
            svc.stats.zero();
            for d in svc.dests.get_writer(w).iter() {
                d.stats.zero();
            }
        }
        Ok(())
    }

    /// The real servers of a service (writer side, for dumps).
    pub(crate) fn dests_of<'a>(
        &'a self,
        w: &'a mut impl WriterToken,
        key: &ServiceKey,
    ) -> Result<KVec<Arc<Dest>>, ModelError> {
        let svc = self.get(w, key)?.clone();
        let dests = svc.dests.get_writer(w);
        copy_without(dests, None)
    }
}
