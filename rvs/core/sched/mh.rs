// SPDX-License-Identifier: GPL-2.0

//! Maglev hashing (`mh`): the per-service lookup table.
//!
//! C counterpart: net/netfilter/ipvs/ip_vs_mh.c (behaviour reproduced, code
//! not copied). Paper: Eisenbud et al., "Maglev", NSDI 2016, section 3.4.
//!
//! Each destination gets a pseudo-random permutation of the table slots
//! (`offset`, `skip`, derived from the destination's address and port, not
//! from its list position), and destinations take turns claiming their next
//! preferred free slot until the table is full. A destination takes as many
//! slots per turn as its weight divided by the gcd of all weights (shifted
//! right so that the largest ratio stays below 64, like IPVS), so its share of
//! the table follows its weight, and adding or removing one destination moves
//! few slots of the others.
//!
//! Like IPVS:
//!
//! - the table has [`MH_TABLE_SIZE`] = 4093 slots (IPVS's default
//!   `CONFIG_IP_VS_MH_TAB_INDEX=12`);
//! - the weight that counts is the last non-zero one
//!   ([`DestView::last_weight`]): a quiesced destination (weight 0) keeps its
//!   slots, so flows hashed there find it unavailable (no destination, or the
//!   fallback with `mh-fallback`) instead of reshuffling everybody;
//! - hashing is `hsiphash` (on 64-bit kernels SipHash-1-3, output truncated to
//!   32 bits) with IPVS's fixed keys, over `port + fold(address)`. A table
//!   built from the same destination list in the same order therefore has the
//!   same content as IPVS's on a 64-bit kernel, and clients map the same way.
//!
//! The table names destinations by [`DestView::id`] as well as by their
//! list index (IPVS's table holds destination pointers): looked up with a
//! list other than the one it was built from, e.g. by a packet that raced
//! with a configuration change, a slot still means the destination it was
//! given to. Its index is only a hint, checked against the id; a moved
//! destination is found by its id, a deleted one counts as unavailable.
//! Destinations without an id (0, host tests) are known by index only.
//!
//! Memory: [`MhTable`] is about 32 KiB. The kernel allocates it (zeroed; an
//! all-zero table is a valid empty table) once per mh service, never on the
//! stack, rebuilds it in place with [`MhTable::rebuild`] (through
//! `SchedState::dests_changed_with`) under the same lock that guards the
//! scheduler state or on a private copy it then publishes, and passes it to
//! `SchedState::schedule_flow_with`. Every slot is bounds-checked: a table
//! that does not match the destination list (stale, or garbage) gives wrong
//! or no choices but never panics.

#![forbid(unsafe_code)]

use super::{addr_fold, DestView, Dests, Flow, SchedFlags};

/// Number of slots of the mh lookup table: a prime, IPVS's default (4093).
pub const MH_TABLE_SIZE: usize = 4093;

/// [`MH_TABLE_SIZE`] as u32 for the modular arithmetic.
const M: u32 = 4093;

/// IPVS's `IP_VS_MH_TAB_BITS` for the default table: weight ratios are
/// shifted right until they fit in this many bits.
const MH_TAB_BITS: u32 = 6;

/// IPVS's fixed hsiphash keys (`generate_hash_secret`): key 1 places flows
/// and destination offsets, key 2 gives destination skips.
const KEY1: u64 = 2_654_435_761;
const KEY2: u64 = 2_654_446_892;

/// The Maglev lookup table of one mh service, plus the scratch space its
/// rebuild needs.
///
/// The fields are public only so the kernel can allocate and zero the table
/// in place (e.g. `KBox::init(init!(MhTable { lookup <- zeroed(), perm <-
/// zeroed() }), GFP_KERNEL)` with pin-init, or a zeroing allocation);
/// anything else should treat them as private. Any content is memory safe.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MhTable {
    /// Slot -> destination index + 1; 0 is an empty slot.
    pub lookup: [u16; MH_TABLE_SIZE],
    /// Slot -> [`DestView::id`] of the destination it was given to (0: the
    /// destination had no id, the index alone names it).
    pub ids: [u32; MH_TABLE_SIZE],
    /// Rebuild scratch: each destination's current permutation position.
    pub perm: [u16; MH_TABLE_SIZE],
}

