// SPDX-License-Identifier: GPL-2.0

//! Per-CPU traffic counters of a service or real server.
//!
//! C header: [`include/linux/percpu.h`]
//!
//! The packet path adds to this CPU's copy (`this_cpu_add`, no lock, no
//! shared cache line); readers sum all CPUs' copies. Zeroing (`-Z`) stores
//! a baseline rather than writing other CPUs' counters, as IPVS does.

use crate::ffi;
use crate::rvs_core::estimator;
use core::sync::atomic::{AtomicU64, Ordering::Relaxed};
use kernel::prelude::*;

/// Totals of a set of counters.
#[derive(Clone, Copy, Default)]
pub(crate) struct Totals {
    /// Connections scheduled.
    pub(crate) conns: u64,
    /// Packets from clients.
    pub(crate) inpkts: u64,
    /// Packets to clients (NAT replies).
    pub(crate) outpkts: u64,
    /// Bytes from clients.
    pub(crate) inbytes: u64,
    /// Bytes to clients.
    pub(crate) outbytes: u64,
}

/// Per-CPU counters plus the baseline of the last zeroing.
///
/// # Invariants
///
/// `pcpu` is a live per-CPU allocation owned by this object.
pub(crate) struct Stats {
    pcpu: *mut ffi::rvs_cpu_stats,
    base: [AtomicU64; 5],
    /// Raw totals at the last estimate, and the estimated rates per second
    /// in `estimator`'s fixed point (conns, inpkts, outpkts, inbytes,
    /// outbytes).
    last: [AtomicU64; 5],
    rate: [AtomicU64; 5],
}

/// Rates per second (estimated, smoothed).
#[derive(Clone, Copy, Default)]
pub(crate) struct Rates {
    /// Connections per second.
    pub(crate) cps: u64,
    /// Packets per second from clients.
    pub(crate) inpps: u64,
    /// Packets per second to clients.
    pub(crate) outpps: u64,
    /// Bytes per second from clients.
    pub(crate) inbps: u64,
    /// Bytes per second to clients.
    pub(crate) outbps: u64,
}

// SAFETY: the per-CPU area is written only through `this_cpu` operations
// and read with READ_ONCE; it is freed only on drop.
unsafe impl Send for Stats {}
// SAFETY: as above.
unsafe impl Sync for Stats {}

impl Stats {
    /// Zeroed counters on every possible CPU.
    pub(crate) fn new() -> Result<Self> {
        // SAFETY: plain allocation; null is handled.
        let pcpu = unsafe { ffi::rvs_stats_alloc() };
        if pcpu.is_null() {
            return Err(ENOMEM);
        }
        Ok(Self {
            pcpu,
            base: Default::default(),
            last: Default::default(),
            rate: Default::default(),
        })
    }

    /// Counts a packet from a client (`new_conn`: it opened a connection).
    pub(crate) fn count_in(&self, bytes: usize, new_conn: bool) {
        // SAFETY: `pcpu` is live (invariant).
        unsafe { ffi::rvs_stats_in(self.pcpu, bytes as u32, new_conn) };
    }

    /// Counts a reply packet to a client.
    pub(crate) fn count_out(&self, bytes: usize) {
        // SAFETY: `pcpu` is live (invariant).
        unsafe { ffi::rvs_stats_out(self.pcpu, bytes as u32) };
    }

    fn raw(&self) -> Totals {
        let mut out = ffi::rvs_cpu_stats::default();
        // SAFETY: `pcpu` is live; `out` is a valid destination.
        unsafe { ffi::rvs_stats_sum(self.pcpu, &mut out) };
        Totals {
            conns: out.conns,
            inpkts: out.inpkts,
            outpkts: out.outpkts,
            inbytes: out.inbytes,
            outbytes: out.outbytes,
        }
    }

    /// Totals since the last zeroing.
    pub(crate) fn read(&self) -> Totals {
        let r = self.raw();
        let b = |i: usize| self.base.get(i).map_or(0, |a| a.load(Relaxed));
        Totals {
            conns: r.conns.wrapping_sub(b(0)),
            inpkts: r.inpkts.wrapping_sub(b(1)),
            outpkts: r.outpkts.wrapping_sub(b(2)),
            inbytes: r.inbytes.wrapping_sub(b(3)),
            outbytes: r.outbytes.wrapping_sub(b(4)),
        }
    }

    /// Updates the rate estimates from the counts of the last `elapsed`
    /// jiffies (`hz` per second); called off the packet path (the
    /// namespace's worker). Smoothed like IPVS's estimator:
    /// new = old + (sample - old) / 4.
    pub(crate) fn estimate(&self, elapsed: u64, hz: u64) {
        if elapsed == 0 {
            return;
        }
        let r = self.raw();
        let now = [r.conns, r.inpkts, r.outpkts, r.inbytes, r.outbytes];
        for ((last, rate), v) in self.last.iter().zip(self.rate.iter()).zip(now) {
            let delta = v.wrapping_sub(last.swap(v, Relaxed));
            rate.store(
                estimator::next_rate(rate.load(Relaxed), delta, elapsed, hz),
                Relaxed,
            );
        }
    }

    /// The current rate estimates.
    pub(crate) fn rates(&self) -> Rates {
        let r = |i: usize| {
            self.rate
                .get(i)
                .map_or(0, |a| estimator::per_second(a.load(Relaxed)))
        };
        Rates {
            cps: r(0),
            inpps: r(1),
            outpps: r(2),
            inbps: r(3),
            outbps: r(4),
        }
    }

    /// Starts counting from zero again.
    pub(crate) fn zero(&self) {
        let r = self.raw();
        for (slot, v) in self
            .base
            .iter()
            .zip([r.conns, r.inpkts, r.outpkts, r.inbytes, r.outbytes])
        {
            slot.store(v, Relaxed);
        }
    }
}

impl Drop for Stats {
    fn drop(&mut self) {
        // SAFETY: allocated in `new`, freed once here.
        unsafe { ffi::rvs_stats_free(self.pcpu) };
    }
}
