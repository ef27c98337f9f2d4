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

#![forbid(unsafe_code)]

use crate::lb::conn::{Conn, ConnEntry, ControlRef, Limits, Tuple};
use crate::lb::conn_table::ConnTable;
use crate::lb::dest::Dest;
use crate::lb::fullnat::PortRequest;
use crate::lb::packet::{is_l4_fragment, parse, parse_icmp_error, parse_ipv4, Packet};
use crate::lb::service::Service;
use crate::lb::state::NetState;
use crate::lb::xmit;
use crate::rvs_core::config::{AddrFamily, FwdMethod};
use crate::rvs_core::icmp::{self, IcmpNat, IPPROTO_ICMP, IPPROTO_ICMPV6};
use crate::rvs_core::packet::{IPPROTO_SCTP, IPPROTO_UDP};
use crate::rvs_core::proto::{self, Dir, L4Event, Sloppy};
use crate::rvs_core::sched::Flow;
use crate::rvs_core::settings::Setting;
use crate::rvs_core::source_end::{self, Peek};
use crate::rvs_core::tunnel_icmp;
use crate::sys::hooks::{HookHandler, HookPoint, Verdict};
use crate::sys::inet::addr16;
use crate::sys::netns::Net;
use crate::sys::pernet::PernetState;
use crate::sys::random;
use crate::sys::rcu::ReadGuard;
use crate::sys::skb::{self, Skb};
use core::sync::atomic::Ordering;
use kernel::sync::Arc;

/// The hooks call the namespace's state (registered by
/// `NetState::activate`).
impl HookHandler for NetState {
    /// IPVS's points (`crate::sys::hooks::HookPoint`).
    const POINTS: &'static [HookPoint] = &[
        HookPoint::LocalInReply,
        HookPoint::LocalInRequest,
        HookPoint::LocalOutRequest,
        HookPoint::ForwardReply,
    ];

    fn hook(&self, point: HookPoint, af: AddrFamily, net: &Net, skb: Skb<'_>) -> Verdict {
        handle(point, af, self, net, skb)
    }
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
    // The reply hooks want only replies of NAT, FullNAT and ENAT
    // connections, and ICMP errors: a TCP, UDP or SCTP packet from none of
    // their real servers (at FORWARD most of what a director forwards, at
    // LOCAL_IN every request to a VIP, which the request hook parses next)
    // goes on without a full parse.
    if matches!(point, HookPoint::ForwardReply | HookPoint::LocalInReply)
        && !may_be_nat_reply(&mut skb, af, conns)
    {
        return Verdict::Accept;
    }
    // The stack reassembles IPv4 fragments only for local delivery: at
    // FORWARD a fragmented NAT reply would be translated in its first
    // fragment only (the one with the ports), and the client would get
    // the rest from the real server's address. Gathered first, as IPVS.
    if point == HookPoint::ForwardReply && af == AddrFamily::Inet && is_l4_fragment(&mut skb) {
        match skb.gather_fragments(net) {
            Some(whole) => skb = whole,
            None => return Verdict::Stolen,
        }
    }
    let Some(pkt) = parse(&mut skb, af) else {
        return icmp_error(point, af, conns, net, skb);
    };
    let g = ReadGuard::new();
    match point {
        HookPoint::LocalInRequest | HookPoint::LocalOutRequest => {
            request(point, ns, conns, net, skb, &pkt, &g)
        }
        HookPoint::LocalInReply | HookPoint::ForwardReply => {
            reply(point, ns, conns, net, skb, &pkt, &g)
        }
        // Not registered by the load balancer (`POINTS`).
        HookPoint::PreRoutingEarly | HookPoint::LocalOutLate => Verdict::Accept,
    }
}

/// Whether a packet at a reply hook may be a reply of a NAT, FullNAT or
/// ENAT connection, from its sending end alone (`rvs_core::source_end`,
/// `ConnTable::may_be_nat_reply`); `true` when that cannot be told without
/// the full parse (fragments, extension headers, ICMP).
fn may_be_nat_reply(skb: &mut Skb<'_>, af: AddrFamily, conns: &ConnTable) -> bool {
    let peeked = skb.parse_linear(source_end::min_len(af), |h| match source_end::peek(af, h) {
        Peek::End(end) => Ok(Some(end)),
        Peek::Need(n) => Err(Some(n)),
        Peek::Unsure => Ok(None),
    });
    match peeked {
        Some(Some(end)) => conns.may_be_nat_reply(end.proto, &end.addr, end.port),
        // Truncated or unusual: the full parse decides, as before.
        _ => true,
    }
}

