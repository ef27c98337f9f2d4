// SPDX-License-Identifier: GPL-2.0

//! Property tests of packet.rs (IPv4/IPv6/TCP/UDP parsing, checksums).
//!
//! Invariants checked, for generated packets:
//! - a well-formed IPv4 packet (every legal option length, 0..=40 bytes)
//!   parses to exactly the generated fields, its L4 header at IHL * 4, and
//!   TCP (every data offset) / UDP ports and header length are the
//!   generated ones;
//! - a well-formed IPv6 packet with a legal extension-header chain parses
//!   to the generated addresses, hop limit and upper-layer protocol, with
//!   the upper-layer header right after the chain;
//! - cutting the packet (`pkt_len`) below its length is refused
//!   (`Truncated`); cutting only the linear view below the headers is
//!   `NeedMore { needed }` with `hdr.len() < needed <= pkt_len`, and with
//!   `needed` bytes given the parse succeeds; a cut L4 header is refused;
//! - on any bytes: an `Ok` parse has `l4_offset <= total_len <= pkt_len`;
//! - incremental checksum updates (address and port rewrites as NAT does,
//!   IPv4 and IPv6, UDP's zero rule, the CHECKSUM_PARTIAL pseudo-header
//!   form) and `decrement_ttl` give the checksum a full recomputation by a
//!   reference implementation gives, and the packet still verifies.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects,
    unreachable_pub
)]

mod common;

use common::*;
use proptest::prelude::*;
use rvs_core::config::AddrFamily;
use rvs_core::packet::{self, ParseError};

