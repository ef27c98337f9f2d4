// SPDX-License-Identifier: GPL-2.0

//! ICMP errors about balanced connections: parsing the quoted packet and
//! translating the error for the other side of a NAT connection.
//!
//! C counterparts: `ip_vs_out_icmp`, `ip_vs_in_icmp`, `ip_vs_out_icmp_v6`,
//! `ip_vs_in_icmp_v6` (ip_vs_core.c) and `ip_vs_nat_icmp`,
//! `ip_vs_nat_icmp_v6` (ip_vs_xmit.c).
//!
//! An ICMP error (destination unreachable, source quench, time exceeded)
//! quotes the IP header and at least the first 8 bytes of the packet that
//! caused it; an ICMPv6 error (destination unreachable, packet too big,
//! time exceeded, parameter problem) as much of it as fits 1280 bytes. When that packet belongs to a connection rvs forwards, the
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
//! IPv4 ([`parse_v4`], [`nat_v4`]): the outer and quoted IPv4 header
//! checksums are recomputed, and the quoted TCP/UDP checksum (when the
//! quote holds it) and the ICMP checksum are updated incrementally.
//!
//! IPv6 ([`parse_v6`], [`nat_v6`]): the quoted header chain is walked by
//! `packet::parse_ipv6` itself (same extension-header rules and limits);
//! IPv6 headers have no checksum, but the ICMPv6 checksum covers a
//! pseudo-header with the outer addresses, so the outer address change is
//! folded into it like every changed word of the message. The update is
//! incremental rather than a recomputation over the whole message because
//! (1) only the bytes up to the quoted checksum field need to be linear
//! ([`IcmpQuote::rewrite_len`]), the rest of the quote is never read;
//! (2) an error that arrived corrupted stays detectably corrupted instead
//! of being blessed with a fresh checksum; (3) the sum over the whole
//! packet does not change (every change is balanced by a checksum field
//! inside the packet, outer addresses included, via the pseudo-header), so
//! a receive checksum (`CHECKSUM_COMPLETE`) stays valid. Every changed
//! word sits at an even offset from the ICMP header (IPv6 headers and
//! extension headers are multiples of 8 bytes), so the update is exact.
//!
//! Every offset is checked: a truncated or malformed quote is an
//! [`IcmpSkip`], never a panic, and the caller lets the packet pass
//! untouched.

#![forbid(unsafe_code)]

