// SPDX-License-Identifier: GPL-2.0

//! The pure decisions of IPVS's sync daemon: when the master sends a
//! connection (`ip_vs_sync_conn_needed` and its callers), what a backup
//! makes of a record (`ip_vs_proc_conn`, `ip_vs_sync_validate_flags`), and
//! the daemon's sizes and settings (`start_sync_thread`,
//! `proc_do_sync_threshold`).
//!
//! Times are in the caller's ticks (jiffies in the module) with `hz` ticks
//! per second, and wrap as `unsigned long` does.
//!
//! # How the master walks a connection and its controllers
//!
//! `ip_vs_in_hook` calls `ip_vs_sync_conn(cp, pkts)` for every packet from
//! the client while the master runs, with `pkts` from [`in_hook_pkts`];
//! `ip_vs_conn_expire` calls it with `pkts` = `sync_threshold` when an
//! expired connection must live on (its timeout then 60 s). Version 1:
//!
//! 1. unless [`never_synced`], if [`sync_needed`] says so, append the
//!    record;
//! 2. then, in either case, if `cp->control` is set, repeat from 1 for the
//!    controller with `pkts` from [`control_pkts`].
//!
//! Version 0 (`ip_vs_sync_conn_v0`) returns at once when the connection is
//! [`never_synced`] or not [`sync_needed`], without visiting the
//! controller; only an appended record leads on to its controller.

#![forbid(unsafe_code)]

use super::super::config::AddrFamily;
use super::super::packet::{IPPROTO_SCTP, IPPROTO_TCP, IPPROTO_UDP};
use super::super::proto::TcpState;
use super::super::sctp::SctpState;
use super::{flags, Version};

/// Default `sync_threshold[0]` (`DEFAULT_SYNC_THRESHOLD`).
pub const DEFAULT_THRESHOLD: i32 = 3;
/// Default `sync_threshold[1]` (`DEFAULT_SYNC_PERIOD`).
pub const DEFAULT_PERIOD: i32 = 50;
/// Most `sync_retries` (the sysctl's `extra2`).
pub const MAX_RETRIES: i32 = 3;
/// A buffer is sent when full or after this long (`IPVS_SYNC_FLUSH_TIME`,
/// checked by `next_sync_buff` every `IPVS_SYNC_CHECK_PERIOD`, 1 s).
pub const FLUSH_TIME_SECS: u64 = 2;
/// The master thread is woken when this many buffers are queued
/// (`IPVS_SYNC_WAKEUP_RATE`), or 20 ms (`IPVS_SYNC_SEND_DELAY`, HZ / 50)
/// after the first.
pub const WAKEUP_RATE: u32 = 8;
/// A backup's timeout for a version 0 template, and for a record of a
/// protocol without a timeout table (`3*60*HZ` in `ip_vs_proc_conn`).
pub const FALLBACK_TIMEOUT_SECS: u32 = 3 * 60;
/// The timeout `ip_vs_conn_expire` gives an expired connection that is
/// still referenced, and syncs it with.
pub const EXPIRE_LATER_TIMEOUT_SECS: u32 = 60;

/// The sync knobs of net.ipv4.vs that the send decision reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SyncSettings {
    /// `sync_threshold[0]`: the packet count (modulo the period) at which
    /// a connection is sent.
    pub threshold: i32,
    /// `sync_threshold[1]` ("sync_period"): 0 sends only at the threshold
    /// itself.
    pub period: i32,
    /// `sync_refresh_period`, in ticks (the sysctl is in seconds); 0: off.
    pub refresh_period: u32,
    /// `sync_retries`, 0..=3: resends within a refresh period.
    pub retries: i32,
    /// `sync_persist_mode`: connections under a persistence template are
    /// not sent, only the templates.
    pub persist_mode: bool,
}

impl Default for SyncSettings {
    /// IPVS's defaults (`ip_vs_control_net_init_sysctl`).
    fn default() -> SyncSettings {
        SyncSettings {
            threshold: DEFAULT_THRESHOLD,
            period: DEFAULT_PERIOD,
            refresh_period: 0,
            retries: 0,
            persist_mode: false,
        }
    }
}

