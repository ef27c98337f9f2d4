// SPDX-License-Identifier: GPL-2.0

//! Locality-based least-connection schedulers: lblc and lblcr.
//!
//! C counterparts: net/netfilter/ipvs/ip_vs_lblc.c, ip_vs_lblcr.c.
//!
//! Both remember, per destination address of the packet (the address the
//! client dialled: for a plain service the virtual address, for a
//! firewall-mark service every address the mark covers, e.g. a web cache
//! cluster in front of many origin servers), which real server served it
//! last, so requests for one address keep hitting one server's cache.
//!
//! - **lblc**: one server per address. It is kept while it is available
//!   and not "overloaded" in lblc's sense ([`lblc_overloaded`]: more active
//!   connections than its weight while some other server is below half of
//!   its own); otherwise a new server is chosen by weighted least
//!   connection and replaces it.
//! - **lblcr** (with replication): a set of servers per address. The least
//!   loaded available member is used; when it is lblc-overloaded, the
//!   weighted least connection server of the whole service joins the set.
//!   A set with more than one member that has not changed for
//!   [`LBLC_EXPIRE_SECS`] loses its most loaded member.
//!
//! Memory is bounded and allocated once per service: [`LblcTable`] is a
//! fixed set-associative table of [`LBLC_SLOTS`] entries (a keyed hash of
//! the address picks a set of [`LBLC_WAYS`]), each with at most
//! [`LBLCR_SET_MAX`] servers. Nothing is allocated per packet. Entries
//! unused for [`LBLC_EXPIRE_SECS`] count as absent (IPVS's
//! `lblc_expiration`, 24 hours); when a set of ways is full, the least
//! recently used entry is replaced (IPVS instead frees entries idle for six
//! minutes once its table holds more than 16384). A full lblcr server set
//! replaces its most loaded member.
//!
//! Servers are named by [`DestView::id`] so that entries survive changes
//! to the list; a server that left the service is dropped from entries
//! when they are next used. Differences from IPVS: the `-x` threshold
//! overload flag is honoured on a cache hit by lblc too (IPVS's lblc only
//! checks the weight there), and the table's hash is keyed (SipHash with a
//! per-service random key), so clients cannot aim addresses at one set.
//!
//! The caller holds the service's scheduler lock around every call; the
//! table is plain data.

#![forbid(unsafe_code)]

use super::super::hash::{SipHasher24, SipKey};
use super::{weighted_least_conn, DestView, Dests, Flow, SchedKind};

/// Entries in a table.
pub const LBLC_SLOTS: usize = 1024;
/// Entries one address may occupy (associativity).
pub const LBLC_WAYS: usize = 8;
/// Sets of ways.
const LBLC_SETS: usize = LBLC_SLOTS / LBLC_WAYS;
/// Most servers in one lblcr entry.
pub const LBLCR_SET_MAX: usize = 8;
/// Seconds an unused entry lives, and after which an unchanged lblcr set
/// of several servers drops its most loaded one (IPVS's
/// `lblc_expiration` / `lblcr_expiration` default, 24 hours).
pub const LBLC_EXPIRE_SECS: u64 = 24 * 60 * 60;

/// One address and its server (lblc: `ids[0]`) or servers (lblcr, newest
/// first as IPVS adds them to the head of its list).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LblcEntry {
    /// The destination address (16-byte form).
    pub addr: [u8; 16],
    /// Number of servers in `ids`; 0 is a free slot.
    pub n: u8,
    /// Last use, in the caller's seconds.
    pub lastuse: u64,
    /// Last change of the server set, in the caller's seconds.
    pub lastmod: u64,
    /// [`DestView::id`]s of the servers, `n` of them valid.
    pub ids: [u32; LBLCR_SET_MAX],
}

impl LblcEntry {
    fn members(&self) -> &[u32] {
        self.ids.get(..usize::from(self.n)).unwrap_or(&[])
    }

    fn live(&self, now: u64) -> bool {
        self.n > 0 && now.saturating_sub(self.lastuse) <= LBLC_EXPIRE_SECS
    }

    /// Drops members that are no longer in `dests`, keeping order.
    fn purge(&mut self, dests: &(impl Dests + ?Sized)) {
        let mut keep = 0usize;
        for i in 0..usize::from(self.n) {
            let Some(&id) = self.ids.get(i) else { break };
            if index_of(dests, id).is_some() {
                if let Some(slot) = self.ids.get_mut(keep) {
                    *slot = id;
                }
                keep = keep.saturating_add(1);
            }
        }
        self.n = u8::try_from(keep).unwrap_or(0);
    }