fn request(
    point: HookPoint,
    ns: &NetState,
    conns: &ConnTable,
    net: &Net,
    mut skb: Skb<'_>,
    pkt: &Packet,
    g: &ReadGuard,
) -> Verdict {
    let af = pkt.ip.af;
    let caddr = pkt.ip.saddr;
    let vaddr = pkt.ip.daddr;
    let proto = pkt.ip.proto;
    let mut new_conn = false;
    // A one-packet (`-o`) datagram's entry, which stays out of the table.
    let unhashed: ConnEntry;
    let mut one_packet = false;
    let mut found = conns.lookup_in(g, af, proto, &caddr, pkt.sport, &vaddr, pkt.dport);
    if let Some(c) = found {
        let reuse_mode = ns.setting(Setting::ConnReuseMode);
        // Only NAT and FullNAT see replies; other methods' entries never do.
        let no_reply = c.fwd.replies_bypass_director();
        if pkt
            .tcp()
            .is_some_and(|f| proto::syn_reopens(c.state(), f, reuse_mode, no_reply))
        {
            // The client reuses the port of a connection that ended: a new
            // connection, scheduled afresh (`conn_reuse_mode`).
            conns.expire_now(c);
            found = None;
        } else {
            match nodest(ns, conns, c, pkt) {
                Nodest::Keep => {}
                Nodest::Drop => return Verdict::Drop,
                Nodest::Expired => found = None,
            }
        }
    }
    let conn = match found {
        Some(c) => c,
        None => {
            // The service and the server are looked up again if an atomic
            // change was published meanwhile (`lb::config_gate`): the
            // connection follows the old or the new configuration.
            let (svc, dest, control) = loop {
                let gen = ns.services.gate.enter();
                // Firewall-mark services of the packet's family first, as
                // IPVS's ip_vs_service_find.
                let found = match ns.services.lookup_fwmark(g, af, skb.fwmark()) {
                    Some(svc) => Some(svc),
                    None => ns.services.lookup(g, af, proto, &vaddr, pkt.dport),
                };
                let Some(svc) = found else {
                    if !ns.services.gate.unchanged(gen) {
                        continue;
                    }
                    if point == HookPoint::LocalInRequest {
                        return vip_guard(ns, net, skb, pkt, g);
                    }
                    return Verdict::Accept;
                };
                // Only a SYN opens a TCP connection and an INIT an SCTP
                // association, as in IPVS, unless sloppy; other packets go to
                // the local stack, which answers them with a reset or an ABORT.
                let sloppy = Sloppy {
                    tcp: ns.setting(Setting::SloppyTcp) != 0,
                    sctp: ns.setting(Setting::SloppySctp) != 0,
                };
                if !pkt.l4.opens(sloppy) {
                    return Verdict::Accept;
                }
                // A new entry only for a packet whose checksum holds: a corrupt
                // or forged one reaches no server and takes no room in the
                // table; the local stack drops it and counts it (TcpExt/Udp
                // InCsumErrors, SctpChecksumErrors), as any bad packet to a
                // local address. (IPVS makes the entry first, then drops the
                // packet at NAT transmit or forwards it as it is by DR and
                // tunnels.)
                let csum_ok = if proto == IPPROTO_SCTP {
                    skb.sctp_csum_ok(pkt.ip.l4_offset)
                } else {
                    skb.l4_csum_ok(point.nf_hook(), pkt.ip.l4_offset, proto, af)
                };
                if !csum_ok {
                    return Verdict::Accept;
                }
                let flow = Flow {
                    caddr,
                    cport: pkt.sport,
                    vaddr,
                    vport: pkt.dport,
                    // A per-connection random number for the twos scheduler.
                    random: random::u32(),
                };
                let (dest, control) = match svc.persistence() {
                    Some((timeout, mask)) => {
                        let quiescent = ns.setting(Setting::ExpireQuiescentTemplate) != 0;
                        persistent_dest(
                            conns,
                            g,
                            svc,
                            &flow,
                            (timeout, mask),
                            quiescent,
                            ns.limits(),
                        )
                    }
                    None => (svc.schedule(g, &flow), None),
                };
                if !ns.services.gate.unchanged(gen) {
                    continue;
                }
                break (svc, dest, control);
            };
            let Some(dest) = dest else {
                // No server can take it (none, all quiesced or over their
                // thresholds): as IPVS's ip_vs_leave, tell the client the
                // port is unreachable and drop.
                skb::icmp_port_unreachable(net, &mut skb, af);
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
                dport: dest_port(svc, &dest, pkt.dport),
            };
            let fwd = dest.fwd();
            new_conn = true;
            if proto == IPPROTO_UDP && svc.one_packet() {
                one_packet = true;
                unhashed = Conn::one_packet(tuple, fwd, dest);
                &unhashed
            } else if fwd.has_local_port() {
                match local_port_insert(ns, conns, g, svc, tuple, dest, control) {
                    Some(c) => c,
                    None => return Verdict::Drop,
                }
            } else {
                match conns.insert(g, tuple, fwd, dest, false, 2, ns.limits(), control) {
                    Some(c) => c,
                    None => return Verdict::Drop,
                }
            }
        }
    };
    if new_conn && point == HookPoint::LocalOutRequest {
        // Before the request leaves: its replies come back to LOCAL_IN.
        conns.note_local_client();
    }
    if new_conn && conns.wants_resize() {
        // Past the table's growth point: the namespace's work resizes it
        // now rather than at its next tick.
        if let Some(p) = NetState::of(net) {
            p.expedite_work();
        }
    }
    let seen = Seen {
        len: skb.len(),
        fwmark: skb.fwmark(),
        new_conn,
        one_packet,
    };
    seen_request(ns, conns, conn, pkt, seen, g);
    // FullNAT's and ENAT's packets stay untracked: conntrack's entry for
    // the client's flow would never see the replies, which come to the
    // local address (FullNAT) or not to the director at all (ENAT).
    let tracking = match (ns.setting(Setting::Conntrack) != 0, one_packet) {
        _ if conn.fwd.has_local_port() => xmit::Tracking::Off,
        (false, _) => xmit::Tracking::Off,
        (true, false) => xmit::Tracking::On,
        (true, true) => xmit::Tracking::NoReply,
    };
    // An ENAT SYN without room for the client's address could not open
    // the connection at the real server: dropped and counted (a Linux
    // client's SYN always has room; SYNs are far below any MTU).
    if conn.fwd == FwdMethod::Enat
        && xmit::is_client_syn(pkt)
        && !xmit::has_room(&mut skb, pkt, u32::MAX)
    {
        conns.count_enat_no_room();
        return Verdict::Drop;
    }
    xmit::transmit(
        net,
        skb,
        pkt,
        conn,
        point == HookPoint::LocalInRequest,
        tracking,
    )
}

