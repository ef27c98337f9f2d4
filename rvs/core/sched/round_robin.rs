// SPDX-License-Identifier: GPL-2.0

//! Round robin (`rr`) and weighted round robin (`wrr`).
//!
//! C counterparts: net/netfilter/ipvs/ip_vs_rr.c, ip_vs_wrr.c. Both keep
//! their cursor in [`SchedState`], so they also own the list-change hooks
//! that keep it valid.

use super::{Dests, SchedKind, SchedState};

fn gcd(mut a: u32, mut b: u32) -> u32 {
    // checked_rem is None exactly when b == 0, which ends the loop.
    while let Some(r) = a.checked_rem(b) {
        a = b;
        b = r;
    }
    a
}

impl SchedState {
    /// Must be called after destinations were added or removed or a weight
    /// changed. wrr recomputes gcd and maximum weight and restarts from the
    /// list head like IPVS's `ip_vs_wrr_dest_changed`; rr only drops a
    /// cursor that fell off the end of the list.
    pub fn dests_changed(&mut self, dests: &(impl Dests + ?Sized)) {
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
        for d in dests.views() {
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
    pub(super) fn rr(&mut self, dests: &(impl Dests + ?Sized)) -> Option<usize> {
        let n = dests.len();
        if n == 0 {
            return None;
        }
        let start = match self.cursor {
            Some(c) if c < n => c.saturating_add(1),
            _ => 0,
        };
        // From just after the cursor to the end, then from the start up to
        // and including the cursor; only these servers' views are read.
        let i = (start..n)
            .chain(0..start)
            .find(|&i| dests.view(i).is_some_and(|d| d.available()))?;
        self.cursor = Some(i);
        Some(i)
    }

    /// Interleaved weighted round robin, IPVS's `ip_vs_wrr_schedule`.
    ///
    /// The current weight `cw` starts at the maximum weight and decreases by
    /// the gcd each time the end of the list is reached; a destination is
    /// chosen when its weight is >= `cw`. With weights 3:2:1 (A, B, C) one
    /// cycle is A A B A B C.
    pub(super) fn wrr(&mut self, dests: &(impl Dests + ?Sized)) -> Option<usize> {
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
                let d = match dests.view(i) {
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

#[cfg(test)]
mod tests {
    use super::super::test_util::{picks, w};
    use super::*;
    use std::vec;
    use std::vec::Vec;

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
    fn gcd_works() {
        assert_eq!(gcd(12, 18), 6);
        assert_eq!(gcd(7, 0), 7);
        assert_eq!(gcd(1, 65535), 1);
    }
}
