// SPDX-License-Identifier: GPL-2.0

//! Ending connections now, which IPVS cannot do: a service's or one real
//! server's (`rvsadm --flush-conns`, and a drain's deadline). A TCP
//! connection gets a reset toward each end (`rvs_core::tcp_reset`): the
//! client's comes from the virtual address, the real server's is sent as
//! the client's next segment would be, by the connection's own forwarding
//! method (NAT rewrite, direct routing, tunnel). Every entry, persistence
//! templates included, then expires at once: lookups miss it from then on,
//! and the collector frees it at its next pass.
//!
//! A reset whose sequence number is not exactly the one its receiver
//! expects draws a challenge ACK instead (RFC 5961). The client's reaches
//! a virtual port without a connection and the director's own stack
//! answers it with an exact reset; so a client always ends.

#![forbid(unsafe_code)]

use crate::lb::conn::{Conn, ConnEntry};
use crate::lb::conn_table::ConnTable;
use crate::lb::packet;
use crate::lb::xmit::{self, Tracking};
use crate::rvs_core::config::{AddrFamily, FwdMethod};
use crate::rvs_core::packet::IPPROTO_TCP;
use crate::rvs_core::proto::TcpState;
use crate::rvs_core::tcp_reset::{build_rst, End, RST_MAX_LEN};
use crate::sys::hooks::Verdict;
use crate::sys::netns::Net;
use crate::sys::rcu::ReadGuard;
use crate::sys::route;
use crate::sys::sched as ksched;
use crate::sys::skb::{self, OwnedSkb};
use core::sync::atomic::Ordering;

/// Buckets looked at per read section: the walk yields the CPU between
/// groups (a table has up to 2^20 buckets).
const BUCKETS_PER_PASS: usize = 256;

impl ConnTable {
    /// Ends every entry for which `doomed` holds: resets for TCP
    /// connections, then expiry now. Process context, no lock held.
    /// Returns how many connections ended (templates not counted).
    pub(crate) fn flush_matching(&self, net: &Net, doomed: impl Fn(&Conn) -> bool) -> u32 {
        // No resize meanwhile: every connection is met.
        let _x = self.exclusive();
        let mut ended = 0u32;
        let mut first = 0;
        loop {
            let g = ReadGuard::new();
            let n = self.slots(&g);
            if first >= n {
                break;
            }
            let last = n.min(first + BUCKETS_PER_PASS);
            for b in first..last {
                self.for_each_in(&g, b, |c| {
                    if doomed(c) {
                        self.end_now(net, c);
                        if !c.template {
                            ended = ended.saturating_add(1);
                        }
                    }
                });
            }
            drop(g);
            ksched::cond_resched();
            first = last;
        }
        self.flushed.fetch_add(u64::from(ended), Ordering::Relaxed);
        ended
    }

    /// Resets `c` toward both ends if it is a TCP connection that still
    /// carries data, and makes it expire now.
    fn end_now(&self, net: &Net, c: &ConnEntry) {
        if !c.template && c.tuple.protocol == IPPROTO_TCP && carries_data(c.state()) {
            if let Some((server_next, client_next)) = c.reset_seqs() {
                reset_client(net, c, client_next);
                reset_server(net, c, server_next);
            }
        }
        self.expire_now(c);
    }
}

/// Whether a TCP connection in state `s` has ends that a reset must tell.
fn carries_data(s: TcpState) -> bool {
    !matches!(
        s,
        TcpState::None | TcpState::TimeWait | TcpState::Close | TcpState::Listen
    )
}

/// The client and virtual ends of a connection.
fn ends(c: &Conn) -> (End, End) {
    let t = &c.tuple;
    (
        End {
            addr: t.caddr,
            port: t.cport,
        },
        End {
            addr: t.vaddr,
            port: t.vport,
        },
    )
}

/// Offset of the TCP header in a reset of family `af`.
fn l4_offset(af: AddrFamily) -> usize {
    match af {
        AddrFamily::Inet => 20,
        AddrFamily::Inet6 => 40,
    }
}

/// A reset of connection `c`'s family from `src` to `dst`, as a packet.
fn reset_packet(c: &Conn, src: &End, dst: &End, seq: u32) -> Option<OwnedSkb> {
    let af = c.tuple.af;
    let mut buf = [0u8; RST_MAX_LEN];
    let n = build_rst(af, src, dst, seq, &mut buf);
    OwnedSkb::build(af, buf.get(..n)?, l4_offset(af))
}

/// Sends the client a reset from the virtual address. Not for a client
/// on the director itself (its route is local): its socket ends at the
/// challenge ACK's reset described in the module doc.
fn reset_client(net: &Net, c: &Conn, seq: u32) {
    if seq == 0 {
        return;
    }
    let af = c.tuple.af;
    let Ok(route) = route::route_to_host(net, af, &c.tuple.caddr) else {
        return;
    };
    let (client, vip) = ends(c);
    if let Some(p) = reset_packet(c, &vip, &client, seq) {
        p.send_with(|mut skb| {
            skb.set_route(route);
            skb::local_out(net, skb, af, false, false);
            Verdict::Stolen
        });
    }
}

/// Sends the real server a reset as from the client, by the connection's
/// forwarding method. None for a server on the director itself.
fn reset_server(net: &Net, c: &Conn, seq: u32) {
    if seq == 0 || c.fwd == FwdMethod::Local {
        return;
    }
    let (client, vip) = ends(c);
    if let Some(p) = reset_packet(c, &client, &vip, seq) {
        p.send_with(|mut skb| match packet::parse(&mut skb, c.tuple.af) {
            Some(pkt) => xmit::transmit(net, skb, &pkt, c, false, Tracking::Off),
            None => Verdict::Drop,
        });
    }
}