/// What [`seen_request`] needs to know of a client packet besides its
/// headers.
#[derive(Clone, Copy)]
pub(crate) struct Seen {
    /// Its length from the IP header on.
    pub(crate) len: usize,
    /// Its firewall mark (a sync master sends it along).
    pub(crate) fwmark: u32,
    /// It opened the connection.
    pub(crate) new_conn: bool,
    /// Its connection is a one-packet (`-o`) datagram's, outside the table.
    pub(crate) one_packet: bool,
}

/// What a client packet does to its connection, on the slow path and the
/// fast path alike: the state and expiry, a sync master's message, the
/// sequence numbers (for resets) and the counters.
pub(crate) fn seen_request(
    ns: &NetState,
    conns: &ConnTable,
    conn: &ConnEntry,
    pkt: &Packet,
    seen: Seen,
    g: &ReadGuard,
) {
    let dir = if conn.fwd.replies_bypass_director() {
        Dir::InputOnly
    } else {
        Dir::Input
    };
    // A sync master (rare) needs the state before this packet.
    let master = ns.sync.master.get(g).filter(|_| !seen.one_packet);
    let before = master.map(|_| conn.sync_state());
    conns.update(
        conn,
        dir,
        pkt.l4,
        ns.timeouts.get(g),
        ns.limits().secure_tcp,
    );
    // A sync master sends the connection if IPVS would (lb::sync::master).
    if let (Some(m), Some(before)) = (master, before) {
        m.conn_seen(ns, conn, before, seen.fwmark, g);
    }
    if let Some(s) = pkt.seq {
        conn.note_seq(dir, s);
    }
    let (len, new_conn) = (seen.len, seen.new_conn);
    conn.dest.stats.count_in(len, new_conn);
    conn.dest.svc_stats.count_in(len, new_conn);
    if let Some(t) = &ns.tot_stats {
        t.count_in(len, new_conn);
    }
}

