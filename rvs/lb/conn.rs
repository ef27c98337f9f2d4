// SPDX-License-Identifier: GPL-2.0

//! The connection table of one namespace.
//!
//! C counterpart: net/netfilter/ipvs/ip_vs_conn.c.
//!
//! A fixed-size array of buckets, each a singly linked list published with
//! release stores, so lookups walk it under RCU without a lock. Inserts and
//! unlinks take one of [`LOCK_STRIPES`] spinlocks (bucket index modulo the
//! stripe count), never a table-wide lock. Buckets are chosen by SipHash of
//! the client's (protocol, address, port) under a per-namespace random key,
//! so a remote client cannot aim many connections at one chain; both
//! directions of a connection hash the same way (the client is the source
//! of requests and the destination of replies), so one entry serves both.
//!
//! Entries carry an expiry time instead of a timer: lookups ignore expired
//! entries and a periodic collector ([`ConnTable::collect`]) unlinks them and
//! frees them after an RCU grace period. A persistence template that
//! controls live connections outlives its expiry (see [`ControlRef`]).
//!
//! The table holds at most `conn_max` entries (a per-namespace setting): a
//! slot is reserved before an entry is built, so the limit is exact. Flood
//! defences (`drop_entry`, `secure_tcp`; see `rvs_core::defense`) evict or
//! shorten *embryonic* entries, those no real client has confirmed yet.

#![forbid(unsafe_code)]

use crate::lb::dest::Dest;
use crate::lb::service::Service;
use crate::rvs_core::config::{AddrFamily, FwdMethod};
use crate::rvs_core::defense;
use crate::rvs_core::expiry::{self, before32, expired, EntryView, Fate, NextLook, Pass};
use crate::rvs_core::hash::{self, SipKey};
use crate::rvs_core::proto::{ConnState, Counted, Counters};
use crate::rvs_core::proto::{Dir, TcpFlags, TcpState, Timeouts};
use crate::sys::chain::{BucketGuard, ChainItem, ChainTable, Entry, EntryRef, NewEntry, RefSlot};
use crate::sys::rcu::ReadGuard;
use crate::sys::slab::{CacheOwner, CacheSlot};
use crate::sys::time::{hz, jiffies, secs_to_jiffies};
use crate::sys::{random, sched as ksched};
use core::ptr;
use core::sync::atomic::{AtomicU32, AtomicU64, AtomicU8, Ordering};
use kernel::prelude::*;
use kernel::sync::{new_spinlock, Arc};

/// Number of bucket lock stripes.
pub(crate) const LOCK_STRIPES: usize = 64;

/// log2 of the buckets per collector hint (see [`ConnTable::collect`]).
const HINT_SHIFT: u32 = 4;
/// A template that expires while it controls connections is looked at
/// again this much later (seconds; IPVS's `ip_vs_conn_expire` re-arms it
/// for 60 s). Lookups see it all along.
const TEMPLATE_REARM_SECS: u32 = 60;
/// The collector looks at every bucket at least this often (seconds).
const HINT_MAX_SECS: u32 = 60;

