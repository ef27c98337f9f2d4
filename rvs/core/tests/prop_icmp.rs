// SPDX-License-Identifier: GPL-2.0

//! Property tests of icmp.rs and tunnel_icmp.rs (ICMP errors quoting
//! packets; errors quoting the director's own tunnel packets).
//!
//! Invariants checked, for generated errors (outer and quoted IPv4 headers
//! with options of every legal length, IPv6 quotes with extension-header
//! chains, quotes cut anywhere):
//! - a quote that holds the quoted L4 ports parses to exactly the
//!   generated inner flow (addresses, protocol, ports), with the quoted
//!   header at the generated offset and length;
//! - a quote cut before the ports is refused; a quote cut anywhere never
//!   yields an offset outside the buffer (`rewrite_len <= buf.len()`,
//!   `l4_check_at` only when the whole checksum field is present, IPv6's
//!   `NeedMore { needed }` within the ICMPv6 message and converging to the
//!   full answer);
//! - after `nat_v4`/`nat_v6` the outer and quoted IPv4 header checksums
//!   and the ICMP / ICMPv6 checksum verify (reference full sum), and the
//!   quote parses to the translated flow;
//! - a tunnel quote (IP-in-IP, GUE with and without the remote checksum
//!   option, GRE with and without checksum) gives the generated client
//!   flow, real server, encapsulation and overhead = tunnel IHL +
//!   `Tunnel::header_len`.

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
use rvs_core::icmp::{self, IcmpNat, IcmpSkip};
use rvs_core::packet::{self, ParseError};
use rvs_core::tunnel::Tunnel;
use rvs_core::tunnel_icmp::{self, Encap};

fn icmp_v4_types() -> impl Strategy<Value = u8> {
    prop_oneof![Just(3u8), Just(4u8), Just(11u8)]
}

/// A quoted IPv4 header: never a non-first fragment.
fn inner_v4() -> impl Strategy<Value = V4> {
    v4_strategy(Just(0)).prop_map(|mut v| {
        v.frag &= !packet::IP_OFFSET;
        v
    })
}

/// An outer IPv4 header: not a fragment.
fn outer_v4() -> impl Strategy<Value = V4> {
    v4_strategy(Just(1)).prop_map(|mut v| {
        v.frag &= packet::IP_DF;
        v
    })
}

/// An IPv4 ICMP error from `outer` carrying `quote`, checksums right.
fn icmp_v4(outer: &V4, ty: u8, code: u8, info: [u8; 4], quote: &[u8]) -> Vec<u8> {
    let mut m = vec![ty, code, 0, 0];
    m.extend_from_slice(&info);
    m.extend_from_slice(quote);
    let c = ref_csum(&[&m]);
    put16(&mut m, 2, c);
    let mut o = outer.clone();
    o.proto = 1;
    let mut pkt = o.header(m.len());
    pkt.extend_from_slice(&m);
    pkt
}

fn addr4(a: &[u8; 16]) -> [u8; 4] {
    a[..4].try_into().unwrap()
}

