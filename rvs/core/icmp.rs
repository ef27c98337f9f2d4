// SPDX-License-Identifier: GPL-2.0

//! ICMP errors about balanced connections: parsing the quoted packet and
//! translating the error for the other side of a NAT connection.
//!
//! C counterparts: `ip_vs_out_icmp`, `ip_vs_in_icmp` (ip_vs_core.c) and
//! `ip_vs_nat_icmp` (ip_vs_xmit.c).
//!
//! An ICMP error (destination unreachable, source quench, time exceeded)
//! quotes the IP header and at least the first 8 bytes of the packet that
//! caused it. When that packet belongs to a connection rvs forwards, the
//! error must reach the connection's other end with addresses it knows:
//!
//! - **Toward the client** ([`IcmpNat::ToClient`]): a real server (or a
//!   router between director and real server) reports on a request the
//!   director sent, `client -> real server`. The outer source and the
//!   quoted destination (address and port) become the virtual service's,
//!   so the client sees its own packet `client -> VIP` quoted, from the VIP.
//! - **Toward the real server** ([`IcmpNat::ToServer`]): the client's side
//!   reports on a reply, `VIP -> client`. The outer destination and the
//!   quoted source become the real server's.
//!
//! The outer and quoted IPv4 header checksums are recomputed, and the
//! quoted TCP/UDP checksum (when the quote holds it) and the ICMP checksum
//! are updated incrementally, so only the bytes up to the quoted checksum
//! field need to be linear ([`IcmpQuote::rewrite_len`]); the rest of the
//! quote is not touched. Every offset is checked: a truncated or malformed
//! quote is an [`IcmpSkip`], never a panic, and the caller lets the packet
//! pass untouched.
//!
//! IPv4 only; an ICMPv6 variant would parse the quoted IPv6 header
//! (`packet::parse_ipv6`'s rules) into the same [`IcmpQuote`] shape.

#![forbid(unsafe_code)]

use super::packet::{
    self, csum_replace2, csum_replace4, Ipv4Info, ParseError, IPPROTO_TCP, IPPROTO_UDP, IP_OFFSET,
};

/// IP protocol number of ICMP.
pub const IPPROTO_ICMP: u8 = 1;
/// ICMP destination unreachable.
pub const ICMP_DEST_UNREACH: u8 = 3;
/// ICMP source quench.
pub const ICMP_SOURCE_QUENCH: u8 = 4;
/// ICMP time exceeded.
pub const ICMP_TIME_EXCEEDED: u8 = 11;
/// Destination unreachable code: port unreachable.
pub const ICMP_PORT_UNREACH: u8 = 3;
/// Destination unreachable code: fragmentation needed and DF set.
pub const ICMP_FRAG_NEEDED: u8 = 4;

/// ICMP header length (type, code, checksum, 4 bytes of rest).
const ICMP_HLEN: usize = 8;
/// Longest IPv4 header.
const IPV4_MAX_HLEN: usize = 60;
/// Bytes of a quoted TCP header up to and including its checksum.
const TCP_CHECK_END: usize = packet::TCP_CHECK_OFFSET + 2;

/// Why an ICMP packet is left alone.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IcmpSkip {
    /// Not ICMP, or not one of the error types rvs translates.
    NotError,
    /// The outer packet is a fragment, or the quoted packet is not the
    /// first fragment (no ports to match).
    Fragment,
    /// The quoted packet is not TCP or UDP.
    OtherProto,
    /// Headers are truncated or malformed.
    Malformed(ParseError),
}

impl From<ParseError> for IcmpSkip {
    fn from(e: ParseError) -> Self {
        IcmpSkip::Malformed(e)
    }
}

/// Whether ICMP `icmp_type` is an error rvs relates to a connection (as
/// IPVS: destination unreachable, source quench, time exceeded).
pub fn is_error_type(icmp_type: u8) -> bool {
    matches!(
        icmp_type,
        ICMP_DEST_UNREACH | ICMP_SOURCE_QUENCH | ICMP_TIME_EXCEEDED
    )
}

/// How many bytes from the outer IPv4 header on the kernel should make
/// linear before [`parse_v4`]: enough for the ICMP header, the longest
/// quoted IPv4 header and a quoted TCP header up to its checksum, capped
/// at the packet's length.
pub fn linear_len_v4(outer_ihl: usize, pkt_len: usize) -> usize {
    outer_ihl
        .saturating_add(ICMP_HLEN + IPV4_MAX_HLEN + TCP_CHECK_END)
        .min(pkt_len)
}

