// SPDX-License-Identifier: GPL-2.0

//! Transmit: NAT, direct routing and tunnels (IP-in-IP and IPv6 variants,
//! GUE, GRE) to the chosen real server.
//!
//! C counterpart: net/netfilter/ipvs/ip_vs_xmit.c.
//!
//! Each method routes the packet to the real server, checks the path MTU
//! (sending "fragmentation needed" back when DF forbids fitting it), and
//! sends it through LOCAL_OUT marked as rvs's, so firewall rules still see
//! it and rvs's hooks let it pass.

#![forbid(unsafe_code)]

use crate::lb::conn::Conn;
use crate::lb::conn_table::ConnTable;
use crate::lb::packet::Packet;
use crate::rvs_core::config::{AddrFamily, FwdMethod};
use crate::rvs_core::fullnat;
use crate::rvs_core::icmp;
use crate::rvs_core::packet::{self, TtlError, IPPROTO_SCTP, IPPROTO_UDP, IP_DF, TCP_CHECK_OFFSET};
use crate::rvs_core::proto::L4Event;
use crate::rvs_core::sctp;
use crate::rvs_core::tunnel::{self, Tunnel};
use crate::sys::error::{ehostunreach, emsgsize};
use crate::sys::hooks::Verdict;
use crate::sys::netns::Net;
use crate::sys::rcu::ReadGuard;
use crate::sys::route;
use crate::sys::skb::{self, gso, Skb};
use core::sync::atomic::Ordering;
use kernel::prelude::*;

/// Which end of the packet a NAT rewrite changes.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Side {
    /// Source address and port (replies: real server -> virtual service).
    Source,
    /// Destination address and port (requests: virtual service -> server).
    Destination,
}

/// Outer header sizes of IP-in-IP and IP-in-IPv6.
const IPIP_HLEN: u32 = 20;
/// An IPv4 header without options: what a TTL decrement rewrites.
const IPV4_HLEN: usize = 20;
const IP6IP_HLEN: u32 = 40;
/// Room for the link layer in front of a tunnelled packet's outer header.
const LL_HEADROOM: u32 = 64;
/// IPv6's minimum link MTU: an IPv6 packet is never sent on a path that
/// claims less (IPVS drops it too).
const IPV6_MIN_MTU: u32 = 1280;
/// IP protocol numbers of an encapsulated IPv4 / IPv6 packet.
const IPPROTO_IPIP: u8 = 4;
const IPPROTO_IPV6: u8 = 41;

/// What netfilter's conntrack sees of the packets rvs sends (the
/// `conntrack` setting, IPVS's `net.ipv4.vs.conntrack`).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Tracking {
    /// Untracked, as IPVS does by default: nftables NAT and conntrack
    /// rules never see them.
    Off,
    /// Tracked; the first packet of a NAT connection also makes its
    /// conntrack entry expect the real server's replies, so that NAT rules
    /// (e.g. masquerade toward the real servers) apply to the connection.
    On,
    /// Tracked, entry left as it is (one-packet scheduling: no reply is
    /// expected, as IPVS).
    NoReply,
}