proptest! {
    #![proptest_config(common::config())]

    #[test]
    fn ipv4_parse_returns_the_generated_fields(
        ip in v4_strategy(Just(0)), l4 in l4_strategy(), pad in 0usize..8,
    ) {
        let mut pkt = v4_packet(&ip, &l4);
        let total = pkt.len();
        // Link-layer padding after the datagram is allowed.
        pkt.extend(std::iter::repeat_n(0xaau8, pad));
        let i = packet::parse_ipv4(&pkt, pkt.len()).unwrap();
        prop_assert_eq!(i.ihl_len, ip.ihl_len());
        prop_assert_eq!(i.l4_offset(), ip.ihl_len());
        prop_assert_eq!(i.total_len, total);
        prop_assert_eq!(i.l4_len(), total - ip.ihl_len());
        prop_assert_eq!(i.proto, l4.proto);
        prop_assert_eq!(i.saddr, ip.saddr);
        prop_assert_eq!(i.daddr, ip.daddr);
        prop_assert_eq!(i.ttl, ip.ttl);
        prop_assert_eq!(i.frag_off_field, ip.frag);
        let mf = ip.frag & packet::IP_MF != 0;
        let off = ip.frag & packet::IP_OFFSET;
        prop_assert_eq!(i.is_fragment, mf || off != 0);
        prop_assert_eq!(i.is_first_fragment, mf && off == 0);
        prop_assert_eq!(i.has_l4_header(), off == 0);
        prop_assert_eq!(i.check, get16(&pkt, 10));
        prop_assert!(packet::ip_header_checksum_ok(&pkt[..i.ihl_len]));
        prop_assert_eq!(packet::ip_header_checksum(&pkt[..i.ihl_len]), get16(&pkt, 10));

        let l4b = &pkt[i.l4_offset()..total];
        let p = packet::parse_l4_ports(l4b, l4.proto).unwrap();
        prop_assert_eq!((p.src, p.dst), (l4.sport, l4.dport));
        if l4.proto == packet::IPPROTO_TCP {
            prop_assert_eq!(packet::tcp_header_len(l4b).unwrap(), l4.hdr_len());
            packet::tcp_flags(l4b).unwrap();
        }

        let g = packet::parse_ip(AddrFamily::Inet, &pkt, pkt.len()).unwrap();
        prop_assert_eq!(g.l4_offset, ip.ihl_len());
        prop_assert_eq!(&g.saddr[..4], &ip.saddr[..]);
        prop_assert_eq!(&g.saddr[4..], &[0u8; 12][..]);
        prop_assert_eq!(g.df, ip.frag & packet::IP_DF != 0);
    }

    #[test]
    fn ipv4_truncations_are_refused(
        ip in v4_strategy(Just(0)), l4 in l4_strategy(), cut in any::<prop::sample::Index>(),
    ) {
        let pkt = v4_packet(&ip, &l4);
        let ihl = ip.ihl_len();
        // The packet itself shorter than it declares: always refused.
        let c = cut.index(pkt.len());
        prop_assert_eq!(packet::parse_ipv4(&pkt[..c], c), Err(ParseError::Truncated));
        // Only the linear view short: ask for more (never past the packet),
        // and succeed once that much is given.
        match packet::parse_ipv4(&pkt[..c], pkt.len()) {
            Ok(i) => prop_assert!(c >= ihl && i.ihl_len == ihl),
            Err(ParseError::NeedMore { needed }) => {
                prop_assert!(c < ihl);
                prop_assert!(needed > c && needed <= pkt.len());
                let again = packet::parse_ipv4(&pkt[..needed], pkt.len());
                let ok = again.is_ok()
                    || matches!(again, Err(ParseError::NeedMore { needed: n }) if n > needed);
                prop_assert!(ok, "{:?}", again);
            }
            Err(e) => prop_assert!(false, "unexpected {:?}", e),
        }
        // A cut TCP/UDP header is refused.
        let l4b = &pkt[ihl..];
        let k = cut.index(l4.hdr_len());
        prop_assert!(packet::parse_l4_ports(&l4b[..k], l4.proto).is_err());
        if l4.proto == packet::IPPROTO_TCP {
            prop_assert!(packet::tcp_header_len(&l4b[..k]).is_err());
        }
    }

    #[test]
    fn ipv6_parse_returns_the_generated_fields(
        s in any::<[u8; 16]>(), d in any::<[u8; 16]>(), hop in any::<u8>(),
        chain in ext_chain_strategy(), l4 in l4_strategy(), pad in 0usize..8,
    ) {
        let mut pkt = v6_packet(&s, &d, hop, &chain, &l4);
        let total = pkt.len();
        pkt.extend(std::iter::repeat_n(0x55u8, pad));
        let ext_len: usize = chain
            .iter()
            .map(|e| if e.0 == 44 { 8 } else { (usize::from(e.1) + 1) * 8 })
            .sum();
        let i = packet::parse_ipv6(&pkt, pkt.len()).unwrap();
        prop_assert_eq!(i.total_len, total);
        prop_assert_eq!(i.payload_len, total - 40);
        prop_assert_eq!(i.l4_offset, 40 + ext_len);
        prop_assert_eq!(i.l4_len(), total - 40 - ext_len);
        prop_assert_eq!(i.proto, l4.proto);
        prop_assert_eq!(i.next_header, chain.first().map_or(l4.proto, |e| e.0));
        prop_assert_eq!(i.saddr, s);
        prop_assert_eq!(i.daddr, d);
        prop_assert_eq!(i.hop_limit, hop);
        let frag = chain.iter().find(|e| e.0 == 44);
        prop_assert_eq!(i.is_fragment, frag.is_some());
        prop_assert_eq!(i.is_first_fragment, frag.is_some_and(|f| f.2 & 1 != 0));
        prop_assert!(i.has_l4_header());
        let p = packet::parse_l4_ports(&pkt[i.l4_offset..total], l4.proto).unwrap();
        prop_assert_eq!((p.src, p.dst), (l4.sport, l4.dport));
        let g = packet::parse_ip(AddrFamily::Inet6, &pkt, pkt.len()).unwrap();
        prop_assert_eq!(g.l4_offset, i.l4_offset);
        prop_assert!(g.df);
    }

    #[test]
    fn ipv6_truncations_are_refused(
        s in any::<[u8; 16]>(), d in any::<[u8; 16]>(),
        chain in ext_chain_strategy(), l4 in l4_strategy(), cut in any::<prop::sample::Index>(),
    ) {
        let pkt = v6_packet(&s, &d, 64, &chain, &l4);
        let c = cut.index(pkt.len());
        prop_assert_eq!(packet::parse_ipv6(&pkt[..c], c), Err(ParseError::Truncated));
        let full = packet::parse_ipv6(&pkt, pkt.len()).unwrap();
        // A short linear view: NeedMore within the packet, and parsing
        // again with what was asked converges to the full answer.
        let mut have = c;
        loop {
            match packet::parse_ipv6(&pkt[..have], pkt.len()) {
                Ok(i) => {
                    // (l4_offset may lie past `have`: the body of an
                    // extension header is skipped, not read.)
                    prop_assert!(i.l4_offset <= i.total_len && i.total_len <= pkt.len());
                    prop_assert_eq!(i, full);
                    break;
                }
                Err(ParseError::NeedMore { needed }) => {
                    prop_assert!(needed > have && needed <= pkt.len());
                    have = needed;
                }
                Err(e) => prop_assert!(false, "unexpected {:?}", e),
            }
        }
    }

    #[test]
    fn parse_offsets_stay_inside_the_packet(
        mut bytes in proptest::collection::vec(any::<u8>(), 0..160),
        hdr_cut in any::<prop::sample::Index>(),
        v6 in any::<bool>(),
    ) {
        // Make the version and lengths plausible half the time so the
        // parsers get past their first checks.
        if !bytes.is_empty() && bytes.len() % 2 == 0 {
            bytes[0] = if v6 { 0x60 } else { 0x40 | (bytes[0] & 0x0f) };
        }
        let pkt_len = bytes.len();
        let h = hdr_cut.index(pkt_len + 1);
        let hdr = &bytes[..h];
        let check = |r: Result<(usize, usize), ParseError>| -> Result<(), TestCaseError> {
            match r {
                Ok((l4, total)) => {
                    prop_assert!(l4 <= total && total <= pkt_len);
                }
                Err(ParseError::NeedMore { needed }) => {
                    prop_assert!(needed > hdr.len() && needed <= pkt_len);
                }
                Err(_) => {}
            }
            Ok(())
        };
        check(packet::parse_ipv4(hdr, pkt_len).map(|i| (i.ihl_len, i.total_len)))?;
        check(packet::parse_ipv6(hdr, pkt_len).map(|i| (i.l4_offset, i.total_len)))?;
        for proto in [6u8, 17] {
            if packet::parse_l4_ports(hdr, proto).is_ok() {
                let min = if proto == 6 { 20 } else { 8 };
                prop_assert!(hdr.len() >= min);
            }
        }
        if let Ok(n) = packet::tcp_header_len(hdr) {
            prop_assert!((20..=60).contains(&n) && n <= hdr.len());
        }
    }

    #[test]
    fn nat_rewrite_v4_incremental_equals_full(
        ip in v4_strategy(Just(0)), l4 in l4_strategy(),
        new_addr in any::<[u8; 4]>(), new_port in any::<u16>(), rewrite_src in any::<bool>(),
        udp_nocsum in any::<bool>(),
    ) {
        let mut pkt = v4_packet(&ip, &l4);
        let ihl = ip.ihl_len();
        let ck = ihl + l4.check_offset();
        if l4.proto == 17 && udp_nocsum {
            put16(&mut pkt, ck, 0);
        }
        let (a_at, p_at) = if rewrite_src { (12, ihl) } else { (16, ihl + 2) };
        let old_a = u32::from_be_bytes(pkt[a_at..a_at + 4].try_into().unwrap());
        let new_a = u32::from_be_bytes(new_addr);
        let old_p = get16(&pkt, p_at);
        // Incremental, as the datapath does it.
        let ipc = packet::csum_replace4(get16(&pkt, 10), old_a, new_a);
        let l4c = get16(&pkt, ck);
        let l4c = if l4.proto == 17 {
            packet::udp_csum_replace2(packet::udp_csum_replace4(l4c, old_a, new_a), old_p, new_port)
        } else {
            packet::csum_replace2(packet::csum_replace4(l4c, old_a, new_a), old_p, new_port)
        };
        pkt[a_at..a_at + 4].copy_from_slice(&new_addr);
        put16(&mut pkt, p_at, new_port);
        put16(&mut pkt, 10, ipc);
        put16(&mut pkt, ck, l4c);
        // Full recomputation by the reference.
        let mut h = pkt[..ihl].to_vec();
        put16(&mut h, 10, 0);
        prop_assert!(csum_eq(ipc, ref_csum(&[&h])), "ip {:#x} vs {:#x}", ipc, ref_csum(&[&h]));
        prop_assert!(packet::ip_header_checksum_ok(&pkt[..ihl]));
        if l4.proto == 17 && udp_nocsum {
            prop_assert_eq!(l4c, 0);
        } else {
            let mut seg = pkt[ihl..].to_vec();
            put16(&mut seg, l4.check_offset(), 0);
            let s: [u8; 4] = pkt[12..16].try_into().unwrap();
            let d: [u8; 4] = pkt[16..20].try_into().unwrap();
            let ph = pseudo_v4(&s, &d, l4.proto, seg.len());
            let full = ref_csum(&[&ph, &seg]);
            prop_assert!(csum_eq(l4c, full), "l4 {:#x} vs {:#x}", l4c, full);
            if l4.proto == 17 {
                prop_assert_ne!(l4c, 0);
            }
            // The whole segment with its checksum sums to zero.
            prop_assert_eq!(ref_sum(&[ph, pkt[ihl..].to_vec()].concat()), 0xffff);
        }
    }

    #[test]
    fn nat_rewrite_v6_incremental_equals_full(
        s in any::<[u8; 16]>(), d in any::<[u8; 16]>(), chain in ext_chain_strategy(),
        l4 in l4_strategy(), new_addr in any::<[u8; 16]>(), new_port in any::<u16>(),
        rewrite_src in any::<bool>(),
    ) {
        let mut pkt = v6_packet(&s, &d, 64, &chain, &l4);
        let i = packet::parse_ipv6(&pkt, pkt.len()).unwrap();
        let off = i.l4_offset;
        let ck = off + l4.check_offset();
        let (a_at, p_at) = if rewrite_src { (8, off) } else { (24, off + 2) };
        let old_a: [u8; 16] = pkt[a_at..a_at + 16].try_into().unwrap();
        let old_p = get16(&pkt, p_at);
        let c = packet::csum_replace2(
            packet::csum_replace16(get16(&pkt, ck), &old_a, &new_addr),
            old_p,
            new_port,
        );
        let c = if l4.proto == 17 { packet::udp_csum_nonzero(c) } else { c };
        pkt[a_at..a_at + 16].copy_from_slice(&new_addr);
        put16(&mut pkt, p_at, new_port);
        put16(&mut pkt, ck, c);
        let mut seg = pkt[off..].to_vec();
        put16(&mut seg, l4.check_offset(), 0);
        let (ns, nd): ([u8; 16], [u8; 16]) =
            (pkt[8..24].try_into().unwrap(), pkt[24..40].try_into().unwrap());
        let ph = pseudo_v6(&ns, &nd, l4.proto, seg.len());
        let full = ref_csum(&[&ph, &seg]);
        prop_assert!(csum_eq(c, full), "{:#x} vs {:#x}", c, full);
        prop_assert_eq!(ref_sum(&[ph, pkt[off..].to_vec()].concat()), 0xffff);
        // udp6_csum_replace16 never produces 0.
        let u = packet::udp6_csum_replace16(get16(&pkt, ck), &new_addr, &old_a);
        prop_assert_ne!(u, 0);
    }

    #[test]
    fn partial_pseudo_header_update_equals_full(
        s in any::<[u8; 4]>(), d in any::<[u8; 4]>(), new in any::<[u8; 4]>(),
        s6 in any::<[u8; 16]>(), d6 in any::<[u8; 16]>(), new6 in any::<[u8; 16]>(),
        proto in prop_oneof![Just(6u8), Just(17u8)], len in 8usize..1500, new_len in 8usize..1500,
    ) {
        // CHECKSUM_PARTIAL: the field holds the folded pseudo-header sum,
        // not complemented.
        let f = ref_sum(&pseudo_v4(&s, &d, proto, len));
        let got = packet::pseudo_csum_replace4(f, u32::from_be_bytes(d), u32::from_be_bytes(new));
        prop_assert!(csum_eq(got, ref_sum(&pseudo_v4(&s, &new, proto, len))));
        let got = packet::pseudo_csum_replace2(f, len as u16, new_len as u16);
        prop_assert!(csum_eq(got, ref_sum(&pseudo_v4(&s, &d, proto, new_len))));
        let f6 = ref_sum(&pseudo_v6(&s6, &d6, proto, len));
        let got = packet::pseudo_csum_replace16(f6, &s6, &new6);
        prop_assert!(csum_eq(got, ref_sum(&pseudo_v6(&new6, &d6, proto, len))));
    }

    #[test]
    fn decrement_ttl_equals_full_recomputation(ip in v4_strategy(Just(6)), l4_len in 0usize..100) {
        let mut h = ip.header(l4_len);
        let before = h.clone();
        let r = packet::decrement_ttl(AddrFamily::Inet, &mut h);
        if ip.ttl <= 1 {
            prop_assert_eq!(r, Err(packet::TtlError::Expired));
            prop_assert_eq!(&h, &before);
        } else {
            prop_assert_eq!(r, Ok(()));
            prop_assert_eq!(h[8], ip.ttl - 1);
            let mut z = h.clone();
            put16(&mut z, 10, 0);
            prop_assert!(csum_eq(get16(&h, 10), ref_csum(&[&z])));
            prop_assert!(packet::ip_header_checksum_ok(&h));
            // Nothing but the TTL and the checksum changed.
            for (k, (a, b)) in h.iter().zip(&before).enumerate() {
                if k != 8 && k != 10 && k != 11 {
                    prop_assert_eq!(a, b);
                }
            }
        }
        // Any header cut before the checksum: refused, untouched.
        let mut short = before[..(11.min(before.len()))].to_vec();
        let s0 = short.clone();
        prop_assert!(packet::decrement_ttl(AddrFamily::Inet, &mut short).is_err());
        prop_assert_eq!(short, s0);
    }

    #[test]
    fn decrement_hop_limit_changes_only_it(
        s in any::<[u8; 16]>(), d in any::<[u8; 16]>(), hop in any::<u8>(),
    ) {
        let mut h = v6_fixed(6, 0, &s, &d, hop);
        let before = h.clone();
        let r = packet::decrement_ttl(AddrFamily::Inet6, &mut h);
        if hop <= 1 {
            prop_assert_eq!(r, Err(packet::TtlError::Expired));
            prop_assert_eq!(h, before);
        } else {
            prop_assert_eq!(r, Ok(()));
            let mut want = before;
            want[7] = hop - 1;
            prop_assert_eq!(h, want);
        }
    }
}
