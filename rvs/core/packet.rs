// SPDX-License-Identifier: GPL-2.0

//! Bounded parsing of IPv4/IPv6/TCP/UDP headers and Internet checksums.
//!
//! C counterparts: `ip_vs_fill_iph_skb` (include/net/ip_vs.h),
//! include/net/checksum.h (`csum_replace4`, `csum_replace2`,
//! `inet_proto_csum_replace*`), RFC 1071 and RFC 1624.
//!
//! Parsing never reads outside the given slice. The kernel linearizes the
//! header bytes it needs and passes them as `hdr`, together with the length
//! of the whole packet from the network header on (`pkt_len`, i.e.
//! `skb->len` at the network header), so declared lengths can be checked
//! against the real packet without the payload being linear.
//!
//! Byte-order convention for all checksum functions: every 16-bit value
//! (checksum fields, ports) is the number read from the wire with
//! `u16::from_be_bytes`, every 32-bit value (IPv4 addresses) with
//! `u32::from_be_bytes`, and returned checksums are to be written back with
//! `to_be_bytes`. Ports in [`Ports`] use the same convention, so a port
//! read here can be fed straight into [`csum_replace2`].

#![forbid(unsafe_code)]

use super::config::AddrFamily;
use super::proto::TcpFlags;

/// IP protocol number of TCP.
pub const IPPROTO_TCP: u8 = 6;
/// IP protocol number of UDP.
pub const IPPROTO_UDP: u8 = 17;
/// IP protocol number of SCTP.
pub const IPPROTO_SCTP: u8 = 132;

/// IPv6 extension header numbers the parser skips or recognises.
const NEXTHDR_HOP: u8 = 0;
const NEXTHDR_ROUTING: u8 = 43;
const NEXTHDR_FRAGMENT: u8 = 44;
const NEXTHDR_DEST: u8 = 60;

/// Most IPv6 extension headers walked before giving up (bounds the work a
/// crafted packet can cause).
pub const IPV6_MAX_EXT_HEADERS: usize = 8;

/// Why a header could not be parsed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParseError {
    /// The packet is shorter than its headers require or declare; drop it.
    Truncated,
    /// The header is valid so far but continues past the bytes given in
    /// `hdr` (still inside `pkt_len`); linearize `needed` bytes and retry.
    NeedMore {
        /// Bytes from the start of `hdr` that are needed.
        needed: usize,
    },
    /// IP version field is not the expected one.
    BadVersion,
    /// A header length field is below its minimum (IPv4 IHL < 5, TCP data
    /// offset < 5).
    BadHeaderLen,
    /// The IPv4 total length is smaller than the header, or IPv6 extension
    /// headers run past the payload length.
    BadTotalLen,
    /// Malformed or excessive IPv6 extension headers.
    BadExtHeader,
    /// Not a protocol whose ports can be parsed (only TCP and UDP).
    UnsupportedProto,
}

impl ParseError {
    /// How many linear bytes the parser asked for, if that is why it
    /// stopped.
    pub fn needed(self) -> Option<usize> {
        match self {
            ParseError::NeedMore { needed } => Some(needed),
            _ => None,
        }
    }
}

impl ParseError {
    /// A short description for log messages.
    pub fn msg(self) -> &'static str {
        match self {
            ParseError::Truncated => "truncated packet",
            ParseError::NeedMore { .. } => "header beyond linear data",
            ParseError::BadVersion => "bad IP version",
            ParseError::BadHeaderLen => "bad header length",
            ParseError::BadTotalLen => "bad total length",
            ParseError::BadExtHeader => "bad IPv6 extension headers",
            ParseError::UnsupportedProto => "unsupported protocol",
        }
    }
}

/// Checks that `end` bytes are available: within the packet (else
/// `Truncated`, or `bad` if the header's own lengths are inconsistent) and
/// within the linear view (else `NeedMore`).
fn need(hdr: &[u8], pkt_len: usize, end: usize) -> Result<(), ParseError> {
    if end > pkt_len {
        Err(ParseError::Truncated)
    } else if end > hdr.len() {
        Err(ParseError::NeedMore { needed: end })
    } else {
        Ok(())
    }
}

fn be16(b: &[u8], off: usize) -> Result<u16, ParseError> {
    match (b.get(off), b.get(off.wrapping_add(1))) {
        (Some(h), Some(l)) => Ok(u16::from_be_bytes([*h, *l])),
        _ => Err(ParseError::Truncated),
    }
}

fn byte(b: &[u8], off: usize) -> Result<u8, ParseError> {
    b.get(off).copied().ok_or(ParseError::Truncated)
}

fn array<const N: usize>(b: &[u8], off: usize) -> Result<[u8; N], ParseError> {
    let end = off.checked_add(N).ok_or(ParseError::Truncated)?;
    let s = b.get(off..end).ok_or(ParseError::Truncated)?;
    let mut a = [0u8; N];
    a.copy_from_slice(s);
    Ok(a)
}

/// What rvs needs from an IPv4 header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ipv4Info {
    /// Header length in bytes (IHL * 4), where the L4 header starts.
    pub ihl_len: usize,
    /// Total length from the header (header + payload).
    pub total_len: usize,
    /// Protocol of the payload.
    pub proto: u8,
    /// Source address, wire order.
    pub saddr: [u8; 4],
    /// Destination address, wire order.
    pub daddr: [u8; 4],
    /// The raw flags + fragment offset field (host value of the BE field).
    pub frag_off_field: u16,
    /// Part of a fragmented datagram: MF set or offset != 0.
    pub is_fragment: bool,
    /// The fragment with offset 0 and MF set: the only one with the L4
    /// header.
    pub is_first_fragment: bool,
    /// Time to live.
    pub ttl: u8,
    /// Header checksum field (see the module's byte-order convention).
    pub check: u16,
}

/// IPv4 "more fragments" flag in the fragment field.
pub const IP_MF: u16 = 0x2000;
/// IPv4 "don't fragment" flag in the fragment field.
pub const IP_DF: u16 = 0x4000;
/// Mask of the fragment offset (in 8-byte units) in the fragment field.
pub const IP_OFFSET: u16 = 0x1fff;

impl Ipv4Info {
    /// Offset of the L4 header from the start of the IP header.
    pub fn l4_offset(&self) -> usize {
        self.ihl_len
    }

    /// Whether this packet carries the L4 header (fragment offset 0), i.e.
    /// ports can be read.
    pub fn has_l4_header(&self) -> bool {
        self.frag_off_field & IP_OFFSET == 0
    }

    /// Length of the L4 part (header + payload) per the IP header.
    pub fn l4_len(&self) -> usize {
        self.total_len.saturating_sub(self.ihl_len)
    }
}

/// Parses an IPv4 header.
///
/// `hdr` is the linear view starting at the IP header (at least 20 bytes,
/// the whole header with options for success); `pkt_len` is the length of
/// the packet from the IP header on. Rejects version != 4, IHL < 5, a total
/// length below the header length or above `pkt_len`. Bytes after
/// `total_len` (link-layer padding) are allowed. The header checksum is not
/// verified here (the stack did it on receive; see
/// [`ip_header_checksum_ok`]).
pub fn parse_ipv4(hdr: &[u8], pkt_len: usize) -> Result<Ipv4Info, ParseError> {
    parse_ipv4_len(hdr, pkt_len, false)
}

/// [`parse_ipv4`] for a TCP GSO packet (the caller checked the socket
/// buffer's GSO type): there a total length of 0 stands for the packet's
/// own length above 64 KiB (IPv4 BIG TCP), as in the kernel's
/// `iph_totlen`.
pub fn parse_ipv4_gso_tcp(hdr: &[u8], pkt_len: usize) -> Result<Ipv4Info, ParseError> {
    parse_ipv4_len(hdr, pkt_len, true)
}