    /// Puts `id` first (newest), unless it is already a member. A full set
    /// first loses its most loaded member (the last one if none is
    /// weighted).
    fn insert(&mut self, id: u32, dests: &(impl Dests + ?Sized), now: u64) {
        if self.members().contains(&id) {
            return;
        }
        if usize::from(self.n) >= LBLCR_SET_MAX {
            let victim = set_max(self, dests).unwrap_or(LBLCR_SET_MAX.saturating_sub(1));
            self.remove_at(victim);
        }
        let n = usize::from(self.n);
        if let Some(s) = self.ids.get_mut(..=n) {
            s.rotate_right(1);
            if let Some(first) = s.first_mut() {
                *first = id;
            }
            self.n = u8::try_from(n.saturating_add(1)).unwrap_or(0);
        }
        self.lastmod = now;
    }

    fn remove_at(&mut self, pos: usize) {
        let n = usize::from(self.n);
        if pos >= n {
            return;
        }
        if let Some(s) = self.ids.get_mut(pos..n) {
            s.rotate_left(1);
        }
        self.n = u8::try_from(n.saturating_sub(1)).unwrap_or(0);
    }
}

/// The per-service table of lblc and lblcr. All-zero is a valid empty
/// table (with an all-zero hash key; set one with [`LblcTable::set_key`]).
#[derive(Clone, Debug)]
pub struct LblcTable {
    key: SipKey,
    entries: [LblcEntry; LBLC_SLOTS],
}

/// Where `id` sits in `dests`.
fn index_of(dests: &(impl Dests + ?Sized), id: u32) -> Option<usize> {
    if id == 0 {
        return None;
    }
    dests.views().position(|d| d.id == id)
}

/// lblc's own overload test (IPVS's `is_overloaded` in ip_vs_lblc.c): the
/// server has more active connections than its weight, and some server of
/// the service has fewer than half its weight, so moving is worth it.
pub fn lblc_overloaded(d: &DestView, dests: &(impl Dests + ?Sized)) -> bool {
    if d.active_conns <= d.weight {
        return false;
    }
    dests
        .views()
        .any(|o| u64::from(o.active_conns).saturating_mul(2) < u64::from(o.weight))
}

/// The least loaded available member of the set (IPVS's
/// `ip_vs_dest_set_min`): weighted least connection over the members, in
/// set order, first on ties. Returns an index into `dests`.
fn set_min(e: &LblcEntry, dests: &(impl Dests + ?Sized)) -> Option<usize> {
    let mut least: Option<(usize, u64, u64)> = None;
    for &id in e.members() {
        let Some(i) = index_of(dests, id) else {
            continue;
        };
        let Some(d) = dests.view(i) else { continue };
        if !d.available() {
            continue;
        }
        let (oh, w) = (d.conn_overhead(), u64::from(d.weight));
        match least {
            Some((_, loh, lw)) if loh.saturating_mul(w) <= oh.saturating_mul(lw) => {}
            _ => least = Some((i, oh, w)),
        }
    }
    least.map(|(i, _, _)| i)
}

/// The position in the set of its most loaded weighted member (IPVS's
/// `ip_vs_dest_set_max`, which ignores availability), first on ties.
fn set_max(e: &LblcEntry, dests: &(impl Dests + ?Sized)) -> Option<usize> {
    let mut most: Option<(usize, u64, u64)> = None;
    for (pos, &id) in e.members().iter().enumerate() {
        let Some(d) = index_of(dests, id).and_then(|i| dests.view(i)) else {
            continue;
        };
        if d.weight == 0 {
            continue;
        }
        let (oh, w) = (d.conn_overhead(), u64::from(d.weight));
        match most {
            Some((_, moh, mw)) if moh.saturating_mul(w) >= oh.saturating_mul(mw) => {}
            _ => most = Some((pos, oh, w)),
        }
    }
    most.map(|(p, _, _)| p)
}

impl LblcTable {
    /// An empty table with an all-zero key. For host code and tests: the
    /// kernel allocates the table zeroed instead (about 72 KiB).
    pub const EMPTY: LblcTable = LblcTable {
        key: SipKey { k0: 0, k1: 0 },
        entries: [LblcEntry {
            addr: [0; 16],
            n: 0,
            lastuse: 0,
            lastmod: 0,
            ids: [0; LBLCR_SET_MAX],
        }; LBLC_SLOTS],
    };

    /// Sets the hash key (16 random bytes) and empties the table.
    pub fn set_key(&mut self, bytes: &[u8; 16]) {
        self.key = SipKey::from_bytes(bytes);
        self.entries.fill(LblcEntry::default());
    }

