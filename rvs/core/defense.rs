// SPDX-License-Identifier: GPL-2.0

//! Flood defences: which connection entries are expendable, when the
//! table counts as full, and how long a half-open TCP entry lives.
//!
//! C counterparts: `update_defense_level` in net/netfilter/ipvs/ip_vs_ctl.c,
//! `ip_vs_random_dropentry` in ip_vs_conn.c and the `tcp_states_dos` table
//! of ip_vs_proto_tcp.c. rvs keeps three simpler knobs (see
//! Documentation/hardening.md, "Floods"):
//!
//! - `conn_max`: a hard limit on the entries of one namespace's table; a
//!   new connection that would exceed it is refused (its packet dropped,
//!   counted), existing connections are untouched.
//! - `drop_entry` (percent of `conn_max`, 0 = off): above that fill level
//!   the collector evicts every *embryonic* entry idle for at least
//!   [`DROP_MIN_IDLE_SECS`]; and a new connection that finds the table
//!   full evicts the embryonic entry idle longest among the few it looks
//!   at ([`pick_victim`]: a bounded slice of the table) instead of being
//!   refused.
//! - `secure_tcp` (seconds, 0 = off): an embryonic TCP entry lives that
//!   long after the client's last packet (instead of SYN_RECV's 60 s), and
//!   the real server's SYN-ACK retransmissions no longer extend it.
//!
//! An entry is embryonic when nothing proves a real client is behind it: a
//! TCP entry whose handshake was not completed by the client's ACK (states
//! NONE, SYN_RECV, SYNACK), or a UDP entry that has carried a single
//! datagram from its client. A spoofed SYN or datagram creates exactly such
//! entries; a legitimate client leaves that class within one round trip.

use super::proto::{Dir, TcpState, Timeouts};

/// Default `conn_max`: 1,048,576 entries per namespace, about 128 MiB of
/// entries (128-byte objects) plus the 512 KiB bucket array.
pub const CONN_MAX_DEFAULT: u32 = 1 << 20;
/// Smallest `conn_max` accepted.
pub const CONN_MAX_MIN: u32 = 16;
/// Largest `conn_max` accepted: 16 Mi entries, about 2 GiB.
pub const CONN_MAX_MAX: u32 = 1 << 24;
/// Largest `secure_tcp` value, in seconds (SYN_RECV's default timeout).
pub const SECURE_TCP_MAX: u32 = 60;
/// An embryonic entry must have been idle this long before the collector
/// evicts it, so a handshake in progress (one round trip) is never cut.
pub const DROP_MIN_IDLE_SECS: u32 = 1;
/// An insert into a full table looks at most at this many buckets for
/// an embryonic entry to evict: consecutive ones from a cursor that the
/// next such insert resumes from, so a sparse table (a small `conn_max`
/// in a large table) is searched a slice at a time; an empty bucket costs
/// one load (8 share a cache line), and no lock.
pub const EVICT_SCAN_BUCKETS: usize = 4096;
/// ... and at most this many entries, whether or not it found a
/// candidate: in a crowded table with nothing embryonic the work per new
/// connection stays bounded, not a walk of a lock stripe's chains.
pub const EVICT_SCAN_ENTRIES: usize = 32;

/// One entry as the eviction scan sees it.
#[derive(Clone, Copy, Debug)]
pub struct EvictSeen {
    /// Whether it is embryonic ([`is_embryonic`]).
    pub embryonic: bool,
    /// Time since the client's last packet (any unit, larger is older).
    pub idle: u32,
}

/// What an eviction scan chose and how much it looked at.
#[derive(Debug)]
pub struct EvictPick<T> {
    /// The bucket and entry to evict: the embryonic entry idle longest
    /// among those looked at.
    pub victim: Option<(usize, T)>,
    /// The bucket the next scan starts at.
    pub next: usize,
    /// Buckets looked at (empty ones included).
    pub buckets: usize,
    /// Entries looked at.
    pub entries: usize,
}

