// SPDX-License-Identifier: GPL-2.0

//! Transmit: NAT, direct routing and tunnels (IP-in-IP, GUE, GRE) to the
//! chosen real server.
//!
//! C counterpart: net/netfilter/ipvs/ip_vs_xmit.c.
//!
//! Each method routes the packet to the real server, checks the path MTU
//! (sending "fragmentation needed" back when DF forbids fitting it), and
//! sends it through LOCAL_OUT marked as rvs's, so firewall rules still see
//! it and rvs's hooks let it pass.

use crate::conn::Conn;
use crate::datapath::{addr4, Packet};
use crate::ffi;
use crate::genl::errno;
use crate::hooks::Verdict;
use crate::netns::Net;
use crate::rvs_core::config::FwdMethod;
use crate::rvs_core::packet::{self, IPPROTO_UDP, IP_DF, TCP_CHECK_OFFSET, UDP_CHECK_OFFSET};
use crate::rvs_core::tunnel::{self, Tunnel};
use crate::skb::{self, Skb};
use kernel::prelude::*;

/// Which end of the packet a NAT rewrite changes.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Side {
    /// Source address and port (replies: real server -> virtual service).
    Source,
    /// Destination address and port (requests: virtual service -> server).
    Destination,
}

/// Outer header size of IP-in-IP.
const IPIP_HLEN: u32 = 20;
/// Headroom asked for in front of a tunnelled packet: outer header plus
/// room for the link layer.
const IPIP_HEADROOM: u32 = IPIP_HLEN + 64;

/// Sends a request of connection `conn` to its real server. `from_wire`:
/// the packet arrived from another host (LOCAL_IN), so any socket that
/// early demux attached must be dropped before it leaves again.
pub(crate) fn transmit(
    net: &Net,
    mut skb: Skb<'_>,
    pkt: &Packet,
    conn: &Conn,
    from_wire: bool,
) -> Verdict {
    let daddr = addr4(&conn.tuple.daddr);
    let df = pkt.ip.frag_off_field & IP_DF != 0;
    match conn.fwd {
        FwdMethod::Masq => {
            if nat_rewrite(&mut skb, pkt, Side::Destination, daddr, conn.tuple.dport).is_err() {
                return Verdict::Drop;
            }
            let Ok(rt) = skb::route_to(net, &mut skb, daddr, false) else {
                return Verdict::Drop;
            };
            if too_big(&skb, rt.mtu, df) {
                skb::icmp_frag_needed(&mut skb, rt.mtu);
                return Verdict::Drop;
            }
        }
        FwdMethod::Route => {
            let Ok(rt) = skb::route_to(net, &mut skb, daddr, true) else {
                return Verdict::Drop;
            };
            if too_big(&skb, rt.mtu, df) {
                skb::icmp_frag_needed(&mut skb, rt.mtu);
                return Verdict::Drop;
            }
        }
        FwdMethod::Tunnel => {
            let Ok(rt) = skb::route_to(net, &mut skb, daddr, false) else {
                return Verdict::Drop;
            };
            let tunnel = conn.dest.tunnel();
            let overhead = IPIP_HLEN + tunnel.header_len() as u32;
            let inner_mtu = rt.mtu.saturating_sub(overhead);
            if too_big(&skb, inner_mtu, df) {
                skb::icmp_frag_needed(&mut skb, inner_mtu);
                return Verdict::Drop;
            }
            if encapsulate(net, &mut skb, pkt, tunnel, rt.saddr, daddr).is_err() {
                return Verdict::Drop;
            }
        }
    }
    skb::local_out(net, skb, from_wire);
    Verdict::Stolen
}

/// Sends an ICMP error about connection `conn` (already translated for
/// NAT by the caller) to its real server: routed to it for NAT, to it as
/// next hop for DR, inside IP-in-IP for TUN. `ip` is the error's IPv4
/// header. The error arrived from another host (LOCAL_IN).
pub(crate) fn forward_icmp(
    net: &Net,
    mut skb: Skb<'_>,
    ip: &packet::Ipv4Info,
    conn: &Conn,
) -> Verdict {
    let daddr = addr4(&conn.tuple.daddr);
    let known_nh = conn.fwd == FwdMethod::Route;
    let Ok(rt) = skb::route_to(net, &mut skb, daddr, known_nh) else {
        return Verdict::Drop;
    };
    if conn.fwd == FwdMethod::Tunnel {
        let pkt = Packet {
            ip: *ip,
            sport: 0,
            dport: 0,
            tcp: None,
        };
        if encapsulate(net, &mut skb, &pkt, conn.dest.tunnel(), rt.saddr, daddr).is_err() {
            return Verdict::Drop;
        }
    }
    skb::local_out(net, skb, true);
    Verdict::Stolen
}

/// Whether a packet of this size may not leave on a path of `mtu`: it is
/// larger, may not be fragmented, and the stack will not segment it.
fn too_big(skb: &Skb<'_>, mtu: u32, df: bool) -> bool {
    df && !skb.is_gso() && skb.len() > mtu as usize
}

