// SPDX-License-Identifier: GPL-2.0

//! Shared by the property tests: packet builders and a reference Internet
//! checksum written the plain way (RFC 1071), independent of packet.rs.

#![allow(dead_code)]

use proptest::prelude::*;

/// The one's-complement sum of `data` as 16-bit big-endian words (odd
/// trailing byte padded with zero), folded to 16 bits, not complemented.
pub fn ref_sum(data: &[u8]) -> u16 {
    let mut s: u64 = 0;
    for c in data.chunks(2) {
        let w = if c.len() == 2 {
            u16::from_be_bytes([c[0], c[1]])
        } else {
            u16::from_be_bytes([c[0], 0])
        };
        s += u64::from(w);
    }
    while s > 0xffff {
        s = (s & 0xffff) + (s >> 16);
    }
    s as u16
}

/// The checksum to store over `parts` (checksum field zero inside them).
pub fn ref_csum(parts: &[&[u8]]) -> u16 {
    let mut all = Vec::new();
    for p in parts {
        // Each part starts at an even offset in the sum (pseudo-headers
        // and headers here all have even length).
        assert!(all.len() % 2 == 0);
        all.extend_from_slice(p);
    }
    !ref_sum(&all)
}

/// One's-complement equality: 0x0000 and 0xffff are both zero.
pub fn csum_eq(a: u16, b: u16) -> bool {
    a == b || (a == 0 || a == 0xffff) && (b == 0 || b == 0xffff)
}

pub fn get16(b: &[u8], off: usize) -> u16 {
    u16::from_be_bytes([b[off], b[off + 1]])
}

pub fn put16(b: &mut [u8], off: usize, v: u16) {
    b[off..off + 2].copy_from_slice(&v.to_be_bytes());
}

/// An IPv4 header to generate.
#[derive(Clone, Debug)]
pub struct V4 {
    pub opts: Vec<u8>,
    pub proto: u8,
    pub saddr: [u8; 4],
    pub daddr: [u8; 4],
    pub frag: u16,
    pub ttl: u8,
    pub tos: u8,
    pub id: u16,
}

pub fn v4_strategy(proto: impl Strategy<Value = u8>) -> impl Strategy<Value = V4> {
    (
        (0usize..=10).prop_flat_map(|w| proptest::collection::vec(any::<u8>(), w * 4)),
        proto,
        any::<[u8; 4]>(),
        any::<[u8; 4]>(),
        any::<u16>(),
        any::<u8>(),
        any::<u8>(),
        any::<u16>(),
    )
        .prop_map(|(opts, proto, saddr, daddr, frag, ttl, tos, id)| V4 {
            opts,
            proto,
            saddr,
            daddr,
            frag,
            ttl,
            tos,
            id,
        })
}

impl V4 {
    pub fn ihl_len(&self) -> usize {
        20 + self.opts.len()
    }

    /// The header with a correct checksum, for a payload of `l4_len` bytes.
    pub fn header(&self, l4_len: usize) -> Vec<u8> {
        let ihl = self.ihl_len();
        let mut h = vec![0u8; 20];
        h[0] = 0x40 | (ihl / 4) as u8;
        h[1] = self.tos;
        put16(&mut h, 2, (ihl + l4_len) as u16);
        put16(&mut h, 4, self.id);
        put16(&mut h, 6, self.frag);
        h[8] = self.ttl;
        h[9] = self.proto;
        h[12..16].copy_from_slice(&self.saddr);
        h[16..20].copy_from_slice(&self.daddr);
        h.extend_from_slice(&self.opts);
        let c = ref_csum(&[&h]);
        put16(&mut h, 10, c);
        h
    }
}

/// A TCP or UDP header (with payload) to generate.
#[derive(Clone, Debug)]
pub struct L4 {
    pub proto: u8,
    pub sport: u16,
    pub dport: u16,
    /// TCP options (multiple of 4 bytes, at most 40); unused for UDP.
    pub tcp_opts: Vec<u8>,
    pub flags: u8,
    pub seq: u32,
    pub payload: Vec<u8>,
}

pub fn l4_strategy() -> impl Strategy<Value = L4> {
    (
        prop_oneof![Just(6u8), Just(17u8)],
        any::<u16>(),
        any::<u16>(),
        (0usize..=10).prop_flat_map(|w| proptest::collection::vec(any::<u8>(), w * 4)),
        any::<u8>(),
        any::<u32>(),
        proptest::collection::vec(any::<u8>(), 0..48),
    )
        .prop_map(|(proto, sport, dport, tcp_opts, flags, seq, payload)| L4 {
            proto,
            sport,
            dport,
            tcp_opts,
            flags,
            seq,
            payload,
        })
}

impl L4 {
    pub fn hdr_len(&self) -> usize {
        if self.proto == 6 {
            20 + self.tcp_opts.len()
        } else {
            8
        }
    }

    pub fn check_offset(&self) -> usize {
        if self.proto == 6 {
            16
        } else {
            6
        }
    }

    /// Header and payload, checksum field zero.
    pub fn bytes(&self) -> Vec<u8> {
        let mut b;
        if self.proto == 6 {
            b = vec![0u8; 20];
            b[4..8].copy_from_slice(&self.seq.to_be_bytes());
            b[12] = ((self.hdr_len() / 4) as u8) << 4;
            b[13] = self.flags;
            b.extend_from_slice(&self.tcp_opts);
        } else {
            b = vec![0u8; 8];
            put16(&mut b, 4, (8 + self.payload.len()) as u16);
        }
        put16(&mut b, 0, self.sport);
        put16(&mut b, 2, self.dport);
        b.extend_from_slice(&self.payload);
        b
    }
}

