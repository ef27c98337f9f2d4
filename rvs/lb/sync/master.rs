// SPDX-License-Identifier: GPL-2.0

//! The master daemon: records of this director's connections, appended to
//! a message as their packets pass, and sent by the master's thread when
//! the message is full or 2 s old (`ip_vs_sync_conn`, `sync_thread_master`).
//!
//! The packet path decides with `rvs_core::sync::policy::sync_needed`
//! (IPVS's rules: a connection at its 3rd packet then every 50th, and at
//! the state changes that end it), then appends under the daemon's
//! spinlock: the lock is taken only for a connection being sent, as IPVS's
//! `sync_buff_lock`. Full messages wait in a ring of [`QUEUE_LEN`]; a
//! message that finds it full is dropped and its records counted lost.
//!
//! Where rvs differs from IPVS, because its connection entry (128 bytes,
//! no room left) keeps no "state last sent" nor "expiry last sent":
//! - a state change is sent at the packet that makes it, from either end
//!   (IPVS waits for the client's next packet);
//! - `sync_refresh_period` and `sync_retries` are not offered;
//! - a persistence template goes with each record of a connection it
//!   controls (IPVS sends it at every packet of such a connection).
//!
//! FullNAT connections are not sent: a backup could not own their local
//! ports (IPVS has no FullNAT).

#![forbid(unsafe_code)]

use super::{should_stop, tick, DaemonStats, Handoff, Sockets};
use crate::lb::conn::{Conn, ConnEntry};
use crate::lb::state::NetState;
use crate::rvs_core::config::FwdMethod;
use crate::rvs_core::expiry;
use crate::rvs_core::packet::{IPPROTO_SCTP, IPPROTO_TCP};
use crate::rvs_core::settings::Setting;
use crate::rvs_core::sync::daemon::DaemonConfig;
use crate::rvs_core::sync::encode::{self, BuildError, Builder, Progress};
use crate::rvs_core::sync::policy::{self, SyncConn, SyncNeed, SyncSettings};
use crate::rvs_core::sync::{flags, resync, Record, Version};
use crate::sys::kthread;
use crate::sys::mcast::McastSocket;
use crate::sys::rcu::{lock_bh, ReadGuard};
use crate::sys::sched::cond_resched;
use crate::sys::time::{hz, jiffies, secs_to_jiffies};
use kernel::prelude::*;
use kernel::sync::{new_spinlock, Arc, SpinLock};

/// Full messages waiting for the thread (IPVS bounds its queue by
/// `sync_qlen_max`, from free memory; 256 messages of 1472 bytes hold
/// some 10,000 records, 20 ms of a busy director's new connections).
pub(crate) const QUEUE_LEN: usize = 256;

/// Messages a resync sends before pausing a tick.
const RESYNC_BURST: usize = 32;

/// Least time between two whole tables sent.
const RESYNC_INTERVAL_SECS: u32 = 5;

/// Buckets a resync reads under one RCU read-side section.
const RESYNC_BUCKETS: usize = 256;

/// A message: its buffer and how far it is built.
struct Msg {
    buf: KVec<u8>,
    progress: Progress,
    /// Jiffies when it was begun (sent at the latest 2 s later).
    firstuse: u64,
}

/// The message being filled and the full ones.
struct Bufs {
    cur: Option<Msg>,
    /// A ring: `len` messages from `head`, `QUEUE_LEN` slots.
    ring: KVec<Option<Msg>>,
    head: usize,
    len: usize,
}

impl Bufs {
    fn push(&mut self, m: Msg) -> Result<(), Msg> {
        let cap = self.ring.len();
        if self.len >= cap {
            return Err(m);
        }
        let at = self
            .head
            .wrapping_add(self.len)
            .checked_rem(cap)
            .unwrap_or(0);
        match self.ring.get_mut(at) {
            Some(slot) => {
                *slot = Some(m);
                self.len = self.len.wrapping_add(1);
                Ok(())
            }
            None => Err(m),
        }
    }

