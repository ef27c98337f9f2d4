// SPDX-License-Identifier: GPL-2.0

//! Hashing schedulers: source hashing (`sh`) and destination hashing (`dh`).
//!
//! C counterparts: net/netfilter/ipvs/ip_vs_sh.c, ip_vs_dh.c. The address
//! fold here is also what mh hashes, see [`dest_hash_key`].

use super::{DestView, Dests, Flow, SchedFlags};

/// Folds a 16-byte address to 32 bits like IPVS's sh/dh/mh: the XOR of its
/// four big-endian words. An IPv4 address occupies the first 4 bytes with
/// the rest zero (the `union nf_inet_addr` layout), so it folds to itself.
pub fn addr_fold(addr: &[u8; 16]) -> u32 {
    let [a0, a1, a2, a3, b0, b1, b2, b3, c0, c1, c2, c3, d0, d1, d2, d3] = *addr;
    u32::from_be_bytes([a0, a1, a2, a3])
        ^ u32::from_be_bytes([b0, b1, b2, b3])
        ^ u32::from_be_bytes([c0, c1, c2, c3])
        ^ u32::from_be_bytes([d0, d1, d2, d3])
}

/// The value for [`DestView::hash_key`]: `port + fold(addr)` (wrapping),
/// what IPVS's mh hashes for a destination. `port` in host order.
pub fn dest_hash_key(addr: &[u8; 16], port: u16) -> u32 {
    u32::from(port).wrapping_add(addr_fold(addr))
}

/// IPVS's `hash_32(v, 8)`: the top 8 bits of `v * GOLDEN_RATIO_32`, a
/// bucket of the virtual 256-entry sh/dh table.
fn hash_bucket(v: u32) -> u32 {
    v.wrapping_mul(0x61c8_8647) >> (u32::BITS - SH_TAB_BITS)
}

/// sh/dh table size in bits (IPVS's default `CONFIG_IP_VS_{SH,DH}_TAB_BITS`).
const SH_TAB_BITS: u32 = 8;
/// sh/dh table size.
const SH_TAB_SIZE: u64 = 1 << SH_TAB_BITS;

/// Buckets one destination fills in IPVS's sh table: its weight, at least 1
/// (a weight-0 destination keeps one bucket, where it is unavailable).
fn sh_run(d: &DestView) -> u64 {
    u64::from(d.weight.max(1))
}

/// Where bucket `b` of the sh table points. IPVS fills its 256 buckets by
/// walking the list cyclically, giving each destination [`sh_run`]
/// consecutive buckets, so bucket `b` holds position `b mod total` of the
/// concatenated runs. Returns the destination and the offset in its run.
fn sh_locate(dests: &(impl Dests + ?Sized), b: u64) -> Option<(usize, u64)> {
    let total = dests
        .views()
        .fold(0u64, |t, d| t.saturating_add(sh_run(&d)));
    let mut pos = b.checked_rem(total)?;
    for (i, d) in dests.views().enumerate() {
        let run = sh_run(&d);
        if pos < run {
            return Some((i, pos));
        }
        pos = pos.saturating_sub(run);
    }
    None
}

