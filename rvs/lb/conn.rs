// SPDX-License-Identifier: GPL-2.0

//! One connection entry of a namespace's table: its addresses, state,
//! expiry and the counters it holds on its real server, and the slab cache
//! entries come from.
//!
//! C counterpart: net/netfilter/ipvs/ip_vs_conn.c.
//!
//! Entries carry an expiry time instead of a timer: lookups ignore expired
//! entries, and the collector (`lb::conn_collect`) unlinks them. A
//! persistence template that controls live connections outlives its
//! expiry (see [`ControlRef`]). The table itself is `lb::conn_table`.

#![forbid(unsafe_code)]

use crate::lb::dest::Dest;
use crate::rvs_core::config::{AddrFamily, FwdMethod};
use crate::rvs_core::defense;
use crate::rvs_core::expiry::{self, expired};
use crate::rvs_core::packet::{IPPROTO_SCTP, IPPROTO_TCP, IPPROTO_UDP};
use crate::rvs_core::proto::{ConnState, Counted, Counters};
use crate::rvs_core::proto::{Dir, L4Event, TcpState, Timeouts};
use crate::rvs_core::tcp_reset::{self, SegSeq};
use crate::sys::chain::{ChainItem, Entry, EntryRef, RefSlot};
use crate::sys::slab::{CacheOwner, CacheSlot};
use crate::sys::time::{hz, jiffies, secs_to_jiffies};
use core::sync::atomic::{AtomicU32, AtomicU64, AtomicU8, Ordering};
use kernel::prelude::*;
use kernel::sync::Arc;

/// The addresses of one connection, as seen by the director.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct Tuple {
    /// Family of the client and virtual addresses (the service's). The
    /// real server's may differ when tunnelled (see `Dest::af`).
    pub(crate) af: AddrFamily,
    /// IPPROTO_TCP, IPPROTO_UDP or IPPROTO_SCTP (templates: 0 or the
    /// service's).
    pub(crate) protocol: u8,
    /// Client address and port.
    pub(crate) caddr: [u8; 16],
    /// Client port, host order.
    pub(crate) cport: u16,
    /// Virtual address and port.
    pub(crate) vaddr: [u8; 16],
    /// Virtual port, host order.
    pub(crate) vport: u16,
    /// Real server address.
    pub(crate) daddr: [u8; 16],
    /// Real server port, host order.
    pub(crate) dport: u16,
}

impl Tuple {
    /// Whether this is the connection of a request from `caddr:cport` to
    /// `vaddr:vport` over `protocol` in family `af` (the client-side half of
    /// the tuple).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn same_request(
        &self,
        af: AddrFamily,
        protocol: u8,
        caddr: &[u8; 16],
        cport: u16,
        vaddr: &[u8; 16],
        vport: u16,
    ) -> bool {
        self.protocol == protocol
            && self.af == af
            && self.cport == cport
            && self.vport == vport
            && self.caddr == *caddr
            && self.vaddr == *vaddr
    }
}

/// One connection through the director, in an [`Entry`] of the table
/// (which adds the chain link, the RCU head, the reference count that
/// templates use and the bucket).
///
/// The entry packs into 128 bytes (see [`ENTRY_SIZE`]).
pub(crate) struct Conn {
    /// The real server; kept alive by this reference after deletion.
    pub(crate) dest: Arc<Dest>,
    pub(super) expires: AtomicU64,
    /// The connection's addresses.
    pub(crate) tuple: Tuple,
    /// TCP state, and which of its server's counters it is counted in.
    pub(super) state: ConnState,
    /// How its packets reach the real server.
    pub(crate) fwd: FwdMethod,
    /// A persistence template (`-p`): binds a client (masked by `-M`) to
    /// a real server; carries no traffic and counts as a persistent
    /// connection, not an active or inactive one.
    pub(crate) template: bool,
    /// Packets seen from the client; past 255 it goes back to 6 (see
    /// `Conn::update`).
    pub(super) in_pkts: AtomicU8,
    /// Jiffies (low 32 bits) of the client's last packet.
    pub(super) last_in: AtomicU32,
    /// TCP: the sequence number the real server expects next (0: not
    /// seen yet), for a reset that ends the connection (`rvs_core::tcp_reset`).
    pub(super) server_next: AtomicU32,
    /// TCP: the sequence number the client expects next (0: not seen).
    pub(super) client_next: AtomicU32,
    /// Connections: the entry this one holds (none if none), kept while
    /// this connection is (see [`ControlRef`]): the template that controls
    /// it, or for a FullNAT connection its local port's entry in the port
    /// table (`lb::fullnat`), which holds the template in its place.
    /// Templates and port entries are counted by their chain
    /// (`Entry::refs`: 1 while in the table plus 1 per holder; a
    /// template's holders are IPVS's `n_control`; the last one dropped
    /// frees it); connections are not.
    pub(super) control: RefSlot<Conn>,
}

