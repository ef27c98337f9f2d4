// SPDX-License-Identifier: GPL-2.0

//! The service table of one namespace: hash buckets of copy-on-write
//! service lists that the packet path reads under RCU without a lock, and
//! the configuration commands that change services and real servers
//! (under the namespace's configuration mutex).
//!
//! C counterpart: the service table of net/netfilter/ipvs/ip_vs_ctl.c.

#![forbid(unsafe_code)]

use crate::lb::config_gate::ConfigGate;
use crate::lb::dest::Dest;
use crate::lb::service::{
    cfg, check_fullnat_dest, check_fullnat_service, check_port, copy_without, LocalAddrs,
    ModelError, Service, ServiceList,
};
use crate::lb::vip_set::VipSet;
use crate::rvs_core::config::{AddrFamily, FwdMethod, EEXIST, ENOENT, ESRCH};
use crate::rvs_core::hash::{self, SipKey};
use crate::rvs_core::svcattr::{DestParams, ServiceKey, ServiceParams};
use crate::sys::rcu::{RcuOpt, ReadGuard, WriterToken};
use crate::sys::{random, sched as ksched};
use core::sync::atomic::{AtomicU32, Ordering::Relaxed};
use kernel::prelude::*;
use kernel::sync::Arc;

/// log2 of the service table's bucket count: 4,096 buckets keep chains
/// short (2-3) even with 10,000 services. IPVS has 256.
pub(crate) const SVC_TAB_BITS: u32 = 12;