fn parse_ipv4_len(hdr: &[u8], pkt_len: usize, big_tcp: bool) -> Result<Ipv4Info, ParseError> {
    need(hdr, pkt_len, 20)?;
    let vihl = byte(hdr, 0)?;
    if vihl >> 4 != 4 {
        return Err(ParseError::BadVersion);
    }
    let ihl_len = usize::from(vihl & 0x0f) * 4;
    if ihl_len < 20 {
        return Err(ParseError::BadHeaderLen);
    }
    let total_len = match usize::from(be16(hdr, 2)?) {
        0 if big_tcp && pkt_len > usize::from(u16::MAX) && byte(hdr, 9)? == IPPROTO_TCP => pkt_len,
        n => n,
    };
    if total_len < ihl_len {
        return Err(ParseError::BadTotalLen);
    }
    need(hdr, pkt_len, ihl_len)?;
    if total_len > pkt_len {
        return Err(ParseError::Truncated);
    }
    let frag = be16(hdr, 6)?;
    let offset = frag & IP_OFFSET;
    let mf = frag & IP_MF != 0;
    Ok(Ipv4Info {
        ihl_len,
        total_len,
        proto: byte(hdr, 9)?,
        saddr: array(hdr, 12)?,
        daddr: array(hdr, 16)?,
        frag_off_field: frag,
        is_fragment: mf || offset != 0,
        is_first_fragment: mf && offset == 0,
        ttl: byte(hdr, 8)?,
        check: be16(hdr, 10)?,
    })
}

/// What rvs needs from an IPv6 header chain.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ipv6Info {
    /// Payload length from the fixed header.
    pub payload_len: usize,
    /// 40 + payload length.
    pub total_len: usize,
    /// Next header field of the fixed header.
    pub next_header: u8,
    /// Upper-layer protocol after skipping hop-by-hop, routing, destination
    /// options and fragment headers.
    pub proto: u8,
    /// Offset of the upper-layer header from the start of the IPv6 header.
    pub l4_offset: usize,
    /// Source address.
    pub saddr: [u8; 16],
    /// Destination address.
    pub daddr: [u8; 16],
    /// Hop limit.
    pub hop_limit: u8,
    /// A fragment header is present.
    pub is_fragment: bool,
    /// Fragment header with offset 0 and M set: the fragment with the L4
    /// header.
    pub is_first_fragment: bool,
    /// Fragment offset in 8-byte units (0 without fragment header).
    pub frag_offset: u16,
}

impl Ipv6Info {
    /// Whether this packet carries the upper-layer header (not a non-first
    /// fragment).
    pub fn has_l4_header(&self) -> bool {
        self.frag_offset == 0
    }

    /// Length of the upper-layer part (header + payload).
    pub fn l4_len(&self) -> usize {
        self.total_len.saturating_sub(self.l4_offset)
    }
}

/// Parses an IPv6 fixed header and skips hop-by-hop (first only), routing,
/// destination options and one fragment header, at most
/// [`IPV6_MAX_EXT_HEADERS`] of them.
///
/// `hdr` and `pkt_len` as for [`parse_ipv4`]; of each extension header
/// walked, the bytes read (next header and length; a fragment header
/// whole) must lie in `hdr` (else [`ParseError::NeedMore`]): the rest is
/// skipped unread, so the returned `l4_offset` may lie beyond `hdr`, never
/// beyond `total_len` (callers fetch the L4 header themselves). A non-first
/// fragment stops the walk with `proto` set to the fragment's next header.
/// Jumbograms (payload length 0 with a hop-by-hop header) are rejected as
/// [`ParseError::BadTotalLen`].
pub fn parse_ipv6(hdr: &[u8], pkt_len: usize) -> Result<Ipv6Info, ParseError> {
    need(hdr, pkt_len, 40)?;
    if byte(hdr, 0)? >> 4 != 6 {
        return Err(ParseError::BadVersion);
    }
    let payload_len = usize::from(be16(hdr, 4)?);
    let total_len = payload_len + 40;
    if total_len > pkt_len {
        return Err(ParseError::Truncated);
    }
    let next_header = byte(hdr, 6)?;
    let mut info = Ipv6Info {
        payload_len,
        total_len,
        next_header,
        proto: next_header,
        l4_offset: 40,
        saddr: array(hdr, 8)?,
        daddr: array(hdr, 24)?,
        hop_limit: byte(hdr, 7)?,
        is_fragment: false,
        is_first_fragment: false,
        frag_offset: 0,
    };
    let mut nh = next_header;
    let mut off = 40usize;
    for _ in 0..IPV6_MAX_EXT_HEADERS {
        match nh {
            NEXTHDR_HOP | NEXTHDR_ROUTING | NEXTHDR_DEST => {
                if nh == NEXTHDR_HOP && off != 40 {
                    return Err(ParseError::BadExtHeader);
                }
                // The first two bytes: next header, length in 8-byte units
                // not counting the first 8.
                // Offsets stay below 40 + 65535 + 8 * 256, far from overflow;
                // saturating arithmetic keeps that obvious.
                let end = off.saturating_add(8);
                if end > total_len {
                    return Err(ParseError::BadTotalLen);
                }
                need(hdr, pkt_len, off.saturating_add(2))?;
                let units = usize::from(byte(hdr, off.saturating_add(1))?);
                let len = units.saturating_add(1).saturating_mul(8);
                nh = byte(hdr, off)?;
                off = off.saturating_add(len);
                if off > total_len {
                    return Err(ParseError::BadTotalLen);
                }
            }
            NEXTHDR_FRAGMENT => {
                if info.is_fragment {
                    return Err(ParseError::BadExtHeader);
                }
                let end = off.saturating_add(8);
                if end > total_len {
                    return Err(ParseError::BadTotalLen);
                }
                need(hdr, pkt_len, end)?;
                let field = be16(hdr, off.saturating_add(2))?;
                info.is_fragment = true;
                info.frag_offset = field >> 3;
                info.is_first_fragment = field >> 3 == 0 && field & 1 != 0;
                nh = byte(hdr, off)?;
                off = end;
                if info.frag_offset != 0 {
                    info.proto = nh;
                    info.l4_offset = off;
                    return Ok(info);
                }
            }
            _ => {
                info.proto = nh;
                info.l4_offset = off;
                return Ok(info);
            }
        }
    }
    Err(ParseError::BadExtHeader)
}

/// The family-independent view of an IPv4 header or IPv6 header chain
/// that the packet path works with; addresses in rvs's 16-byte form (IPv4
/// in the first 4 bytes, the rest zero).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IpInfo {
    /// IPv4 or IPv6.
    pub af: AddrFamily,
    /// Upper-layer protocol (after IPv6 extension headers).
    pub proto: u8,
    /// Offset of the upper-layer header from the start of the IP header.
    pub l4_offset: usize,
    /// Source address.
    pub saddr: [u8; 16],
    /// Destination address.
    pub daddr: [u8; 16],
    /// Part of a fragmented datagram (IPv4 MF or offset, IPv6 fragment
    /// header): rvs leaves these to the stack.
    pub is_fragment: bool,
    /// The packet must not be fragmented on its way: IPv4 DF, always for
    /// IPv6 (routers never fragment it).
    pub df: bool,
    /// The IPv4 flags + fragment offset field (0 for IPv6), for tunnel
    /// headers that copy DF.
    pub frag_off_field: u16,
}

impl IpInfo {
    /// The family-independent view of a parsed IPv4 header.
    pub fn from_v4(i: &Ipv4Info) -> IpInfo {
        IpInfo {
            af: AddrFamily::Inet,
            proto: i.proto,
            l4_offset: i.ihl_len,
            saddr: addr16(&i.saddr),
            daddr: addr16(&i.daddr),
            is_fragment: i.is_fragment,
            df: i.frag_off_field & IP_DF != 0,
            frag_off_field: i.frag_off_field,
        }
    }
}

impl IpInfo {
    /// The family-independent view of a parsed IPv6 header chain.
    pub fn from_v6(i: &Ipv6Info) -> IpInfo {
        IpInfo {
            af: AddrFamily::Inet6,
            proto: i.proto,
            l4_offset: i.l4_offset,
            saddr: i.saddr,
            daddr: i.daddr,
            is_fragment: i.is_fragment,
            df: true,
            frag_off_field: 0,
        }
    }
}