/// Sends a request of connection `conn` to its real server. `from_wire`:
/// the packet arrived from another host (LOCAL_IN), so any socket that
/// early demux attached must be dropped before it leaves again.
pub(crate) fn transmit(
    net: &Net,
    mut skb: Skb<'_>,
    pkt: &Packet,
    conn: &Conn,
    from_wire: bool,
    tracking: Tracking,
) -> Verdict {
    let af = pkt.ip.af;
    let daddr = &conn.tuple.daddr;
    // The family the packet leaves in: the real server's when tunnelled
    // (it may differ from the service's), the packet's own otherwise.
    let mut out_af = af;
    let rt = match conn.fwd {
        // The director is the server: the packet goes on to the local
        // stack as it is (IPVS's ip_vs_null_xmit), its TTL untouched.
        FwdMethod::Local => return Verdict::Accept,
        FwdMethod::Masq | FwdMethod::FullNat | FwdMethod::Enat => {
            route::route_to(net, &conn.dest.route, af, daddr, false)
        }
        FwdMethod::Route => route::route_to(net, &conn.dest.route, af, daddr, true),
        FwdMethod::Tunnel => {
            out_af = conn.dest.af;
            route::route_to(net, &conn.dest.route, out_af, daddr, false)
        }
    };
    let Ok((route, rt)) = rt else {
        return Verdict::Drop;
    };
    if decrement_ttl(net, &mut skb, af).is_err() {
        return Verdict::Drop;
    }
    let tunnel = conn.dest.tunnel();
    let mtu = rt.mtu.saturating_sub(overhead(&skb, conn, out_af));
    if af == AddrFamily::Inet6 && mtu < IPV6_MIN_MTU {
        return Verdict::Drop;
    }
    // Before any NAT rewrite, as IPVS: the error must quote the packet as
    // the client sent it (to the VIP), or the client cannot match it to
    // its connection and never learns the path MTU.
    if too_big(&skb, af, mtu, pkt.ip.df) {
        skb::icmp_too_big(net, &mut skb, af, mtu);
        return Verdict::Drop;
    }
    skb.set_route(route);
    if conn.fwd == FwdMethod::Masq {
        if nat_rewrite(&mut skb, pkt, Side::Destination, daddr, conn.tuple.dport).is_err() {
            return Verdict::Drop;
        }
        if tracking == Tracking::On {
            skb.ct_reply_from(daddr, conn.tuple.dport);
        }
    }
    if conn.fwd.has_local_port() {
        let g = ReadGuard::new();
        // Gone only while the connection leaves the table.
        let Some((laddr, lport)) = ConnTable::local_end(&g, conn) else {
            return Verdict::Drop;
        };
        drop(g);
        if nat_rewrite(&mut skb, pkt, Side::Destination, daddr, conn.tuple.dport).is_err()
            || nat_rewrite(&mut skb, pkt, Side::Source, &laddr, lport).is_err()
        {
            return Verdict::Drop;
        }
        let (caddr, cport) = (&conn.tuple.caddr, conn.tuple.cport);
        if conn.fwd == FwdMethod::Enat {
            // Every SYN: the companion cannot take the connection without
            // it (the datapath checked that there is room).
            if is_client_syn(pkt)
                && insert_toa(&mut skb, pkt, fullnat::ENAT_KIND, caddr, cport).is_err()
            {
                return Verdict::Drop;
            }
        } else if from_wire && wants_toa(&mut skb, pkt, conn, mtu) {
            // Without it the connection still works; the real server's
            // TOA reader then sees the local address.
            let _ = insert_toa(&mut skb, pkt, fullnat::TOA_KIND, caddr, cport);
        }
    }
    if conn.fwd == FwdMethod::Tunnel {
        if encapsulate(net, &mut skb, pkt, tunnel, out_af, &rt.saddr, daddr).is_err() {
            return Verdict::Drop;
        }
        if tracking != Tracking::Off && !skb.ct_confirm_detach() {
            return Verdict::Drop;
        }
    }
    skb::local_out(net, skb, out_af, from_wire, tracking != Tracking::Off);
    Verdict::Stolen
}

/// What the method adds in front of the packet: a tunnel's outer headers
/// (family `out_af`), nothing for the others.
fn overhead(skb: &Skb<'_>, conn: &Conn, out_af: AddrFamily) -> u32 {
    if conn.fwd != FwdMethod::Tunnel {
        return 0;
    }
    let tunnel = conn.dest.tunnel();
    // Only remote checksum offload makes the length depend on the packet;
    // nothing else asks the skb.
    let tun_len = tunnel.header_len(tunnel.remcsum() && skb.csum_offsets().is_some()) as u32;
    match out_af {
        AddrFamily::Inet => IPIP_HLEN + tun_len,
        AddrFamily::Inet6 => IP6IP_HLEN + tun_len,
    }
}

/// The way out of a request that the fast path checked before committing
/// to it ([`fast_request_route`]).
pub(crate) struct FastRoute {
    route: route::Route,
    /// The route's source address (a tunnel's outer source).
    saddr: [u8; 16],
    /// The family the packet leaves in (a tunnel's outer header's).
    out_af: AddrFamily,
}