/// Whether `sync_threshold` may be set to `threshold period`
/// (`proc_do_sync_threshold`): neither negative, and the threshold below
/// the period unless the period is 0.
pub fn valid_threshold(threshold: i32, period: i32) -> bool {
    threshold >= 0 && period >= 0 && (threshold < period || period == 0)
}

/// Whether `sync_retries` may be set to `v` (`proc_dointvec_minmax`, 0..=3).
pub fn valid_retries(v: i32) -> bool {
    (0..=MAX_RETRIES).contains(&v)
}

/// The `pkts` `ip_vs_in_hook` passes for a packet of a connection:
/// the threshold for one-packet entries (which [`never_synced`] then
/// skips, but whose template is still visited), else the connection's
/// incoming packet count after counting this packet.
pub fn in_hook_pkts(one_packet: bool, in_pkts_after_inc: i32, s: &SyncSettings) -> i32 {
    if one_packet {
        s.threshold
    } else {
        in_pkts_after_inc
    }
}

/// The `pkts` for a connection's controller (`ip_vs_sync_conn`, label
/// `control`): a template counts its own packets (IPVS increments its
/// `in_pkts` here and passes the new value); another controller (an FTP
/// control connection) is passed the threshold.
pub fn control_pkts(template: bool, ct_in_pkts_after_inc: i32, s: &SyncSettings) -> i32 {
    if template {
        ct_in_pkts_after_inc
    } else {
        s.threshold
    }
}

/// Connections never sent whatever the counts: one-packet entries, and in
/// version 0 anything but IPv4 (`ip_vs_sync_conn`, `ip_vs_sync_conn_v0`).
pub fn never_synced(version: Version, conn_flags: u32, af: AddrFamily) -> bool {
    conn_flags & flags::ONE_PACKET != 0 || (version == Version::V0 && af != AddrFamily::Inet)
}

/// What the send decision looks at in a connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SyncConn {
    /// A persistence template (`IP_VS_CONN_F_TEMPLATE`).
    pub template: bool,
    /// A template controls it, directly or up its chain of controllers
    /// (`in_persistence`).
    pub in_persistence: bool,
    /// IP protocol.
    pub protocol: u8,
    /// IPVS's state number now.
    pub state: u16,
    /// The state when it was last sent (`old_state`; 0 when created, and
    /// set to `state` by a backup that applies a record).
    pub old_state: u16,
    /// Its timeout in ticks (`cp->timeout`).
    pub timeout: u64,
    /// `sync_endtime`: the expiry last sent, in ticks, rounded down to a
    /// multiple of 4 whose low 2 bits count retries; `now & !3` when
    /// created.
    pub sync_endtime: u64,
}

/// The outcome of [`sync_needed`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SyncNeed {
    /// Not now.
    Skip,
    /// Set `old_state` to `state` and compare-and-swap `sync_endtime` from
    /// the value read ([`SyncConn::sync_endtime`]) to `endtime`; send the
    /// record if the swap succeeded or `force` is set (another CPU sending
    /// the same expiry meanwhile makes this one redundant, unless the state
    /// changed).
    Send {
        /// The new `sync_endtime`.
        endtime: u64,
        /// The state changed since it was last sent.
        force: bool,
    },
}

/// Whether a TCP connection in `state` is ever sent (`ip_vs_sync_conn_needed`):
/// ESTABLISHED, FIN_WAIT, CLOSE, CLOSE_WAIT, TIME_WAIT.
fn tcp_syncs(state: u16) -> bool {
    [
        TcpState::Established,
        TcpState::FinWait,
        TcpState::Close,
        TcpState::CloseWait,
        TcpState::TimeWait,
    ]
    .iter()
    .any(|s| s.to_u16() == state)
}