/// Writes address `addr` (16-byte form) and port `port` (host order)
/// into one end of the linear headers `h` of a packet of family `af`
/// whose transport header (TCP or UDP: ports first) is at `l4`: the
/// source if `source`, else the destination; renews an IPv4 header's
/// checksum. Returns the old address (16-byte form) and port (wire
/// order), for the caller's transport checksum update; `None` if `h` is
/// too short (nothing written then).
pub fn write_end(
    h: &mut [u8],
    af: AddrFamily,
    l4: usize,
    source: bool,
    addr: &[u8; 16],
    port: u16,
) -> Option<([u8; 16], [u8; 2])> {
    let (src_at, dst_at, alen) = addr_offsets(af);
    let (addr_at, port_at) = if source {
        (src_at, l4)
    } else {
        (dst_at, l4.checked_add(2)?)
    };
    let addr_end = addr_at.checked_add(alen)?;
    let port_end = port_at.checked_add(2)?;
    // The address lies in the IP header, the port after it.
    if l4 < addr_end || h.len() < port_end {
        return None;
    }
    let old_addr = addr16(h.get(addr_at..addr_end)?);
    let old_port: [u8; 2] = h.get(port_at..port_end)?.try_into().ok()?;
    h.get_mut(addr_at..addr_end)?
        .copy_from_slice(addr.get(..alen)?);
    h.get_mut(port_at..port_end)?
        .copy_from_slice(&port.to_be_bytes());
    if af == AddrFamily::Inet {
        // Updated for the address that changed (RFC 1624), as the kernel's
        // csum_replace4: per packet, cheaper than summing the header.
        let check = h.get_mut(IPV4_CHECK_OFFSET..IPV4_CHECK_OFFSET + 2)?;
        let old = u16::from_be_bytes([*check.first()?, *check.get(1)?]);
        let [o0, o1, o2, o3, ..] = old_addr;
        let [n0, n1, n2, n3, ..] = *addr;
        let sum = csum_replace4(
            old,
            u32::from_be_bytes([o0, o1, o2, o3]),
            u32::from_be_bytes([n0, n1, n2, n3]),
        );
        check.copy_from_slice(&sum.to_be_bytes());
    }
    Some((old_addr, old_port))
}

/// Byte offsets of the source and destination address in the fixed IP
/// header of `af`, and the address length.
pub fn addr_offsets(af: AddrFamily) -> (usize, usize, usize) {
    match af {
        AddrFamily::Inet => (12, 16, 4),
        AddrFamily::Inet6 => (8, 24, 16),
    }
}

fn addr16(a: &[u8]) -> [u8; 16] {
    let mut x = [0u8; 16];
    if let Some(d) = x.get_mut(..a.len()) {
        d.copy_from_slice(a);
    }
    x
}

/// Parses the IP header(s) of a packet of family `af` into an [`IpInfo`]
/// ([`parse_ipv4`] or [`parse_ipv6`], same errors, same `hdr`/`pkt_len`
/// contract).
pub fn parse_ip(af: AddrFamily, hdr: &[u8], pkt_len: usize) -> Result<IpInfo, ParseError> {
    match af {
        AddrFamily::Inet => Ok(IpInfo::from_v4(&parse_ipv4(hdr, pkt_len)?)),
        AddrFamily::Inet6 => Ok(IpInfo::from_v6(&parse_ipv6(hdr, pkt_len)?)),
    }
}

/// [`parse_ip`] for a GSO packet: IPv4 as [`parse_ipv4_gso_tcp`] (BIG TCP's
/// total length 0).
pub fn parse_ip_gso(af: AddrFamily, hdr: &[u8], pkt_len: usize) -> Result<IpInfo, ParseError> {
    match af {
        AddrFamily::Inet => Ok(IpInfo::from_v4(&parse_ipv4_gso_tcp(hdr, pkt_len)?)),
        AddrFamily::Inet6 => Ok(IpInfo::from_v6(&parse_ipv6(hdr, pkt_len)?)),
    }
}

/// Source and destination port, as host values of the wire fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ports {
    /// Source port.
    pub src: u16,
    /// Destination port.
    pub dst: u16,
}

/// Length in bytes of the TCP header at the start of `l4` (data offset * 4),
/// checking that all of it is present.
pub fn tcp_header_len(l4: &[u8]) -> Result<usize, ParseError> {
    let doff = usize::from(byte(l4, 12)? >> 4) * 4;
    if l4.len() < 20 {
        return Err(ParseError::Truncated);
    }
    if doff < 20 {
        return Err(ParseError::BadHeaderLen);
    }
    if l4.len() < doff {
        return Err(ParseError::Truncated);
    }
    Ok(doff)
}

/// Reads the ports of a TCP, UDP or SCTP header at the start of `l4`.
///
/// TCP needs its full header (data offset >= 5, all of it present); UDP its
/// 8 bytes; SCTP its 12-byte common header. Other protocols give
/// [`ParseError::UnsupportedProto`].
pub fn parse_l4_ports(l4: &[u8], proto: u8) -> Result<Ports, ParseError> {
    match proto {
        IPPROTO_TCP => {
            tcp_header_len(l4)?;
        }
        IPPROTO_UDP => {
            if l4.len() < 8 {
                return Err(ParseError::Truncated);
            }
        }
        IPPROTO_SCTP => {
            if l4.len() < super::sctp::HEADER_LEN {
                return Err(ParseError::Truncated);
            }
        }
        _ => return Err(ParseError::UnsupportedProto),
    }
    Ok(Ports {
        src: be16(l4, 0)?,
        dst: be16(l4, 2)?,
    })
}

/// Reads the SYN/ACK/FIN/RST flags of the TCP header at the start of `l4`
/// (which must be complete, as for [`parse_l4_ports`]).
pub fn tcp_flags(l4: &[u8]) -> Result<TcpFlags, ParseError> {
    tcp_header_len(l4)?;
    Ok(TcpFlags::from_byte(byte(l4, 13)?))
}

/// Byte offset of the checksum field in a TCP header.
pub const TCP_CHECK_OFFSET: usize = 16;
/// Byte offset of the checksum field in a UDP header.
pub const UDP_CHECK_OFFSET: usize = 6;
/// Byte offset of the header checksum in an IPv4 header.
pub const IPV4_CHECK_OFFSET: usize = 10;

/// Adds `data` as big-endian 16-bit words (a trailing odd byte is padded
/// with zero) to the one's-complement accumulator `sum` and returns the new
/// accumulator, folded to 32 bits. Start with 0; finish with [`csum_fold`].
pub fn csum_add(sum: u32, data: &[u8]) -> u32 {
    let mut acc = u64::from(sum);
    let mut words = data.chunks_exact(2);
    for w in &mut words {
        let mut b = [0u8; 2];
        b.copy_from_slice(w);
        acc = acc.wrapping_add(u64::from(u16::from_be_bytes(b)));
    }
    if let Some(last) = words.remainder().first() {
        acc = acc.wrapping_add(u64::from(*last) << 8);
    }
    fold64(acc)
}

fn fold64(mut acc: u64) -> u32 {
    while acc >> 32 != 0 {
        acc = (acc & 0xffff_ffff).wrapping_add(acc >> 32);
    }
    acc as u32
}

/// Folds a one's-complement accumulator to 16 bits without complementing.
pub fn csum_fold_raw(sum: u32) -> u16 {
    let mut s = sum;
    while s >> 16 != 0 {
        s = (s & 0xffff).wrapping_add(s >> 16);
    }
    s as u16
}

/// Folds a one's-complement accumulator and complements it: the value to
/// store in a checksum field.
pub fn csum_fold(sum: u32) -> u16 {
    !csum_fold_raw(sum)
}

/// The IPv4 header checksum of `hdr` (the whole header, options included),
/// computed as if the checksum field were zero. Store it with
/// `to_be_bytes` at [`IPV4_CHECK_OFFSET`].
pub fn ip_header_checksum(hdr: &[u8]) -> u16 {
    let before = hdr.get(..IPV4_CHECK_OFFSET).unwrap_or(hdr);
    let after = hdr.get(IPV4_CHECK_OFFSET + 2..).unwrap_or(&[]);
    csum_fold(csum_add(csum_add(0, before), after))
}

/// Whether the IPv4 header `hdr` carries a correct checksum.
pub fn ip_header_checksum_ok(hdr: &[u8]) -> bool {
    csum_fold(csum_add(0, hdr)) == 0
}

/// Byte offset of the TTL in an IPv4 header.
pub const IPV4_TTL_OFFSET: usize = 8;
/// Byte offset of the protocol in an IPv4 header (the TTL's word).
pub const IPV4_PROTO_OFFSET: usize = 9;
/// Byte offset of the hop limit in an IPv6 header.
pub const IPV6_HOP_LIMIT_OFFSET: usize = 7;

/// Why [`decrement_ttl`] left a packet alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TtlError {
    /// The TTL / hop limit is 1 or 0: the packet may not be forwarded; a
    /// router answers "time exceeded".
    Expired,
    /// `hdr` is shorter than the IP header.
    Truncated,
}