/// The route of a request of `conn` on the fast path (`lb::fastpath`), if
/// the packet can leave along it as [`transmit`] would send it, with
/// nothing to answer: a method the fast path forwards (NAT, direct
/// routing, tunnels), a route, and a size that fits the path as it is
/// (else the slow path fragments it or answers "fragmentation needed").
/// `None` leaves the packet, unchanged, to the slow path.
pub(crate) fn fast_request_route(
    net: &Net,
    skb: &Skb<'_>,
    pkt: &Packet,
    conn: &Conn,
) -> Option<FastRoute> {
    let af = pkt.ip.af;
    let (out_af, known_nh) = match conn.fwd {
        FwdMethod::Masq => (af, false),
        FwdMethod::Route => (af, true),
        FwdMethod::Tunnel => (conn.dest.af, false),
        FwdMethod::Local | FwdMethod::FullNat | FwdMethod::Enat => return None,
    };
    let daddr = &conn.tuple.daddr;
    let (route, rt) = route::route_to(net, &conn.dest.route, out_af, daddr, known_nh).ok()?;
    let mtu = rt.mtu.saturating_sub(overhead(skb, conn, out_af));
    if (af == AddrFamily::Inet6 && mtu < IPV6_MIN_MTU) || !skb.fits(mtu) {
        return None;
    }
    Some(FastRoute {
        route,
        saddr: rt.saddr,
        out_af,
    })
}

/// Sends a request of `conn` that the fast path committed to, along the
/// route [`fast_request_route`] found: the rewrites of [`transmit`] (TTL,
/// NAT's destination or the tunnel's headers), then straight to the
/// route's device, past LOCAL_OUT (`skb::fast_output`).
pub(crate) fn fast_transmit(
    net: &Net,
    mut skb: Skb<'_>,
    pkt: &Packet,
    conn: &Conn,
    out: FastRoute,
) -> Verdict {
    // The TTL was checked: this cannot expire it.
    if decrement_ttl(net, &mut skb, pkt.ip.af).is_err() {
        return Verdict::Drop;
    }
    skb.set_route(out.route);
    let daddr = &conn.tuple.daddr;
    let done = match conn.fwd {
        FwdMethod::Masq => nat_rewrite(&mut skb, pkt, Side::Destination, daddr, conn.tuple.dport),
        FwdMethod::Tunnel => {
            let tunnel = conn.dest.tunnel();
            encapsulate(net, &mut skb, pkt, tunnel, out.out_af, &out.saddr, daddr)
        }
        _ => Ok(()),
    };
    if done.is_err() {
        return Verdict::Drop;
    }
    skb::fast_output(net, skb, out.out_af);
    Verdict::Stolen
}

/// Sends a NAT reply of `conn` that the fast path committed to, already
/// routed (`Skb::route_input`) and checked to fit: from the virtual
/// service, one hop less, as the slow path's FORWARD rewrite and
/// `ip_forward` make it.
pub(crate) fn fast_reply(net: &Net, mut skb: Skb<'_>, pkt: &Packet, conn: &Conn) -> Verdict {
    if decrement_ttl(net, &mut skb, pkt.ip.af).is_err() {
        return Verdict::Drop;
    }
    let (vaddr, vport) = (&conn.tuple.vaddr, conn.tuple.vport);
    if nat_rewrite(&mut skb, pkt, Side::Source, vaddr, vport).is_err() {
        return Verdict::Drop;
    }
    skb::fast_output(net, skb, pkt.ip.af);
    Verdict::Stolen
}

/// Whether this client segment of FullNAT connection `conn` gets the TOA
/// option (`rvs_core::fullnat`): TCP, the client's SYN or one of its first
/// segments after it (not a reset), not a GSO packet, and room for the
/// option both in its TCP header and within `mtu`.
fn wants_toa(skb: &mut Skb<'_>, pkt: &Packet, conn: &Conn, mtu: u32) -> bool {
    let L4Event::Tcp(f) = pkt.l4 else {
        return false;
    };
    let n = conn.in_pkts.load(Ordering::Relaxed);
    let early = if f.syn {
        !f.ack
    } else {
        (2..=fullnat::TOA_LAST_PACKET).contains(&n)
    };
    if !early || f.rst || skb.is_gso() {
        return false;
    }
    has_room(skb, pkt, mtu)
}

/// Whether the packet is a client's SYN (not a SYN-ACK, not a reset).
pub(crate) fn is_client_syn(pkt: &Packet) -> bool {
    pkt.tcp().is_some_and(|f| f.syn && !f.ack && !f.rst)
}

/// Whether the packet has room for the client address option, both in
/// its TCP header and within `mtu`.
pub(crate) fn has_room(skb: &mut Skb<'_>, pkt: &Packet, mtu: u32) -> bool {
    let len = fullnat::toa_len(pkt.ip.af);
    skb.len() + len <= mtu as usize && tcp_hlen(skb, pkt).is_some_and(|h| fullnat::toa_fits(h, len))
}