/// Source hashing (`ip_vs_sh_schedule`).
///
/// The client address (plus its port with `flags.port`) picks one of 256
/// buckets, filled from the destinations in proportion to their weights
/// (see [`sh_locate`]; as in IPVS, weights summing past 256 leave the
/// destinations at the end of the list without buckets). The bucket's
/// destination must be available; with `flags.fallback` the buckets after
/// it are tried in order, all 256 at most.
///
/// (IPVS's fallback loop starts its walk at bucket `2 * hash` because it
/// adds the bucket to the hash twice; rvs walks from the hashed bucket
/// itself, which is what the option is documented to do.)
pub(super) fn sh(dests: &(impl Dests + ?Sized), flow: &Flow, flags: SchedFlags) -> Option<usize> {
    let port = if flags.port { flow.cport } else { 0 };
    let b = u64::from(hash_bucket(
        u32::from(port).wrapping_add(addr_fold(&flow.caddr)),
    ));
    let (mut i, mut off) = sh_locate(dests, b)?;
    if dests.view(i)?.available() {
        return Some(i);
    }
    if !flags.fallback {
        return None;
    }
    // Walk the buckets b, b+1, ... run by run: the rest of this
    // destination's run, then the next destination's (positions continue
    // cyclically through the list), except that after bucket 255 comes
    // bucket 0, which is position 0.
    let n = dests.len();
    let mut k = b;
    let mut visited = 0u64;
    while visited < SH_TAB_SIZE {
        let d = dests.view(i)?;
        if d.available() {
            return Some(i);
        }
        let rem = sh_run(&d).saturating_sub(off).max(1);
        let step = rem.min(SH_TAB_SIZE.saturating_sub(k)).max(1);
        visited = visited.saturating_add(step);
        k = k.saturating_add(step);
        off = 0;
        if k >= SH_TAB_SIZE {
            k = 0;
            i = 0;
        } else {
            i = i.wrapping_add(1).checked_rem(n).unwrap_or(0);
        }
    }
    None
}

/// Destination hashing (`ip_vs_dh_schedule`): the packet's destination
/// address picks one of 256 buckets, filled with the destinations in list
/// order, one bucket each, cyclically (weights only matter as "0 is
/// unavailable"). No fallback: an unavailable destination means none.
pub(super) fn dh(dests: &(impl Dests + ?Sized), flow: &Flow) -> Option<usize> {
    let b = usize::try_from(hash_bucket(addr_fold(&flow.vaddr))).ok()?;
    let i = b.checked_rem(dests.len())?;
    dests.view(i).filter(|d| d.available()).map(|_| i)
}

#[cfg(test)]
mod tests {
    use super::super::test_util::{client, server, state, v4};
    use super::super::{SchedKind, SchedState, SVC_F_SCHED2};
    use super::*;
    use std::vec::Vec;

    #[test]
    fn flags_and_hash_helpers() {
        assert_eq!(SchedFlags::from_svc_flags(0), SchedFlags::default());
        let both = SchedFlags::from_svc_flags(0x0008 | 0x0010 | 0x0020 | 0x1);
        assert_eq!(
            both,
            SchedFlags {
                fallback: true,
                port: true
            }
        );
        assert_eq!(both.to_svc_flags(), 0x18);
        assert_eq!(
            SchedFlags::from_svc_flags(SVC_F_SCHED2).to_svc_flags(),
            SVC_F_SCHED2
        );
        let mut s = SchedState::new(SchedKind::Sh);
        assert_eq!(s.flags(), SchedFlags::default());
        s.set_flags(both);
        assert_eq!(s.flags(), both);
        // IPv4 folds to itself; IPv6 to the XOR of its words.
        assert_eq!(addr_fold(&v4(10, 1, 2, 3)), 0x0a01_0203);
        let mut v6 = [0u8; 16];
        v6[3] = 1;
        v6[15] = 3;
        assert_eq!(addr_fold(&v6), 2);
        assert_eq!(dest_hash_key(&v4(0, 0, 0, 1), 80), 81);
        // The kernel's hash_32(v, 8).
        assert_eq!(hash_bucket(0), 0);
        assert_eq!(hash_bucket(1), 0x61);
        assert_eq!(hash_bucket(2), 0xc3);
        for k in SchedKind::ALL {
            assert_eq!(k.needs_mh_table(), k == SchedKind::Mh);
        }
    }

