// SPDX-License-Identifier: GPL-2.0

//! The connections the companion translates, found two ways.
//!
//! A packet from the director names a connection by its wire tuple
//! (director address and port, this host's address and port): the
//! [`Flow`] entries of the *wire* table are hashed on it. The
//! application's replies name it by the client's address and port, which
//! the stack believes is the peer: the [`Link`] entries of the *client*
//! table are hashed on (this host's address and port, client's address and
//! port), and each holds a counted reference to its flow. A flow's state
//! (expiry, closing, dead) is in the flow alone, so both ways see one
//! state.
//!
//! Writers take one bucket lock at a time (wire, then client): a flow
//! replaced by a newer SYN, or whose client tuple a newer flow took, is
//! marked dead and left for the collector, which every second unlinks
//! dead and expired entries from both tables. Readers never lock.

#![forbid(unsafe_code)]

use crate::rvs_core::config::AddrFamily;
use crate::rvs_core::hash::{self, SipKey};
use crate::rvs_core::packet::IPPROTO_TCP;
use crate::rvs_core::proto::TcpFlags;
use crate::rvs_core::rs::{self, Mode};
use crate::sys::chain::{ChainItem, ChainTable, Entry, EntryRef, NewEntry, RefSlot};
use crate::sys::random;
use crate::sys::rcu::ReadGuard;
use crate::sys::slab::{CacheOwner, CacheSlot};
use crate::sys::time::secs_to_jiffies;
use core::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering::Relaxed};
use kernel::new_spinlock;
use kernel::prelude::*;

/// log2 of each table's buckets: 4,096 (32 KiB of pointers per table).
const BITS: u32 = 12;
/// Bucket lock stripes per table.
const STRIPES: usize = 64;

/// The addresses and ports of one connection as this host sees them.
#[derive(Clone, Copy)]
pub(crate) struct FlowKey {
    pub(crate) af: AddrFamily,
    /// The director's end on the wire: FullNAT's local address and port,
    /// ENAT's VIP and port.
    pub(crate) daddr: [u8; 16],
    pub(crate) dport: u16,
    /// This host's end.
    pub(crate) raddr: [u8; 16],
    pub(crate) rport: u16,
    /// The client's, from the director's option.
    pub(crate) caddr: [u8; 16],
    pub(crate) cport: u16,
}

/// A connection (an entry of the wire table, counted: links refer to it).
pub(crate) struct Flow {
    pub(crate) key: FlowKey,
    pub(crate) mode: Mode,
    /// Jiffies after which it is gone.
    expires: AtomicU64,
    /// The application sent something.
    answered: AtomicBool,
    /// A FIN or a reset was seen, either way.
    closing: AtomicBool,
    /// Replaced by a newer connection: no longer found, collected soon.
    dead: AtomicBool,
}

/// How the application's replies find their flow (an entry of the client
/// table).
pub(crate) struct Link {
    af: AddrFamily,
    raddr: [u8; 16],
    rport: u16,
    caddr: [u8; 16],
    cport: u16,
    flow: RefSlot<Flow>,
}

static FLOW_CACHE: CacheSlot<Entry<Flow>> = CacheSlot::new();
static LINK_CACHE: CacheSlot<Entry<Link>> = CacheSlot::new();

impl ChainItem for Flow {
    fn cache() -> &'static CacheSlot<Entry<Flow>> {
        &FLOW_CACHE
    }
}

impl ChainItem for Link {
    fn cache() -> &'static CacheSlot<Entry<Link>> {
        &LINK_CACHE
    }
}

/// The slab caches of both entry types, for the module's lifetime.
pub(crate) struct FlowCaches {
    _flows: CacheOwner<Entry<Flow>>,
    _links: CacheOwner<Entry<Link>>,
}

impl FlowCaches {
    /// Creates the caches.
    pub(crate) fn create() -> Result<Self> {
        Ok(Self {
            _flows: FLOW_CACHE.create(c"rvs_rs_flow")?,
            _links: LINK_CACHE.create(c"rvs_rs_link")?,
        })
    }
}

/// Whether jiffies `expires` is still ahead of `now` (wrapping).
fn ahead(expires: u64, now: u64) -> bool {
    (expires.wrapping_sub(now) as i64) > 0
}