/// Whether an SCTP association in `state` is ever sent: ESTABLISHED,
/// SHUTDOWN_SENT, SHUTDOWN_RECEIVED, SHUTDOWN_ACK_SENT, CLOSED.
fn sctp_syncs(state: u16) -> bool {
    [
        SctpState::Established,
        SctpState::ShutdownSent,
        SctpState::ShutdownReceived,
        SctpState::ShutdownAckSent,
        SctpState::Closed,
    ]
    .iter()
    .any(|s| s.to_u16() == state)
}

/// Whether a full resynchronisation (`super::resync`) sends a connection
/// of `protocol` in `state`: templates, and connections in the states
/// [`sync_needed`] ever sends (TCP and SCTP established or ending; other
/// protocols always).
pub fn resync_sends(template: bool, protocol: u8, state: u16) -> bool {
    template
        || match protocol {
            IPPROTO_TCP => tcp_syncs(state),
            IPPROTO_SCTP => sctp_syncs(state),
            _ => true,
        }
}

/// Whether `a` is before `b` on a wrapping clock (`time_before`).
fn time_before(a: u64, b: u64) -> bool {
    (a.wrapping_sub(b) as i64) < 0
}

/// Whether connection `c` is to be sent now, `pkts` being the count its
/// caller passes ([`in_hook_pkts`], [`control_pkts`]), at time `now`
/// (`ip_vs_sync_conn_needed`):
///
/// - templates always qualify; connections under a template do not with
///   `sync_persist_mode`; TCP and SCTP only in the states that end or
///   confirm them, and a change into one of these other than ESTABLISHED
///   is sent at once; UDP and others always qualify;
/// - with `sync_refresh_period`, a connection whose expiry moved by less
///   than that period and than half its timeout (at least 10 s) is not
///   resent, except for `sync_retries` resends spaced by an eighth of the
///   period;
/// - then a connection (not a template) is sent only when `pkts` modulo
///   the period equals the threshold; with period 0, only when `pkts`
///   equals it, unless a refresh period is set.
pub fn sync_needed(s: &SyncSettings, c: &SyncConn, pkts: i32, now: u64, hz: u64) -> SyncNeed {
    let orig = c.sync_endtime;
    let mut n = now.wrapping_add(c.timeout) & !3;
    let send = |n: u64, force: bool| SyncNeed::Send { endtime: n, force };

    let force = if c.template {
        false
    } else if s.persist_mode && c.in_persistence {
        return SyncNeed::Skip;
    } else if c.protocol == IPPROTO_TCP || c.protocol == IPPROTO_SCTP {
        let qualifies = if c.protocol == IPPROTO_TCP {
            tcp_syncs(c.state)
        } else {
            sctp_syncs(c.state)
        };
        if !qualifies {
            return SyncNeed::Skip;
        }
        let established = if c.protocol == IPPROTO_TCP {
            TcpState::Established.to_u16()
        } else {
            SctpState::Established.to_u16()
        };
        let changed = c.state != c.old_state;
        if changed && c.state != established {
            return send(n, true);
        }
        changed
    } else {
        false
    };

    if s.refresh_period > 0 {
        let diff = n.wrapping_sub(orig) as i64;
        let min_diff = (c.timeout >> 1).max(hz.wrapping_mul(10)) as i64;
        if diff.wrapping_abs() < i64::from(s.refresh_period).min(min_diff) {
            let retries = orig & 3;
            if retries >= u64::try_from(s.retries).unwrap_or(0) {
                return SyncNeed::Skip;
            }
            let first_retry = orig
                .wrapping_sub(c.timeout)
                .wrapping_add(u64::from(s.refresh_period >> 3));
            if time_before(now, first_retry) {
                return SyncNeed::Skip;
            }
            n |= retries.wrapping_add(1);
        }
    }
    if s.period > 0 {
        if !c.template && pkts.checked_rem(s.period) != Some(s.threshold) {
            return SyncNeed::Skip;
        }
    } else if s.refresh_period == 0 && pkts != s.threshold {
        return SyncNeed::Skip;
    }
    send(n, force)
}

