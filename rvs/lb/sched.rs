// SPDX-License-Identifier: GPL-2.0

//! A service's scheduler as the kernel runs it: the pure scheduling logic
//! of `rvs_core::sched` with its state, the list of real servers it was
//! built for, and the tables mh and lblc/lblcr need, replaced together
//! under the service's scheduler lock.
//!
//! C counterpart: ip_vs_sched.c and the scheduler hooks of ip_vs_ctl.c.

#![forbid(unsafe_code)]

use crate::lb::dest::{Dest, DestList};
use crate::rvs_core::sched::{Dests, Flow, LblcTable, MhTable, SchedFlags, SchedKind, SchedState};
use crate::sys::alloc::zeroed_kvbox;
use crate::sys::{random, time};
use kernel::prelude::*;
use kernel::sync::Arc;

/// A service's scheduler: its state, the list of real servers that state
/// was built for and, for mh, its lookup table, for lblc/lblcr their
/// address table.
///
/// The scheduler keeps its own copy of the list, replaced together with the
/// state and tables in one critical section of its lock
/// ([`Service::commit_sched`]), and a decision picks from that copy: a
/// table's indices and rr/wrr's cursor always refer to the list they were
/// computed for, never to a newer [`Service::dests`] published just before
/// the rebuild (or an older one read just before it).
pub(super) struct Scheduler {
    state: SchedState,
    dests: DestList,
    mh: Option<KVBox<MhTable>>,
    lblc: Option<KVBox<LblcTable>>,
}

/// A scheduler update, allocated outside the scheduler's lock
/// ([`Service::prepare_sched`]) and installed without allocating
/// ([`Service::commit_sched`]).
pub(super) struct SchedUpdate {
    dests: DestList,
    replacement: Option<Scheduler>,
    /// mh's table for `dests`, built ahead ([`SchedUpdate::prebuild_mh`]).
    mh: Option<KVBox<MhTable>>,
}

/// What an installed update replaced, for the caller to free outside the
/// lock: the scheduler (if it changed), the list, mh's table (if one was
/// built ahead).
pub(super) type Replaced = (Option<Scheduler>, DestList, Option<KVBox<MhTable>>);

/// An empty lblc/lblcr table with a random hash key (about 72 KiB:
/// kvmalloc, never on the stack).
fn new_lblc_table() -> Result<KVBox<LblcTable>> {
    // An all-zero `LblcTable` is a valid empty table (rvs_core::sched::lblc).
    let mut t = zeroed_kvbox::<LblcTable>()?;
    let mut key = [0u8; 16];
    random::fill(&mut key);
    t.set_key(&key);
    Ok(t)
}

/// Seconds since boot, monotonic (lblc/lblcr entry ages).
fn now_secs() -> u64 {
    time::jiffies() / time::hz().max(1)
}

/// A zeroed Maglev table on the heap (32 KiB: kvmalloc, never on the
/// stack).
fn new_mh_table() -> Result<KVBox<MhTable>> {
    // An all-zero `MhTable` is a valid empty table (rvs_core::sched::mh).
    zeroed_kvbox::<MhTable>()
}

impl SchedUpdate {
    /// An update to `dests`, with `replacement` if the scheduler changes.
    pub(super) fn new(dests: DestList, replacement: Option<Scheduler>) -> Self {
        Self {
            dests,
            replacement,
            mh: None,
        }
    }

    /// For a scheduler that will be of `kind`: builds mh's table now,
    /// from `view` (the servers as they will be), so that installing the
    /// update only swaps it in (an atomic change installs many updates
    /// with bottom halves off; a rebuild takes ~100 us each).
    pub(super) fn prebuild_mh(&mut self, kind: SchedKind, view: &(impl Dests + ?Sized)) -> Result {
        if kind != SchedKind::Mh {
            return Ok(());
        }
        let mut t = new_mh_table()?;
        t.rebuild(view);
        self.mh = Some(t);
        Ok(())
    }
}

impl Scheduler {
    pub(super) fn new(kind: SchedKind, flags: u32) -> Result<Self> {
        let mut state = SchedState::new(kind);
        state.set_flags(SchedFlags::from_svc_flags(flags));
        let mh = if kind.needs_mh_table() {
            Some(new_mh_table()?)
        } else {
            None
        };
        let lblc = if kind.needs_lblc_table() {
            Some(new_lblc_table()?)
        } else {
            None
        };
        Ok(Self {
            state,
            dests: KVec::new(),
            mh,
            lblc,
        })
    }

    /// The scheduler's kind.
    pub(super) fn kind(&self) -> SchedKind {
        self.state.kind()
    }

    /// Picks a real server for a new connection from the scheduler's own
    /// copy of the list, or `None` if none is available (all weight 0,
    /// overloaded, or no servers). The caller holds the scheduler's lock:
    /// reads only the servers the scheduler looks at, no allocation.
    pub(super) fn pick(&mut self, flow: &Flow) -> Option<Arc<Dest>> {
        let now = now_secs();
        let Scheduler {
            state,
            dests,
            mh,
            lblc,
        } = self;
        if dests.is_empty() {
            return None;
        }
        let list: &[Arc<Dest>] = dests;
        let index = match lblc.as_deref_mut() {
            Some(t) => t.schedule(state.kind(), list, flow, now)?,
            None => state.schedule_flow_with(list, flow, mh.as_deref())?,
        };
        list.get(index).cloned()
    }

    /// Installs a prepared update (under the scheduler's lock): takes the
    /// new list and rebuilds the state and tables for it, without
    /// allocating. Returns what it replaced, for the caller to free after
    /// releasing the lock.
    pub(super) fn install(&mut self, update: SchedUpdate) -> Replaced {
        let SchedUpdate {
            dests,
            replacement,
            mh: built,
        } = update;
        let old_sched = replacement.map(|r| core::mem::replace(self, r));
        let old_dests = core::mem::replace(&mut self.dests, dests);
        let Scheduler {
            state, dests, mh, ..
        } = self;
        let list: &[Arc<Dest>] = dests;
        let old_mh = match built {
            Some(t) if state.kind() == SchedKind::Mh => {
                state.dests_changed_with(list, None);
                mh.replace(t)
            }
            _ => {
                // The mh rebuild (~100 us) runs with bottom halves off; a
                // lookup waits at most that long, and only on
                // configuration changes.
                state.dests_changed_with(list, mh.as_deref_mut());
                None
            }
        };
        (old_sched, old_dests, old_mh)
    }
}
