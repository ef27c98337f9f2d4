// SPDX-License-Identifier: GPL-2.0

//! The connection table of one namespace.
//!
//! C counterpart: net/netfilter/ipvs/ip_vs_conn.c.
//!
//! An array of buckets, each a singly linked list published with release
//! stores, so lookups walk it under RCU without a lock (`sys::chain`).
//! Inserts and unlinks take one of [`LOCK_STRIPES`] spinlocks (by the low
//! bits of the entry's hash), never a table-wide lock. The array resizes
//! with the number of entries (`rvs_core::table_size`), between 2^8
//! buckets and the `conn_tab_bits` ceiling, while packets go on: the
//! collector's work moves the entries chain by chain (see
//! [`ConnTable::resize_if_due`]). Buckets are chosen by SipHash of
//! the client's (protocol, address, port) under a per-namespace random key,
//! so a remote client cannot aim many connections at one chain; both
//! directions of a connection hash the same way (the client is the source
//! of requests and the destination of replies), so one entry serves both.
//!
//! Expired entries are unlinked by the collector (`lb::conn_collect`) and
//! freed after an RCU grace period.
//!
//! The table holds at most `conn_max` entries (a per-namespace setting): a
//! slot is reserved before an entry is built, so the limit is exact. Flood
//! defences (`drop_entry`, `secure_tcp`; see `rvs_core::defense`) evict or
//! shorten *embryonic* entries, those no real client has confirmed yet.

#![forbid(unsafe_code)]

use crate::lb::conn::{dec_saturating, Conn, ConnEntry, ControlRef, Limits, Tuple, ENTRY_SIZE};
use crate::lb::dest::Dest;
use crate::rvs_core::config::{AddrFamily, FwdMethod};
use crate::rvs_core::defense;
use crate::rvs_core::expiry::{self, before32};
use crate::rvs_core::hash::{self, nat_source_slot, SipKey, NAT_SOURCE_SLOTS};
use crate::rvs_core::proto::{Dir, L4Event, Timeouts};
use crate::rvs_core::table_size;
use crate::sys::chain::{ChainTable, Exclusive, NewEntry, GROUP_SHIFT};
use crate::sys::random;
use crate::sys::rcu::ReadGuard;
use crate::sys::sched as ksched;
use crate::sys::time::{hz, jiffies, secs_to_jiffies};
use core::ptr;
use core::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use kernel::prelude::*;
use kernel::sync::{new_spinlock, Arc};

/// Number of bucket lock stripes (at most the smallest table's buckets).
pub(crate) const LOCK_STRIPES: usize = 64;

/// Buckets swept per read section by whole-table sweeps, which yield the
/// CPU between groups.
const SWEEP_SLOTS_PER_PASS: usize = 256;

/// The collector looks at every bucket at least this often (seconds).
pub(super) const HINT_MAX_SECS: u32 = 60;

