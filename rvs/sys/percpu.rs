// SPDX-License-Identifier: GPL-2.0

//! Per-CPU traffic counters (`struct rvs_cpu_stats` in `rvs/helpers.h`).
//!
//! C header: [`include/linux/percpu.h`]
//!
//! Writers add to this CPU's copy (`this_cpu_add`, no lock, no shared
//! cache line); readers sum all CPUs' copies.

use super::ffi;
use core::ptr;
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
        let mut t = Totals::default();
        self.for_each_cpu(|_, c| {
            t.conns += c.conns;
            t.inpkts += c.inpkts;
            t.outpkts += c.outpkts;
            t.inbytes += c.inbytes;
            t.outbytes += c.outbytes;
        });
        t
    }

    /// Calls `f` with each possible CPU's number and its copy's counts,
    /// in CPU order (IPVS's `/proc/net/ip_vs_stats_percpu`).
    pub(crate) fn for_each_cpu(&self, mut f: impl FnMut(u32, Totals)) {
        // SAFETY: a query of the possible-CPU mask, nothing else.
        let mut cpu = unsafe { ffi::rvs_cpu_possible_next(-1) };
        while cpu >= 0 {
            // SAFETY: `pcpu` is live (invariant) and `cpu` is a possible
            // CPU, so its copy exists for as long as `self`.
            let c = unsafe { ffi::rvs_stats_cpu(self.pcpu, cpu) };
            // SAFETY: `c` is that CPU's copy, valid (above). Its CPU may be
            // adding to it meanwhile: each field is read once, with a
            // volatile load of its whole width (READ_ONCE), so a sum may
            // lag by the packets in flight but never sees a torn value.
            let t = unsafe {
                Totals {
                    conns: ptr::read_volatile(ptr::addr_of!((*c).conns)),
                    inpkts: ptr::read_volatile(ptr::addr_of!((*c).inpkts)),
                    outpkts: ptr::read_volatile(ptr::addr_of!((*c).outpkts)),
                    inbytes: ptr::read_volatile(ptr::addr_of!((*c).inbytes)),
                    outbytes: ptr::read_volatile(ptr::addr_of!((*c).outbytes)),
                }
            };
            f(cpu as u32, t);
            // SAFETY: as above.
            cpu = unsafe { ffi::rvs_cpu_possible_next(cpu) };
        }
    }
}

impl Drop for Counters {
    fn drop(&mut self) {
        // SAFETY: allocated in `new`, freed once here.
        unsafe { ffi::rvs_stats_free(self.pcpu) };
    }
}