/// The TCP header's length (data offset), if the packet holds it whole.
fn tcp_hlen(skb: &mut Skb<'_>, pkt: &Packet) -> Option<usize> {
    let l4 = pkt.ip.l4_offset;
    let h = skb.header(l4 + 20)?;
    let hlen = usize::from(h.get(l4 + 12)? >> 4) * 4;
    (hlen >= 20 && skb.header(l4 + hlen).is_some()).then_some(hlen)
}

/// Adds the client address option of kind `kind` (TOA's, or ENAT's) with
/// client `caddr:cport` to the packet's TCP options (last, before an end-of-options kind if there is one), and
/// fixes the data offset, the IP length (and IPv4 header
/// checksum) and the TCP checksum, which changes by the option's words,
/// the data offset's word and the pseudo-header's length (for a
/// CHECKSUM_PARTIAL packet only the latter: the rest is summed later).
fn insert_toa(skb: &mut Skb<'_>, pkt: &Packet, kind: u8, caddr: &[u8; 16], cport: u16) -> Result {
    let af = pkt.ip.af;
    let l4 = pkt.ip.l4_offset;
    let hlen = tcp_hlen(skb, pkt).ok_or(EINVAL)?;
    let mut opt = [0u8; fullnat::TOA_LEN_V6];
    let n = fullnat::toa_option(kind, af, caddr, cport, &mut opt);
    let opt = opt.get(..n).ok_or(EINVAL)?;
    let tcp_len = skb.len().checked_sub(l4).ok_or(EINVAL)?;
    let old_tcp_len = u16::try_from(tcp_len).map_err(|_| EINVAL)?;
    let new_tcp_len = u16::try_from(tcp_len + n).map_err(|_| emsgsize())?;
    // Before an end-of-options kind, if the sender put one.
    let at = skb
        .header(l4 + hlen)
        .and_then(|h| h.get(l4..))
        .map(fullnat::option_insert_at)
        .ok_or(EINVAL)?;
    skb::insert_header_bytes(skb, l4 + at, l4, opt)?;
    let check_at = l4 + TCP_CHECK_OFFSET;
    let h = skb.header_mut(l4 + hlen + n).ok_or(ENOMEM)?;
    // The data offset, in the high nibble of byte 12.
    let doff = h.get_mut(l4 + 12..l4 + 14).ok_or(EINVAL)?;
    let old_word = <[u8; 2]>::try_from(&*doff).map_err(|_| EINVAL)?;
    let [hi, lo] = old_word;
    let new_word = [hi.wrapping_add(((n / 4) as u8) << 4), lo];
    doff.copy_from_slice(&new_word);
    // Bytes 2-3 of an IPv4 header (total length), 4-5 of IPv6's (payload).
    let len_at = match af {
        AddrFamily::Inet => 2,
        AddrFamily::Inet6 => 4,
    };
    let len = h.get_mut(len_at..len_at + 2).ok_or(EINVAL)?;
    let grown = u16::from_be_bytes(<[u8; 2]>::try_from(&*len).map_err(|_| EINVAL)?)
        .checked_add(n as u16)
        .ok_or_else(emsgsize)?;
    len.copy_from_slice(&grown.to_be_bytes());
    if af == AddrFamily::Inet {
        let iph = h.get_mut(..l4).ok_or(EINVAL)?;
        iph.get_mut(10..12).ok_or(EINVAL)?.fill(0);
        let sum = packet::ip_header_checksum(iph);
        iph.get_mut(10..12)
            .ok_or(EINVAL)?
            .copy_from_slice(&sum.to_be_bytes());
    }
    skb.csum_replace2(check_at, old_word, new_word);
    // The pseudo-header's length, as the low half of a 4-byte word.
    let [o0, o1] = old_tcp_len.to_be_bytes();
    let [n0, n1] = new_tcp_len.to_be_bytes();
    skb.csum_replace4(check_at, [0, 0, o0, o1], [0, 0, n0, n1], true);
    for w in opt.chunks_exact(2) {
        if let [a, b] = *w {
            skb.csum_replace2(check_at, [0, 0], [a, b]);
        }
    }
    Ok(())
}

