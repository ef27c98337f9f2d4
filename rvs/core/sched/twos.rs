// SPDX-License-Identifier: GPL-2.0

//! Power of two choices (`twos`).
//!
//! C counterpart: net/netfilter/ipvs/ip_vs_twos.c.

use super::Dests;

/// splitmix64's output function: a bijective 64-bit mixer.
fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Power of two choices (`ip_vs_twos_schedule`).
///
/// Two destinations are drawn at random, each with probability
/// proportional to its weight (IPVS draws `r` in `0..=total` and walks the
/// list subtracting weights until `r <= 0`, so the first available
/// destination gets one extra ticket), and the one with the lower
/// [`DestView::conn_overhead`](super::DestView::conn_overhead) per weight
/// wins (the first on a tie). Both draws come from `random`, expanded to
/// two independent-looking 64-bit values with splitmix64.
pub(super) fn twos(dests: &(impl Dests + ?Sized), random: u32) -> Option<usize> {
    let total = dests
        .views()
        .filter(|d| d.available())
        .fold(0u64, |t, d| t.saturating_add(u64::from(d.weight)));
    if total == 0 {
        return None;
    }
    let tickets = total.saturating_add(1);
    let seed = u64::from(random).wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut r1 = mix64(seed).checked_rem(tickets)?;
    let mut r2 = mix64(seed.wrapping_add(0x9e37_79b9_7f4a_7c15)).checked_rem(tickets)?;
    let mut c1: Option<usize> = None;
    let mut c2: Option<usize> = None;
    for (i, d) in dests.views().enumerate() {
        if !d.available() {
            continue;
        }
        let w = u64::from(d.weight);
        if c1.is_none() {
            if r1 <= w {
                c1 = Some(i);
            } else {
                r1 = r1.saturating_sub(w);
            }
        }
        if c2.is_none() {
            if r2 <= w {
                c2 = Some(i);
            } else {
                r2 = r2.saturating_sub(w);
            }
        }
        if c1.is_some() && c2.is_some() {
            break;
        }
    }
    // r <= total, so both draws land; be defensive anyway.
    let c1 = c1.or(c2)?;
    let c2 = c2.unwrap_or(c1);
    let (d1, d2) = (dests.view(c1)?, dests.view(c2)?);
    let lhs = u64::from(d2.weight).saturating_mul(d1.conn_overhead());
    let rhs = u64::from(d1.weight).saturating_mul(d2.conn_overhead());
    Some(if lhs > rhs { c2 } else { c1 })
}

#[cfg(test)]
mod tests {
    use super::super::test_util::{conns, w};
    use super::super::{Flow, SchedKind, SchedState};

    #[test]
    fn twos_weighted_and_load_aware() {
        let dests = [w(1), w(2), w(3), w(4)];
        let mut s = SchedState::new(SchedKind::Twos);
        let mut count = [0u32; 4];
        let rounds = 100_000u32;
        for r in 0..rounds {
            let f = Flow {
                random: r.wrapping_mul(2_654_435_761),
                ..Flow::default()
            };
            count[s.schedule_flow(&dests, &f).unwrap()] += 1;
        }
        // IPVS draws r in 0..=total, which gives the first server one extra
        // ticket: 2:2:3:4 out of 11 here.
        for (i, c) in count.iter().enumerate() {
            let share = f64::from(*c) / f64::from(rounds);
            let want = [2.0, 2.0, 3.0, 4.0][i] / 11.0;
            assert!((share - want).abs() < 0.01, "{count:?}");
        }
        // With realistic weights the extra ticket vanishes: 100:200:300:400.
        let heavy = [w(100), w(200), w(300), w(400)];
        let mut count = [0u32; 4];
        for r in 0..rounds {
            let f = Flow {
                random: r.wrapping_mul(2_654_435_761),
                ..Flow::default()
            };
            count[s.schedule_flow(&heavy, &f).unwrap()] += 1;
        }
        for (i, c) in count.iter().enumerate() {
            let share = f64::from(*c) / f64::from(rounds);
            let want = (i + 1) as f64 / 10.0;
            assert!((share - want).abs() < 0.01, "{count:?}");
        }
        // Same random value, same answer.
        let f = Flow {
            random: 77,
            ..Flow::default()
        };
        let a = s.schedule_flow(&dests, &f);
        assert_eq!(s.schedule_flow(&dests, &f), a);
        // Through schedule() (internal sequence) it spreads too.
        let mut count = [0u32; 4];
        for _ in 0..10_000 {
            count[s.schedule(&dests).unwrap()] += 1;
        }
        assert!(count.iter().all(|&c| c > 500), "{count:?}");
        // Load: the idle server wins whenever drawn at least once; with
        // tickets 2:1 (the extra ticket again) that is 1 - (2/3)^2 = 5/9.
        let loaded = [conns(1, 50, 0), conns(1, 0, 0)];
        let mut idle = 0u32;
        for r in 0..10_000u32 {
            let f = Flow {
                random: r,
                ..Flow::default()
            };
            if s.schedule_flow(&loaded, &f) == Some(1) {
                idle += 1;
            }
        }
        assert!((5200..5900).contains(&idle), "{idle}");
        // Unavailable servers are never drawn.
        let mut d = [w(5), w(5), w(5)];
        d[0].overloaded = true;
        d[2].weight = 0;
        for r in 0..1000 {
            let f = Flow {
                random: r,
                ..Flow::default()
            };
            assert_eq!(s.schedule_flow(&d, &f), Some(1));
        }
    }
}
