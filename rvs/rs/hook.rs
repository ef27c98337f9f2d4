// SPDX-License-Identifier: GPL-2.0

//! The companion's two hooks.
//!
//! - PRE_ROUTING, before conntrack and routing (`inbound`): a SYN from a
//!   trusted director with the client's option opens a connection; that
//!   connection's packets reach the stack from the client's address and
//!   port.
//! - LOCAL_OUT, after the filter (`outbound`): the application's packets
//!   to that client go back to the director's local address and port,
//!   routed again (FullNAT), or leave from the VIP straight to the client
//!   (ENAT, the port is the service's already).
//!
//! TCP only; fragments, other protocols and packets of no connection pass
//! unchanged. A packet that cannot be rewritten (memory) is dropped: sent
//! half-translated it would reach no one.

#![forbid(unsafe_code)]

use crate::rs::flows::{Flow, FlowKey, Opened};
use crate::rs::state::RsState;
use crate::rvs_core::config::AddrFamily;
use crate::rvs_core::fullnat;
use crate::rvs_core::packet::{self, IpInfo, IPPROTO_TCP};
use crate::rvs_core::proto::TcpFlags;
use crate::rvs_core::rs::Mode;
use crate::sys::hooks::{HookHandler, HookPoint, Verdict};
use crate::sys::netns::Net;
use crate::sys::rcu::ReadGuard;
use crate::sys::skb::Skb;
use crate::sys::time::jiffies;
use core::sync::atomic::Ordering::Relaxed;
use kernel::prelude::*;

impl HookHandler for RsState {
    const POINTS: &'static [HookPoint] = &[HookPoint::PreRoutingEarly, HookPoint::LocalOutLate];

    fn hook(&self, point: HookPoint, af: AddrFamily, net: &Net, mut skb: Skb<'_>) -> Verdict {
        let ok = match point {
            HookPoint::PreRoutingEarly => inbound(self, af, &mut skb),
            HookPoint::LocalOutLate => outbound(self, af, net, &mut skb),
            _ => Ok(()),
        };
        match ok {
            Ok(()) => Verdict::Accept,
            Err(_) => Verdict::Drop,
        }
    }
}

/// A TCP segment's headers.
struct Segment {
    ip: IpInfo,
    sport: u16,
    dport: u16,
    flags: TcpFlags,
    /// TCP header length, options included.
    hlen: usize,
}

impl Segment {
    /// The TCP header, options included (linear after [`parse`]).
    fn tcp<'a>(&self, skb: &'a mut Skb<'_>) -> Option<&'a [u8]> {
        let l4 = self.ip.l4_offset;
        skb.header(l4.checked_add(self.hlen)?)?.get(l4..)
    }
}

/// The TCP segment in `skb`, its whole header made linear; `None` for
/// anything else (fragments included).
fn parse(skb: &mut Skb<'_>, af: AddrFamily) -> Option<Segment> {
    let ip = skb.parse_ip(af)?;
    if ip.is_fragment || ip.proto != IPPROTO_TCP {
        return None;
    }
    let l4 = ip.l4_offset;
    let doff = skb.header(l4.checked_add(20)?)?.get(l4.checked_add(12)?)? >> 4;
    let hlen = usize::from(doff) * 4;
    let tcp = skb.header(l4.checked_add(hlen)?)?.get(l4..)?;
    let ports = packet::parse_l4_ports(tcp, IPPROTO_TCP).ok()?;
    let flags = packet::tcp_flags(tcp).ok()?;
    Some(Segment {
        ip,
        sport: ports.src,
        dport: ports.dst,
        flags,
        hlen,
    })
}

