// SPDX-License-Identifier: GPL-2.0

//! One namespace's companion state: its connections, the directors it
//! trusts, its limit and its counters; the collector that runs every
//! second once it is on.

#![forbid(unsafe_code)]

use crate::rs::flows::Flows;
use crate::rvs_core::rs::{Directors, MAX_ENTRIES_DEFAULT};
use crate::sys::netns::Net;
use crate::sys::pernet::{Pernet, PernetId, PernetState};
use crate::sys::rcu::{RcuCell, WriterLock};
use crate::sys::time::{hz, jiffies};
use core::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering::Relaxed};
use kernel::new_mutex;
use kernel::prelude::*;

static NET_ID: PernetId<RsState> = PernetId::new();

/// What `/proc/net/rvs_rs` counts, since load.
#[derive(Default)]
pub(crate) struct Counts {
    /// FullNAT connections taken (SYN with kind 254 from a director).
    pub(crate) fullnat: AtomicU64,
    /// ENAT connections taken (kind 253).
    pub(crate) enat: AtomicU64,
    /// SYNs with either option from an address not in `directors`.
    pub(crate) untrusted: AtomicU64,
    /// Connections not taken: `max_entries` reached (or memory short).
    pub(crate) full: AtomicU64,
}

/// A namespace's state.
#[pin_data]
pub(crate) struct RsState {
    pub(crate) flows: Flows,
    /// The addresses whose options are believed.
    pub(crate) directors: RcuCell<Directors>,
    /// `directors` is not empty.
    pub(crate) on: AtomicBool,
    pub(crate) max_entries: AtomicU32,
    pub(crate) counts: Counts,
    /// Serializes the writers of `directors` (the sysctl).
    #[pin]
    pub(crate) ctl: WriterLock<()>,
}

impl RsState {
    /// Whether this namespace has nothing to do: off, and no connection
    /// left to translate.
    pub(crate) fn idle(&self) -> bool {
        !self.on.load(Relaxed) && self.flows.count() == 0
    }

    /// Replaces the trusted directors; the first non-empty list turns the
    /// hooks and the collector on (they stay: connections outlive a change
    /// of the list).
    pub(crate) fn set_directors(this: &Pernet<Self>, d: Directors) -> Result {
        let mut w = this.ctl.lock();
        if !d.is_empty() {
            this.enable_hooks()?;
            this.schedule_work(hz());
        }
        this.on.store(!d.is_empty(), Relaxed);
        this.directors.replace(d, &mut w)
    }
}

impl PernetState for RsState {
    fn id() -> &'static PernetId<Self> {
        &NET_ID
    }

    fn new(_net: &Net) -> Result<Pin<KBox<Self>>> {
        let flows = Flows::new()?;
        let directors = RcuCell::new(Directors::EMPTY)?;
        KBox::pin_init(
            pin_init!(RsState {
                flows,
                directors,
                on: AtomicBool::new(false),
                max_entries: AtomicU32::new(MAX_ENTRIES_DEFAULT),
                counts: Counts::default(),
                ctl <- WriterLock::new(new_mutex!((), "rvs_rs_ctl")),
            }),
            GFP_KERNEL_ACCOUNT,
        )
    }

    fn pre_exit(this: &Pernet<Self>) {
        // Packets still inside a hook leave it within the grace period
        // before `exit`.
        this.disable_hooks();
    }

    fn exit(this: &Pernet<Self>) {
        this.cancel_work();
        // Everything goes now, its references dropped here rather than
        // from RCU callbacks.
        this.flows.collect(jiffies(), true);
    }

    fn work(this: &Pernet<Self>) {
        this.flows.collect(jiffies(), false);
        this.schedule_work(hz());
    }
}