/// Decrements the TTL (IPv4, with the header checksum updated) or the hop
/// limit (IPv6) of the IP header at the start of `hdr`, as a router does
/// before it forwards a packet (RFC 1812 5.3.1, RFC 8200). A packet that
/// arrived with 1 or 0 is left untouched: [`TtlError::Expired`].
pub fn decrement_ttl(af: AddrFamily, hdr: &mut [u8]) -> Result<(), TtlError> {
    let at = match af {
        AddrFamily::Inet => IPV4_TTL_OFFSET,
        AddrFamily::Inet6 => IPV6_HOP_LIMIT_OFFSET,
    };
    let ttl = *hdr.get(at).ok_or(TtlError::Truncated)?;
    // 0 and 1 have no hop left.
    let left = match ttl.checked_sub(1) {
        Some(l) if l > 0 => l,
        _ => return Err(TtlError::Expired),
    };
    if af == AddrFamily::Inet {
        // The TTL is the high byte of the word it shares with the protocol.
        let check_at = IPV4_CHECK_OFFSET..IPV4_CHECK_OFFSET + 2;
        let check: [u8; 2] = hdr
            .get(check_at.clone())
            .and_then(|c| c.try_into().ok())
            .ok_or(TtlError::Truncated)?;
        let check = u16::from_be_bytes(check);
        let proto = u16::from(*hdr.get(IPV4_PROTO_OFFSET).ok_or(TtlError::Truncated)?);
        let old = (u16::from(ttl) << 8) | proto;
        let new = (u16::from(left) << 8) | proto;
        let sum = csum_replace2(check, old, new);
        hdr.get_mut(check_at)
            .ok_or(TtlError::Truncated)?
            .copy_from_slice(&sum.to_be_bytes());
    }
    if let Some(t) = hdr.get_mut(at) {
        *t = left;
    }
    Ok(())
}

/// Incremental update of a checksum field after a 16-bit word of the
/// covered data changed from `old` to `new` (RFC 1624, eqn. 3:
/// `HC' = ~(~HC + ~m + m')`).
pub fn csum_replace2(check: u16, old: u16, new: u16) -> u16 {
    // Three 16-bit terms cannot overflow a u32.
    let sum = u32::from(!check)
        .wrapping_add(u32::from(!old))
        .wrapping_add(u32::from(new));
    csum_fold(sum)
}

/// Incremental update after a 32-bit value (an IPv4 address, as
/// `u32::from_be_bytes`) changed from `old` to `new`.
pub fn csum_replace4(check: u16, old: u32, new: u32) -> u16 {
    // Five 16-bit terms cannot overflow a u32.
    let sum = u32::from(!check)
        .wrapping_add(u32::from(!(old >> 16) as u16))
        .wrapping_add(u32::from(!(old as u16)))
        .wrapping_add(u32::from((new >> 16) as u16))
        .wrapping_add(u32::from(new as u16));
    csum_fold(sum)
}

/// Incremental update after a 16-byte value (an IPv6 address) changed.
pub fn csum_replace16(check: u16, old: &[u8; 16], new: &[u8; 16]) -> u16 {
    // The eight 16-bit words as shifts of one 128-bit value (no slice
    // iterators: their zip adapters leave objtool warnings in the module).
    let (o, n) = (u128::from_be_bytes(*old), u128::from_be_bytes(*new));
    let mut sum = u64::from(!check);
    for shift in [0u32, 16, 32, 48, 64, 80, 96, 112] {
        // At most 17 16-bit terms: no overflow of the u64.
        sum = sum
            .wrapping_add(u64::from(!(o.wrapping_shr(shift) as u16)))
            .wrapping_add(u64::from(n.wrapping_shr(shift) as u16));
    }
    csum_fold(fold64(sum))
}

/// Maps a computed UDP checksum to what goes on the wire: a result of 0 is
/// sent as 0xffff, because 0 means "no checksum" (RFC 768).
pub fn udp_csum_nonzero(check: u16) -> u16 {
    if check == 0 {
        0xffff
    } else {
        check
    }
}

/// [`csum_replace2`] for an IPv4 UDP checksum: 0 (no checksum) stays 0, a
/// result of 0 becomes 0xffff.
pub fn udp_csum_replace2(check: u16, old: u16, new: u16) -> u16 {
    if check == 0 {
        0
    } else {
        udp_csum_nonzero(csum_replace2(check, old, new))
    }
}

/// [`csum_replace4`] for an IPv4 UDP checksum (0 stays 0, 0 result becomes
/// 0xffff).
pub fn udp_csum_replace4(check: u16, old: u32, new: u32) -> u16 {
    if check == 0 {
        0
    } else {
        udp_csum_nonzero(csum_replace4(check, old, new))
    }
}

/// [`csum_replace16`] for a UDP checksum over IPv6, where a checksum is
/// mandatory: the result is never 0 (0 becomes 0xffff). A received 0 is
/// invalid over IPv6; it is updated like any other value.
pub fn udp6_csum_replace16(check: u16, old: &[u8; 16], new: &[u8; 16]) -> u16 {
    udp_csum_nonzero(csum_replace16(check, old, new))
}

/// Update of an L4 checksum field that holds only the pseudo-header sum,
/// not complemented (`CHECKSUM_PARTIAL` offload, where the device finishes
/// the checksum), after a 32-bit value changed. Like IPVS's
/// `tcp_partial_csum_update`.
pub fn pseudo_csum_replace4(check: u16, old: u32, new: u32) -> u16 {
    !csum_replace4(!check, old, new)
}

/// [`pseudo_csum_replace4`] for a 16-byte (IPv6) address.
pub fn pseudo_csum_replace16(check: u16, old: &[u8; 16], new: &[u8; 16]) -> u16 {
    !csum_replace16(!check, old, new)
}