/// The table.
pub(crate) struct ConnTable {
    /// The entries. Its marks are the collector's hints: per group of
    /// `1 << GROUP_SHIFT` buckets, jiffies (low 32 bits) by which the
    /// collector must look at the group again: no entry in it expires
    /// earlier. Lowered by whoever moves an expiry earlier; set by the
    /// collector after a look, never further than `HINT_MAX_SECS`; all due
    /// at once after a resize.
    pub(super) chains: ChainTable<Conn>,
    /// log2 of the most buckets the table may grow to (`conn_tab_bits`).
    pub(super) max_bits: u32,
    /// Entries above which the table should grow now (`u32::MAX` at the
    /// ceiling): the packet path asks for an early resize past it.
    grow_at: AtomicU32,
    /// An early resize was asked for and has not run yet.
    resize_asked: AtomicBool,
    /// A connection of a client on the director was made (sticky): only
    /// then can a NAT reply reach LOCAL_IN.
    local_clients: AtomicBool,
    pub(super) key: SipKey,
    pub(super) count: AtomicU32,
    /// New connections refused because the table was full or memory short.
    pub(super) refused: AtomicU64,
    /// Embryonic entries evicted by `drop_entry`.
    pub(super) evicted: AtomicU64,
    /// Connections ended by flushes and drains (`lb::conn_flush`).
    pub(super) flushed: AtomicU64,
    /// FullNAT's port table (`lb::fullnat`): one entry per local port in
    /// use, hashed by local address and port.
    pub(super) ports: ChainTable<Conn>,
    /// log2 of the most buckets the port table may grow to.
    pub(super) port_max_bits: u32,
    /// Entries in the port table.
    pub(super) ports_count: AtomicU32,
    /// New FullNAT connections refused: no free local port.
    pub(super) no_port: AtomicU64,
    /// Jiffies of the last "no free local port" warning (0 = never).
    pub(super) last_no_port_log: AtomicU64,
    /// ENAT client SYNs dropped: no room in their TCP header for the
    /// option that carries the client's address.
    pub(super) enat_no_room: AtomicU64,
    /// The bucket the next insert-time eviction scan starts at.
    pub(super) evict_cursor: AtomicU32,
    /// Jiffies of the last "table full" warning (0 = never).
    pub(super) last_full_log: AtomicU64,
    /// NAT, FullNAT and ENAT connections in the table, by their real
    /// server end's slot (`rvs_core::hash::nat_source_slot`): a packet
    /// from a slot at zero is no reply of theirs ([`Self::lookup_out`] and
    /// `lookup_fullnat` need no hash, the hooks no full parse).
    nat_sources: [AtomicU32; NAT_SOURCE_SLOTS],
}

impl ConnTable {
    /// A table that starts with `2^table_size::MIN_BITS` buckets and may
    /// grow to `1 << max_bits`.
    pub(crate) fn new(max_bits: u32) -> Result<Self> {
        // Charged to the memory cgroup of whoever adds the namespace's first
        // service: root of a user namespace may do so (GENL_UNS_ADMIN_PERM),
        // and a namespace per container must not be free kernel memory.
        // Arrays grown later are allocated by the collector's worker.
        let bits = table_size::MIN_BITS.min(max_bits);
        // Due at once: the first pass sets real hints.
        let now = jiffies() as u32;
        let chains = ChainTable::new(bits, LOCK_STRIPES, now, || {
            new_spinlock!((), "rvs_conn_bucket")
        })?;
        // FullNAT connections are usually a part of the table: its port
        // table may grow to a sixteenth of the connection table's ceiling.
        let port_max_bits = max_bits.saturating_sub(4).max(table_size::MIN_BITS);
        let ports = ChainTable::new(table_size::MIN_BITS, LOCK_STRIPES, 0, || {
            new_spinlock!((), "rvs_fullnat_port_bucket")
        })?;
        let mut key = [0u8; 16];
        random::fill(&mut key);
        Ok(Self {
            chains,
            max_bits,
            grow_at: AtomicU32::new(table_size::grow_at(bits, max_bits)),
            resize_asked: AtomicBool::new(false),
            local_clients: AtomicBool::new(false),
            ports,
            port_max_bits,
            ports_count: AtomicU32::new(0),
            no_port: AtomicU64::new(0),
            last_no_port_log: AtomicU64::new(0),
            enat_no_room: AtomicU64::new(0),
            key: SipKey::from_bytes(&key),
            count: AtomicU32::new(0),
            refused: AtomicU64::new(0),
            evicted: AtomicU64::new(0),
            flushed: AtomicU64::new(0),
            evict_cursor: AtomicU32::new(0),
            last_full_log: AtomicU64::new(0),
            nat_sources: [const { AtomicU32::new(0) }; NAT_SOURCE_SLOTS],
        })
    }

    /// Whether the packet path should ask for an early resize now: the
    /// table is past its growth point and nobody asked yet. True once per
    /// resize.
    pub(crate) fn wants_resize(&self) -> bool {
        self.count() > self.grow_at.load(Ordering::Relaxed)
            && !self.resize_asked.swap(true, Ordering::Relaxed)
    }

    /// Notes a connection of a client on the director (made at LOCAL_OUT).
    pub(crate) fn note_local_client(&self) {
        if !self.local_clients.load(Ordering::Relaxed) {
            self.local_clients.store(true, Ordering::Release);
        }
    }