impl Flow {
    /// Whether packets still find it.
    pub(crate) fn is_live(&self, now: u64) -> bool {
        !self.dead.load(Relaxed) && ahead(self.expires.load(Relaxed), now)
    }

    /// Notes a packet of the connection (`from_app`: sent by this host)
    /// and renews its lifetime.
    pub(crate) fn seen(&self, f: TcpFlags, from_app: bool, now: u64) {
        if from_app && !self.answered.load(Relaxed) {
            self.answered.store(true, Relaxed);
        }
        if (f.fin || f.rst) && !self.closing.load(Relaxed) {
            self.closing.store(true, Relaxed);
        }
        let secs = rs::lifetime_secs(self.answered.load(Relaxed), self.closing.load(Relaxed));
        self.expires
            .store(now.wrapping_add(secs_to_jiffies(secs)), Relaxed);
    }

    fn wire_is(&self, k: &FlowKey) -> bool {
        let w = &self.key;
        w.af == k.af
            && w.dport == k.dport
            && w.rport == k.rport
            && w.daddr == k.daddr
            && w.raddr == k.raddr
    }
}

impl Link {
    fn client_is(&self, k: &FlowKey) -> bool {
        self.af == k.af
            && self.rport == k.rport
            && self.cport == k.cport
            && self.raddr == k.raddr
            && self.caddr == k.caddr
    }
}

