// SPDX-License-Identifier: GPL-2.0

//! The connection table's timing policy: wrap-safe jiffies comparisons,
//! what the collector does with each entry it looks at, when a group of
//! buckets needs looking at again, and where a resumable dump goes on.
//!
//! C counterpart: the per-connection timers of net/netfilter/ipvs/
//! ip_vs_conn.c (`ip_vs_conn_expire`) and its `/proc` and netlink dump
//! positions. rvs arms no timer per entry: the collector visits groups of
//! buckets when their earliest expiry is due ([`NextLook`]) and decides
//! each entry's [`Fate`] here; the table (rvs/lb/conn.rs) only carries the
//! decisions out under its locks.

/// Whether jiffies value `a` (low 32 bits) comes before `b`, wrap-safe.
pub fn before32(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) < 0
}

/// Whether jiffies value `t` is at or before `now`, wrap-safe.
pub fn expired(t: u64, now: u64) -> bool {
    (now.wrapping_sub(t) as i64) >= 0
}

/// Jiffies from `then` (low 32 bits) to `now`, wrap-safe.
pub fn since32(now: u64, then: u32) -> u32 {
    (now as u32).wrapping_sub(then)
}

/// What the collector sees of one entry.
#[derive(Clone, Copy, Debug, Default)]
pub struct EntryView {
    /// A persistence template (not a connection).
    pub template: bool,
    /// Its expiry has passed.
    pub expired: bool,
    /// Its real server was deleted.
    pub dest_removed: bool,
    /// Nothing proves a real client is behind it (`defense::is_embryonic`;
    /// never a template).
    pub embryonic: bool,
    /// Jiffies since the client's last packet.
    pub idle: u64,
}

/// One collector pass's rules.
#[derive(Clone, Copy, Debug)]
pub struct Pass {
    /// `expire_nodest_conn`: connections of deleted servers go too.
    pub nodest: bool,
    /// The table is above `drop_entry`'s fill level: embryonic entries
    /// idle at least `min_idle` jiffies are evicted.
    pub dropping: bool,
    /// See `dropping`.
    pub min_idle: u64,
}

/// What becomes of an entry the collector looks at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fate {
    /// It stays; its expiry counts for when the group is looked at next.
    Keep,
    /// It goes: expired, or its server was deleted (with `nodest`).
    Remove,
    /// It goes as a flood defence (`drop_entry`), counted as evicted.
    Evict,
    /// An expired template: it goes if the table's reference is the last
    /// one; if it still controls connections it lives on, re-armed (as
    /// IPVS's `ip_vs_conn_expire` re-arms it), and counts as kept.
    ClaimTemplate,
}

impl Pass {
    /// The fate of entry `e` in this pass.
    pub fn fate(&self, e: &EntryView) -> Fate {
        if e.template {
            // Templates are never embryonic, and outlive their servers
            // (IPVS's flush of deleted servers spares them too).
            return if e.expired {
                Fate::ClaimTemplate
            } else {
                Fate::Keep
            };
        }
        if e.expired || (self.nodest && e.dest_removed) {
            Fate::Remove
        } else if self.dropping && e.embryonic && e.idle >= self.min_idle {
            Fate::Evict
        } else {
            Fate::Keep
        }
    }
}

/// The earliest expiry among the entries a group of buckets keeps, so
/// that the collector skips the group until then; never later than a
/// bound, so that every group is looked at now and then whatever its hint
/// says (a racing refresh may make a hint err late).
#[derive(Clone, Copy, Debug)]
pub struct NextLook {
    next: u32,
}

impl NextLook {
    /// At the latest `latest` (jiffies, low 32 bits).
    pub fn new(latest: u32) -> Self {
        Self { next: latest }
    }

    /// Takes a kept entry's expiry into account.
    pub fn note(&mut self, expires: u32) {
        if before32(expires, self.next) {
            self.next = expires;
        }
    }

    /// When to look at the group next.
    pub fn at(&self) -> u32 {
        self.next
    }
}

