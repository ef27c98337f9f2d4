// SPDX-License-Identifier: GPL-2.0

//! An atomic change of services and real servers (`RVS_CMD_APPLY`,
//! `rvsadm -R --atomic`): all of it takes effect, at one instant for new
//! connections, or none of it does.
//!
//! Three steps, under the namespace's configuration mutex:
//! 1. **Stage.** Each change is checked, in order, against the services
//!    as the earlier changes left them, and recorded: new bucket lists,
//!    new real-server lists, edits to apply. New services and servers are
//!    built but not published. The first refused change ends the whole
//!    change, and nothing has been published.
//! 2. **Prepare.** Everything the publish needs is allocated: the lists
//!    with their RCU nodes, the schedulers' updates, the addresses of new
//!    VIPs for the port guard. A failure (memory) still changes nothing
//!    but that guard set, which is undone.
//! 3. **Publish** (`lb::config_gate`): pointer swaps and stores only, with
//!    bottom halves off; a new connection is scheduled either before or
//!    after all of them. Then what was replaced is freed and what was
//!    removed retired.
//!
//! Unlike `-C`, a flush inside an atomic change leaves connections alone:
//! the connections of the services it removes carry on until they expire,
//! as after `-D`; services it adds again are new services.

#![forbid(unsafe_code)]

use crate::lb::dest::{Dest, DestList};
use crate::lb::sched::{Replaced, SchedUpdate};
use crate::lb::service::{
    cfg, check_fullnat_dest, check_fullnat_service, check_port, copy_without, LocalAddrs,
    ModelError, Service, ServiceList, NO_SLOT,
};
use crate::lb::service_table::Services;
use crate::rvs_core::config::{FwdMethod, EEXIST, ENOENT, ESRCH};
use crate::rvs_core::sched::{DestView, Dests};
use crate::rvs_core::svcattr::{DestParams, ServiceKey, ServiceParams};
use crate::sys::rcu::{Prepared, WriterToken};
use core::sync::atomic::Ordering::Relaxed;
use kernel::prelude::*;
use kernel::sync::Arc;

/// A service the change touches, as it will be.
struct Staged {
    svc: Arc<Service>,
    /// Made by this change: nobody sees it before the publish.
    fresh: bool,
    /// Deleted again by a later change of the same request.
    gone: bool,
    /// Its real servers as they will be (newest first).
    dests: DestList,
    /// Whether the list or a server's weight changes (the scheduler is
    /// rebuilt).
    dests_changed: bool,
    /// Scheduler, flags and persistence as they will be (`-E`).
    params: Option<ServiceParams>,
    /// Local addresses as they will be.
    laddrs: Option<LocalAddrs>,
    /// Edits of its real servers, in order (applied at the publish).
    edits: KVec<(Arc<Dest>, DestParams)>,
}

impl Staged {
    /// A server's forwarding method as it will be.
    fn fwd_of(&self, d: &Arc<Dest>) -> FwdMethod {
        self.edits
            .iter()
            .rev()
            .find(|(e, _)| Arc::ptr_eq(e, d))
            .map_or(d.fwd(), |(_, p)| p.fwd)
    }

    fn flags(&self) -> u32 {
        self.params
            .map_or(self.svc.flags.load(Relaxed), |p| p.flags)
    }
}

/// What the publish installs for one service that existed before.
struct Publish {
    svc: Arc<Service>,
    params: Option<ServiceParams>,
    edits: KVec<(Arc<Dest>, DestParams)>,
    laddrs: Option<Prepared<LocalAddrs>>,
    dests: Option<Prepared<DestList>>,
    sched: Option<SchedUpdate>,
}

/// An atomic change being staged. Dropping it unpublished changes nothing.
pub(crate) struct Txn<'s> {
    svcs: &'s Services,
    /// Per bucket: its list as it will be, once a change touched it.
    buckets: KVVec<Option<ServiceList>>,
    /// The buckets touched, in order.
    touched: KVec<usize>,
    /// The services touched (`Service::txn_slot` indexes this).
    staged: KVec<Staged>,
    /// Services that existed and are deleted.
    removed: KVec<Arc<Service>>,
    /// Real servers that existed and are deleted from services that stay.
    retired: KVec<Arc<Dest>>,
}