/// A new FullNAT or ENAT connection: the address it leaves from (FullNAT:
/// a local address of the service, picked at random; ENAT: the VIP), a
/// free port on it (`lb::fullnat`), then the entry, which holds the port
/// entry, which holds the template `control`. `None` when no port is
/// free, the table is full or memory is short: the packet is dropped.
fn local_port_insert<'g>(
    ns: &NetState,
    conns: &'g ConnTable,
    g: &'g ReadGuard,
    svc: &Service,
    tuple: Tuple,
    dest: Arc<Dest>,
    control: Option<ControlRef>,
) -> Option<&'g ConnEntry> {
    let fwd = dest.fwd();
    let laddr = if fwd == FwdMethod::Enat {
        tuple.vaddr
    } else {
        let laddrs = svc.laddrs.get(g);
        let n = u32::try_from(laddrs.len()).ok()?;
        *laddrs.get(random::u32().checked_rem(n)? as usize)?
    };
    let port_setting = |s| u16::try_from(ns.setting(s)).unwrap_or(u16::MAX);
    let req = PortRequest {
        tuple: &tuple,
        laddr,
        range: (
            port_setting(Setting::FullnatPortMin),
            port_setting(Setting::FullnatPortMax),
        ),
        fwd,
    };
    let port = conns.alloc_port(g, &req, &dest, control)?;
    let held = ControlRef::port(port);
    let c = conns.insert(g, tuple, fwd, dest, false, 2, ns.limits(), held);
    // Not ours (another CPU inserted this connection first) or none: the
    // port goes back.
    if !c.is_some_and(|c| c.control.get(g).is_some_and(|p| core::ptr::eq(p, port))) {
        conns.release_port(port);
    }
    c
}

/// What becomes of a connection whose real server is gone.
enum Nodest {
    /// Its server is there: carry on.
    Keep,
    /// Drop the packet; the connection lives until it times out.
    Drop,
    /// The connection ended before this packet, which is handled as if no
    /// connection existed.
    Expired,
}

/// The real server port a new connection goes to, as IPVS: the server's
/// own port, unless it has none (port 0: the packet's port), or the
/// service is persistent and the packet came in on another port than the
/// service's (an all-ports or firewall-mark service with `-p`: each
/// connection keeps its port, so one client's ports all reach one server).
fn dest_port(svc: &Service, dest: &Dest, pkt_dport: u16) -> u16 {
    if dest.port == 0 || (svc.persistence().is_some() && pkt_dport != svc.key.port) {
        pkt_dport
    } else {
        dest.port
    }
}

/// Connections of deleted real servers, as IPVS: with
/// `expire_nodest_conn` 0 (the default) their packets are dropped until
/// they time out; with 1 the connection ends at its next packet, which is
/// then scheduled like a new connection's first (a TCP segment that is
/// not a SYN goes to the local stack, which answers with a reset). With 1
/// a new TCP connection (SYN) reusing the addresses and ports of one whose
/// server is quiesced (weight 0) also ends the old one, unless
/// `conn_reuse_mode` is 0.
fn nodest(ns: &NetState, conns: &ConnTable, c: &ConnEntry, pkt: &Packet) -> Nodest {
    let removed = c.dest.is_removed();
    let syn = pkt.tcp().is_some_and(|f| f.syn && !f.ack && !f.rst);
    // A reused port on a quiesced server is rescheduled only while port
    // reuse is handled at all (IPVS tests both under conn_reuse_mode).
    let quiesced_reuse =
        syn && c.dest.sched_weight() == 0 && ns.setting(Setting::ConnReuseMode) != 0;
    if !removed && !quiesced_reuse {
        return Nodest::Keep;
    }
    if ns.setting(Setting::ExpireNodestConn) != 0 {
        conns.expire_now(c);
        Nodest::Expired
    } else if removed {
        Nodest::Drop
    } else {
        Nodest::Keep
    }
}