/// The packet an ICMP error quotes. Offsets count from the outer IP
/// header; addresses are wire order, ports host order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IcmpQuote {
    /// ICMP type.
    pub icmp_type: u8,
    /// ICMP code.
    pub code: u8,
    /// Where the ICMP header starts.
    pub icmp_off: usize,
    /// Where the quoted IP header starts.
    pub inner_off: usize,
    /// Quoted IP header length.
    pub inner_ihl: usize,
    /// Quoted protocol (TCP or UDP).
    pub proto: u8,
    /// Quoted source address.
    pub saddr: [u8; 4],
    /// Quoted destination address.
    pub daddr: [u8; 4],
    /// Quoted source port.
    pub sport: u16,
    /// Quoted destination port.
    pub dport: u16,
    /// Where the quoted TCP/UDP checksum is, if the quote holds it.
    pub l4_check_at: Option<usize>,
    /// Bytes from the outer header on that a translation reads and writes;
    /// they must be linear and writable.
    pub rewrite_len: usize,
}

/// Parses an IPv4 ICMP error. `buf` holds the linear bytes from the outer
/// IP header on (ideally [`linear_len_v4`] of them); `outer` is the outer
/// header already parsed by `packet::parse_ipv4`. Fails without reading
/// past `buf` for anything that is not a first-fragment TCP/UDP packet
/// quoted by a whole, unfragmented ICMP error.
pub fn parse_v4(buf: &[u8], outer: &Ipv4Info) -> Result<IcmpQuote, IcmpSkip> {
    if outer.proto != IPPROTO_ICMP {
        return Err(IcmpSkip::NotError);
    }
    if outer.is_fragment {
        return Err(IcmpSkip::Fragment);
    }
    let icmp_off = outer.ihl_len;
    let icmp_type = *buf.get(icmp_off).ok_or(ParseError::Truncated)?;
    let code = *buf
        .get(icmp_off.saturating_add(1))
        .ok_or(ParseError::Truncated)?;
    if !is_error_type(icmp_type) {
        return Err(IcmpSkip::NotError);
    }
    let inner_off = icmp_off
        .checked_add(ICMP_HLEN)
        .ok_or(ParseError::Truncated)?;
    let inner = buf.get(inner_off..).ok_or(ParseError::Truncated)?;
    let vihl = *inner.first().ok_or(ParseError::Truncated)?;
    if vihl >> 4 != 4 {
        return Err(ParseError::BadVersion.into());
    }
    let inner_ihl = usize::from(vihl & 0x0f) * 4;
    if inner_ihl < 20 {
        return Err(ParseError::BadHeaderLen.into());
    }
    let ih = inner.get(..inner_ihl).ok_or(ParseError::Truncated)?;
    let frag = u16::from_be_bytes([
        *ih.get(6).ok_or(ParseError::Truncated)?,
        *ih.get(7).ok_or(ParseError::Truncated)?,
    ]);
    if frag & IP_OFFSET != 0 {
        return Err(IcmpSkip::Fragment);
    }
    // A first fragment (offset 0, MF set) still carries the ports.
    let proto = *ih.get(9).ok_or(ParseError::Truncated)?;
    if proto != IPPROTO_TCP && proto != IPPROTO_UDP {
        return Err(IcmpSkip::OtherProto);
    }
    let addr = |at: usize| -> Result<[u8; 4], ParseError> {
        let s = ih
            .get(at..at.saturating_add(4))
            .ok_or(ParseError::Truncated)?;
        let mut a = [0u8; 4];
        a.copy_from_slice(s);
        Ok(a)
    };
    let (saddr, daddr) = (addr(12)?, addr(16)?);
    let l4 = inner.get(inner_ihl..).ok_or(ParseError::Truncated)?;
    // Only the ports are certain to be quoted (8 bytes of the datagram).
    let (sport, dport) = match l4 {
        [a, b, c, d, ..] => (u16::from_be_bytes([*a, *b]), u16::from_be_bytes([*c, *d])),
        _ => return Err(ParseError::Truncated.into()),
    };
    let l4_off = inner_off.saturating_add(inner_ihl);
    let check_rel = if proto == IPPROTO_UDP {
        packet::UDP_CHECK_OFFSET
    } else {
        packet::TCP_CHECK_OFFSET
    };
    let l4_check_at =
        Some(l4_off.saturating_add(check_rel)).filter(|&at| at.saturating_add(2) <= buf.len());
    let rewrite_len = match l4_check_at {
        Some(at) => at.saturating_add(2),
        None => l4_off.saturating_add(4),
    };
    Ok(IcmpQuote {
        icmp_type,
        code,
        icmp_off,
        inner_off,
        inner_ihl,
        proto,
        saddr,
        daddr,
        sport,
        dport,
        l4_check_at,
        rewrite_len,
    })
}