/// The 64-bit kernel's `hsiphash_1u32(v, {k, k})`: SipHash-1-3 of the four
/// bytes of `v` under key words `k, k`, truncated to 32 bits.
fn hsiphash_u32(k0: u64, k1: u64, v: u32) -> u32 {
    let mut s = [
        k0 ^ 0x736f_6d65_7073_6575,
        k1 ^ 0x646f_7261_6e64_6f6d,
        k0 ^ 0x6c79_6765_6e65_7261,
        k1 ^ 0x7465_6462_7974_6573,
    ];
    fn round(s: &mut [u64; 4]) {
        let [mut v0, mut v1, mut v2, mut v3] = *s;
        v0 = v0.wrapping_add(v1);
        v1 = v1.rotate_left(13);
        v1 ^= v0;
        v0 = v0.rotate_left(32);
        v2 = v2.wrapping_add(v3);
        v3 = v3.rotate_left(16);
        v3 ^= v2;
        v0 = v0.wrapping_add(v3);
        v3 = v3.rotate_left(21);
        v3 ^= v0;
        v2 = v2.wrapping_add(v1);
        v1 = v1.rotate_left(17);
        v1 ^= v2;
        v2 = v2.rotate_left(32);
        *s = [v0, v1, v2, v3];
    }
    let b = (4u64 << 56) | u64::from(v);
    s[3] ^= b;
    round(&mut s);
    s[0] ^= b;
    s[2] ^= 0xff;
    round(&mut s);
    round(&mut s);
    round(&mut s);
    let [v0, v1, v2, v3] = s;
    (v0 ^ v1 ^ v2 ^ v3) as u32
}

/// `hash % M` with key 1: a flow's slot or a destination's first choice.
fn slot1(v: u32) -> u32 {
    hsiphash_u32(KEY1, KEY1, v).checked_rem(M).unwrap_or(0)
}

/// A destination's permutation step, in `1..M`.
fn skip(key: u32) -> u32 {
    let h = hsiphash_u32(KEY2, KEY2, key);
    h.checked_rem(M.saturating_sub(1))
        .unwrap_or(0)
        .saturating_add(1)
}

/// The weight mh builds its table from: the current weight, or the last
/// non-zero one for a quiesced destination (IPVS's `last_weight`).
fn mh_weight(d: &DestView) -> u32 {
    if d.weight > 0 {
        d.weight
    } else {
        d.last_weight
    }
}

fn gcd(mut a: u32, mut b: u32) -> u32 {
    while let Some(r) = a.checked_rem(b) {
        a = b;
        b = r;
    }
    a
}

impl MhTable {
    /// An empty table (all zero). For host code and tests: at 32 KiB this
    /// must not be built on a kernel stack; the kernel allocates the table
    /// zeroed instead.
    pub const EMPTY: MhTable = MhTable {
        lookup: [0; MH_TABLE_SIZE],
        ids: [0; MH_TABLE_SIZE],
        perm: [0; MH_TABLE_SIZE],
    };

    /// Empties the table in place (no destination for anybody).
    pub fn init(&mut self) {
        self.lookup.fill(0);
        self.ids.fill(0);
        self.perm.fill(0);
    }

    /// Number of slots currently pointing at destination `index`.
    pub fn share(&self, index: usize) -> usize {
        let want = index.checked_add(1);
        self.lookup
            .iter()
            .filter(|&&e| Some(usize::from(e)) == want)
            .count()
    }