/// Sends a FullNAT reply (real server -> local address and port) on to
/// its client, from the virtual service: the server's SYN-ACK first has
/// its MSS lowered by the TOA option's length (so the client's segments
/// that carry the option still fit the server's path); then, as a router
/// does, the TTL is decremented and the path MTU checked (an error goes
/// back to the real server, quoting its packet); then source and
/// destination are rewritten. A client on the director itself gets the
/// reply delivered locally.
pub(crate) fn fullnat_reply(net: &Net, mut skb: Skb<'_>, pkt: &Packet, conn: &Conn) -> Verdict {
    let af = pkt.ip.af;
    let t = &conn.tuple;
    if let L4Event::Tcp(f) = pkt.l4 {
        if f.syn && f.ack && clamp_mss(&mut skb, pkt, fullnat::toa_len(af)).is_err() {
            return Verdict::Drop;
        }
    }
    let route = match route::route_to_host(net, af, &t.caddr) {
        Ok(r) => Some(r),
        // The client is on the director (its route is local).
        Err(e) if e == EINVAL => None,
        Err(_) => return Verdict::Drop,
    };
    let Some(route) = route else {
        if nat_rewrite(&mut skb, pkt, Side::Source, &t.vaddr, t.vport).is_err()
            || nat_rewrite(&mut skb, pkt, Side::Destination, &t.caddr, t.cport).is_err()
        {
            return Verdict::Drop;
        }
        skb.mark_rvs();
        return Verdict::Accept;
    };
    if decrement_ttl(net, &mut skb, af).is_err() {
        return Verdict::Drop;
    }
    let mtu = route.mtu();
    if too_big(&skb, af, mtu, pkt.ip.df) {
        skb::icmp_too_big(net, &mut skb, af, mtu);
        return Verdict::Drop;
    }
    skb.set_route(route);
    if nat_rewrite(&mut skb, pkt, Side::Source, &t.vaddr, t.vport).is_err()
        || nat_rewrite(&mut skb, pkt, Side::Destination, &t.caddr, t.cport).is_err()
    {
        return Verdict::Drop;
    }
    skb::local_out(net, skb, af, true, false);
    Verdict::Stolen
}

/// Sends an ICMP or ICMPv6 error about FullNAT connection `conn`'s request
/// (quoting `local address -> real server`, addressed to the local
/// address) on to its client as an error about the client's own packet:
/// outer source and quoted destination become the virtual service's
/// (`IcmpNat::ToClient`), outer destination and quoted source the
/// client's (`IcmpNat::ToServer`'s rewrite, toward the client), every
/// checksum kept right by `rvs_core::icmp`. Routed as a router forwards
/// it (TTL decremented); a client on the director gets it locally.
pub(crate) fn fullnat_icmp_to_client(
    net: &Net,
    mut skb: Skb<'_>,
    q: &icmp::IcmpQuote,
    conn: &Conn,
) -> Verdict {
    let t = &conn.tuple;
    let to_vip = icmp::IcmpNat::ToClient {
        vaddr: t.vaddr,
        vport: t.vport,
    };
    let to_client = icmp::IcmpNat::ToServer {
        daddr: t.caddr,
        dport: t.cport,
    };
    let Some(buf) = skb.header_mut(q.rewrite_len) else {
        return Verdict::Drop;
    };
    if icmp::nat(buf, q, to_vip).is_err() {
        return Verdict::Accept;
    }
    // The same lengths as the first rewrite: if it fails all the same, the
    // error is half translated and must not go anywhere.
    if icmp::nat(buf, q, to_client).is_err() {
        return Verdict::Drop;
    }
    let route = match route::route_to_host(net, q.af, &t.caddr) {
        Ok(r) => r,
        Err(e) if e == EINVAL => {
            skb.mark_rvs();
            return Verdict::Accept;
        }
        Err(_) => return Verdict::Drop,
    };
    if decrement_ttl(net, &mut skb, q.af).is_err() {
        return Verdict::Drop;
    }
    skb.set_route(route);
    skb::local_out(net, skb, q.af, true, false);
    Verdict::Stolen
}

