// SPDX-License-Identifier: GPL-2.0

//! Schedulers: choose the real server for a new connection.
//!
//! C counterparts: net/netfilter/ipvs/ip_vs_rr.c, ip_vs_wrr.c, ip_vs_lc.c,
//! ip_vs_wlc.c, ip_vs_sed.c, ip_vs_nq.c.
//!
//! The kernel side keeps one [`SchedState`] per service under the service's
//! scheduler lock and passes a snapshot of its destinations as a slice of
//! [`DestView`]s, in the service's list order. A scheduler answers with the
//! index of the chosen destination in that slice. Destinations are identified
//! only by index, so the caller must tell the state when the list changes
//! ([`SchedState::dests_changed`], and for exact round-robin continuity
//! [`SchedState::dest_removed`] / [`SchedState::dest_inserted`]). A stale
//! state never panics: an out-of-range cursor is treated as "start of list".
//!
//! New schedulers slot in as a [`SchedKind`] variant, an arm in
//! [`SchedKind::from_name`] / [`SchedKind::name`] and an arm in
//! [`SchedState::schedule`]; per-scheduler data lives in [`SchedState`].
//! Hash-based schedulers (sh, dh, mh) will take the flow hash through an
//! additional entry point rather than changing [`SchedState::schedule`].

#![forbid(unsafe_code)]

/// What a scheduler may know about one destination (real server).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DestView {
    /// Configured weight; 0 means quiesced (keeps its connections, gets no
    /// new ones).
    pub weight: u32,
    /// Connections counted as active (see `proto::is_active`).
    pub active_conns: u32,
    /// Connections counted as inactive.
    pub inactive_conns: u32,
    /// Upper connection threshold reached (`-x`); excluded until it falls
    /// below the lower threshold.
    pub overloaded: bool,
}

impl DestView {
    /// Whether this destination may receive new connections: weight > 0 and
    /// not overloaded, as every IPVS scheduler checks.
    pub fn available(&self) -> bool {
        self.weight > 0 && !self.overloaded
    }

    /// IPVS's connection overhead used by lc and wlc
    /// (`ip_vs_dest_conn_overhead`): `active * 256 + total`, where total is
    /// active + inactive. Computed in u64 so it cannot overflow.
    pub fn conn_overhead(&self) -> u64 {
        // At most 257 * 2^32 + 2^32 < 2^41: saturation never happens.
        u64::from(self.active_conns)
            .saturating_mul(257)
            .saturating_add(u64::from(self.inactive_conns))
    }

    /// Expected overhead used by sed and nq: active connections + 1.
    pub fn sed_overhead(&self) -> u64 {
        u64::from(self.active_conns).saturating_add(1)
    }
}

/// The scheduling algorithm of a service.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SchedKind {
    /// Round robin (`rr`).
    Rr,
    /// Weighted round robin (`wrr`), IPVS's interleaved variant.
    Wrr,
    /// Least connection (`lc`).
    Lc,
    /// Weighted least connection (`wlc`), the IPVS default.
    Wlc,
    /// Shortest expected delay (`sed`).
    Sed,
    /// Never queue (`nq`).
    Nq,
}

impl SchedKind {
    /// Every scheduler rvs implements, for listing and for tests.
    pub const ALL: [SchedKind; 6] = [
        SchedKind::Rr,
        SchedKind::Wrr,
        SchedKind::Lc,
        SchedKind::Wlc,
        SchedKind::Sed,
        SchedKind::Nq,
    ];

    /// The scheduler IPVS and ipvsadm use when none is given.
    pub const DEFAULT: SchedKind = SchedKind::Wlc;

    /// Looks a scheduler up by its ipvsadm name (`-s rr`). Exact, case
    /// sensitive match like IPVS; the caller strips any trailing NUL.
    pub fn from_name(name: &[u8]) -> Option<SchedKind> {
        SchedKind::ALL
            .iter()
            .copied()
            .find(|k| k.name().as_bytes() == name)
    }