/// What [`Flows::open`] did.
pub(crate) enum Opened<'g> {
    /// A new connection.
    New(&'g Flow),
    /// A retransmitted SYN of a connection already there.
    Again(&'g Flow),
    /// The table is full.
    Full,
    /// Memory is short.
    NoMemory,
}

/// One namespace's connections.
pub(crate) struct Flows {
    wire: ChainTable<Flow>,
    client: ChainTable<Link>,
    key: SipKey,
    /// Flows in the wire table, dead ones included until collected.
    count: AtomicU32,
}

impl Flows {
    /// Empty tables.
    pub(crate) fn new() -> Result<Self> {
        let wire = ChainTable::new(BITS, STRIPES, 0, || new_spinlock!((), "rvs_rs_wire_bucket"))?;
        let client = ChainTable::new(BITS, STRIPES, 0, || {
            new_spinlock!((), "rvs_rs_client_bucket")
        })?;
        let mut key = [0u8; 16];
        random::fill(&mut key);
        Ok(Self {
            wire,
            client,
            key: SipKey::from_bytes(&key),
            count: AtomicU32::new(0),
        })
    }

    /// Connections in the table.
    pub(crate) fn count(&self) -> u32 {
        self.count.load(Relaxed)
    }

    fn wire_hash(&self, k: &FlowKey) -> u32 {
        hash::conn_hash_tuple(&self.key, IPPROTO_TCP, &k.daddr, k.dport, &k.raddr, k.rport) as u32
    }

    fn client_hash(&self, k: &FlowKey) -> u32 {
        hash::conn_hash_tuple(&self.key, IPPROTO_TCP, &k.caddr, k.cport, &k.raddr, k.rport) as u32
    }

    /// The live connection of a packet from the director (wire tuple of
    /// `k`; its client fields are not looked at).
    pub(crate) fn by_wire<'g>(
        &'g self,
        g: &'g ReadGuard,
        k: &FlowKey,
        now: u64,
    ) -> Option<&'g Flow> {
        if self.count() == 0 {
            return None;
        }
        self.wire
            .iter(g, self.wire_hash(k))
            .find(|f| f.wire_is(k) && f.is_live(now))
            .map(|e| &**e)
    }

    /// The live connection of a reply of the application (client tuple
    /// of `k`; its director fields are not looked at).
    pub(crate) fn by_client<'g>(
        &'g self,
        g: &'g ReadGuard,
        k: &FlowKey,
        now: u64,
    ) -> Option<&'g Flow> {
        if self.count() == 0 {
            return None;
        }
        self.client
            .iter(g, self.client_hash(k))
            .filter(|l| l.client_is(k))
            .filter_map(|l| l.flow.get(g))
            .find(|f| f.is_live(now))
            .map(|e| &**e)
    }

    /// Marks the live connection of wire tuple `k`, if any, dead: a SYN
    /// the companion does not take begins another connection there.
    pub(crate) fn forget(&self, g: &ReadGuard, k: &FlowKey, now: u64) {
        if let Some(old) = self.by_wire(g, k, now) {
            old.dead.store(true, Relaxed);
        }
    }

    /// Opens connection `k` announced by a SYN with the option of `mode`:
    /// a retransmitted SYN finds its connection again; a connection on the
    /// same wire tuple for another client, or closing, is replaced; at
    /// `max` connections nothing new is taken.
    pub(crate) fn open<'g>(
        &'g self,
        g: &'g ReadGuard,
        k: &FlowKey,
        mode: Mode,
        max: u32,
        now: u64,
    ) -> Opened<'g> {
        let wh = self.wire_hash(k);
        let flow = {
            let bucket = self.wire.lock(g, wh);
            let old = self
                .wire
                .iter(g, wh)
                .find(|f| f.wire_is(k) && f.is_live(now));
            if let Some(old) = old {
                let same = old.mode == mode
                    && old.key.cport == k.cport
                    && old.key.caddr == k.caddr
                    && !old.closing.load(Relaxed);
                if same {
                    return Opened::Again(old);
                }
                old.dead.store(true, Relaxed);
            }
            bucket.unlink_where(
                |f| f.wire_is(k) && f.dead.load(Relaxed),
                |_| {
                    self.count.fetch_sub(1, Relaxed);
                },
            );
            if self.count() >= max {
                return Opened::Full;
            }
            let fresh = Flow {
                key: *k,
                mode,
                expires: AtomicU64::new(now.wrapping_add(secs_to_jiffies(rs::CLOSING_SECS))),
                answered: AtomicBool::new(false),
                closing: AtomicBool::new(false),
                dead: AtomicBool::new(false),
            };
            let Some(entry) = NewEntry::new(fresh, true) else {
                return Opened::NoMemory;
            };
            self.count.fetch_add(1, Relaxed);
            bucket.push_front(entry)
        };
        // The replies' way to it. A connection that cannot have one is of
        // no use: dead, collected with the others.
        let ch = self.client_hash(k);
        let link = EntryRef::new(flow).and_then(|r| {
            NewEntry::new(
                Link {
                    af: k.af,
                    raddr: k.raddr,
                    rport: k.rport,
                    caddr: k.caddr,
                    cport: k.cport,
                    flow: RefSlot::new(Some(r)),
                },
                false,
            )
        });
        let Some(link) = link else {
            flow.dead.store(true, Relaxed);
            return Opened::NoMemory;
        };
        let bucket = self.client.lock(g, ch);
        // To the stack, an older connection of the same client tuple is
        // this one (same peer, same port): the newest wins.
        bucket.unlink_where(
            |l| l.client_is(k),
            |l| {
                if let Some(old) = l.flow.get(g) {
                    old.dead.store(true, Relaxed);
                }
                drop(l.flow.take());
            },
        );
        bucket.push_front(link);
        Opened::New(flow)
    }

    /// Unlinks the dead and expired entries of both tables (all of them
    /// if `all`). Returns how many connections went.
    pub(crate) fn collect(&self, now: u64, all: bool) -> u32 {
        let g = ReadGuard::new();
        let mut gone = 0;
        for b in 0..self.client.slots(&g) {
            if self.client.looks_empty(&g, b) != Some(false) {
                continue;
            }
            if let Some(bucket) = self.client.lock_slot(&g, b) {
                bucket.unlink_where(
                    |l| all || l.flow.get(&g).map_or(true, |f| !f.is_live(now)),
                    // The flow's reference goes now, not from an RCU
                    // callback (which `rcu_barrier` would not wait for).
                    |l| drop(l.flow.take()),
                );
            }
        }
        for b in 0..self.wire.slots(&g) {
            if self.wire.looks_empty(&g, b) != Some(false) {
                continue;
            }
            if let Some(bucket) = self.wire.lock_slot(&g, b) {
                gone += bucket.unlink_where(
                    |f| all || !f.is_live(now),
                    |_| {
                        self.count.fetch_sub(1, Relaxed);
                    },
                );
            }
        }
        gone
    }
}