/// A packet received: from a director, it comes from the client now.
fn inbound(st: &RsState, af: AddrFamily, skb: &mut Skb<'_>) -> Result {
    if st.idle() {
        return Ok(());
    }
    let Some(seg) = parse(skb, af) else {
        return Ok(());
    };
    let now = jiffies();
    let g = ReadGuard::new();
    let mut key = FlowKey {
        af,
        daddr: seg.ip.saddr,
        dport: seg.sport,
        raddr: seg.ip.daddr,
        rport: seg.dport,
        caddr: [0; 16],
        cport: 0,
    };
    let f = seg.flags;
    let flow = if f.syn && !f.ack && !f.rst {
        match announced(st, &g, skb, &seg, &mut key, now) {
            Announced::Flow(flow) => Some(flow),
            // A new connection on this wire tuple that the companion does
            // not take: an older one there (closing, or whose director
            // port was freed and taken again) must not lend it its
            // client's address.
            Announced::None => {
                st.flows.forget(&g, &key, now);
                return Ok(());
            }
            Announced::Refused => return Err(ENOSPC),
        }
    } else {
        st.flows.by_wire(&g, &key, now)
    };
    let Some(flow) = flow else {
        return Ok(());
    };
    flow.seen(f, false, now);
    rewrite(skb, &seg, true, &flow.key.caddr, flow.key.cport)
}

/// What a client's SYN announced.
enum Announced<'g> {
    /// A connection, new or found again.
    Flow(&'g Flow),
    /// Nothing the companion takes (no option, or not from a director).
    None,
    /// An ENAT connection that cannot be taken: without the companion it
    /// cannot work, so its SYN is dropped.
    Refused,
}

/// Opens the connection a SYN announces with a client option, if it
/// comes from a trusted director; fills `key`'s client fields.
fn announced<'g>(
    st: &'g RsState,
    g: &'g ReadGuard,
    skb: &mut Skb<'_>,
    seg: &Segment,
    key: &mut FlowKey,
    now: u64,
) -> Announced<'g> {
    let af = seg.ip.af;
    let Some(tcp) = seg.tcp(skb) else {
        return Announced::None;
    };
    let found = Mode::ALL.into_iter().find_map(|mode| {
        fullnat::find_client_option(mode.kind(), af, tcp).map(|(addr, port)| (mode, addr, port))
    });
    let Some((mode, caddr, cport)) = found else {
        return Announced::None;
    };
    // Off (no directors): nothing is taken, nor counted.
    if !st.on.load(Relaxed) {
        return Announced::None;
    }
    if !st.directors.get(g).contains(af, &seg.ip.saddr) {
        st.counts.untrusted.fetch_add(1, Relaxed);
        return Announced::None;
    }
    key.caddr = caddr;
    key.cport = cport;
    match st
        .flows
        .open(g, key, mode, st.max_entries.load(Relaxed), now)
    {
        Opened::New(flow) => {
            let n = match mode {
                Mode::FullNat => &st.counts.fullnat,
                Mode::Enat => &st.counts.enat,
            };
            n.fetch_add(1, Relaxed);
            Announced::Flow(flow)
        }
        Opened::Again(flow) => Announced::Flow(flow),
        Opened::Full | Opened::NoMemory => {
            st.counts.full.fetch_add(1, Relaxed);
            match mode {
                // It still works, from the local address.
                Mode::FullNat => Announced::None,
                Mode::Enat => Announced::Refused,
            }
        }
    }
}

/// A packet this host sends: a reply to a translated client goes back the
/// way its connection came.
fn outbound(st: &RsState, af: AddrFamily, net: &Net, skb: &mut Skb<'_>) -> Result {
    if st.flows.count() == 0 {
        return Ok(());
    }
    let Some(seg) = parse(skb, af) else {
        return Ok(());
    };
    let now = jiffies();
    let g = ReadGuard::new();
    let key = FlowKey {
        af,
        daddr: [0; 16],
        dport: 0,
        raddr: seg.ip.saddr,
        rport: seg.sport,
        caddr: seg.ip.daddr,
        cport: seg.dport,
    };
    let Some(flow) = st.flows.by_client(&g, &key, now) else {
        return Ok(());
    };
    flow.seen(seg.flags, true, now);
    match flow.mode {
        Mode::FullNat => {
            rewrite(skb, &seg, false, &flow.key.daddr, flow.key.dport)?;
            skb.reroute(net, af)
        }
        // The VIP, at the service's port (the real server's own).
        Mode::Enat => rewrite(skb, &seg, true, &flow.key.daddr, seg.sport),
    }
}

/// Rewrites the source (`source`) or destination address and port of a
/// TCP segment, its checksums kept right for every offload mode.
fn rewrite(skb: &mut Skb<'_>, seg: &Segment, source: bool, addr: &[u8; 16], port: u16) -> Result {
    skb.rewrite_end(seg.ip.af, seg.ip.l4_offset, false, source, addr, port)
}