/// Whether a buffer first used at `firstuse` is due to be sent at `now`
/// although not full (`get_curr_sync_buff` with `IPVS_SYNC_FLUSH_TIME`).
pub fn flush_due(firstuse: u64, now: u64, hz: u64) -> bool {
    let age = now.wrapping_sub(firstuse);
    !time_before(age, hz.wrapping_mul(FLUSH_TIME_SECS))
}

/// The message size limit a daemon uses (`start_sync_thread`): the
/// requested `--sync-maxlen` clamped to 1..=65535 less the IP and UDP
/// headers for a master and to 1024..=that for a backup; if none was
/// requested, 1500 less the headers for a master (not the interface's
/// MTU) and the interface's MTU, clamped to 1500..=65535, less the headers
/// for a backup. A backup receives into a buffer of this size, so a longer
/// datagram arrives truncated and fails the size check.
pub fn sync_maxlen(requested: u16, dev_mtu: u32, group_v6: bool, backup: bool) -> u16 {
    // IPv6 or IPv4 header, and the UDP header.
    let hlen: u16 = if group_v6 { 40 + 8 } else { 20 + 8 };
    let (mtu, min_mtu) = if backup {
        (dev_mtu.clamp(1500, 65535) as u16, 1024)
    } else {
        (1500, 1)
    };
    if requested != 0 {
        requested.clamp(min_mtu, u16::MAX.saturating_sub(hlen))
    } else {
        mtu.saturating_sub(hlen)
    }
}

/// Whether a backup whose syncid is `own` reads a message from `got`
/// (`ip_vs_process_message`: 0 reads all).
pub fn accepts_syncid(own: u8, got: u8) -> bool {
    own == 0 || own == got
}

/// Whether a backup accepts a record's flags (`ip_vs_sync_validate_flags`):
/// not a template without client port (lookups would hit it), not a
/// one-packet entry.
pub fn valid_flags(wire: u32) -> bool {
    let no_cport_template = flags::NO_CPORT | flags::TEMPLATE;
    wire & no_cport_template != no_cport_template && wire & flags::ONE_PACKET == 0
}

/// The number of states of a protocol rvs handles (`pp->num_states`), or
/// `None` for one it does not (the backup refuses it as IPVS refuses a
/// protocol without `ip_vs_proto_get`; rvs has no AH/ESP).
pub fn num_states(protocol: u8) -> Option<u16> {
    let n = match protocol {
        IPPROTO_TCP => TcpState::ALL.len(),
        IPPROTO_UDP => 1,
        IPPROTO_SCTP => SctpState::ALL.len(),
        _ => return None,
    };
    u16::try_from(n).ok()
}

/// The flags a backup gives a connection it creates from a record
/// (`ip_vs_proc_sync_conn`): forwarding method, NOOUTPUT, INACTIVE, SEQ
/// bits, NO_CPORT and TEMPLATE are kept, SYNC added.
pub fn backup_flags(wire: u32) -> u32 {
    (wire & flags::BACKUP_MASK) | flags::SYNC
}

/// The flags of an existing connection `existing` updated by a record
/// whose [`backup_flags`] are `received` (`ip_vs_proc_conn`): only INACTIVE
/// and the SEQ bits change.
pub fn updated_flags(existing: u32, received: u32) -> u32 {
    (received & flags::BACKUP_UPD_MASK) | (existing & !flags::BACKUP_UPD_MASK)
}

/// What a backup does with a record for a connection it already has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Existing {
    /// Update it in place ([`updated_flags`], state, timeout, sequence
    /// data; bind it to a real server if unbound).
    Update,
    /// Expire it now and create the connection afresh: the master
    /// rescheduled the client to another real server.
    Replace,
    /// Drop the record: it is the expiry message of the connection the
    /// master has already replaced.
    Ignore,
}

/// [`Existing`] for a record with [`backup_flags`] `received`, `same_dest`
/// telling whether the connection found has the record's real server
/// address and port (`ip_vs_proc_conn`). Templates are looked up by
/// `ip_vs_ct_in_get` and always updated.
pub fn on_existing(received: u32, same_dest: bool) -> Existing {
    if received & flags::TEMPLATE != 0 || same_dest {
        Existing::Update
    } else if received & flags::INACTIVE == 0 {
        Existing::Replace
    } else {
        Existing::Ignore
    }
}

