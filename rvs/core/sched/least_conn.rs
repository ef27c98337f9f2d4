// SPDX-License-Identifier: GPL-2.0

//! Least-connection schedulers: lc, wlc, sed and nq.
//!
//! C counterparts: net/netfilter/ipvs/ip_vs_lc.c, ip_vs_wlc.c, ip_vs_sed.c,
//! ip_vs_nq.c. wlc and sed differ only in the overhead they weigh, so both
//! go through [`weighted_least`].

use super::{DestView, Dests};

/// Least connection: the available destination with the lowest
/// [`DestView::conn_overhead`]; ties go to the first in list order.
pub(super) fn lc(dests: &(impl Dests + ?Sized)) -> Option<usize> {
    let mut least: Option<(usize, u64)> = None;
    for (i, d) in dests.views().enumerate() {
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
pub(super) fn weighted_least(
    dests: &(impl Dests + ?Sized),
    overhead: fn(&DestView) -> u64,
) -> Option<usize> {
    let mut least: Option<(usize, u64, u64)> = None;
    for (i, d) in dests.views().enumerate() {
        if !d.available() {
            continue;
        }
        let oh = overhead(&d);
        let w = u64::from(d.weight);
        match least {
            Some((_, loh, lw)) if loh.saturating_mul(w) <= oh.saturating_mul(lw) => {}
            _ => least = Some((i, oh, w)),
        }
    }
    least.map(|(i, _, _)| i)
}

/// Weighted least connection, what wlc and lblc/lblcr's fresh choices
/// use: the available destination with the lowest
/// [`DestView::conn_overhead`] per weight, first on ties.
pub fn weighted_least_conn(dests: &(impl Dests + ?Sized)) -> Option<usize> {
    weighted_least(dests, DestView::conn_overhead)
}

/// Never queue: an idle available destination (no active connections) if
/// there is one, the first such in list order; otherwise like sed.
pub(super) fn nq(dests: &(impl Dests + ?Sized)) -> Option<usize> {
    let idle = dests
        .views()
        .position(|d| d.available() && d.active_conns == 0);
    idle.or_else(|| weighted_least(dests, DestView::sed_overhead))
}

#[cfg(test)]
mod tests {
    use super::super::test_util::conns;
    use super::super::{SchedKind, SchedState};

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
}
