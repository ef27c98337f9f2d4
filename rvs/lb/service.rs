// SPDX-License-Identifier: GPL-2.0

//! A virtual service of one namespace: its settings, its real servers and
//! its scheduler, read by the packet path without locks; and the errors of
//! configuration changes. The real servers themselves are in `lb::dest`,
//! the scheduler glue in `lb::sched`, the table of services in
//! `lb::service_table`.
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
use crate::lb::sched::{Replaced, SchedUpdate, Scheduler};
use crate::lb::stats::Stats;
use crate::rvs_core::config::{self, ConfigError, FwdMethod};
use crate::rvs_core::sched::{Flow, SchedKind};
use crate::rvs_core::svcattr::{DestParams, ServiceKey, ServiceParams};
use crate::rvs_core::uapi::{RVS_SVC_F_ONEPACKET, RVS_SVC_F_PERSISTENT};
use crate::sys::rcu::{lock_bh, RcuCell, ReadGuard, WriterToken};
use core::sync::atomic::{AtomicU32, Ordering::Relaxed};
use kernel::prelude::*;
use kernel::sync::{new_spinlock, Arc, SpinLock};

/// A virtual service.
#[pin_data]
pub(crate) struct Service {
    /// Protocol, virtual address and port.
    pub(crate) key: ServiceKey,
    #[pin]
    pub(super) sched: SpinLock<Scheduler>,
    pub(super) dests: RcuCell<DestList>,
    pub(super) flags: AtomicU32,
    pub(super) timeout: AtomicU32,
    pub(super) netmask: AtomicU32,
    /// FullNAT's local addresses (`--laddr`): its connections leave from
    /// one of them.
    pub(crate) laddrs: RcuCell<LocalAddrs>,
    /// Traffic counters.
    pub(crate) stats: Arc<Stats>,
    /// Writer side only: the service's place in the atomic change being
    /// staged (`lb::transaction`), `NO_SLOT` outside one.
    pub(super) txn_slot: AtomicU32,
}

/// [`Service::txn_slot`] of a service no atomic change has staged.
pub(super) const NO_SLOT: u32 = u32::MAX;