/// How an update moves the real server's active connection count.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ActiveChange {
    /// No change.
    None,
    /// One more active (INACTIVE cleared).
    Inc,
    /// One fewer active (INACTIVE set).
    Dec,
}

/// The active-count change when an existing connection with flags
/// `existing`, bound to a real server or not, takes a record's
/// [`backup_flags`] `received` (`ip_vs_proc_conn`). Inactive counts are
/// left alone, as IPVS leaves them.
pub fn active_change(existing: u32, received: u32, bound: bool) -> ActiveChange {
    if (existing ^ received) & flags::INACTIVE == 0 || received & flags::TEMPLATE != 0 || !bound {
        ActiveChange::None
    } else if received & flags::INACTIVE != 0 {
        ActiveChange::Dec
    } else {
        ActiveChange::Inc
    }
}

/// The timeout in seconds a backup gives a connection from a record
/// (`ip_vs_proc_conn`): the record's (version 1); else, for version 0's
/// 0, `state_timeout` (the protocol's timeout for the record's state, or
/// `None` for templates and protocols without a table), falling back to
/// 3 minutes. IPVS clamps the record's to `MAX_SCHEDULE_TIMEOUT / HZ`
/// seconds, which no u32 reaches on a 64-bit kernel.
pub fn backup_timeout(record_timeout: u32, template: bool, state_timeout: Option<u32>) -> u32 {
    match (record_timeout, template, state_timeout) {
        (0, false, Some(t)) => t,
        (0, _, _) => FALLBACK_TIMEOUT_SECS,
        (t, _, _) => t,
    }
}

/// The incoming packet count a backup gives a connection it creates or
/// updates (`ip_vs_proc_conn`: `sync_threshold`), so that it is sent at
/// once if this director becomes master. Its state and `old_state` are
/// both set to the record's.
pub fn backup_in_pkts(s: &SyncSettings) -> i32 {
    s.threshold
}

#[cfg(test)]
mod tests {
    use super::*;

    const HZ: u64 = 250;
    const TCP: u8 = IPPROTO_TCP;

    fn est() -> u16 {
        TcpState::Established.to_u16()
    }

    /// An established TCP connection last sent long ago (its
    /// `sync_endtime` as set when created, an hour back).
    fn conn(now: u64) -> SyncConn {
        SyncConn {
            template: false,
            in_persistence: false,
            protocol: TCP,
            state: est(),
            old_state: est(),
            timeout: 900 * HZ,
            sync_endtime: now.wrapping_sub(3600 * HZ) & !3,
        }
    }

    fn sent(s: &SyncSettings, c: &SyncConn, pkts: i32, now: u64) -> bool {
        matches!(sync_needed(s, c, pkts, now, HZ), SyncNeed::Send { .. })
    }

    #[test]
    fn defaults_send_at_3_53_103() {
        let s = SyncSettings::default();
        let now = 1_000_000;
        let c = conn(now);
        let hits: std::vec::Vec<i32> = (0..200).filter(|&p| sent(&s, &c, p, now)).collect();
        assert_eq!(hits, [3, 53, 103, 153]);
        assert_eq!(
            sync_needed(&s, &c, 3, now, HZ),
            SyncNeed::Send {
                endtime: (now + 900 * HZ) & !3,
                force: false
            }
        );
        // A wrapped (negative) counter: C's % keeps the sign.
        assert!(!sent(&s, &c, -47, now));
        assert!(sent(&s, &c, 2_000_000_003, now));
    }

    #[test]
    fn tcp_states_that_sync() {
        let s = SyncSettings::default();
        let now = 5000;
        for st in TcpState::ALL {
            let c = SyncConn {
                state: st.to_u16(),
                old_state: st.to_u16(),
                ..conn(now)
            };
            let want = matches!(
                st,
                TcpState::Established
                    | TcpState::FinWait
                    | TcpState::Close
                    | TcpState::CloseWait
                    | TcpState::TimeWait
            );
            assert_eq!(sent(&s, &c, 3, now), want, "{st:?}");
        }
    }

