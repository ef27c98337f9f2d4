// SPDX-License-Identifier: GPL-2.0

//! Parsing packets at the hooks: the IP header (IPv6: with its extension
//! headers) and the TCP/UDP/SCTP header, or an ICMP error and the packet it
//! quotes, made linear exactly as far as they are read (`rvs_core::packet`
//! and `rvs_core::icmp` validate them).

#![forbid(unsafe_code)]

use crate::rvs_core::config::AddrFamily;
use crate::rvs_core::icmp::{self, IcmpQuote, IcmpSkip, IPPROTO_ICMP, IPPROTO_ICMPV6};
use crate::rvs_core::packet::{
    self, IpInfo, Ipv4Info, Ipv6Info, ParseError, IPPROTO_SCTP, IPPROTO_TCP, IPPROTO_UDP,
};
use crate::rvs_core::proto::{L4Event, TcpFlags};
use crate::rvs_core::sctp::{self, SctpEvent};
use crate::rvs_core::tcp_reset::{self, SegSeq};
use crate::sys::skb::Skb;

/// A parsed TCP/UDP/SCTP over IPv4 or IPv6 packet.
pub(crate) struct Packet {
    /// The IP header fields (either family; addresses in 16-byte form).
    pub(crate) ip: IpInfo,
    /// Source port, host order.
    pub(crate) sport: u16,
    /// Destination port, host order.
    pub(crate) dport: u16,
    /// What the transport header says to the connection's tracker.
    pub(crate) l4: L4Event,
    /// TCP: what the segment says of each end's next sequence number.
    pub(crate) seq: Option<SegSeq>,
}

impl Packet {
    /// The TCP flags of a TCP segment; `None` for UDP and SCTP.
    pub(crate) fn tcp(&self) -> Option<TcpFlags> {
        self.l4.tcp()
    }
}

/// How many linear bytes a parser asked for, if that is why it stopped.
fn needed(e: ParseError) -> Option<usize> {
    e.needed()
}

/// Parses the IPv4 header (options included), making it linear (for ICMP
/// errors).
pub(crate) fn parse_ipv4(skb: &mut Skb<'_>) -> Option<Ipv4Info> {
    let pkt_len = skb.len();
    skb.parse_linear(20, |hdr| packet::parse_ipv4(hdr, pkt_len).map_err(needed))
}

/// Parses the IPv6 header chain, making it linear (for ICMPv6 errors).
fn parse_ipv6(skb: &mut Skb<'_>) -> Option<Ipv6Info> {
    let pkt_len = skb.len();
    skb.parse_linear(40, |hdr| packet::parse_ipv6(hdr, pkt_len).map_err(needed))
}

/// Parses an ICMP (IPv4) or ICMPv6 error of family `af` and the packet it
/// quotes, making linear what a translation reads and writes. `None` for
/// anything that is not such an error about a TCP/UDP/SCTP packet.
pub(crate) fn parse_icmp_error(skb: &mut Skb<'_>, af: AddrFamily) -> Option<(IpInfo, IcmpQuote)> {
    match af {
        AddrFamily::Inet => {
            let outer = parse_ipv4(skb)?;
            if outer.proto != IPPROTO_ICMP {
                return None;
            }
            let want = icmp::linear_len_v4(outer.ihl_len, skb.len());
            let q = icmp::parse_v4(skb.header(want)?, &outer).ok()?;
            Some((IpInfo::from_v4(&outer), q))
        }
        AddrFamily::Inet6 => {
            let outer = parse_ipv6(skb)?;
            if outer.proto != IPPROTO_ICMPV6 {
                return None;
            }
            // Quoted extension headers ask for more; `needed` only grows
            // and stays within the packet (parse_v6's contract), and the
            // chain is at most IPV6_MAX_EXT_HEADERS long.
            let want = icmp::linear_len_v6(outer.l4_offset, outer.total_len);
            let q = skb.parse_linear(want, |hdr| {
                icmp::parse_v6(hdr, &outer).map_err(|e| match e {
                    IcmpSkip::Malformed(e) => needed(e),
                    _ => None,
                })
            })?;
            Some((IpInfo::from_v6(&outer), q))
        }
    }
}

