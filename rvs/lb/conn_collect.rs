// SPDX-License-Identifier: GPL-2.0

//! The connection table's collector: once a second it unlinks expired
//! entries (and, under a flood, evicts embryonic ones), looking only at the
//! groups of buckets whose hint says something there may have expired.
//!
//! C counterpart: the expiry timers of net/netfilter/ipvs/ip_vs_conn.c.

#![forbid(unsafe_code)]

use crate::lb::conn::Limits;
use crate::lb::conn_table::{ConnTable, HINT_MAX_SECS};
use crate::rvs_core::defense;
use crate::rvs_core::expiry::{before32, EntryView, Fate, NextLook, Pass};
use crate::sys::chain::GROUP_SHIFT;
use crate::sys::rcu::ReadGuard;
use crate::sys::sched as ksched;
use crate::sys::time::{jiffies, secs_to_jiffies};
use core::sync::atomic::Ordering;

/// A template that expires while it controls connections is looked at
/// again this much later (seconds; IPVS's `ip_vs_conn_expire` re-arms it
/// for 60 s). Lookups see it all along.
const TEMPLATE_REARM_SECS: u32 = 60;

/// Hint groups looked at per read section.
const GROUPS_PER_PASS: usize = 64;

impl ConnTable {
    /// Removes expired entries; called every second from process context.
    /// When the table is fuller than `drop_entry` percent of `max`, also
    /// evicts embryonic entries idle for `defense::DROP_MIN_IDLE_SECS` or
    /// more. With `nodest` (the `expire_nodest_conn` setting), connections
    /// of deleted real servers go too, as IPVS's flush work does. Returns
    /// how many went (expired and evicted together).
    ///
    /// IPVS arms a timer per connection; rvs instead keeps, per group of
    /// 16 buckets, the earliest time anything in it can expire (the
    /// chains' marks), and looks only at groups that are due: a pass costs
    /// a read of a hint per 16 buckets plus the entries actually expiring,
    /// not a walk of the whole table (a 1M-entry table would otherwise be
    /// walked every second).
    /// Every group is looked at at least every `HINT_MAX_SECS`, which also
    /// bounds how late an entry can be collected if a racing refresh made
    /// the hint err late. Evicting (`drop_entry`) and `nodest` need every
    /// entry looked at, so they walk all groups.
    pub(crate) fn collect(&self, limits: Limits, nodest: bool) -> u32 {
        let now = jiffies();
        let pass = Pass {
            nodest,
            dropping: defense::above_threshold(self.count(), limits.max, limits.drop_entry),
            min_idle: secs_to_jiffies(defense::DROP_MIN_IDLE_SECS),
        };
        let full = pass.dropping || nodest;
        let latest = (now as u32).wrapping_add(secs_to_jiffies(HINT_MAX_SECS) as u32);
        let mut removed = 0;
        let mut evicted = 0u64;
        // The resize runs in this same work, before the pass: the array
        // does not change under it. Groups are looked at in batches, one
        // read section each, yielding the CPU between batches.
        let mut group = 0usize;
        loop {
            let g = ReadGuard::new();
            let hints = self.chains.marks(&g);
            if group >= hints.len() {
                break;
            }
            let last = hints.len().min(group + GROUPS_PER_PASS);
            for (k, hint) in hints.iter().enumerate().take(last).skip(group) {
                let seen = hint.load(Ordering::Acquire);
                if !full && before32(now as u32, seen) {
                    continue;
                }
                let mut next = NextLook::new(latest);
                let first = k << GROUP_SHIFT;
                for slot in first..first + (1 << GROUP_SHIFT) {
                    removed += self.sweep_slot(&g, slot, |c| {
                        let view = EntryView {
                            template: c.template,
                            expired: c.is_expired(now),
                            dest_removed: c.dest.is_removed(),
                            embryonic: c.is_embryonic(),
                            idle: u64::from(c.idle(now)),
                        };
                        match pass.fate(&view) {
                            Fate::Remove => return true,
                            Fate::Evict => {
                                evicted += 1;
                                return true;
                            }
                            Fate::ClaimTemplate => {
                                // Claim it (the table's reference) unless it
                                // controls connections: then it lives on,
                                // looked at again in a while.
                                if c.try_claim() {
                                    return true;
                                }
                                let later = now.wrapping_add(secs_to_jiffies(TEMPLATE_REARM_SECS));
                                c.expires.store(later, Ordering::Relaxed);
                            }
                            Fate::Keep => {}
                        }
                        next.note(c.expires.load(Ordering::Relaxed) as u32);
                        false
                    });
                }
                // Fails if an expiry moved earlier meanwhile: that lower hint
                // stays (only this worker ever raises a hint).
                let _ =
                    hint.compare_exchange(seen, next.at(), Ordering::Relaxed, Ordering::Relaxed);
            }
            drop(g);
            // Process context, no locks or read section held here.
            ksched::cond_resched();
            group = last;
        }
        self.evicted.fetch_add(evicted, Ordering::Relaxed);
        removed
    }
}