    #[test]
    fn sh_sticky_weighted_and_port() {
        let dests = [server(1, 1), server(2, 3)];
        let mut s = state(SchedKind::Sh, false, false);
        let mut count = [0u32; 2];
        for n in 0..4000 {
            let f = client(n, 1000);
            let i = s.schedule_flow(&dests, &f).unwrap();
            // Sticky across calls and across client ports without sh-port.
            for port in [1, 2, 40000] {
                assert_eq!(s.schedule_flow(&dests, &client(n, port)), Some(i));
            }
            count[i] += 1;
        }
        // Buckets 1:3 (64 and 192 of 256); clients follow within a few %.
        assert!((900..1100).contains(&count[0]), "{count:?}");
        // With sh-port one client's ports spread over both.
        s.set_flags(SchedFlags {
            fallback: false,
            port: true,
        });
        let mut seen = [0u32; 2];
        for port in 1000..1400 {
            let f = client(7, port);
            let i = s.schedule_flow(&dests, &f).unwrap();
            assert_eq!(s.schedule_flow(&dests, &f), Some(i));
            seen[i] += 1;
        }
        assert!(seen[0] > 50 && seen[1] > 200, "{seen:?}");
    }

    #[test]
    fn sh_fallback() {
        let mut dests = [server(1, 1), server(2, 1), server(3, 1), server(4, 1)];
        let mut plain = state(SchedKind::Sh, false, false);
        let mut fb = state(SchedKind::Sh, true, false);
        let before: Vec<usize> = (0..500)
            .map(|n| plain.schedule_flow(&dests, &client(n, 0)).unwrap())
            .collect();
        assert!((0..4).all(|i| before.contains(&i)));
        for off in [false, true] {
            // Dest 1 quiesced (weight 0 keeps its one bucket per cycle) or
            // overloaded.
            if off {
                dests[1].weight = 0;
            } else {
                dests[1].overloaded = true;
            }
            plain.dests_changed(&dests);
            fb.dests_changed(&dests);
            for (n, &was) in before.iter().enumerate() {
                let f = client(n as u32, 0);
                let p = plain.schedule_flow(&dests, &f);
                let q = fb.schedule_flow(&dests, &f);
                if was == 1 {
                    assert_eq!(p, None);
                    // Moves to the next bucket's server: dest 2.
                    assert_eq!(q, Some(2));
                } else {
                    assert_eq!(p, Some(was));
                    assert_eq!(q, Some(was));
                }
            }
            dests[1] = server(2, 1);
        }
        // Nothing available: None even with fallback.
        let none = [server(1, 0), server(2, 0)];
        assert_eq!(fb.schedule_flow(&none, &client(1, 0)), None);
        // Fallback wraps past the end of the list and of the table.
        let mut d = [server(1, 1), server(2, 1), server(3, 1)];
        d[1].overloaded = true;
        d[2].overloaded = true;
        for n in 0..300 {
            assert_eq!(fb.schedule_flow(&d, &client(n, 0)), Some(0));
        }
        // Weights summing past 256: like IPVS, the tail gets no bucket.
        let heavy = [server(1, 200), server(2, 100), server(3, 100)];
        let mut count = [0u32; 3];
        for n in 0..3000 {
            count[plain.schedule_flow(&heavy, &client(n, 0)).unwrap()] += 1;
        }
        assert_eq!(count[2], 0, "{count:?}");
        assert!(count[1] > 300, "{count:?}");
    }

    #[test]
    fn dh_by_destination_address() {
        let mut dests = [server(1, 1), server(2, 5), server(3, 1)];
        let mut s = state(SchedKind::Dh, true, true);
        let mut count = [0u32; 3];
        for v in 0..900u32 {
            let [_, b, c, d] = v.to_be_bytes();
            let vaddr = v4(198, b, c, d);
            let mut f = client(0, 1);
            f.vaddr = vaddr;
            let i = s.schedule_flow(&dests, &f).unwrap();
            // Any client, any port: same server for the same destination.
            for n in [1, 99, 12345] {
                f.caddr = client(n, 0).caddr;
                f.cport = n as u16;
                assert_eq!(s.schedule_flow(&dests, &f), Some(i));
            }
            count[i] += 1;
        }
        // One bucket each regardless of weight.
        assert!(count.iter().all(|&c| (200..400).contains(&c)), "{count:?}");
        // Unavailable: no fallback.
        let f = client(0, 0);
        let i = s.schedule_flow(&dests, &f).unwrap();
        dests[i].overloaded = true;
        assert_eq!(s.schedule_flow(&dests, &f), None);
    }
}