/// Parses the IP header (IPv6: with its extension headers) of family `af`
/// and the TCP/UDP/SCTP header (SCTP: and the chunk header that decides
/// its event), making exactly those bytes linear. `None` for anything rvs
/// does not balance (other protocols, fragments, truncated or malformed
/// headers).
pub(crate) fn parse(skb: &mut Skb<'_>, af: AddrFamily) -> Option<Packet> {
    let ip = skb.parse_ip(af)?;
    if ip.is_fragment {
        return None;
    }
    parse_l4(skb, ip)
}

/// The rest of [`parse`]: the transport header after the IP header `ip`
/// (parsed by the caller: [`parse`], or the fast path's own check).
pub(crate) fn parse_l4(skb: &mut Skb<'_>, ip: IpInfo) -> Option<Packet> {
    let pkt_len = skb.len();
    let off = ip.l4_offset;
    let l4_len = match ip.proto {
        // The full TCP header, options included (its length is in byte 12).
        IPPROTO_TCP => {
            let doff = skb.header(off.checked_add(20)?)?.get(off + 12)? >> 4;
            usize::from(doff) * 4
        }
        IPPROTO_UDP => 8,
        // The common header and the first chunk's header.
        IPPROTO_SCTP => sctp::HEADER_LEN + sctp::CHUNK_HEADER_LEN,
        _ => return None,
    };
    let hdr = skb.header(off.checked_add(l4_len)?)?;
    let l4 = hdr.get(off..)?;
    let ports = packet::parse_l4_ports(l4, ip.proto).ok()?;
    let mut seq = None;
    let l4 = match ip.proto {
        IPPROTO_TCP => {
            seq = tcp_reset::seg_seq(l4, pkt_len.saturating_sub(off).saturating_sub(l4_len));
            L4Event::Tcp(packet::tcp_flags(l4).ok()?)
        }
        IPPROTO_SCTP => {
            let (first, len) = sctp::first_chunk(l4).ok()?;
            L4Event::Sctp(sctp_event(skb, off, first, len))
        }
        _ => L4Event::Udp,
    };
    Some(Packet {
        ip,
        sport: ports.src,
        dport: ports.dst,
        l4,
        seq,
    })
}

/// The event of the SCTP packet whose header is at `off` and whose first
/// chunk is of type `first` and length `len`: that chunk's, or an abort
/// if a COOKIE ECHO or ACK has an ABORT bundled behind it (the one case
/// that reads a second chunk header, made linear then; a packet that ends
/// before it has none).
fn sctp_event(skb: &mut Skb<'_>, off: usize, first: u8, len: u16) -> SctpEvent {
    let next = if sctp::looks_past(first) {
        sctp::next_chunk_offset(len)
            .and_then(|n| off.checked_add(n))
            .and_then(|at| Some((at, at.checked_add(sctp::CHUNK_HEADER_LEN)?)))
            .filter(|&(_, end)| end <= skb.len())
            .and_then(|(at, end)| skb.header(end)?.get(at).copied())
    } else {
        None
    };
    SctpEvent::of(first, next)
}

/// Whether an IPv4 packet is a fragment of a TCP, UDP or SCTP packet.
pub(crate) fn is_l4_fragment(skb: &mut Skb<'_>) -> bool {
    // Fragment field (bytes 6-7), TTL, protocol (byte 9).
    let Some(&[f0, f1, _, proto]) = skb.header(20).and_then(|h| h.get(6..10)) else {
        return false;
    };
    let frag = u16::from_be_bytes([f0, f1]);
    frag & (packet::IP_MF | packet::IP_OFFSET) != 0
        && (proto == IPPROTO_TCP || proto == IPPROTO_UDP || proto == IPPROTO_SCTP)
}
