// SPDX-License-Identifier: GPL-2.0

//! FullNAT's local ports: which (local address, port) each FullNAT
//! connection leaves from, and how a reply to one finds its connection.
//!
//! No IPVS counterpart (DPVS and Alibaba's LVS have one). ENAT
//! connections take their port here too, on the VIP: no reply comes back
//! to the director, but the real server's companion tells connections
//! apart by that port.
//!
//! The connection table finds connections by their client, which is the
//! destination of NAT replies; a FullNAT reply is addressed to the local
//! address and port instead. So each FullNAT connection holds a second
//! entry, in the table's *port table*: a [`Conn`] whose tuple names the
//! local address and port (in the client's fields, which the port table
//! hashes), the real server, and the client (in the virtual fields), with
//! no counters and no expiry of its own. Finding a free port and taking it
//! are one step under the port's bucket lock, so two connections never
//! share (local address, port, real server, port). The connection holds
//! the port entry (a counted reference in its `control` slot; the port
//! entry holds the connection's persistence template in turn), and whoever
//! removes the connection from the table releases the port
//! ([`ConnTable::release_port`]). A reply finds the port entry, then the
//! connection in its client's chain that holds that very entry.

#![forbid(unsafe_code)]

use crate::lb::conn::{Conn, ConnEntry, ControlRef, Tuple};
use crate::lb::conn_table::ConnTable;
use crate::lb::dest::Dest;
use crate::rvs_core::config::{AddrFamily, FwdMethod};
use crate::rvs_core::fullnat::port_candidates;
use crate::rvs_core::hash;
use crate::sys::chain::NewEntry;
use crate::sys::random;
use crate::sys::rcu::ReadGuard;
use crate::sys::time::{jiffies, secs_to_jiffies};
use core::ptr;
use core::sync::atomic::Ordering;
use kernel::prelude::*;
use kernel::sync::Arc;

/// Ports tried for one new connection before it is refused: enough to
/// find a free one in a range that is nearly full, bounded so that a
/// full range costs a flood little.
const PORT_TRIES: u32 = 64;

/// Port entries never expire by time: their connection removes them.
const PORT_ENTRY_SECS: u32 = 1 << 30;

/// What a new FullNAT connection asks of the port table.
pub(crate) struct PortRequest<'a> {
    /// The connection's addresses (client, virtual, real server).
    pub(crate) tuple: &'a Tuple,
    /// The local address it leaves from.
    pub(crate) laddr: [u8; 16],
    /// The range its port comes from (`fullnat_port_min..=max`).
    pub(crate) range: (u16, u16),
    /// FullNAT or ENAT (for the log).
    pub(crate) fwd: FwdMethod,
}

impl Tuple {
    /// Whether this port entry's tuple is local `laddr:lport` toward real
    /// server `raddr:rport`.
    fn is_port(
        &self,
        af: AddrFamily,
        protocol: u8,
        laddr: &[u8; 16],
        lport: u16,
        raddr: &[u8; 16],
        rport: u16,
    ) -> bool {
        self.af == af
            && self.protocol == protocol
            && self.cport == lport
            && self.dport == rport
            && self.caddr == *laddr
            && self.daddr == *raddr
    }
}

impl ConnTable {
    /// The port table's hash of a local address and port.
    fn port_hash(&self, af: AddrFamily, protocol: u8, laddr: &[u8; 16], lport: u16) -> u32 {
        let h = hash::conn_hash(&self.key, protocol, laddr, lport);
        h.wrapping_add(u64::from(af.to_u16())) as u32
    }