impl Service {
    pub(super) fn new(key: ServiceKey, p: &ServiceParams) -> Result<Arc<Self>> {
        let dests = RcuCell::new(KVec::new())?;
        let laddrs = RcuCell::new(KVec::new())?;
        let stats = Arc::new(Stats::new()?, GFP_KERNEL_ACCOUNT)?;
        let scheduler = Scheduler::new(p.sched, p.flags)?;
        Arc::pin_init(
            pin_init!(Service {
                key,
                sched <- new_spinlock!(scheduler, "rvs_service_sched"),
                dests,
                flags: AtomicU32::new(p.flags),
                timeout: AtomicU32::new(p.timeout),
                netmask: AtomicU32::new(p.netmask),
                laddrs,
                stats,
                txn_slot: AtomicU32::new(NO_SLOT),
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

    /// The scheduler's kind now.
    pub(super) fn sched_kind(&self) -> SchedKind {
        lock_bh(&self.sched).kind()
    }

    /// Scheduler kind, flags, persistence timeout and netmask (listing).
    pub(crate) fn settings(&self) -> (SchedKind, u32, u32, u32) {
        let kind = lock_bh(&self.sched).kind();
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
        lock_bh(&self.sched).pick(flow)
    }

    /// The service itself was deleted: its servers, which its connections
    /// keep using until they expire, no longer cache routes (see
    /// [`Dest::retire`]; they are not marked removed, so those connections
    /// carry on).
    /// The real server at `addr`:`port` (a sync record's), if the service
    /// still has it.
    pub(crate) fn find_dest<'g>(
        &'g self,
        g: &'g ReadGuard,
        addr: &[u8; 16],
        port: u16,
    ) -> Option<&'g Arc<Dest>> {
        self.dests
            .get(g)
            .iter()
            .find(|d| d.addr == *addr && d.port == port && !d.is_removed())
    }

    pub(super) fn retire_dests(&self, w: &impl WriterToken) {
        self.dests
            .get_writer(w)
            .iter()
            .for_each(|d| d.route.retire(w));
    }

    /// Prepares telling the scheduler the real servers are now `dests`;
    /// with `new`, switching to another scheduler (and flags) too. Does
    /// every allocation, outside the scheduler's lock; nothing changes
    /// until [`Self::commit_sched`].
    pub(super) fn prepare_sched(
        &self,
        dests: &[Arc<Dest>],
        new: Option<(SchedKind, u32)>,
    ) -> Result<SchedUpdate, ModelError> {
        let dests = copy_without(dests, None)?;
        // lblc/lblcr keep what they learnt when the service is edited
        // without changing its scheduler (as IPVS keeps its scheduler).
        let current = lock_bh(&self.sched).kind();
        let new = new.filter(|&(kind, _)| !(kind == current && kind.needs_lblc_table()));
        let replacement = match new {
            Some((kind, flags)) => Some(Scheduler::new(kind, flags)?),
            None => None,
        };
        Ok(SchedUpdate::new(dests, replacement))
    }

    /// Installs a prepared update: in one critical section the scheduler
    /// takes the new list and rebuilds its state and tables for it.
    pub(super) fn commit_sched(&self, update: SchedUpdate) {
        let old = self.swap_sched(update);
        // Free the old tables (up to 72 KiB) and list outside the lock.
        drop(old);
    }

    /// Like [`Self::commit_sched`], without freeing: returns what was
    /// replaced, for the caller to drop where it may (an atomic change
    /// publishes with bottom halves off and frees afterwards).
    pub(super) fn swap_sched(&self, update: SchedUpdate) -> Replaced {
        lock_bh(&self.sched).install(update)
    }
}

/// A service's FullNAT local addresses (16-byte form).
pub(crate) type LocalAddrs = KVec<[u8; 16]>;

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

pub(super) fn cfg(errno: i32, msg: &'static core::ffi::CStr) -> ModelError {
    ModelError::Config(ConfigError::new(errno, msg))
}

/// A FullNAT real server (`fwd`) needs its service's local addresses
/// (`no_laddrs`: it has none), and its connections need entries (no
/// one-packet scheduling in the service's `flags`).
pub(super) fn check_fullnat_dest(
    fwd: FwdMethod,
    no_laddrs: bool,
    flags: u32,
) -> Result<(), ModelError> {
    if fwd != FwdMethod::FullNat {
        return Ok(());
    }
    if no_laddrs {
        return Err(cfg(
            config::EINVAL,
            c"a FullNAT real server needs the service's local addresses (--laddr)",
        ));
    }
    check_fullnat_service(true, None, flags)
}

/// An edit of a service that has FullNAT real servers (`fullnat`) keeps
/// local addresses (`laddrs`: the new ones, if the edit names any) and
/// stays off one-packet scheduling (`flags`).
pub(super) fn check_fullnat_service(
    fullnat: bool,
    laddrs: Option<&LocalAddrs>,
    flags: u32,
) -> Result<(), ModelError> {
    if fullnat && laddrs.is_some_and(|l| l.is_empty()) {
        return Err(cfg(
            config::EBUSY,
            c"the service's FullNAT real servers need its local addresses",
        ));
    }
    if fullnat && flags & RVS_SVC_F_ONEPACKET != 0 {
        return Err(cfg(
            config::EINVAL,
            c"one-packet scheduling (-o) cannot be used with FullNAT real servers",
        ));
    }
    Ok(())
}

/// A real server's method must suit the service (ENAT: TCP, by address)
/// and its port must be the service's unless it is NAT'ed; a
/// firewall-mark service has no port, so any goes (0 keeps the packet's).
pub(super) fn check_port(key: &ServiceKey, p: &DestParams) -> Result<(), ModelError> {
    key.check_fwd(p.fwd).map_err(ModelError::Config)?;
    if key.is_fwmark() {
        return Ok(());
    }
    config::port_mapping_allowed(p.fwd, key.port, p.port).map_err(ModelError::Config)
}

/// A copy of `src` without its element `skip` (for the copy-on-write
/// lists), charged to the caller's memory cgroup.
pub(super) fn copy_without<T>(
    src: &[Arc<T>],
    skip: Option<usize>,
) -> Result<KVec<Arc<T>>, ModelError> {
    let mut out = KVec::with_capacity(src.len() + 1, GFP_KERNEL_ACCOUNT)?;
    for (i, item) in src.iter().enumerate() {
        if Some(i) != skip {
            out.push(item.clone(), GFP_KERNEL_ACCOUNT)?;
        }
    }
    Ok(out)
}