/// A translation of an ICMP error about a NAT connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IcmpNat {
    /// About a request to a real server, going to the client: outer
    /// source and quoted destination become the virtual address and port.
    ToClient {
        /// Virtual address.
        vaddr: [u8; 4],
        /// Virtual port, host order.
        vport: u16,
    },
    /// About a reply to the client, going to the real server: outer
    /// destination and quoted source become the real server's.
    ToServer {
        /// Real server address.
        daddr: [u8; 4],
        /// Real server port, host order.
        dport: u16,
    },
}

fn word(buf: &[u8], at: usize) -> Result<u16, ParseError> {
    match (buf.get(at), buf.get(at.wrapping_add(1))) {
        (Some(h), Some(l)) => Ok(u16::from_be_bytes([*h, *l])),
        _ => Err(ParseError::Truncated),
    }
}

fn put_word(buf: &mut [u8], at: usize, v: u16) -> Result<(), ParseError> {
    buf.get_mut(at..at.wrapping_add(2))
        .ok_or(ParseError::Truncated)?
        .copy_from_slice(&v.to_be_bytes());
    Ok(())
}

/// Writes a 16-bit word inside the ICMP message and keeps the ICMP
/// checksum (`*icmp`) right. Every word rvs changes sits at an even
/// offset from the ICMP header, so the incremental update is exact.
fn set_word(buf: &mut [u8], at: usize, v: u16, icmp: &mut u16) -> Result<(), ParseError> {
    let old = word(buf, at)?;
    *icmp = csum_replace2(*icmp, old, v);
    put_word(buf, at, v)
}

fn set_addr(buf: &mut [u8], at: usize, a: [u8; 4], icmp: &mut u16) -> Result<(), ParseError> {
    set_word(buf, at, u16::from_be_bytes([a[0], a[1]]), icmp)?;
    set_word(
        buf,
        at.saturating_add(2),
        u16::from_be_bytes([a[2], a[3]]),
        icmp,
    )
}

/// Recomputes the IPv4 header checksum of the header at `off`, `len` long.
fn fix_ip_check(buf: &mut [u8], off: usize, len: usize) -> Result<u16, ParseError> {
    let h = buf
        .get(off..off.saturating_add(len))
        .ok_or(ParseError::Truncated)?;
    Ok(packet::ip_header_checksum(h))
}