/// What an applied change leaves for the caller to do without the lock:
/// end the connections of deleted servers that were draining (as `-d` of
/// a draining server does).
pub(crate) struct Applied {
    pub(crate) drained: KVec<Arc<Dest>>,
}

impl<'s> Txn<'s> {
    /// Starts a change of `svcs`.
    pub(crate) fn new(svcs: &'s Services) -> Result<Self> {
        let n = svcs.buckets.len();
        let mut buckets = KVVec::with_capacity(n, GFP_KERNEL_ACCOUNT)?;
        for _ in 0..n {
            buckets.push(None, GFP_KERNEL_ACCOUNT)?;
        }
        Ok(Self {
            svcs,
            buckets,
            touched: KVec::new(),
            staged: KVec::new(),
            removed: KVec::new(),
            retired: KVec::new(),
        })
    }

    /// The list of bucket `i` as the change has it so far.
    fn list<'a>(&'a self, w: &'a impl WriterToken, i: usize) -> &'a [Arc<Service>] {
        match self.buckets.get(i) {
            Some(Some(l)) => l,
            _ => self
                .svcs
                .buckets
                .get(i)
                .and_then(|b| b.get_writer(w))
                .map_or(&[][..], |l| &l[..]),
        }
    }

    /// The list of bucket `i`, staged for change.
    fn list_mut(&mut self, w: &impl WriterToken, i: usize) -> Result<&mut ServiceList, ModelError> {
        let live = self
            .svcs
            .buckets
            .get(i)
            .and_then(|b| b.get_writer(w))
            .map_or(&[][..], |l| &l[..]);
        let slot = self
            .buckets
            .get_mut(i)
            .ok_or(ModelError::Kernel(kernel::error::code::EINVAL))?;
        if slot.is_none() {
            *slot = Some(copy_without(live, None)?);
            self.touched.push(i, GFP_KERNEL_ACCOUNT)?;
        }
        slot.as_mut()
            .ok_or(ModelError::Kernel(kernel::error::code::EINVAL))
    }

    /// The service `key` as the change has it, with its bucket.
    fn find(
        &self,
        w: &impl WriterToken,
        key: &ServiceKey,
    ) -> Result<(usize, Arc<Service>), ModelError> {
        let i = self.svcs.index_of(key);
        let list = self.list(w, i);
        Services::find(list, key)
            .and_then(|n| list.get(n))
            .map(|s| (i, s.clone()))
            .ok_or(cfg(ESRCH, c"no such service"))
    }

    /// The staged state of `svc`, staged now if it was not.
    fn stage(
        &mut self,
        w: &impl WriterToken,
        svc: &Arc<Service>,
    ) -> Result<&mut Staged, ModelError> {
        let mut slot = svc.txn_slot.load(Relaxed);
        if slot == NO_SLOT {
            slot = u32::try_from(self.staged.len()).map_err(|_| ModelError::Kernel(ENOMEM))?;
            let dests = copy_without(svc.dests.get_writer(w), None)?;
            self.staged.push(
                Staged {
                    svc: svc.clone(),
                    fresh: false,
                    gone: false,
                    dests,
                    dests_changed: false,
                    params: None,
                    laddrs: None,
                    edits: KVec::new(),
                },
                GFP_KERNEL_ACCOUNT,
            )?;
            svc.txn_slot.store(slot, Relaxed);
        }
        self.staged
            .get_mut(slot as usize)
            .ok_or(ModelError::Kernel(kernel::error::code::EINVAL))
    }

    /// `-A`. The caller has activated the namespace for the family.
    pub(crate) fn add_service(
        &mut self,
        w: &impl WriterToken,
        key: ServiceKey,
        p: &ServiceParams,
        laddrs: Option<LocalAddrs>,
    ) -> Result<(), ModelError> {
        if self.find(w, &key).is_ok() {
            return Err(cfg(EEXIST, c"service already exists"));
        }
        let svc = Service::new(key, p)?;
        let i = self.svcs.index_of(&key);
        self.list_mut(w, i)?.push(svc.clone(), GFP_KERNEL_ACCOUNT)?;
        let s = self.stage(w, &svc)?;
        s.fresh = true;
        s.laddrs = laddrs;
        Ok(())
    }