/// The eviction scan of an insert into a full table of `table` buckets,
/// starting at bucket `start`: `chain(b)` gives bucket `b`'s entries
/// (`None` when it is empty; the caller locks the chain while the
/// iterator lives). At most [`EVICT_SCAN_BUCKETS`] buckets and
/// [`EVICT_SCAN_ENTRIES`] entries are looked at (the iterator of the last
/// chain is dropped unfinished when the entry budget runs out).
pub fn pick_victim<T, I>(
    start: usize,
    table: usize,
    mut chain: impl FnMut(usize) -> Option<I>,
) -> EvictPick<T>
where
    I: Iterator<Item = (T, EvictSeen)>,
{
    let n = table.max(1);
    let mut pick = EvictPick {
        victim: None,
        next: start.checked_rem(n).unwrap_or(0),
        buckets: 0,
        entries: 0,
    };
    let mut best = 0u32;
    while pick.buckets < EVICT_SCAN_BUCKETS.min(n) && pick.entries < EVICT_SCAN_ENTRIES {
        let b = pick.next;
        pick.buckets = pick.buckets.saturating_add(1);
        pick.next = b.checked_add(1).filter(|&x| x < n).unwrap_or(0);
        let Some(entries) = chain(b) else {
            continue;
        };
        for (t, seen) in entries {
            pick.entries = pick.entries.saturating_add(1);
            if seen.embryonic && (pick.victim.is_none() || seen.idle >= best) {
                best = seen.idle;
                pick.victim = Some((b, t));
            }
            if pick.entries >= EVICT_SCAN_ENTRIES {
                break;
            }
        }
    }
    pick
}

/// At most one "table full" warning per namespace this often, in seconds.
pub const FULL_LOG_INTERVAL_SECS: u32 = 10;

/// Whether an entry is embryonic (see the module documentation). `tcp`:
/// the entry is TCP (else UDP or SCTP, whose lone INIT is embryonic too);
/// `in_pkts`: packets seen from the client (never back to 0 or 1 once past).
pub fn is_embryonic(tcp: bool, state: TcpState, in_pkts: u8) -> bool {
    if tcp {
        matches!(state, TcpState::None | TcpState::SynRecv | TcpState::Synack)
    } else {
        in_pkts <= 1
    }
}

/// Whether `count` entries exceed `pct` percent of `max` (`drop_entry`).
/// `pct == 0` is off: never.
pub fn above_threshold(count: u32, max: u32, pct: u32) -> bool {
    if pct == 0 {
        return false;
    }
    let limit = u64::from(max).saturating_mul(u64::from(pct.min(100))) / 100;
    u64::from(count) > limit
}

/// The timeout, in seconds, of a TCP entry that moved to `state`, with
/// `secure_tcp` seconds (0 = off) capping the embryonic states.
pub fn tcp_timeout(timeouts: &Timeouts, state: TcpState, secure_tcp: u32) -> u32 {
    let t = timeouts.timeout_for(state);
    if secure_tcp != 0 && is_embryonic(true, state, 0) {
        t.min(secure_tcp)
    } else {
        t
    }
}

/// Whether a TCP packet travelling in `dir` that leaves the entry in
/// `state` refreshes its expiry. With `secure_tcp` on, only the client's
/// packets keep an embryonic entry alive: the real server retransmitting
/// its SYN-ACK to a spoofed source does not.
pub fn refreshes(dir: Dir, state: TcpState, secure_tcp: u32) -> bool {
    !(secure_tcp != 0 && dir == Dir::Output && is_embryonic(true, state, 0))
}

/// The kmalloc size class an object of `size` bytes is allocated from
/// (the generic caches: 8, 16, 32, 64, 96, 128, 192, then powers of two).
pub fn kmalloc_class(size: usize) -> usize {
    match size {
        0..=8 => 8,
        9..=16 => 16,
        17..=32 => 32,
        33..=64 => 64,
        65..=96 => 96,
        97..=128 => 128,
        129..=192 => 192,
        _ => size.checked_next_power_of_two().unwrap_or(usize::MAX),
    }
}