/// [`pseudo_csum_replace4`] for a 16-bit value (the L4 length in the
/// pseudo-header).
pub fn pseudo_csum_replace2(check: u16, old: u16, new: u16) -> u16 {
    !csum_replace2(!check, old, new)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn write_end_rewrites_one_end_and_the_ipv4_checksum() {
        // IPv4 + the first 4 bytes of a TCP header.
        let mut h = [0u8; 24];
        h[0] = 0x45;
        h[12..16].copy_from_slice(&[10, 0, 0, 1]);
        h[16..20].copy_from_slice(&[10, 0, 0, 2]);
        h[20..24].copy_from_slice(&[0x1f, 0x90, 0, 80]);
        // A valid header (the IP layer checked it): the checksum is
        // updated, not recomputed.
        let sum = ip_header_checksum(&h[..20]);
        h[10..12].copy_from_slice(&sum.to_be_bytes());
        let mut a = [0u8; 16];
        a[..4].copy_from_slice(&[192, 0, 2, 7]);
        let (old, port) = write_end(&mut h, AddrFamily::Inet, 20, true, &a, 1234).unwrap();
        assert_eq!(&old[..4], &[10, 0, 0, 1]);
        assert_eq!(port, [0x1f, 0x90]);
        assert_eq!(&h[12..16], &[192, 0, 2, 7]);
        assert_eq!(&h[20..22], &1234u16.to_be_bytes());
        assert_eq!(&h[16..20], &[10, 0, 0, 2], "the other end is untouched");
        assert!(ip_header_checksum_ok(&h[..20]));
        let (old, port) = write_end(&mut h, AddrFamily::Inet, 20, false, &a, 8080).unwrap();
        assert_eq!((&old[..4], port), (&[10u8, 0, 0, 2][..], [0, 80]));
        assert!(ip_header_checksum_ok(&h[..20]));
        // Too short: nothing written.
        let before = h;
        assert!(write_end(&mut h[..21], AddrFamily::Inet, 20, false, &a, 1).is_none());
        assert_eq!(h, before);
        let mut v6 = [0u8; 44];
        assert!(write_end(&mut v6, AddrFamily::Inet6, 40, false, &[7; 16], 9).is_some());
        assert_eq!(&v6[24..40], &[7; 16]);
        assert_eq!(&v6[42..44], &[0, 9]);
        assert!(write_end(&mut v6, AddrFamily::Inet6, 20, true, &[7; 16], 9).is_none());
    }
    use std::vec;
    use std::vec::Vec;

    /// A valid IPv4 header (20 bytes) with `ttl`, checksum filled in.
    fn ipv4_with_ttl(ttl: u8) -> [u8; 20] {
        let mut h = [
            0x45, 0, 0, 28, 0x12, 0x34, 0x40, 0, ttl, 17, 0, 0, 10, 0, 0, 2, 10, 0, 100, 1,
        ];
        let c = ip_header_checksum(&h);
        h[10..12].copy_from_slice(&c.to_be_bytes());
        h
    }

    #[test]
    fn decrement_ttl_keeps_the_ipv4_checksum_right_for_every_ttl() {
        for ttl in 2..=255u8 {
            let mut h = ipv4_with_ttl(ttl);
            assert_eq!(decrement_ttl(AddrFamily::Inet, &mut h), Ok(()));
            assert_eq!(h[8], ttl - 1);
            assert!(ip_header_checksum_ok(&h), "ttl {ttl}");
            assert_eq!(
                h,
                ipv4_with_ttl(ttl - 1),
                "ttl {ttl}: same as a fresh header"
            );
        }
    }

    #[test]
    fn decrement_ttl_refuses_an_expired_packet_and_leaves_it_alone() {
        for ttl in [0u8, 1] {
            let mut h = ipv4_with_ttl(ttl);
            let before = h;
            assert_eq!(
                decrement_ttl(AddrFamily::Inet, &mut h),
                Err(TtlError::Expired)
            );
            assert_eq!(h, before);
        }
        let mut h6 = [0u8; 40];
        h6[0] = 0x60;
        h6[7] = 1;
        assert_eq!(
            decrement_ttl(AddrFamily::Inet6, &mut h6),
            Err(TtlError::Expired)
        );
        assert_eq!(h6[7], 1);
    }

    #[test]
    fn decrement_ttl_ipv6_changes_only_the_hop_limit() {
        let mut h6 = [0u8; 40];
        h6[0] = 0x60;
        h6[6] = 17;
        h6[7] = 64;
        let mut want = h6;
        want[7] = 63;
        assert_eq!(decrement_ttl(AddrFamily::Inet6, &mut h6), Ok(()));
        assert_eq!(h6, want);
    }

    #[test]
    fn decrement_ttl_on_a_short_header_is_an_error() {
        let mut h = [0x45u8, 0, 0, 20, 0, 0, 0, 0, 64];
        assert_eq!(
            decrement_ttl(AddrFamily::Inet, &mut h),
            Err(TtlError::Truncated)
        );
        assert_eq!(
            decrement_ttl(AddrFamily::Inet6, &mut h[..5]),
            Err(TtlError::Truncated)
        );
    }

    /// Test-only full TCP/UDP checksum over IPv4 with its pseudo-header,
    /// independent of the code under test: a plain 32-bit loop.
    fn full_l4_csum_v4(
        saddr: [u8; 4],
        daddr: [u8; 4],
        proto: u8,
        l4: &[u8],
        check_off: usize,
    ) -> u16 {
        let mut bytes = Vec::new();
        bytes.extend_from_slice(&saddr);
        bytes.extend_from_slice(&daddr);
        bytes.extend_from_slice(&[0, proto]);
        bytes.extend_from_slice(&(l4.len() as u16).to_be_bytes());
        let mut seg = l4.to_vec();
        seg[check_off] = 0;
        seg[check_off + 1] = 0;
        bytes.extend_from_slice(&seg);
        if bytes.len() % 2 == 1 {
            bytes.push(0);
        }
        let mut s: u32 = 0;
        for w in bytes.chunks(2) {
            s += u32::from(w[0]) << 8 | u32::from(w[1]);
        }
        while s > 0xffff {
            s = (s & 0xffff) + (s >> 16);
        }
        !(s as u16)
    }

    fn full_l4_csum_v6(
        saddr: &[u8; 16],
        daddr: &[u8; 16],
        proto: u8,
        l4: &[u8],
        check_off: usize,
    ) -> u16 {
        let mut bytes = Vec::new();
        bytes.extend_from_slice(saddr);
        bytes.extend_from_slice(daddr);
        bytes.extend_from_slice(&(l4.len() as u32).to_be_bytes());
        bytes.extend_from_slice(&[0, 0, 0, proto]);
        let mut seg = l4.to_vec();
        seg[check_off] = 0;
        seg[check_off + 1] = 0;
        bytes.extend_from_slice(&seg);
        if bytes.len() % 2 == 1 {
            bytes.push(0);
        }
        let mut s: u32 = 0;
        for w in bytes.chunks(2) {
            s += u32::from(w[0]) << 8 | u32::from(w[1]);
        }
        while s > 0xffff {
            s = (s & 0xffff) + (s >> 16);
        }
        !(s as u16)
    }

    /// Checksums are equal up to the two one's-complement zeros.
    fn same_csum(a: u16, b: u16) -> bool {
        a == b || (a == 0 || a == 0xffff) && (b == 0 || b == 0xffff)
    }

    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            // xorshift64*
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
        }
    }

    /// IPv4 + TCP/UDP packet with correct checksums. `payload` bytes follow
    /// the L4 header.
    fn v4_packet(proto: u8, s: [u8; 4], d: [u8; 4], sp: u16, dp: u16, payload: &[u8]) -> Vec<u8> {
        let l4_hdr = if proto == IPPROTO_TCP { 20 } else { 8 };
        let total = 20 + l4_hdr + payload.len();
        let mut p = vec![0u8; total];
        p[0] = 0x45;
        p[2..4].copy_from_slice(&(total as u16).to_be_bytes());
        p[4..6].copy_from_slice(&0x1c46u16.to_be_bytes());
        p[6..8].copy_from_slice(&IP_DF.to_be_bytes());
        p[8] = 64;
        p[9] = proto;
        p[12..16].copy_from_slice(&s);
        p[16..20].copy_from_slice(&d);
        let c = ip_header_checksum(&p[..20]);
        p[10..12].copy_from_slice(&c.to_be_bytes());
        let l4 = &mut p[20..];
        l4[0..2].copy_from_slice(&sp.to_be_bytes());
        l4[2..4].copy_from_slice(&dp.to_be_bytes());
        let off = if proto == IPPROTO_TCP {
            l4[4..8].copy_from_slice(&0x1234_5678u32.to_be_bytes());
            l4[12] = 5 << 4;
            l4[13] = 0x18;
            l4[14..16].copy_from_slice(&64240u16.to_be_bytes());
            TCP_CHECK_OFFSET
        } else {
            let len = (8 + payload.len()) as u16;
            l4[4..6].copy_from_slice(&len.to_be_bytes());
            UDP_CHECK_OFFSET
        };
        l4[l4_hdr..].copy_from_slice(payload);
        let mut c = full_l4_csum_v4(s, d, proto, l4, off);
        if proto == IPPROTO_UDP {
            c = udp_csum_nonzero(c);
        }
        l4[off..off + 2].copy_from_slice(&c.to_be_bytes());
        p
    }

    fn get16(b: &[u8], off: usize) -> u16 {
        u16::from_be_bytes([b[off], b[off + 1]])
    }

    fn put16(b: &mut [u8], off: usize, v: u16) {
        b[off..off + 2].copy_from_slice(&v.to_be_bytes());
    }

    #[test]
    fn ipv4_good() {
        let p = v4_packet(
            IPPROTO_TCP,
            [10, 0, 0, 1],
            [10, 0, 0, 2],
            40000,
            80,
            b"hello",
        );
        let info = parse_ipv4(&p, p.len()).unwrap();
        assert_eq!(info.ihl_len, 20);
        assert_eq!(info.total_len, p.len());
        assert_eq!(info.proto, IPPROTO_TCP);
        assert_eq!(info.saddr, [10, 0, 0, 1]);
        assert_eq!(info.daddr, [10, 0, 0, 2]);
        assert_eq!(info.ttl, 64);
        assert_eq!(info.frag_off_field, IP_DF);
        assert!(!info.is_fragment && !info.is_first_fragment && info.has_l4_header());
        assert_eq!(info.l4_len(), 25);
        assert!(ip_header_checksum_ok(&p[..20]));
        assert_eq!(info.check, ip_header_checksum(&p[..20]));
        // Header-only view of a longer packet, and trailing padding.
        assert_eq!(parse_ipv4(&p[..20], p.len()), Ok(info));
        assert_eq!(parse_ipv4(&p[..20], p.len() + 6), Ok(info));
        let ports = parse_l4_ports(&p[20..], IPPROTO_TCP).unwrap();
        assert_eq!(
            ports,
            Ports {
                src: 40000,
                dst: 80
            }
        );
        let f = tcp_flags(&p[20..]).unwrap();
        assert!(f.ack && !f.syn && !f.fin && !f.rst);
    }

    #[test]
    fn ipv4_options() {
        let mut p = vec![0u8; 24 + 8];
        p[0] = 0x46;
        p[2..4].copy_from_slice(&32u16.to_be_bytes());
        p[9] = IPPROTO_UDP;
        p[20] = 1; // NOP options
        p[21] = 1;
        p[22] = 1;
        p[23] = 0;
        let info = parse_ipv4(&p, p.len()).unwrap();
        assert_eq!(info.ihl_len, 24);
        assert_eq!(info.l4_offset(), 24);
        // Options beyond the linear view: ask for more.
        assert_eq!(
            parse_ipv4(&p[..20], p.len()),
            Err(ParseError::NeedMore { needed: 24 })
        );
    }

    #[test]
    fn ipv4_malformed() {
        let p = v4_packet(IPPROTO_UDP, [1, 2, 3, 4], [5, 6, 7, 8], 1, 2, b"x");
        let n = p.len();
        // Truncated: shorter than a minimal header, or than total_len.
        assert_eq!(parse_ipv4(&p[..19], 19), Err(ParseError::Truncated));
        assert_eq!(parse_ipv4(&[], 0), Err(ParseError::Truncated));
        assert_eq!(parse_ipv4(&p, n - 1), Err(ParseError::Truncated));
        assert_eq!(
            parse_ipv4(&p[..10], n),
            Err(ParseError::NeedMore { needed: 20 })
        );
        // Bad version.
        let mut q = p.clone();
        q[0] = 0x65;
        assert_eq!(parse_ipv4(&q, n), Err(ParseError::BadVersion));
        // IHL < 5.
        for ihl in 0..5u8 {
            q[0] = 0x40 | ihl;
            assert_eq!(parse_ipv4(&q, n), Err(ParseError::BadHeaderLen));
        }
        // IHL past the packet.
        q[0] = 0x4f;
        q[2..4].copy_from_slice(&60u16.to_be_bytes());
        assert_eq!(parse_ipv4(&q, n), Err(ParseError::Truncated));
        // total_len < IHL*4.
        let mut q = p.clone();
        q[2..4].copy_from_slice(&19u16.to_be_bytes());
        assert_eq!(parse_ipv4(&q, n), Err(ParseError::BadTotalLen));
        // total_len > packet.
        q[2..4].copy_from_slice(&((n + 1) as u16).to_be_bytes());
        assert_eq!(parse_ipv4(&q, n), Err(ParseError::Truncated));
    }

    #[test]
    fn ipv4_big_tcp_total_len_zero() {
        // A BIG TCP GSO packet: 100,000 bytes, total length field 0.
        let mut p = v4_packet(IPPROTO_TCP, [1, 2, 3, 4], [5, 6, 7, 8], 1, 2, &[]);
        put16(&mut p, 2, 0);
        let hdr = p.clone();
        let i = parse_ipv4_gso_tcp(&hdr, 100_000).unwrap();
        assert_eq!((i.total_len, i.ihl_len), (100_000, 20));
        // Not a GSO TCP packet, or not above 64 KiB, or not TCP: refused.
        assert_eq!(parse_ipv4(&hdr, 100_000), Err(ParseError::BadTotalLen));
        assert_eq!(
            parse_ipv4_gso_tcp(&hdr, 65_535),
            Err(ParseError::BadTotalLen)
        );
        let mut udp = hdr.clone();
        udp[9] = IPPROTO_UDP;
        assert_eq!(
            parse_ipv4_gso_tcp(&udp, 100_000),
            Err(ParseError::BadTotalLen)
        );
        // A real total length is taken as it is.
        let q = v4_packet(IPPROTO_TCP, [1, 2, 3, 4], [5, 6, 7, 8], 1, 2, b"abc");
        let n = q.len();
        assert_eq!(parse_ipv4_gso_tcp(&q, n).unwrap().total_len, n);
        assert_eq!(parse_ipv4_gso_tcp(&q, n - 1), Err(ParseError::Truncated));
    }

    #[test]
    fn ipv4_fragments() {
        let mut p = v4_packet(IPPROTO_UDP, [1, 2, 3, 4], [5, 6, 7, 8], 1, 2, b"abc");
        let n = p.len();
        put16(&mut p, 6, IP_MF);
        let i = parse_ipv4(&p, n).unwrap();
        assert!(i.is_fragment && i.is_first_fragment && i.has_l4_header());
        put16(&mut p, 6, IP_MF | 3);
        let i = parse_ipv4(&p, n).unwrap();
        assert!(i.is_fragment && !i.is_first_fragment && !i.has_l4_header());
        put16(&mut p, 6, 3);
        let i = parse_ipv4(&p, n).unwrap();
        assert!(i.is_fragment && !i.is_first_fragment && !i.has_l4_header());
        put16(&mut p, 6, IP_DF);
        let i = parse_ipv4(&p, n).unwrap();
        assert!(!i.is_fragment && !i.is_first_fragment);
    }

    fn v6_header(next: u8, payload_len: u16) -> Vec<u8> {
        let mut p = vec![0u8; 40];
        p[0] = 0x60;
        p[4..6].copy_from_slice(&payload_len.to_be_bytes());
        p[6] = next;
        p[7] = 64;
        p[8] = 0x20;
        p[9] = 0x01;
        p[23] = 1;
        p[24] = 0x20;
        p[25] = 0x01;
        p[39] = 2;
        p
    }

    #[test]
    fn ipv6_plain_and_ext_headers() {
        let mut p = v6_header(IPPROTO_TCP, 20);
        p.extend_from_slice(&[0u8; 20]);
        let i = parse_ipv6(&p, p.len()).unwrap();
        assert_eq!(i.proto, IPPROTO_TCP);
        assert_eq!(i.l4_offset, 40);
        assert_eq!(i.hop_limit, 64);
        assert_eq!(i.saddr[15], 1);
        assert_eq!(i.daddr[15], 2);
        assert!(!i.is_fragment && i.has_l4_header());
        assert_eq!(i.l4_len(), 20);

        // HBH (8) -> dest opts (16) -> fragment (8, offset 0, M) -> UDP (8).
        let mut p = v6_header(NEXTHDR_HOP, 8 + 16 + 8 + 8);
        p.extend_from_slice(&[NEXTHDR_DEST, 0, 0, 0, 0, 0, 0, 0]);
        p.extend_from_slice(&[NEXTHDR_FRAGMENT, 1]);
        p.extend_from_slice(&[0u8; 14]);
        p.extend_from_slice(&[IPPROTO_UDP, 0, 0x00, 0x01, 0, 0, 0, 7]);
        p.extend_from_slice(&[0, 53, 0, 53, 0, 8, 0, 0]);
        let i = parse_ipv6(&p, p.len()).unwrap();
        assert_eq!(i.next_header, NEXTHDR_HOP);
        assert_eq!(i.proto, IPPROTO_UDP);
        assert_eq!(i.l4_offset, 72);
        assert!(i.is_fragment && i.is_first_fragment && i.has_l4_header());
        let ports = parse_l4_ports(&p[i.l4_offset..], i.proto).unwrap();
        assert_eq!(ports, Ports { src: 53, dst: 53 });
        // Linear view ending inside the extension headers.
        assert_eq!(
            parse_ipv6(&p[..50], p.len()),
            Err(ParseError::NeedMore { needed: 72 })
        );

        // Non-first fragment stops the walk.
        let mut p = v6_header(NEXTHDR_FRAGMENT, 16);
        p.extend_from_slice(&[IPPROTO_TCP, 0, 0x00, 0x08, 0, 0, 0, 7]);
        p.extend_from_slice(&[0u8; 8]);
        let i = parse_ipv6(&p, p.len()).unwrap();
        assert!(i.is_fragment && !i.is_first_fragment && !i.has_l4_header());
        assert_eq!(i.frag_offset, 1);
        assert_eq!(i.proto, IPPROTO_TCP);
    }

    #[test]
    fn ipv6_malformed() {
        let p = v6_header(59, 0);
        assert!(parse_ipv6(&p, 40).is_ok());
        assert_eq!(parse_ipv6(&p[..39], 39), Err(ParseError::Truncated));
        let mut q = p.clone();
        q[0] = 0x40;
        assert_eq!(parse_ipv6(&q, 40), Err(ParseError::BadVersion));
        // payload_len beyond packet.
        let q = v6_header(IPPROTO_TCP, 1);
        assert_eq!(parse_ipv6(&q, 40), Err(ParseError::Truncated));
        // Extension header longer than the payload.
        let mut q = v6_header(NEXTHDR_DEST, 8);
        q.extend_from_slice(&[IPPROTO_TCP, 1, 0, 0, 0, 0, 0, 0]);
        assert_eq!(parse_ipv6(&q, q.len()), Err(ParseError::BadTotalLen));
        // Jumbogram-style HBH with payload 0.
        let mut q = v6_header(NEXTHDR_HOP, 0);
        q.extend_from_slice(&[IPPROTO_TCP, 0, 0xc2, 4, 0, 1, 0, 0]);
        assert_eq!(parse_ipv6(&q, q.len()), Err(ParseError::BadTotalLen));
        // HBH not first.
        let mut q = v6_header(NEXTHDR_DEST, 16);
        q.extend_from_slice(&[NEXTHDR_HOP, 0, 0, 0, 0, 0, 0, 0]);
        q.extend_from_slice(&[59, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(parse_ipv6(&q, q.len()), Err(ParseError::BadExtHeader));
        // Two fragment headers.
        let mut q = v6_header(NEXTHDR_FRAGMENT, 16);
        q.extend_from_slice(&[NEXTHDR_FRAGMENT, 0, 0, 1, 0, 0, 0, 1]);
        q.extend_from_slice(&[59, 0, 0, 1, 0, 0, 0, 1]);
        assert_eq!(parse_ipv6(&q, q.len()), Err(ParseError::BadExtHeader));
        // Endless chain of destination options.
        let n = IPV6_MAX_EXT_HEADERS + 1;
        let mut q = v6_header(NEXTHDR_DEST, (n * 8) as u16);
        for _ in 0..n {
            q.extend_from_slice(&[NEXTHDR_DEST, 0, 0, 0, 0, 0, 0, 0]);
        }
        assert_eq!(parse_ipv6(&q, q.len()), Err(ParseError::BadExtHeader));
    }

    #[test]
    fn l4_malformed() {
        let tcp = [0u8; 19];
        assert_eq!(
            parse_l4_ports(&tcp, IPPROTO_TCP),
            Err(ParseError::Truncated)
        );
        let mut tcp = [0u8; 20];
        assert_eq!(
            parse_l4_ports(&tcp, IPPROTO_TCP),
            Err(ParseError::BadHeaderLen)
        );
        tcp[12] = 6 << 4; // 24-byte header, only 20 present
        assert_eq!(
            parse_l4_ports(&tcp, IPPROTO_TCP),
            Err(ParseError::Truncated)
        );
        assert_eq!(tcp_flags(&tcp), Err(ParseError::Truncated));
        tcp[12] = 5 << 4;
        tcp[13] = 0x02;
        assert!(tcp_flags(&tcp).unwrap().syn);
        assert_eq!(
            parse_l4_ports(&[0u8; 7], IPPROTO_UDP),
            Err(ParseError::Truncated)
        );
        assert!(parse_l4_ports(&[0u8; 8], IPPROTO_UDP).is_ok());
        assert_eq!(
            parse_l4_ports(&[0u8; 11], IPPROTO_SCTP),
            Err(ParseError::Truncated)
        );
        let sctp = [0x8c, 0x2f, 0x00, 0x50, 0, 0, 0, 0, 0, 0, 0, 0];
        assert_eq!(
            parse_l4_ports(&sctp, IPPROTO_SCTP),
            Ok(Ports {
                src: 0x8c2f,
                dst: 80
            })
        );
        assert_eq!(
            parse_l4_ports(&[0u8; 40], 1),
            Err(ParseError::UnsupportedProto)
        );
    }

    #[test]
    fn header_checksum_known_value() {
        // The classic example header (checksum 0xb861).
        let h: [u8; 20] = [
            0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0xb8, 0x61, 0xc0, 0xa8,
            0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7,
        ];
        assert_eq!(ip_header_checksum(&h), 0xb861);
        assert!(ip_header_checksum_ok(&h));
        let mut bad = h;
        bad[15] ^= 1;
        assert!(!ip_header_checksum_ok(&bad));
        // Odd-length data is padded with zero.
        assert_eq!(csum_add(0, &[0x12]), 0x1200);
        assert_eq!(csum_fold(0x1_fffe), 0);
    }

    /// DNAT a packet the way NAT forwarding does (destination address and
    /// port), plus SNAT of the source, with incremental updates only, and
    /// compare against a full recompute.
    fn rewrite_and_check(proto: u8, rng: &mut Rng) {
        let r = rng.next();
        let s = (r as u32).to_be_bytes();
        let d = ((r >> 32) as u32).to_be_bytes();
        let r2 = rng.next();
        let sp = r2 as u16;
        let dp = (r2 >> 16) as u16;
        let plen = (r2 >> 32) as usize % 23;
        let payload: Vec<u8> = (0..plen).map(|_| rng.next() as u8).collect();
        let mut p = v4_packet(proto, s, d, sp, dp, &payload);
        let check_off = 20
            + if proto == IPPROTO_TCP {
                TCP_CHECK_OFFSET
            } else {
                UDP_CHECK_OFFSET
            };

        let r3 = rng.next();
        let nd = (r3 as u32).to_be_bytes();
        let ns = ((r3 >> 32) as u32).to_be_bytes();
        let r4 = rng.next();
        let ndp = r4 as u16;
        let nsp = (r4 >> 16) as u16;

        let mut ipc = get16(&p, 10);
        let mut l4c = get16(&p, check_off);
        let upd4 = |c: u16, o: u32, n: u32| {
            if proto == IPPROTO_UDP {
                udp_csum_replace4(c, o, n)
            } else {
                csum_replace4(c, o, n)
            }
        };
        let upd2 = |c: u16, o: u16, n: u16| {
            if proto == IPPROTO_UDP {
                udp_csum_replace2(c, o, n)
            } else {
                csum_replace2(c, o, n)
            }
        };
        ipc = csum_replace4(ipc, u32::from_be_bytes(d), u32::from_be_bytes(nd));
        ipc = csum_replace4(ipc, u32::from_be_bytes(s), u32::from_be_bytes(ns));
        l4c = upd4(l4c, u32::from_be_bytes(d), u32::from_be_bytes(nd));
        l4c = upd4(l4c, u32::from_be_bytes(s), u32::from_be_bytes(ns));
        l4c = upd2(l4c, dp, ndp);
        l4c = upd2(l4c, sp, nsp);
        p[16..20].copy_from_slice(&nd);
        p[12..16].copy_from_slice(&ns);
        put16(&mut p, 20, nsp);
        put16(&mut p, 22, ndp);
        put16(&mut p, 10, ipc);
        put16(&mut p, check_off, l4c);

        assert!(ip_header_checksum_ok(&p[..20]));
        assert_eq!(ipc, ip_header_checksum(&p[..20]));
        let off = check_off - 20;
        let full = full_l4_csum_v4(ns, nd, proto, &p[20..], off);
        if proto == IPPROTO_UDP {
            assert_ne!(l4c, 0);
            assert!(same_csum(l4c, udp_csum_nonzero(full)), "{l4c:#x} {full:#x}");
        } else {
            assert!(same_csum(l4c, full), "{l4c:#x} {full:#x}");
        }
    }

    #[test]
    fn incremental_equals_full_v4() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        for _ in 0..2000 {
            rewrite_and_check(IPPROTO_TCP, &mut rng);
            rewrite_and_check(IPPROTO_UDP, &mut rng);
        }
    }

    #[test]
    fn udp_zero_checksum() {
        // IPv4 UDP without checksum stays without.
        assert_eq!(udp_csum_replace4(0, 0x0a00_0001, 0x0a00_0002), 0);
        assert_eq!(udp_csum_replace2(0, 80, 8080), 0);
        // An update whose result is 0 is sent as 0xffff: check 1 means the
        // data sums to 0xfffe; adding 1 to a word makes the checksum 0.
        assert_eq!(csum_replace2(1, 0, 1), 0);
        assert_eq!(udp_csum_replace2(1, 0, 1), 0xffff);
        assert_eq!(csum_replace4(1, 0, 1), 0);
        assert_eq!(udp_csum_replace4(1, 0, 1), 0xffff);
        let mut one = [0u8; 16];
        one[1] = 1;
        assert_eq!(csum_replace16(1, &[0; 16], &one), 0);
        assert_eq!(udp6_csum_replace16(1, &[0; 16], &one), 0xffff);
    }

    #[test]
    fn incremental_equals_full_v6() {
        let mut rng = Rng(42);
        for _ in 0..1000 {
            let mut s = [0u8; 16];
            let mut d = [0u8; 16];
            let mut nd = [0u8; 16];
            for b in s.iter_mut().chain(d.iter_mut()).chain(nd.iter_mut()) {
                *b = rng.next() as u8;
            }
            let proto = if rng.next() & 1 == 0 {
                IPPROTO_TCP
            } else {
                IPPROTO_UDP
            };
            let (hlen, off) = if proto == IPPROTO_TCP {
                (20, TCP_CHECK_OFFSET)
            } else {
                (8, UDP_CHECK_OFFSET)
            };
            let mut l4 = vec![0u8; hlen + (rng.next() % 17) as usize];
            for b in l4.iter_mut() {
                *b = rng.next() as u8;
            }
            let c = udp_csum_nonzero(full_l4_csum_v6(&s, &d, proto, &l4, off));
            put16(&mut l4, off, c);
            let dp = get16(&l4, 2);
            let ndp = rng.next() as u16;
            let mut c2 = if proto == IPPROTO_UDP {
                udp6_csum_replace16(c, &d, &nd)
            } else {
                csum_replace16(c, &d, &nd)
            };
            c2 = csum_replace2(c2, dp, ndp);
            if proto == IPPROTO_UDP {
                c2 = udp_csum_nonzero(c2);
            }
            put16(&mut l4, 2, ndp);
            let full = full_l4_csum_v6(&s, &nd, proto, &l4, off);
            assert!(same_csum(c2, full), "{c2:#x} {full:#x}");
        }
    }

    #[test]
    fn pseudo_header_partial_update() {
        // With CHECKSUM_PARTIAL the field holds the folded, uncomplemented
        // pseudo-header sum; after an address change it must equal the sum
        // over the new pseudo-header.
        let pseudo = |s: [u8; 4], d: [u8; 4], len: u16| {
            let mut b = Vec::new();
            b.extend_from_slice(&s);
            b.extend_from_slice(&d);
            b.extend_from_slice(&[0, IPPROTO_TCP]);
            b.extend_from_slice(&len.to_be_bytes());
            csum_fold_raw(csum_add(0, &b))
        };
        let s = [192, 0, 2, 1];
        let d = [198, 51, 100, 7];
        let nd = [10, 1, 2, 3];
        let c = pseudo(s, d, 40);
        let c2 = pseudo_csum_replace4(c, u32::from_be_bytes(d), u32::from_be_bytes(nd));
        assert!(same_csum(c2, pseudo(s, nd, 40)));
        let c3 = pseudo_csum_replace2(c2, 40, 60);
        assert!(same_csum(c3, pseudo(s, nd, 60)));
        let mut d16 = [0u8; 16];
        let mut nd16 = [0u8; 16];
        d16[..4].copy_from_slice(&d);
        nd16[..4].copy_from_slice(&nd);
        let c4 = pseudo_csum_replace16(c, &d16, &nd16);
        assert!(same_csum(c4, pseudo(s, nd, 40)));
    }

    #[test]
    fn parse_ip_both_families() {
        let p = v4_packet(IPPROTO_TCP, [1, 2, 3, 4], [5, 6, 7, 8], 1000, 80, b"");
        let i = parse_ip(AddrFamily::Inet, &p, p.len()).unwrap();
        assert_eq!(i.af, AddrFamily::Inet);
        assert_eq!(i.saddr[..4], [1, 2, 3, 4]);
        assert_eq!(i.saddr[4..], [0; 12]);
        assert_eq!(i.daddr[..4], [5, 6, 7, 8]);
        assert_eq!(
            (i.proto, i.l4_offset, i.is_fragment),
            (IPPROTO_TCP, 20, false)
        );
        // An IPv6 parse of an IPv4 packet is refused, and the other way round.
        assert_eq!(
            parse_ip(AddrFamily::Inet6, &p, p.len()).unwrap_err(),
            ParseError::BadVersion
        );
        let mut q = v6_header(IPPROTO_UDP, 8);
        q.extend_from_slice(&[0, 53, 0, 53, 0, 8, 0, 0]);
        assert_eq!(
            parse_ip(AddrFamily::Inet, &q, q.len()).unwrap_err(),
            ParseError::BadVersion
        );
        let i = parse_ip(AddrFamily::Inet6, &q, q.len()).unwrap();
        assert_eq!((i.proto, i.l4_offset, i.df), (IPPROTO_UDP, 40, true));
        assert_eq!(i.saddr[..2], [0x20, 0x01]);
        assert_eq!(i.daddr[15], 2);
        assert_eq!(addr_offsets(AddrFamily::Inet6), (8, 24, 16));
        assert_eq!(&q[8..24], &i.saddr[..]);
        assert_eq!(&q[24..40], &i.daddr[..]);

        // Routing header then TCP: the L4 offset skips it.
        let mut r = v6_header(NEXTHDR_ROUTING, 24 + 20);
        r.extend_from_slice(&[IPPROTO_TCP, 2]);
        r.extend_from_slice(&[0u8; 22]);
        r.extend_from_slice(&[0x30, 0x39, 0, 80]);
        r.extend_from_slice(&[0u8; 16]);
        let i = parse_ip(AddrFamily::Inet6, &r, r.len()).unwrap();
        assert_eq!((i.proto, i.l4_offset), (IPPROTO_TCP, 64));
        let ports = parse_l4_ports(&r[64..], IPPROTO_TCP);
        // Data offset 0 in this synthetic header: refused, not misread.
        assert_eq!(ports, Err(ParseError::BadHeaderLen));
        // The extension header beyond the linear view: ask for more.
        assert_eq!(
            parse_ip(AddrFamily::Inet6, &r[..41], r.len()),
            Err(ParseError::NeedMore { needed: 42 })
        );
        // Its length pointing past the payload: refused.
        let mut bad = r.clone();
        bad[41] = 200;
        assert_eq!(
            parse_ip(AddrFamily::Inet6, &bad, bad.len()),
            Err(ParseError::BadTotalLen)
        );
        // A fragment header marks the packet as a fragment.
        let mut f = v6_header(NEXTHDR_FRAGMENT, 8 + 8);
        f.extend_from_slice(&[IPPROTO_UDP, 0, 0, 1, 0, 0, 0, 9]);
        f.extend_from_slice(&[0, 53, 0, 53, 0, 8, 0, 0]);
        let i = parse_ip(AddrFamily::Inet6, &f, f.len()).unwrap();
        assert!(i.is_fragment);
        // A chain of extension headers longer than the limit.
        let n = IPV6_MAX_EXT_HEADERS + 1;
        let mut long = v6_header(NEXTHDR_DEST, (n * 8) as u16);
        for _ in 0..n {
            long.extend_from_slice(&[NEXTHDR_DEST, 0, 0, 0, 0, 0, 0, 0]);
        }
        assert_eq!(
            parse_ip(AddrFamily::Inet6, &long, long.len()),
            Err(ParseError::BadExtHeader)
        );
    }

    #[test]
    fn never_panics_on_short_or_garbage_input() {
        let mut rng = Rng(7);
        for len in 0..80 {
            for _ in 0..50 {
                let mut b = vec![0u8; len];
                for x in b.iter_mut() {
                    *x = rng.next() as u8;
                }
                if len > 0 {
                    b[0] = if rng.next() & 1 == 0 { 0x45 } else { 0x60 };
                }
                let pkt_len = len + (rng.next() % 3) as usize;
                let _ = parse_ipv4(&b, pkt_len);
                let _ = parse_ipv6(&b, pkt_len);
                let _ = parse_ip(AddrFamily::Inet, &b, pkt_len);
                let _ = parse_ip(AddrFamily::Inet6, &b, pkt_len);
                let _ = parse_l4_ports(&b, IPPROTO_TCP);
                let _ = parse_l4_ports(&b, IPPROTO_UDP);
                let _ = tcp_flags(&b);
                let _ = ip_header_checksum(&b);
            }
        }
    }
}