    /// The slot's destination, as an index into `dests` and its view:
    /// the one at the stored index if it has the stored id, else the one
    /// with that id wherever it is now. `Ok(None)` when the slot is empty
    /// (nothing for this flow), `Err(())` when its destination is not in
    /// `dests` (deleted: unavailable).
    fn entry(
        &self,
        dests: &(impl Dests + ?Sized),
        slot: u32,
    ) -> Result<Option<(usize, DestView)>, ()> {
        let slot = usize::try_from(slot).map_err(|_| ())?;
        let Some(i) = self
            .lookup
            .get(slot)
            .and_then(|&e| usize::from(e).checked_sub(1))
        else {
            return Ok(None);
        };
        let id = self.ids.get(slot).copied().unwrap_or(0);
        if let Some(d) = dests.view(i) {
            if id == 0 || d.id == id {
                return Ok(Some((i, d)));
            }
        }
        if id == 0 {
            return Err(());
        }
        dests
            .views()
            .enumerate()
            .find(|(_, d)| d.id == id)
            .map(Some)
            .ok_or(())
    }

    /// Rebuilds the table in place for `dests` (in list order), as IPVS
    /// does on every destination add, removal and update.
    ///
    /// Destinations with a zero [`mh_weight`](DestView::last_weight) take no
    /// slot; if none has a weight the table ends up empty. Only the first
    /// [`MH_TABLE_SIZE`] destinations can be placed: the result is `false`
    /// when there are more (IPVS refuses such a list; the kernel should
    /// refuse to add the 4094th destination to an mh service).
    ///
    /// Cost: about `MH_TABLE_SIZE` hashes plus the permutation probes, a few
    /// tens of microseconds; no allocation, a few words of stack.
    pub fn rebuild(&mut self, dests: &(impl Dests + ?Sized)) -> bool {
        self.lookup.fill(0);
        self.ids.fill(0);
        let fits = dests.len() <= MH_TABLE_SIZE;
        let used = || dests.views().take(MH_TABLE_SIZE);

        let mut g = 0u32;
        let mut max = 0u32;
        for d in used() {
            let w = mh_weight(&d);
            if w > 0 {
                g = if g > 0 { gcd(w, g) } else { w };
            }
            max = max.max(w);
        }
        if g == 0 {
            return fits;
        }
        // fls(max / gcd) - MH_TAB_BITS, at least 0.
        let ratio = max.checked_div(g).unwrap_or(0);
        let fls = u32::BITS.saturating_sub(ratio.leading_zeros());
        let shift = fls.saturating_sub(MH_TAB_BITS);
        let turns = |d: &DestView| -> u32 {
            let w = mh_weight(d);
            let t = w
                .checked_div(g)
                .unwrap_or(0)
                .checked_shr(shift)
                .unwrap_or(0);
            if t > 0 {
                t
            } else {
                u32::from(w != 0)
            }
        };

        for (p, d) in self.perm.iter_mut().zip(used()) {
            // slot1 < M <= u16::MAX.
            *p = u16::try_from(slot1(d.hash_key)).unwrap_or(0);
        }

        let mut filled = 0u32;
        // Every pass over the list fills at least one slot (some destination
        // has turns >= 1 because g > 0), so M passes always suffice.
        for _ in 0..M {
            for (i, d) in used().enumerate() {
                let t = turns(&d);
                if t == 0 {
                    continue;
                }
                let step = skip(d.hash_key);
                // Slot values are 1-based dest indices; i < M < u16::MAX.
                let mark = match i.checked_add(1).and_then(|v| u16::try_from(v).ok()) {
                    Some(v) => v,
                    None => return false,
                };
                for _ in 0..t {
                    let Some(c) = self.next_free(i, step) else {
                        return fits;
                    };
                    if let Some(e) = self.lookup.get_mut(c) {
                        *e = mark;
                    }
                    if let Some(e) = self.ids.get_mut(c) {
                        *e = d.id;
                    }
                    filled = filled.saturating_add(1);
                    if filled >= M {
                        return fits;
                    }
                }
            }
        }
        fits
    }