    /// Number of live entries (tests, diagnostics).
    pub fn len(&self, now: u64) -> usize {
        self.entries.iter().filter(|e| e.live(now)).count()
    }

    /// Whether no entry is live.
    pub fn is_empty(&self, now: u64) -> bool {
        self.len(now) == 0
    }

    /// The entry for `addr`, if live (tests, diagnostics).
    pub fn entry(&self, addr: &[u8; 16], now: u64) -> Option<&LblcEntry> {
        self.entries
            .get(self.ways(addr))?
            .iter()
            .find(|e| e.live(now) && e.addr == *addr)
    }

    fn ways(&self, addr: &[u8; 16]) -> core::ops::Range<usize> {
        let mut h = SipHasher24::new(&self.key);
        h.write(addr);
        let sets = LBLC_SETS as u64;
        let set = usize::try_from(h.finish().checked_rem(sets).unwrap_or(0)).unwrap_or(0);
        let start = set.saturating_mul(LBLC_WAYS);
        start..start.saturating_add(LBLC_WAYS)
    }

    /// The live entry for `addr`, or a slot to put a new one in: a free or
    /// expired one, else the least recently used of its ways. The bool
    /// says whether the entry is live (found).
    fn slot(&mut self, addr: &[u8; 16], now: u64) -> Option<(&mut LblcEntry, bool)> {
        let range = self.ways(addr);
        let ways = self.entries.get_mut(range)?;
        let found = ways.iter().position(|e| e.live(now) && e.addr == *addr);
        if let Some(i) = found {
            return Some((ways.get_mut(i)?, true));
        }
        let mut victim = 0usize;
        let mut oldest = u64::MAX;
        for (i, e) in ways.iter().enumerate() {
            if !e.live(now) {
                victim = i;
                break;
            }
            if e.lastuse < oldest {
                oldest = e.lastuse;
                victim = i;
            }
        }
        Some((ways.get_mut(victim)?, false))
    }

    /// Chooses a server for a new connection of `flow` (its destination
    /// address, [`Flow::vaddr`], is the key) with lblc or lblcr; any other
    /// `kind` finds nothing. `now` is a monotonic time in seconds. Returns
    /// an index into `dests`.
    pub fn schedule(
        &mut self,
        kind: SchedKind,
        dests: &(impl Dests + ?Sized),
        flow: &Flow,
        now: u64,
    ) -> Option<usize> {
        match kind {
            SchedKind::Lblc => self.lblc(dests, &flow.vaddr, now),
            SchedKind::Lblcr => self.lblcr(dests, &flow.vaddr, now),
            _ => None,
        }
    }

    fn lblc(&mut self, dests: &(impl Dests + ?Sized), addr: &[u8; 16], now: u64) -> Option<usize> {
        let (e, live) = self.slot(addr, now)?;
        if live {
            e.lastuse = now;
            if let Some(i) = e.members().first().and_then(|&id| index_of(dests, id)) {
                if let Some(d) = dests.view(i) {
                    if d.available() && !lblc_overloaded(&d, dests) {
                        return Some(i);
                    }
                }
            }
        }
        let i = weighted_least_conn(dests)?;
        let id = dests.view(i)?.id;
        *e = LblcEntry {
            addr: *addr,
            n: u8::from(id != 0),
            lastuse: now,
            lastmod: now,
            ids: [id, 0, 0, 0, 0, 0, 0, 0],
        };
        Some(i)
    }

