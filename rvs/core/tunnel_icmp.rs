// SPDX-License-Identifier: GPL-2.0

//! ICMP errors about the director's own tunnel packets.
//!
//! C counterpart: the tunnel case of `ip_vs_in_icmp` (ip_vs_core.c, with
//! `ipvs_udp_decap` and `ipvs_gre_decap`).
//!
//! A TUN real server is reached by packets the director builds itself
//! (`director -> real server`, carrying `client -> VIP`). When a router on
//! that path cannot forward one, its ICMP error comes back to the
//! director, quoting the tunnel packet; the kernel has no tunnel device
//! for it and drops it. Two things are lost: the path MTU toward the real
//! server (so every large packet is sent again too big: a black hole for
//! the client's connection), and the client never hears of it. Like IPVS,
//! rvs finds the client's packet inside the quote, updates the route's
//! MTU, and sends the client the error about its own packet, with the MTU
//! lowered by what the tunnel adds.
//!
//! As IPVS: IPv4 tunnels carrying IPv4 (IP-in-IP, GUE whose protocol is
//! IPIP, GRE version 0 with at most a checksum, protocol IPv4), and the
//! quoted tunnel packet must be a first fragment. The quote must reach the
//! client's ports (routers quote up to 576 bytes; RFC 792's minimum, the
//! outer header plus 8 bytes, does not).

#![forbid(unsafe_code)]

use super::icmp::{
    self, IcmpQuote, IcmpSkip, ICMP_DEST_UNREACH, ICMP_FRAG_NEEDED, ICMP_HLEN, IPPROTO_ICMP,
};
use super::packet::{Ipv4Info, ParseError, IP_DF, IP_OFFSET};
use super::tunnel::{Tunnel, IPPROTO_GRE, IPPROTO_IPIP, IPPROTO_UDP, UDP_HLEN};

/// The GRE checksum-present bit, in the first 16-bit word.
const GRE_CSUM: u16 = 0x8000;
/// `ETH_P_IP`, GRE's protocol field for an IPv4 inner packet.
const ETH_P_IP: u16 = 0x0800;
/// The smallest IPv4 MTU (RFC 791).
const IPV4_MIN_MTU: u32 = 68;

/// The encapsulation found in a quoted tunnel packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Encap {
    /// IP-in-IP.
    Ipip,
    /// GUE to UDP port `port` (host order).
    Gue {
        /// The quoted UDP destination port.
        port: u16,
    },
    /// GRE.
    Gre,
}

impl Encap {
    /// Whether a real server configured with `tunnel` sends this.
    pub fn is_of(self, tunnel: Tunnel) -> bool {
        match (self, tunnel) {
            (Encap::Ipip, Tunnel::Ipip) | (Encap::Gre, Tunnel::Gre { .. }) => true,
            (Encap::Gue { port }, Tunnel::Gue { port: p, .. }) => port == p,
            _ => false,
        }
    }
}

/// An ICMP error quoting a tunnel packet the director sent. Offsets count
/// from the error's outer IP header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TunnelQuote {
    /// The client's packet (`client -> VIP`) inside the tunnel packet.
    pub quote: IcmpQuote,
    /// Where the quoted tunnel packet's IP header starts.
    pub tun_off: usize,
    /// Its header length.
    pub tun_ihl: usize,
    /// Its destination, the real server (rvs's 16-byte form).
    pub server: [u8; 16],
    /// The encapsulation.
    pub encap: Encap,
    /// Bytes the tunnel adds in front of the client's packet.
    pub overhead: usize,
    /// The tunnel packet's DF bit (the director copies the client's).
    pub df: bool,
    /// The 4 bytes after the ICMP type, code and checksum (for
    /// "fragmentation needed", the next-hop MTU in the low 16 bits).
    pub info: [u8; 4],
}

impl TunnelQuote {
    /// Whether the error is "fragmentation needed".
    pub fn frag_needed(&self) -> bool {
        self.quote.icmp_type == ICMP_DEST_UNREACH && self.quote.code == ICMP_FRAG_NEEDED
    }

    /// The next-hop MTU a "fragmentation needed" reports.
    pub fn reported_mtu(&self) -> u32 {
        u32::from(u16::from_be_bytes([self.info[2], self.info[3]]))
    }

    /// The MTU to tell the client for a path MTU of `path_mtu` toward the
    /// real server: less the tunnel's overhead, unless that would go below
    /// the IPv4 minimum (then unchanged, as IPVS).
    pub fn client_mtu(&self, path_mtu: u32) -> u32 {
        let overhead = u32::try_from(self.overhead).unwrap_or(u32::MAX);
        match path_mtu.checked_sub(overhead) {
            Some(m) if path_mtu > IPV4_MIN_MTU.saturating_add(overhead) => m,
            _ => path_mtu,
        }
    }
}

