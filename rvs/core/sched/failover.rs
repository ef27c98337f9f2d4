// SPDX-License-Identifier: GPL-2.0

//! Weighted failover (`fo`) and overflow (`ovf`).
//!
//! C counterparts: net/netfilter/ipvs/ip_vs_fo.c, ip_vs_ovf.c.

use super::Dests;

/// Weighted failover (`ip_vs_fo_schedule`): the available destination with
/// the highest weight; ties go to the first in list order.
pub(super) fn fo(dests: &(impl Dests + ?Sized)) -> Option<usize> {
    let mut best: Option<(usize, u32)> = None;
    for (i, d) in dests.views().enumerate() {
        if !d.available() {
            continue;
        }
        match best {
            Some((_, bw)) if d.weight <= bw => {}
            _ => best = Some((i, d.weight)),
        }
    }
    best.map(|(i, _)| i)
}

/// Overflow (`ip_vs_ovf_schedule`): among available destinations whose
/// active connections do not exceed their weight (`active <= weight`, as
/// IPVS tests `active > weight` to skip), the one with the highest weight;
/// ties go to the first in list order. The weight acts as a connection
/// budget: once the top server holds more than `weight` active
/// connections, new ones overflow to the next.
pub(super) fn ovf(dests: &(impl Dests + ?Sized)) -> Option<usize> {
    let mut best: Option<(usize, u32)> = None;
    for (i, d) in dests.views().enumerate() {
        if !d.available() || d.active_conns > d.weight {
            continue;
        }
        match best {
            Some((_, bw)) if d.weight <= bw => {}
            _ => best = Some((i, d.weight)),
        }
    }
    best.map(|(i, _)| i)
}

#[cfg(test)]
mod tests {
    use super::super::test_util::{conns, w};
    use super::super::{SchedKind, SchedState};

    #[test]
    fn fo_highest_weight_available() {
        let mut dests = [w(2), w(5), w(5), w(1)];
        let mut s = SchedState::new(SchedKind::Fo);
        assert_eq!(s.schedule(&dests), Some(1));
        dests[1].overloaded = true;
        assert_eq!(s.schedule(&dests), Some(2));
        dests[3].weight = 9;
        s.dests_changed(&dests);
        assert_eq!(s.schedule(&dests), Some(3));
        dests[3].weight = 0;
        assert_eq!(s.schedule(&dests), Some(2));
        // Connections do not matter.
        dests[2].active_conns = 1_000_000;
        assert_eq!(s.schedule(&dests), Some(2));
        assert_eq!(s.schedule(&[w(0), w(0)]), None);
    }

    #[test]
    fn ovf_overflows_by_active_connections() {
        let mut dests = [conns(3, 0, 0), conns(5, 0, 0), conns(2, 0, 0)];
        let mut s = SchedState::new(SchedKind::Ovf);
        // Fill the top server: IPVS skips it only once active > weight.
        for active in 0..=5 {
            dests[1].active_conns = active;
            assert_eq!(s.schedule(&dests), Some(1));
        }
        dests[1].active_conns = 6;
        assert_eq!(s.schedule(&dests), Some(0));
        // Inactive connections do not count.
        dests[0].inactive_conns = 100;
        assert_eq!(s.schedule(&dests), Some(0));
        dests[0].active_conns = 4;
        assert_eq!(s.schedule(&dests), Some(2));
        dests[2].active_conns = 3;
        assert_eq!(s.schedule(&dests), None);
        // A connection closes: back to the top server.
        dests[1].active_conns = 5;
        assert_eq!(s.schedule(&dests), Some(1));
        dests[1].overloaded = true;
        assert_eq!(s.schedule(&dests), None);
    }
}