    fn pop(&mut self) -> Option<Msg> {
        if self.len == 0 {
            return None;
        }
        let m = self.ring.get_mut(self.head).and_then(Option::take);
        self.head = self
            .head
            .wrapping_add(1)
            .checked_rem(self.ring.len())
            .unwrap_or(0);
        self.len = self.len.wrapping_sub(1);
        m
    }
}

/// A running master daemon.
#[pin_data]
pub(crate) struct Master {
    pub(crate) cfg: DaemonConfig,
    pub(crate) stats: DaemonStats,
    #[pin]
    bufs: SpinLock<Bufs>,
    #[pin]
    pub(super) handoff: Handoff,
}

impl Master {
    pub(super) fn new(cfg: DaemonConfig, socks: Sockets) -> Result<Arc<Self>> {
        let mut ring = KVec::with_capacity(QUEUE_LEN, GFP_KERNEL)?;
        for _ in 0..QUEUE_LEN {
            ring.push(None, GFP_KERNEL)?;
        }
        let bufs = Bufs {
            cur: None,
            ring,
            head: 0,
            len: 0,
        };
        Arc::pin_init(
            pin_init!(Master {
                cfg,
                stats: DaemonStats::default(),
                bufs <- new_spinlock!(bufs, "rvs_sync_bufs"),
                handoff <- Handoff::new(socks),
            }),
            GFP_KERNEL,
        )
    }

    /// The packet path saw a packet of `conn` (`before`: its IPVS state
    /// number before the packet; `fwmark`: the packet's mark). Sends it,
    /// and the template that controls it, if IPVS would.
    pub(crate) fn conn_seen(
        &self,
        ns: &NetState,
        conn: &ConnEntry,
        before: u16,
        fwmark: u32,
        g: &ReadGuard,
    ) {
        // IPVS's format has no local port: FullNAT and ENAT stay local.
        if conn.fwd.has_local_port() {
            return;
        }
        let s = &settings(ns);
        let pkts = policy::in_hook_pkts(false, i32::from(conn.in_pkts()), s);
        let now = jiffies();
        let control = conn.control.get(g);
        let c = SyncConn {
            template: false,
            in_persistence: control.is_some(),
            protocol: conn.tuple.protocol,
            state: conn.sync_state(),
            old_state: before,
            timeout: timeout_jiffies(conn, now),
            sync_endtime: 0,
        };
        if let SyncNeed::Send { .. } = policy::sync_needed(s, &c, pkts, now, hz()) {
            if !policy::never_synced(Version::V1, 0, conn.tuple.af) {
                self.append(&record(conn, fwmark));
                if let Some(t) = control {
                    self.append(&record(t, fwmark));
                }
            }
        }
    }

    /// Appends `rec` to the current message, queueing it first if full.
    fn append(&self, rec: &Record<'_>) {
        let mut b = lock_bh(&self.bufs);
        for _ in 0..2 {
            let cur = match b.cur.take() {
                Some(m) => m,
                None => match self.new_msg() {
                    Some(m) => m,
                    None => {
                        DaemonStats::add(&self.stats.lost, 1);
                        return;
                    }
                },
            };
            let mut cur = cur;
            let pushed = Builder::resume(&mut cur.buf, cur.progress).and_then(|mut bl| {
                bl.push(rec)?;
                Ok(bl.progress())
            });
            match pushed {
                Ok(p) => {
                    cur.progress = p;
                    b.cur = Some(cur);
                    return;
                }
                Err(BuildError::Full) => {
                    if let Err(m) = b.push(cur) {
                        DaemonStats::add(&self.stats.lost, u64::from(m.progress.nr_conns()));
                    }
                    // Try again in a new message.
                }
                Err(_) => {
                    b.cur = Some(cur);
                    DaemonStats::add(&self.stats.lost, 1);
                    return;
                }
            }
        }
    }