/// How many bytes from the outer IPv4 header on the kernel should make
/// linear before [`parse_v4`]: the ICMP header, the longest tunnel IP
/// header, UDP and GUE with the most options, the longest quoted IPv4
/// header and a TCP header up to its checksum; capped at `pkt_len`.
pub fn linear_len(outer_ihl: usize, pkt_len: usize) -> usize {
    const MOST: usize = ICMP_HLEN + 60 + UDP_HLEN + 4 + 31 * 4 + 60 + 18;
    outer_ihl.saturating_add(MOST).min(pkt_len)
}

/// Parses an IPv4 ICMP error (`outer`, already parsed; `buf`: the linear
/// bytes from its IP header on) that quotes an IPv4 tunnel packet carrying
/// an IPv4 TCP or UDP packet. Never reads past `buf`.
pub fn parse_v4(buf: &[u8], outer: &Ipv4Info) -> Result<TunnelQuote, IcmpSkip> {
    if outer.proto != IPPROTO_ICMP {
        return Err(IcmpSkip::NotError);
    }
    if outer.is_fragment {
        return Err(IcmpSkip::Fragment);
    }
    let icmp_off = outer.ihl_len;
    let tun_off = icmp_off.saturating_add(ICMP_HLEN);
    let Some(&[icmp_type, code, _, _, i0, i1, i2, i3]) = buf.get(icmp_off..tun_off) else {
        return Err(ParseError::Truncated.into());
    };
    if !icmp::is_error_type(icmp_type) {
        return Err(IcmpSkip::NotError);
    }
    // The quoted tunnel packet's fixed header: version/IHL, fragment
    // field, protocol, destination.
    let Some(&[vihl, _, _, _, _, _, f0, f1, _, proto, _, _, _, _, _, _, d0, d1, d2, d3]) =
        buf.get(tun_off..tun_off.saturating_add(20))
    else {
        return Err(ParseError::Truncated.into());
    };
    if vihl >> 4 != 4 {
        return Err(ParseError::BadVersion.into());
    }
    let tun_ihl = usize::from(vihl & 0x0f) * 4;
    if tun_ihl < 20 {
        return Err(ParseError::BadHeaderLen.into());
    }
    let frag = u16::from_be_bytes([f0, f1]);
    if frag & IP_OFFSET != 0 {
        return Err(IcmpSkip::Fragment);
    }
    let mut server = [0u8; 16];
    server[..4].copy_from_slice(&[d0, d1, d2, d3]);
    let encap_off = tun_off.saturating_add(tun_ihl);
    let after = buf.get(encap_off..).ok_or(ParseError::Truncated)?;
    let (encap, encap_len) = match proto {
        IPPROTO_IPIP => (Encap::Ipip, 0),
        IPPROTO_UDP => parse_gue(after)?,
        IPPROTO_GRE => parse_gre(after)?,
        _ => return Err(IcmpSkip::OtherProto),
    };
    let overhead = tun_ihl.saturating_add(encap_len);
    let inner_off = tun_off.saturating_add(overhead);
    let quote = icmp::quote_v4(buf, icmp_type, code, icmp_off, inner_off)?;
    Ok(TunnelQuote {
        quote,
        tun_off,
        tun_ihl,
        server,
        encap,
        overhead,
        df: frag & IP_DF != 0,
        info: [i0, i1, i2, i3],
    })
}

/// UDP and a GUE header (version 0, data message) carrying IPv4: the
/// encapsulation and its length.
fn parse_gue(b: &[u8]) -> Result<(Encap, usize), IcmpSkip> {
    let Some(&[_, _, p0, p1, _, _, _, _, first, proto, _, _]) = b.get(..UDP_HLEN + 4) else {
        return Err(ParseError::Truncated.into());
    };
    // Version (2 bits) and control (1 bit) must be 0; hlen counts 4-byte
    // option words.
    if first & 0xe0 != 0 || proto != IPPROTO_IPIP {
        return Err(IcmpSkip::OtherProto);
    }
    let len = usize::from(first & 0x1f)
        .saturating_mul(4)
        .saturating_add(UDP_HLEN + 4);
    Ok((
        Encap::Gue {
            port: u16::from_be_bytes([p0, p1]),
        },
        len,
    ))
}