    /// `-E`.
    pub(crate) fn edit_service(
        &mut self,
        w: &impl WriterToken,
        key: &ServiceKey,
        p: &ServiceParams,
        laddrs: Option<LocalAddrs>,
    ) -> Result<(), ModelError> {
        let (_, svc) = self.find(w, key)?;
        let s = self.stage(w, &svc)?;
        let fullnat = s.dests.iter().any(|d| s.fwd_of(d) == FwdMethod::FullNat);
        check_fullnat_service(fullnat, laddrs.as_ref(), p.flags)?;
        s.params = Some(*p);
        if laddrs.is_some() {
            s.laddrs = laddrs;
        }
        Ok(())
    }

    /// `-D`.
    pub(crate) fn delete_service(
        &mut self,
        w: &impl WriterToken,
        key: &ServiceKey,
    ) -> Result<(), ModelError> {
        let (i, svc) = self.find(w, key)?;
        let list = self.list_mut(w, i)?;
        let n = Services::find(list, key);
        *list = copy_without(list, n)?;
        self.forget(w, &svc)
    }

    /// Records that `svc`, out of its staged bucket list already, is gone.
    fn forget(&mut self, w: &impl WriterToken, svc: &Arc<Service>) -> Result<(), ModelError> {
        let s = self.stage(w, svc)?;
        s.gone = true;
        if !s.fresh {
            self.removed.push(svc.clone(), GFP_KERNEL_ACCOUNT)?;
        }
        Ok(())
    }

    /// `-C`: every service goes (their connections stay; see the module's
    /// documentation).
    pub(crate) fn flush(&mut self, w: &impl WriterToken) -> Result<(), ModelError> {
        for i in 0..self.buckets.len() {
            if self.list(w, i).is_empty() {
                continue;
            }
            let list = core::mem::take(self.list_mut(w, i)?);
            for svc in list.iter() {
                self.forget(w, svc)?;
            }
        }
        Ok(())
    }

    /// The checks of a real server's method against its service, as the
    /// service will be.
    fn check_dest(
        &mut self,
        w: &impl WriterToken,
        key: &ServiceKey,
        p: &DestParams,
    ) -> Result<Arc<Service>, ModelError> {
        let (_, svc) = self.find(w, key)?;
        check_port(key, p)?;
        let s = self.stage(w, &svc)?;
        let no_laddrs = match &s.laddrs {
            Some(l) => l.is_empty(),
            None => svc.laddrs.get_writer(w).is_empty(),
        };
        check_fullnat_dest(p.fwd, no_laddrs, s.flags())?;
        Ok(svc)
    }

    /// `-a`.
    pub(crate) fn add_dest(
        &mut self,
        w: &impl WriterToken,
        key: &ServiceKey,
        p: &DestParams,
    ) -> Result<(), ModelError> {
        let svc = self.check_dest(w, key, p)?;
        let s = self.stage(w, &svc)?;
        if s.dests.iter().any(|d| d.same(p.af, &p.addr, p.port)) {
            return Err(cfg(EEXIST, c"real server already exists"));
        }
        let d = Dest::new(p, svc.stats.clone(), key.fwmark)?;
        // Newest first, as `Services::add_dest`: pushed, then moved to
        // the front.
        s.dests.push(d, GFP_KERNEL_ACCOUNT)?;
        s.dests.rotate_right(1);
        s.dests_changed = true;
        Ok(())
    }

    /// `-e`.
    pub(crate) fn edit_dest(
        &mut self,
        w: &impl WriterToken,
        key: &ServiceKey,
        p: &DestParams,
    ) -> Result<(), ModelError> {
        let svc = self.check_dest(w, key, p)?;
        let s = self.stage(w, &svc)?;
        let d = s
            .dests
            .iter()
            .find(|d| d.same(p.af, &p.addr, p.port))
            .cloned()
            .ok_or(cfg(ENOENT, c"no such real server"))?;
        s.edits.push((d, *p), GFP_KERNEL_ACCOUNT)?;
        s.dests_changed = true;
        Ok(())
    }