    /// The ipvsadm name of the scheduler, as shown by `ipvsadm -L`.
    pub fn name(self) -> &'static str {
        match self {
            SchedKind::Rr => "rr",
            SchedKind::Wrr => "wrr",
            SchedKind::Lc => "lc",
            SchedKind::Wlc => "wlc",
            SchedKind::Sed => "sed",
            SchedKind::Nq => "nq",
        }
    }
}

/// Per-service scheduler state; plain data, guarded by the caller's lock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SchedState {
    kind: SchedKind,
    /// Index of the last destination chosen (rr, wrr); `None` is the list
    /// head, i.e. the next search starts at index 0.
    cursor: Option<usize>,
    /// wrr: current weight threshold.
    cw: u32,
    /// wrr: maximum weight, lowered by `gcd - 1` as in IPVS.
    mw: u32,
    /// wrr: decreasing interval, the gcd of the positive weights.
    di: u32,
}

fn gcd(mut a: u32, mut b: u32) -> u32 {
    // checked_rem is None exactly when b == 0, which ends the loop.
    while let Some(r) = a.checked_rem(b) {
        a = b;
        b = r;
    }
    a
}

impl SchedState {
    /// A fresh state for `kind`. For wrr, call [`SchedState::dests_changed`]
    /// once the destinations are known (or use [`SchedState::with_dests`]);
    /// until then wrr finds nothing, like an IPVS service without dests.
    pub fn new(kind: SchedKind) -> SchedState {
        SchedState {
            kind,
            cursor: None,
            cw: 0,
            mw: 0,
            di: 1,
        }
    }

    /// A fresh state for `kind` already primed with `dests`.
    pub fn with_dests(kind: SchedKind, dests: &[DestView]) -> SchedState {
        let mut s = SchedState::new(kind);
        s.dests_changed(dests);
        s
    }

    /// The algorithm this state belongs to.
    pub fn kind(&self) -> SchedKind {
        self.kind
    }

    /// Chooses a destination for a new connection: the index into `dests`,
    /// or `None` when no destination is available (all weight 0, all
    /// overloaded, or an empty list).
    pub fn schedule(&mut self, dests: &[DestView]) -> Option<usize> {
        match self.kind {
            SchedKind::Rr => self.rr(dests),
            SchedKind::Wrr => self.wrr(dests),
            SchedKind::Lc => lc(dests),
            SchedKind::Wlc => weighted_least(dests, DestView::conn_overhead),
            SchedKind::Sed => weighted_least(dests, DestView::sed_overhead),
            SchedKind::Nq => nq(dests),
        }
    }

    /// Must be called after destinations were added or removed or a weight
    /// changed. wrr recomputes gcd and maximum weight and restarts from the
    /// list head like IPVS's `ip_vs_wrr_dest_changed`; rr only drops a
    /// cursor that fell off the end of the list.
    pub fn dests_changed(&mut self, dests: &[DestView]) {
        if let Some(c) = self.cursor {
            if c >= dests.len() {
                self.cursor = None;
            }
        }
        if self.kind != SchedKind::Wrr {
            return;
        }
        let mut g = 0u32;
        let mut max = 0u32;
        for d in dests {
            if d.weight > 0 {
                g = if g > 0 { gcd(d.weight, g) } else { d.weight };
            }
            max = max.max(d.weight);
        }
        let di = if g > 0 { g } else { 1 };
        // max >= g >= 1 whenever any weight is positive, so this is exact.
        let mw = max.saturating_sub(di.saturating_sub(1));
        self.cursor = None;
        self.di = di;
        self.mw = mw;
        if self.cw > mw || self.cw == 0 {
            self.cw = mw;
        } else if di > 1 {
            // Realign cw to the new interval: (cw / di) * di + 1 <= mw here.
            let steps = self.cw.checked_div(di).unwrap_or(0);
            self.cw = steps.saturating_mul(di).saturating_add(1);
        }
    }