    /// Whether a connection of a client on the director was ever made, so
    /// that replies to it may come to LOCAL_IN. A reply cannot overtake
    /// its request, which leaves after [`Self::note_local_client`].
    pub(crate) fn may_have_local_clients(&self) -> bool {
        self.local_clients.load(Ordering::Acquire)
    }

    /// Resizes the connection and port tables if their entry counts left
    /// the load-factor band (`rvs_core::table_size`). Called by the
    /// collector's work (process context, no lock held) before a pass, at
    /// once when the packet path asked ([`Self::wants_resize`]).
    pub(crate) fn resize_if_due(&self) {
        let bits = self.chains.len().trailing_zeros();
        let want = table_size::target_bits(self.count(), bits, self.max_bits);
        if want != bits {
            let t0 = jiffies();
            // No memory for the new array: the old one serves on, and the
            // next pass tries again.
            if let Ok(true) = self.chains.resize(want, t0 as u32) {
                let ms = jiffies().wrapping_sub(t0).saturating_mul(1000) / hz().max(1);
                pr_info!(
                    "connection table resized from {} to {} buckets for {} entries in {} ms\n",
                    1u64 << bits,
                    1u64 << want,
                    self.count(),
                    ms
                );
            }
        }
        let now = self.chains.len().trailing_zeros();
        self.grow_at
            .store(table_size::grow_at(now, self.max_bits), Ordering::Relaxed);
        self.resize_asked.store(false, Ordering::Relaxed);
        let pbits = self.ports.len().trailing_zeros();
        let pwant = table_size::target_bits(
            self.ports_count.load(Ordering::Relaxed),
            pbits,
            self.port_max_bits,
        );
        if pwant != pbits {
            let _ = self.ports.resize(pwant, 0);
        }
    }

    /// Entries in the table now (expired ones not yet collected included).
    pub(crate) fn count(&self) -> u32 {
        self.count.load(Ordering::Relaxed)
    }

    /// New connections refused so far (table full, or no memory).
    pub(crate) fn refused(&self) -> u64 {
        self.refused.load(Ordering::Relaxed)
    }

    /// Embryonic entries evicted by `drop_entry` so far.
    pub(crate) fn evicted(&self) -> u64 {
        self.evicted.load(Ordering::Relaxed)
    }

    /// Connections ended by flushes and drains so far.
    pub(crate) fn flushed(&self) -> u64 {
        self.flushed.load(Ordering::Relaxed)
    }

    /// Bytes held by the table: bucket arrays (with their hints) plus
    /// entries.
    pub(crate) fn memory(&self) -> u64 {
        let hints = |buckets: usize| ((buckets >> GROUP_SHIFT).max(1) * 4) as u64;
        defense::table_bytes(self.chains.len(), self.count(), ENTRY_SIZE)
            + hints(self.chains.len())
            + defense::table_bytes(
                self.ports.len(),
                self.ports_count.load(Ordering::Relaxed),
                ENTRY_SIZE,
            )
            + hints(self.ports.len())
    }