    /// `-d` (without a drain).
    pub(crate) fn delete_dest(
        &mut self,
        w: &impl WriterToken,
        key: &ServiceKey,
        p: &DestParams,
    ) -> Result<(), ModelError> {
        let (_, svc) = self.find(w, key)?;
        let s = self.stage(w, &svc)?;
        let i = s
            .dests
            .iter()
            .position(|d| d.same(p.af, &p.addr, p.port))
            .ok_or(cfg(ENOENT, c"no such real server"))?;
        let d = s
            .dests
            .get(i)
            .cloned()
            .ok_or(ModelError::Kernel(kernel::error::code::EINVAL))?;
        s.dests = copy_without(&s.dests, Some(i))?;
        s.dests_changed = true;
        let published = svc.dests.get_writer(w).iter().any(|x| Arc::ptr_eq(x, &d));
        if published {
            self.retired.push(d, GFP_KERNEL_ACCOUNT)?;
        }
        Ok(())
    }

    /// Prepares and publishes the change (steps 2 and 3 of the module's
    /// documentation). On error nothing was published.
    pub(crate) fn commit(mut self, w: &mut impl WriterToken) -> Result<Applied, ModelError> {
        // New services are complete before anyone can see them.
        let mut publish = KVec::with_capacity(self.staged.len(), GFP_KERNEL_ACCOUNT)?;
        let mut fresh_vips = 0usize;
        for s in self.staged.iter_mut() {
            if s.gone {
                continue;
            }
            let svc = s.svc.clone();
            if s.fresh {
                if !svc.key.is_fwmark() {
                    fresh_vips += 1;
                }
                if let Some(p) = s.params {
                    svc.flags.store(p.flags, Relaxed);
                    svc.timeout.store(p.timeout, Relaxed);
                    svc.netmask.store(p.netmask, Relaxed);
                }
                if let Some(l) = s.laddrs.take() {
                    svc.laddrs.replace(l, w)?;
                }
                for (d, p) in s.edits.iter() {
                    d.apply(p);
                }
                let update = svc.prepare_sched(&s.dests, s.params.map(|p| (p.sched, p.flags)))?;
                svc.dests.replace(core::mem::take(&mut s.dests), w)?;
                svc.commit_sched(update);
                continue;
            }
            let sched = match (s.dests_changed, s.params) {
                (false, None) => None,
                (_, p) => {
                    let mut u = svc.prepare_sched(&s.dests, p.map(|p| (p.sched, p.flags)))?;
                    let kind = p.map_or_else(|| svc.sched_kind(), |p| p.sched);
                    let view = StagedView {
                        dests: &s.dests,
                        edits: &s.edits,
                    };
                    u.prebuild_mh(kind, &view)?;
                    Some(u)
                }
            };
            let dests = match s.dests_changed {
                true => Some(Prepared::new(core::mem::take(&mut s.dests))?),
                false => None,
            };
            let laddrs = match s.laddrs.take() {
                Some(l) => Some(Prepared::new(l)?),
                None => None,
            };
            publish.push(
                Publish {
                    svc,
                    params: s.params,
                    edits: core::mem::take(&mut s.edits),
                    laddrs,
                    dests,
                    sched,
                },
                GFP_KERNEL_ACCOUNT,
            )?;
        }
        let mut lists = KVec::with_capacity(self.touched.len(), GFP_KERNEL_ACCOUNT)?;
        for &i in self.touched.iter() {
            let list = self
                .buckets
                .get_mut(i)
                .and_then(Option::take)
                .unwrap_or_default();
            let prepared = match list.is_empty() {
                true => None,
                false => Some(Prepared::new(list)?),
            };
            lists.push((i, prepared), GFP_KERNEL_ACCOUNT)?;
        }
        let mut olds: KVec<Replaced> = KVec::with_capacity(publish.len(), GFP_KERNEL_ACCOUNT)?;
        // The port guard learns the new VIPs first (it allocates): for
        // the instant before the publish, ports of a new VIP that no
        // service has yet are guarded already.
        let mut acquired = KVec::with_capacity(fresh_vips, GFP_KERNEL_ACCOUNT)?;
        for s in self
            .staged
            .iter()
            .filter(|s| s.fresh && !s.gone && !s.svc.key.is_fwmark())
        {
            let k = &s.svc.key;
            if let Err(e) = self.svcs.vips.acquire(w, k.af, &k.addr) {
                for k in acquired.iter() {
                    let k: &ServiceKey = k;
                    self.svcs.vips.release(w, k.af, &k.addr);
                }
                return Err(e.into());
            }
            // Within the capacity reserved above: no allocation.
            let _ = acquired.push(*k, GFP_KERNEL_ACCOUNT);
        }
        // Counts as they will be.
        let (mut count, mut marks, mut all_ports) = (
            i64::from(self.svcs.count.load(Relaxed)),
            i64::from(self.svcs.fwmark_services.load(Relaxed)),
            i64::from(self.svcs.all_ports_services.load(Relaxed)),
        );
        let mut tally = |k: &ServiceKey, n: i64| {
            count += n;
            if k.is_fwmark() {
                marks += n;
            } else if k.port == 0 {
                all_ports += n;
            }
        };
        for s in self.staged.iter().filter(|s| s.fresh && !s.gone) {
            tally(&s.svc.key, 1);
        }
        for svc in self.removed.iter() {
            tally(&svc.key, -1);
        }
        let clamp = |n: i64| u32::try_from(n.max(0)).unwrap_or(u32::MAX);
        let (count, marks, all_ports) = (clamp(count), clamp(marks), clamp(all_ports));

        let svcs = self.svcs;
        svcs.gate.publish(|| {
            // A count that grows grows before the lookups it enables, and
            // one that shrinks shrinks after (`lookup_fwmark`, `lookup`).
            raise(&svcs.fwmark_services, marks);
            raise(&svcs.all_ports_services, all_ports);
            for p in publish.iter_mut() {
                for (d, dp) in p.edits.iter() {
                    d.apply(dp);
                    // An edit ends a drain, as `-e` does.
                    d.cancel_drain();
                }
                if let Some(l) = p.laddrs.take() {
                    p.svc.laddrs.install(l, &mut *w);
                }
                if let Some(sp) = p.params {
                    p.svc.flags.store(sp.flags, Relaxed);
                    p.svc.timeout.store(sp.timeout, Relaxed);
                    p.svc.netmask.store(sp.netmask, Relaxed);
                }
                if let Some(d) = p.dests.take() {
                    p.svc.dests.install(d, &mut *w);
                }
                if let Some(u) = p.sched.take() {
                    // Within the capacity reserved above: no allocation.
                    let _ = olds.push(p.svc.swap_sched(u), GFP_ATOMIC);
                }
            }
            for (i, list) in lists.iter_mut() {
                if let Some(b) = svcs.buckets.get(*i) {
                    b.install(list.take(), &mut *w);
                }
            }
            svcs.fwmark_services.store(marks, Relaxed);
            svcs.all_ports_services.store(all_ports, Relaxed);
            svcs.count.store(count, Relaxed);
        });
        drop(olds);

        // Retire what went: routes of deleted services' servers, the
        // guard's hold on their VIPs.
        let mut drained = KVec::new();
        for svc in self.removed.iter() {
            svc.retire_dests(w);
            if !svc.key.is_fwmark() {
                svcs.vips.release(w, svc.key.af, &svc.key.addr);
            }
        }
        for d in self.retired.iter() {
            d.retire(&*w);
            if d.is_draining() {
                // Best effort, as the connections expire anyway.
                let _ = drained.push(d.clone(), GFP_KERNEL_ACCOUNT);
            }
        }
        Ok(Applied { drained })
    }
}

/// A service's real servers as the scheduler will see them once the
/// change's edits are applied (weights), for building mh's table ahead.
struct StagedView<'a> {
    dests: &'a [Arc<Dest>],
    edits: &'a [(Arc<Dest>, DestParams)],
}

impl Dests for StagedView<'_> {
    fn len(&self) -> usize {
        self.dests.len()
    }

    fn view(&self, i: usize) -> Option<DestView> {
        let d = self.dests.get(i)?;
        let mut v = Dests::view(self.dests, i)?;
        if let Some((_, p)) = self.edits.iter().rev().find(|(e, _)| Arc::ptr_eq(e, d)) {
            // An edit sets the weight and ends a drain.
            v.weight = p.weight;
            if p.weight != 0 {
                v.last_weight = p.weight;
            }
        }
        Some(v)
    }
}

/// Raises `c` to `to` if it is lower.
fn raise(c: &core::sync::atomic::AtomicU32, to: u32) {
    if c.load(Relaxed) < to {
        c.store(to, Relaxed);
    }
}

impl Drop for Txn<'_> {
    fn drop(&mut self) {
        // Committed or not, no service stays staged.
        for s in self.staged.iter() {
            s.svc.txn_slot.store(NO_SLOT, Relaxed);
        }
    }
}