    /// Tells the state that the destination at `index` was removed from the
    /// list, so rr continues with the destination that followed it (IPVS's
    /// `ip_vs_rr_del_dest`). Call [`SchedState::dests_changed`] as well.
    pub fn dest_removed(&mut self, index: usize) {
        if let Some(c) = self.cursor {
            if index <= c {
                self.cursor = c.checked_sub(1);
            }
        }
    }

    /// Tells the state that a destination was inserted at `index` (entries
    /// from `index` on moved up by one), so the rr cursor keeps pointing at
    /// the same destination. Call [`SchedState::dests_changed`] as well.
    pub fn dest_inserted(&mut self, index: usize) {
        if let Some(c) = self.cursor {
            if index <= c {
                self.cursor = c.checked_add(1);
            }
        }
    }

    /// Round robin: the first available destination after the last chosen
    /// one, wrapping around once.
    fn rr(&mut self, dests: &[DestView]) -> Option<usize> {
        let n = dests.len();
        if n == 0 {
            return None;
        }
        let start = match self.cursor {
            Some(c) if c < n => c.saturating_add(1),
            _ => 0,
        };
        // From just after the cursor to the end, then from the start up to
        // and including the cursor.
        let after = dests.iter().enumerate().skip(start);
        let before = dests.iter().enumerate().take(start);
        let found = after.chain(before).find(|(_, d)| d.available());
        let (i, _) = found?;
        self.cursor = Some(i);
        Some(i)
    }

    /// Interleaved weighted round robin, IPVS's `ip_vs_wrr_schedule`.
    ///
    /// The current weight `cw` starts at the maximum weight and decreases by
    /// the gcd each time the end of the list is reached; a destination is
    /// chosen when its weight is >= `cw`. With weights 3:2:1 (A, B, C) one
    /// cycle is A A B A B C.
    fn wrr(&mut self, dests: &[DestView]) -> Option<usize> {
        let n = dests.len();
        let last = match self.cursor {
            Some(c) if c < n => Some(c),
            _ => None,
        };
        if self.mw == 0 || n == 0 {
            self.cursor = last;
            return None;
        }
        let di = self.di.max(1);
        let mw = self.mw;
        let mut cw = if self.cw == 0 || self.cw > mw {
            mw
        } else {
            self.cw
        };
        let mut pos = last;
        let mut stop: Option<usize> = None;
        let mut last_pass = false;
        let mut restarted = false;
        // The IPVS algorithm ends within two descents of cw from mw; the
        // budget only guards against a state that contradicts `dests`.
        let passes = mw.checked_div(di).unwrap_or(mw);
        let mut budget = u64::from(passes).saturating_add(2).saturating_mul(2);
        loop {
            let start = match pos {
                Some(p) => p.saturating_add(1),
                None => 0,
            };
            for i in start..n {
                let d = match dests.get(i) {
                    Some(d) => d,
                    None => break,
                };
                if !d.overloaded && d.weight >= cw {
                    self.cw = cw;
                    self.cursor = Some(i);
                    return Some(i);
                }
                if stop == Some(i) {
                    self.cw = cw;
                    self.cursor = Some(i);
                    return None;
                }
            }
            pos = None;
            if cw <= di {
                cw = mw;
                if last_pass || last.is_none() {
                    self.cw = cw;
                    self.cursor = last;
                    return None;
                }
                restarted = true;
            } else {
                cw = cw.saturating_sub(di);
            }
            last_pass = cw <= di;
            if last_pass && restarted && last.is_some() {
                stop = last;
            }
            budget = budget.saturating_sub(1);
            if budget == 0 {
                self.cw = cw;
                self.cursor = None;
                return None;
            }
        }
    }
}

