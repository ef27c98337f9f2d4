// SPDX-License-Identifier: GPL-2.0

//! Upper and lower connection thresholds (`-x`, `-y`) of a real server.
//!
//! C counterpart: `__ip_vs_dest_update_overload` in net/netfilter/ipvs/ip_vs_ctl.c.

/// The lower connection threshold in effect for `-x u -y l`: `l`, or when
/// it is 0, three quarters of `u` (`u - u / 4`, as IPVS computes
/// `l_threshold_val`).
pub fn lower_threshold(u_thresh: u32, l_thresh: u32) -> u32 {
    if l_thresh != 0 {
        l_thresh
    } else {
        u_thresh.saturating_sub(u_thresh / 4)
    }
}

/// The overload state of a real server after its connection count
/// (active + inactive, templates excluded) became `conns`: IPVS's
/// hysteresis (`__ip_vs_dest_update_overload`). With no upper threshold
/// (`u_thresh` 0) never overloaded; at or above the upper threshold
/// overloaded; below the lower one ([`lower_threshold`]) not; in between
/// unchanged, so a server that hit `-x` gets new connections again only
/// once it has dropped below `-y`.
pub fn overload_next(overloaded: bool, conns: u32, u_thresh: u32, l_thresh: u32) -> bool {
    if u_thresh == 0 {
        return false;
    }
    if conns >= u_thresh {
        return true;
    }
    if conns < lower_threshold(u_thresh, l_thresh) {
        return false;
    }
    overloaded
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::vec;
    use std::vec::Vec;

    #[test]
    fn threshold_hysteresis() {
        // No upper threshold: never overloaded.
        assert!(!overload_next(true, 1000, 0, 5));
        // -x 4 -y 2: set at 4, kept at 3 and 2, cleared at 1.
        let mut o = false;
        let mut seen = Vec::new();
        for conns in [0, 1, 2, 3, 4, 5, 4, 3, 2, 1, 2, 3, 4] {
            o = overload_next(o, conns, 4, 2);
            seen.push(o);
        }
        assert_eq!(
            seen,
            vec![
                false, false, false, false, true, true, true, true, true, false, false, false, true
            ]
        );
        // -x 8 alone: the lower threshold is 6 (75 %).
        assert_eq!(lower_threshold(8, 0), 6);
        assert_eq!(lower_threshold(8, 3), 3);
        assert_eq!(lower_threshold(1, 0), 1);
        assert_eq!(lower_threshold(u32::MAX, 0), u32::MAX - u32::MAX / 4);
        assert!(overload_next(true, 6, 8, 0));
        assert!(!overload_next(true, 5, 8, 0));
        assert!(!overload_next(false, 7, 8, 0));
        // -x 1: overloaded with one connection, free at zero.
        assert!(overload_next(false, 1, 1, 0));
        assert!(!overload_next(true, 0, 1, 0));
        // A lower threshold above the upper one: set at u, cleared below u.
        assert!(overload_next(false, 3, 3, 10));
        assert!(!overload_next(true, 2, 3, 10));
    }
}