    /// The first free slot of destination `i`'s permutation from its
    /// current position on; leaves the position there (IPVS's `perm`).
    fn next_free(&mut self, i: usize, step: u32) -> Option<usize> {
        let p = self.perm.get_mut(i)?;
        let mut c = u32::from(*p);
        // M is prime and 1 <= step < M, so M steps visit every slot.
        for _ in 0..M {
            let idx = usize::try_from(c).ok()?;
            if self.lookup.get(idx).copied() == Some(0) {
                *p = u16::try_from(c).ok()?;
                return Some(idx);
            }
            c = c.saturating_add(step);
            if c >= M {
                c = c.saturating_sub(M);
            }
        }
        None
    }

    /// Looks `flow` up: the destination of the slot its client address
    /// (and, with `flags.port`, client port) hashes to, if available.
    ///
    /// With `flags.fallback`, an unavailable destination is replaced by
    /// probing further slots, each found by rehashing the client with an
    /// increasing offset (IPVS's `ip_vs_mh_get_fallback`), so that the
    /// clients of a failed server spread over the others. `None` when the
    /// table is empty or nothing available is found.
    pub fn lookup(
        &self,
        dests: &(impl Dests + ?Sized),
        flow: &Flow,
        flags: SchedFlags,
    ) -> Option<usize> {
        let port = if flags.port { flow.cport } else { 0 };
        let base = u32::from(port).wrapping_add(addr_fold(&flow.caddr));
        // The slot's destination if available; None for a deleted one.
        let available = |e: Option<(usize, DestView)>| e.filter(|(_, d)| d.available());
        let ihash = slot1(base);
        match self.entry(dests, ihash) {
            Ok(None) => return None,
            Ok(e) => {
                if let Some((i, _)) = available(e) {
                    return Some(i);
                }
            }
            Err(()) => {}
        }
        // Without anything available the probe loop below could only fail,
        // after M hashes; skip it.
        if !flags.fallback || !dests.views().any(|d| d.available()) {
            return None;
        }
        for offset in 0..M {
            let roffset = offset.wrapping_add(ihash).checked_rem(M).unwrap_or(0);
            match self.entry(dests, slot1(base.wrapping_add(roffset))) {
                Ok(None) => return None,
                Ok(e) => {
                    if let Some((i, _)) = available(e) {
                        return Some(i);
                    }
                }
                Err(()) => {}
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_util::{client, mh_setup, named, server, state};
    use super::super::SchedKind;
    use super::*;
    use std::boxed::Box;
    use std::vec;
    use std::vec::Vec;

    #[test]
    fn hsiphash_matches_kernel_vector() {
        // lib/siphash_kunit.c, 64-bit: hsiphash_1u32(0x03020100, key 00..0f)
        // equals test_vectors_hsiphash[4].
        assert_eq!(
            hsiphash_u32(0x0706_0504_0302_0100, 0x0f0e_0d0c_0b0a_0908, 0x0302_0100),
            0x88d3_8328
        );
    }

    #[test]
    fn empty_and_garbage_tables() {
        let mut t = Box::new(MhTable::EMPTY);
        let dests = [DestView {
            weight: 1,
            ..DestView::default()
        }];
        let flow = Flow::default();
        let fb = SchedFlags {
            fallback: true,
            port: true,
        };
        assert_eq!(t.lookup(&dests, &flow, fb), None);
        // Garbage indices: no panic, no out-of-range answer.
        t.lookup.fill(u16::MAX);
        t.perm.fill(u16::MAX);
        assert_eq!(t.lookup(&dests, &flow, fb), None);
        assert!(t.rebuild(&dests));
        assert_eq!(t.lookup(&dests, &flow, fb), Some(0));
        t.init();
        assert_eq!(t.lookup(&dests, &flow, fb), None);
        // All weights zero (never weighted): empty table.
        assert!(t.rebuild(&[DestView::default(); 3]));
        assert_eq!(t.share(0) + t.share(1) + t.share(2), 0);
        // More destinations than slots: placed partially, reported.
        let many: Vec<DestView> = (0..5000u32)
            .map(|k| DestView {
                weight: 1,
                hash_key: k,
                ..DestView::default()
            })
            .collect();
        assert!(!t.rebuild(&many));
        assert!(t
            .lookup
            .iter()
            .all(|&e| e != 0 && usize::from(e) <= MH_TABLE_SIZE));
    }

    #[test]
    fn mh_shares_follow_weights() {
        let dests = [server(1, 1), server(2, 2), server(3, 3), server(4, 4)];
        let (mut s, t) = mh_setup(&dests, false, false);
        let m = MH_TABLE_SIZE as f64;
        for (i, d) in dests.iter().enumerate() {
            let share = t.share(i) as f64 / m;
            let want = f64::from(d.weight) / 10.0;
            assert!((share - want).abs() < 0.02, "dest {i}: {share} vs {want}");
        }
        assert_eq!((0..4).map(|i| t.share(i)).sum::<usize>(), MH_TABLE_SIZE);
        // Large weights are scaled (IPVS's rshift) but stay proportional.
        let big = [server(1, 10000), server(2, 30000), server(3, 65535)];
        let (_, t2) = mh_setup(&big, false, false);
        let total: u32 = big.iter().map(|d| d.weight).sum();
        for (i, d) in big.iter().enumerate() {
            let share = t2.share(i) as f64 / m;
            let want = f64::from(d.weight) / f64::from(total);
            assert!((share - want).abs() < 0.03, "dest {i}: {share} vs {want}");
        }
        // Clients follow the table and stick.
        let mut count = [0u32; 4];
        for n in 0..20000 {
            let f = client(n, 5);
            let i = s.schedule_flow_with(&dests, &f, Some(&t)).unwrap();
            assert_eq!(
                s.schedule_flow_with(&dests, &client(n, 6), Some(&t)),
                Some(i)
            );
            count[i] += 1;
        }
        for (i, c) in count.iter().enumerate() {
            let want = 2000.0 * (i + 1) as f64;
            assert!((f64::from(*c) - want).abs() < want * 0.1, "{count:?}");
        }
        // Without the table mh finds nothing.
        assert_eq!(s.schedule_flow(&dests, &client(1, 1)), None);
    }

    #[test]
    fn mh_minimal_disruption() {
        let mut dests: Vec<DestView> = (1..=10).map(|i| server(i, 1)).collect();
        let (mut s, t) = mh_setup(&dests, false, false);
        let key_at = |t: &MhTable, d: &[DestView], slot: usize| {
            let e = usize::from(t.lookup[slot]);
            d[e - 1].hash_key
        };
        let old: Vec<u32> = (0..MH_TABLE_SIZE).map(|c| key_at(&t, &dests, c)).collect();
        let gone = dests.remove(3);
        let mut t2 = Box::new(MhTable::EMPTY);
        s.dests_changed_with(&dests, Some(&mut t2));
        let mut moved = 0;
        for (c, &k) in old.iter().enumerate() {
            let now = key_at(&t2, &dests, c);
            if k == gone.hash_key {
                assert_ne!(now, k);
            } else if now != k {
                moved += 1;
            }
        }
        // Only the removed server's ~10% must move; others barely do.
        assert!(moved < MH_TABLE_SIZE / 25, "moved {moved}");
        // Adding it back restores the original table exactly.
        dests.insert(3, gone);
        s.dests_changed_with(&dests, Some(&mut t2));
        assert_eq!(t2.lookup, t.lookup);
    }

    /// The table names servers, not list positions: looked up with a list
    /// other than the one it was built from (a server added at the head,
    /// as the kernel lists them, or one deleted), every flow still reaches
    /// the server the table gave it, and a deleted server's flows find it
    /// gone (none, or another server with mh-fallback) instead of landing
    /// on a neighbour or past the end of the list.
    #[test]
    fn mh_table_and_list_of_different_versions() {
        let old: Vec<DestView> = (1..=4).map(|i| named(i, 1)).collect();
        let (mut plain, t) = mh_setup(&old, false, false);
        let mut fb = state(SchedKind::Mh, true, false);
        let mut added = vec![named(9, 1)];
        added.extend_from_slice(&old);
        let deleted: Vec<DestView> = old.iter().copied().filter(|d| d.id != 3).collect();
        let id = |d: &[DestView], i: Option<usize>| i.map(|i| d[i].id);
        let mut to_deleted = 0;
        for n in 0..3000 {
            let f = client(n, 0);
            let want = id(&old, plain.schedule_flow_with(&old, &f, Some(&t)));
            assert!(want.is_some());
            let got = id(&added, plain.schedule_flow_with(&added, &f, Some(&t)));
            assert_eq!(got, want, "client {n}, list with a server added");
            let got = id(&deleted, plain.schedule_flow_with(&deleted, &f, Some(&t)));
            let moved = id(&deleted, fb.schedule_flow_with(&deleted, &f, Some(&t)));
            if want == Some(3) {
                to_deleted += 1;
                assert_eq!(got, None, "client {n} of the deleted server");
                assert!(moved.is_some() && moved != Some(3), "client {n}: {moved:?}");
            } else {
                assert_eq!(got, want, "client {n}, list with a server deleted");
                assert_eq!(moved, want, "client {n}, fallback");
            }
        }
        assert!(to_deleted > 300, "{to_deleted}");
    }

    #[test]
    fn mh_quiesce_and_fallback() {
        let mut dests = [server(1, 2), server(2, 2), server(3, 2)];
        let (mut plain, mut t) = mh_setup(&dests, false, false);
        let mut fb = state(SchedKind::Mh, true, false);
        let before: Vec<usize> = (0..3000)
            .map(|n| {
                plain
                    .schedule_flow_with(&dests, &client(n, 0), Some(&t))
                    .unwrap()
            })
            .collect();
        let table = t.lookup;
        // Quiesce dest 0: last_weight keeps its slots.
        dests[0].weight = 0;
        assert!(plain.dests_changed_with(&dests, Some(&mut t)));
        assert_eq!(t.lookup, table);
        let mut moved_to = [0u32; 3];
        for (n, &was) in before.iter().enumerate() {
            let f = client(n as u32, 0);
            let p = plain.schedule_flow_with(&dests, &f, Some(&t));
            let q = fb.schedule_flow_with(&dests, &f, Some(&t));
            if was == 0 {
                assert_eq!(p, None);
                let q = q.unwrap();
                assert_ne!(q, 0);
                moved_to[q] += 1;
            } else {
                assert_eq!((p, q), (Some(was), Some(was)));
            }
        }
        // Its clients spread over both others.
        assert!(moved_to[1] > 100 && moved_to[2] > 100, "{moved_to:?}");
        // Without last_weight the server leaves the table.
        dests[0].last_weight = 0;
        plain.dests_changed_with(&dests, Some(&mut t));
        assert_eq!(t.share(0), 0);
        // All unavailable: None, also with fallback.
        dests[1].overloaded = true;
        dests[2].overloaded = true;
        assert_eq!(fb.schedule_flow_with(&dests, &client(1, 0), Some(&t)), None);
    }

    #[test]
    fn mh_port_flag() {
        let dests = [server(1, 1), server(2, 1), server(3, 1)];
        let (mut s, t) = mh_setup(&dests, false, false);
        let (mut sp, _) = mh_setup(&dests, false, true);
        let first = s.schedule_flow_with(&dests, &client(42, 1), Some(&t));
        let mut seen = [0u32; 3];
        for port in 1..300 {
            let f = client(42, port);
            assert_eq!(s.schedule_flow_with(&dests, &f, Some(&t)), first);
            seen[sp.schedule_flow_with(&dests, &f, Some(&t)).unwrap()] += 1;
        }
        assert!(seen.iter().all(|&c| c > 50), "{seen:?}");
    }
}