    /// Reserves room for one entry; false when `max` are there already.
    fn reserve(&self, max: u32) -> bool {
        self.count
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |c| {
                (c < max).then_some(c.wrapping_add(1))
            })
            .is_ok()
    }

    fn release(&self) {
        dec_saturating(&self.count);
    }

    /// Counts a refused connection and warns, at most once per
    /// `defense::FULL_LOG_INTERVAL_SECS` per table.
    fn refuse(&self, max: u32) {
        self.refused.fetch_add(1, Ordering::Relaxed);
        let now = jiffies();
        let last = self.last_full_log.load(Ordering::Relaxed);
        let interval = secs_to_jiffies(defense::FULL_LOG_INTERVAL_SECS);
        if defense::may_log(last, now, interval)
            && self
                .last_full_log
                .compare_exchange(last, now.max(1), Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
        {
            pr_warn!(
                "connection table full ({} entries, conn_max {}): new connections dropped ({} so far)\n",
                self.count(),
                max,
                self.refused()
            );
        }
    }

    /// Number of buckets now (reported as the table size, as upstream
    /// IPVS does since its tables resize).
    pub(crate) fn size(&self) -> u32 {
        u32::try_from(self.chains.len()).unwrap_or(u32::MAX)
    }

    /// The hash of a client (its low bits pick the bucket). The family is
    /// added so that an IPv4 client and the IPv6 address with the same
    /// leading bytes do not share chains (they never match: lookups compare
    /// the family too).
    fn hash_of(&self, af: AddrFamily, protocol: u8, caddr: &[u8; 16], cport: u16) -> u32 {
        let h = hash::conn_hash(&self.key, protocol, caddr, cport);
        h.wrapping_add(u64::from(af.to_u16())) as u32
    }

    fn walk<'g>(
        &'g self,
        g: &'g ReadGuard,
        hash: u32,
        mut pred: impl FnMut(&Conn) -> bool,
    ) -> Option<&'g ConnEntry> {
        let now = jiffies();
        self.chains
            .iter(g, hash)
            .find(|c| pred(c) && c.is_live(now))
    }

    /// The connection a request from a client belongs to.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn lookup_in<'g>(
        &'g self,
        g: &'g ReadGuard,
        af: AddrFamily,
        protocol: u8,
        caddr: &[u8; 16],
        cport: u16,
        vaddr: &[u8; 16],
        vport: u16,
    ) -> Option<&'g ConnEntry> {
        let b = self.hash_of(af, protocol, caddr, cport);
        self.walk(g, b, |c| {
            !c.template
                && c.tuple
                    .same_request(af, protocol, caddr, cport, vaddr, vport)
        })
    }

    /// The FullNAT connection of client `caddr:cport` that holds port
    /// entry `port` (`lb::fullnat`).
    pub(super) fn lookup_holder<'g>(
        &'g self,
        g: &'g ReadGuard,
        af: AddrFamily,
        protocol: u8,
        caddr: &[u8; 16],
        cport: u16,
        port: &ConnEntry,
    ) -> Option<&'g ConnEntry> {
        let b = self.hash_of(af, protocol, caddr, cport);
        self.walk(g, b, |c| {
            let t = &c.tuple;
            !c.template
                && c.fwd == FwdMethod::FullNat
                && t.af == af
                && t.protocol == protocol
                && t.cport == cport
                && t.caddr == *caddr
                && c.control.get(g).is_some_and(|p| ptr::eq(p, port))
        })
    }

    /// The persistence template of a (masked) client for a service.
    pub(crate) fn lookup_template<'g>(
        &'g self,
        g: &'g ReadGuard,
        af: AddrFamily,
        protocol: u8,
        caddr: &[u8; 16],
        vaddr: &[u8; 16],
        vport: u16,
    ) -> Option<&'g ConnEntry> {
        let b = self.hash_of(af, protocol, caddr, 0);
        self.walk(g, b, |c| {
            let t = &c.tuple;
            c.template
                && t.af == af
                && t.protocol == protocol
                && t.vport == vport
                && t.caddr == *caddr
                && t.vaddr == *vaddr
        })
    }

    /// Whether a packet of `protocol` from `addr`:`port` may be a reply of
    /// a NAT, FullNAT or ENAT connection: `false` when no such
    /// connection's real-server end shares its slot of the reply-source
    /// filter. Most packets a director forwards, and every request to a
    /// VIP, are from no such end. A connection's count is raised when
    /// it is inserted, before the request that draws a reply is sent: the
    /// reply, caused by that request, finds it raised (as it finds the
    /// entry itself).
    pub(crate) fn may_be_nat_reply(&self, protocol: u8, addr: &[u8; 16], port: u16) -> bool {
        self.nat_sources
            .get(nat_source_slot(protocol, addr, port))
            .is_some_and(|n| n.load(Ordering::Relaxed) != 0)
    }

    /// The NAT connection a reply from a real server belongs to (only NAT
    /// connections see replies at the director's hooks).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn lookup_out<'g>(
        &'g self,
        g: &'g ReadGuard,
        af: AddrFamily,
        protocol: u8,
        daddr: &[u8; 16],
        dport: u16,
        caddr: &[u8; 16],
        cport: u16,
    ) -> Option<&'g ConnEntry> {
        if !self.may_be_nat_reply(protocol, daddr, dport) {
            return None;
        }
        let b = self.hash_of(af, protocol, caddr, cport);
        self.walk(g, b, |c| {
            let t = &c.tuple;
            !c.template
                && c.fwd == FwdMethod::Masq
                && t.af == af
                && t.protocol == protocol
                && t.cport == cport
                && t.dport == dport
                && t.caddr == *caddr
                && t.daddr == *daddr
        })
    }

    /// Inserts a new connection to `dest`, or returns the one another CPU
    /// inserted for the same request first. `None` when the table is full
    /// or memory is short (the packet is then dropped and counted). With
    /// `drop_entry` on, a full table first evicts an embryonic entry (see
    /// [`Self::evict_one`]). `template`: a persistence template living
    /// `expire_secs`.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn insert<'g>(
        &'g self,
        g: &'g ReadGuard,
        tuple: Tuple,
        fwd: FwdMethod,
        dest: Arc<Dest>,
        template: bool,
        expire_secs: u32,
        limits: Limits,
        control: Option<ControlRef>,
    ) -> Option<&'g ConnEntry> {
        let hash = self.hash_of(tuple.af, tuple.protocol, &tuple.caddr, tuple.cport);
        // Full, drop_entry on: make room by evicting an embryonic entry
        // (before taking this bucket's lock: the scan takes others).
        let reserved = self.reserve(limits.max)
            || (limits.drop_entry != 0 && self.evict_one(g) && self.reserve(limits.max));
        if !reserved {
            self.refuse(limits.max);
            return None;
        }
        let fresh = Conn::fresh(
            tuple,
            fwd,
            dest,
            template,
            jiffies().wrapping_add(secs_to_jiffies(expire_secs)),
            control,
        );
        // Templates are counted: the table holds one reference to them.
        let Some(conn) = NewEntry::new(fresh, template) else {
            self.release();
            self.refuse(limits.max);
            return None;
        };
        let guard = self.chains.lock(g, hash);
        let t = &tuple;
        if let Some(existing) = self.walk(g, hash, |c| {
            c.template == template
                && c.tuple
                    .same_request(t.af, t.protocol, &t.caddr, t.cport, &t.vaddr, t.vport)
        }) {
            self.release();
            return Some(existing);
        }
        // A new connection starts inactive (state NONE). It owns the
        // reference to its template (dropped with it if it goes unused).
        conn.state.count_in(&conn.counters());
        conn.dest.refresh_overload();
        // Before the request that may draw a reply is sent.
        if let Some(n) = self.nat_source_of(&conn) {
            n.fetch_add(1, Ordering::Relaxed);
        }
        let expires = conn.expires.load(Ordering::Relaxed);
        // Published with a release store: readers see a fully built entry.
        let e = guard.push_front(conn);
        drop(guard);
        self.lower_hint(g, hash, expires);
        Some(e)
    }

    /// Unlinks and frees (after a grace period) every entry of the chain
    /// at `slot` (see [`ChainTable::slots`]) for which `doomed` holds.
    /// Returns how many went.
    pub(super) fn sweep_slot(
        &self,
        g: &ReadGuard,
        slot: usize,
        doomed: impl FnMut(&ConnEntry) -> bool,
    ) -> u32 {
        // Most buckets are empty: skip them without a lock round trip (an
        // entry inserted concurrently was not there when the sweep began).
        if self.chains.looks_empty(g, slot) != Some(false) {
            return 0;
        }
        let Some(guard) = self.chains.lock_slot(g, slot) else {
            return 0;
        };
        guard.unlink_where(doomed, |c| self.retire(c))
    }

    /// Evicts the embryonic entry idle longest among those a bounded scan
    /// looks at (`defense::pick_victim`: at most `EVICT_SCAN_BUCKETS`
    /// buckets from the table's eviction cursor, at most
    /// `EVICT_SCAN_ENTRIES` entries). Takes each non-empty chain's stripe
    /// lock in turn, one at a time; the caller holds none. Returns whether
    /// one went.
    fn evict_one(&self, g: &ReadGuard) -> bool {
        let now = jiffies();
        let start = self.evict_cursor.load(Ordering::Relaxed) as usize;
        let pick = defense::pick_victim(start, self.chains.slots(g), |b| {
            // Empty buckets cost a load, no lock round trip.
            if self.chains.looks_empty(g, b)? {
                return None;
            }
            // The chain's stripe lock is held while the iterator lives.
            let guard = self.chains.lock_slot(g, b)?;
            Some(guard.into_iter().map(move |c| {
                let seen = defense::EvictSeen {
                    embryonic: c.is_embryonic(),
                    idle: c.idle(now),
                };
                ((ptr::from_ref(c), c.hash()), seen)
            }))
        });
        // Racing inserts may store older cursors: that only repeats a look.
        self.evict_cursor
            .store(u32::try_from(pick.next).unwrap_or(0), Ordering::Relaxed);
        let Some((_, (vp, hash))) = pick.victim else {
            return false;
        };
        // The caller's read section (`g`) keeps a victim unlinked meanwhile
        // from being freed and reused, so an address match is that entry
        // (wherever a resize moved it); it must still be embryonic.
        let guard = self.chains.lock(g, hash);
        let gone = guard.unlink_where(|c| ptr::eq(c, vp) && c.is_embryonic(), |c| self.retire(c));
        self.evicted.fetch_add(u64::from(gone), Ordering::Relaxed);
        gone > 0
    }

    /// The bookkeeping of an entry just unlinked (by a sweep, an eviction
    /// or a removal); its memory goes after a grace period.
    fn retire(&self, c: &ConnEntry) {
        // Counted out exactly once, whatever packets do meanwhile.
        c.state.retire(&c.counters());
        c.dest.refresh_overload();
        self.count.fetch_sub(1, Ordering::Relaxed);
        if let Some(n) = self.nat_source_of(c) {
            n.fetch_sub(1, Ordering::Relaxed);
        }
        // A connection gives back its template's reference (templates
        // hold none). A template's own memory, or the table's reference
        // to it (the collector may have claimed it already, see
        // `collect`), goes once this returns: controlled connections may
        // keep it a while. A FullNAT or ENAT connection's port is free again.
        let held = c.control.take();
        if let Some(port) = held.as_deref() {
            if c.fwd.has_local_port() && !c.template {
                self.release_port(port);
            }
        }
        drop(held);
    }

    /// The reply-source count a NAT connection is in (`None` for other
    /// methods and templates).
    fn nat_source_of(&self, c: &Conn) -> Option<&AtomicU32> {
        if c.template || !(c.fwd == FwdMethod::Masq || c.fwd.has_local_port()) {
            return None;
        }
        let t = &c.tuple;
        self.nat_sources
            .get(nat_source_slot(t.protocol, &t.daddr, t.dport))
    }

    /// Lowers the collector's hint for `hash`'s group to `t` (jiffies) if
    /// that is earlier (in both arrays while a resize runs). Lock-free;
    /// pairs with the Acquire load in `collect`, so the collector then
    /// sees the expiry that was stored before.
    fn lower_hint(&self, g: &ReadGuard, hash: u32, t: u64) {
        let t = t as u32;
        self.chains.for_each_mark(g, hash, |h| {
            let mut cur = h.load(Ordering::Relaxed);
            while before32(t, cur) {
                match h.compare_exchange_weak(cur, t, Ordering::Release, Ordering::Relaxed) {
                    Ok(_) => break,
                    Err(seen) => cur = seen,
                }
            }
        });
    }

    /// [`Self::lower_hint`] from a caller without a read section at hand
    /// (rare: only when an expiry moves earlier).
    fn lower_hint_of(&self, conn: &ConnEntry, t: u64) {
        let g = ReadGuard::new();
        self.lower_hint(&g, conn.hash(), t);
    }

    /// Advances `conn`'s state for a packet and refreshes its expiry (see
    /// [`Conn::update`]), keeping the collector's hint right.
    pub(crate) fn update(
        &self,
        conn: &ConnEntry,
        dir: Dir,
        l4: L4Event,
        timeouts: &Timeouts,
        secure_tcp: u32,
    ) {
        if let Some(t) = conn.update(dir, l4, timeouts, secure_tcp) {
            self.lower_hint_of(conn, t);
        }
    }

    /// Pushes a template's expiry `secs` into the future.
    pub(crate) fn touch(&self, conn: &ConnEntry, secs: u32) {
        if let Some(t) = conn.touch(secs) {
            self.lower_hint_of(conn, t);
        }
    }

    /// Takes `conn` (found in the caller's read section `g`) out of the
    /// table now: lookups miss it at once, even a template that controls
    /// connections (IPVS's invalidated template), whose memory stays until
    /// they go.
    pub(crate) fn remove(&self, g: &ReadGuard, conn: &ConnEntry) {
        let guard = self.chains.lock(g, conn.hash());
        // The read section keeps `conn` from being freed and its memory
        // reused, so an address match is that entry.
        guard.unlink_where(|c| ptr::eq(c, conn), |c| self.retire(c));
    }

    /// Makes `conn` expire now: lookups skip it at once, the collector
    /// frees it at its next pass.
    pub(crate) fn expire_now(&self, conn: &ConnEntry) {
        if let Some(t) = conn.expire_now() {
            self.lower_hint_of(conn, t);
        }
    }

    /// Removes every entry (a flush). Flushes of an empty table are
    /// common (every `-C`, and the `-R` of a fresh director): its buckets
    /// need not be looked at then.
    pub(crate) fn clear(&self) {
        if self.count() != 0 {
            self.sweep_all();
        }
    }

    /// Removes every entry, whatever the count says (teardown). No resize
    /// runs meanwhile, so every entry is met.
    fn sweep_all(&self) {
        let _x = self.chains.exclusive();
        let mut first = 0;
        loop {
            let g = ReadGuard::new();
            let n = self.chains.slots(&g);
            if first >= n {
                break;
            }
            let last = n.min(first + SWEEP_SLOTS_PER_PASS);
            for slot in first..last {
                self.sweep_slot(&g, slot, |_| true);
            }
            drop(g);
            ksched::cond_resched();
            first = last;
        }
    }
}