/// A connection in the table (or built on the stack, `Conn::one_packet`).
pub(crate) type ConnEntry = Entry<Conn>;

/// The slab cache of connection entries, `rvs_conn` in /proc/slabinfo
/// (IPVS has `ip_vs_conn`): entries are packed at their own size instead of
/// a kmalloc size class, and their memory is visible per cache.
static CONN_CACHE: CacheSlot<ConnEntry> = CacheSlot::new();

impl ChainItem for Conn {
    fn cache() -> &'static CacheSlot<ConnEntry> {
        &CONN_CACHE
    }
}

/// Size of one entry in bytes (memory accounting).
pub(crate) const ENTRY_SIZE: usize = core::mem::size_of::<ConnEntry>();
// Entries are packed in the rvs_conn cache; keep them within 128 bytes.
const _: () = assert!(ENTRY_SIZE <= 128);

/// The flood-related settings an insert and the collector obey.
#[derive(Clone, Copy)]
pub(crate) struct Limits {
    /// Most entries the table may hold (`conn_max`).
    pub(crate) max: u32,
    /// `drop_entry`: percent of `max` above which embryonic entries are
    /// evicted; 0 = off.
    pub(crate) drop_entry: u32,
    /// `secure_tcp`: lifetime in seconds of embryonic TCP entries; 0 = off.
    pub(crate) secure_tcp: u32,
}

impl Conn {
    /// A connection entry that is never put in the table, for one-packet
    /// scheduling (`-o`): it carries one datagram to `dest` and is dropped
    /// with it, like IPVS's unhashed `IP_VS_CONN_F_ONE_PACKET` entries but
    /// without allocating. It is not counted at the server (it is neither
    /// active nor inactive once the datagram is gone).
    pub(crate) fn one_packet(tuple: Tuple, fwd: FwdMethod, dest: Arc<Dest>) -> ConnEntry {
        let c = Conn::fresh(tuple, fwd, dest, false, jiffies(), None);
        // Its one datagram came from the client.
        c.in_pkts.store(1, Ordering::Relaxed);
        Entry::unhashed(c)
    }

    /// A new entry in state NONE, expiring at `expires` (jiffies),
    /// controlled by the template `control` (the entry takes over the
    /// reference).
    pub(super) fn fresh(
        tuple: Tuple,
        fwd: FwdMethod,
        dest: Arc<Dest>,
        template: bool,
        expires: u64,
        control: Option<ControlRef>,
    ) -> Conn {
        Conn {
            tuple,
            fwd,
            dest,
            // Templates (protocol 0 or the service's) track nothing.
            state: if tuple.protocol == IPPROTO_SCTP && !template {
                ConnState::new_sctp()
            } else {
                ConnState::new()
            },
            expires: AtomicU64::new(expires),
            last_in: AtomicU32::new(jiffies() as u32),
            template,
            in_pkts: AtomicU8::new(0),
            server_next: AtomicU32::new(0),
            client_next: AtomicU32::new(0),
            control: RefSlot::new(control.map(|r| r.0)),
        }
    }

    /// The TCP state (UDP and SCTP entries stay `None`; listings name
    /// them by [`Conn::state_name`]).
    pub(crate) fn state(&self) -> TcpState {
        self.state.get().unwrap_or(TcpState::None)
    }