/// The server of a persistent service for this client: the one its
/// template (client address masked by `-M`) names while that server is
/// still in the service, else a newly scheduled one, remembered for
/// `timeout` seconds after the client's last new connection, and as long as
/// a connection it controls lives (the returned reference, for the new
/// connection to hold; IPVS's `ip_vs_control_add`). As in IPVS, a
/// quiesced (weight 0) server keeps its persistent clients, unless
/// `quiescent` (the `expire_quiescent_template` setting) says such
/// templates expire, so their clients move on. A firewall-mark service's
/// template is keyed by protocol 0, the mark as virtual address and port 0
/// (IPVS's `ip_vs_sched_persist`), so every port and protocol of the mark
/// sticks to one server.
fn persistent_dest(
    conns: &ConnTable,
    g: &ReadGuard,
    svc: &Arc<Service>,
    flow: &Flow,
    (timeout, mask): (u32, [u8; 16]),
    quiescent: bool,
    limits: Limits,
) -> (Option<Arc<Dest>>, Option<ControlRef>) {
    let (caddr, vaddr) = (&flow.caddr, &flow.vaddr);
    let mut masked = [0u8; 16];
    for (m, (a, k)) in masked.iter_mut().zip(caddr.iter().zip(mask)) {
        *m = a & k;
    }
    let af = svc.key.af;
    let fwm_addr;
    let (proto, vaddr, vport) = if svc.key.is_fwmark() {
        fwm_addr = addr16(svc.key.fwmark.to_be_bytes());
        (0, &fwm_addr, 0)
    } else {
        // An all-ports service keeps one template for all the address's
        // ports (vport 0), as IPVS's port-zero templates.
        (svc.key.protocol, vaddr, svc.key.port)
    };
    if let Some(t) = conns.lookup_template(g, af, proto, &masked, vaddr, vport) {
        // A draining server takes no new client, templates or not.
        let expired = (quiescent && t.dest.weight() == 0) || t.dest.is_draining();
        if !t.dest.removed.load(Ordering::Relaxed) && !expired {
            conns.touch(t, timeout);
            // `None`: the collector is removing it right now; a new
            // template takes its place.
            if let Some(r) = ControlRef::new(t) {
                return (Some(t.dest.clone()), Some(r));
            }
        } else {
            // Invalidated: out of the table now, even while it controls
            // connections (they keep their server until they end).
            conns.remove(g, t);
        }
    }
    let Some(dest) = svc.schedule(g, flow) else {
        return (None, None);
    };
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
        true,
        timeout,
        limits,
        None,
    );
    match t {
        Some(t) => (Some(t.dest.clone()), ControlRef::new(t)),
        None => (Some(dest), None),
    }
}