    #[test]
    fn a_change_into_a_closing_state_is_sent_at_once() {
        let s = SyncSettings::default();
        let now = 77;
        for st in [
            TcpState::FinWait,
            TcpState::Close,
            TcpState::CloseWait,
            TcpState::TimeWait,
        ] {
            let c = SyncConn {
                state: st.to_u16(),
                ..conn(now)
            };
            assert_eq!(
                sync_needed(&s, &c, 7, now, HZ),
                SyncNeed::Send {
                    endtime: (now + 900 * HZ) & !3,
                    force: true
                }
            );
        }
        // A change into ESTABLISHED waits for the count, then is forced.
        let c = SyncConn {
            old_state: TcpState::SynRecv.to_u16(),
            ..conn(now)
        };
        assert_eq!(sync_needed(&s, &c, 2, now, HZ), SyncNeed::Skip);
        assert!(matches!(
            sync_needed(&s, &c, 3, now, HZ),
            SyncNeed::Send { force: true, .. }
        ));
    }

    #[test]
    fn sctp_states_that_sync() {
        let s = SyncSettings::default();
        for st in SctpState::ALL {
            let c = SyncConn {
                protocol: IPPROTO_SCTP,
                state: st.to_u16(),
                old_state: st.to_u16(),
                ..conn(0)
            };
            let want = matches!(
                st,
                SctpState::Established
                    | SctpState::ShutdownSent
                    | SctpState::ShutdownReceived
                    | SctpState::ShutdownAckSent
                    | SctpState::Closed
            );
            assert_eq!(sent(&s, &c, 3, 0), want, "{st:?}");
        }
        let c = SyncConn {
            protocol: IPPROTO_SCTP,
            state: SctpState::ShutdownSent.to_u16(),
            old_state: SctpState::Established.to_u16(),
            ..conn(0)
        };
        assert!(matches!(
            sync_needed(&s, &c, 9, 0, HZ),
            SyncNeed::Send { force: true, .. }
        ));
    }

    #[test]
    fn udp_templates_and_persistence() {
        let s = SyncSettings::default();
        let udp = SyncConn {
            protocol: IPPROTO_UDP,
            state: 0,
            old_state: 0,
            ..conn(0)
        };
        assert!(sent(&s, &udp, 3, 0) && sent(&s, &udp, 53, 0) && !sent(&s, &udp, 4, 0));
        // Templates ignore the period (their count is their own packets).
        let tpl = SyncConn {
            template: true,
            state: 0,
            old_state: 1,
            ..udp
        };
        assert!((0..60).all(|p| sent(&s, &tpl, p, 0)));
        assert_eq!(
            sync_needed(&s, &tpl, 9, 0, HZ),
            SyncNeed::Send {
                endtime: 900 * HZ,
                force: false
            }
        );
        // sync_persist_mode: connections under a template stay home.
        let under = SyncConn {
            in_persistence: true,
            ..conn(0)
        };
        assert!(sent(&s, &under, 3, 0));
        let pm = SyncSettings {
            persist_mode: true,
            ..s
        };
        assert!(!sent(&pm, &under, 3, 0));
        assert!(sent(&pm, &tpl, 3, 0));
    }

    #[test]
    fn period_0_sends_once() {
        let s = SyncSettings {
            period: 0,
            ..SyncSettings::default()
        };
        let c = conn(0);
        let hits: std::vec::Vec<i32> = (0..200).filter(|&p| sent(&s, &c, p, 0)).collect();
        assert_eq!(hits, [3]);
        // Templates too.
        let tpl = SyncConn {
            template: true,
            ..c
        };
        assert!(sent(&s, &tpl, 3, 0) && !sent(&s, &tpl, 4, 0));
    }