/// The IPv4 pseudo-header of an L4 segment.
pub fn pseudo_v4(s: &[u8; 4], d: &[u8; 4], proto: u8, len: usize) -> Vec<u8> {
    let mut p = Vec::new();
    p.extend_from_slice(s);
    p.extend_from_slice(d);
    p.extend_from_slice(&[0, proto]);
    p.extend_from_slice(&(len as u16).to_be_bytes());
    p
}

/// The IPv6 pseudo-header of an upper-layer packet.
pub fn pseudo_v6(s: &[u8; 16], d: &[u8; 16], proto: u8, len: usize) -> Vec<u8> {
    let mut p = Vec::new();
    p.extend_from_slice(s);
    p.extend_from_slice(d);
    p.extend_from_slice(&(len as u32).to_be_bytes());
    p.extend_from_slice(&[0, 0, 0, proto]);
    p
}

/// A whole IPv4 TCP/UDP packet with correct IP and L4 checksums (a UDP
/// result of 0 sent as 0xffff).
pub fn v4_packet(ip: &V4, l4: &L4) -> Vec<u8> {
    let mut ip = ip.clone();
    ip.proto = l4.proto;
    let mut seg = l4.bytes();
    let ph = pseudo_v4(&ip.saddr, &ip.daddr, l4.proto, seg.len());
    let mut c = ref_csum(&[&ph, &seg]);
    if l4.proto == 17 && c == 0 {
        c = 0xffff;
    }
    put16(&mut seg, l4.check_offset(), c);
    let mut pkt = ip.header(seg.len());
    pkt.extend_from_slice(&seg);
    pkt
}

/// A fixed IPv6 header.
pub fn v6_fixed(next: u8, payload_len: usize, s: &[u8; 16], d: &[u8; 16], hop: u8) -> Vec<u8> {
    let mut h = vec![0u8; 40];
    h[0] = 0x60;
    put16(&mut h, 4, payload_len as u16);
    h[6] = next;
    h[7] = hop;
    h[8..24].copy_from_slice(s);
    h[24..40].copy_from_slice(d);
    h
}

/// An IPv6 extension header to generate: (type, length in 8-byte units
/// beyond the first 8, filler byte). Type 44 is a fragment header (always
/// 8 bytes, offset 0, M flag from the low bit of the filler).
pub type Ext = (u8, u8, u8);

/// A legal chain: at most one hop-by-hop (first), routing and destination
/// options in any order, at most one fragment header with offset 0; at
/// most 7 headers so the parser's limit of 8 reaches the upper layer.
pub fn ext_chain_strategy() -> impl Strategy<Value = Vec<Ext>> {
    (
        any::<bool>(),
        proptest::collection::vec(
            (prop_oneof![Just(43u8), Just(60u8)], 0u8..4, any::<u8>()),
            0..5,
        ),
        proptest::option::of((0usize..6, any::<u8>())),
        0u8..4,
        any::<u8>(),
    )
        .prop_map(|(hop, mut rest, frag, hl, hf)| {
            if let Some((at, f)) = frag {
                let at = at.min(rest.len());
                rest.insert(at, (44, 0, f));
            }
            if hop {
                rest.insert(0, (0, hl, hf));
            }
            rest
        })
}

/// The bytes of `chain` ending in `last` as the upper-layer protocol.
pub fn ext_bytes(chain: &[Ext], last: u8) -> Vec<u8> {
    let mut b = Vec::new();
    for (i, &(t, units, fill)) in chain.iter().enumerate() {
        let next = chain.get(i + 1).map_or(last, |e| e.0);
        if t == 44 {
            b.extend_from_slice(&[next, 0, 0, fill & 1, 1, 2, 3, 4]);
        } else {
            let len = (usize::from(units) + 1) * 8;
            let mut h = vec![fill; len];
            h[0] = next;
            h[1] = units;
            b.extend_from_slice(&h);
        }
    }
    b
}

/// A whole IPv6 packet: fixed header, `chain`, then `l4` with a correct
/// checksum over the IPv6 pseudo-header.
pub fn v6_packet(s: &[u8; 16], d: &[u8; 16], hop: u8, chain: &[Ext], l4: &L4) -> Vec<u8> {
    let ext = ext_bytes(chain, l4.proto);
    let mut seg = l4.bytes();
    let ph = pseudo_v6(s, d, l4.proto, seg.len());
    let mut c = ref_csum(&[&ph, &seg]);
    if l4.proto == 17 && c == 0 {
        c = 0xffff;
    }
    put16(&mut seg, l4.check_offset(), c);
    let first = chain.first().map_or(l4.proto, |e| e.0);
    let mut pkt = v6_fixed(first, ext.len() + seg.len(), s, d, hop);
    pkt.extend_from_slice(&ext);
    pkt.extend_from_slice(&seg);
    pkt
}

/// proptest's defaults (256 cases, `PROPTEST_CASES` overrides), with
/// failing cases saved next to the test file (`tests/prop_x.regressions`,
/// commit them) rather than in a directory outside the crate.
pub fn config() -> ProptestConfig {
    ProptestConfig {
        failure_persistence: Some(Box::new(
            proptest::test_runner::FileFailurePersistence::WithSource("regressions"),
        )),
        ..ProptestConfig::default()
    }
}