    /// The state as IPVS names it in listings and `/proc/net/ip_vs_conn`
    /// (`ip_vs_state_name`): a template's, UDP's one state, SCTP's or
    /// TCP's.
    pub(crate) fn state_name(&self) -> &'static str {
        if self.template {
            "ASSURED"
        } else if self.tuple.protocol == IPPROTO_UDP {
            "UDP"
        } else if let Some(s) = self.state.get_sctp() {
            s.name()
        } else {
            self.state().name()
        }
    }

    /// Advances the state machine for a packet in direction `dir` and
    /// refreshes the expiry, keeping the server's active/inactive counts in
    /// step. Lock-free: concurrent packets of one connection and the
    /// collector race on one atomic state word (`ConnState`), which
    /// decides who moves the counters.
    /// `secure_tcp` (seconds, 0 = off) caps embryonic TCP entries and stops
    /// the server's packets from extending them. Returns the new expiry if
    /// it moved earlier (see [`ConnTable::update`]).
    pub(super) fn update(
        &self,
        dir: Dir,
        l4: L4Event,
        timeouts: &Timeouts,
        secure_tcp: u32,
    ) -> Option<u64> {
        if dir != Dir::Output {
            self.last_in.store(jiffies() as u32, Ordering::Relaxed);
            // Racy by design: only "one packet or more" matters, and the
            // count modulo the sync period (`lb::sync::master`): past 255
            // it goes back to 6, which keeps its residue modulo 50 (and
            // any period dividing 250).
            let n = self.in_pkts.load(Ordering::Relaxed);
            self.in_pkts
                .store(n.checked_add(1).unwrap_or(6), Ordering::Relaxed);
        }
        // `None` from an advance: the collector removed the entry
        // meanwhile (and counted it out); nothing to refresh.
        let timeout = match l4 {
            L4Event::Udp => timeouts.udp,
            L4Event::Tcp(f) => {
                let new = self.state.advance(dir, f, &self.counters())?;
                if !defense::refreshes(dir, new, secure_tcp) {
                    return None;
                }
                defense::tcp_timeout(timeouts, new, secure_tcp)
            }
            L4Event::Sctp(ev) => self
                .state
                .advance_sctp(dir, ev, &self.counters())?
                .timeout_secs(),
        };
        self.set_expires(jiffies().wrapping_add(secs_to_jiffies(timeout)))
    }

    /// Learns what each end expects next from a TCP segment travelling in
    /// direction `dir`: its end is what its receiver expects, its
    /// acknowledgement what its sender expects. Relaxed and racy: two CPUs
    /// may store out of order, which a later segment corrects; a reset
    /// that misses the exact number draws a challenge ACK (see
    /// `rvs_core::tcp_reset`).
    pub(super) fn note_seq(&self, dir: Dir, s: SegSeq) {
        let (to, from) = match dir {
            Dir::Output => (&self.client_next, &self.server_next),
            _ => (&self.server_next, &self.client_next),
        };
        let keep = |a: &AtomicU32, v: u32| {
            let kept = a.load(Ordering::Relaxed);
            let new = tcp_reset::advance(kept, v);
            if new != kept {
                a.store(new, Ordering::Relaxed);
            }
        };
        keep(to, s.end);
        if let Some(ack) = s.ack {
            keep(from, ack);
        }
    }

    /// The sequence numbers (server's, client's) a reset toward each end
    /// carries; `None` before any segment taught them.
    pub(crate) fn reset_seqs(&self) -> Option<(u32, u32)> {
        let s = self.server_next.load(Ordering::Relaxed);
        let c = self.client_next.load(Ordering::Relaxed);
        (s != 0 || c != 0).then_some((s, c))
    }

    /// Packets seen from the client (wrapping from 255 to 6).
    pub(crate) fn in_pkts(&self) -> u8 {
        self.in_pkts.load(Ordering::Relaxed)
    }

    /// The state as IPVS numbers it in sync messages: TCP's or SCTP's
    /// (`IP_VS_TCP_S_*`, `IP_VS_SCTP_S_*`), 0 for UDP and templates.
    pub(crate) fn sync_state(&self) -> u16 {
        if self.template {
            0
        } else if let Some(s) = self.state.get_sctp() {
            s.to_u16()
        } else {
            self.state().to_u16()
        }
    }

    /// Whether its server counts it as active (IPVS: no INACTIVE flag).
    pub(crate) fn is_active(&self) -> bool {
        self.state.counted() == Some(Counted::Active)
    }

    /// Its expiry, in jiffies.
    pub(crate) fn expires_at(&self) -> u64 {
        self.expires.load(Ordering::Relaxed)
    }

    /// Moves the entry to the state a sync record gives (`state`, IPVS's
    /// number for its protocol), counting it at its server accordingly;
    /// `false` for a number the protocol does not have.
    pub(super) fn set_synced_state(&self, state: u16) -> bool {
        if self.template || self.tuple.protocol == IPPROTO_UDP {
            return true;
        }
        let counters = self.counters();
        if self.tuple.protocol == IPPROTO_SCTP {
            match crate::rvs_core::sctp::SctpState::from_u16(state) {
                Some(s) => {
                    self.state.set_sctp(s, &counters);
                    true
                }
                None => false,
            }
        } else {
            match TcpState::from_u16(state) {
                Some(s) => {
                    self.state.set(s, &counters);
                    true
                }
                None => false,
            }
        }
    }

    /// Sets how many client packets it has seen (a synced entry starts at
    /// the sync threshold, so that it is sent at once if this director
    /// becomes master).
    pub(super) fn set_in_pkts(&self, n: u8) {
        self.in_pkts.store(n, Ordering::Relaxed);
    }

    /// Sets the expiry; returns it if it moved earlier. Racing writers may
    /// both see the older value: the collector's hint then errs early,
    /// which costs a look, never a late collection.
    pub(super) fn set_expires(&self, t: u64) -> Option<u64> {
        let old = self.expires.load(Ordering::Relaxed);
        // Many packets of a flow come within one jiffy: the same expiry
        // again neither dirties the entry's line nor moves the collector's
        // hint (which only an earlier expiry does).
        if t == old {
            return None;
        }
        self.expires.store(t, Ordering::Relaxed);
        expired(t, old).then_some(t)
    }

    /// Its server's counters, as its state moves it between them
    /// (templates: the persistent count).
    pub(super) fn counters(&self) -> ServerCounts<'_> {
        ServerCounts {
            dest: &self.dest,
            template: self.template,
        }
    }

    /// Pushes the expiry `secs` into the future (templates).
    pub(super) fn touch(&self, secs: u32) -> Option<u64> {
        self.set_expires(jiffies().wrapping_add(secs_to_jiffies(secs)))
    }

    /// Makes the entry expire now (lookups skip it at once).
    pub(super) fn expire_now(&self) -> Option<u64> {
        self.set_expires(jiffies().wrapping_sub(1))
    }

    /// Milliseconds until expiry (listing).
    pub(crate) fn expires_ms(&self) -> u32 {
        let t = self.expires.load(Ordering::Relaxed);
        let now = jiffies();
        if expired(t, now) {
            return 0;
        }
        let ms = t.wrapping_sub(now).saturating_mul(1000) / hz().max(1);
        u32::try_from(ms).unwrap_or(u32::MAX)
    }

    pub(super) fn is_expired(&self, now: u64) -> bool {
        expired(self.expires.load(Ordering::Relaxed), now)
    }

    /// Whether nothing proves a real client is behind this entry yet (see
    /// `rvs_core::defense`). Templates never are.
    pub(super) fn is_embryonic(&self) -> bool {
        !self.template
            && defense::is_embryonic(
                self.tuple.protocol == IPPROTO_TCP,
                self.state(),
                self.in_pkts.load(Ordering::Relaxed),
            )
    }

    /// Jiffies since the client's last packet.
    pub(super) fn idle(&self, now: u64) -> u32 {
        expiry::since32(now, self.last_in.load(Ordering::Relaxed))
    }
}

