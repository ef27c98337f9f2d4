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
//!   full evicts the oldest embryonic entry it finds near its own bucket
//!   instead of being refused.
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
/// How many buckets sharing the new entry's lock stripe an insert into a
/// full table searches for an embryonic entry to evict: the whole stripe
/// of a table of `buckets` buckets split into `stripes`, so that a sparse
/// table (a small `conn_max` in a large table) still finds one; empty
/// buckets cost one load each.
pub fn evict_scan_buckets(buckets: usize, stripes: usize) -> usize {
    buckets.checked_div(stripes).unwrap_or(buckets).max(1)
}

/// ... and an insert stops scanning once it has looked at this many
/// entries and has a candidate, which bounds the work in a crowded table.
pub const EVICT_SCAN_ENTRIES: usize = 32;
/// At most one "table full" warning per namespace this often, in seconds.
pub const FULL_LOG_INTERVAL_SECS: u32 = 10;

/// Whether an entry is embryonic (see the module documentation). `tcp`:
/// the entry is TCP (else UDP); `in_pkts`: packets seen from the client,
/// saturating.
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

    #[test]
    fn eviction_scans_a_whole_stripe() {
        assert_eq!(evict_scan_buckets(1 << 18, 64), 4096);
        assert_eq!(evict_scan_buckets(1 << 16, 64), 1024);
        assert_eq!(evict_scan_buckets(32, 64), 1);
        assert_eq!(evict_scan_buckets(1 << 8, 0), 256);
    }
}