/// An ICMP or ICMPv6 error about a connection rvs forwards (IPVS's
/// `ip_vs_out_icmp[_v6]` and `ip_vs_in_icmp[_v6]`), translated by
/// `rvs_core::icmp`:
///
/// - at the reply hooks (FORWARD, LOCAL_IN for clients on the director),
///   an error about a NAT request `client -> real server` (from the real
///   server, or a router on its side) goes on to the client, from the VIP
///   and quoting `client -> VIP` (a packet too big keeps its MTU: NAT adds
///   no header, so the client's path MTU toward the VIP is the one the
///   router reports);
/// - at LOCAL_IN for requests, an error sent to the VIP about a reply
///   `VIP -> client` goes to the connection's real server: for NAT with
///   the real server's address put back, for DR and TUN unchanged (the
///   real server holds the VIP).
///
/// Anything else (other ICMP, malformed or truncated quotes, unknown
/// connections) passes untouched.
fn icmp_error(
    point: HookPoint,
    af: AddrFamily,
    conns: &ConnTable,
    net: &Net,
    mut skb: Skb<'_>,
) -> Verdict {
    if point == HookPoint::LocalOutRequest {
        return Verdict::Accept;
    }
    if point == HookPoint::LocalInRequest && af == AddrFamily::Inet {
        skb = match tunnel_icmp_error(conns, net, skb) {
            Ok(verdict) => return verdict,
            Err(skb) => skb,
        };
    }
    let Some((outer, q)) = parse_icmp_error(&mut skb, af) else {
        return Verdict::Accept;
    };
    let g = ReadGuard::new();
    let (saddr, daddr) = (q.saddr, q.daddr);
    if point == HookPoint::LocalInRequest {
        // The quoted packet is a reply: VIP -> client.
        let Some(conn) = conns.lookup_in(&g, af, q.proto, &daddr, q.dport, &saddr, q.sport) else {
            return Verdict::Accept;
        };
        if conn.fwd == FwdMethod::Masq {
            let nat = IcmpNat::ToServer {
                daddr: conn.tuple.daddr,
                dport: conn.tuple.dport,
            };
            let Some(buf) = skb.header_mut(q.rewrite_len) else {
                return Verdict::Drop;
            };
            if icmp::nat(buf, &q, nat).is_err() {
                return Verdict::Accept;
            }
        }
        return xmit::forward_icmp(net, skb, &outer, conn);
    }
    // The quoted packet is a request after NAT: client -> real server.
    let Some(conn) = conns.lookup_out(&g, af, q.proto, &daddr, q.dport, &saddr, q.sport) else {
        if point == HookPoint::LocalInReply {
            return fullnat_icmp_error(conns, net, skb, &q, &g);
        }
        return Verdict::Accept;
    };
    if conn.fwd != FwdMethod::Masq {
        return Verdict::Accept;
    }
    let nat = IcmpNat::ToClient {
        vaddr: conn.tuple.vaddr,
        vport: conn.tuple.vport,
    };
    let Some(buf) = skb.header_mut(q.rewrite_len) else {
        return Verdict::Drop;
    };
    // A refused rewrite changed nothing: let the error pass as it is.
    let _ = icmp::nat(buf, &q, nat);
    Verdict::Accept
}

/// An ICMP or ICMPv6 error (at LOCAL_IN) about a FullNAT request, `local
/// address -> real server`, from the real server or a router on its side.
/// A "fragmentation needed" or "packet too big" records the path MTU on
/// the director's route to the real server, as it would for a socket of
/// its own, so the next too big packet of the client is answered by the
/// director itself (from the VIP, quoting the client's packet: see
/// `xmit::transmit`), and the client's path MTU follows. Any other error
/// goes on to the client as one about its own packet, `client -> VIP`
/// (`xmit::fullnat_icmp_to_client`): a UDP client learns that the port is
/// unreachable, a TCP client that the host is. Errors about anything else
/// go on to the director's stack.
fn fullnat_icmp_error(
    conns: &ConnTable,
    net: &Net,
    mut skb: Skb<'_>,
    q: &icmp::IcmpQuote,
    g: &ReadGuard,
) -> Verdict {
    let too_big = match q.af {
        AddrFamily::Inet => {
            q.icmp_type == icmp::ICMP_DEST_UNREACH && q.code == icmp::ICMP_FRAG_NEEDED
        }
        AddrFamily::Inet6 => q.icmp_type == icmp::ICMPV6_PKT_TOOBIG,
    };
    let Some(conn) = conns.lookup_fullnat(g, q.af, q.proto, &q.saddr, q.sport, &q.daddr, q.dport)
    else {
        return Verdict::Accept;
    };
    if !too_big {
        return xmit::fullnat_icmp_to_client(net, skb, q, conn);
    }
    // The MTU: ICMP's next-hop MTU (bytes 6-7), ICMPv6's (bytes 4-7).
    let Some(info) = skb
        .header(q.icmp_off + 8)
        .and_then(|h| h.get(q.icmp_off + 4..q.icmp_off + 8))
        .and_then(|b| <[u8; 4]>::try_from(b).ok())
    else {
        return Verdict::Accept;
    };
    // A forged or damaged error changes no route.
    let csum_ok = match q.af {
        AddrFamily::Inet => skb.icmp_csum_ok(q.icmp_off),
        AddrFamily::Inet6 => skb.l4_csum_ok(
            HookPoint::LocalInReply.nf_hook(),
            q.icmp_off,
            IPPROTO_ICMPV6,
            q.af,
        ),
    };
    if !csum_ok {
        return Verdict::Drop;
    }
    let recorded = match q.af {
        AddrFamily::Inet => {
            let [_, _, hi, lo] = info;
            let mtu = u32::from(u16::from_be_bytes([hi, lo]));
            mtu != 0 && skb.pull_to(q.inner_off, q.inner_ihl) && {
                skb.update_pmtu(net, mtu);
                true
            }
        }
        AddrFamily::Inet6 => skb.update_pmtu6_at(net, q.inner_off, u32::from_be_bytes(info)),
    };
    if !recorded {
        return Verdict::Drop;
    }
    skb.consume();
    Verdict::Stolen
}

