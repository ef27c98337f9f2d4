// SPDX-License-Identifier: GPL-2.0

//! Property tests of tunnel.rs (TUN encapsulation settings and the UDP +
//! GUE header rvs writes).
//!
//! Invariants checked:
//! - every tunnel setting the netlink attributes can express decodes
//!   (`from_uapi`), encodes back (`to_uapi`) to attributes that decode to
//!   the same tunnel, and survives `pack`/`unpack`; any (type, port, flags)
//!   is either refused or gives a tunnel obeying IPVS's rules (GUE has a
//!   port, checksums only for GUE/GRE, remote checksum offload only for
//!   GUE and implying the UDP checksum);
//! - `header_len` is the documented overhead: 0 (IP-in-IP), 12 (UDP +
//!   GUE), 20 (GUE with the remote checksum option, for a CHECKSUM_PARTIAL
//!   packet only), 4 (GRE), 8 (GRE with checksum);
//! - `gue_header`, for every inner length and option, returns exactly
//!   `header_len`, or `None` exactly when the UDP length would overflow or
//!   the checksum field lies outside the inner packet; the bytes read back
//!   as the generated UDP ports, UDP length = header + inner, checksum 0
//!   (left to the kernel), GUE version 0, the hlen field counting the
//!   option words, the inner protocol, and the option's checksum start
//!   and field offset; the rest of `out` is zero.
//!   (The same bytes are parsed back by tunnel_icmp in prop_icmp.rs.)

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects,
    unreachable_pub
)]

mod common;

use proptest::prelude::*;
use rvs_core::tunnel::{self, Tunnel, GUE_HLEN, GUE_HLEN_MAX};

fn tunnel_strategy() -> impl Strategy<Value = Tunnel> {
    prop_oneof![
        Just(Tunnel::Ipip),
        (1u16.., any::<bool>(), any::<bool>()).prop_map(|(port, csum, remcsum)| Tunnel::Gue {
            port,
            // Remote checksum offload implies the UDP checksum.
            csum: csum || remcsum,
            remcsum,
        }),
        any::<bool>().prop_map(|csum| Tunnel::Gre { csum }),
    ]
}

proptest! {
    #![proptest_config(common::config())]

    #[test]
    fn uapi_and_pack_round_trip(t in tunnel_strategy()) {
        let (k, p, f) = t.to_uapi();
        prop_assert_eq!(Tunnel::from_uapi(k, p, f), Ok(t));
        prop_assert_eq!(Tunnel::unpack(t.pack()), t);
        prop_assert_eq!(t.remcsum(), matches!(t, Tunnel::Gue { remcsum: true, .. }));
    }

    #[test]
    fn any_attributes_are_refused_or_a_valid_tunnel(kind in 0u8..6, port in any::<u16>(), flags in any::<u16>()) {
        let Ok(t) = Tunnel::from_uapi(kind, port, flags) else { return Ok(()) };
        prop_assert_eq!(flags & !(tunnel::FLAG_CSUM | tunnel::FLAG_REMCSUM), 0);
        let csum = flags != 0;
        match t {
            Tunnel::Ipip => prop_assert!(kind == tunnel::TYPE_IPIP && flags == 0),
            Tunnel::Gue { port: p, csum: c, remcsum: r } => {
                prop_assert_eq!(kind, tunnel::TYPE_GUE);
                prop_assert!(p == port && p != 0);
                prop_assert_eq!(c, csum);
                prop_assert_eq!(r, flags & tunnel::FLAG_REMCSUM != 0);
            }
            Tunnel::Gre { csum: c } => {
                prop_assert_eq!(kind, tunnel::TYPE_GRE);
                prop_assert_eq!(flags & tunnel::FLAG_REMCSUM, 0);
                prop_assert_eq!(c, csum);
            }
        }
        let (k, p, f) = t.to_uapi();
        prop_assert_eq!(Tunnel::from_uapi(k, p, f), Ok(t));
    }

    #[test]
    fn header_len_is_the_documented_overhead(t in tunnel_strategy(), partial in any::<bool>()) {
        let want = match t {
            Tunnel::Ipip => 0,
            Tunnel::Gue { remcsum: true, .. } if partial => 20,
            Tunnel::Gue { .. } => 12,
            Tunnel::Gre { csum: false } => 4,
            Tunnel::Gre { csum: true } => 8,
        };
        prop_assert_eq!(t.header_len(partial), want);
        let proto = match t {
            Tunnel::Ipip => 4,
            Tunnel::Gue { .. } => 17,
            Tunnel::Gre { .. } => 47,
        };
        prop_assert_eq!(t.outer_protocol(), proto);
    }

    #[test]
    fn gue_header_bytes_round_trip(
        t in tunnel_strategy(), inner_len in prop_oneof![0usize..2000, 65500usize..65600],
        v6 in any::<bool>(), sport in any::<u16>(),
        opt in proptest::option::of((0u16..200, 0u16..40)),
        junk in any::<u8>(),
    ) {
        let mut out = [junk; GUE_HLEN_MAX];
        let r = t.gue_header(inner_len, v6, sport, opt, &mut out);
        let Tunnel::Gue { port, remcsum, .. } = t else {
            prop_assert_eq!(r, None);
            prop_assert_eq!(out, [junk; GUE_HLEN_MAX]);
            return Ok(());
        };
        let opt = if remcsum { opt } else { None };
        let hlen = t.header_len(opt.is_some());
        let fits = inner_len + hlen <= 0xffff;
        let field_ok = opt.is_none_or(|(s, o)| usize::from(s) + usize::from(o) + 2 <= inner_len);
        if !(fits && field_ok) {
            prop_assert_eq!(r, None);
            return Ok(());
        }
        prop_assert_eq!(r, Some(hlen));
        let be = |a: usize| u16::from_be_bytes([out[a], out[a + 1]]);
        prop_assert_eq!(be(0), sport);
        prop_assert_eq!(be(2), port);
        prop_assert_eq!(usize::from(be(4)), inner_len + hlen);
        prop_assert_eq!(be(6), 0);
        // GUE: version 0, control 0, hlen in 4-byte words of options.
        prop_assert_eq!(out[8] >> 6, 0);
        prop_assert_eq!(usize::from(out[8] & 0x1f) * 4, hlen - GUE_HLEN);
        prop_assert_eq!(out[9], if v6 { 41 } else { 4 });
        match opt {
            Some((s, o)) => {
                prop_assert_eq!(be(10), 1); // private flags follow
                prop_assert_eq!(&out[12..16], &(1u32 << 31).to_be_bytes()[..]);
                prop_assert_eq!(be(16), s);
                prop_assert_eq!(be(18), s + o);
            }
            None => {
                prop_assert_eq!(be(10), 0);
                // Nothing but zeroes past the header.
                prop_assert!(out[GUE_HLEN..].iter().all(|&b| b == 0));
            }
        }
    }
}