/// The addresses of one connection, as seen by the director.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct Tuple {
    /// Family of the client and virtual addresses (the service's). The
    /// real server's may differ when tunnelled (see `Dest::af`).
    pub(crate) af: AddrFamily,
    /// IPPROTO_TCP or IPPROTO_UDP.
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
    fn same_request(
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
    /// The service it was scheduled by (for its counters).
    pub(crate) svc: Arc<Service>,
    expires: AtomicU64,
    /// The connection's addresses.
    pub(crate) tuple: Tuple,
    /// TCP state, and which of its server's counters it is counted in.
    state: ConnState,
    /// How its packets reach the real server.
    pub(crate) fwd: FwdMethod,
    /// A persistence template (`-p`): binds a client (masked by `-M`) to
    /// a real server; carries no traffic and counts as a persistent
    /// connection, not an active or inactive one.
    pub(crate) template: bool,
    /// Packets seen from the client, saturating at 255.
    in_pkts: AtomicU8,
    /// Jiffies (low 32 bits) of the client's last packet.
    last_in: AtomicU32,
    /// Connections: the template that controls this one (none if none),
    /// kept in the table while this connection is (see [`ControlRef`]).
    /// Templates are entries counted by the chain (`Entry::refs`: 1 while
    /// in the table plus 1 per connection it controls, IPVS's
    /// `n_control`; the last one dropped frees it); connections are not.
    control: RefSlot<Conn>,
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
    pub(crate) fn one_packet(
        tuple: Tuple,
        fwd: FwdMethod,
        dest: Arc<Dest>,
        svc: Arc<Service>,
    ) -> ConnEntry {
        let c = Conn::fresh(tuple, fwd, dest, svc, false, jiffies(), None);
        // Its one datagram came from the client.
        c.in_pkts.store(1, Ordering::Relaxed);
        Entry::unhashed(c)
    }

    /// A new entry in state NONE, expiring at `expires` (jiffies),
    /// controlled by the template `control` (the entry takes over the
    /// reference).
    fn fresh(
        tuple: Tuple,
        fwd: FwdMethod,
        dest: Arc<Dest>,
        svc: Arc<Service>,
        template: bool,
        expires: u64,
        control: Option<ControlRef>,
    ) -> Conn {
        Conn {
            tuple,
            fwd,
            dest,
            svc,
            state: ConnState::new(),
            expires: AtomicU64::new(expires),
            last_in: AtomicU32::new(jiffies() as u32),
            template,
            in_pkts: AtomicU8::new(0),
            control: RefSlot::new(control.map(|r| r.0)),
        }
    }

    /// The TCP state (UDP entries stay `None`... shown as UDP by listings).
    pub(crate) fn state(&self) -> TcpState {
        self.state.get().unwrap_or(TcpState::None)
    }

    /// Advances the state machine for a packet in direction `dir` and
    /// refreshes the expiry, keeping the server's active/inactive counts in
    /// step. Lock-free: concurrent packets of one connection and the
    /// collector race on one atomic state word (`ConnState`), which
    /// decides who moves the counters.
    /// `secure_tcp` (seconds, 0 = off) caps embryonic TCP entries and stops
    /// the server's packets from extending them. Returns the new expiry if
    /// it moved earlier (see [`ConnTable::update`]).
    fn update(
        &self,
        dir: Dir,
        flags: Option<TcpFlags>,
        timeouts: &Timeouts,
        secure_tcp: u32,
    ) -> Option<u64> {
        if dir != Dir::Output {
            self.last_in.store(jiffies() as u32, Ordering::Relaxed);
            let n = self.in_pkts.load(Ordering::Relaxed);
            if n < u8::MAX {
                // Racy by design: only "one packet or more" matters.
                self.in_pkts.store(n + 1, Ordering::Relaxed);
            }
        }
        let timeout = match flags {
            None => timeouts.udp,
            Some(f) => {
                // `None`: the collector removed it meanwhile (and counted
                // it out); nothing to refresh.
                let new = self.state.advance(dir, f, &self.counters())?;
                if !defense::refreshes(dir, new, secure_tcp) {
                    return None;
                }
                defense::tcp_timeout(timeouts, new, secure_tcp)
            }
        };
        self.set_expires(jiffies().wrapping_add(secs_to_jiffies(timeout)))
    }

    /// Sets the expiry; returns it if it moved earlier. Racing writers may
    /// both see the older value: the collector's hint then errs early,
    /// which costs a look, never a late collection.
    fn set_expires(&self, t: u64) -> Option<u64> {
        let old = self.expires.load(Ordering::Relaxed);
        self.expires.store(t, Ordering::Relaxed);
        expired(t, old).then_some(t)
    }

    /// Its server's counters, as its state moves it between them
    /// (templates: the persistent count).
    fn counters(&self) -> ServerCounts<'_> {
        ServerCounts {
            dest: &self.dest,
            template: self.template,
        }
    }

    /// Pushes the expiry `secs` into the future (templates).
    fn touch(&self, secs: u32) -> Option<u64> {
        self.set_expires(jiffies().wrapping_add(secs_to_jiffies(secs)))
    }

    /// Makes the entry expire now (lookups skip it at once).
    fn expire_now(&self) -> Option<u64> {
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

    fn is_expired(&self, now: u64) -> bool {
        expired(self.expires.load(Ordering::Relaxed), now)
    }

    /// Whether nothing proves a real client is behind this entry yet (see
    /// `rvs_core::defense`). Templates never are.
    fn is_embryonic(&self) -> bool {
        !self.template
            && defense::is_embryonic(
                self.tuple.protocol == crate::rvs_core::packet::IPPROTO_TCP,
                self.state(),
                self.in_pkts.load(Ordering::Relaxed),
            )
    }

    /// Jiffies since the client's last packet.
    fn idle(&self, now: u64) -> u32 {
        expiry::since32(now, self.last_in.load(Ordering::Relaxed))
    }
}