    /// Takes a free local port for a new FullNAT connection to `dest` and
    /// returns its entry, which holds `control` (the connection's
    /// template, if any). `None` if every port tried is taken (counted and
    /// logged) or memory is short.
    pub(crate) fn alloc_port<'g>(
        &'g self,
        g: &'g ReadGuard,
        req: &PortRequest<'_>,
        dest: &Arc<Dest>,
        control: Option<ControlRef>,
    ) -> Option<&'g ConnEntry> {
        let t = req.tuple;
        let (min, max) = req.range;
        let mut control = control;
        for lport in port_candidates(min, max, random::u32(), PORT_TRIES) {
            let h = self.port_hash(t.af, t.protocol, &req.laddr, lport);
            let guard = self.ports.lock(g, h);
            let taken = self.ports.iter(g, h).any(|e| {
                e.tuple
                    .is_port(t.af, t.protocol, &req.laddr, lport, &t.daddr, t.dport)
            });
            if taken {
                continue;
            }
            let port = Tuple {
                af: t.af,
                protocol: t.protocol,
                caddr: req.laddr,
                cport: lport,
                vaddr: t.caddr,
                vport: t.cport,
                daddr: t.daddr,
                dport: t.dport,
            };
            let expires = jiffies().wrapping_add(secs_to_jiffies(PORT_ENTRY_SECS));
            let fresh = Conn::fresh(
                port,
                FwdMethod::FullNat,
                dest.clone(),
                false,
                expires,
                control.take(),
            );
            // Counted: the connection will hold a reference.
            let entry = NewEntry::new(fresh, true)?;
            self.ports_count.fetch_add(1, Ordering::Relaxed);
            return Some(guard.push_front(entry));
        }
        self.no_port(req);
        None
    }

    /// Counts a connection refused for want of a port, and says so in the
    /// kernel log at most once a minute per table.
    fn no_port(&self, req: &PortRequest<'_>) {
        let n = self.no_port.fetch_add(1, Ordering::Relaxed) + 1;
        let now = jiffies();
        let last = self.last_no_port_log.load(Ordering::Relaxed);
        let due = last == 0 || now.wrapping_sub(last) >= secs_to_jiffies(60);
        if due
            && self
                .last_no_port_log
                .compare_exchange(last, now.max(1), Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
        {
            pr_warn!(
                "{}: no free local port in {}..{} toward a real server: new connection dropped ({} so far)\n",
                if req.fwd == FwdMethod::Enat { "ENAT" } else { "FullNAT" },
                req.range.0,
                req.range.1,
                n
            );
        }
    }

    /// Takes port entry `port` (found or made in the caller's read
    /// section) out of the port table: its port is free from now on, its
    /// memory goes with the last holder. Called when its connection leaves
    /// the table, or was never inserted.
    pub(crate) fn release_port(&self, port: &ConnEntry) {
        let g = ReadGuard::new();
        let guard = self.ports.lock(&g, port.hash());
        // The holder's reference keeps `port` from being freed and its
        // memory reused, so an address match is that entry.
        guard.unlink_where(
            |e| ptr::eq(e, port),
            |e| {
                self.ports_count.fetch_sub(1, Ordering::Relaxed);
                // The template it held for its connection.
                drop(e.control.take());
            },
        );
    }

    /// The FullNAT connection a reply from real server `raddr:rport` to
    /// local `laddr:lport` belongs to.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn lookup_fullnat<'g>(
        &'g self,
        g: &'g ReadGuard,
        af: AddrFamily,
        protocol: u8,
        laddr: &[u8; 16],
        lport: u16,
        raddr: &[u8; 16],
        rport: u16,
    ) -> Option<&'g ConnEntry> {
        if self.ports_count.load(Ordering::Relaxed) == 0
            || !self.may_be_nat_reply(protocol, raddr, rport)
        {
            return None;
        }
        let h = self.port_hash(af, protocol, laddr, lport);
        let port = self
            .ports
            .iter(g, h)
            .find(|e| e.tuple.is_port(af, protocol, laddr, lport, raddr, rport))?;
        let (caddr, cport) = (port.tuple.vaddr, port.tuple.vport);
        self.lookup_holder(g, af, protocol, &caddr, cport, port)
    }

    /// The local address and port of FullNAT or ENAT connection `c`.
    pub(crate) fn local_end(g: &ReadGuard, c: &Conn) -> Option<([u8; 16], u16)> {
        if !c.fwd.has_local_port() || c.template {
            return None;
        }
        c.control.get(g).map(|p| (p.tuple.caddr, p.tuple.cport))
    }

    /// Counts an ENAT client SYN dropped for want of room for its option.
    pub(crate) fn count_enat_no_room(&self) {
        self.enat_no_room.fetch_add(1, Ordering::Relaxed);
    }

    /// Number of ENAT client SYNs dropped for want of room for the option.
    pub(crate) fn enat_no_room_count(&self) -> u64 {
        self.enat_no_room.load(Ordering::Relaxed)
    }

    /// Number of FullNAT connections refused for want of a free port.
    pub(crate) fn no_port_count(&self) -> u64 {
        self.no_port.load(Ordering::Relaxed)
    }
}
