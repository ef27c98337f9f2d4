// SPDX-License-Identifier: GPL-2.0

//! The ingress fast path (the `fastpath` setting): packets of established
//! connections handled at the receiving device's ingress hook, before IP
//! receive, routing, and the PREROUTING, LOCAL_IN, FORWARD and LOCAL_OUT
//! hooks (firewall chains included), as nftables flowtables handle
//! theirs. IPVS has no such path. See `Documentation/fastpath.md`.
//!
//! The fast path takes a packet only when the slow path would do exactly
//! what it does, and changes nothing before it is sure:
//! - the IP header as `rvs_core::fastpath` accepts it (no options, no
//!   fragment, TCP or UDP, a TTL or hop limit to spare), on a device whose
//!   frames are its own (`sys::ingress`);
//! - conntrack mode off (`conntrack` 0) and no IPsec policy;
//! - a connection in the table: a request of NAT, direct routing or a
//!   tunnel whose real server is still in service, or a NAT reply routed
//!   on to a remote client; TCP only once established, and never a SYN,
//!   FIN or reset (those change the state, or reopen the connection);
//! - a route, and a size that fits it (else the slow path fragments or
//!   answers with ICMP, which needs the input route the fast path skips).
//!
//! Then it does what the slow path does for such a packet, with the same
//! functions: the connection's state, expiry, sync and counters
//! (`datapath::seen_request`, `datapath::seen_reply`), the TTL, NAT or the
//! tunnel header (`xmit`), and sends it to the route's device. Everything
//! else (first packets, fragments, options, ICMP, SCTP, FullNAT, ENAT,
//! local clients, conntrack mode) takes the slow path unchanged.

#![forbid(unsafe_code)]

use crate::lb::datapath::{seen_reply, seen_request, Seen};
use crate::lb::packet::parse_l4;
use crate::lb::state::NetState;
use crate::lb::xmit;
use crate::rvs_core::config::{AddrFamily, FwdMethod};
use crate::rvs_core::fastpath;
use crate::rvs_core::proto::TcpState;
use crate::rvs_core::settings::Setting;
use crate::sys::hooks::Verdict;
use crate::sys::ingress::IngressHandler;
use crate::sys::netns::Net;
use crate::sys::rcu::ReadGuard;
use crate::sys::skb::Skb;

impl IngressHandler for NetState {
    fn ingress_wanted(&self) -> bool {
        self.setting(Setting::Fastpath) != 0
    }

    fn ingress(&self, af: AddrFamily, net: &Net, skb: Skb<'_>) -> Verdict {
        handle(self, af, net, skb)
    }
}

/// One packet at a device's ingress hook: `Accept` leaves it, unchanged,
/// to the stack and rvs's slow path.
fn handle(ns: &NetState, af: AddrFamily, net: &Net, mut skb: Skb<'_>) -> Verdict {
    // The hooks outlive the setting by a moment when it is turned off.
    if ns.setting(Setting::Fastpath) == 0 || ns.setting(Setting::Conntrack) != 0 {
        return Verdict::Accept;
    }
    let Some(conns) = ns.conns() else {
        return Verdict::Accept;
    };
    let pkt_len = skb.len();
    let Some(ip) = skb
        .header(fastpath::header_len(af))
        .and_then(|hdr| fastpath::parse_ip(af, hdr, pkt_len))
    else {
        return Verdict::Accept;
    };
    if net.has_xfrm_policy() {
        return Verdict::Accept;
    }
    let Some(pkt) = parse_l4(&mut skb, ip) else {
        return Verdict::Accept;
    };
    // Only segments that keep a connection as it is.
    let tcp = pkt.tcp();
    if tcp.is_some_and(|f| f.syn || f.fin || f.rst) {
        return Verdict::Accept;
    }
    let established = |state: TcpState| tcp.is_none() || state == TcpState::Established;
    let g = ReadGuard::new();
    let (caddr, vaddr) = (&pkt.ip.saddr, &pkt.ip.daddr);
    let proto = pkt.ip.proto;
    if let Some(conn) = conns.lookup_in(&g, af, proto, caddr, pkt.sport, vaddr, pkt.dport) {
        if !established(conn.state()) || conn.dest.is_removed() {
            return Verdict::Accept;
        }
        let Some(out) = xmit::fast_request_route(net, &skb, &pkt, conn) else {
            return Verdict::Accept;
        };
        // Committed: from here on the packet is the fast path's.
        skb.set_transport_offset(pkt.ip.l4_offset);
        let seen = Seen {
            len: pkt_len,
            // No rule marked it yet: a sync master sends the mark that
            // made the connection (its service's), as for the slow path.
            fwmark: conn.dest.svc_fwmark,
            new_conn: false,
            one_packet: false,
        };
        seen_request(ns, conns, conn, &pkt, seen, &g);
        return xmit::fast_transmit(net, skb, &pkt, conn, out);
    }
    // A NAT reply, real server -> client.
    let (daddr, caddr) = (&pkt.ip.saddr, &pkt.ip.daddr);
    let Some(conn) = conns.lookup_out(&g, af, proto, daddr, pkt.sport, caddr, pkt.dport) else {
        return Verdict::Accept;
    };
    if conn.fwd != FwdMethod::Masq || !established(conn.state()) {
        return Verdict::Accept;
    }
    // Routed as the IP layer would; a client on the director (a local
    // route) is the slow path's.
    match skb.route_input(af) {
        Some(mtu) if skb.fits(mtu) => {}
        Some(_) => {
            skb.drop_route();
            return Verdict::Accept;
        }
        None => return Verdict::Accept,
    }
    skb.set_transport_offset(pkt.ip.l4_offset);
    seen_reply(ns, conns, conn, &pkt, pkt_len, &g);
    xmit::fast_reply(net, skb, &pkt, conn)
}