    /// A new, empty message (allocated atomically: the packet path).
    fn new_msg(&self) -> Option<Msg> {
        let mut buf = KVec::from_elem(0u8, encode::buffer_len(self.cfg.maxlen), GFP_ATOMIC).ok()?;
        let progress = Builder::new(&mut buf, Version::V1, self.cfg.syncid, self.cfg.maxlen)
            .ok()?
            .progress();
        Some(Msg {
            buf,
            progress,
            firstuse: jiffies(),
        })
    }

    /// The next message to send: a queued one, or the current one once
    /// it is 2 s old.
    fn next_msg(&self) -> Option<Msg> {
        let mut b = lock_bh(&self.bufs);
        if let Some(m) = b.pop() {
            return Some(m);
        }
        let due = b.cur.as_ref().is_some_and(|m| {
            !m.progress.is_empty() && policy::flush_due(m.firstuse, jiffies(), hz())
        });
        if due {
            b.cur.take()
        } else {
            None
        }
    }

    /// Sends the queued messages (and, with `all`, the current one
    /// whatever its age). With `paced`, sleeps a tick every
    /// [`RESYNC_BURST`] messages, so that a whole table does not overrun
    /// the backups' socket buffers.
    fn send_queued(&self, sock: &McastSocket, all: bool, paced: bool) {
        let mut sent = 0usize;
        loop {
            let m = match self.next_msg() {
                Some(m) => m,
                None if all => match lock_bh(&self.bufs).cur.take() {
                    Some(m) if !m.progress.is_empty() => m,
                    _ => return,
                },
                None => return,
            };
            let n = u64::from(m.progress.nr_conns());
            let bytes = m.buf.get(..m.progress.len()).unwrap_or(&[]);
            match sock.send(bytes) {
                Ok(_) => {
                    DaemonStats::add(&self.stats.msgs, 1);
                    DaemonStats::add(&self.stats.conns, n);
                }
                Err(_) => DaemonStats::add(&self.stats.lost, n),
            }
            sent = sent.wrapping_add(1);
            if paced && sent.checked_rem(RESYNC_BURST) == Some(0) {
                kthread::sleep(1);
            }
        }
    }

    /// Sends every connection of the table a backup could take over (a
    /// backup asked: `rvs_core::sync::resync`). Returns how many.
    fn resync(&self, ns: &NetState, sock: &McastSocket) -> u64 {
        let Some(conns) = ns.conns() else {
            return 0;
        };
        // No resize meanwhile: every connection is sent once.
        let _x = conns.exclusive();
        let mut n = 0u64;
        let mut bucket = 0usize;
        loop {
            let end = {
                let g = ReadGuard::new();
                let size = conns.slots(&g);
                if bucket >= size {
                    break;
                }
                let end = bucket.saturating_add(RESYNC_BUCKETS).min(size);
                let now = jiffies();
                for b in bucket..end {
                    conns.for_each_in(&g, b, |c| {
                        if c.is_live(now)
                            && !c.fwd.has_local_port()
                            && policy::resync_sends(c.template, c.tuple.protocol, c.sync_state())
                        {
                            self.append(&record(c, resync_fwmark(c)));
                            n = n.wrapping_add(1);
                        }
                    });
                }
                end
            };
            bucket = end;
            self.send_queued(sock, false, true);
            if should_stop() {
                break;
            }
            cond_resched();
        }
        self.send_queued(sock, true, true);
        n
    }