use super::config::AddrFamily;
use super::packet::{
    self, csum_replace16, csum_replace2, csum_replace4, Ipv4Info, Ipv6Info, ParseError,
    IPPROTO_SCTP, IPPROTO_TCP, IPPROTO_UDP, IP_OFFSET,
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
/// Time exceeded code: TTL exceeded in transit.
pub const ICMP_EXC_TTL: u8 = 0;

/// IP protocol number of ICMPv6.
pub const IPPROTO_ICMPV6: u8 = 58;
/// ICMPv6 destination unreachable.
pub const ICMPV6_DEST_UNREACH: u8 = 1;
/// ICMPv6 packet too big.
pub const ICMPV6_PKT_TOOBIG: u8 = 2;
/// ICMPv6 time exceeded.
pub const ICMPV6_TIME_EXCEED: u8 = 3;
/// ICMPv6 parameter problem.
pub const ICMPV6_PARAMPROB: u8 = 4;
/// ICMPv6 destination unreachable code: port unreachable.
pub const ICMPV6_PORT_UNREACH: u8 = 4;
/// ICMPv6 time exceeded code: hop limit exceeded in transit.
pub const ICMPV6_EXC_HOPLIMIT: u8 = 0;

/// ICMP header length (type, code, checksum, 4 bytes of rest).
pub(crate) const ICMP_HLEN: usize = 8;
/// Longest IPv4 header.
const IPV4_MAX_HLEN: usize = 60;
/// IPv6 fixed header length.
const IPV6_HLEN: usize = 40;
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

/// Whether ICMPv6 `icmp_type` is an error rvs relates to a connection:
/// destination unreachable, packet too big, time exceeded, parameter
/// problem. Informational messages (128 and up) and unassigned error
/// types are not.
pub fn is_error_type_v6(icmp_type: u8) -> bool {
    matches!(
        icmp_type,
        ICMPV6_DEST_UNREACH | ICMPV6_PKT_TOOBIG | ICMPV6_TIME_EXCEED | ICMPV6_PARAMPROB
    )
}

/// How many bytes from the outer IPv6 header on the kernel should make
/// linear before a first [`parse_v6`]: the ICMPv6 header, a quoted fixed
/// IPv6 header and a quoted TCP header up to its checksum, capped at
/// `total_len` (the outer packet's length). Quoted extension headers ask
/// for more through [`ParseError::NeedMore`].
pub fn linear_len_v6(outer_l4: usize, total_len: usize) -> usize {
    outer_l4
        .saturating_add(ICMP_HLEN + IPV6_HLEN + TCP_CHECK_END)
        .min(total_len)
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
/// header; addresses are wire order in rvs's 16-byte form (IPv4 in the
/// first 4 bytes), ports host order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IcmpQuote {
    /// Family of the error (ICMP or ICMPv6) and of the quoted packet.
    pub af: AddrFamily,
    /// ICMP type.
    pub icmp_type: u8,
    /// ICMP code.
    pub code: u8,
    /// Where the ICMP header starts.
    pub icmp_off: usize,
    /// Where the quoted IP header starts.
    pub inner_off: usize,
    /// Quoted IP header length (IPv6: with its extension headers), where
    /// the quoted TCP/UDP header starts from `inner_off`.
    pub inner_ihl: usize,
    /// Quoted protocol (TCP or UDP).
    pub proto: u8,
    /// Quoted source address.
    pub saddr: [u8; 16],
    /// Quoted destination address.
    pub daddr: [u8; 16],
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
    quote_v4(buf, icmp_type, code, icmp_off, inner_off)
}

/// Parses the IPv4 packet quoted at `inner_off` of `buf` by an ICMP error
/// of `icmp_type`/`code` whose header is at `icmp_off` (for [`parse_v4`],
/// and for errors about the director's own tunnel packets, where the
/// client's packet sits inside the quoted tunnel packet).
pub(crate) fn quote_v4(
    buf: &[u8],
    icmp_type: u8,
    code: u8,
    icmp_off: usize,
    inner_off: usize,
) -> Result<IcmpQuote, IcmpSkip> {
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
    if !quotable(proto) {
        return Err(IcmpSkip::OtherProto);
    }
    let addr = |at: usize| -> Result<[u8; 16], ParseError> {
        let s = ih
            .get(at..at.saturating_add(4))
            .ok_or(ParseError::Truncated)?;
        let mut a = [0u8; 16];
        a[..4].copy_from_slice(s);
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
    let l4_check_at = check_offset(proto)
        .map(|rel| l4_off.saturating_add(rel))
        .filter(|&at| at.saturating_add(2) <= buf.len());
    let rewrite_len = match l4_check_at {
        Some(at) => at.saturating_add(2),
        None => l4_off.saturating_add(4),
    };
    Ok(IcmpQuote {
        af: AddrFamily::Inet,
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

/// Whether errors about packets of protocol `proto` are translated: TCP,
/// UDP and SCTP, whose ports lead their headers (IPVS's `ip_vs_nat_icmp`).
fn quotable(proto: u8) -> bool {
    proto == IPPROTO_TCP || proto == IPPROTO_UDP || proto == IPPROTO_SCTP
}

/// Where a quoted transport header's checksum lies, for those kept right
/// by a translation. SCTP's CRC32c covers no address, and a quote seldom
/// holds the whole packet it is over: its ports change and the stale CRC
/// stays, as in IPVS (the receiver matches errors by ports and tag).
fn check_offset(proto: u8) -> Option<usize> {
    match proto {
        IPPROTO_TCP => Some(packet::TCP_CHECK_OFFSET),
        IPPROTO_UDP => Some(packet::UDP_CHECK_OFFSET),
        _ => None,
    }
}

/// Checks that `end` bytes from the outer header on are there: within the
/// ICMPv6 message (`total`, else the quote is cut: `Truncated`) and within
/// the linear bytes `buf` (else `NeedMore`).
fn need_v6(buf: &[u8], total: usize, end: usize) -> Result<(), ParseError> {
    if end > total {
        Err(ParseError::Truncated)
    } else if end > buf.len() {
        Err(ParseError::NeedMore { needed: end })
    } else {
        Ok(())
    }
}

/// Parses an ICMPv6 error. `buf` holds the linear bytes from the outer
/// IPv6 header on (at first [`linear_len_v6`] of them); `outer` is the
/// outer header chain already parsed by `packet::parse_ipv6`. Offsets are
/// bounded by `outer.total_len`, the end of the ICMPv6 message.
///
/// The quoted header chain is walked by `packet::parse_ipv6` (its
/// extension-header rules and limits); a quoted non-first fragment is
/// [`IcmpSkip::Fragment`]. When the quote holds more than `buf` does (an
/// extension header, the ports or the quoted TCP/UDP checksum lie beyond
/// it), the answer is `Malformed(NeedMore { needed })` with `needed`
/// counted from the outer header: make that many bytes linear and parse
/// again. `needed` grows with each answer and never exceeds
/// `outer.total_len`.
pub fn parse_v6(buf: &[u8], outer: &Ipv6Info) -> Result<IcmpQuote, IcmpSkip> {
    if outer.proto != IPPROTO_ICMPV6 {
        return Err(IcmpSkip::NotError);
    }
    if outer.is_fragment {
        return Err(IcmpSkip::Fragment);
    }
    let total = outer.total_len;
    let icmp_off = outer.l4_offset;
    need_v6(buf, total, icmp_off.saturating_add(2))?;
    let icmp_type = *buf.get(icmp_off).ok_or(ParseError::Truncated)?;
    let code = *buf
        .get(icmp_off.saturating_add(1))
        .ok_or(ParseError::Truncated)?;
    if !is_error_type_v6(icmp_type) {
        return Err(IcmpSkip::NotError);
    }
    let inner_off = icmp_off.saturating_add(ICMP_HLEN);
    need_v6(buf, total, inner_off)?;
    // The quote as far as it is linear and inside the message; the quoted
    // packet's own lengths are checked against its payload length, and
    // anything past the quote is asked for (NeedMore) or found cut.
    let quote = buf
        .get(inner_off..buf.len().min(total))
        .ok_or(ParseError::Truncated)?;
    let inner = match packet::parse_ipv6(quote, usize::MAX) {
        Ok(i) => i,
        Err(ParseError::NeedMore { needed }) => {
            let end = inner_off.saturating_add(needed);
            need_v6(buf, total, end)?;
            // Inside `buf` already: parse_ipv6 only asks for more than it
            // was given, so this is unreachable; refuse rather than loop.
            return Err(ParseError::Truncated.into());
        }
        Err(e) => return Err(e.into()),
    };
    if inner.frag_offset != 0 {
        return Err(IcmpSkip::Fragment);
    }
    // A first fragment (offset 0, M set) still carries the ports.
    if !quotable(inner.proto) {
        return Err(IcmpSkip::OtherProto);
    }
    let inner_ihl = inner.l4_offset;
    let l4_off = inner_off.saturating_add(inner_ihl);
    need_v6(buf, total, l4_off.saturating_add(4))?;
    let sport = word(buf, l4_off)?;
    let dport = word(buf, l4_off.saturating_add(2))?;
    // The quoted checksum is kept right whenever the quote holds it, so it
    // must be linear then.
    let l4_check_at = match check_offset(inner.proto).map(|rel| l4_off.saturating_add(rel)) {
        Some(at) if at.saturating_add(2) <= total => {
            need_v6(buf, total, at.saturating_add(2))?;
            Some(at)
        }
        _ => None,
    };
    let rewrite_len = match l4_check_at {
        Some(at) => at.saturating_add(2),
        None => l4_off.saturating_add(4),
    };
    Ok(IcmpQuote {
        af: AddrFamily::Inet6,
        icmp_type,
        code,
        icmp_off,
        inner_off,
        inner_ihl,
        proto: inner.proto,
        saddr: inner.saddr,
        daddr: inner.daddr,
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
        /// Virtual address (16-byte form).
        vaddr: [u8; 16],
        /// Virtual port, host order.
        vport: u16,
    },
    /// About a reply to the client, going to the real server: outer
    /// destination and quoted source become the real server's.
    ToServer {
        /// Real server address (16-byte form).
        daddr: [u8; 16],
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
    if q.af != AddrFamily::Inet {
        return Err(IcmpSkip::NotError);
    }
    let outer_ihl = q.icmp_off;
    let (outer_addr_at, inner_addr_at, port_at, new_addr16, new_port): (usize, usize, usize, _, _) =
        match nat {
            IcmpNat::ToClient { vaddr, vport } => (12, 16, 2, vaddr, vport),
            IcmpNat::ToServer { daddr, dport } => (16, 12, 0, daddr, dport),
        };
    let new_addr = [new_addr16[0], new_addr16[1], new_addr16[2], new_addr16[3]];
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

/// Reads the 16 bytes at `at`.
fn addr16_at(buf: &[u8], at: usize) -> Result<[u8; 16], ParseError> {
    buf.get(at..at.saturating_add(16))
        .and_then(|s| s.try_into().ok())
        .ok_or(ParseError::Truncated)
}

/// Translates the ICMPv6 error in `buf` (the linear, writable bytes from
/// the outer IPv6 header on, at least [`IcmpQuote::rewrite_len`] of them)
/// as `nat` says. `q` must come from [`parse_v6`] on the same bytes. On
/// error nothing has been written.
///
/// Changed: the outer source (toward the client) or destination (toward
/// the real server), the quoted destination or source address and port,
/// the quoted TCP/UDP checksum when quoted (its pseudo-header holds the
/// quoted addresses), and the ICMPv6 checksum, updated for each of those
/// words, the outer address included (it is in the ICMPv6 pseudo-header).
/// The rest, the Packet Too Big MTU among it, is left as it is.
pub fn nat_v6(buf: &mut [u8], q: &IcmpQuote, nat: IcmpNat) -> Result<(), IcmpSkip> {
    if q.af != AddrFamily::Inet6 {
        return Err(IcmpSkip::NotError);
    }
    if buf.len() < q.rewrite_len {
        return Err(ParseError::Truncated.into());
    }
    let (src_at, dst_at, _) = packet::addr_offsets(AddrFamily::Inet6);
    let (outer_addr_at, inner_addr_at, port_at, new_addr, new_port) = match nat {
        IcmpNat::ToClient { vaddr, vport } => (src_at, dst_at, 2, vaddr, vport),
        IcmpNat::ToServer { daddr, dport } => (dst_at, src_at, 0, daddr, dport),
    };
    let inner_addr_at = q.inner_off.saturating_add(inner_addr_at);
    let port_at = q
        .inner_off
        .saturating_add(q.inner_ihl)
        .saturating_add(port_at);
    let icmp_check_at = q.icmp_off.saturating_add(2);
    // Read everything first, so a failure leaves the packet as it was.
    let icmp_old = word(buf, icmp_check_at)?;
    let old_outer = addr16_at(buf, outer_addr_at)?;
    let old_inner = addr16_at(buf, inner_addr_at)?;
    let old_port = word(buf, port_at)?;
    let l4_check = match q.l4_check_at {
        Some(at) => Some((at, word(buf, at)?)),
        None => None,
    };
    // Every write below is inside `rewrite_len`, checked above: the outer
    // addresses (40 <= icmp_off), the quoted header (before the port) and
    // the port and checksum (which end at `rewrite_len` at most).
    let new_l4 = l4_check.map(|(at, old)| {
        let c = csum_replace2(
            csum_replace16(old, &old_inner, &new_addr),
            old_port,
            new_port,
        );
        // A UDP checksum over IPv6 is mandatory and never sent as 0.
        let c = if q.proto == IPPROTO_UDP {
            packet::udp_csum_nonzero(c)
        } else {
            c
        };
        (at, old, c)
    });
    let mut icmp = csum_replace16(icmp_old, &old_outer, &new_addr);
    icmp = csum_replace16(icmp, &old_inner, &new_addr);
    icmp = csum_replace2(icmp, old_port, new_port);
    if let Some((_, old, new)) = new_l4 {
        icmp = csum_replace2(icmp, old, new);
    }
    buf.get_mut(outer_addr_at..outer_addr_at.saturating_add(16))
        .ok_or(ParseError::Truncated)?
        .copy_from_slice(&new_addr);
    buf.get_mut(inner_addr_at..inner_addr_at.saturating_add(16))
        .ok_or(ParseError::Truncated)?
        .copy_from_slice(&new_addr);
    put_word(buf, port_at, new_port)?;
    if let Some((at, _, new)) = new_l4 {
        put_word(buf, at, new)?;
    }
    put_word(buf, icmp_check_at, icmp)?;
    Ok(())
}

/// [`nat_v4`] or [`nat_v6`], as the quote's family says.
pub fn nat(buf: &mut [u8], q: &IcmpQuote, nat: IcmpNat) -> Result<(), IcmpSkip> {
    match q.af {
        AddrFamily::Inet => nat_v4(buf, q, nat),
        AddrFamily::Inet6 => nat_v6(buf, q, nat),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::IP_MF;
    use std::vec;
    use std::vec::Vec;

    fn a16(a: [u8; 4]) -> [u8; 16] {
        let mut x = [0u8; 16];
        x[..4].copy_from_slice(&a);
        x
    }

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
            assert_eq!((q.proto, q.saddr, q.daddr), (proto, a16(CIP), a16(RIP)));
            assert_eq!((q.sport, q.dport), (40000, 5353));
            assert!(q.l4_check_at.is_some());
            nat_v4(
                &mut p,
                &q,
                IcmpNat::ToClient {
                    vaddr: a16(VIP),
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
    fn an_error_about_sctp_gets_its_ports_translated() {
        // An SCTP INIT after NAT (client -> real server:8080), quoted whole.
        let init = |dst: [u8; 4], dport: u16| {
            let mut l4 = vec![0u8; 32];
            l4[0..2].copy_from_slice(&40000u16.to_be_bytes());
            l4[2..4].copy_from_slice(&dport.to_be_bytes());
            l4[8..12].copy_from_slice(&[0xde, 0xad, 0xbe, 0xef]);
            l4[12] = 1;
            let mut p = ip_hdr(IPPROTO_SCTP, CIP, dst, 20 + l4.len());
            p.extend_from_slice(&l4);
            p
        };
        let mut p = icmp_error(RIP, CIP, ICMP_DEST_UNREACH, 1, &init(RIP, 8080), 576);
        let q = parse_v4(&p, &outer(&p)).unwrap();
        assert_eq!((q.proto, q.sport, q.dport), (IPPROTO_SCTP, 40000, 8080));
        assert_eq!(q.l4_check_at, None);
        nat_v4(
            &mut p,
            &q,
            IcmpNat::ToClient {
                vaddr: a16(VIP),
                vport: 80,
            },
        )
        .unwrap();
        // Addresses and port as the client sent them; the quoted CRC is
        // left as it was.
        let expect = icmp_error(VIP, CIP, ICMP_DEST_UNREACH, 1, &init(VIP, 80), 576);
        assert_eq!(p, expect);
        assert_eq!(csum(&p[20..]), 0);
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
                daddr: a16(RIP),
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
                vaddr: a16(VIP),
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
                        vaddr: a16(VIP),
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
                        daddr: a16(RIP),
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
                    vaddr: a16(VIP),
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

    // ---- ICMPv6 -----------------------------------------------------------

    const CIP6: [u8; 16] = [0x20, 1, 0xd, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2];
    const VIP6: [u8; 16] = [0x20, 1, 0xd, 0xb8, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1];
    const RIP6: [u8; 16] = [0x20, 1, 0xd, 0xb8, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1];
    const RTR6: [u8; 16] = [0x20, 1, 0xd, 0xb8, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2];

    /// Sum of an upper-layer message over IPv6 with its pseudo-header.
    fn sum6(src: &[u8; 16], dst: &[u8; 16], proto: u8, msg: &[u8]) -> u16 {
        let mut pseudo = Vec::new();
        pseudo.extend_from_slice(src);
        pseudo.extend_from_slice(dst);
        pseudo.extend_from_slice(&(msg.len() as u32).to_be_bytes());
        pseudo.extend_from_slice(&[0, 0, 0, proto]);
        packet::csum_fold(packet::csum_add(packet::csum_add(0, &pseudo), msg))
    }

    /// An IPv6 header followed by extension headers `ext` (each
    /// `(next header number it is, bytes)`, in order) and `payload` of
    /// protocol `proto`.
    fn ip6(
        src: [u8; 16],
        dst: [u8; 16],
        ext: &[(u8, Vec<u8>)],
        proto: u8,
        payload: &[u8],
    ) -> Vec<u8> {
        let mut chain: Vec<u8> = Vec::new();
        for (i, (_, bytes)) in ext.iter().enumerate() {
            let mut b = bytes.clone();
            b[0] = ext.get(i + 1).map_or(proto, |e| e.0);
            chain.extend_from_slice(&b);
        }
        let first = ext.first().map_or(proto, |e| e.0);
        let plen = chain.len() + payload.len();
        let mut h = vec![0x60, 0, 0, 0];
        h.extend_from_slice(&(plen as u16).to_be_bytes());
        h.extend_from_slice(&[first, 64]);
        h.extend_from_slice(&src);
        h.extend_from_slice(&dst);
        h.extend_from_slice(&chain);
        h.extend_from_slice(payload);
        h
    }

    /// A destination options header (8 bytes, PadN).
    fn dstopts() -> (u8, Vec<u8>) {
        (60, vec![0, 0, 1, 4, 0, 0, 0, 0])
    }

    /// A fragment header with offset `off` (8-byte units) and M flag `more`.
    fn frag6(off: u16, more: bool) -> (u8, Vec<u8>) {
        let f = (off << 3) | u16::from(more);
        let mut b = vec![0, 0];
        b.extend_from_slice(&f.to_be_bytes());
        b.extend_from_slice(&[0, 0, 0, 7]);
        (44, b)
    }

    /// A TCP or UDP packet over IPv6 with correct checksums.
    fn l4_packet6(
        proto: u8,
        src: ([u8; 16], u16),
        dst: ([u8; 16], u16),
        ext: &[(u8, Vec<u8>)],
        payload: &[u8],
    ) -> Vec<u8> {
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
        let c = sum6(&src.0, &dst.0, proto, &l4);
        let at = if proto == IPPROTO_UDP { 6 } else { 16 };
        l4[at..at + 2].copy_from_slice(&packet::udp_csum_nonzero(c).to_be_bytes());
        ip6(src.0, dst.0, ext, proto, &l4)
    }

    /// An ICMPv6 error from `from` to `to` with `info` in its second word
    /// (the MTU of a packet too big), quoting `quoted` cut to `quote` bytes.
    fn icmp6_error(
        from: [u8; 16],
        to: [u8; 16],
        t: u8,
        code: u8,
        info: u32,
        quoted: &[u8],
        quote: usize,
    ) -> Vec<u8> {
        let mut m = vec![t, code, 0, 0];
        m.extend_from_slice(&info.to_be_bytes());
        m.extend_from_slice(&quoted[..quote.min(quoted.len())]);
        let c = sum6(&from, &to, IPPROTO_ICMPV6, &m);
        m[2..4].copy_from_slice(&c.to_be_bytes());
        ip6(from, to, &[], IPPROTO_ICMPV6, &m)
    }

    fn outer6(p: &[u8]) -> Ipv6Info {
        packet::parse_ipv6(p, p.len()).unwrap()
    }

    /// Whether the ICMPv6 message of `p` (no outer extension headers)
    /// carries a correct checksum.
    fn icmp6_ok(p: &[u8]) -> bool {
        let src: [u8; 16] = p[8..24].try_into().unwrap();
        let dst: [u8; 16] = p[24..40].try_into().unwrap();
        sum6(&src, &dst, IPPROTO_ICMPV6, &p[40..]) == 0
    }

    /// Parses as the module does: from [`linear_len_v6`] bytes on, making
    /// more linear whenever asked.
    fn parse6_growing(p: &[u8]) -> Result<IcmpQuote, IcmpSkip> {
        let o = outer6(p);
        let mut want = linear_len_v6(o.l4_offset, o.total_len);
        let mut rounds = 0;
        loop {
            rounds += 1;
            assert!(rounds < 20, "parse_v6 keeps asking for more");
            match parse_v6(&p[..want], &o) {
                Err(IcmpSkip::Malformed(ParseError::NeedMore { needed })) => {
                    assert!(needed > want && needed <= o.total_len, "{needed} {want}");
                    want = needed;
                }
                r => return r,
            }
        }
    }

    #[test]
    fn v6_port_unreachable_to_client() {
        for proto in [IPPROTO_UDP, IPPROTO_TCP] {
            let original = l4_packet6(proto, (CIP6, 40000), (VIP6, 53), &[], b"who?");
            let natted = l4_packet6(proto, (CIP6, 40000), (RIP6, 5353), &[], b"who?");
            let mut p = icmp6_error(
                RIP6,
                CIP6,
                ICMPV6_DEST_UNREACH,
                ICMPV6_PORT_UNREACH,
                0,
                &natted,
                1232,
            );
            assert!(icmp6_ok(&p));
            let q = parse6_growing(&p).unwrap();
            assert_eq!(q.af, AddrFamily::Inet6);
            assert_eq!((q.proto, q.saddr, q.daddr), (proto, CIP6, RIP6));
            assert_eq!((q.sport, q.dport, q.inner_ihl), (40000, 5353, 40));
            assert!(q.l4_check_at.is_some());
            nat(
                &mut p,
                &q,
                IcmpNat::ToClient {
                    vaddr: VIP6,
                    vport: 53,
                },
            )
            .unwrap();
            // From the VIP, quoting the client's own packet, every
            // checksum right (the expected packet is built from scratch).
            let expect = icmp6_error(
                VIP6,
                CIP6,
                ICMPV6_DEST_UNREACH,
                ICMPV6_PORT_UNREACH,
                0,
                &original,
                1232,
            );
            assert_eq!(p, expect, "proto {proto}");
            assert!(icmp6_ok(&p));
        }
    }

    #[test]
    fn v6_too_big_keeps_mtu_through_extension_headers() {
        // A first fragment behind a destination options header: ports and
        // checksum are there; the MTU is the router's and stays.
        let ext = [dstopts(), frag6(0, true)];
        let original = l4_packet6(IPPROTO_TCP, (CIP6, 40000), (VIP6, 80), &ext, &[1u8; 1300]);
        let natted = l4_packet6(IPPROTO_TCP, (CIP6, 40000), (RIP6, 8080), &ext, &[1u8; 1300]);
        let mut p = icmp6_error(RTR6, CIP6, ICMPV6_PKT_TOOBIG, 0, 1280, &natted, 1232);
        let q = parse6_growing(&p).unwrap();
        assert_eq!(q.inner_ihl, 40 + 16);
        assert_eq!(q.l4_check_at, Some(40 + 8 + 56 + 16));
        nat_v6(
            &mut p,
            &q,
            IcmpNat::ToClient {
                vaddr: VIP6,
                vport: 80,
            },
        )
        .unwrap();
        let expect = icmp6_error(VIP6, CIP6, ICMPV6_PKT_TOOBIG, 0, 1280, &original, 1232);
        assert_eq!(p, expect);
        assert_eq!(&p[44..48], &1280u32.to_be_bytes());
    }

    #[test]
    fn v6_error_to_server() {
        for (proto, quote) in [(IPPROTO_UDP, 100), (IPPROTO_TCP, 100), (IPPROTO_TCP, 48)] {
            let reply = l4_packet6(proto, (VIP6, 80), (CIP6, 40001), &[], &[9u8; 60]);
            let as_sent = l4_packet6(proto, (RIP6, 8080), (CIP6, 40001), &[], &[9u8; 60]);
            for t in [ICMPV6_DEST_UNREACH, ICMPV6_TIME_EXCEED, ICMPV6_PARAMPROB] {
                let mut p = icmp6_error(CIP6, VIP6, t, 4, 7, &reply, quote);
                let q = parse6_growing(&p).unwrap();
                assert_eq!(q.l4_check_at.is_some(), quote > 48, "quote {quote}");
                nat(
                    &mut p,
                    &q,
                    IcmpNat::ToServer {
                        daddr: RIP6,
                        dport: 8080,
                    },
                )
                .unwrap();
                let expect = icmp6_error(CIP6, RIP6, t, 4, 7, &as_sent, quote);
                assert_eq!(p, expect, "proto {proto} type {t} quote {quote}");
            }
        }
    }

    #[test]
    fn v6_udp_checksum_never_zero() {
        // Find a payload whose translated quoted UDP checksum is 0: it
        // must be sent as 0xffff, and the ICMPv6 checksum must agree.
        let mut seen = false;
        for x in 0..=0xffffu16 {
            let natted = l4_packet6(IPPROTO_UDP, (CIP6, 1), (RIP6, 2), &[], &x.to_be_bytes());
            let mut p = icmp6_error(RIP6, CIP6, 1, 4, 0, &natted, 1232);
            let q = parse_v6(&p, &outer6(&p)).unwrap();
            nat_v6(
                &mut p,
                &q,
                IcmpNat::ToClient {
                    vaddr: VIP6,
                    vport: 3,
                },
            )
            .unwrap();
            let at = q.l4_check_at.unwrap();
            assert_ne!(&p[at..at + 2], &[0, 0]);
            if p[at..at + 2] == [0xff, 0xff] {
                seen = true;
                assert!(icmp6_ok(&p));
                break;
            }
        }
        assert!(seen);
    }

    #[test]
    fn v6_not_translated() {
        let natted = l4_packet6(IPPROTO_UDP, (CIP6, 1), (RIP6, 2), &[], b"x");
        // Informational messages and unassigned types are not errors.
        for t in [0u8, 5, 100, 127, 128, 129, 133, 134, 135, 136, 255] {
            let p = icmp6_error(RIP6, CIP6, t, 0, 0, &natted, 1232);
            assert_eq!(
                parse_v6(&p, &outer6(&p)),
                Err(IcmpSkip::NotError),
                "type {t}"
            );
        }
        // Quoting ICMPv6 (an echo request).
        let echo = ip6(CIP6, RIP6, &[], IPPROTO_ICMPV6, &[128, 0, 0, 0, 0, 1, 0, 1]);
        let p = icmp6_error(RIP6, CIP6, 1, 4, 0, &echo, 1232);
        assert_eq!(parse_v6(&p, &outer6(&p)), Err(IcmpSkip::OtherProto));
        // Quoting a non-first fragment (its "ports" are payload).
        let frag = l4_packet6(IPPROTO_UDP, (CIP6, 1), (RIP6, 2), &[frag6(3, true)], b"x");
        let p = icmp6_error(RIP6, CIP6, 1, 4, 0, &frag, 1232);
        assert_eq!(parse_v6(&p, &outer6(&p)), Err(IcmpSkip::Fragment));
        // A fragmented error.
        let mut m = vec![1, 4, 0, 0, 0, 0, 0, 0];
        m.extend_from_slice(&natted);
        let p = ip6(RIP6, CIP6, &[frag6(0, true)], IPPROTO_ICMPV6, &m);
        assert_eq!(parse_v6(&p, &outer6(&p)), Err(IcmpSkip::Fragment));
        // Not ICMPv6 at all.
        assert_eq!(parse_v6(&natted, &outer6(&natted)), Err(IcmpSkip::NotError));
        // A quoted IPv4 packet.
        let v4 = l4_packet(IPPROTO_UDP, (CIP, 1), (RIP, 2), &[0u8; 40]);
        let p = icmp6_error(RIP6, CIP6, 1, 4, 0, &v4, 1232);
        assert_eq!(
            parse_v6(&p, &outer6(&p)),
            Err(IcmpSkip::Malformed(ParseError::BadVersion))
        );
        // An IPv4 quote is not for nat_v6, nor an IPv6 one for nat_v4.
        let p4 = icmp_error(RIP, CIP, 3, 3, &v4, 64);
        let q4 = parse_v4(&p4, &outer(&p4)).unwrap();
        let mut m = p4.clone();
        assert_eq!(
            nat_v6(
                &mut m,
                &q4,
                IcmpNat::ToClient {
                    vaddr: VIP6,
                    vport: 1
                }
            ),
            Err(IcmpSkip::NotError)
        );
        assert_eq!(m, p4);
        let p6 = icmp6_error(RIP6, CIP6, 1, 4, 0, &natted, 1232);
        let q6 = parse_v6(&p6, &outer6(&p6)).unwrap();
        let mut m = p6.clone();
        assert_eq!(
            nat_v4(
                &mut m,
                &q6,
                IcmpNat::ToClient {
                    vaddr: VIP6,
                    vport: 1
                }
            ),
            Err(IcmpSkip::NotError)
        );
        assert_eq!(m, p6);
    }

    #[test]
    fn v6_hostile_lengths() {
        let natted = l4_packet6(IPPROTO_TCP, (CIP6, 1), (RIP6, 2), &[dstopts()], &[5u8; 64]);
        // An extension header claiming 255 * 8 more bytes than it has.
        let mut bad = natted.clone();
        bad[41] = 255;
        let p = icmp6_error(RIP6, CIP6, 1, 4, 0, &bad, 1232);
        assert!(matches!(
            parse6_growing(&p),
            Err(IcmpSkip::Malformed(
                ParseError::BadTotalLen | ParseError::Truncated
            ))
        ));
        // A quoted payload length too small for its extension header.
        let mut bad = natted.clone();
        bad[4..6].copy_from_slice(&4u16.to_be_bytes());
        let p = icmp6_error(RIP6, CIP6, 1, 4, 0, &bad, 1232);
        assert_eq!(
            parse6_growing(&p),
            Err(IcmpSkip::Malformed(ParseError::BadTotalLen))
        );
        // A quoted payload length of 65535 (the quote is always cut):
        // still parsed, as far as the quote goes.
        let mut big = natted.clone();
        big[4..6].copy_from_slice(&0xffffu16.to_be_bytes());
        let p = icmp6_error(RIP6, CIP6, 1, 4, 0, &big, 1232);
        assert!(parse6_growing(&p).is_ok());
        // More extension headers than rvs walks.
        let many: Vec<_> = (0..IPV6_MAX_EXT_HEADERS_PLUS).map(|_| dstopts()).collect();
        let deep = l4_packet6(IPPROTO_UDP, (CIP6, 1), (RIP6, 2), &many, b"x");
        let p = icmp6_error(RIP6, CIP6, 1, 4, 0, &deep, 1232);
        assert_eq!(
            parse6_growing(&p),
            Err(IcmpSkip::Malformed(ParseError::BadExtHeader))
        );
        // A hop-by-hop header after another one.
        let mut hop = dstopts();
        hop.0 = 0;
        let twisted = l4_packet6(IPPROTO_UDP, (CIP6, 1), (RIP6, 2), &[dstopts(), hop], b"x");
        let p = icmp6_error(RIP6, CIP6, 1, 4, 0, &twisted, 1232);
        assert_eq!(
            parse6_growing(&p),
            Err(IcmpSkip::Malformed(ParseError::BadExtHeader))
        );
        // An outer packet whose payload length says less than the ICMPv6
        // header: the outer parse already gives total_len 40 + 4.
        let p = icmp6_error(RIP6, CIP6, 1, 4, 0, &natted, 1232);
        let mut o = outer6(&p);
        for total in 40..48 {
            o.total_len = total;
            assert!(matches!(parse_v6(&p, &o), Err(IcmpSkip::Malformed(_))));
        }
    }

    const IPV6_MAX_EXT_HEADERS_PLUS: usize = packet::IPV6_MAX_EXT_HEADERS + 1;

    #[test]
    fn v6_every_truncation_is_refused_or_safe() {
        let ext = [dstopts(), dstopts()];
        for proto in [IPPROTO_TCP, IPPROTO_UDP] {
            let natted = l4_packet6(proto, (CIP6, 40000), (RIP6, 80), &ext, &[7u8; 40]);
            let l4_at = 40 + 16;
            let check_end = l4_at + if proto == IPPROTO_UDP { 8 } else { 18 };
            for quote in 0..=natted.len() {
                let p = icmp6_error(RIP6, CIP6, 1, 4, 0, &natted, quote);
                let got = parse6_growing(&p);
                if quote < l4_at + 4 {
                    assert!(
                        matches!(got, Err(IcmpSkip::Malformed(_))),
                        "quote {quote}: {got:?}"
                    );
                    continue;
                }
                let q = got.unwrap();
                assert_eq!(q.l4_check_at.is_some(), quote >= check_end, "quote {quote}");
                assert!(q.rewrite_len <= p.len());
                for n in [
                    IcmpNat::ToClient {
                        vaddr: VIP6,
                        vport: 80,
                    },
                    IcmpNat::ToServer {
                        daddr: VIP6,
                        dport: 99,
                    },
                ] {
                    let mut m = p.clone();
                    nat_v6(&mut m, &q, n).unwrap();
                    assert!(icmp6_ok(&m), "quote {quote} {n:?}");
                    // Only the first rewrite_len bytes may change.
                    assert_eq!(m[q.rewrite_len..], p[q.rewrite_len..]);
                }
            }
            // Shorter linear views than the message: parse asks for more
            // (never beyond the message) or refuses; a rewrite with a
            // quote from the whole message refuses what is missing and
            // leaves the bytes alone.
            let full = icmp6_error(RIP6, CIP6, 1, 4, 0, &natted, 1232);
            let o = outer6(&full);
            let fq = parse_v6(&full, &o).unwrap();
            for cut in 0..full.len() {
                let view = &full[..cut];
                match parse_v6(view, &o) {
                    Ok(q) => {
                        assert_eq!(q, fq, "cut {cut}");
                        assert!(q.rewrite_len <= cut);
                    }
                    Err(IcmpSkip::Malformed(ParseError::NeedMore { needed })) => {
                        assert!(needed > cut && needed <= full.len(), "cut {cut}");
                    }
                    Err(e) => panic!("cut {cut}: {e:?}"),
                }
                let mut m = view.to_vec();
                if nat_v6(
                    &mut m,
                    &fq,
                    IcmpNat::ToClient {
                        vaddr: VIP6,
                        vport: 1,
                    },
                )
                .is_err()
                {
                    assert_eq!(m, view, "cut {cut}: a refused rewrite changed bytes");
                }
            }
        }
        assert_eq!(linear_len_v6(40, 1280), 40 + 8 + 40 + 18);
        assert_eq!(linear_len_v6(40, 60), 60);
    }
}
