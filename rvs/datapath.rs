// SPDX-License-Identifier: GPL-2.0

//! The packet path: what each hook does with an IPv4 or IPv6 packet.
//!
//! C counterpart: net/netfilter/ipvs/ip_vs_core.c.
//!
//! Requests (LOCAL_IN from remote clients, LOCAL_OUT from clients on the
//! director) to a virtual service are matched to a connection, or a new
//! connection is scheduled, and handed to [`xmit`]. NAT replies from real
//! servers (FORWARD, or LOCAL_IN for clients on the director) get the
//! virtual address back as their source. Everything else passes untouched.
//! Malformed packets pass too: the stack's own checks drop them, and rvs
//! never reads beyond what [`Skb::header`] proved is there.

use crate::conn::{ConnTable, Tuple};
use crate::hooks::Verdict;
use crate::netns::Net;
use crate::rcu::ReadGuard;
use crate::rvs_core::config::{AddrFamily, FwdMethod};
use crate::rvs_core::packet::{self, IpInfo, ParseError, IPPROTO_TCP, IPPROTO_UDP};
use crate::rvs_core::proto::{Dir, TcpFlags};
use crate::rvs_core::sched::Flow;
use crate::service::{Dest, Service};
use crate::skb::Skb;
use crate::state::NetState;
use crate::xmit;
use core::sync::atomic::Ordering;
use kernel::sync::Arc;

/// Where in netfilter a hook sits (see `hooks::POINTS`).
#[derive(Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum HookPoint {
    /// LOCAL_IN, before the request hook: replies to local clients.
    LocalInReply = 0,
    /// LOCAL_IN: requests from remote clients.
    LocalInRequest = 1,
    /// LOCAL_OUT: requests from clients on the director.
    LocalOutRequest = 2,
    /// FORWARD: NAT replies from real servers.
    ForwardReply = 3,
}

impl HookPoint {
    /// The point for a const-generic hook trampoline's number.
    pub(crate) fn from_u8(v: u8) -> Option<Self> {
        match v {
            0 => Some(Self::LocalInReply),
            1 => Some(Self::LocalInRequest),
            2 => Some(Self::LocalOutRequest),
            3 => Some(Self::ForwardReply),
            _ => None,
        }
    }
}

/// A parsed TCP/UDP over IPv4 or IPv6 packet.
pub(crate) struct Packet {
    /// The IP header fields (either family; addresses in 16-byte form).
    pub(crate) ip: IpInfo,
    /// Source port, host order.
    pub(crate) sport: u16,
    /// Destination port, host order.
    pub(crate) dport: u16,
    /// TCP flags; `None` for UDP.
    pub(crate) tcp: Option<TcpFlags>,
}

/// The IPv4 address of a 16-byte form.
pub(crate) fn addr4(a: &[u8; 16]) -> [u8; 4] {
    [a[0], a[1], a[2], a[3]]
}

/// Parses the IP header (IPv6: with its extension headers) of family `af`
/// and the TCP/UDP header, making exactly those bytes linear. `None` for
/// anything rvs does not balance (other protocols, fragments, truncated or
/// malformed headers).
pub(crate) fn parse(skb: &mut Skb<'_>, af: AddrFamily) -> Option<Packet> {
    let pkt_len = skb.len();
    let mut want = match af {
        AddrFamily::Inet => 20usize,
        AddrFamily::Inet6 => 40usize,
    };
    let ip = loop {
        let hdr = skb.header(want)?;
        match packet::parse_ip(af, hdr, pkt_len) {
            Ok(ip) => break ip,
            Err(ParseError::NeedMore { needed }) if needed > want => want = needed,
            Err(_) => return None,
        }
    };
    if ip.proto != IPPROTO_TCP && ip.proto != IPPROTO_UDP {
        return None;
    }
    if ip.is_fragment {
        return None;
    }
    let off = ip.l4_offset;
    let l4_len = if ip.proto == IPPROTO_TCP {
        // The full TCP header, options included (its length is in byte 12).
        let doff = skb.header(off.checked_add(20)?)?.get(off + 12)? >> 4;
        usize::from(doff) * 4
    } else {
        8
    };
    let hdr = skb.header(off.checked_add(l4_len)?)?;
    let l4 = hdr.get(off..)?;
    let ports = packet::parse_l4_ports(l4, ip.proto).ok()?;
    let tcp = if ip.proto == IPPROTO_TCP {
        Some(packet::tcp_flags(l4).ok()?)
    } else {
        None
    };
    Some(Packet {
        ip,
        sport: ports.src,
        dport: ports.dst,
        tcp,
    })
}

/// The hooks' entry point, for packets of family `af`.
pub(crate) fn handle(
    point: HookPoint,
    af: AddrFamily,
    ns: &NetState,
    net: &Net,
    mut skb: Skb<'_>,
) -> Verdict {
    if skb.is_rvs_xmit() {
        return Verdict::Accept;
    }
    let Some(conns) = ns.conns() else {
        return Verdict::Accept;
    };
    let Some(pkt) = parse(&mut skb, af) else {
        return Verdict::Accept;
    };
    let g = ReadGuard::new();
    match point {
        HookPoint::LocalInRequest | HookPoint::LocalOutRequest => {
            request(point, ns, conns, net, skb, &pkt, &g)
        }
        HookPoint::LocalInReply | HookPoint::ForwardReply => reply(ns, conns, skb, &pkt, &g),
    }
}

