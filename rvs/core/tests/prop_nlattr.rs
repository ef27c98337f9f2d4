// SPDX-License-Identifier: GPL-2.0

//! Property tests of nlattr.rs and svcattr.rs (netlink attribute walking
//! and the service / destination nests).
//!
//! Invariants checked:
//! - on any byte string, every attribute `AttrIter` yields lies inside the
//!   buffer, its header starts at a 4-byte aligned offset (NLA_ALIGNTO)
//!   right after the previous attribute's aligned end, its `nla_len` is
//!   the payload length + 4, its type has the two flag bits masked off;
//!   an error is the last item; the walk ends after at most len/4 + 1
//!   items;
//! - a generated list of attributes (any type with flag bits, payloads of
//!   any length, the last one's padding present or not) encodes and
//!   decodes back to itself;
//! - the same list cut anywhere yields exactly the attributes wholly before
//!   the cut, then `Truncated` if the cut falls inside an attribute's
//!   header or payload (nothing if it falls in padding or on a boundary);
//! - `parse_nested` keeps the last occurrence of each type and refuses
//!   type 0 and types beyond the table;
//! - a generated service (address/port or firewall mark, with settings)
//!   and destination (every forwarding method, weights, thresholds,
//!   tunnel settings) encoded as attributes in any order decode to the
//!   generated values; any cut of such a nest is refused or decodes
//!   without panicking.

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
use rvs_core::config::{AddrFamily, FwdMethod};
use rvs_core::nlattr::{self, AttrError, AttrIter, NLA_HDRLEN, NLA_TYPE_MASK};
use rvs_core::sched::SchedKind;
use rvs_core::svcattr::{self, ServiceKey};
use rvs_core::tunnel::Tunnel;
use rvs_core::uapi::*;

/// One attribute: header (host order), payload, padding to 4 unless
/// `pad` is false.
fn encode_one(out: &mut Vec<u8>, kind: u16, payload: &[u8], pad: bool) {
    out.extend_from_slice(&((NLA_HDRLEN + payload.len()) as u16).to_ne_bytes());
    out.extend_from_slice(&kind.to_ne_bytes());
    out.extend_from_slice(payload);
    if pad {
        while out.len() % 4 != 0 {
            out.push(0);
        }
    }
}

fn encode(attrs: &[(u16, Vec<u8>)], pad_last: bool) -> Vec<u8> {
    let mut b = Vec::new();
    for (i, (k, p)) in attrs.iter().enumerate() {
        encode_one(&mut b, *k, p, pad_last || i + 1 < attrs.len());
    }
    b
}

fn attrs_strategy() -> impl Strategy<Value = Vec<(u16, Vec<u8>)>> {
    proptest::collection::vec(
        (any::<u16>(), proptest::collection::vec(any::<u8>(), 0..24)),
        0..10,
    )
}

fn offset_in(buf: &[u8], sub: &[u8]) -> usize {
    let b = buf.as_ptr() as usize;
    let s = sub.as_ptr() as usize;
    assert!(
        s >= b && s + sub.len() <= b + buf.len(),
        "payload outside the buffer"
    );
    s - b
}

