// SPDX-License-Identifier: GPL-2.0

//! Which packets the ingress fast path may take, judged from the IP header
//! alone (the `fastpath` setting; `Documentation/fastpath.md`).
//!
//! At a device's ingress hook the IP layer has not seen the packet yet:
//! nothing checked its header as `ip_rcv` / `ipv6_rcv` do. The fast path
//! takes only packets that the slow path would forward unchanged but for
//! the TTL and the addresses or the tunnel header, and leaves the rest to
//! the stack: IPv4 with a valid header checksum, no options, not a
//! fragment, a total length equal to the packet's (no link-layer padding
//! to trim); IPv6 with no extension header and a payload length equal to
//! the packet's; TCP or UDP; a TTL or hop limit that survives the hop
//! (else the slow path answers "time exceeded").

#![forbid(unsafe_code)]

use super::config::AddrFamily;
use super::packet::{IpInfo, IPPROTO_TCP, IPPROTO_UDP, IP_DF};

/// Bytes of the IP header the check reads: IPv4 without options, IPv6's
/// fixed header.
pub const fn header_len(af: AddrFamily) -> usize {
    match af {
        AddrFamily::Inet => 20,
        AddrFamily::Inet6 => 40,
    }
}

/// Whether a packet of family `af`, `pkt_len` bytes from its IP header on,
/// whose first bytes are `hdr`, may take the fast path.
pub fn ip_header_ok(af: AddrFamily, hdr: &[u8], pkt_len: usize) -> bool {
    match af {
        AddrFamily::Inet => ipv4_ok(hdr, pkt_len),
        AddrFamily::Inet6 => ipv6_ok(hdr, pkt_len),
    }
}

/// The IP fields of a packet that may take the fast path
/// ([`ip_header_ok`]), read from the same bytes; `None` for any other.
pub fn parse_ip(af: AddrFamily, hdr: &[u8], pkt_len: usize) -> Option<IpInfo> {
    if !ip_header_ok(af, hdr, pkt_len) {
        return None;
    }
    let (l4_offset, src, dst) = match af {
        AddrFamily::Inet => (20, hdr.get(12..16)?, hdr.get(16..20)?),
        AddrFamily::Inet6 => (40, hdr.get(8..24)?, hdr.get(24..40)?),
    };
    let mut saddr = [0u8; 16];
    let mut daddr = [0u8; 16];
    saddr.get_mut(..src.len())?.copy_from_slice(src);
    daddr.get_mut(..dst.len())?.copy_from_slice(dst);
    let (proto, frag_off_field) = match af {
        AddrFamily::Inet => (
            *hdr.get(9)?,
            u16::from_be_bytes([*hdr.get(6)?, *hdr.get(7)?]),
        ),
        AddrFamily::Inet6 => (*hdr.get(6)?, 0),
    };
    Some(IpInfo {
        af,
        proto,
        l4_offset,
        saddr,
        daddr,
        is_fragment: false,
        df: af == AddrFamily::Inet6 || frag_off_field & IP_DF != 0,
        frag_off_field,
    })
}

fn transport_ok(proto: u8) -> bool {
    proto == IPPROTO_TCP || proto == IPPROTO_UDP
}

fn ipv4_ok(hdr: &[u8], pkt_len: usize) -> bool {
    let Some(h) = hdr.get(..20) else {
        return false;
    };
    let Ok(&[vihl, _, len_hi, len_lo, _, _, frag_hi, frag_lo, ttl, proto, ..]) =
        <&[u8; 20]>::try_from(h)
    else {
        return false;
    };
    // Version 4, 20-byte header (options: slow path).
    vihl == 0x45
        && usize::from(u16::from_be_bytes([len_hi, len_lo])) == pkt_len
        // Neither more fragments nor an offset (DF may be set).
        && u16::from_be_bytes([frag_hi, frag_lo]) & 0x3fff == 0
        && ttl > 1
        && transport_ok(proto)
        && ipv4_header_csum_ok(h)
}

/// The IPv4 header checksum holds: the ones' complement sum of its 16-bit
/// words is all ones.
/// Written out on the header's ten words: every IPv4 packet the fast path
/// takes is checked.
fn ipv4_header_csum_ok(h: &[u8]) -> bool {
    let Ok(
        &[a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15, a16, a17, a18, a19],
    ) = <&[u8; 20]>::try_from(h)
    else {
        return false;
    };
    let w = |hi: u8, lo: u8| u32::from(u16::from_be_bytes([hi, lo]));
    // Ten 16-bit words cannot overflow a u32.
    let sum = [
        w(a0, a1),
        w(a2, a3),
        w(a4, a5),
        w(a6, a7),
        w(a8, a9),
        w(a10, a11),
        w(a12, a13),
        w(a14, a15),
        w(a16, a17),
        w(a18, a19),
    ]
    .iter()
    .fold(0u32, |s, &x| s.wrapping_add(x));
    let folded = (sum & 0xffff).wrapping_add(sum >> 16);
    (folded & 0xffff).wrapping_add(folded >> 16) == 0xffff
}