/// Translates the ICMP error in `buf` (the linear, writable bytes from the
/// outer IP header on, at least [`IcmpQuote::rewrite_len`] of them) as
/// `nat` says. `q` must come from [`parse_v4`] on the same bytes. On error
/// nothing has been written.
pub fn nat_v4(buf: &mut [u8], q: &IcmpQuote, nat: IcmpNat) -> Result<(), IcmpSkip> {
    if buf.len() < q.rewrite_len {
        return Err(ParseError::Truncated.into());
    }
    let outer_ihl = q.icmp_off;
    let (outer_addr_at, inner_addr_at, port_at, new_addr, new_port): (usize, usize, usize, _, _) =
        match nat {
            IcmpNat::ToClient { vaddr, vport } => (12, 16, 2, vaddr, vport),
            IcmpNat::ToServer { daddr, dport } => (16, 12, 0, daddr, dport),
        };
    let inner_addr_at = q.inner_off.saturating_add(inner_addr_at);
    let port_at = q
        .inner_off
        .saturating_add(q.inner_ihl)
        .saturating_add(port_at);
    let icmp_check_at = q.icmp_off.saturating_add(2);
    // Read everything first, so a failure leaves the packet as it was.
    let mut icmp = word(buf, icmp_check_at)?;
    let old_inner_addr = u32::from_be_bytes(
        buf.get(inner_addr_at..inner_addr_at.saturating_add(4))
            .and_then(|s| s.try_into().ok())
            .ok_or(ParseError::Truncated)?,
    );
    let old_port = word(buf, port_at)?;
    let l4_check = match q.l4_check_at {
        Some(at) => Some((at, word(buf, at)?)),
        None => None,
    };
    if buf.len() < outer_ihl || buf.len() < q.inner_off.saturating_add(q.inner_ihl) {
        return Err(ParseError::Truncated.into());
    }

    // Outer header: address and checksum (not covered by the ICMP sum).
    buf.get_mut(outer_addr_at..outer_addr_at.saturating_add(4))
        .ok_or(ParseError::Truncated)?
        .copy_from_slice(&new_addr);
    put_word(buf, packet::IPV4_CHECK_OFFSET, 0)?;
    let c = fix_ip_check(buf, 0, outer_ihl)?;
    put_word(buf, packet::IPV4_CHECK_OFFSET, c)?;

    // Quoted header: address, then its checksum recomputed (IPVS's
    // ip_send_check on the quoted header).
    set_addr(buf, inner_addr_at, new_addr, &mut icmp)?;
    let inner_check_at = q.inner_off.saturating_add(packet::IPV4_CHECK_OFFSET);
    let old_inner_check = word(buf, inner_check_at)?;
    put_word(buf, inner_check_at, 0)?;
    let c = fix_ip_check(buf, q.inner_off, q.inner_ihl)?;
    put_word(buf, inner_check_at, old_inner_check)?;
    set_word(buf, inner_check_at, c, &mut icmp)?;

    // Quoted port, and the quoted TCP/UDP checksum over it and the
    // pseudo-header address (a UDP checksum of 0 means none and stays 0).
    set_word(buf, port_at, new_port, &mut icmp)?;
    if let Some((at, old)) = l4_check {
        let new_a = u32::from_be_bytes(new_addr);
        let new = if q.proto == IPPROTO_UDP {
            packet::udp_csum_replace2(
                packet::udp_csum_replace4(old, old_inner_addr, new_a),
                old_port,
                new_port,
            )
        } else {
            csum_replace2(
                csum_replace4(old, old_inner_addr, new_a),
                old_port,
                new_port,
            )
        };
        set_word(buf, at, new, &mut icmp)?;
    }
    put_word(buf, icmp_check_at, icmp)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::IP_MF;
    use std::vec;
    use std::vec::Vec;

    fn csum(data: &[u8]) -> u16 {
        packet::csum_fold(packet::csum_add(0, data))
    }

    fn ip_hdr(proto: u8, src: [u8; 4], dst: [u8; 4], total: usize) -> Vec<u8> {
        let mut h = vec![0x45, 0, 0, 0, 0x12, 0x34, 0x40, 0, 64, proto, 0, 0];
        h[2..4].copy_from_slice(&(total as u16).to_be_bytes());
        h.extend_from_slice(&src);
        h.extend_from_slice(&dst);
        let c = packet::ip_header_checksum(&h);
        h[10..12].copy_from_slice(&c.to_be_bytes());
        h
    }

    /// A whole UDP or TCP packet with correct checksums.
    fn l4_packet(proto: u8, src: ([u8; 4], u16), dst: ([u8; 4], u16), payload: &[u8]) -> Vec<u8> {
        let hl = if proto == IPPROTO_UDP { 8 } else { 20 };
        let len = hl + payload.len();
        let mut l4 = vec![0u8; hl];
        l4[0..2].copy_from_slice(&src.1.to_be_bytes());
        l4[2..4].copy_from_slice(&dst.1.to_be_bytes());
        if proto == IPPROTO_UDP {
            l4[4..6].copy_from_slice(&(len as u16).to_be_bytes());
        } else {
            l4[12] = 5 << 4;
            l4[13] = 0x18;
        }
        l4.extend_from_slice(payload);
        let mut pseudo = Vec::new();
        pseudo.extend_from_slice(&src.0);
        pseudo.extend_from_slice(&dst.0);
        pseudo.extend_from_slice(&[0, proto]);
        pseudo.extend_from_slice(&(len as u16).to_be_bytes());
        let c = packet::csum_fold(packet::csum_add(packet::csum_add(0, &pseudo), &l4));
        let at = if proto == IPPROTO_UDP { 6 } else { 16 };
        l4[at..at + 2].copy_from_slice(&packet::udp_csum_nonzero(c).to_be_bytes());
        let mut p = ip_hdr(proto, src.0, dst.0, 20 + len);
        p.extend_from_slice(&l4);
        p
    }

    /// An ICMP error from `from` to `to` quoting `quoted` (cut to `quote`
    /// bytes).
    fn icmp_error(
        from: [u8; 4],
        to: [u8; 4],
        t: u8,
        code: u8,
        quoted: &[u8],
        quote: usize,
    ) -> Vec<u8> {
        let q = &quoted[..quote.min(quoted.len())];
        let mut icmp = vec![t, code, 0, 0, 0, 0, 0x05, 0xdc];
        icmp.extend_from_slice(q);
        let c = csum(&icmp);
        icmp[2..4].copy_from_slice(&c.to_be_bytes());
        let mut p = ip_hdr(IPPROTO_ICMP, from, to, 20 + icmp.len());
        p.extend_from_slice(&icmp);
        p
    }

    fn outer(p: &[u8]) -> Ipv4Info {
        packet::parse_ipv4(p, p.len()).unwrap()
    }

    const CIP: [u8; 4] = [10, 0, 0, 2];
    const VIP: [u8; 4] = [10, 0, 100, 1];
    const RIP: [u8; 4] = [10, 0, 1, 1];

    #[test]
    fn port_unreachable_to_client() {
        for proto in [IPPROTO_UDP, IPPROTO_TCP] {
            let original = l4_packet(proto, (CIP, 40000), (VIP, 53), b"who?");
            let natted = l4_packet(proto, (CIP, 40000), (RIP, 5353), b"who?");
            let mut p = icmp_error(RIP, CIP, ICMP_DEST_UNREACH, ICMP_PORT_UNREACH, &natted, 576);
            let q = parse_v4(&p, &outer(&p)).unwrap();
            assert_eq!((q.proto, q.saddr, q.daddr), (proto, CIP, RIP));
            assert_eq!((q.sport, q.dport), (40000, 5353));
            assert!(q.l4_check_at.is_some());
            nat_v4(
                &mut p,
                &q,
                IcmpNat::ToClient {
                    vaddr: VIP,
                    vport: 53,
                },
            )
            .unwrap();
            // What the client gets: from the VIP, quoting its own packet.
            let expect = icmp_error(
                VIP,
                CIP,
                ICMP_DEST_UNREACH,
                ICMP_PORT_UNREACH,
                &original,
                576,
            );
            assert_eq!(p, expect, "proto {proto}");
            assert!(packet::ip_header_checksum_ok(&p[..20]));
            assert_eq!(csum(&p[20..]), 0);
        }
    }

    #[test]
    fn error_to_server_rewrites_quoted_source() {
        let reply = l4_packet(IPPROTO_TCP, (VIP, 80), (CIP, 40001), b"data");
        let as_sent = l4_packet(IPPROTO_TCP, (RIP, 8080), (CIP, 40001), b"data");
        let router = [10, 0, 0, 9];
        let mut p = icmp_error(router, VIP, ICMP_DEST_UNREACH, 1, &reply, 28);
        let q = parse_v4(&p, &outer(&p)).unwrap();
        // An 8-byte quote holds the ports but not the TCP checksum.
        assert_eq!(q.l4_check_at, None);
        assert_eq!(q.rewrite_len, 20 + 8 + 20 + 4);
        nat_v4(
            &mut p,
            &q,
            IcmpNat::ToServer {
                daddr: RIP,
                dport: 8080,
            },
        )
        .unwrap();
        let expect = icmp_error(router, RIP, ICMP_DEST_UNREACH, 1, &as_sent, 28);
        assert_eq!(p, expect);
    }

    #[test]
    fn udp_without_checksum_and_frag_needed() {
        let mut natted = l4_packet(IPPROTO_UDP, (CIP, 1), (RIP, 2), &[0u8; 100]);
        natted[26..28].copy_from_slice(&[0, 0]);
        let mut p = icmp_error(RIP, CIP, ICMP_DEST_UNREACH, ICMP_FRAG_NEEDED, &natted, 64);
        let q = parse_v4(&p, &outer(&p)).unwrap();
        assert_eq!(q.code, ICMP_FRAG_NEEDED);
        nat_v4(
            &mut p,
            &q,
            IcmpNat::ToClient {
                vaddr: VIP,
                vport: 3,
            },
        )
        .unwrap();
        let at = q.l4_check_at.unwrap();
        assert_eq!(&p[at..at + 2], &[0, 0]);
        assert_eq!(csum(&p[20..]), 0);
        assert!(packet::ip_header_checksum_ok(&p[28..48]));
        // The MTU in the ICMP header is untouched.
        assert_eq!(&p[26..28], &[0x05, 0xdc]);
    }

    #[test]
    fn not_translated() {
        let natted = l4_packet(IPPROTO_UDP, (CIP, 1), (RIP, 2), b"x");
        // Echo request/reply are not errors.
        for t in [0u8, 8, 5, 12] {
            let p = icmp_error(RIP, CIP, t, 0, &natted, 64);
            assert_eq!(parse_v4(&p, &outer(&p)), Err(IcmpSkip::NotError));
        }
        // Quoting ICMP.
        let inner_icmp = icmp_error(CIP, RIP, 8, 0, &[], 0);
        let p = icmp_error(RIP, CIP, 3, 1, &inner_icmp, 64);
        assert_eq!(parse_v4(&p, &outer(&p)), Err(IcmpSkip::OtherProto));
        // Quoting a non-first fragment.
        let mut frag = natted.clone();
        frag[6..8].copy_from_slice(&0x0010u16.to_be_bytes());
        let p = icmp_error(RIP, CIP, 3, 3, &frag, 64);
        assert_eq!(parse_v4(&p, &outer(&p)), Err(IcmpSkip::Fragment));
        // A fragmented error.
        let mut p = icmp_error(RIP, CIP, 3, 3, &natted, 64);
        p[6..8].copy_from_slice(&IP_MF.to_be_bytes());
        assert_eq!(parse_v4(&p, &outer(&p)), Err(IcmpSkip::Fragment));
        // Bad quoted version and header length.
        let mut bad = natted.clone();
        bad[0] = 0x65;
        let p = icmp_error(RIP, CIP, 3, 3, &bad, 64);
        assert_eq!(
            parse_v4(&p, &outer(&p)),
            Err(IcmpSkip::Malformed(ParseError::BadVersion))
        );
        bad[0] = 0x44;
        let p = icmp_error(RIP, CIP, 3, 3, &bad, 64);
        assert_eq!(
            parse_v4(&p, &outer(&p)),
            Err(IcmpSkip::Malformed(ParseError::BadHeaderLen))
        );
        // Not ICMP at all.
        assert_eq!(parse_v4(&natted, &outer(&natted)), Err(IcmpSkip::NotError));
    }

    #[test]
    fn every_truncation_is_refused_or_safe() {
        let natted = l4_packet(IPPROTO_TCP, (CIP, 40000), (RIP, 80), &[7u8; 40]);
        let full = icmp_error(RIP, CIP, 3, 3, &natted, 576);
        let o = outer(&full);
        for quote in 0..=natted.len() {
            let p = icmp_error(RIP, CIP, 3, 3, &natted, quote);
            let o = outer(&p);
            let got = parse_v4(&p, &o);
            if quote < 24 {
                assert!(
                    matches!(got, Err(IcmpSkip::Malformed(_))),
                    "quote {quote}: {got:?}"
                );
            } else {
                let q = got.unwrap();
                assert!(q.rewrite_len <= p.len());
                let mut m = p.clone();
                nat_v4(
                    &mut m,
                    &q,
                    IcmpNat::ToClient {
                        vaddr: VIP,
                        vport: 80,
                    },
                )
                .unwrap();
                assert_eq!(csum(&m[20..]), 0, "quote {quote}");
            }
        }
        // Shorter linear views than the packet: parse and rewrite refuse
        // what is missing, never index past it.
        for cut in 0..full.len() {
            let view = &full[..cut];
            if let Ok(q) = parse_v4(view, &o) {
                let mut m = view.to_vec();
                let r = nat_v4(
                    &mut m,
                    &q,
                    IcmpNat::ToServer {
                        daddr: RIP,
                        dport: 1,
                    },
                );
                assert!(r.is_ok() || m == view, "cut {cut}");
            }
            let q = parse_v4(&full, &o).unwrap();
            let mut m = view.to_vec();
            if nat_v4(
                &mut m,
                &q,
                IcmpNat::ToClient {
                    vaddr: VIP,
                    vport: 1,
                },
            )
            .is_err()
            {
                assert_eq!(m, view, "cut {cut}: a refused rewrite changed bytes");
            }
        }
        assert_eq!(linear_len_v4(20, 1000), 20 + 8 + 60 + 18);
        assert_eq!(linear_len_v4(20, 50), 50);
    }
}