proptest! {
    #![proptest_config(common::config())]

    #[test]
    fn any_bytes_yield_attributes_inside_the_buffer_and_aligned(
        bytes in proptest::collection::vec(any::<u8>(), 0..200),
        small_lens in any::<bool>(),
    ) {
        let mut bytes = bytes;
        // Half the time, make the length fields plausible so walks go far.
        if small_lens {
            let mut at = 0;
            while at + 2 <= bytes.len() {
                let l = u16::from(bytes[at] % 28);
                bytes[at..at + 2].copy_from_slice(&l.to_ne_bytes());
                at += (usize::from(l) + 3) & !3;
                if l < 4 {
                    break;
                }
            }
        }
        let mut expect_at = 0usize;
        let mut n = 0usize;
        let mut ended = false;
        for item in AttrIter::new(&bytes) {
            prop_assert!(!ended, "an item after an error");
            n += 1;
            prop_assert!(n <= bytes.len() / 4 + 1);
            match item {
                Ok((kind, payload)) => {
                    let off = offset_in(&bytes, payload);
                    prop_assert_eq!(off, expect_at + NLA_HDRLEN);
                    prop_assert_eq!(expect_at % 4, 0);
                    let len = u16::from_ne_bytes([bytes[expect_at], bytes[expect_at + 1]]);
                    let ty = u16::from_ne_bytes([bytes[expect_at + 2], bytes[expect_at + 3]]);
                    prop_assert_eq!(usize::from(len), payload.len() + NLA_HDRLEN);
                    prop_assert_eq!(kind, ty & NLA_TYPE_MASK);
                    expect_at = (expect_at + usize::from(len) + 3) & !3;
                }
                Err(e) => {
                    prop_assert_eq!(e, AttrError::Truncated);
                    ended = true;
                }
            }
        }
    }

    #[test]
    fn generated_list_round_trips(attrs in attrs_strategy(), pad_last in any::<bool>()) {
        let b = encode(&attrs, pad_last);
        let got: Vec<(u16, Vec<u8>)> = AttrIter::new(&b)
            .map(|r| r.map(|(k, p)| (k, p.to_vec())))
            .collect::<Result<_, _>>()
            .unwrap();
        let want: Vec<(u16, Vec<u8>)> =
            attrs.iter().map(|(k, p)| (k & NLA_TYPE_MASK, p.clone())).collect();
        prop_assert_eq!(got, want);
    }

    #[test]
    fn cut_list_yields_the_whole_attributes_then_stops(
        attrs in attrs_strategy(), cut in any::<prop::sample::Index>(),
    ) {
        let b = encode(&attrs, true);
        let c = cut.index(b.len() + 1);
        let items: Vec<_> = AttrIter::new(&b[..c]).collect();
        // Where each attribute starts and where its payload ends.
        let mut whole = 0usize;
        let mut at = 0usize;
        let mut inside = false;
        for (_, p) in &attrs {
            let end = at + NLA_HDRLEN + p.len();
            if end <= c {
                whole += 1;
            } else {
                inside = c > at;
                break;
            }
            at = (end + 3) & !3;
        }
        prop_assert_eq!(items.len(), whole + usize::from(inside));
        for (i, item) in items.iter().enumerate() {
            if i < whole {
                let (k, p) = item.unwrap();
                prop_assert_eq!(k, attrs[i].0 & NLA_TYPE_MASK);
                prop_assert_eq!(p, &attrs[i].1[..]);
            } else {
                prop_assert_eq!(*item, Err(AttrError::Truncated));
            }
        }
    }

    #[test]
    fn parse_nested_keeps_the_last_and_refuses_unknown(
        attrs in proptest::collection::vec((0u16..10, proptest::collection::vec(any::<u8>(), 0..8)), 0..12),
    ) {
        let b = encode(&attrs, true);
        let mut t: [Option<&[u8]>; 8] = [None; 8];
        let r = nlattr::parse_nested(&b, &mut t);
        match attrs.iter().find(|(k, _)| *k == 0 || *k >= 8) {
            Some((k, _)) => prop_assert_eq!(r, Err(AttrError::UnknownType(*k))),
            None => {
                prop_assert_eq!(r, Ok(()));
                for k in 1..8u16 {
                    let last = attrs.iter().rev().find(|(a, _)| *a == k).map(|(_, p)| &p[..]);
                    prop_assert_eq!(t[usize::from(k)], last);
                }
            }
        }
    }
}

#[derive(Clone, Debug)]
struct Svc {
    af: AddrFamily,
    proto: u8,
    addr: [u8; 16],
    addr16: bool,
    port: u16,
    fwmark: u32,
    sched: SchedKind,
    flags: u32,
    mask: u32,
    timeout: u32,
    netmask: Option<u32>,
}

