// SPDX-License-Identifier: GPL-2.0

//! A packet's sending end (protocol, source address and port), read from
//! its first bytes without a full parse, for the NAT reply-source filter
//! at FORWARD (`hash::nat_source_slot`).
//!
//! Almost every packet a director forwards is from no NAT connection's
//! real server; a full parse of each one (IP header checks, the
//! transport header made linear, flags, sequence numbers) only to find
//! its slot empty made plain forwarding cost ~600 instructions more with
//! rvs loaded than with IPVS. Only the bytes the slot needs are read here;
//! anything unusual (a fragment, IPv6 extension headers, another
//! protocol, a truncated or malformed header) gives [`Peek::Unsure`] and
//! takes the full parse, which decides as before.

#![forbid(unsafe_code)]

use super::config::AddrFamily;
use super::packet::{IPPROTO_SCTP, IPPROTO_TCP, IPPROTO_UDP, IP_MF, IP_OFFSET};

/// The sending end of an unfragmented TCP, UDP or SCTP packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SourceEnd {
    /// IP protocol number (TCP, UDP or SCTP).
    pub proto: u8,
    /// Source address, 16-byte form (IPv4 in the first four bytes).
    pub addr: [u8; 16],
    /// Source port, host order.
    pub port: u16,
}

/// What [`peek`] made of the bytes it was given.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Peek {
    /// The packet's sending end.
    End(SourceEnd),
    /// The first `n` bytes are needed to tell (more than were given).
    Need(usize),
    /// Not a packet the quick look can judge: leave it to the full parse.
    Unsure,
}

/// Bytes [`peek`] needs at least: the fixed IP header of family `af`.
pub const fn min_len(af: AddrFamily) -> usize {
    match af {
        AddrFamily::Inet => 20,
        AddrFamily::Inet6 => 40,
    }
}

/// The sending end of the packet of family `af` whose first bytes (from
/// the IP header on) are `hdr`.
pub fn peek(af: AddrFamily, hdr: &[u8]) -> Peek {
    let (proto, src, l4) = match af {
        AddrFamily::Inet => {
            let Some(&[vihl, _, _, _, _, _, f0, f1, _, proto]) = hdr.get(..10) else {
                return Peek::Need(20);
            };
            let ihl = usize::from(vihl & 0x0f) * 4;
            if vihl >> 4 != 4 || ihl < 20 {
                return Peek::Unsure;
            }
            if u16::from_be_bytes([f0, f1]) & (IP_MF | IP_OFFSET) != 0 {
                return Peek::Unsure;
            }
            (proto, 12..16, ihl)
        }
        AddrFamily::Inet6 => {
            let Some(&[v, _, _, _, _, _, next]) = hdr.get(..7) else {
                return Peek::Need(40);
            };
            if v >> 4 != 6 {
                return Peek::Unsure;
            }
            (next, 8..24, 40)
        }
    };
    if !matches!(proto, IPPROTO_TCP | IPPROTO_UDP | IPPROTO_SCTP) {
        return Peek::Unsure;
    }
    // Every one of the three has the source port in its first two bytes.
    // At most 62: `l4` is 40 or a header length of at most 60.
    let port_end = l4.saturating_add(2);
    let (Some(a), Some(&[p0, p1])) = (hdr.get(src), hdr.get(l4..port_end)) else {
        return Peek::Need(port_end);
    };
    let mut addr = [0u8; 16];
    if let Some(to) = addr.get_mut(..a.len()) {
        to.copy_from_slice(a);
    }
    Peek::End(SourceEnd {
        proto,
        addr,
        port: u16::from_be_bytes([p0, p1]),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v4(proto: u8, frag: [u8; 2], ihl: u8) -> [u8; 28] {
        let mut h = [0u8; 28];
        h[0] = 0x40 | ihl;
        h[6..8].copy_from_slice(&frag);
        h[9] = proto;
        h[12..16].copy_from_slice(&[10, 0, 0, 7]);
        h[20..22].copy_from_slice(&8080u16.to_be_bytes());
        h
    }

    #[test]
    fn ipv4_end() {
        let h = v4(IPPROTO_UDP, [0x40, 0], 5);
        let mut addr = [0u8; 16];
        addr[..4].copy_from_slice(&[10, 0, 0, 7]);
        let want = SourceEnd {
            proto: IPPROTO_UDP,
            addr,
            port: 8080,
        };
        assert_eq!(peek(AddrFamily::Inet, &h), Peek::End(want));
        // The port after options: 4 more bytes asked for.
        let h = v4(IPPROTO_TCP, [0, 0], 6);
        assert_eq!(peek(AddrFamily::Inet, &h[..22]), Peek::Need(26));
        assert!(matches!(peek(AddrFamily::Inet, &h), Peek::End(e) if e.port == 0));
    }

    #[test]
    fn ipv4_unsure() {
        // Fragments (first or later), other protocols, bad version or IHL.
        for h in [
            v4(IPPROTO_UDP, [0x20, 0], 5),
            v4(IPPROTO_UDP, [0, 1], 5),
            v4(1, [0, 0], 5),
            v4(IPPROTO_TCP, [0, 0], 4),
        ] {
            assert_eq!(peek(AddrFamily::Inet, &h), Peek::Unsure);
        }
        let mut h = v4(IPPROTO_TCP, [0, 0], 5);
        h[0] = 0x65;
        assert_eq!(peek(AddrFamily::Inet, &h), Peek::Unsure);
        assert_eq!(peek(AddrFamily::Inet, &h[..9]), Peek::Need(20));
    }

    #[test]
    fn ipv6_end_and_unsure() {
        let mut h = [0u8; 44];
        h[0] = 0x60;
        h[6] = IPPROTO_SCTP;
        h[8..24].copy_from_slice(&[0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 9]);
        h[40..42].copy_from_slice(&443u16.to_be_bytes());
        let Peek::End(e) = peek(AddrFamily::Inet6, &h) else {
            panic!("no end");
        };
        assert_eq!((e.proto, e.port, e.addr[15]), (IPPROTO_SCTP, 443, 9));
        assert_eq!(peek(AddrFamily::Inet6, &h[..41]), Peek::Need(42));
        // An extension header (hop-by-hop, fragment) first: the full parse.
        for next in [0u8, 44, 58] {
            h[6] = next;
            assert_eq!(peek(AddrFamily::Inet6, &h), Peek::Unsure);
        }
    }

    #[test]
    fn same_end_as_the_full_parse() {
        use super::super::packet::{parse_ip, parse_l4_ports};
        let mut h = v4(IPPROTO_UDP, [0x40, 0], 5);
        h[2..4].copy_from_slice(&28u16.to_be_bytes());
        let ip = parse_ip(AddrFamily::Inet, &h, h.len()).expect("valid header");
        let ports = parse_l4_ports(&h[ip.l4_offset..], ip.proto).expect("ports");
        let Peek::End(e) = peek(AddrFamily::Inet, &h) else {
            panic!("no end");
        };
        assert_eq!((e.proto, e.addr, e.port), (ip.proto, ip.saddr, ports.src));
    }

    #[test]
    fn never_reads_past_the_slice() {
        let h = v4(IPPROTO_UDP, [0, 0], 15);
        for n in 0..h.len() {
            let _ = peek(AddrFamily::Inet, &h[..n]);
            let _ = peek(AddrFamily::Inet6, &h[..n]);
        }
    }
}