/// Lowers the MSS option of a TCP SYN(-ACK) by `less` bytes, keeping the
/// TCP checksum right (`rvs_core::fullnat::mss_clamp`).
fn clamp_mss(skb: &mut Skb<'_>, pkt: &Packet, less: usize) -> Result {
    let l4 = pkt.ip.l4_offset;
    let Some(hlen) = tcp_hlen(skb, pkt) else {
        return Ok(());
    };
    let h = skb.header_mut(l4 + hlen).ok_or(ENOMEM)?;
    let Some((at, old, new)) = h.get(l4..).and_then(|tcp| fullnat::mss_clamp(tcp, less)) else {
        return Ok(());
    };
    h.get_mut(l4 + at..l4 + at + 2)
        .ok_or(EINVAL)?
        .copy_from_slice(&new.to_be_bytes());
    skb.csum_replace2(l4 + TCP_CHECK_OFFSET, old.to_be_bytes(), new.to_be_bytes());
    Ok(())
}

/// Sends an ICMP or ICMPv6 error about connection `conn` (already
/// translated for NAT by the caller) to its real server: routed to it for
/// NAT, to it as next hop for DR, encapsulated for TUN (in an outer header
/// of the real server's family, which may differ from the error's). `ip`
/// is the error's IP header. The error arrived from another host
/// (LOCAL_IN).
pub(crate) fn forward_icmp(
    net: &Net,
    mut skb: Skb<'_>,
    ip: &packet::IpInfo,
    conn: &Conn,
) -> Verdict {
    let daddr = &conn.tuple.daddr;
    if conn.fwd == FwdMethod::Local {
        // The error is for the director's own socket.
        return Verdict::Accept;
    }
    let known_nh = conn.fwd == FwdMethod::Route;
    // Tunnelled real servers may be of the other family (mixed tunnels).
    let out_af = match conn.fwd {
        FwdMethod::Tunnel => conn.dest.af,
        _ => ip.af,
    };
    let Ok((route, rt)) = route::route_to(net, &conn.dest.route, out_af, daddr, known_nh) else {
        return Verdict::Drop;
    };
    // An error whose TTL ran out is dropped: no ICMP error about an ICMP
    // error (`icmp_send` and `icmpv6_send` refuse them anyway).
    if decrement_ttl(net, &mut skb, ip.af).is_err() {
        return Verdict::Drop;
    }
    skb.set_route(route);
    if conn.fwd == FwdMethod::Tunnel {
        let pkt = Packet {
            ip: *ip,
            sport: 0,
            dport: 0,
            l4: L4Event::Udp,
            seq: None,
        };
        let tunnel = conn.dest.tunnel();
        if encapsulate(net, &mut skb, &pkt, tunnel, out_af, &rt.saddr, daddr).is_err() {
            return Verdict::Drop;
        }
    }
    // ICMP errors stay untracked whatever the setting (IPVS tracks them
    // with conntrack=1; nothing rvs users rely on needs that).
    skb::local_out(net, skb, out_af, true, false);
    Verdict::Stolen
}

/// Takes one hop off the packet's TTL (IPv6: hop limit) before it is
/// forwarded, as a router does (`ip_forward`, IPVS's `decrement_ttl`); a
/// packet that arrived with its last hop is answered with "time exceeded"
/// and must be dropped (`Err`), so that two directors that both hold a
/// service cannot pass a packet between them forever.
fn decrement_ttl(net: &Net, skb: &mut Skb<'_>, af: AddrFamily) -> Result {
    let hlen = match af {
        AddrFamily::Inet => IPV4_HLEN,
        AddrFamily::Inet6 => IP6IP_HLEN as usize,
    };
    let hdr = skb.header_mut(hlen).ok_or(ENOMEM)?;
    match packet::decrement_ttl(af, hdr) {
        Ok(()) => Ok(()),
        Err(TtlError::Expired) => {
            skb::icmp_time_exceeded(net, skb, af);
            Err(ehostunreach())
        }
        Err(TtlError::Truncated) => Err(EINVAL),
    }
}

/// Whether the packet may not leave on a path of `mtu` as it is, as
/// `ip_forward` and `ip6_forward` decide (and IPVS): it may not be
/// fragmented (IPv4 DF; always for IPv6) and either it was reassembled
/// from a fragment larger than `mtu`, or it is larger than `mtu` and is not
/// a GSO packet whose segments each fit.
fn too_big(skb: &Skb<'_>, af: AddrFamily, mtu: u32, df: bool) -> bool {
    if !df {
        return false;
    }
    let frag_max = skb.frag_max_size(af);
    if frag_max != 0 {
        // Sent on as the fragments it came in (or smaller).
        return frag_max > mtu;
    }
    skb.len() > mtu as usize && !skb.gso_segments_fit(mtu)
}