fn svc_strategy() -> impl Strategy<Value = Svc> {
    (
        any::<bool>(),
        prop_oneof![Just(6u8), Just(17u8)],
        any::<[u8; 16]>(),
        any::<bool>(),
        1u16..,
        prop_oneof![Just(0u32), 1u32..],
        proptest::sample::select(SchedKind::ALL.to_vec()),
        (any::<u32>(), any::<u32>(), any::<u32>()),
        proptest::option::of(1u32..=128),
    )
        .prop_map(
            |(
                v6,
                proto,
                mut addr,
                addr16,
                port,
                fwmark,
                sched,
                (flags, mask, timeout),
                netmask,
            )| {
                let af = if v6 {
                    AddrFamily::Inet6
                } else {
                    AddrFamily::Inet
                };
                if !v6 {
                    addr[4..].fill(0);
                }
                // One-packet scheduling only for UDP address services.
                let mask = if proto != 17 && fwmark == 0 {
                    mask & !svcattr::SVC_F_ONEPACKET
                } else {
                    mask
                };
                Svc {
                    af,
                    proto,
                    addr,
                    addr16,
                    port,
                    fwmark,
                    sched,
                    flags,
                    mask,
                    timeout,
                    netmask,
                }
            },
        )
}

fn svc_attrs(s: &Svc) -> Vec<(u16, Vec<u8>)> {
    let afv: u16 = if s.af == AddrFamily::Inet6 { 10 } else { 2 };
    let alen = if s.af == AddrFamily::Inet6 || s.addr16 {
        16
    } else {
        4
    };
    let mut a = vec![
        (RVS_SVC_ATTR_AF, afv.to_ne_bytes().to_vec()),
        (
            RVS_SVC_ATTR_PROTOCOL,
            u16::from(s.proto).to_ne_bytes().to_vec(),
        ),
        (RVS_SVC_ATTR_ADDR, s.addr[..alen].to_vec()),
        (RVS_SVC_ATTR_PORT, s.port.to_be_bytes().to_vec()),
        (RVS_SVC_ATTR_TIMEOUT, s.timeout.to_ne_bytes().to_vec()),
    ];
    let mut name = s.sched.name().as_bytes().to_vec();
    name.push(0);
    a.push((RVS_SVC_ATTR_SCHED_NAME, name));
    let mut f = s.flags.to_ne_bytes().to_vec();
    f.extend_from_slice(&s.mask.to_ne_bytes());
    a.push((RVS_SVC_ATTR_FLAGS, f));
    if s.fwmark != 0 {
        a.push((RVS_SVC_ATTR_FWMARK, s.fwmark.to_ne_bytes().to_vec()));
    }
    if let Some(m) = s.netmask {
        a.push((RVS_SVC_ATTR_NETMASK, m.to_ne_bytes().to_vec()));
    }
    a
}

#[derive(Clone, Debug)]
struct Dst {
    af: Option<AddrFamily>,
    addr: [u8; 16],
    port: u16,
    fwd: FwdMethod,
    weight: u32,
    u: u32,
    l: u32,
    tunnel: Tunnel,
}

fn dst_strategy() -> impl Strategy<Value = Dst> {
    (
        proptest::option::of(any::<bool>()),
        any::<[u8; 16]>(),
        1u16..,
        proptest::sample::select(vec![FwdMethod::Masq, FwdMethod::Tunnel, FwdMethod::Route]),
        0u32..=65535,
        (0u32..=i32::MAX as u32, any::<u32>()),
        prop_oneof![
            Just(Tunnel::Ipip),
            (1u16.., any::<bool>(), any::<bool>()).prop_map(|(port, c, r)| Tunnel::Gue {
                port,
                csum: c || r,
                remcsum: r
            }),
            any::<bool>().prop_map(|csum| Tunnel::Gre { csum }),
        ],
    )
        .prop_map(|(af, mut addr, port, fwd, weight, (u, l), tunnel)| {
            let af = af.map(|v6| {
                if v6 {
                    AddrFamily::Inet6
                } else {
                    AddrFamily::Inet
                }
            });
            // A global unicast IPv6 address (2000::/3), any IPv4 address.
            addr[0] = 0x20 | (addr[0] & 0x1f);
            Dst {
                af,
                addr,
                port,
                fwd,
                weight,
                u,
                l: l % (u + 1),
                tunnel,
            }
        })
}

