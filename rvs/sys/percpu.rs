// SPDX-License-Identifier: GPL-2.0

//! Per-CPU traffic counters (`struct rvs_cpu_stats` in `rvs/helpers.h`).
//!
//! C header: [`include/linux/percpu.h`]
//!
//! Writers add to this CPU's copy (`this_cpu_add`, no lock, no shared
//! cache line); readers sum all CPUs' copies.

use super::ffi;
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

/// A set of per-CPU counters.
///
/// # Invariants
///
/// `pcpu` is a live per-CPU allocation owned by this object.
pub(crate) struct Counters {
    pcpu: *mut ffi::rvs_cpu_stats,
}

// SAFETY: the per-CPU area is written only through `this_cpu` operations
// and read with READ_ONCE; it is freed only on drop.
unsafe impl Send for Counters {}
// SAFETY: as above.
unsafe impl Sync for Counters {}

impl Counters {
    /// Zeroed counters on every possible CPU.
    pub(crate) fn new() -> Result<Self> {
        // SAFETY: plain allocation; null is handled.
        let pcpu = unsafe { ffi::rvs_stats_alloc() };
        if pcpu.is_null() {
            return Err(ENOMEM);
        }
        // INVARIANT: a fresh allocation, owned from here.
        Ok(Self { pcpu })
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

    /// The sums over every CPU.
    pub(crate) fn sum(&self) -> Totals {
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
}

impl Drop for Counters {
    fn drop(&mut self) {
        // SAFETY: allocated in `new`, freed once here.
        unsafe { ffi::rvs_stats_free(self.pcpu) };
    }
}