/// An ICMP error (at LOCAL_IN) about a tunnel packet the director sent to
/// a TUN real server (`rvs_core::tunnel_icmp`; IPVS's tunnel case of
/// `ip_vs_in_icmp`). The connection is found from the client's packet
/// inside the quote, and must be a tunnel to that real server with that
/// encapsulation. A "fragmentation needed" lowers the path MTU of the
/// route to the real server (rvs's cached routes see it: the kernel marks
/// them stale); then, if the client's packet had DF, the client gets the
/// error about its own packet, from the VIP, with the MTU less the
/// tunnel's overhead. Other errors reach the client unchanged. `Err` gives
/// the packet back when it is not such an error.
fn tunnel_icmp_error<'a>(
    conns: &ConnTable,
    net: &Net,
    mut skb: Skb<'a>,
) -> core::result::Result<Verdict, Skb<'a>> {
    let Some(outer) = parse_ipv4(&mut skb).filter(|o| o.proto == IPPROTO_ICMP) else {
        return Err(skb);
    };
    let want = tunnel_icmp::linear_len(outer.ihl_len, skb.len());
    let Some(Ok(tq)) = skb.header(want).map(|b| tunnel_icmp::parse_v4(b, &outer)) else {
        return Err(skb);
    };
    let q = &tq.quote;
    let g = ReadGuard::new();
    let Some(conn) = conns.lookup_in(
        &g,
        AddrFamily::Inet,
        q.proto,
        &q.saddr,
        q.sport,
        &q.daddr,
        q.dport,
    ) else {
        return Err(skb);
    };
    if conn.fwd != FwdMethod::Tunnel
        || conn.dest.af != AddrFamily::Inet
        || conn.tuple.daddr != tq.server
        || !tq.encap.is_of(conn.dest.tunnel())
    {
        return Err(skb);
    }
    // From here on it is ours: nothing else on the director has a use for
    // it (no tunnel device matches).
    if !skb.icmp_csum_ok(q.icmp_off) {
        return Ok(Verdict::Drop);
    }
    let mut info = tq.info;
    let mut at = 0;
    if tq.frag_needed() {
        let mtu = tq.reported_mtu();
        if !skb.pull_to(tq.tun_off, tq.tun_ihl) {
            return Ok(Verdict::Drop);
        }
        skb.update_pmtu(net, mtu);
        if !tq.df {
            // The client does not do path MTU discovery for this packet.
            skb.consume();
            return Ok(Verdict::Stolen);
        }
        info = tq.client_mtu(mtu).to_be_bytes();
        at = tq.tun_off;
    }
    if !skb.pull_to(q.inner_off.saturating_sub(at), q.inner_ihl) {
        return Ok(Verdict::Drop);
    }
    skb::icmp_send(&mut skb, q.icmp_type, q.code, info);
    skb.consume();
    Ok(Verdict::Stolen)
}

/// The VIP port guard (`vip_guard`), for a packet from outside that
/// matches no service: the first packet of a flow to a virtual service's
/// address is dropped or refused instead of reaching the director's own
/// sockets. A TCP segment other than a SYN, an SCTP packet other than an
/// INIT (for which the stack has no connection: it resets or aborts them
/// itself; for the host's own connections, they are theirs), a UDP
/// datagram that conntrack saw as a reply to a flow this host opened, and
/// any packet to an address that is no VIP pass untouched.
fn vip_guard(ns: &NetState, net: &Net, mut skb: Skb<'_>, pkt: &Packet, g: &ReadGuard) -> Verdict {
    let mode = ns.setting(Setting::VipGuard);
    if mode == 0 || !ns.services.vips.contains(g, pkt.ip.af, &pkt.ip.daddr) {
        return Verdict::Accept;
    }
    // What opens a connection (never sloppy here: a mid-stream segment
    // reaches no listener), and for UDP not a reply conntrack has seen.
    let opens = match pkt.l4 {
        L4Event::Udp => !skb.ct_is_reply(),
        l4 => l4.opens(Sloppy::default()),
    };
    if !opens {
        return Verdict::Accept;
    }
    ns.count_guarded(skb.len());
    if mode == VIP_GUARD_REJECT {
        skb::icmp_port_unreachable(net, &mut skb, pkt.ip.af);
    }
    Verdict::Drop
}

