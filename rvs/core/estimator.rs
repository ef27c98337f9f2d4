// SPDX-License-Identifier: GPL-2.0

//! Rate estimation for the statistics (`ipvsadm --rate`).
//!
//! C counterpart: net/netfilter/ipvs/ip_vs_est.c. Rates are kept in fixed
//! point (scaled by 2^[`RATE_SHIFT`]) and smoothed with IPVS's weight:
//! each new sample moves the estimate a quarter of the way.

/// Fixed-point scale of rate estimates.
pub const RATE_SHIFT: u32 = 10;

/// The next scaled estimate, from the previous one and a counter that grew
/// by `delta` over `elapsed` ticks of `hz` per second. `elapsed == 0`
/// keeps the old estimate.
pub fn next_rate(old: u64, delta: u64, elapsed: u64, hz: u64) -> u64 {
    let Some(sample) = delta
        .saturating_mul(1 << RATE_SHIFT)
        .saturating_mul(hz)
        .checked_div(elapsed)
    else {
        return old;
    };
    if sample >= old {
        old.saturating_add(sample.saturating_sub(old) / 4)
    } else {
        old.saturating_sub(old.saturating_sub(sample) / 4)
    }
}

/// A scaled estimate as a per-second value, rounded to nearest.
pub fn per_second(scaled: u64) -> u64 {
    scaled.saturating_add(1 << (RATE_SHIFT - 1)) >> RATE_SHIFT
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn converges_to_a_steady_rate() {
        // 500 events per second, sampled every second (hz = 1000).
        let mut r = 0;
        for _ in 0..60 {
            r = next_rate(r, 500, 1000, 1000);
        }
        assert_eq!(per_second(r), 500);
    }

    #[test]
    fn sample_interval_is_normalized() {
        // 1000 events over 2 s is 500/s.
        let mut r = 0;
        for _ in 0..60 {
            r = next_rate(r, 1000, 2000, 1000);
        }
        assert_eq!(per_second(r), 500);
    }

    #[test]
    fn decays_when_traffic_stops_and_never_overflows() {
        let mut r = next_rate(0, u64::MAX / 2, 1, 1000);
        assert!(r > 0);
        for _ in 0..400 {
            r = next_rate(r, 0, 1000, 1000);
        }
        assert_eq!(per_second(r), 0);
        assert_eq!(next_rate(7, 100, 0, 1000), 7);
    }

    #[test]
    fn moves_a_quarter_of_the_way() {
        let r = next_rate(0, 400, 1000, 1000);
        assert_eq!(per_second(r), 100);
    }
}