/// Least connection: the available destination with the lowest
/// [`DestView::conn_overhead`]; ties go to the first in list order.
fn lc(dests: &[DestView]) -> Option<usize> {
    let mut least: Option<(usize, u64)> = None;
    for (i, d) in dests.iter().enumerate() {
        if !d.available() {
            continue;
        }
        let oh = d.conn_overhead();
        match least {
            Some((_, loh)) if oh >= loh => {}
            _ => least = Some((i, oh)),
        }
    }
    least.map(|(i, _)| i)
}

/// Weighted least load: the available destination with the lowest
/// `overhead / weight`, compared as `loh * w > oh * lw` to avoid division
/// (wlc, sed). Ties go to the first in list order.
///
/// Products are u64 and saturate; they are exact for any weight <= 65535
/// (the configuration limit) and connection counts below 2^32.
fn weighted_least(dests: &[DestView], overhead: fn(&DestView) -> u64) -> Option<usize> {
    let mut least: Option<(usize, u64, u64)> = None;
    for (i, d) in dests.iter().enumerate() {
        if !d.available() {
            continue;
        }
        let oh = overhead(d);
        let w = u64::from(d.weight);
        match least {
            Some((_, loh, lw)) if loh.saturating_mul(w) <= oh.saturating_mul(lw) => {}
            _ => least = Some((i, oh, w)),
        }
    }
    least.map(|(i, _, _)| i)
}