/// A FullNAT real server needs the service's local addresses, and its
/// connections need entries (no one-packet scheduling).
fn check_fullnat(svc: &Service, w: &impl WriterToken, p: &DestParams) -> Result<(), ModelError> {
    let no_laddrs = svc.laddrs.get_writer(w).is_empty();
    check_fullnat_dest(p.fwd, no_laddrs, svc.flags.load(Relaxed))
}

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
    pub(super) buckets: KVVec<RcuOpt<ServiceList>>,
    key: SipKey,
    /// Number of services (writer side).
    pub(super) count: AtomicU32,
    /// How many of them are firewall-mark services: marked packets look
    /// for one only when there are some.
    pub(super) fwmark_services: AtomicU32,
    /// How many are all-ports (port 0, persistent) services: a packet
    /// without a service of its own port looks for one only when there are
    /// some (IPVS's `nullsvc_counter`).
    pub(super) all_ports_services: AtomicU32,
    /// Where an atomic change (`lb::transaction`) takes effect at once.
    pub(crate) gate: ConfigGate,
    /// The addresses of the address services (not the mark services), for
    /// the VIP port guard.
    pub(crate) vips: VipSet,
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
        let key = SipKey::from_bytes(&key);
        Ok(Self {
            buckets,
            key,
            vips: VipSet::new(key)?,
            count: AtomicU32::new(0),
            fwmark_services: AtomicU32::new(0),
            all_ports_services: AtomicU32::new(0),
            gate: ConfigGate::new(),
        })
    }

    /// The index of the bucket of `key`'s service.
    pub(super) fn index_of(&self, key: &ServiceKey) -> usize {
        let h = if key.is_fwmark() {
            hash::conn_hash(&self.key, 0, &mark_as_addr(key.fwmark), 0)
        } else {
            hash::conn_hash(&self.key, key.protocol, &key.addr, key.port)
        };
        hash::bucket(h, SVC_TAB_BITS)
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

    /// Calls `f` for every real server of every service with its
    /// service (writer side).
    pub(crate) fn for_each_service_dest<W: WriterToken>(
        &self,
        w: &W,
        mut f: impl FnMut(&Service, &Arc<Dest>),
    ) {
        for b in self.buckets.iter() {
            for svc in b.get_writer(w).map_or(&[][..], |l| &l[..]) {
                svc.dests.get_writer(w).iter().for_each(|d| f(svc, d));
            }
        }
    }

    pub(super) fn find(list: &[Arc<Service>], key: &ServiceKey) -> Option<usize> {
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
        laddrs: Option<LocalAddrs>,
    ) -> Result<(), ModelError> {
        let bucket = self.bucket_of_key(&key).ok_or(ModelError::Kernel(EINVAL))?;
        let list = bucket.get_writer(&*w).map_or(&[][..], |l| &l[..]);
        if Self::find(list, &key).is_some() {
            return Err(cfg(EEXIST, c"service already exists"));
        }
        let mut new = copy_without(list, None)?;
        let svc = Service::new(key, p)?;
        if let Some(l) = laddrs {
            svc.laddrs.replace(l, w)?;
        }
        new.push(svc, GFP_KERNEL_ACCOUNT)?;
        if !key.is_fwmark() {
            self.vips.acquire(w, key.af, &key.addr)?;
        }
        if let Err(e) = bucket.replace(Some(new), w) {
            if !key.is_fwmark() {
                self.vips.release(w, key.af, &key.addr);
            }
            return Err(e.into());
        }
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
        laddrs: Option<LocalAddrs>,
    ) -> Result<(), ModelError> {
        let svc = self.get(w, key)?.clone();
        let fullnat = svc
            .dests
            .get_writer(w)
            .iter()
            .any(|d| d.fwd() == FwdMethod::FullNat);
        check_fullnat_service(fullnat, laddrs.as_ref(), p.flags)?;
        let update = svc.prepare_sched(svc.dests.get_writer(w), Some((p.sched, p.flags)))?;
        if let Some(l) = laddrs {
            svc.laddrs.replace(l, w)?;
        }
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
        if !key.is_fwmark() {
            self.vips.release(w, key.af, &key.addr);
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
        self.vips.clear(w);
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
        check_fullnat(&svc, w, p)?;
        let dests = svc.dests.get_writer(w);
        if dests.iter().any(|d| d.same(p.af, &p.addr, p.port)) {
            return Err(cfg(EEXIST, c"real server already exists"));
        }
        // Newest first, as IPVS lists them: ties in sed/nq/lc and the
        // sh/dh/mh tables then resolve the way they do in IPVS.
        let mut new = KVec::with_capacity(dests.len() + 1, GFP_KERNEL_ACCOUNT)?;
        new.push(
            Dest::new(p, svc.stats.clone(), key.fwmark)?,
            GFP_KERNEL_ACCOUNT,
        )?;
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
        check_fullnat(&svc, w, p)?;
        let dests = svc.dests.get_writer(w);
        let d = dests
            .iter()
            .find(|d| d.same(p.af, &p.addr, p.port))
            .ok_or(cfg(ENOENT, c"no such real server"))?;
        let update = svc.prepare_sched(dests, None)?;
        d.apply(p);
        // An edit ends a drain: the server takes new connections again.
        d.cancel_drain();
        svc.commit_sched(update);
        Ok(())
    }

    /// Starts (or moves) a real server's drain (see `lb::drain`): from
    /// now on the schedulers see it at weight 0. Returns the deadline.
    pub(crate) fn drain_dest(
        &self,
        w: &mut impl WriterToken,
        key: &ServiceKey,
        p: &DestParams,
        secs: u32,
    ) -> Result<u64, ModelError> {
        let svc = self.get(w, key)?.clone();
        let dests = svc.dests.get_writer(w);
        let d = dests
            .iter()
            .find(|d| d.same(p.af, &p.addr, p.port))
            .ok_or(cfg(ENOENT, c"no such real server"))?;
        let update = svc.prepare_sched(dests, None)?;
        let at = d.start_drain(secs);
        svc.commit_sched(update);
        Ok(at)
    }

    /// Removes a real server; its connections live on until they expire
    /// (unless the caller ends them: a drain). Returns the server.
    pub(crate) fn delete_dest(
        &self,
        w: &mut impl WriterToken,
        key: &ServiceKey,
        p: &DestParams,
    ) -> Result<Option<Arc<Dest>>, ModelError> {
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
        if let Some(d) = &gone {
            d.retire(&*w);
        }
        Ok(gone)
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