fn request(
    point: HookPoint,
    ns: &NetState,
    conns: &ConnTable,
    net: &Net,
    skb: Skb<'_>,
    pkt: &Packet,
    g: &ReadGuard,
) -> Verdict {
    let af = pkt.ip.af;
    let caddr = pkt.ip.saddr;
    let vaddr = pkt.ip.daddr;
    let proto = pkt.ip.proto;
    let mut new_conn = false;
    let conn = match conns.lookup_in(g, af, proto, &caddr, pkt.sport, &vaddr, pkt.dport) {
        Some(c) => c,
        None => {
            let Some(svc) = ns.services.lookup(g, af, proto, &vaddr, pkt.dport) else {
                return Verdict::Accept;
            };
            // Only a SYN opens a TCP connection, as in IPVS; other segments
            // go to the local stack, which answers them with a reset.
            if let Some(f) = pkt.tcp {
                if !f.syn || f.ack || f.rst {
                    return Verdict::Accept;
                }
            }
            let flow = Flow {
                caddr,
                cport: pkt.sport,
                vaddr,
                vport: pkt.dport,
                // SAFETY: no preconditions; a per-connection random number
                // for the twos scheduler.
                random: unsafe { crate::ffi::get_random_u32() },
            };
            let dest = match svc.persistence() {
                Some((timeout, mask)) => persistent_dest(conns, g, svc, &flow, timeout, mask),
                None => svc.schedule(g, &flow),
            };
            let Some(dest) = dest else {
                // No server can take it: like IPVS, drop.
                return Verdict::Drop;
            };
            let tuple = Tuple {
                af,
                protocol: proto,
                caddr,
                cport: pkt.sport,
                vaddr,
                vport: pkt.dport,
                daddr: dest.addr,
                dport: dest.port,
            };
            let fwd = dest.fwd();
            new_conn = true;
            match conns.insert(g, tuple, fwd, dest, svc.clone(), false, 2) {
                Some(c) => c,
                None => return Verdict::Drop,
            }
        }
    };
    let dir = if conn.fwd == FwdMethod::Masq {
        Dir::Input
    } else {
        Dir::InputOnly
    };
    conn.update(dir, pkt.tcp, ns.timeouts.get(g));
    let len = skb.len();
    conn.dest.stats.count_in(len, new_conn);
    conn.svc.stats.count_in(len, new_conn);
    xmit::transmit(net, skb, pkt, conn, point == HookPoint::LocalInRequest)
}

/// The server of a persistent service for this client: the one its
/// template (client address masked by `-M`) names while that server is
/// still in the service, else a newly scheduled one, remembered for
/// `timeout` seconds after the client's last new connection. As in IPVS, a
/// quiesced (weight 0) server keeps its persistent clients.
#[allow(clippy::too_many_arguments)]
fn persistent_dest(
    conns: &ConnTable,
    g: &ReadGuard,
    svc: &Arc<Service>,
    flow: &Flow,
    timeout: u32,
    mask: [u8; 16],
) -> Option<Arc<Dest>> {
    let (caddr, vaddr, vport) = (&flow.caddr, &flow.vaddr, flow.vport);
    let mut masked = [0u8; 16];
    for (m, (a, k)) in masked.iter_mut().zip(caddr.iter().zip(mask)) {
        *m = a & k;
    }
    let proto = svc.key.protocol;
    let af = svc.key.af;
    if let Some(t) = conns.lookup_template(g, af, proto, &masked, vaddr, vport) {
        if !t.dest.removed.load(Ordering::Relaxed) {
            t.touch(timeout);
            return Some(t.dest.clone());
        }
        t.expire_now();
    }
    let dest = svc.schedule(g, flow)?;
    let tuple = Tuple {
        af,
        protocol: proto,
        caddr: masked,
        cport: 0,
        vaddr: *vaddr,
        vport,
        daddr: dest.addr,
        dport: dest.port,
    };
    // A template that cannot be stored (table full) only costs stickiness.
    let t = conns.insert(
        g,
        tuple,
        dest.fwd(),
        dest.clone(),
        svc.clone(),
        true,
        timeout,
    );
    Some(t.map_or(dest, |t| t.dest.clone()))
}

fn reply(
    ns: &NetState,
    conns: &ConnTable,
    mut skb: Skb<'_>,
    pkt: &Packet,
    g: &ReadGuard,
) -> Verdict {
    let (daddr, caddr) = (&pkt.ip.saddr, &pkt.ip.daddr);
    let Some(conn) = conns.lookup_out(
        g,
        pkt.ip.af,
        pkt.ip.proto,
        daddr,
        pkt.sport,
        caddr,
        pkt.dport,
    ) else {
        return Verdict::Accept;
    };
    if conn.fwd != FwdMethod::Masq {
        return Verdict::Accept;
    }
    conn.update(Dir::Output, pkt.tcp, ns.timeouts.get(g));
    conn.dest.stats.count_out(skb.len());
    conn.svc.stats.count_out(skb.len());
    let vaddr = conn.tuple.vaddr;
    match xmit::nat_rewrite(&mut skb, pkt, xmit::Side::Source, &vaddr, conn.tuple.vport) {
        Ok(()) => Verdict::Accept,
        Err(_) => Verdict::Drop,
    }
}