    fn lblcr(&mut self, dests: &(impl Dests + ?Sized), addr: &[u8; 16], now: u64) -> Option<usize> {
        let (e, live) = self.slot(addr, now)?;
        if !live {
            let i = weighted_least_conn(dests)?;
            let id = dests.view(i)?.id;
            *e = LblcEntry {
                addr: *addr,
                n: u8::from(id != 0),
                lastuse: now,
                lastmod: now,
                ids: [id, 0, 0, 0, 0, 0, 0, 0],
            };
            return Some(i);
        }
        e.lastuse = now;
        e.purge(dests);
        let min = set_min(e, dests);
        if e.n > 1 && now > e.lastmod.saturating_add(LBLC_EXPIRE_SECS) {
            if let Some(pos) = set_max(e, dests) {
                e.remove_at(pos);
                e.lastmod = now;
            }
        }
        if let Some(i) = min {
            if dests.view(i).is_some_and(|d| !lblc_overloaded(&d, dests)) {
                return Some(i);
            }
        }
        let i = weighted_least_conn(dests)?;
        let id = dests.view(i)?.id;
        if id != 0 {
            e.insert(id, dests, now);
        }
        Some(i)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::boxed::Box;

    fn d(id: u32, weight: u32, active: u32) -> DestView {
        DestView {
            id,
            weight,
            active_conns: active,
            ..DestView::default()
        }
    }

    fn flow(last: u8) -> Flow {
        let mut vaddr = [0u8; 16];
        vaddr[..4].copy_from_slice(&[10, 0, 100, last]);
        Flow {
            vaddr,
            ..Flow::default()
        }
    }

    fn table() -> Box<LblcTable> {
        let mut t = Box::new(LblcTable::EMPTY);
        t.set_key(&[7; 16]);
        t
    }

    #[test]
    fn lblc_sticks_per_address() {
        let mut t = table();
        let mut dests = [d(1, 1, 0), d(2, 1, 0), d(3, 1, 0)];
        // First address: least connection, first on ties.
        assert_eq!(t.schedule(SchedKind::Lblc, &dests, &flow(1), 0), Some(0));
        dests[0].active_conns = 1;
        // Same address sticks even though others are less loaded now.
        assert_eq!(t.schedule(SchedKind::Lblc, &dests, &flow(1), 1), Some(0));
        // A new address goes to the least loaded one.
        assert_eq!(t.schedule(SchedKind::Lblc, &dests, &flow(2), 2), Some(1));
        assert_eq!(t.len(2), 2);
        // Order of the list may change; the entry names the server.
        dests.swap(0, 2);
        assert_eq!(t.schedule(SchedKind::Lblc, &dests, &flow(1), 3), Some(2));
    }

    #[test]
    fn lblc_moves_when_overloaded_or_unavailable() {
        let mut t = table();
        let mut dests = [d(1, 2, 0), d(2, 2, 0)];
        assert_eq!(t.schedule(SchedKind::Lblc, &dests, &flow(1), 0), Some(0));
        // active 3 > weight 2, and server 2 has 0*2 < 2: move to 2.
        dests[0].active_conns = 3;
        assert_eq!(t.schedule(SchedKind::Lblc, &dests, &flow(1), 1), Some(1));
        // The entry now names server 2, even after 1 recovers.
        dests[0].active_conns = 0;
        dests[1].active_conns = 1;
        assert_eq!(t.schedule(SchedKind::Lblc, &dests, &flow(1), 2), Some(1));
        // Busy beyond weight but no one is below half: stay.
        dests = [d(1, 2, 1), d(2, 2, 3)];
        assert_eq!(t.schedule(SchedKind::Lblc, &dests, &flow(1), 3), Some(1));
        // Quiesced (weight 0) or threshold-overloaded: move.
        dests[1].weight = 0;
        assert_eq!(t.schedule(SchedKind::Lblc, &dests, &flow(1), 4), Some(0));
        dests[1].weight = 2;
        dests[0].overloaded = true;
        assert_eq!(t.schedule(SchedKind::Lblc, &dests, &flow(1), 5), Some(1));
        // Deleted: move.
        let rest = [d(1, 2, 0)];
        assert_eq!(t.schedule(SchedKind::Lblc, &rest, &flow(1), 6), Some(0));
        // Nothing available: none, entry untouched.
        let none = [d(1, 0, 0)];
        assert_eq!(t.schedule(SchedKind::Lblc, &none, &flow(1), 7), None);
        assert_eq!(t.entry(&flow(1).vaddr, 7).unwrap().ids[0], 1);
    }

    #[test]
    fn lblc_entries_expire() {
        let mut t = table();
        let mut dests = [d(1, 1, 0), d(2, 1, 0)];
        assert_eq!(t.schedule(SchedKind::Lblc, &dests, &flow(1), 100), Some(0));
        dests[0].active_conns = 1;
        let later = 100 + LBLC_EXPIRE_SECS;
        assert_eq!(
            t.schedule(SchedKind::Lblc, &dests, &flow(1), later),
            Some(0)
        );
        // Unused for longer than the expiry: scheduled afresh.
        let much_later = later + LBLC_EXPIRE_SECS + 1;
        assert!(t.entry(&flow(1).vaddr, much_later).is_none());
        assert_eq!(
            t.schedule(SchedKind::Lblc, &dests, &flow(1), much_later),
            Some(1)
        );
    }

    #[test]
    fn table_is_bounded() {
        let mut t = table();
        let dests = [d(1, 1, 0), d(2, 1, 0)];
        let mut f = Flow::default();
        for i in 0u32..10_000 {
            f.vaddr[..4].copy_from_slice(&i.to_be_bytes());
            assert!(t
                .schedule(SchedKind::Lblcr, &dests, &f, u64::from(i))
                .is_some());
        }
        assert!(t.len(10_000) <= LBLC_SLOTS);
        // The most recent address is still remembered.
        f.vaddr[..4].copy_from_slice(&9_999u32.to_be_bytes());
        assert!(t.entry(&f.vaddr, 10_000).is_some());
    }

    #[test]
    fn lblcr_grows_and_shrinks_its_set() {
        let mut t = table();
        let mut dests = [d(1, 1, 0), d(2, 1, 0), d(3, 1, 0)];
        let a = flow(1);
        assert_eq!(t.schedule(SchedKind::Lblcr, &dests, &a, 0), Some(0));
        // Member 1 lblc-overloaded (2 > 1, others idle): 2 joins the set.
        dests[0].active_conns = 2;
        assert_eq!(t.schedule(SchedKind::Lblcr, &dests, &a, 1), Some(1));
        assert_eq!(t.entry(&a.vaddr, 1).unwrap().members(), &[2, 1]);
        // Now the least loaded member of the set, never server 3.
        dests[1].active_conns = 1;
        dests[0].active_conns = 0;
        assert_eq!(t.schedule(SchedKind::Lblcr, &dests, &a, 2), Some(0));
        dests[0].active_conns = 1;
        // Tie: the newest member first.
        assert_eq!(t.schedule(SchedKind::Lblcr, &dests, &a, 3), Some(1));
        // Unchanged for longer than the expiry: the most loaded leaves.
        dests[1].active_conns = 5;
        let later = 2 + LBLC_EXPIRE_SECS;
        assert_eq!(t.schedule(SchedKind::Lblcr, &dests, &a, later), Some(0));
        assert_eq!(t.entry(&a.vaddr, later).unwrap().members(), &[1]);
        // A deleted member is dropped from the set.
        let rest = [d(2, 1, 0), d(3, 1, 0)];
        assert_eq!(t.schedule(SchedKind::Lblcr, &rest, &a, later + 1), Some(0));
        assert_eq!(t.entry(&a.vaddr, later + 1).unwrap().members(), &[2]);
    }

    #[test]
    fn lblcr_set_is_bounded() {
        let mut t = table();
        let mut dests: std::vec::Vec<DestView> = (1..=12).map(|i| d(i, 1, 0)).collect();
        let a = flow(9);
        for round in 0..12u64 {
            // Every member is overloaded, so each round adds a server.
            for v in dests.iter_mut() {
                if t.entry(&a.vaddr, round)
                    .is_some_and(|e| e.members().contains(&v.id))
                {
                    v.active_conns = 2;
                }
            }
            assert!(t.schedule(SchedKind::Lblcr, &dests, &a, round).is_some());
            let e = t.entry(&a.vaddr, round).unwrap();
            assert!(usize::from(e.n) <= LBLCR_SET_MAX);
        }
    }

    #[test]
    fn other_kinds_and_empty_lists_find_nothing() {
        let mut t = table();
        let dests = [d(1, 1, 0)];
        assert_eq!(t.schedule(SchedKind::Rr, &dests, &flow(1), 0), None);
        assert_eq!(t.schedule(SchedKind::Lblc, &[], &flow(1), 0), None);
        assert_eq!(t.schedule(SchedKind::Lblcr, &[], &flow(1), 0), None);
        // A server without an id is used but not remembered.
        let anon = [d(0, 1, 0)];
        assert_eq!(t.schedule(SchedKind::Lblcr, &anon, &flow(1), 0), Some(0));
        assert_eq!(t.schedule(SchedKind::Lblc, &anon, &flow(2), 0), Some(0));
        assert!(t.entry(&flow(2).vaddr, 0).is_none());
    }

    #[test]
    fn table_size() {
        // What the kernel allocates per lblc/lblcr service.
        let size = core::mem::size_of::<LblcTable>();
        assert!(size <= 72 * 1024 + 64, "{size}");
    }

    #[test]
    fn overloaded_rule() {
        let dests = [d(1, 2, 3), d(2, 4, 2)];
        // 3 > 2 but server 2 has 2*2 = 4, not < 4.
        assert!(!lblc_overloaded(&dests[0], &dests));
        let dests = [d(1, 2, 3), d(2, 4, 1)];
        assert!(lblc_overloaded(&dests[0], &dests));
        assert!(!lblc_overloaded(&dests[1], &dests));
    }
}
