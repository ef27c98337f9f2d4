// SPDX-License-Identifier: GPL-2.0

//! The addresses of a namespace's virtual services, whatever their
//! protocol and port, for the VIP port guard (the `vip_guard` setting):
//! a packet that matches no service is guarded only if its destination is
//! one of these. The packet path asks under RCU without a lock; the
//! service table keeps the set as services come and go.
//!
//! Each address counts its services in place (an atomic the writer alone
//! changes), so adding a second service of an address or removing a
//! service allocates nothing and cannot fail: only a new address
//! allocates, before its service is added. An address whose count fell
//! to 0 is dropped from its bucket when that costs nothing extra to try;
//! until then it is ignored.

#![forbid(unsafe_code)]

use crate::rvs_core::config::AddrFamily;
use crate::rvs_core::hash::{self, SipKey};
use crate::sys::rcu::{RcuOpt, ReadGuard, WriterToken};
use core::sync::atomic::{AtomicU32, Ordering::Relaxed};
use kernel::prelude::*;

/// log2 of the set's bucket count: 256 buckets (2 KiB of pointers) keep
/// a few thousand addresses in short lists.
const VIP_TAB_BITS: u32 = 8;

/// One address and how many services it carries.
struct Vip {
    af: AddrFamily,
    addr: [u8; 16],
    services: AtomicU32,
}

type VipList = KVec<Vip>;

/// The set (see the module documentation).
pub(crate) struct VipSet {
    buckets: KVVec<RcuOpt<VipList>>,
    key: SipKey,
    /// Addresses with at least one service: 0 lets the packet path skip
    /// the lookup.
    live: AtomicU32,
}

impl VipSet {
    /// An empty set, hashing with `key`.
    pub(crate) fn new(key: SipKey) -> Result<Self> {
        let n = 1usize << VIP_TAB_BITS;
        let mut buckets = KVVec::with_capacity(n, GFP_KERNEL_ACCOUNT)?;
        for _ in 0..n {
            buckets.push(RcuOpt::empty(), GFP_KERNEL_ACCOUNT)?;
        }
        Ok(Self {
            buckets,
            key,
            live: AtomicU32::new(0),
        })
    }

    fn bucket_of(&self, addr: &[u8; 16]) -> Option<&RcuOpt<VipList>> {
        let h = hash::conn_hash(&self.key, 0, addr, 0);
        self.buckets.get(hash::bucket(h, VIP_TAB_BITS))
    }

    /// Whether `addr` is the address of a virtual service.
    pub(crate) fn contains(&self, g: &ReadGuard, af: AddrFamily, addr: &[u8; 16]) -> bool {
        if self.live.load(Relaxed) == 0 {
            return false;
        }
        self.bucket_of(addr)
            .and_then(|b| b.get(g))
            .is_some_and(|l| {
                l.iter()
                    .any(|v| v.af == af && v.addr == *addr && v.services.load(Relaxed) > 0)
            })
    }

    /// Counts one more service of `addr`; ENOMEM (and no change) if a new
    /// address cannot be stored.
    pub(crate) fn acquire(
        &self,
        w: &mut impl WriterToken,
        af: AddrFamily,
        addr: &[u8; 16],
    ) -> Result {
        let bucket = self.bucket_of(addr).ok_or(EINVAL)?;
        let list = bucket.get_writer(&*w).map_or(&[][..], |l| &l[..]);
        if let Some(v) = list.iter().find(|v| v.af == af && v.addr == *addr) {
            if v.services.fetch_add(1, Relaxed) == 0 {
                self.live.fetch_add(1, Relaxed);
            }
            return Ok(());
        }
        let mut new = KVec::with_capacity(list.len() + 1, GFP_KERNEL_ACCOUNT)?;
        for v in list.iter().filter(|v| v.services.load(Relaxed) > 0) {
            new.push(copy(v), GFP_KERNEL_ACCOUNT)?;
        }
        new.push(
            Vip {
                af,
                addr: *addr,
                services: AtomicU32::new(1),
            },
            GFP_KERNEL_ACCOUNT,
        )?;
        bucket.replace(Some(new), w)?;
        self.live.fetch_add(1, Relaxed);
        Ok(())
    }

    /// Counts one service of `addr` less. Never fails: the address stays
    /// in its bucket, ignored, if its list cannot be rebuilt without it.
    pub(crate) fn release(&self, w: &mut impl WriterToken, af: AddrFamily, addr: &[u8; 16]) {
        let Some(bucket) = self.bucket_of(addr) else {
            return;
        };
        let list = bucket.get_writer(&*w).map_or(&[][..], |l| &l[..]);
        let Some(v) = list.iter().find(|v| v.af == af && v.addr == *addr) else {
            return;
        };
        if v.services.load(Relaxed) == 0 || v.services.fetch_sub(1, Relaxed) != 1 {
            return;
        }
        self.live.fetch_sub(1, Relaxed);
        // Best effort: a list of the addresses still in use.
        let kept = list.iter().filter(|v| v.services.load(Relaxed) > 0);
        let Ok(mut new) = KVec::with_capacity(list.len(), GFP_KERNEL_ACCOUNT) else {
            return;
        };
        for v in kept {
            if new.push(copy(v), GFP_KERNEL_ACCOUNT).is_err() {
                return;
            }
        }
        let _ = bucket.replace((!new.is_empty()).then_some(new), w);
    }

    /// Empties the set (every service deleted).
    pub(crate) fn clear(&self, w: &mut impl WriterToken) {
        for b in self.buckets.iter() {
            if b.get_writer(&*w).is_some() {
                // Emptying a slot allocates nothing and cannot fail.
                let _ = b.replace(None, &mut *w);
            }
        }
        self.live.store(0, Relaxed);
    }
}

fn copy(v: &Vip) -> Vip {
    Vip {
        af: v.af,
        addr: v.addr,
        services: AtomicU32::new(v.services.load(Relaxed)),
    }
}