fn dst_attrs(d: &Dst, svc_af: AddrFamily) -> Vec<(u16, Vec<u8>)> {
    let af = d.af.unwrap_or(svc_af);
    let alen = if af == AddrFamily::Inet6 { 16 } else { 4 };
    let (tt, tp, tf) = d.tunnel.to_uapi();
    let mut a = vec![
        (RVS_DEST_ATTR_ADDR, d.addr[..alen].to_vec()),
        (RVS_DEST_ATTR_PORT, d.port.to_be_bytes().to_vec()),
        (
            RVS_DEST_ATTR_FWD_METHOD,
            d.fwd.to_uapi().to_ne_bytes().to_vec(),
        ),
        (RVS_DEST_ATTR_WEIGHT, d.weight.to_ne_bytes().to_vec()),
        (RVS_DEST_ATTR_U_THRESH, d.u.to_ne_bytes().to_vec()),
        (RVS_DEST_ATTR_L_THRESH, d.l.to_ne_bytes().to_vec()),
        (RVS_DEST_ATTR_TUN_TYPE, vec![tt]),
        (RVS_DEST_ATTR_TUN_PORT, tp.to_be_bytes().to_vec()),
        (RVS_DEST_ATTR_TUN_FLAGS, tf.to_ne_bytes().to_vec()),
    ];
    if let Some(af) = d.af {
        let v: u16 = if af == AddrFamily::Inet6 { 10 } else { 2 };
        a.push((RVS_DEST_ATTR_ADDR_FAMILY, v.to_ne_bytes().to_vec()));
    }
    a
}

/// A permutation of `v` driven by `seed`.
fn shuffle<T>(mut v: Vec<T>, seed: u64) -> Vec<T> {
    let mut x = seed | 1;
    for i in (1..v.len()).rev() {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        v.swap(i, (x % (i as u64 + 1)) as usize);
    }
    v
}

proptest! {
    #![proptest_config(common::config())]

    #[test]
    fn service_nest_decodes_to_the_generated_service(
        s in svc_strategy(), seed in any::<u64>(), cut in any::<prop::sample::Index>(),
    ) {
        let b = encode(&shuffle(svc_attrs(&s), seed), true);
        let (k, p) = svcattr::parse_service(&b, true).unwrap();
        let want = if s.fwmark != 0 {
            ServiceKey { af: s.af, protocol: 6, addr: [0; 16], port: 0, fwmark: s.fwmark }
        } else {
            ServiceKey { af: s.af, protocol: s.proto, addr: s.addr, port: s.port, fwmark: 0 }
        };
        prop_assert_eq!(k, want);
        let p = p.unwrap();
        prop_assert_eq!(p.sched, s.sched);
        prop_assert_eq!(p.flags, s.flags & s.mask);
        prop_assert_eq!(p.timeout, s.timeout);
        let dflt = if s.af == AddrFamily::Inet6 { 128 } else { u32::MAX };
        prop_assert_eq!(p.netmask, s.netmask.unwrap_or(dflt));
        prop_assert_eq!(svcattr::parse_service(&b, false).unwrap(), (want, None));
        // Any cut: an error or a decoding, never a panic.
        let _ = svcattr::parse_service(&b[..cut.index(b.len() + 1)], true);
    }

    #[test]
    fn dest_nest_decodes_to_the_generated_destination(
        s in svc_strategy(), d in dst_strategy(), seed in any::<u64>(),
        cut in any::<prop::sample::Index>(),
    ) {
        let key = ServiceKey { af: s.af, protocol: s.proto, addr: s.addr, port: s.port, fwmark: s.fwmark };
        let af = d.af.unwrap_or(s.af);
        let b = encode(&shuffle(dst_attrs(&d, s.af), seed), true);
        let r = svcattr::parse_dest(&b, &key, true);
        if af != s.af && d.fwd != FwdMethod::Tunnel {
            prop_assert!(r.is_err());
            return Ok(());
        }
        let got = r.unwrap();
        let mut addr = [0u8; 16];
        let n = if af == AddrFamily::Inet6 { 16 } else { 4 };
        addr[..n].copy_from_slice(&d.addr[..n]);
        prop_assert_eq!(got.af, af);
        prop_assert_eq!(got.addr, addr);
        prop_assert_eq!(got.port, d.port);
        prop_assert_eq!(got.fwd, d.fwd);
        prop_assert_eq!(got.weight, d.weight);
        prop_assert_eq!((got.u_thresh, got.l_thresh), (d.u, d.l));
        prop_assert_eq!(got.tunnel, d.tunnel);
        let _ = svcattr::parse_dest(&b[..cut.index(b.len() + 1)], &key, true);
    }
}
