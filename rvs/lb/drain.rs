// SPDX-License-Identifier: GPL-2.0

//! Graceful drain with a deadline, which IPVS lacks (`rvsadm -d ...
//! --drain SECONDS`): the real server takes no new connection at once
//! (schedulers see weight 0, its persistence templates stop binding new
//! clients), its connections carry on, and at the deadline the remaining
//! ones end (`lb::conn_flush`: TCP reset toward both ends, other entries
//! removed) and the server is deleted. `-e` on a draining server cancels
//! the drain; `-d` without `--drain` ends it at once.
//!
//! Deadlines are checked by the namespace's collector (every second): it
//! keeps the earliest one (`NetState::next_drain`), so a namespace without
//! drains costs one load per pass.

#![forbid(unsafe_code)]

use crate::lb::dest::Dest;
use crate::lb::state::NetState;
use crate::rvs_core::config::FwdMethod;
use crate::rvs_core::expiry::expired;
use crate::rvs_core::svcattr::{DestParams, ServiceKey};
use crate::rvs_core::tunnel::Tunnel;
use crate::sys::pernet::Pernet;
use crate::sys::time::jiffies;
use core::sync::atomic::Ordering;
use kernel::prelude::*;
use kernel::sync::Arc;

impl NetState {
    /// Notes a drain deadline (jiffies) for the collector.
    pub(crate) fn note_drain(&self, at: u64) {
        let _ = self
            .next_drain
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |cur| {
                (cur == 0 || expired(at, cur)).then_some(at)
            });
    }

    /// Ends the connections of a real server whose drain is over (or was
    /// ended by `-d`): what the deadline does after deleting it.
    pub(crate) fn end_drained(this: &Pernet<Self>, dest: &Dest) -> u32 {
        match this.conns() {
            Some(conns) => conns.flush_matching(this.net(), |c| core::ptr::eq(&*c.dest, dest)),
            None => 0,
        }
    }

    /// Deletes the real servers whose drain deadline passed and ends their
    /// connections; from the collector (process context, no lock held).
    pub(crate) fn end_due_drains(this: &Pernet<Self>) {
        let next = this.next_drain.load(Ordering::Relaxed);
        if next == 0 || !expired(next, jiffies()) {
            return;
        }
        let mut gone: KVec<Arc<Dest>> = KVec::new();
        {
            let mut ctl = this.lock();
            this.next_drain.store(0, Ordering::Relaxed);
            let now = jiffies();
            let mut due: KVec<(ServiceKey, Arc<Dest>)> = KVec::new();
            let mut failed = false;
            this.services.for_each_service_dest(&ctl, |svc, d| {
                let Some(at) = d.drain_deadline() else {
                    return;
                };
                if !expired(at, now) {
                    this.note_drain(at);
                } else if due.push((svc.key, d.clone()), GFP_KERNEL).is_err() {
                    failed = true;
                }
            });
            if failed {
                // Out of memory: the ones not listed are tried next pass.
                this.note_drain(now);
            }
            for (key, d) in due.iter() {
                let p = identity(d);
                if let Ok(Some(d)) = this.services.delete_dest(&mut ctl, key, &p) {
                    if gone.push(d, GFP_KERNEL).is_err() {
                        // Deleted, but its connections are left to time
                        // out, as after a plain `-d`.
                        pr_warn!("rvs: drain: no memory to end a server's connections\n");
                    }
                }
            }
        }
        for d in gone.iter() {
            Self::end_drained(this, d);
        }
    }
}

/// The parameters that name real server `d` in a delete.
fn identity(d: &Dest) -> DestParams {
    DestParams {
        af: d.af,
        addr: d.addr,
        port: d.port,
        fwd: FwdMethod::Route,
        weight: 0,
        u_thresh: 0,
        l_thresh: 0,
        tunnel: Tunnel::Ipip,
    }
}