/// Never queue: an idle available destination (no active connections) if
/// there is one, the first such in list order; otherwise like sed.
fn nq(dests: &[DestView]) -> Option<usize> {
    let idle = dests
        .iter()
        .position(|d| d.available() && d.active_conns == 0);
    idle.or_else(|| weighted_least(dests, DestView::sed_overhead))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::vec;
    use std::vec::Vec;

    fn w(weight: u32) -> DestView {
        DestView {
            weight,
            ..DestView::default()
        }
    }

    fn conns(weight: u32, active: u32, inactive: u32) -> DestView {
        DestView {
            weight,
            active_conns: active,
            inactive_conns: inactive,
            overloaded: false,
        }
    }

    fn picks(s: &mut SchedState, dests: &[DestView], n: usize) -> Vec<Option<usize>> {
        (0..n).map(|_| s.schedule(dests)).collect()
    }

    #[test]
    fn names_round_trip() {
        for k in SchedKind::ALL {
            assert_eq!(SchedKind::from_name(k.name().as_bytes()), Some(k));
        }
        assert_eq!(SchedKind::from_name(b"RR"), None);
        assert_eq!(SchedKind::from_name(b""), None);
        assert_eq!(SchedKind::from_name(b"wlcx"), None);
        assert_eq!(SchedKind::DEFAULT.name(), "wlc");
    }

    #[test]
    fn rr_even_split() {
        let dests = [w(1), w(1), w(1)];
        let mut s = SchedState::with_dests(SchedKind::Rr, &dests);
        let mut count = [0u32; 3];
        for _ in 0..300 {
            let i = s.schedule(&dests).unwrap();
            count[i] += 1;
        }
        assert_eq!(count, [100, 100, 100]);
    }

    #[test]
    fn rr_order_and_skips() {
        let mut dests = [w(1), w(0), w(5), w(1)];
        dests[3].overloaded = true;
        let mut s = SchedState::new(SchedKind::Rr);
        assert_eq!(
            picks(&mut s, &dests, 4),
            vec![Some(0), Some(2), Some(0), Some(2)]
        );
        dests[3].overloaded = false;
        assert_eq!(picks(&mut s, &dests, 3), vec![Some(3), Some(0), Some(2)]);
    }

    #[test]
    fn all_unavailable_is_none() {
        let zero = [w(0), w(0), w(0)];
        let mut over = [w(1), w(2)];
        for d in over.iter_mut() {
            d.overloaded = true;
        }
        for k in SchedKind::ALL {
            let mut s = SchedState::with_dests(k, &zero);
            assert_eq!(s.schedule(&zero), None, "{}", k.name());
            assert_eq!(s.schedule(&[]), None, "{}", k.name());
            let mut s = SchedState::with_dests(k, &over);
            assert_eq!(s.schedule(&over), None, "{}", k.name());
        }
    }

    #[test]
    fn wrr_ipvs_sequence() {
        let dests = [w(3), w(2), w(1)];
        let mut s = SchedState::with_dests(SchedKind::Wrr, &dests);
        let seq: Vec<usize> = (0..12).map(|_| s.schedule(&dests).unwrap()).collect();
        assert_eq!(seq, vec![0, 0, 1, 0, 1, 2, 0, 0, 1, 0, 1, 2]);
    }

    #[test]
    fn wrr_ratio_per_cycle() {
        let dests = [w(3), w(2), w(1)];
        let mut s = SchedState::with_dests(SchedKind::Wrr, &dests);
        for _ in 0..50 {
            let mut count = [0u32; 3];
            for _ in 0..6 {
                count[s.schedule(&dests).unwrap()] += 1;
            }
            assert_eq!(count, [3, 2, 1]);
        }
    }

    #[test]
    fn wrr_gcd_and_zero_weight() {
        // gcd 2: same pattern as 3:2:1, and the weight-0 dest is never used.
        let dests = [w(6), w(0), w(4), w(2)];
        let mut s = SchedState::with_dests(SchedKind::Wrr, &dests);
        let seq: Vec<usize> = (0..6).map(|_| s.schedule(&dests).unwrap()).collect();
        assert_eq!(seq, vec![0, 0, 2, 0, 2, 3]);
        // Equal weights behave like rr.
        let eq = [w(5), w(5), w(5)];
        let mut s = SchedState::with_dests(SchedKind::Wrr, &eq);
        let seq: Vec<usize> = (0..6).map(|_| s.schedule(&eq).unwrap()).collect();
        assert_eq!(seq, vec![0, 1, 2, 0, 1, 2]);
    }

    #[test]
    fn wrr_weight_change() {
        let mut dests = [w(3), w(2), w(1)];
        let mut s = SchedState::with_dests(SchedKind::Wrr, &dests);
        for _ in 0..4 {
            s.schedule(&dests).unwrap();
        }
        dests[0].weight = 1;
        dests[2].weight = 4;
        s.dests_changed(&dests);
        // Settle into full cycles, then check the new 1:2:4 ratio.
        for _ in 0..7 {
            s.schedule(&dests).unwrap();
        }
        let mut count = [0u32; 3];
        for _ in 0..70 {
            count[s.schedule(&dests).unwrap()] += 1;
        }
        assert_eq!(count, [10, 20, 40]);
    }

    #[test]
    fn wrr_overloaded_skipped_and_recovers() {
        let mut dests = [w(2), w(1)];
        let mut s = SchedState::with_dests(SchedKind::Wrr, &dests);
        dests[0].overloaded = true;
        for _ in 0..5 {
            assert_eq!(s.schedule(&dests), Some(1));
        }
        dests[1].overloaded = true;
        assert_eq!(s.schedule(&dests), None);
        dests[0].overloaded = false;
        assert_eq!(s.schedule(&dests), Some(0));
    }

    #[test]
    fn wrr_unprimed_finds_nothing() {
        let dests = [w(1)];
        let mut s = SchedState::new(SchedKind::Wrr);
        assert_eq!(s.schedule(&dests), None);
        s.dests_changed(&dests);
        assert_eq!(s.schedule(&dests), Some(0));
    }

    #[test]
    fn lc_picks_least() {
        let dests = [conns(1, 2, 0), conns(1, 1, 300), conns(1, 1, 5)];
        let mut s = SchedState::new(SchedKind::Lc);
        assert_eq!(s.schedule(&dests), Some(2));
        // Ties go to the first; weight is ignored apart from 0.
        let dests = [conns(0, 0, 0), conns(1, 1, 0), conns(100, 1, 0)];
        assert_eq!(s.schedule(&dests), Some(1));
        // overhead = active*256 + total (IPVS 6.12).
        assert_eq!(conns(1, 1, 1).conn_overhead(), 258);
    }

    #[test]
    fn wlc_picks_least_per_weight() {
        let mut s = SchedState::new(SchedKind::Wlc);
        // 2 active on weight 3 beats 1 active on weight 1.
        let dests = [conns(1, 1, 0), conns(3, 2, 0)];
        assert_eq!(s.schedule(&dests), Some(1));
        // Weight 0 and overloaded are skipped even if idle.
        let mut dests = [conns(0, 0, 0), conns(1, 0, 0), conns(1, 5, 0)];
        dests[1].overloaded = true;
        assert_eq!(s.schedule(&dests), Some(2));
        // Ties go to the first.
        let dests = [conns(2, 2, 0), conns(1, 1, 0)];
        assert_eq!(s.schedule(&dests), Some(0));
        // Large values do not overflow.
        let dests = [conns(65535, u32::MAX, u32::MAX), conns(1, u32::MAX, 0)];
        assert_eq!(s.schedule(&dests), Some(0));
    }

    #[test]
    fn sed_and_nq() {
        let mut sed = SchedState::new(SchedKind::Sed);
        let mut nq = SchedState::new(SchedKind::Nq);
        // sed: (0+1)/1 = 1 vs (1+1)/3 = 0.67 -> index 1.
        let dests = [conns(1, 0, 0), conns(3, 1, 0)];
        assert_eq!(sed.schedule(&dests), Some(1));
        // nq: the idle server wins outright.
        assert_eq!(nq.schedule(&dests), Some(0));
        let busy = [conns(1, 3, 0), conns(3, 5, 0)];
        assert_eq!(nq.schedule(&busy), Some(1));
    }

    #[test]
    fn shrinking_and_growing_lists_never_panic() {
        let big: Vec<DestView> = (1..=8).map(w).collect();
        for k in SchedKind::ALL {
            let mut s = SchedState::with_dests(k, &big);
            for _ in 0..7 {
                s.schedule(&big);
            }
            // The list shrank without telling the state.
            let small = [w(1), w(2)];
            for _ in 0..10 {
                let got = s.schedule(&small);
                assert!(matches!(got, Some(0) | Some(1)), "{}", k.name());
            }
            // Empty, then told.
            assert_eq!(s.schedule(&[]), None);
            s.dests_changed(&[]);
            assert_eq!(s.schedule(&[]), None);
            // Grows again.
            s.dests_changed(&big);
            for _ in 0..50 {
                assert!(s.schedule(&big).is_some_and(|i| i < big.len()));
            }
            s.dest_removed(100);
            s.dest_inserted(usize::MAX);
            s.dests_changed(&small);
            assert!(s.schedule(&small).is_some());
        }
    }

    #[test]
    fn rr_removal_continues_with_next() {
        let mut dests = vec![w(1), w(1), w(1), w(1)];
        let mut s = SchedState::with_dests(SchedKind::Rr, &dests);
        assert_eq!(s.schedule(&dests), Some(0));
        assert_eq!(s.schedule(&dests), Some(1));
        // Remove the last chosen (index 1): next is the old index 2, now 1.
        dests.remove(1);
        s.dest_removed(1);
        s.dests_changed(&dests);
        assert_eq!(s.schedule(&dests), Some(1));
        // Insert before the cursor: the cursor follows its destination.
        dests.insert(0, w(1));
        s.dest_inserted(0);
        s.dests_changed(&dests);
        assert_eq!(s.schedule(&dests), Some(3));
        assert_eq!(s.schedule(&dests), Some(0));
        // Remove index 0 while the cursor is on it.
        dests.remove(0);
        s.dest_removed(0);
        s.dests_changed(&dests);
        assert_eq!(s.schedule(&dests), Some(0));
    }

    #[test]
    fn gcd_works() {
        assert_eq!(gcd(12, 18), 6);
        assert_eq!(gcd(7, 0), 7);
        assert_eq!(gcd(1, 65535), 1);
    }
}