/// A resumable walk over a table of chains: calls `f` on every live entry
/// from position (`bucket`, `index`: the index counts every entry of the
/// chain, live or not) on, until `f` returns false; returns the position
/// to resume from (that entry's, or one past the last bucket at the end).
/// `chain(b)` gives bucket `b`'s entries with whether each is live, or
/// `None` past the end. Chains may change between calls: a resumed dump
/// may then skip or repeat an entry, never fail.
pub fn walk_from<T, I>(
    mut bucket: usize,
    mut index: usize,
    mut chain: impl FnMut(usize) -> Option<I>,
    mut f: impl FnMut(T) -> bool,
) -> (usize, usize)
where
    I: Iterator<Item = (T, bool)>,
{
    while let Some(entries) = chain(bucket) {
        for (i, (t, live)) in entries.enumerate() {
            if i >= index && live && !f(t) {
                return (bucket, i);
            }
        }
        bucket = bucket.saturating_add(1);
        index = 0;
    }
    (bucket, 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::vec;
    use std::vec::Vec;

    #[test]
    fn jiffies_comparisons_wrap() {
        assert!(before32(u32::MAX, 0));
        assert!(!before32(0, u32::MAX));
        assert!(!before32(5, 5));
        assert!(before32(5, 6));
        assert!(expired(100, 100));
        assert!(expired(u64::MAX, 0), "one jiffy before a wrap");
        assert!(!expired(1, 0));
        assert!(
            !expired(0, u64::MAX),
            "one jiffy after a wrap is the future"
        );
        assert_eq!(since32(5, u32::MAX), 6);
        assert_eq!(since32(1 << 32 | 7, 2), 5, "only the low 32 bits count");
    }

    const PASS: Pass = Pass {
        nodest: false,
        dropping: false,
        min_idle: 300,
    };

    fn conn() -> EntryView {
        EntryView::default()
    }

    #[test]
    fn expired_entries_go_templates_are_claimed() {
        let expired = EntryView {
            expired: true,
            ..conn()
        };
        assert_eq!(PASS.fate(&expired), Fate::Remove);
        assert_eq!(PASS.fate(&conn()), Fate::Keep);
        let t = EntryView {
            template: true,
            ..conn()
        };
        assert_eq!(PASS.fate(&t), Fate::Keep);
        let t_expired = EntryView { expired: true, ..t };
        assert_eq!(PASS.fate(&t_expired), Fate::ClaimTemplate);
    }

    #[test]
    fn deleted_servers_connections_go_only_with_nodest() {
        let orphan = EntryView {
            dest_removed: true,
            ..conn()
        };
        assert_eq!(PASS.fate(&orphan), Fate::Keep);
        let nodest = Pass {
            nodest: true,
            ..PASS
        };
        assert_eq!(nodest.fate(&orphan), Fate::Remove);
        // A template of a deleted server stays until it expires.
        let t = EntryView {
            template: true,
            ..orphan
        };
        assert_eq!(nodest.fate(&t), Fate::Keep);
    }

    #[test]
    fn eviction_takes_idle_embryonic_entries_only_when_dropping() {
        let dropping = Pass {
            dropping: true,
            ..PASS
        };
        let idle_embryo = EntryView {
            embryonic: true,
            idle: 300,
            ..conn()
        };
        assert_eq!(dropping.fate(&idle_embryo), Fate::Evict);
        assert_eq!(PASS.fate(&idle_embryo), Fate::Keep, "not dropping");
        let fresh = EntryView {
            idle: 299,
            ..idle_embryo
        };
        assert_eq!(dropping.fate(&fresh), Fate::Keep, "idle less than min_idle");
        let grown = EntryView {
            embryonic: false,
            ..idle_embryo
        };
        assert_eq!(dropping.fate(&grown), Fate::Keep, "an established entry");
        // Expiry beats eviction: an expired entry is removed, not counted
        // as evicted.
        let both = EntryView {
            expired: true,
            ..idle_embryo
        };
        assert_eq!(dropping.fate(&both), Fate::Remove);
    }

    #[test]
    fn next_look_is_the_earliest_kept_expiry_bounded() {
        let mut n = NextLook::new(1000);
        assert_eq!(n.at(), 1000);
        n.note(2000);
        assert_eq!(n.at(), 1000, "later than the bound");
        n.note(700);
        n.note(900);
        assert_eq!(n.at(), 700);
        // Across a wrap: u32::MAX - 10 comes before 5.
        let mut w = NextLook::new(5);
        w.note(u32::MAX - 10);
        assert_eq!(w.at(), u32::MAX - 10);
    }

    /// A table: chains of (name, live).
    fn table() -> Vec<Vec<(u32, bool)>> {
        vec![
            vec![(1, true), (2, false), (3, true)],
            vec![],
            vec![(4, true)],
        ]
    }

    fn walk(
        t: &[Vec<(u32, bool)>],
        at: (usize, usize),
        budget: usize,
    ) -> (Vec<u32>, (usize, usize)) {
        let mut seen = Vec::new();
        let pos = walk_from(
            at.0,
            at.1,
            |b| t.get(b).map(|c| c.iter().copied()),
            |x| {
                if seen.len() == budget {
                    return false;
                }
                seen.push(x);
                true
            },
        );
        (seen, pos)
    }

    #[test]
    fn a_dump_resumes_where_it_stopped_and_skips_dead_entries() {
        let t = table();
        assert_eq!(walk(&t, (0, 0), 10), (vec![1, 3, 4], (3, 0)));
        // One entry a call: every live entry once, in order.
        let (mut all, mut at) = (Vec::new(), (0, 0));
        for _ in 0..10 {
            let (seen, pos) = walk(&t, at, 1);
            all.extend(seen);
            if pos == (3, 0) {
                break;
            }
            at = pos;
        }
        assert_eq!(all, vec![1, 3, 4]);
        // The position names the entry not yet taken (index 2 of bucket 0:
        // the dead entry counts).
        assert_eq!(walk(&t, (0, 0), 1), (vec![1], (0, 2)));
        assert_eq!(walk(&t, (0, 2), 5), (vec![3, 4], (3, 0)));
        // Past the end, or a chain shorter than the index: nothing, no fault.
        assert_eq!(walk(&t, (7, 3), 5), (vec![], (7, 0)));
        assert_eq!(walk(&t, (0, 9), 5), (vec![4], (3, 0)));
    }
}