    /// The master's thread: sends what is due every tick, and answers
    /// resync requests, until stopped.
    pub(super) fn run(&self, ns: &NetState) {
        let Some(socks) = self.handoff.take() else {
            return;
        };
        let mut req = [0u8; resync::REQUEST_LEN + 1];
        // When the next whole table may be sent.
        let mut next_resync: Option<u64> = None;
        loop {
            self.send_queued(&socks.main, false, false);
            if let Some(r) = &socks.resync {
                let mut asked = false;
                while let Ok(len) = r.recv(&mut req) {
                    asked |= resync::is_request_for(req.get(..len).unwrap_or(&[]), self.cfg.syncid);
                }
                // At most one whole table every RESYNC_INTERVAL_SECS (an
                // empty one every second, so that a backup that asked
                // before the first connection asks again soon): a forged
                // request on the link cannot make the master send its
                // table in a loop.
                let now = jiffies();
                let quiet = next_resync.map_or(true, |t| expiry::expired(t, now));
                if asked && quiet {
                    let n = self.resync(ns, &socks.main);
                    let wait = if n == 0 { 1 } else { RESYNC_INTERVAL_SECS };
                    next_resync = Some(now.wrapping_add(secs_to_jiffies(wait)));
                    DaemonStats::add(&self.stats.resyncs, 1);
                    pr_info!(
                        "sync: master on {:?}, syncid {}: a backup asked for the whole table: {} connections sent\n",
                        self.cfg.ifname(),
                        self.cfg.syncid,
                        n
                    );
                }
            }
            if should_stop() {
                break;
            }
            kthread::sleep(tick());
        }
        // The sockets close here, in the thread.
    }
}

/// The namespace's send rules (`sync_threshold`, `sync_period`).
pub(super) fn settings(ns: &NetState) -> SyncSettings {
    let get = |s: Setting| i32::try_from(ns.setting(s)).unwrap_or(i32::MAX);
    SyncSettings {
        threshold: get(Setting::SyncThreshold),
        period: get(Setting::SyncPeriod),
        ..SyncSettings::default()
    }
}

/// The firewall mark a resync sends for `c`: a firewall-mark service's
/// templates carry it as their virtual address
/// (`lb::datapath::persistent_dest`), with protocol 0; its connections
/// have it from their real server's service (a backup finds a
/// firewall-mark service by mark, not by address). 0 for connections of
/// other services.
fn resync_fwmark(c: &Conn) -> u32 {
    match (c.template, c.tuple.protocol, c.tuple.vaddr) {
        (true, 0, [a, b, cc, d, ..]) => u32::from_be_bytes([a, b, cc, d]),
        _ => c.dest.svc_fwmark,
    }
}

/// Jiffies until `conn` expires (0 if it has).
fn timeout_jiffies(conn: &Conn, now: u64) -> u64 {
    conn.expires_at().saturating_sub(now)
}

/// The record that describes `conn` (IPVS's `ip_vs_sync_conn` fields).
fn record(conn: &ConnEntry, fwmark: u32) -> Record<'static> {
    let t = &conn.tuple;
    let fwd = match conn.fwd {
        FwdMethod::Masq => flags::MASQ,
        FwdMethod::Tunnel => flags::TUNNEL,
        FwdMethod::Route => flags::DROUTE,
        FwdMethod::Local => flags::LOCALNODE,
        FwdMethod::FullNat | FwdMethod::Enat => flags::MASQ,
    };
    let mut f = fwd;
    if conn.template {
        f |= flags::TEMPLATE;
    } else if !conn.is_active() {
        f |= flags::INACTIVE;
    }
    if conn.fwd.replies_bypass_director() {
        f |= flags::NOOUTPUT;
    }
    // Seconds, rounded up, as the backup sets its own expiry from it.
    let ms = u64::from(conn.expires_ms());
    let timeout = u32::try_from(ms.div_ceil(1000)).unwrap_or(u32::MAX);
    let is_l4 = t.protocol == IPPROTO_TCP || t.protocol == IPPROTO_SCTP;
    Record {
        af: t.af,
        protocol: t.protocol,
        flags: f,
        state: if is_l4 && !conn.template {
            conn.sync_state()
        } else {
            0
        },
        cport: t.cport,
        vport: t.vport,
        dport: t.dport,
        fwmark,
        timeout,
        caddr: t.caddr,
        vaddr: t.vaddr,
        daddr: t.daddr,
        seq: None,
        pe_data: None,
        pe_name: None,
    }
}