impl ConnTable {
    /// Calls `f` on live entries from position (`bucket`, `index` in its
    /// chain; buckets are [`ChainTable::slots`]) on, until `f` returns
    /// false; returns the position to resume from (resumable dumps).
    /// Chains may change between calls, and a resize may end: a resumed
    /// dump may then skip or repeat entries, never fault.
    pub(crate) fn for_each_from(
        &self,
        g: &ReadGuard,
        bucket: usize,
        index: usize,
        f: impl FnMut(&ConnEntry) -> bool,
    ) -> (usize, usize) {
        let now = jiffies();
        // Each entry with whether lookups see it (live) at `now`.
        expiry::walk_from(
            bucket,
            index,
            |b| {
                self.chains
                    .iter_slot(g, b)
                    .map(|chain| chain.map(move |c| (c, c.is_live(now))))
            },
            f,
        )
    }
}

impl ConnTable {
    /// Keeps resizes out while the returned value lives (a walk that
    /// must meet every entry once, and may sleep).
    pub(crate) fn exclusive(&self) -> Exclusive<'_> {
        self.chains.exclusive()
    }

    /// Positions of [`Self::for_each_in`] now (see [`ChainTable::slots`]).
    pub(crate) fn slots(&self, g: &ReadGuard) -> usize {
        self.chains.slots(g)
    }

    /// Calls `f` on the live entries of the chain at `slot` (a listing of
    /// one chain at a time: `/proc/net/ip_vs_conn`).
    pub(crate) fn for_each_in(&self, g: &ReadGuard, slot: usize, mut f: impl FnMut(&ConnEntry)) {
        let now = jiffies();
        if let Some(chain) = self.chains.iter_slot(g, slot) {
            for c in chain.filter(|c| c.is_live(now)) {
                f(c);
            }
        }
    }
}

impl Drop for ConnTable {
    fn drop(&mut self) {
        self.sweep_all();
    }
}