    #[test]
    fn refresh_period_and_retries() {
        let now = 10_000_000u64;
        let s = SyncSettings {
            refresh_period: (60 * HZ) as u32,
            ..SyncSettings::default()
        };
        // Sent `ago` seconds back with `retries` so far: its endtime then.
        let at = |ago: u64, retries: u64| SyncConn {
            sync_endtime: ((now - ago * HZ + 900 * HZ) & !3) | retries,
            ..conn(now)
        };
        // Long ago: the count decides.
        assert!(sent(&s, &at(120, 0), 3, now));
        assert!(!sent(&s, &at(120, 0), 4, now));
        // Recently, no retries allowed: not resent.
        assert!(!sent(&s, &at(10, 0), 3, now));
        let r2 = SyncSettings { retries: 2, ..s };
        // Retries allowed, an eighth of the period (7.5 s) passed: resent
        // with the retry counted in the low bits.
        assert_eq!(
            sync_needed(&r2, &at(10, 0), 3, now, HZ),
            SyncNeed::Send {
                endtime: ((now + 900 * HZ) & !3) | 1,
                force: false
            }
        );
        assert_eq!(
            sync_needed(&r2, &at(10, 1), 3, now, HZ),
            SyncNeed::Send {
                endtime: ((now + 900 * HZ) & !3) | 2,
                force: false
            }
        );
        // Too soon for a retry, or retries used up.
        assert!(!sent(&r2, &at(5, 0), 3, now));
        assert!(!sent(&r2, &at(10, 2), 3, now));
        // Half the timeout bounds the period: with a 20 s timeout the
        // floor is 10 s, so a 15 s old send is resent.
        let short = |ago: u64| SyncConn {
            timeout: 20 * HZ,
            sync_endtime: (now - ago * HZ + 20 * HZ) & !3,
            ..conn(now)
        };
        assert!(!sent(&s, &short(5), 3, now));
        assert!(sent(&s, &short(15), 3, now));
        // With a refresh period and period 0, the count does not matter.
        let p0 = SyncSettings { period: 0, ..s };
        assert!(sent(&p0, &at(120, 0), 4, now));
        assert!(!sent(&p0, &at(10, 0), 4, now));
        // A state change into a closing state skips all of this.
        let closing = SyncConn {
            state: TcpState::FinWait.to_u16(),
            ..at(1, 0)
        };
        assert!(sent(&s, &closing, 4, now));
    }

    #[test]
    fn wrapping_clock() {
        let s = SyncSettings {
            refresh_period: (60 * HZ) as u32,
            retries: 1,
            ..SyncSettings::default()
        };
        let now = 5u64; // just after the clock wrapped
        let c = SyncConn {
            sync_endtime: (now.wrapping_sub(10 * HZ).wrapping_add(900 * HZ)) & !3,
            ..conn(now)
        };
        assert!(matches!(
            sync_needed(&s, &c, 3, now, HZ),
            SyncNeed::Send { endtime, .. } if endtime & 3 == 1
        ));
        assert!(flush_due(u64::MAX - 10, 2 * HZ, HZ));
        assert!(!flush_due(u64::MAX - 10, 2 * HZ - 12, HZ));
    }

    #[test]
    fn callers_pkts() {
        let s = SyncSettings::default();
        assert_eq!(in_hook_pkts(true, 77, &s), 3);
        assert_eq!(in_hook_pkts(false, 77, &s), 77);
        assert_eq!(control_pkts(true, 9, &s), 9);
        assert_eq!(control_pkts(false, 9, &s), 3);
        let v4 = AddrFamily::Inet;
        let v6 = AddrFamily::Inet6;
        assert!(never_synced(Version::V1, flags::ONE_PACKET, v4));
        assert!(!never_synced(Version::V1, flags::TEMPLATE, v6));
        assert!(never_synced(Version::V0, 0, v6));
        assert!(!never_synced(Version::V0, 0, v4));
    }

    #[test]
    fn settings() {
        assert!(valid_threshold(3, 50));
        assert!(valid_threshold(0, 0));
        assert!(valid_threshold(5, 0));
        assert!(valid_threshold(49, 50));
        assert!(!valid_threshold(50, 50));
        assert!(!valid_threshold(-1, 50));
        assert!(!valid_threshold(3, -1));
        assert!((0..=3).all(valid_retries));
        assert!(!valid_retries(-1) && !valid_retries(4));
        let d = SyncSettings::default();
        assert_eq!(
            (d.threshold, d.period, d.refresh_period, d.retries),
            (3, 50, 0, 0)
        );
        assert!(!d.persist_mode);
    }