/// Memory held by a table of `buckets` bucket pointers and `entries`
/// entries of `entry_size` bytes, in bytes.
pub fn table_bytes(buckets: usize, entries: u32, entry_size: usize) -> u64 {
    let heads = (buckets as u64).saturating_mul(8);
    let objs = u64::from(entries).saturating_mul(kmalloc_class(entry_size) as u64);
    heads.saturating_add(objs)
}

/// Whether a rate-limited event may be logged at `now` (jiffies) when it
/// was last logged at `last` (0 = never), at most once per `interval`
/// jiffies. Wrap-safe.
pub fn may_log(last: u64, now: u64, interval: u64) -> bool {
    last == 0 || now.wrapping_sub(last) >= interval
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embryonic_states() {
        for s in TcpState::ALL {
            let want = matches!(s, TcpState::None | TcpState::SynRecv | TcpState::Synack);
            assert_eq!(is_embryonic(true, s, 5), want, "{s:?}");
        }
        assert!(is_embryonic(false, TcpState::None, 0));
        assert!(is_embryonic(false, TcpState::None, 1));
        assert!(!is_embryonic(false, TcpState::None, 2));
        assert!(!is_embryonic(false, TcpState::None, 255));
    }

    #[test]
    fn thresholds() {
        assert!(!above_threshold(u32::MAX, 100, 0));
        assert!(!above_threshold(80, 100, 80));
        assert!(above_threshold(81, 100, 80));
        assert!(!above_threshold(100, 100, 100));
        assert!(above_threshold(101, 100, 100));
        assert!(above_threshold(101, 100, 250), "clamped to 100%");
        assert!(!above_threshold(0, 0, 50));
        assert!(above_threshold(1, 0, 50));
        let big = CONN_MAX_MAX;
        assert!(above_threshold(big, big, 99));
    }

    #[test]
    fn secure_tcp_caps_embryonic_only() {
        let t = Timeouts::default();
        assert_eq!(tcp_timeout(&t, TcpState::SynRecv, 0), 60);
        assert_eq!(tcp_timeout(&t, TcpState::SynRecv, 5), 5);
        assert_eq!(tcp_timeout(&t, TcpState::Synack, 5), 5);
        assert_eq!(tcp_timeout(&t, TcpState::None, 5), 2, "never lengthens");
        assert_eq!(tcp_timeout(&t, TcpState::Established, 5), 900);
        assert_eq!(tcp_timeout(&t, TcpState::FinWait, 5), 120);
    }

    #[test]
    fn server_retransmits_do_not_refresh_when_secure() {
        assert!(refreshes(Dir::Output, TcpState::SynRecv, 0));
        assert!(!refreshes(Dir::Output, TcpState::SynRecv, 5));
        assert!(refreshes(Dir::Input, TcpState::SynRecv, 5));
        assert!(refreshes(Dir::InputOnly, TcpState::SynRecv, 5));
        assert!(refreshes(Dir::Output, TcpState::Established, 5));
    }

    #[test]
    fn memory() {
        assert_eq!(kmalloc_class(1), 8);
        assert_eq!(kmalloc_class(96), 96);
        assert_eq!(kmalloc_class(97), 128);
        assert_eq!(kmalloc_class(128), 128);
        assert_eq!(kmalloc_class(129), 192);
        assert_eq!(kmalloc_class(200), 256);
        assert_eq!(kmalloc_class(usize::MAX), usize::MAX);
        assert_eq!(table_bytes(65536, 0, 128), 524_288);
        assert_eq!(table_bytes(65536, 1000, 120), 524_288 + 128_000);
        assert_eq!(table_bytes(usize::MAX, u32::MAX, usize::MAX), u64::MAX);
    }

    #[test]
    fn log_rate_limit() {
        assert!(may_log(0, 5, 1000));
        assert!(!may_log(100, 1099, 1000));
        assert!(may_log(100, 1100, 1000));
        assert!(may_log(u64::MAX - 10, 990, 1000), "wraps");
        assert!(!may_log(u64::MAX - 10, 980, 1000));
    }

    /// A table of `n` buckets, each holding `per` entries, embryonic when
    /// `emb` says so; returns the pick and how many entries were
    /// actually produced (read) by the scan.
    fn scan(
        n: usize,
        start: usize,
        per: impl Fn(usize) -> usize,
        emb: impl Fn(usize, usize) -> bool,
    ) -> (EvictPick<(usize, usize)>, usize) {
        let read = core::cell::Cell::new(0usize);
        let pick = pick_victim(start, n, |b| {
            let k = per(b);
            (k > 0).then(|| {
                let (read, emb) = (&read, &emb);
                (0..k).map(move |i| {
                    read.set(read.get() + 1);
                    (
                        (b, i),
                        EvictSeen {
                            embryonic: emb(b, i),
                            idle: (b * 7 + i) as u32,
                        },
                    )
                })
            })
        });
        (pick, read.get())
    }

    #[test]
    fn eviction_work_is_bounded() {
        // A crowded table (2^18 buckets, 4 entries each, 1M entries) with
        // nothing embryonic: a new connection must not read a whole stripe.
        let (p, read) = scan(1 << 18, 12345, |_| 4, |_, _| false);
        assert!(p.victim.is_none());
        assert!(read <= EVICT_SCAN_ENTRIES, "read {read} entries");
        assert_eq!(read, p.entries);
        // An empty table of 2^20 buckets: a bounded number of loads.
        let (p, read) = scan(1 << 20, 99, |_| 0, |_, _| false);
        assert_eq!(read, 0);
        assert!(
            p.buckets <= EVICT_SCAN_BUCKETS,
            "looked at {} buckets",
            p.buckets
        );
    }

    #[test]
    fn eviction_picks_the_oldest_embryonic_it_sees() {
        // Every entry embryonic; idle grows with the bucket and position.
        let (p, _) = scan(1 << 12, 0, |_| 3, |_, _| true);
        let (b, (vb, vi)) = p.victim.unwrap();
        assert_eq!(b, vb);
        // The oldest among those read (the scan reads at most
        // EVICT_SCAN_ENTRIES).
        assert!(p.entries <= EVICT_SCAN_ENTRIES);
        assert!(vi < 3);
        // Only one embryonic entry, a few buckets ahead: found.
        let (p, _) = scan(1 << 18, 1000, |b| usize::from(b == 1003), |_, _| true);
        assert_eq!(p.victim.map(|(b, _)| b), Some(1003));
        // The cursor wraps at the end of the table.
        let n = 1 << 12;
        let (p, _) = scan(n, n - 2, |b| usize::from(b == 1), |_, _| true);
        assert_eq!(p.victim.map(|(b, _)| b), Some(1));
    }

    #[test]
    fn eviction_cursor_moves_on() {
        // Nothing to find in a sparse table: the next scan resumes where
        // this one stopped (so repeated inserts cover the table).
        let n = 1 << 18;
        let (p, _) = scan(n, 7, |_| 0, |_, _| false);
        assert_eq!(p.next, 7 + EVICT_SCAN_BUCKETS);
        // Out of entries: resumes after the last bucket it read.
        let (p, _) = scan(n, 100, |_| 8, |_, _| false);
        assert_eq!((p.entries, p.buckets, p.next), (EVICT_SCAN_ENTRIES, 4, 104));
        // A table smaller than the bucket budget is looked at once.
        let (p, _) = scan(256, 10, |_| 0, |_, _| false);
        assert_eq!((p.buckets, p.next), (256, 10));
        let (p, _) = scan(0, 10, |_| 0, |_, _| false);
        assert_eq!(p.buckets, 1);
    }
}
