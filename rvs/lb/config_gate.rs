// SPDX-License-Identifier: GPL-2.0

//! The instant at which an atomic change (`lb::transaction`) takes
//! effect for new connections.
//!
//! A change of many services publishes many pointers, one after another.
//! So that no new connection is scheduled on a mix of the old and the new
//! configuration, the writer publishes them all inside one window of a
//! sequence count (odd while it publishes), with bottom halves off and
//! nothing allocated: the window lasts microseconds and cannot be
//! preempted. The packet path reads the count before it looks a service up
//! and again once it has picked a real server; if the count moved, it
//! looks again. Established connections never look at the configuration
//! and never wait. Single commands (`-a`, `-e`, ...) change one thing
//! each and do not use the gate.

#![forbid(unsafe_code)]

use crate::sys::rcu::BhGuard;
use core::sync::atomic::{fence, AtomicU32, Ordering};

/// A sequence count: even when no atomic change is being published.
pub(crate) struct ConfigGate {
    seq: AtomicU32,
}

impl ConfigGate {
    /// A gate with nothing being published.
    pub(crate) const fn new() -> Self {
        Self {
            seq: AtomicU32::new(0),
        }
    }

    /// Packet path, before looking a service up: the count, once no
    /// change is being published (a publish is short and runs on another
    /// CPU: the writer's own has bottom halves off).
    pub(crate) fn enter(&self) -> u32 {
        loop {
            let s = self.seq.load(Ordering::Acquire);
            if s & 1 == 0 {
                return s;
            }
            core::hint::spin_loop();
        }
    }

    /// Packet path, once a real server was picked: whether everything read
    /// since [`Self::enter`] returned `s` belongs to one configuration.
    pub(crate) fn unchanged(&self, s: u32) -> bool {
        // Orders the configuration reads before the count's second read.
        fence(Ordering::Acquire);
        self.seq.load(Ordering::Relaxed) == s
    }

    /// Writer (under the configuration mutex): runs `publish`, which must
    /// neither sleep nor allocate, as one step for the packet path.
    pub(crate) fn publish<R>(&self, publish: impl FnOnce() -> R) -> R {
        // Bottom halves off: neither preempted nor interrupted by this
        // CPU's packet path while the count is odd.
        let _bh = BhGuard::new();
        let s = self.seq.load(Ordering::Relaxed);
        self.seq.store(s.wrapping_add(1), Ordering::Relaxed);
        // The odd count is visible before any published pointer.
        fence(Ordering::Release);
        let r = publish();
        self.seq.store(s.wrapping_add(2), Ordering::Release);
        r
    }
}