/// A GRE header (version 0, no flag but the checksum) carrying IPv4: the
/// encapsulation and its length.
fn parse_gre(b: &[u8]) -> Result<(Encap, usize), IcmpSkip> {
    let Some(&[f0, f1, p0, p1]) = b.get(..4) else {
        return Err(ParseError::Truncated.into());
    };
    let flags = u16::from_be_bytes([f0, f1]);
    if flags & !GRE_CSUM != 0 || u16::from_be_bytes([p0, p1]) != ETH_P_IP {
        return Err(IcmpSkip::OtherProto);
    }
    let len = if flags & GRE_CSUM != 0 { 8 } else { 4 };
    Ok((Encap::Gre, len))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{self, IPPROTO_TCP};
    use std::vec;
    use std::vec::Vec;

    const CLIENT: [u8; 4] = [10, 0, 0, 2];
    const VIP: [u8; 4] = [10, 0, 0, 100];
    const DIRECTOR: [u8; 4] = [172, 16, 0, 1];
    const SERVER: [u8; 4] = [172, 16, 1, 2];
    const ROUTER: [u8; 4] = [172, 16, 0, 254];

    fn ip(proto: u8, src: [u8; 4], dst: [u8; 4], payload: &[u8], df: bool) -> Vec<u8> {
        let mut h = vec![
            0x45,
            0,
            0,
            0,
            0,
            1,
            if df { 0x40 } else { 0 },
            0,
            64,
            proto,
            0,
            0,
        ];
        h[2..4].copy_from_slice(&((20 + payload.len()) as u16).to_be_bytes());
        h.extend_from_slice(&src);
        h.extend_from_slice(&dst);
        let c = packet::ip_header_checksum(&h);
        h[10..12].copy_from_slice(&c.to_be_bytes());
        h.extend_from_slice(payload);
        h
    }

    /// The client's TCP segment to the VIP (header only, 1400 bytes said).
    fn client_packet(df: bool) -> Vec<u8> {
        let mut tcp = vec![0u8; 20];
        tcp[0..2].copy_from_slice(&40000u16.to_be_bytes());
        tcp[2..4].copy_from_slice(&80u16.to_be_bytes());
        tcp[12] = 5 << 4;
        tcp[13] = 0x10;
        ip(IPPROTO_TCP, CLIENT, VIP, &tcp, df)
    }

    /// A router's error about the director's tunnel packet with `encap`
    /// bytes between the tunnel's IP header and the client's packet.
    fn error(t: u8, code: u8, mtu: u16, tun_proto: u8, encap: &[u8], df: bool) -> Vec<u8> {
        let mut inner = encap.to_vec();
        inner.extend(client_packet(df));
        let tun = ip(tun_proto, DIRECTOR, SERVER, &inner, df);
        let mut icmp = vec![t, code, 0, 0, 0, 0];
        icmp.extend_from_slice(&mtu.to_be_bytes());
        icmp.extend(tun);
        ip(IPPROTO_ICMP, ROUTER, DIRECTOR, &icmp, false)
    }

    fn parse(b: &[u8]) -> Result<TunnelQuote, IcmpSkip> {
        let outer = packet::parse_ipv4(b, b.len()).unwrap();
        parse_v4(b, &outer)
    }

    fn gue(port: u16, first: u8, proto: u8) -> Vec<u8> {
        let mut h = vec![0xc0, 0x01, 0, 0, 0, 0, 0, 0, first, proto, 0, 0];
        h[2..4].copy_from_slice(&port.to_be_bytes());
        h.extend(vec![0u8; usize::from(first & 0x1f) * 4]);
        h
    }

    #[test]
    fn ipip_frag_needed() {
        let q = parse(&error(3, 4, 1400, IPPROTO_IPIP, &[], true)).unwrap();
        assert_eq!(q.encap, Encap::Ipip);
        assert_eq!((q.tun_off, q.tun_ihl, q.overhead), (28, 20, 20));
        assert_eq!(&q.server[..4], &SERVER);
        assert!(q.frag_needed() && q.df);
        assert_eq!(q.reported_mtu(), 1400);
        assert_eq!(q.client_mtu(1400), 1380);
        // The client's own packet, with its ports.
        assert_eq!(
            (&q.quote.saddr[..4], &q.quote.daddr[..4]),
            (&CLIENT[..], &VIP[..])
        );
        assert_eq!(
            (q.quote.sport, q.quote.dport, q.quote.proto),
            (40000, 80, IPPROTO_TCP)
        );
        assert_eq!(q.quote.inner_off, 48);
        assert!(Encap::Ipip.is_of(Tunnel::Ipip));
        assert!(!Encap::Ipip.is_of(Tunnel::Gre { csum: false }));
    }

    #[test]
    fn gue_and_gre() {
        let q = parse(&error(3, 4, 1400, IPPROTO_UDP, &gue(6080, 0, 4), true)).unwrap();
        assert_eq!((q.encap, q.overhead), (Encap::Gue { port: 6080 }, 32));
        assert!(q.encap.is_of(Tunnel::Gue {
            port: 6080,
            csum: true,
            remcsum: false
        }));
        assert!(!q.encap.is_of(Tunnel::Gue {
            port: 6081,
            csum: true,
            remcsum: false
        }));
        assert_eq!(q.quote.dport, 80);
        // GUE options (hlen) are skipped.
        let q = parse(&error(3, 4, 1400, IPPROTO_UDP, &gue(6080, 2, 4), true)).unwrap();
        assert_eq!((q.overhead, q.quote.sport), (40, 40000));
        for (first, proto) in [(0x40, 4), (0x20, 4), (0, 41)] {
            let e = parse(&error(
                3,
                4,
                1400,
                IPPROTO_UDP,
                &gue(6080, first, proto),
                true,
            ));
            assert_eq!(
                e.unwrap_err(),
                IcmpSkip::OtherProto,
                "GUE {first:#x} {proto}"
            );
        }
        let q = parse(&error(11, 0, 0, IPPROTO_GRE, &[0, 0, 8, 0], false)).unwrap();
        assert_eq!(
            (q.encap, q.overhead, q.df, q.frag_needed()),
            (Encap::Gre, 24, false, false)
        );
        let q = parse(&error(
            3,
            4,
            1400,
            IPPROTO_GRE,
            &[0x80, 0, 8, 0, 0, 0, 0, 0],
            true,
        ))
        .unwrap();
        assert_eq!(q.overhead, 28);
        for bad in [[0x20, 0, 8, 0], [0, 1, 8, 0], [0, 0, 0x86, 0xdd]] {
            let e = parse(&error(3, 4, 1400, IPPROTO_GRE, &bad, true));
            assert_eq!(e.unwrap_err(), IcmpSkip::OtherProto, "GRE {bad:?}");
        }
    }

    #[test]
    fn client_mtu_floor() {
        let q = parse(&error(3, 4, 80, IPPROTO_IPIP, &[], true)).unwrap();
        assert_eq!(q.client_mtu(80), 80);
        assert_eq!(q.client_mtu(89), 69);
        assert_eq!(q.client_mtu(88), 88);
        assert_eq!(q.client_mtu(0), 0);
    }

    #[test]
    fn refusals_never_read_out_of_bounds() {
        // Not a tunnel: a plain quoted TCP packet is someone else's.
        let mut icmp = vec![3, 4, 0, 0, 0, 0, 5, 0];
        icmp.extend(client_packet(true));
        let plain = ip(IPPROTO_ICMP, ROUTER, DIRECTOR, &icmp, false);
        assert_eq!(parse(&plain).unwrap_err(), IcmpSkip::OtherProto);
        // Echo replies are not errors.
        let mut echo = error(3, 4, 1400, IPPROTO_IPIP, &[], true);
        echo[20] = 0;
        assert_eq!(parse(&echo).unwrap_err(), IcmpSkip::NotError);
        // A non-first fragment of the tunnel packet has no inner header.
        let mut frag = error(3, 4, 1400, IPPROTO_IPIP, &[], true);
        frag[28 + 7] = 1;
        assert_eq!(parse(&frag).unwrap_err(), IcmpSkip::Fragment);
        // RFC 792's minimal quote (tunnel header + 8 bytes) lacks the ports.
        let full = error(3, 4, 1400, IPPROTO_IPIP, &[], true);
        let minimal = ip(
            IPPROTO_ICMP,
            ROUTER,
            DIRECTOR,
            &full[20..28 + 20 + 8],
            false,
        );
        assert_eq!(
            parse(&minimal).unwrap_err(),
            IcmpSkip::Malformed(ParseError::Truncated)
        );
        // Every cut of the linear bytes (the rest of the packet not linear):
        // an error until the client's ports are in, never a panic.
        for (e, ports_end) in [
            (full.clone(), 28 + 20 + 20 + 4),
            (
                error(3, 4, 1400, IPPROTO_UDP, &gue(6080, 3, 4), true),
                28 + 20 + 24 + 20 + 4,
            ),
            (
                error(3, 4, 1400, IPPROTO_GRE, &[0x80, 0, 8, 0, 0, 0, 0, 0], true),
                28 + 28 + 20 + 4,
            ),
        ] {
            for n in 20..e.len() {
                let b = &e[..n];
                let outer = packet::parse_ipv4(b, e.len()).unwrap();
                let r = parse_v4(b, &outer);
                assert_eq!(r.is_ok(), n >= ports_end, "cut at {n} of {}", e.len());
            }
        }
    }
}