    #[test]
    fn maxlen() {
        // Master: 1500 whatever the device, unless asked.
        assert_eq!(sync_maxlen(0, 9000, false, false), 1472);
        assert_eq!(sync_maxlen(0, 1280, true, false), 1452);
        assert_eq!(sync_maxlen(1, 1500, false, false), 1);
        assert_eq!(sync_maxlen(65535, 1500, false, false), 65507);
        assert_eq!(sync_maxlen(65535, 1500, true, false), 65487);
        // Backup: the device's MTU, at least 1500; asked at least 1024.
        assert_eq!(sync_maxlen(0, 9000, false, true), 8972);
        assert_eq!(sync_maxlen(0, 1280, false, true), 1472);
        assert_eq!(sync_maxlen(0, 100_000, false, true), 65507);
        assert_eq!(sync_maxlen(100, 9000, false, true), 1024);
        assert_eq!(sync_maxlen(2000, 9000, false, true), 2000);
    }

    #[test]
    fn backup_side() {
        use flags::*;
        assert!(accepts_syncid(0, 9) && accepts_syncid(9, 9) && !accepts_syncid(8, 9));
        assert!(valid_flags(NO_CPORT) && valid_flags(TEMPLATE) && valid_flags(0));
        assert!(!valid_flags(NO_CPORT | TEMPLATE) && !valid_flags(ONE_PACKET));
        assert_eq!(num_states(IPPROTO_TCP), Some(11));
        assert_eq!(num_states(IPPROTO_UDP), Some(1));
        assert_eq!(num_states(IPPROTO_SCTP), Some(14));
        assert_eq!(num_states(1), None);
        // Kept: forwarding, NOOUTPUT, INACTIVE, SEQ, NO_CPORT, TEMPLATE;
        // dropped: HASHED, NFCT, BYPASS's neighbours above the mask; SYNC
        // added.
        let wire = 0xffff_ffff;
        assert_eq!(backup_flags(wire), 0x1f87 | SYNC);
        assert_eq!(backup_flags(DROUTE | HASHED | NFCT), DROUTE | SYNC);
        // Updates change INACTIVE and SEQ only.
        let existing = MASQ | SYNC | INACTIVE | NO_CPORT;
        let received = backup_flags(DROUTE | IN_SEQ);
        assert_eq!(
            updated_flags(existing, received),
            MASQ | SYNC | NO_CPORT | IN_SEQ
        );
        // An existing connection with another real server.
        assert_eq!(on_existing(SYNC, true), Existing::Update);
        assert_eq!(on_existing(SYNC, false), Existing::Replace);
        assert_eq!(on_existing(SYNC | INACTIVE, false), Existing::Ignore);
        assert_eq!(on_existing(SYNC | TEMPLATE, false), Existing::Update);
        // Active counts.
        assert_eq!(active_change(INACTIVE, 0, true), ActiveChange::Inc);
        assert_eq!(active_change(0, INACTIVE, true), ActiveChange::Dec);
        assert_eq!(active_change(0, INACTIVE, false), ActiveChange::None);
        assert_eq!(
            active_change(0, INACTIVE | TEMPLATE, true),
            ActiveChange::None
        );
        assert_eq!(active_change(INACTIVE, INACTIVE, true), ActiveChange::None);
        // Timeouts: the record's, else the state's, else 3 minutes.
        assert_eq!(backup_timeout(900, false, Some(60)), 900);
        assert_eq!(backup_timeout(900, true, None), 900);
        assert_eq!(backup_timeout(0, false, Some(60)), 60);
        assert_eq!(backup_timeout(0, true, Some(60)), 180);
        assert_eq!(backup_timeout(0, false, None), 180);
        assert_eq!(backup_in_pkts(&SyncSettings::default()), 3);
    }
}