/// `vip_guard`'s value for answering ICMP port unreachable.
const VIP_GUARD_REJECT: u32 = 2;

/// A reply of `conn` (`len` bytes) from its real server: its state and
/// expiry move, the sequence numbers a reset needs are learnt, and it is
/// counted.
pub(crate) fn seen_reply(
    ns: &NetState,
    conns: &ConnTable,
    conn: &ConnEntry,
    pkt: &Packet,
    len: usize,
    g: &ReadGuard,
) {
    let master = ns.sync.master.get(g);
    let before = master.map(|_| conn.sync_state());
    conns.update(
        conn,
        Dir::Output,
        pkt.l4,
        ns.timeouts.get(g),
        ns.limits().secure_tcp,
    );
    // The server's packet changed the state (its FIN, its reset): a sync
    // master sends that at once (IPVS at the client's next packet). The
    // fwmark is not known here; the backup finds the service by address.
    if let (Some(m), Some(before)) = (master, before) {
        if conn.sync_state() != before {
            m.conn_seen(ns, conn, before, 0, g);
        }
    }
    if let Some(s) = pkt.seq {
        conn.note_seq(Dir::Output, s);
    }
    conn.dest.stats.count_out(len);
    conn.dest.svc_stats.count_out(len);
    if let Some(t) = &ns.tot_stats {
        t.count_out(len);
    }
}

/// A reply from a FullNAT real server to a local address and port:
/// counted, then sent on to the client from the virtual service
/// (`xmit::fullnat_reply`). Anything else to a local address passes.
fn fullnat_reply(
    ns: &NetState,
    conns: &ConnTable,
    net: &Net,
    skb: Skb<'_>,
    pkt: &Packet,
    g: &ReadGuard,
) -> Verdict {
    let Some(conn) = conns.lookup_fullnat(
        g,
        pkt.ip.af,
        pkt.ip.proto,
        &pkt.ip.daddr,
        pkt.dport,
        &pkt.ip.saddr,
        pkt.sport,
    ) else {
        return Verdict::Accept;
    };
    seen_reply(ns, conns, conn, pkt, skb.len(), g);
    xmit::fullnat_reply(net, skb, pkt, conn)
}

fn reply(
    point: HookPoint,
    ns: &NetState,
    conns: &ConnTable,
    net: &Net,
    mut skb: Skb<'_>,
    pkt: &Packet,
    g: &ReadGuard,
) -> Verdict {
    // At LOCAL_IN, a NAT reply is one to a client on the director: none
    // can come before such a client's first connection, and every request
    // to a VIP passes here first, so the lookup is skipped until then.
    if point == HookPoint::LocalInReply && !conns.may_have_local_clients() {
        return fullnat_reply(ns, conns, net, skb, pkt, g);
    }
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
        // FullNAT replies come to a local address: LOCAL_IN.
        if point == HookPoint::LocalInReply {
            return fullnat_reply(ns, conns, net, skb, pkt, g);
        }
        return Verdict::Accept;
    };
    if conn.fwd != FwdMethod::Masq {
        return Verdict::Accept;
    }
    seen_reply(ns, conns, conn, pkt, skb.len(), g);
    let vaddr = conn.tuple.vaddr;
    match xmit::nat_rewrite(&mut skb, pkt, xmit::Side::Source, &vaddr, conn.tuple.vport) {
        Ok(()) => {
            // A reply to a client on the director goes on to LOCAL_IN's
            // request hook: marked as rvs's, it passes there (no service
            // has its port, and the VIP port guard must not take it).
            if point == HookPoint::LocalInReply {
                skb.mark_rvs();
            }
            Verdict::Accept
        }
        Err(_) => Verdict::Drop,
    }
}