/// Rewrites one end's address and port, keeping the IPv4 header checksum
/// and the TCP/UDP checksum (SCTP: its CRC32c) right for every checksum
/// offload mode. Works on either family (`pkt.ip.af`); `addr` is in the
/// 16-byte form.
pub(crate) fn nat_rewrite(
    skb: &mut Skb<'_>,
    pkt: &Packet,
    side: Side,
    addr: &[u8; 16],
    port: u16,
) -> Result {
    if pkt.ip.proto == IPPROTO_SCTP {
        return sctp_nat_rewrite(skb, pkt, side, addr, port);
    }
    let ip = &pkt.ip;
    let udp = ip.proto == IPPROTO_UDP;
    skb.rewrite_end(ip.af, ip.l4_offset, udp, side == Side::Source, addr, port)
}

/// [`nat_rewrite`] for SCTP, whose CRC32c covers no address: a new port
/// needs it computed afresh over the whole packet (made linear for that;
/// SCTP packets are no larger than their path's MTU), unless it is left
/// to the device or the stack (a local sender's CHECKSUM_PARTIAL, which
/// every SCTP GSO packet is).
fn sctp_nat_rewrite(
    skb: &mut Skb<'_>,
    pkt: &Packet,
    side: Side,
    addr: &[u8; 16],
    port: u16,
) -> Result {
    let l4 = pkt.ip.l4_offset;
    let h = skb.header_mut(l4 + sctp::HEADER_LEN).ok_or(ENOMEM)?;
    let (_, old_port) = write_end(h, pkt.ip.af, l4, side, addr, port)?;
    if old_port == port.to_be_bytes() || skb.csum_partial() {
        return Ok(());
    }
    let len = skb.len();
    let h = skb.header_mut(len).ok_or(ENOMEM)?;
    let crc = h.get(l4..).and_then(sctp::packet_checksum).ok_or(EINVAL)?;
    let at = l4 + sctp::CHECKSUM_OFFSET;
    h.get_mut(at..at + 4).ok_or(EINVAL)?.copy_from_slice(&crc);
    // Computed in full: nothing left for the device to fill in or trust.
    skb.csum_none();
    Ok(())
}

/// Writes `addr` and `port` into one end (`side`) of the linear, writable
/// headers `h` of a packet of family `af` whose transport header is at
/// `l4`, and renews an IPv4 header's checksum. Returns the old address
/// (16-byte form, IPv4 in its first four bytes) and port (wire order).
fn write_end(
    h: &mut [u8],
    af: AddrFamily,
    l4: usize,
    side: Side,
    addr: &[u8; 16],
    port: u16,
) -> Result<([u8; 16], [u8; 2])> {
    packet::write_end(h, af, l4, side == Side::Source, addr, port).ok_or(EINVAL)
}