impl ConnEntry {
    /// Whether a template controls live connections (and so lives on
    /// past its expiry, as IPVS's `ip_vs_conn_expire` keeps it).
    fn controls(&self) -> bool {
        self.template && self.refs() > 1
    }

    /// Whether lookups and listings see the entry.
    fn is_live(&self, now: u64) -> bool {
        !self.is_expired(now) || self.controls()
    }
}

/// A server's counters for one entry (see [`Conn::counters`]).
struct ServerCounts<'a> {
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
}

fn dec_saturating(a: &AtomicU32) {
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

/// The table.
pub(crate) struct ConnTable {
    chains: ChainTable<Conn>,
    /// Per group of `1 << HINT_SHIFT` buckets, jiffies (low 32 bits) by
    /// which the collector must look at the group again: no entry in it
    /// expires earlier. Lowered by whoever moves an expiry earlier; set by
    /// the collector after a look, never further than `HINT_MAX_SECS`.
    hints: KVVec<AtomicU32>,
    bits: u32,
    key: SipKey,
    count: AtomicU32,
    /// New connections refused because the table was full or memory short.
    refused: AtomicU64,
    /// Embryonic entries evicted by `drop_entry`.
    evicted: AtomicU64,
    /// The bucket the next insert-time eviction scan starts at.
    evict_cursor: AtomicU32,
    /// Jiffies of the last "table full" warning (0 = never).
    last_full_log: AtomicU64,
}

impl ConnTable {
    /// A table of `1 << bits` buckets.
    pub(crate) fn new(bits: u32) -> Result<Self> {
        let n = 1usize << bits;
        // 2^18 pointers are 2 MiB: kvmalloc, so it need not be contiguous.
        // Charged to the memory cgroup of whoever adds the namespace's first
        // service: root of a user namespace may do so (GENL_UNS_ADMIN_PERM),
        // and a namespace per container must not be free kernel memory.
        let chains = ChainTable::new(n, LOCK_STRIPES, || new_spinlock!((), "rvs_conn_bucket"))?;
        let groups = (n >> HINT_SHIFT).max(1);
        let mut hints = KVVec::with_capacity(groups, GFP_KERNEL_ACCOUNT)?;
        for _ in 0..groups {
            // Due at once: the first pass sets real hints.
            hints.push(AtomicU32::new(jiffies() as u32), GFP_KERNEL_ACCOUNT)?;
        }
        let mut key = [0u8; 16];
        random::fill(&mut key);
        Ok(Self {
            chains,
            hints,
            bits,
            key: SipKey::from_bytes(&key),
            count: AtomicU32::new(0),
            refused: AtomicU64::new(0),
            evicted: AtomicU64::new(0),
            evict_cursor: AtomicU32::new(0),
            last_full_log: AtomicU64::new(0),
        })
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

    /// Bytes held by the table: bucket array plus entries.
    pub(crate) fn memory(&self) -> u64 {
        defense::table_bytes(self.chains.len(), self.count(), ENTRY_SIZE)
            + (self.hints.len() * core::mem::size_of::<AtomicU32>()) as u64
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

    /// Number of buckets (reported as the table size).
    pub(crate) fn size(&self) -> u32 {
        1u32 << self.bits
    }

    /// The bucket of a client. The family is added to the hash so that an
    /// IPv4 client and the IPv6 address with the same leading bytes do not
    /// share chains (they never match: lookups compare the family too).
    fn bucket_of(&self, af: AddrFamily, protocol: u8, caddr: &[u8; 16], cport: u16) -> usize {
        let h = hash::conn_hash(&self.key, protocol, caddr, cport);
        hash::bucket(h.wrapping_add(u64::from(af.to_u16())), self.bits)
    }

    fn walk<'g>(
        &'g self,
        g: &'g ReadGuard,
        bucket: usize,
        mut pred: impl FnMut(&Conn) -> bool,
    ) -> Option<&'g ConnEntry> {
        let now = jiffies();
        self.chains
            .iter(g, bucket)?
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
        let b = self.bucket_of(af, protocol, caddr, cport);
        self.walk(g, b, |c| {
            !c.template
                && c.tuple
                    .same_request(af, protocol, caddr, cport, vaddr, vport)
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
        let b = self.bucket_of(af, protocol, caddr, 0);
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

    /// The connection a reply from a real server belongs to.
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
        let b = self.bucket_of(af, protocol, caddr, cport);
        self.walk(g, b, |c| {
            let t = &c.tuple;
            !c.template
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
        svc: Arc<Service>,
        template: bool,
        expire_secs: u32,
        limits: Limits,
        control: Option<ControlRef>,
    ) -> Option<&'g ConnEntry> {
        let bucket = self.bucket_of(tuple.af, tuple.protocol, &tuple.caddr, tuple.cport);
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
            svc,
            template,
            jiffies().wrapping_add(secs_to_jiffies(expire_secs)),
            control,
        );
        // Templates are counted: the table holds one reference to them.
        let Some(conn) = NewEntry::new(fresh, u32::try_from(bucket).unwrap_or(u32::MAX), template)
        else {
            self.release();
            self.refuse(limits.max);
            return None;
        };
        let Some(guard) = self.chains.lock(bucket) else {
            self.release();
            return None;
        };
        let t = &tuple;
        if let Some(existing) = self.walk(g, bucket, |c| {
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
        let expires = conn.expires.load(Ordering::Relaxed);
        // Published with a release store: readers see a fully built entry.
        let e = guard.push_front(g, conn);
        self.lower_hint(bucket, expires);
        Some(e)
    }

    /// Unlinks and frees (after a grace period) every entry of one bucket
    /// for which `doomed` holds. Returns how many went.
    fn sweep_bucket(&self, bucket: usize, doomed: impl FnMut(&ConnEntry) -> bool) -> u32 {
        // Most buckets are empty: skip them without a lock round trip (an
        // entry inserted concurrently was not there when the sweep began).
        if self.chains.looks_empty(bucket) != Some(false) {
            return 0;
        }
        let Some(guard) = self.chains.lock(bucket) else {
            return 0;
        };
        self.sweep_locked(&guard, doomed)
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
        let pick = defense::pick_victim(start, self.chains.len(), |b| {
            // Empty buckets cost a load, no lock round trip.
            if self.chains.looks_empty(b)? {
                return None;
            }
            // The chain's stripe lock is held while the iterator lives.
            let guard = self.chains.lock(b)?;
            Some(guard.into_iter(g).map(move |c| {
                let seen = defense::EvictSeen {
                    embryonic: c.is_embryonic(),
                    idle: c.idle(now),
                };
                (ptr::from_ref(c), seen)
            }))
        });
        // Racing inserts may store older cursors: that only repeats a look.
        self.evict_cursor
            .store(u32::try_from(pick.next).unwrap_or(0), Ordering::Relaxed);
        let Some((vb, vp)) = pick.victim else {
            return false;
        };
        let Some(guard) = self.chains.lock(vb) else {
            return false;
        };
        // The caller's read section (`g`) keeps a victim unlinked meanwhile
        // from being freed and reused, so an address match is that entry;
        // it must still be embryonic.
        let gone = self.sweep_locked(&guard, |c| ptr::eq(c, vp) && c.is_embryonic());
        self.evicted.fetch_add(u64::from(gone), Ordering::Relaxed);
        gone > 0
    }

    /// [`Self::sweep_bucket`] with the bucket's stripe lock already held
    /// (`guard`).
    fn sweep_locked(
        &self,
        guard: &BucketGuard<'_, Conn>,
        doomed: impl FnMut(&ConnEntry) -> bool,
    ) -> u32 {
        guard.unlink_where(doomed, |c| {
            // Counted out exactly once, whatever packets do meanwhile.
            c.state.retire(&c.counters());
            c.dest.refresh_overload();
            self.count.fetch_sub(1, Ordering::Relaxed);
            // A connection gives back its template's reference (templates
            // hold none). A template's own memory, or the table's reference
            // to it (the collector may have claimed it already, see
            // `collect`), goes once this returns: controlled connections may
            // keep it a while.
            drop(c.control.take());
        })
    }

    /// Lowers the collector's hint for `bucket`'s group to `t` (jiffies) if
    /// that is earlier. Lock-free; pairs with the Acquire load in
    /// `collect`, so the collector then sees the expiry that was stored
    /// before.
    fn lower_hint(&self, bucket: usize, t: u64) {
        let Some(h) = self.hints.get(bucket >> HINT_SHIFT) else {
            return;
        };
        let t = t as u32;
        let mut cur = h.load(Ordering::Relaxed);
        while before32(t, cur) {
            match h.compare_exchange_weak(cur, t, Ordering::Release, Ordering::Relaxed) {
                Ok(_) => break,
                Err(seen) => cur = seen,
            }
        }
    }

    /// Advances `conn`'s state for a packet and refreshes its expiry (see
    /// [`Conn::update`]), keeping the collector's hint right.
    pub(crate) fn update(
        &self,
        conn: &ConnEntry,
        dir: Dir,
        flags: Option<TcpFlags>,
        timeouts: &Timeouts,
        secure_tcp: u32,
    ) {
        if let Some(t) = conn.update(dir, flags, timeouts, secure_tcp) {
            self.lower_hint(conn.bucket() as usize, t);
        }
    }

    /// Pushes a template's expiry `secs` into the future.
    pub(crate) fn touch(&self, conn: &ConnEntry, secs: u32) {
        if let Some(t) = conn.touch(secs) {
            self.lower_hint(conn.bucket() as usize, t);
        }
    }

    /// Takes `conn` (found in the caller's read section `_g`) out of the
    /// table now: lookups miss it at once, even a template that controls
    /// connections (IPVS's invalidated template), whose memory stays until
    /// they go.
    pub(crate) fn remove(&self, _g: &ReadGuard, conn: &ConnEntry) {
        let b = conn.bucket() as usize;
        let Some(guard) = self.chains.lock(b) else {
            return;
        };
        // The read section keeps `conn` from being freed and its memory
        // reused, so an address match is that entry.
        self.sweep_locked(&guard, |c| ptr::eq(c, conn));
    }

    /// Makes `conn` expire now: lookups skip it at once, the collector
    /// frees it at its next pass.
    pub(crate) fn expire_now(&self, conn: &ConnEntry) {
        if let Some(t) = conn.expire_now() {
            self.lower_hint(conn.bucket() as usize, t);
        }
    }

    /// Removes expired entries; called every second from process context.
    /// When the table is fuller than `drop_entry` percent of `max`, also
    /// evicts embryonic entries idle for `defense::DROP_MIN_IDLE_SECS` or
    /// more. With `nodest` (the `expire_nodest_conn` setting), connections
    /// of deleted real servers go too, as IPVS's flush work does. Returns
    /// how many went (expired and evicted together).
    ///
    /// IPVS arms a timer per connection; rvs instead keeps, per group of
    /// 16 buckets, the earliest time anything in it can expire (`hints`),
    /// and looks only at groups that are due: a pass costs a read of 4,096
    /// hints plus the entries actually expiring, not a walk of the whole
    /// table (a 1M-entry table would otherwise be walked every second).
    /// Every group is looked at at least every `HINT_MAX_SECS`, which also
    /// bounds how late an entry can be collected if a racing refresh made
    /// the hint err late. Evicting (`drop_entry`) and `nodest` need every
    /// entry looked at, so they walk all groups.
    pub(crate) fn collect(&self, limits: Limits, nodest: bool) -> u32 {
        let now = jiffies();
        let pass = Pass {
            nodest,
            dropping: defense::above_threshold(self.count(), limits.max, limits.drop_entry),
            min_idle: secs_to_jiffies(defense::DROP_MIN_IDLE_SECS),
        };
        let full = pass.dropping || nodest;
        let latest = (now as u32).wrapping_add(secs_to_jiffies(HINT_MAX_SECS) as u32);
        let n = self.chains.len();
        let mut removed = 0;
        let mut evicted = 0u64;
        for (group, hint) in self.hints.iter().enumerate() {
            let seen = hint.load(Ordering::Acquire);
            if !full && before32(now as u32, seen) {
                continue;
            }
            let mut next = NextLook::new(latest);
            let first = group << HINT_SHIFT;
            for b in first..n.min(first + (1 << HINT_SHIFT)) {
                removed += self.sweep_bucket(b, |c| {
                    let view = EntryView {
                        template: c.template,
                        expired: c.is_expired(now),
                        dest_removed: c.dest.is_removed(),
                        embryonic: c.is_embryonic(),
                        idle: u64::from(c.idle(now)),
                    };
                    match pass.fate(&view) {
                        Fate::Remove => return true,
                        Fate::Evict => {
                            evicted += 1;
                            return true;
                        }
                        Fate::ClaimTemplate => {
                            // Claim it (the table's reference) unless it
                            // controls connections: then it lives on,
                            // looked at again in a while.
                            if c.try_claim() {
                                return true;
                            }
                            let later = now.wrapping_add(secs_to_jiffies(TEMPLATE_REARM_SECS));
                            c.expires.store(later, Ordering::Relaxed);
                        }
                        Fate::Keep => {}
                    }
                    next.note(c.expires.load(Ordering::Relaxed) as u32);
                    false
                });
            }
            // Fails if an expiry moved earlier meanwhile: that lower hint
            // stays (only this worker ever raises a hint).
            let _ = hint.compare_exchange(seen, next.at(), Ordering::Relaxed, Ordering::Relaxed);
            if group % 64 == 63 {
                // Process context, no locks or read section held here.
                ksched::cond_resched();
            }
        }
        self.evicted.fetch_add(evicted, Ordering::Relaxed);
        removed
    }

    /// Removes every entry (a flush). Flushes of an empty table are
    /// common (every `-C`, and the `-R` of a fresh director): up to 2^20
    /// buckets need not be looked at then.
    pub(crate) fn clear(&self) {
        if self.count() != 0 {
            self.sweep_all();
        }
    }

    /// Removes every entry, whatever the count says (teardown).
    fn sweep_all(&self) {
        for b in 0..self.chains.len() {
            self.sweep_bucket(b, |_| true);
        }
    }
}

impl ConnTable {
    /// Calls `f` on live entries from position (`bucket`, `index` in its
    /// chain) on, until `f` returns false; returns the position to resume
    /// from (resumable dumps). Chains may change between calls: a resumed
    /// dump may then skip or repeat an entry, never fault.
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
                    .iter(g, b)
                    .map(|chain| chain.map(move |c| (c, c.is_live(now))))
            },
            f,
        )
    }
}

impl Drop for ConnTable {
    fn drop(&mut self) {
        self.sweep_all();
    }
}
