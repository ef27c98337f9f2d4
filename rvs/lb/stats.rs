// SPDX-License-Identifier: GPL-2.0

//! Traffic counters of a service or real server, and their rates.
//!
//! The packet path adds to this CPU's copy of per-CPU counters
//! (`crate::sys::percpu`); readers sum all CPUs' copies. Zeroing (`-Z`)
//! stores a baseline rather than writing other CPUs' counters, as IPVS
//! does.

#![forbid(unsafe_code)]

use crate::rvs_core::estimator;
use crate::sys::percpu::Counters;
pub(crate) use crate::sys::percpu::Totals;
use core::sync::atomic::{AtomicU64, Ordering::Relaxed};
use kernel::prelude::*;

/// Per-CPU counters plus the baseline of the last zeroing.
pub(crate) struct Stats {
    pcpu: Counters,
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

impl Stats {
    /// Zeroed counters on every possible CPU.
    pub(crate) fn new() -> Result<Self> {
        Ok(Self {
            pcpu: Counters::new()?,
            base: Default::default(),
            last: Default::default(),
            rate: Default::default(),
        })
    }

    /// Counts a packet from a client (`new_conn`: it opened a connection).
    pub(crate) fn count_in(&self, bytes: usize, new_conn: bool) {
        self.pcpu.count_in(bytes, new_conn);
    }

    /// Counts a reply packet to a client.
    pub(crate) fn count_out(&self, bytes: usize) {
        self.pcpu.count_out(bytes);
    }

    fn raw(&self) -> Totals {
        self.pcpu.sum()
    }

    /// Each possible CPU's raw counts, not zeroed (IPVS's
    /// `/proc/net/ip_vs_stats_percpu` shows them so).
    pub(crate) fn for_each_cpu(&self, f: impl FnMut(u32, Totals)) {
        self.pcpu.for_each_cpu(f);
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