/// Wraps the packet for `tunnel` (GUE or GRE header, if any) in an outer
/// header of family `outer` from `saddr` to `daddr`. Plain IP-in-IP is
/// protocol 4 for an IPv4 packet and 41 for an IPv6 one, under either
/// outer family (ipip, 6in4, 4in6, ip6ip6), as IPVS's tunnel transmitters
/// do; GUE and GRE carry either family under either outer family too.
fn encapsulate(
    net: &Net,
    skb: &mut Skb<'_>,
    pkt: &Packet,
    tunnel: Tunnel,
    outer: AddrFamily,
    saddr: &[u8; 16],
    daddr: &[u8; 16],
) -> Result {
    let inner_len = skb.len();
    // Remote checksum offload (GUE): where the inner checksum starts and
    // is stored, for a packet whose checksum is left to the device.
    let remcsum = if tunnel.remcsum() {
        skb.csum_offsets()
    } else {
        None
    };
    let tun_len = tunnel.header_len(remcsum.is_some());
    let inner_v6 = pkt.ip.af == AddrFamily::Inet6;
    let inner_proto = if inner_v6 { IPPROTO_IPV6 } else { IPPROTO_IPIP };
    let outer_proto = match tunnel {
        Tunnel::Ipip => inner_proto,
        _ => tunnel.outer_protocol(),
    };
    let outer_hlen = match outer {
        AddrFamily::Inet => IPIP_HLEN,
        AddrFamily::Inet6 => IP6IP_HLEN,
    };
    // IPv4: total length with the outer header; IPv6: payload length.
    let len_field = inner_len
        .checked_add(tun_len)
        .and_then(|l| match outer {
            AddrFamily::Inet => l.checked_add(IPIP_HLEN as usize),
            AddrFamily::Inet6 => Some(l),
        })
        .and_then(|t| u16::try_from(t).ok())
        .ok_or_else(emsgsize)?;
    skb::cow_head(skb, outer_hlen + LL_HEADROOM + tun_len as u32)?;
    // The inner packet's TOS / traffic class is carried to the outer header.
    let tos = {
        let h = skb.header(2).ok_or(EINVAL)?;
        if inner_v6 {
            (h[0] << 4) | (h[1] >> 4)
        } else {
            h[1]
        }
    };
    // The flow hash is taken from the inner packet, before any push.
    let sport = match tunnel {
        Tunnel::Gue { .. } => skb::udp_flow_src_port(net, skb),
        _ => 0,
    };
    skb::tunnel_prepare(skb, gso_type(tunnel, outer, remcsum.is_some()), inner_proto)?;
    match tunnel {
        Tunnel::Ipip => {}
        Tunnel::Gue { csum, .. } => {
            let mut hdr = [0u8; tunnel::GUE_HLEN_MAX];
            let len = tunnel
                .gue_header(inner_len, inner_v6, sport, remcsum, &mut hdr)
                .ok_or_else(emsgsize)?;
            skb::push_tunnel_header(skb, hdr.get(..len).ok_or(EINVAL)?)?;
            if remcsum.is_some() && !skb.is_gso() {
                // The real server completes the inner checksum; the stack
                // must not (as IPVS's `ipvs_gue_encap`).
                skb.remcsum_handed_off();
            }
            skb::udp_tunnel_csum(skb, csum, outer, saddr, daddr);
        }
        Tunnel::Gre { csum } => skb::push_gre_header(skb, csum, inner_v6, tun_len)?,
    }
    match outer {
        AddrFamily::Inet => {
            let mut hdr = [0u8; 20];
            hdr[0] = 0x45;
            hdr[1] = tos;
            hdr[2..4].copy_from_slice(&len_field.to_be_bytes());
            // Outer DF follows the inner packet's (always set for IPv6
            // inside), so PMTU discovery still works.
            let frag = if pkt.ip.df { IP_DF } else { 0 };
            hdr[6..8].copy_from_slice(&frag.to_be_bytes());
            hdr[8] = 64;
            hdr[9] = outer_proto;
            hdr[12..16].copy_from_slice(&saddr[..4]);
            hdr[16..20].copy_from_slice(&daddr[..4]);
            skb::push_outer_ip_header(net, skb, outer, &hdr)
        }
        AddrFamily::Inet6 => {
            let mut hdr = [0u8; 40];
            hdr[0] = 0x60 | (tos >> 4);
            hdr[1] = tos << 4;
            hdr[4..6].copy_from_slice(&len_field.to_be_bytes());
            hdr[6] = outer_proto;
            hdr[7] = 64;
            hdr[8..24].copy_from_slice(saddr);
            hdr[24..40].copy_from_slice(daddr);
            skb::push_outer_ip_header(net, skb, outer, &hdr)
        }
    }
}

/// How the stack must segment a GSO packet in `tunnel` under an outer
/// header of family `outer`, `remcsum` if it carries GUE's remote checksum
/// offload option (as IPVS's `ip_vs_tunnel_xmit*` ask).
fn gso_type(tunnel: Tunnel, outer: AddrFamily, remcsum: bool) -> u32 {
    let tun = match tunnel {
        Tunnel::Ipip => 0,
        Tunnel::Gue { csum: false, .. } => gso::UDP_TUNNEL,
        Tunnel::Gue { csum: true, .. } if remcsum => gso::UDP_TUNNEL_CSUM | gso::TUNNEL_REMCSUM,
        Tunnel::Gue { csum: true, .. } => gso::UDP_TUNNEL_CSUM,
        Tunnel::Gre { csum: false } => gso::GRE,
        Tunnel::Gre { csum: true } => gso::GRE_CSUM,
    };
    let ip = match outer {
        AddrFamily::Inet => gso::IPXIP4,
        AddrFamily::Inet6 => gso::IPXIP6,
    };
    ip | tun
}