proptest! {
    #![proptest_config(common::config())]

    #[test]
    fn icmp_v4_quote_gives_the_generated_flow(
        outer in outer_v4(), inner in inner_v4(), l4 in l4_strategy(),
        ty in icmp_v4_types(), code in any::<u8>(), info in any::<[u8; 4]>(),
        cut in any::<prop::sample::Index>(),
        nat_to_client in any::<bool>(), new_addr in any::<[u8; 4]>(), new_port in any::<u16>(),
    ) {
        let quoted = v4_packet(&inner, &l4);
        let qlen = cut.index(quoted.len() + 1);
        let mut pkt = icmp_v4(&outer, ty, code, info, &quoted[..qlen]);
        let o = packet::parse_ipv4(&pkt, pkt.len()).unwrap();
        let r = icmp::parse_v4(&pkt, &o);
        let oihl = outer.ihl_len();
        let ports_end = inner.ihl_len() + 4;
        if qlen < ports_end {
            prop_assert!(matches!(r, Err(IcmpSkip::Malformed(_))), "{:?}", r);
            return Ok(());
        }
        let q = r.unwrap();
        prop_assert_eq!(q.icmp_type, ty);
        prop_assert_eq!(q.code, code);
        prop_assert_eq!(q.icmp_off, oihl);
        prop_assert_eq!(q.inner_off, oihl + 8);
        prop_assert_eq!(q.inner_ihl, inner.ihl_len());
        prop_assert_eq!(q.proto, l4.proto);
        prop_assert_eq!(addr4(&q.saddr), inner.saddr);
        prop_assert_eq!(addr4(&q.daddr), inner.daddr);
        prop_assert_eq!(&q.saddr[4..], &[0u8; 12][..]);
        prop_assert_eq!((q.sport, q.dport), (l4.sport, l4.dport));
        let check_end = q.inner_off + q.inner_ihl + l4.check_offset() + 2;
        prop_assert_eq!(q.l4_check_at.is_some(), check_end <= pkt.len());
        prop_assert!(q.rewrite_len <= pkt.len());

        // Translate, then everything verifies and the quote says so.
        let nat = if nat_to_client {
            let mut a = [0u8; 16];
            a[..4].copy_from_slice(&new_addr);
            IcmpNat::ToClient { vaddr: a, vport: new_port }
        } else {
            let mut a = [0u8; 16];
            a[..4].copy_from_slice(&new_addr);
            IcmpNat::ToServer { daddr: a, dport: new_port }
        };
        icmp::nat_v4(&mut pkt, &q, nat).unwrap();
        prop_assert!(packet::ip_header_checksum_ok(&pkt[..oihl]));
        prop_assert!(packet::ip_header_checksum_ok(&pkt[q.inner_off..q.inner_off + q.inner_ihl]));
        prop_assert_eq!(ref_sum(&pkt[oihl..]), 0xffff);
        let o2 = packet::parse_ipv4(&pkt, pkt.len()).unwrap();
        let q2 = icmp::parse_v4(&pkt, &o2).unwrap();
        if nat_to_client {
            prop_assert_eq!(o2.saddr, new_addr);
            prop_assert_eq!(addr4(&q2.daddr), new_addr);
            prop_assert_eq!((q2.sport, q2.dport), (l4.sport, new_port));
        } else {
            prop_assert_eq!(o2.daddr, new_addr);
            prop_assert_eq!(addr4(&q2.saddr), new_addr);
            prop_assert_eq!((q2.sport, q2.dport), (new_port, l4.dport));
        }
        // A whole quote keeps a right quoted L4 checksum (UDP 0 stays 0).
        if qlen == quoted.len() {
            let l4o = q.inner_off + q.inner_ihl;
            let ck = get16(&pkt, l4o + l4.check_offset());
            let s = addr4(&q2.saddr);
            let d = addr4(&q2.daddr);
            let ph = pseudo_v4(&s, &d, l4.proto, pkt.len() - l4o);
            prop_assert_eq!(ref_sum(&[ph, pkt[l4o..].to_vec()].concat()), 0xffff);
            prop_assert_ne!(ck, 0);
        }
    }

    #[test]
    fn icmp_v4_linear_cut_never_reaches_past_the_buffer(
        outer in outer_v4(), inner in inner_v4(), l4 in l4_strategy(),
        ty in icmp_v4_types(), cut in any::<prop::sample::Index>(),
    ) {
        let quoted = v4_packet(&inner, &l4);
        let pkt = icmp_v4(&outer, ty, 0, [0; 4], &quoted);
        let o = packet::parse_ipv4(&pkt, pkt.len()).unwrap();
        let c = cut.index(pkt.len() + 1);
        let buf = &pkt[..c];
        let need = outer.ihl_len() + 8 + inner.ihl_len() + 4;
        match icmp::parse_v4(buf, &o) {
            Ok(q) => {
                prop_assert!(c >= need);
                prop_assert!(q.rewrite_len <= c);
                if let Some(at) = q.l4_check_at {
                    prop_assert!(at + 2 <= c);
                }
                // Translating within the bytes given works.
                let mut b = buf.to_vec();
                let nat = IcmpNat::ToClient { vaddr: [9; 16], vport: 1 };
                icmp::nat_v4(&mut b, &q, nat).unwrap();
            }
            Err(e) => prop_assert!(c < need, "{:?} with {} of {}", e, c, need),
        }
        // rewrite_len short of a translation: refused, nothing written.
        if let Ok(q) = icmp::parse_v4(&pkt, &o) {
            let mut b = pkt[..q.rewrite_len - 1].to_vec();
            let b0 = b.clone();
            let nat = IcmpNat::ToClient { vaddr: [9; 16], vport: 1 };
            let r = icmp::nat_v4(&mut b, &q, nat);
            prop_assert!(r.is_err());
            prop_assert_eq!(b, b0);
        }
    }

    #[test]
    fn icmp_v6_quote_gives_the_generated_flow(
        os in any::<[u8; 16]>(), od in any::<[u8; 16]>(),
        s in any::<[u8; 16]>(), d in any::<[u8; 16]>(), chain in ext_chain_strategy(),
        l4 in l4_strategy(), ty in prop_oneof![Just(1u8), Just(2u8), Just(3u8), Just(4u8)],
        code in any::<u8>(), info in any::<[u8; 4]>(), cut in any::<prop::sample::Index>(),
        lin in any::<prop::sample::Index>(),
        nat_to_client in any::<bool>(), new_addr in any::<[u8; 16]>(), new_port in any::<u16>(),
    ) {
        let quoted = v6_packet(&s, &d, 64, &chain, &l4);
        let qlen = cut.index(quoted.len() + 1);
        let mut m = vec![ty, code, 0, 0];
        m.extend_from_slice(&info);
        m.extend_from_slice(&quoted[..qlen]);
        let ph = pseudo_v6(&os, &od, 58, m.len());
        let c = ref_csum(&[&ph, &m]);
        put16(&mut m, 2, c);
        let mut pkt = v6_fixed(58, m.len(), &os, &od, 255);
        pkt.extend_from_slice(&m);
        let o = packet::parse_ipv6(&pkt, pkt.len()).unwrap();
        let full = icmp::parse_v6(&pkt, &o);
        let inner_l4 = packet::parse_ipv6(&quoted, quoted.len()).unwrap().l4_offset;
        if qlen < inner_l4 + 4 {
            prop_assert!(matches!(full, Err(IcmpSkip::Malformed(_))), "{:?}", full);
        } else {
            let q = full.unwrap();
            prop_assert_eq!((q.icmp_type, q.code), (ty, code));
            prop_assert_eq!(q.icmp_off, 40);
            prop_assert_eq!(q.inner_off, 48);
            prop_assert_eq!(q.inner_ihl, inner_l4);
            prop_assert_eq!(q.proto, l4.proto);
            prop_assert_eq!((q.saddr, q.daddr), (s, d));
            prop_assert_eq!((q.sport, q.dport), (l4.sport, l4.dport));
            prop_assert_eq!(
                q.l4_check_at.is_some(),
                48 + inner_l4 + l4.check_offset() + 2 <= pkt.len()
            );
            prop_assert!(q.rewrite_len <= pkt.len());
        }
        // A short linear view: NeedMore inside the message, converging.
        let mut have = lin.index(pkt.len() + 1).max(o.l4_offset);
        loop {
            match icmp::parse_v6(&pkt[..have], &o) {
                Err(IcmpSkip::Malformed(ParseError::NeedMore { needed })) => {
                    prop_assert!(needed > have && needed <= o.total_len);
                    have = needed;
                }
                r => {
                    prop_assert_eq!(r, full);
                    if let Ok(q) = r {
                        prop_assert!(q.rewrite_len <= have);
                    }
                    break;
                }
            }
        }
        let Ok(q) = full else { return Ok(()) };
        let nat = if nat_to_client {
            IcmpNat::ToClient { vaddr: new_addr, vport: new_port }
        } else {
            IcmpNat::ToServer { daddr: new_addr, dport: new_port }
        };
        icmp::nat_v6(&mut pkt, &q, nat).unwrap();
        let ns: [u8; 16] = pkt[8..24].try_into().unwrap();
        let nd: [u8; 16] = pkt[24..40].try_into().unwrap();
        let ph = pseudo_v6(&ns, &nd, 58, pkt.len() - 40);
        prop_assert_eq!(ref_sum(&[ph, pkt[40..].to_vec()].concat()), 0xffff);
        let q2 = icmp::parse_v6(&pkt, &o).unwrap();
        if nat_to_client {
            prop_assert_eq!((ns, q2.daddr, q2.dport), (new_addr, new_addr, new_port));
        } else {
            prop_assert_eq!((nd, q2.saddr, q2.sport), (new_addr, new_addr, new_port));
        }
        if qlen == quoted.len() {
            let l4o = 48 + q.inner_ihl;
            let ph = pseudo_v6(&q2.saddr, &q2.daddr, l4.proto, pkt.len() - l4o);
            prop_assert_eq!(ref_sum(&[ph, pkt[l4o..].to_vec()].concat()), 0xffff);
        }
    }

    #[test]
    fn tunnel_quote_gives_the_client_flow_and_overhead(
        outer in outer_v4(), tun in inner_v4(), inner in inner_v4(), l4 in l4_strategy(),
        kind in 0u8..5, port in 1u16.., sport in any::<u16>(),
        ty in icmp_v4_types(), code in any::<u8>(), info in any::<[u8; 4]>(),
        cut in any::<prop::sample::Index>(),
    ) {
        let client = v4_packet(&inner, &l4);
        // The tunnel packet the director sent, as it built it.
        let (t, encap, partial) = match kind {
            0 => (Tunnel::Ipip, vec![], false),
            1 | 2 => {
                let t = Tunnel::Gue { port, csum: kind == 2, remcsum: false };
                let mut out = [0u8; 24];
                let n = t.gue_header(client.len(), false, sport, None, (&mut out[..20]).try_into().unwrap()).unwrap();
                (t, out[..n].to_vec(), false)
            }
            3 => {
                let t = Tunnel::Gue { port, csum: true, remcsum: true };
                let mut out = [0u8; 20];
                let l4o = inner.ihl_len() as u16;
                let n = t
                    .gue_header(client.len(), false, sport, Some((l4o, l4.check_offset() as u16)), &mut out)
                    .unwrap();
                (t, out[..n].to_vec(), true)
            }
            _ => {
                let csum = sport & 1 != 0;
                let t = Tunnel::Gre { csum };
                let mut g = vec![if csum { 0x80 } else { 0 }, 0, 0x08, 0x00];
                if csum {
                    g.extend_from_slice(&[0x12, 0x34, 0, 0]);
                }
                (t, g, false)
            }
        };
        prop_assert_eq!(encap.len(), t.header_len(partial));
        let mut tip = tun.clone();
        tip.proto = t.outer_protocol();
        let mut tpkt = tip.header(encap.len() + client.len());
        tpkt.extend_from_slice(&encap);
        tpkt.extend_from_slice(&client);
        let qlen = cut.index(tpkt.len() + 1);
        let pkt = icmp_v4(&outer, ty, code, info, &tpkt[..qlen]);
        let o = packet::parse_ipv4(&pkt, pkt.len()).unwrap();
        let r = tunnel_icmp::parse_v4(&pkt, &o);
        let overhead = tun.ihl_len() + encap.len();
        let need = overhead + inner.ihl_len() + 4;
        if qlen < need {
            prop_assert!(matches!(r, Err(IcmpSkip::Malformed(_))), "{:?}", r);
            return Ok(());
        }
        let tq = r.unwrap();
        prop_assert_eq!(tq.overhead, overhead);
        prop_assert_eq!(tq.tun_off, outer.ihl_len() + 8);
        prop_assert_eq!(tq.tun_ihl, tun.ihl_len());
        prop_assert_eq!(addr4(&tq.server), tun.daddr);
        prop_assert_eq!(tq.df, tun.frag & packet::IP_DF != 0);
        prop_assert_eq!(tq.info, info);
        prop_assert!(tq.encap.is_of(t));
        let want = match t {
            Tunnel::Ipip => Encap::Ipip,
            Tunnel::Gue { port, .. } => Encap::Gue { port },
            Tunnel::Gre { .. } => Encap::Gre,
        };
        prop_assert_eq!(tq.encap, want);
        let q = tq.quote;
        prop_assert_eq!(q.inner_off, tq.tun_off + overhead);
        prop_assert_eq!(q.inner_ihl, inner.ihl_len());
        prop_assert_eq!((addr4(&q.saddr), addr4(&q.daddr)), (inner.saddr, inner.daddr));
        prop_assert_eq!((q.sport, q.dport, q.proto), (l4.sport, l4.dport, l4.proto));
        prop_assert!(q.rewrite_len <= pkt.len());
        // Any shorter linear view: refused or the same answer, in bounds.
        let c = cut.index(pkt.len() + 1);
        match tunnel_icmp::parse_v4(&pkt[..c], &o) {
            Ok(x) => {
                prop_assert_eq!(x.overhead, tq.overhead);
                prop_assert!(x.quote.rewrite_len <= c);
            }
            Err(e) => prop_assert!(matches!(e, IcmpSkip::Malformed(_)), "{:?}", e),
        }
    }
}