/// Rewrites one end's address and port, keeping the IP header checksum and
/// the TCP/UDP checksum right for every checksum offload mode.
pub(crate) fn nat_rewrite(
    skb: &mut Skb<'_>,
    pkt: &Packet,
    side: Side,
    addr: [u8; 4],
    port: u16,
) -> Result {
    let ihl = pkt.ip.ihl_len;
    let is_udp = pkt.ip.proto == IPPROTO_UDP;
    let check_at = ihl
        + if is_udp {
            UDP_CHECK_OFFSET
        } else {
            TCP_CHECK_OFFSET
        };
    let (addr_at, port_at) = match side {
        Side::Source => (12, ihl),
        Side::Destination => (16, ihl + 2),
    };
    let h = skb.header_mut(check_at + 2).ok_or(ENOMEM)?;
    let old_addr: [u8; 4] = h
        .get(addr_at..addr_at + 4)
        .and_then(|s| s.try_into().ok())
        .ok_or(EINVAL)?;
    let old_port: [u8; 2] = h
        .get(port_at..port_at + 2)
        .and_then(|s| s.try_into().ok())
        .ok_or(EINVAL)?;
    let new_port = port.to_be_bytes();
    let udp_no_csum = is_udp && h.get(check_at..check_at + 2) == Some(&[0, 0][..]);
    h.get_mut(addr_at..addr_at + 4)
        .ok_or(EINVAL)?
        .copy_from_slice(&addr);
    h.get_mut(port_at..port_at + 2)
        .ok_or(EINVAL)?
        .copy_from_slice(&new_port);
    let iph = h.get_mut(..ihl).ok_or(EINVAL)?;
    iph[10] = 0;
    iph[11] = 0;
    let sum = packet::ip_header_checksum(iph);
    iph[10..12].copy_from_slice(&sum.to_be_bytes());
    if !udp_no_csum {
        skb.csum_replace4(check_at, old_addr, addr, true);
        skb.csum_replace2(check_at, old_port, new_port);
        if is_udp {
            let partial = skb.csum_partial();
            // A computed UDP checksum of 0 is sent as all ones (RFC 768).
            if let Some(c) = skb
                .header_mut(check_at + 2)
                .and_then(|h| h.get_mut(check_at..check_at + 2))
            {
                if c == [0, 0] && !partial {
                    c.copy_from_slice(&[0xff, 0xff]);
                }
            }
        }
    }
    Ok(())
}

/// Wraps the packet for `tunnel` (GUE or GRE header, if any, then an
/// outer IPv4 header from `saddr` to `daddr`).
fn encapsulate(
    net: &Net,
    skb: &mut Skb<'_>,
    pkt: &Packet,
    tunnel: Tunnel,
    saddr: [u8; 4],
    daddr: [u8; 4],
) -> Result {
    let inner_len = skb.len();
    let tun_len = tunnel.header_len();
    let total = inner_len
        .checked_add(tun_len + IPIP_HLEN as usize)
        .and_then(|t| u16::try_from(t).ok())
        .ok_or_else(|| errno(ffi::EMSGSIZE))?;
    skb::cow_head(skb, IPIP_HEADROOM + tun_len as u32)?;
    let tos = skb.header(2).and_then(|h| h.get(1).copied()).unwrap_or(0);
    // The flow hash is taken from the inner packet, before any push.
    let sport = match tunnel {
        Tunnel::Gue { .. } => skb::udp_flow_src_port(net, skb),
        _ => 0,
    };
    skb::tunnel_prepare(skb, gso_type(tunnel))?;
    match tunnel {
        Tunnel::Ipip => {}
        Tunnel::Gue { csum, .. } => {
            let mut hdr = [0u8; tunnel::GUE_HLEN];
            tunnel
                .gue_header(inner_len, false, sport, &mut hdr)
                .ok_or_else(|| errno(ffi::EMSGSIZE))?;
            skb::push_tunnel_header(skb, &hdr)?;
            skb::udp_tunnel_csum(skb, csum, saddr, daddr);
        }
        Tunnel::Gre { csum } => skb::push_gre_header(skb, csum, tun_len)?,
    }
    let mut hdr = [0u8; 20];
    hdr[0] = 0x45;
    hdr[1] = tos;
    hdr[2..4].copy_from_slice(&total.to_be_bytes());
    // Outer DF follows the inner packet's, so PMTU discovery still works.
    let frag = pkt.ip.frag_off_field & IP_DF;
    hdr[6..8].copy_from_slice(&frag.to_be_bytes());
    hdr[8] = 64;
    hdr[9] = tunnel.outer_protocol();
    hdr[12..16].copy_from_slice(&saddr);
    hdr[16..20].copy_from_slice(&daddr);
    skb::push_outer_ip_header(skb, &hdr)?;
    // SAFETY: valid skb with the outer header just pushed as its network
    // header; picks the IP ID and computes the header checksum.
    unsafe { ffi::rvs_ipip_finish(net.as_ptr(), skb.as_ptr()) };
    Ok(())
}

/// How the stack must segment a GSO packet in `tunnel` (as IPVS's
/// `ip_vs_tunnel_xmit` asks).
fn gso_type(tunnel: Tunnel) -> u32 {
    let outer = match tunnel {
        Tunnel::Ipip => 0,
        Tunnel::Gue { csum: false, .. } => ffi::SKB_GSO_UDP_TUNNEL,
        Tunnel::Gue { csum: true, .. } => ffi::SKB_GSO_UDP_TUNNEL_CSUM,
        Tunnel::Gre { csum: false } => ffi::SKB_GSO_GRE,
        Tunnel::Gre { csum: true } => ffi::SKB_GSO_GRE_CSUM,
    };
    ffi::SKB_GSO_IPXIP4 | outer
}