impl ConnEntry {
    /// Whether a template controls live connections (and so lives on
    /// past its expiry, as IPVS's `ip_vs_conn_expire` keeps it).
    pub(super) fn controls(&self) -> bool {
        self.template && self.refs() > 1
    }

    /// Whether lookups and listings see the entry.
    pub(super) fn is_live(&self, now: u64) -> bool {
        !self.is_expired(now) || self.controls()
    }
}

/// A server's counters for one entry (see [`Conn::counters`]).
pub(super) struct ServerCounts<'a> {
    dest: &'a Dest,
    template: bool,
}

impl Counters for ServerCounts<'_> {
    fn counter(&self, c: Counted) -> &AtomicU32 {
        match (self.template, c) {
            (true, _) => &self.dest.persist_conns,
            (false, Counted::Active) => &self.dest.active_conns,
            (false, Counted::Inactive) => &self.dest.inactive_conns,
        }
    }
}

/// A reference to a persistence template held for a connection it is to
/// control: the template stays in the table while that connection is
/// (IPVS's `ip_vs_control_add`). A connection inserted with it keeps it
/// until it is removed itself; dropped unused, it is given back.
pub(crate) struct ControlRef(EntryRef<Conn>);

impl ControlRef {
    /// A reference to template `t` (found by a lookup in the caller's
    /// read section); `None` if the collector is removing it already.
    pub(crate) fn new(t: &ConnEntry) -> Option<Self> {
        if !t.template {
            return None;
        }
        EntryRef::new(t).map(Self)
    }

    /// A reference to the FullNAT port entry `p` (just made by
    /// `ConnTable::alloc_port`), for its connection to hold.
    pub(super) fn port(p: &ConnEntry) -> Option<Self> {
        EntryRef::new(p).map(Self)
    }
}

pub(super) fn dec_saturating(a: &AtomicU32) {
    let _ = a.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |v| v.checked_sub(1));
}

/// Owner of the connection cache: created at module load before any
/// namespace, destroyed at unload after the RCU barrier (every entry freed).
pub(crate) struct ConnCache(#[allow(dead_code)] CacheOwner<ConnEntry>);

impl ConnCache {
    /// Creates the cache.
    pub(crate) fn create() -> Result<Self> {
        CONN_CACHE.create(c"rvs_conn").map(Self)
    }
}