fn ipv6_ok(hdr: &[u8], pkt_len: usize) -> bool {
    let Some(h) = hdr.get(..40) else {
        return false;
    };
    let Ok(&[ver, _, _, _, len_hi, len_lo, next, hops, ..]) = <&[u8; 40]>::try_from(h) else {
        return false;
    };
    let payload = usize::from(u16::from_be_bytes([len_hi, len_lo]));
    ver >> 4 == 6
        // A jumbogram (payload length 0) has a hop-by-hop header anyway.
        && pkt_len.checked_sub(40) == Some(payload)
        && transport_ok(next)
        && hops > 1
        // Not to a multicast group (ff00::/8); neither end link-local
        // (fe80::/10), which ip6_forward never forwards.
        && h.get(24) != Some(&0xff)
        && !link_local(h.get(8..10))
        && !link_local(h.get(24..26))
}

/// Whether the first two bytes of an IPv6 address are in fe80::/10.
fn link_local(b: Option<&[u8]>) -> bool {
    matches!(b, Some(&[0xfe, x]) if x & 0xc0 == 0x80)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A valid IPv4/UDP header for a packet of `len` bytes.
    fn v4(len: u16) -> [u8; 20] {
        let mut h = [
            0x45, 0, 0, 0, 0x12, 0x34, 0x40, 0, 64, 17, 0, 0, 10, 0, 0, 2, 10, 0, 100, 1,
        ];
        h[2..4].copy_from_slice(&len.to_be_bytes());
        fix_csum(&mut h);
        h
    }

    fn fix_csum(h: &mut [u8; 20]) {
        h[10] = 0;
        h[11] = 0;
        let mut sum: u32 = h
            .chunks_exact(2)
            .map(|w| u32::from(u16::from_be_bytes([w[0], w[1]])))
            .sum();
        while sum > 0xffff {
            sum = (sum & 0xffff) + (sum >> 16);
        }
        h[10..12].copy_from_slice(&(!(sum as u16)).to_be_bytes());
    }

    fn v6(payload: u16) -> [u8; 40] {
        let mut h = [0u8; 40];
        h[0] = 0x60;
        h[4..6].copy_from_slice(&payload.to_be_bytes());
        h[6] = 6;
        h[7] = 64;
        h[8] = 0x20;
        h[24] = 0x20;
        h
    }

    #[test]
    fn plain_ipv4_passes() {
        assert!(ip_header_ok(AddrFamily::Inet, &v4(60), 60));
        // TCP too, DF set.
        let mut h = v4(60);
        h[9] = 6;
        fix_csum(&mut h);
        assert!(ip_header_ok(AddrFamily::Inet, &h, 60));
    }

    #[test]
    fn ipv4_refusals() {
        // Short header, wrong length (padding or truncation).
        assert!(!ip_header_ok(AddrFamily::Inet, &v4(60)[..19], 60));
        assert!(!ip_header_ok(AddrFamily::Inet, &v4(60), 64));
        assert!(!ip_header_ok(AddrFamily::Inet, &v4(60), 59));
        let cases: [(usize, u8); 7] = [
            (0, 0x46), // options
            (0, 0x65), // version 6
            (6, 0x20), // more fragments
            (7, 0x01), // fragment offset
            (8, 1),    // last hop
            (9, 132),  // SCTP
            (9, 1),    // ICMP
        ];
        for (i, v) in cases {
            let mut h = v4(60);
            h[i] = v;
            fix_csum(&mut h);
            assert!(!ip_header_ok(AddrFamily::Inet, &h, 60), "byte {i} = {v}");
        }
        // A damaged checksum.
        let mut h = v4(60);
        h[11] ^= 1;
        assert!(!ip_header_ok(AddrFamily::Inet, &h, 60));
    }

    #[test]
    fn parse_ip_matches_the_general_parser() {
        use crate::packet;
        let h = v4(60);
        let fast = parse_ip(AddrFamily::Inet, &h, 60).unwrap();
        let slow = packet::parse_ip(AddrFamily::Inet, &h, 60).unwrap();
        assert_eq!(fast, slow);
        let mut h6 = v6(40);
        h6[23] = 2;
        h6[39] = 1;
        let fast = parse_ip(AddrFamily::Inet6, &h6, 80).unwrap();
        let slow = packet::parse_ip(AddrFamily::Inet6, &h6, 80).unwrap();
        assert_eq!(fast, slow);
        assert!(parse_ip(AddrFamily::Inet6, &h6, 84).is_none());
    }

    #[test]
    fn ipv6_rules() {
        assert!(ip_header_ok(AddrFamily::Inet6, &v6(40), 80));
        assert!(!ip_header_ok(AddrFamily::Inet6, &v6(40), 84));
        assert!(!ip_header_ok(AddrFamily::Inet6, &v6(40)[..39], 80));
        let cases: [(usize, u8); 5] = [
            (0, 0x40),  // version 4
            (6, 0),     // hop-by-hop header
            (6, 44),    // fragment header
            (7, 1),     // last hop
            (24, 0xff), // multicast destination
        ];
        for (i, v) in cases {
            let mut h = v6(40);
            h[i] = v;
            assert!(!ip_header_ok(AddrFamily::Inet6, &h, 80), "byte {i} = {v}");
        }
        // Link-local source or destination (fe80::/10): fe80 and febf are,
        // fec0 is not.
        for (at, second, ok) in [(8, 0x80, false), (24, 0xbf, false), (8, 0xc0, true)] {
            let mut h = v6(40);
            h[at] = 0xfe;
            h[at + 1] = second;
            assert_eq!(
                ip_header_ok(AddrFamily::Inet6, &h, 80),
                ok,
                "byte {at}: fe{second:02x}"
            );
        }
    }
}
