// SPDX-License-Identifier: GPL-2.0

//! Per-protocol connection state: the TCP state machine and timeouts, and
//! the state word every entry (TCP, UDP, SCTP) keeps.
//!
//! C counterparts: net/netfilter/ipvs/ip_vs_proto_tcp.c (`tcp_states`,
//! `tcp_timeouts`, `tcp_state_active_table`), ip_vs_proto_udp.c
//! (`udp_timeouts`) and `ip_vs_set_timeout` in ip_vs_ctl.c.
//!
//! The director sees only part of a TCP conversation, so this is not a TCP
//! implementation: it is IPVS's coarse tracker that decides how long an idle
//! entry is kept and whether it counts as active or inactive for the
//! least-connection schedulers.

#![forbid(unsafe_code)]

use super::sctp::{self, SctpEvent, SctpState};
use core::sync::atomic::{AtomicU32, AtomicU8, Ordering};

/// IPVS's TCP connection states, as listed by `ipvsadm -Lc`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum TcpState {
    /// Entry created, no segment classified yet.
    #[default]
    None,
    /// Data flowing.
    Established,
    /// Server side sent a SYN (seen in the output direction).
    SynSent,
    /// Client SYN seen, handshake not complete.
    SynRecv,
    /// One side closed.
    FinWait,
    /// Both sides closed.
    TimeWait,
    /// Reset or closed without handshake.
    Close,
    /// Client closed first (NAT view).
    CloseWait,
    /// Waiting for the last ACK.
    LastAck,
    /// Template / listening entry.
    Listen,
    /// SYN-ACK seen (used by the sync protocol and SYN proxies).
    Synack,
}

impl TcpState {
    /// Every state, in IPVS's numbering order (`IP_VS_TCP_S_*`).
    pub const ALL: [TcpState; 11] = [
        TcpState::None,
        TcpState::Established,
        TcpState::SynSent,
        TcpState::SynRecv,
        TcpState::FinWait,
        TcpState::TimeWait,
        TcpState::Close,
        TcpState::CloseWait,
        TcpState::LastAck,
        TcpState::Listen,
        TcpState::Synack,
    ];

    /// The name `ipvsadm -Lc` prints for the state.
    pub fn name(self) -> &'static str {
        match self {
            TcpState::None => "NONE",
            TcpState::Established => "ESTABLISHED",
            TcpState::SynSent => "SYN_SENT",
            TcpState::SynRecv => "SYN_RECV",
            TcpState::FinWait => "FIN_WAIT",
            TcpState::TimeWait => "TIME_WAIT",
            TcpState::Close => "CLOSE",
            TcpState::CloseWait => "CLOSE_WAIT",
            TcpState::LastAck => "LAST_ACK",
            TcpState::Listen => "LISTEN",
            TcpState::Synack => "SYNACK",
        }
    }

    /// IPVS's numeric value (`IP_VS_TCP_S_*`), used by the sync protocol and
    /// netlink.
    pub fn to_u16(self) -> u16 {
        match self {
            TcpState::None => 0,
            TcpState::Established => 1,
            TcpState::SynSent => 2,
            TcpState::SynRecv => 3,
            TcpState::FinWait => 4,
            TcpState::TimeWait => 5,
            TcpState::Close => 6,
            TcpState::CloseWait => 7,
            TcpState::LastAck => 8,
            TcpState::Listen => 9,
            TcpState::Synack => 10,
        }
    }

    /// Inverse of [`TcpState::to_u16`]; `None` for out-of-range values.
    pub fn from_u16(v: u16) -> Option<TcpState> {
        TcpState::ALL.get(usize::from(v)).copied()
    }
}

/// Which way a packet travels relative to the connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dir {
    /// Client to server, seen by the director; replies also pass it (NAT).
    Input,
    /// Server to client reply seen by the director (NAT only).
    Output,
    /// Client to server when replies bypass the director (DR, TUN).
    InputOnly,
}

/// What a packet's transport header tells its connection's tracker.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum L4Event {
    /// A TCP segment with these flags.
    Tcp(TcpFlags),
    /// A UDP datagram: UDP has no states.
    Udp,
    /// An SCTP packet of this event (`rvs_core::sctp`).
    Sctp(SctpEvent),
}

impl L4Event {
    /// The TCP flags of a TCP segment; `None` for other protocols.
    pub fn tcp(self) -> Option<TcpFlags> {
        match self {
            L4Event::Tcp(f) => Some(f),
            _ => None,
        }
    }

    /// Whether this packet may open a new connection: a TCP SYN (without
    /// ACK or RST), any UDP datagram, an SCTP INIT (IPVS's
    /// `tcp_conn_schedule`, `udp_conn_schedule`, `sctp_conn_schedule`);
    /// in sloppy mode any TCP segment but a reset and any SCTP packet but
    /// an ABORT, as IPVS's `sloppy_tcp` and `sloppy_sctp`. Anything else
    /// for no known connection goes to the local stack, which answers it
    /// with a reset or an ABORT.
    pub fn opens(self, sloppy: Sloppy) -> bool {
        match self {
            L4Event::Tcp(f) if sloppy.tcp => !f.rst,
            L4Event::Tcp(f) => f.syn && !f.ack && !f.rst,
            L4Event::Udp => true,
            L4Event::Sctp(ev) if sloppy.sctp => ev != SctpEvent::Abort,
            L4Event::Sctp(ev) => ev.opens(),
        }
    }
}

/// Which protocols open connections on any packet (the `sloppy_tcp` and
/// `sloppy_sctp` settings).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Sloppy {
    /// `sloppy_tcp`.
    pub tcp: bool,
    /// `sloppy_sctp`.
    pub sctp: bool,
}

/// The TCP header flags the state machine looks at.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TcpFlags {
    /// SYN.
    pub syn: bool,
    /// ACK.
    pub ack: bool,
    /// FIN.
    pub fin: bool,
    /// RST.
    pub rst: bool,
}

impl TcpFlags {
    /// Decodes the flags byte of a TCP header (byte 13: CWR ECE URG ACK PSH
    /// RST SYN FIN from high to low bit).
    pub fn from_byte(b: u8) -> TcpFlags {
        TcpFlags {
            fin: b & 0x01 != 0,
            syn: b & 0x02 != 0,
            rst: b & 0x04 != 0,
            ack: b & 0x10 != 0,
        }
    }
}

/// The event a segment represents; IPVS classifies by the first of RST,
/// SYN, FIN, ACK that is set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Event {
    Syn,
    Fin,
    Ack,
    Rst,
}

fn event(f: TcpFlags) -> Option<Event> {
    if f.rst {
        Some(Event::Rst)
    } else if f.syn {
        Some(Event::Syn)
    } else if f.fin {
        Some(Event::Fin)
    } else if f.ack {
        Some(Event::Ack)
    } else {
        None
    }
}

/// Whether a client segment with `flags` that matches an entry in `state`
/// opens a new connection instead of continuing the entry's: a SYN after
/// the old connection ended, its client port reused. The new connection
/// is scheduled afresh, as IPVS does by its `conn_reuse_mode`: any
/// non-zero mode when the old one is in TIME_WAIT or CLOSE, bit 2 also in
/// FIN_WAIT when no reply was seen (`no_reply`: the last state Direct
/// Routing sees); with 0 the SYN follows the old entry to its server.
pub fn syn_reopens(state: TcpState, flags: TcpFlags, reuse_mode: u32, no_reply: bool) -> bool {
    let plain_syn = flags.syn && !flags.ack && !flags.rst;
    let ended = match state {
        TcpState::TimeWait | TcpState::Close => true,
        TcpState::FinWait => reuse_mode & 2 != 0 && no_reply,
        _ => false,
    };
    reuse_mode != 0 && plain_syn && ended
}

/// Next TCP state after a segment with `flags` travelling in `dir`, as
/// IPVS's `tcp_states` table (not the anti-DoS variant) defines it.
///
/// A segment without any of SYN/ACK/FIN/RST moves the entry to CLOSE, as in
/// IPVS. RST wins over SYN, SYN over FIN, FIN over ACK. The caller that
/// tracks "no output seen yet" (IPVS's NOOUTPUT flag) passes
/// [`Dir::InputOnly`] for input packets until the first reply is seen.
pub fn tcp_transition(state: TcpState, dir: Dir, flags: TcpFlags) -> TcpState {
    use TcpState::*;
    let Some(ev) = event(flags) else {
        return Close;
    };
    match (dir, ev) {
        // A client SYN opens (or reopens) the connection; a SYN during the
        // handshake or on an established entry keeps those states.
        (Dir::Input | Dir::InputOnly, Event::Syn) => match state {
            Established | SynSent => Established,
            _ => SynRecv,
        },
        (Dir::Output, Event::Syn) => match state {
            Established => Established,
            SynRecv | Synack => SynRecv,
            Listen => Listen,
            _ => SynSent,
        },

        // FIN from the client. With replies visible (NAT) a FIN on an
        // established connection means the client closed first.
        (Dir::Input, Event::Fin) => match state {
            None | Close => Close,
            Established | CloseWait => CloseWait,
            SynSent => SynSent,
            SynRecv | FinWait | TimeWait | Synack => TimeWait,
            LastAck => LastAck,
            Listen => Listen,
        },
        // Without replies (DR/TUN) the director cannot tell who closed
        // first, so an established FIN just starts FIN_WAIT.
        (Dir::InputOnly, Event::Fin) => match state {
            None | Close => Close,
            Established | FinWait => FinWait,
            SynSent => SynSent,
            SynRecv | TimeWait | Synack => TimeWait,
            CloseWait => CloseWait,
            LastAck => LastAck,
            Listen => Listen,
        },
        (Dir::Output, Event::Fin) => match state {
            None | SynRecv | TimeWait | CloseWait | Synack => TimeWait,
            Established | FinWait => FinWait,
            SynSent => SynSent,
            Close => Close,
            LastAck => LastAck,
            Listen => Listen,
        },

        // ACK: completes handshakes; keeps closing states.
        (Dir::Input | Dir::InputOnly, Event::Ack) => match state {
            None | Established | SynRecv | Synack => Established,
            SynSent => SynSent,
            FinWait => FinWait,
            TimeWait => TimeWait,
            Close | LastAck => Close,
            CloseWait => CloseWait,
            Listen => Listen,
        },
        (Dir::Output, Event::Ack) => match state {
            None | Established | SynRecv | Listen | Synack => Established,
            SynSent => SynSent,
            FinWait => FinWait,
            TimeWait => TimeWait,
            Close => Close,
            CloseWait => CloseWait,
            LastAck => LastAck,
        },

        // RST. IPVS ignores a client RST during SYN_RECV and LAST_ACK (it
        // may be spoofed); the input-only table resets a SYNACK entry.
        (Dir::Input, Event::Rst) => match state {
            SynRecv | Synack => SynRecv,
            LastAck => LastAck,
            Listen => Listen,
            _ => Close,
        },
        (Dir::InputOnly, Event::Rst) => match state {
            SynRecv => SynRecv,
            LastAck => LastAck,
            Listen => Listen,
            _ => Close,
        },
        (Dir::Output, Event::Rst) => match state {
            SynSent => SynSent,
            TimeWait => TimeWait,
            _ => Close,
        },
    }
}

/// Whether a TCP entry in `state` counts towards the destination's active
/// connections (`ActiveConn`); all other states count as inactive
/// (`InActConn`). IPVS's `tcp_state_active_table`: ESTABLISHED and the
/// handshake states SYN_SENT, SYN_RECV, SYNACK. UDP entries are always
/// inactive.
pub fn is_active(state: TcpState) -> bool {
    matches!(
        state,
        TcpState::Established | TcpState::SynSent | TcpState::SynRecv | TcpState::Synack
    )
}

/// Idle timeouts in seconds, per TCP state and for UDP; per network
/// namespace in the module. Defaults are IPVS's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timeouts {
    /// NONE (IPVS: 2 s).
    pub tcp_none: u32,
    /// ESTABLISHED; set by `ipvsadm --set tcp`.
    pub tcp_established: u32,
    /// SYN_SENT.
    pub tcp_syn_sent: u32,
    /// SYN_RECV.
    pub tcp_syn_recv: u32,
    /// FIN_WAIT; set by `ipvsadm --set ... tcpfin`.
    pub tcp_fin_wait: u32,
    /// TIME_WAIT.
    pub tcp_time_wait: u32,
    /// CLOSE.
    pub tcp_close: u32,
    /// CLOSE_WAIT.
    pub tcp_close_wait: u32,
    /// LAST_ACK.
    pub tcp_last_ack: u32,
    /// LISTEN.
    pub tcp_listen: u32,
    /// SYNACK.
    pub tcp_synack: u32,
    /// Any UDP entry; set by `ipvsadm --set ... ... udp`.
    pub udp: u32,
}

impl Default for Timeouts {
    fn default() -> Timeouts {
        Timeouts {
            tcp_none: 2,
            tcp_established: 15 * 60,
            tcp_syn_sent: 2 * 60,
            tcp_syn_recv: 60,
            tcp_fin_wait: 2 * 60,
            tcp_time_wait: 2 * 60,
            tcp_close: 10,
            tcp_close_wait: 60,
            tcp_last_ack: 30,
            tcp_listen: 2 * 60,
            tcp_synack: 120,
            udp: 5 * 60,
        }
    }
}

/// Largest timeout accepted, in seconds: IPVS rejects values above
/// `INT_MAX / HZ`; with HZ up to 1000 this bound is safe for any HZ.
pub const TIMEOUT_MAX_SECS: u32 = (i32::MAX as u32) / 1000;

impl Timeouts {
    /// Timeout in seconds for a TCP entry in `state`.
    pub fn timeout_for(&self, state: TcpState) -> u32 {
        match state {
            TcpState::None => self.tcp_none,
            TcpState::Established => self.tcp_established,
            TcpState::SynSent => self.tcp_syn_sent,
            TcpState::SynRecv => self.tcp_syn_recv,
            TcpState::FinWait => self.tcp_fin_wait,
            TcpState::TimeWait => self.tcp_time_wait,
            TcpState::Close => self.tcp_close,
            TcpState::CloseWait => self.tcp_close_wait,
            TcpState::LastAck => self.tcp_last_ack,
            TcpState::Listen => self.tcp_listen,
            TcpState::Synack => self.tcp_synack,
        }
    }

    /// `ipvsadm --set tcp`: ESTABLISHED timeout; 0 leaves it unchanged.
    pub fn set_tcp(&mut self, secs: u32) {
        if secs != 0 {
            self.tcp_established = secs;
        }
    }

    /// `ipvsadm --set ... tcpfin`: FIN_WAIT timeout; 0 leaves it unchanged.
    pub fn set_tcpfin(&mut self, secs: u32) {
        if secs != 0 {
            self.tcp_fin_wait = secs;
        }
    }

    /// `ipvsadm --set ... ... udp`: UDP timeout; 0 leaves it unchanged.
    pub fn set_udp(&mut self, secs: u32) {
        if secs != 0 {
            self.udp = secs;
        }
    }

    /// Applies all three `--set` values at once, after checking each against
    /// [`TIMEOUT_MAX_SECS`] (all or nothing, like IPVS's EINVAL).
    pub fn set_all(&mut self, tcp: u32, tcpfin: u32, udp: u32) -> Result<(), u32> {
        for v in [tcp, tcpfin, udp] {
            if v > TIMEOUT_MAX_SECS {
                return Err(v);
            }
        }
        self.set_tcp(tcp);
        self.set_tcpfin(tcpfin);
        self.set_udp(udp);
        Ok(())
    }
}

/// Which of its real server's counters a connection is counted in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Counted {
    /// ActiveConn ([`is_active`] states).
    Active,
    /// InActConn (every other state; UDP entries stay here).
    Inactive,
}

impl Counted {
    /// The counter of a connection in `state`.
    pub fn of(state: TcpState) -> Counted {
        if is_active(state) {
            Counted::Active
        } else {
            Counted::Inactive
        }
    }
}

/// A real server's connection counters, as [`ConnState`] moves them.
pub trait Counters {
    /// The counter for `c`.
    fn counter(&self, c: Counted) -> &AtomicU32;
}

/// The state of one connection entry, which also decides the counter of
/// its real server it is counted in: every move between ActiveConn,
/// InActConn and gone is made by the one atomic update of this word that
/// changed the state, so a packet's transition and the collector's removal
/// racing on one entry each account exactly once (IPVS takes a lock per
/// connection for this).
///
/// Counters are only ever decremented after the increment that put the
/// entry there (the increment comes before the state update that others
/// must see first, with release/acquire ordering), so they never
/// underflow; a racing reader may see an entry counted twice for an
/// instant, never missing twice.
#[derive(Debug)]
pub struct ConnState(AtomicU8);

/// The state word of an entry that left the table.
const GONE: u8 = u8::MAX;

impl Default for ConnState {
    fn default() -> Self {
        Self::new()
    }
}

/// SCTP states are kept in the word above TCP's, so that one word says
/// which counter an entry is in whatever its protocol.
const SCTP_BASE: u8 = 0x40;

fn word(s: TcpState) -> u8 {
    u8::try_from(s.to_u16()).unwrap_or(0)
}

fn sctp_word(s: SctpState) -> u8 {
    u8::try_from(s.to_u16()).map_or(SCTP_BASE, |n| SCTP_BASE | n)
}

fn state_of(w: u8) -> TcpState {
    TcpState::from_u16(u16::from(w)).unwrap_or(TcpState::None)
}

fn sctp_state_of(w: u8) -> SctpState {
    SctpState::from_u16(u16::from(w & !SCTP_BASE)).unwrap_or(SctpState::None)
}

/// The counter an entry whose state word is `w` is in.
fn counted(w: u8) -> Counted {
    if w & SCTP_BASE != 0 {
        if sctp_state_of(w).is_active() {
            Counted::Active
        } else {
            Counted::Inactive
        }
    } else {
        Counted::of(state_of(w))
    }
}

impl ConnState {
    /// A new TCP or UDP entry's state: NONE (inactive).
    pub const fn new() -> Self {
        Self(AtomicU8::new(0))
    }

    /// A new SCTP entry's state: SCTP's NONE (inactive).
    pub const fn new_sctp() -> Self {
        Self(AtomicU8::new(SCTP_BASE))
    }

    /// The TCP state; `None` once the entry left the table. An SCTP
    /// entry reads as TCP's NONE (see [`ConnState::get_sctp`]).
    pub fn get(&self) -> Option<TcpState> {
        let w = self.0.load(Ordering::Relaxed);
        (w != GONE).then(|| {
            if w & SCTP_BASE != 0 {
                TcpState::None
            } else {
                state_of(w)
            }
        })
    }

    /// The counter its server counts the entry in; `None` once the entry
    /// left the table.
    pub fn counted(&self) -> Option<Counted> {
        let w = self.0.load(Ordering::Relaxed);
        (w != GONE).then(|| counted(w))
    }

    /// The SCTP state of an SCTP entry; `None` for other entries and once
    /// the entry left the table.
    pub fn get_sctp(&self) -> Option<SctpState> {
        let w = self.0.load(Ordering::Relaxed);
        (w != GONE && w & SCTP_BASE != 0).then(|| sctp_state_of(w))
    }

    /// Counts a new entry in at its server; call once, before the entry
    /// is published.
    pub fn count_in(&self, counters: &impl Counters) {
        let w = self.0.load(Ordering::Relaxed);
        if w != GONE {
            counters.counter(counted(w)).fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Advances the state for a segment with `flags` travelling in `dir`
    /// and moves the connection between its server's counters if the new
    /// state counts elsewhere. Returns the new state; `None` (nothing
    /// changed, nothing counted) if the entry already left the table.
    pub fn advance(&self, dir: Dir, flags: TcpFlags, counters: &impl Counters) -> Option<TcpState> {
        let w = self.advance_word(counters, |w| word(tcp_transition(state_of(w), dir, flags)))?;
        Some(state_of(w))
    }

    /// [`ConnState::advance`] for an SCTP entry and a packet of event
    /// `ev` (`rvs_core::sctp`).
    pub fn advance_sctp(
        &self,
        dir: Dir,
        ev: SctpEvent,
        counters: &impl Counters,
    ) -> Option<SctpState> {
        let w = self.advance_word(counters, |w| {
            sctp_word(sctp::transition(sctp_state_of(w), dir, ev))
        })?;
        Some(sctp_state_of(w))
    }

    /// Sets the TCP state to `to` whatever it was (a sync record), moving
    /// the entry between its server's counters as [`ConnState::advance`]
    /// does. `None` if the entry left the table.
    pub fn set(&self, to: TcpState, counters: &impl Counters) -> Option<TcpState> {
        self.advance_word(counters, |_| word(to)).map(state_of)
    }

    /// [`ConnState::set`] for an SCTP entry.
    pub fn set_sctp(&self, to: SctpState, counters: &impl Counters) -> Option<SctpState> {
        self.advance_word(counters, |_| sctp_word(to))
            .map(sctp_state_of)
    }

    /// Moves the state word to `next(word)`, and the entry between its
    /// server's counters if the new word counts elsewhere, in one atomic
    /// update. Returns the new word; `None` if the entry left the table.
    fn advance_word(&self, counters: &impl Counters, next: impl Fn(u8) -> u8) -> Option<u8> {
        let mut old = self.0.load(Ordering::Acquire);
        loop {
            if old == GONE {
                return None;
            }
            let next = next(old);
            if next == old {
                return Some(old);
            }
            let (was, is) = (counted(old), counted(next));
            let moves = was != is;
            if moves {
                counters.counter(is).fetch_add(1, Ordering::Relaxed);
            }
            match self
                .0
                .compare_exchange_weak(old, next, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => {
                    if moves {
                        counters.counter(was).fetch_sub(1, Ordering::Relaxed);
                    }
                    return Some(next);
                }
                Err(seen) => {
                    if moves {
                        // Not moved after all: take back the increment.
                        counters.counter(is).fetch_sub(1, Ordering::Relaxed);
                    }
                    old = seen;
                }
            }
        }
    }

    /// The entry leaves the table: marks it gone and counts it out of the
    /// counter its last state was in. Returns that state, or `None` if it
    /// was gone already (then nothing is counted).
    pub fn retire(&self, counters: &impl Counters) -> Option<TcpState> {
        let w = self.0.swap(GONE, Ordering::AcqRel);
        if w == GONE {
            return None;
        }
        counters.counter(counted(w)).fetch_sub(1, Ordering::Relaxed);
        Some(if w & SCTP_BASE != 0 {
            TcpState::None
        } else {
            state_of(w)
        })
    }
}

#[cfg(test)]
mod reopen_tests {
    use super::*;

    fn flags(syn: bool, ack: bool, rst: bool) -> TcpFlags {
        TcpFlags {
            syn,
            ack,
            fin: false,
            rst,
        }
    }

    #[test]
    fn only_a_plain_syn_on_an_ended_entry_reopens() {
        let reopens = |s, f| syn_reopens(s, f, 1, true);
        for s in [TcpState::TimeWait, TcpState::Close] {
            assert!(reopens(s, flags(true, false, false)), "{s:?}");
            assert!(!reopens(s, flags(true, true, false)), "SYN-ACK {s:?}");
            assert!(!reopens(s, flags(true, false, true)), "SYN+RST {s:?}");
            assert!(!reopens(s, flags(false, true, false)), "ACK {s:?}");
            for mode in [2, 3] {
                assert!(syn_reopens(s, flags(true, false, false), mode, false));
            }
            // conn_reuse_mode 0: the SYN follows the old entry.
            assert!(!syn_reopens(s, flags(true, false, false), 0, true), "{s:?}");
        }
        for s in [
            TcpState::None,
            TcpState::Established,
            TcpState::SynSent,
            TcpState::SynRecv,
            TcpState::FinWait,
            TcpState::CloseWait,
            TcpState::LastAck,
            TcpState::Listen,
            TcpState::Synack,
        ] {
            assert!(!reopens(s, flags(true, false, false)), "{s:?}");
        }
    }

    #[test]
    fn reuse_mode_bit_2_reopens_fin_wait_without_replies() {
        let syn = flags(true, false, false);
        assert!(syn_reopens(TcpState::FinWait, syn, 2, true));
        assert!(syn_reopens(TcpState::FinWait, syn, 3, true));
        assert!(
            !syn_reopens(TcpState::FinWait, syn, 3, false),
            "a reply was seen"
        );
        assert!(
            !syn_reopens(TcpState::FinWait, syn, 1, true),
            "bit 2 not set"
        );
        assert!(!syn_reopens(
            TcpState::FinWait,
            flags(true, true, false),
            2,
            true
        ));
        assert!(!syn_reopens(TcpState::Established, syn, 3, true));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sloppy_mode_opens_on_any_packet_but_a_reset_or_abort() {
        let strict = Sloppy::default();
        let sloppy = Sloppy {
            tcp: true,
            sctp: true,
        };
        let f = |syn, ack, rst| {
            L4Event::Tcp(TcpFlags {
                syn,
                ack,
                rst,
                ..TcpFlags::default()
            })
        };
        assert!(f(true, false, false).opens(strict));
        for (ev, name) in [
            (f(false, true, false), "ACK"),
            (f(true, true, false), "SYN-ACK"),
        ] {
            assert!(!ev.opens(strict), "{name}");
            assert!(ev.opens(sloppy), "{name}");
        }
        assert!(!f(false, true, true).opens(sloppy), "a reset never opens");
        assert!(!f(true, false, true).opens(sloppy));
        assert!(L4Event::Udp.opens(strict));
        assert!(!L4Event::Sctp(SctpEvent::Data).opens(strict));
        assert!(L4Event::Sctp(SctpEvent::Data).opens(sloppy));
        assert!(L4Event::Sctp(SctpEvent::CookieEcho).opens(sloppy));
        assert!(!L4Event::Sctp(SctpEvent::Abort).opens(sloppy));
        let tcp_only = Sloppy {
            tcp: true,
            sctp: false,
        };
        assert!(!L4Event::Sctp(SctpEvent::Data).opens(tcp_only));
        // A sloppy entry opened by a client's ACK is established at once,
        // as in IPVS's table (NONE + ACK -> ESTABLISHED).
        let ack = TcpFlags {
            ack: true,
            ..TcpFlags::default()
        };
        assert_eq!(
            tcp_transition(TcpState::None, Dir::Input, ack),
            TcpState::Established
        );
        assert_eq!(
            tcp_transition(TcpState::None, Dir::InputOnly, ack),
            TcpState::Established
        );
    }
    use TcpState::*;

    const SYN: TcpFlags = TcpFlags {
        syn: true,
        ack: false,
        fin: false,
        rst: false,
    };
    const SYNACK: TcpFlags = TcpFlags {
        syn: true,
        ack: true,
        fin: false,
        rst: false,
    };
    const ACK: TcpFlags = TcpFlags {
        syn: false,
        ack: true,
        fin: false,
        rst: false,
    };
    const FINACK: TcpFlags = TcpFlags {
        syn: false,
        ack: true,
        fin: true,
        rst: false,
    };
    const RST: TcpFlags = TcpFlags {
        syn: false,
        ack: false,
        fin: false,
        rst: true,
    };

    fn run(mut s: TcpState, steps: &[(Dir, TcpFlags, TcpState)]) -> TcpState {
        for (i, (dir, flags, want)) in steps.iter().enumerate() {
            s = tcp_transition(s, *dir, *flags);
            assert_eq!(s, *want, "step {i}: {dir:?} {flags:?}");
        }
        s
    }

    #[test]
    fn names_and_numbers() {
        let names = [
            "NONE",
            "ESTABLISHED",
            "SYN_SENT",
            "SYN_RECV",
            "FIN_WAIT",
            "TIME_WAIT",
            "CLOSE",
            "CLOSE_WAIT",
            "LAST_ACK",
            "LISTEN",
            "SYNACK",
        ];
        for (i, s) in TcpState::ALL.iter().enumerate() {
            assert_eq!(s.name(), names[i]);
            assert_eq!(usize::from(s.to_u16()), i);
            assert_eq!(TcpState::from_u16(s.to_u16()), Some(*s));
        }
        assert_eq!(TcpState::from_u16(11), Option::None);
    }

    #[test]
    fn flags_byte() {
        assert_eq!(TcpFlags::from_byte(0x02), SYN);
        assert_eq!(TcpFlags::from_byte(0x12), SYNACK);
        assert_eq!(TcpFlags::from_byte(0x11), FINACK);
        assert!(TcpFlags::from_byte(0x14).rst);
        assert_eq!(TcpFlags::from_byte(0x18), ACK); // PSH|ACK
    }

    #[test]
    fn nat_handshake_and_client_close() {
        use Dir::*;
        run(
            None,
            &[
                (Input, SYN, SynRecv),
                (Output, SYNACK, SynRecv),
                (Input, ACK, Established),
                (Output, ACK, Established),
                (Input, FINACK, CloseWait),
                (Output, ACK, CloseWait),
                (Output, FINACK, TimeWait),
                (Input, ACK, TimeWait),
            ],
        );
    }

    #[test]
    fn nat_server_closes_first() {
        use Dir::*;
        run(
            Established,
            &[
                (Output, FINACK, FinWait),
                (Input, ACK, FinWait),
                (Input, FINACK, TimeWait),
                (Output, ACK, TimeWait),
            ],
        );
    }

    #[test]
    fn dr_handshake_and_close() {
        use Dir::*;
        run(
            None,
            &[
                (InputOnly, SYN, SynRecv),
                (InputOnly, ACK, Established),
                (InputOnly, ACK, Established),
                (InputOnly, FINACK, FinWait),
                (InputOnly, ACK, FinWait),
                (InputOnly, FINACK, FinWait),
            ],
        );
        // A new SYN on a finished tuple starts over.
        assert_eq!(tcp_transition(TimeWait, InputOnly, SYN), SynRecv);
        assert_eq!(tcp_transition(Close, InputOnly, SYN), SynRecv);
    }

    #[test]
    fn resets() {
        use Dir::*;
        assert_eq!(tcp_transition(Established, Input, RST), Close);
        assert_eq!(tcp_transition(Established, Output, RST), Close);
        assert_eq!(tcp_transition(Established, InputOnly, RST), Close);
        // Client RST while SYN_RECV is ignored; server RST is not.
        assert_eq!(tcp_transition(SynRecv, Input, RST), SynRecv);
        assert_eq!(tcp_transition(SynRecv, InputOnly, RST), SynRecv);
        assert_eq!(tcp_transition(SynRecv, Output, RST), Close);
        assert_eq!(tcp_transition(Synack, Input, RST), SynRecv);
        assert_eq!(tcp_transition(Synack, InputOnly, RST), Close);
        // RST dominates other flags.
        let rst_ack = TcpFlags { ack: true, ..RST };
        assert_eq!(tcp_transition(Established, Input, rst_ack), Close);
        // No flags at all: CLOSE, as IPVS.
        assert_eq!(
            tcp_transition(Established, Input, TcpFlags::default()),
            Close
        );
    }

    /// The whole IPVS table, row by row, for every state in numeric order
    /// (sNO sES sSS sSR sFW sTW sCL sCW sLA sLI sSA).
    #[test]
    fn full_table() {
        let t = |s: &str| match s {
            "NO" => None,
            "ES" => Established,
            "SS" => SynSent,
            "SR" => SynRecv,
            "FW" => FinWait,
            "TW" => TimeWait,
            "CL" => Close,
            "CW" => CloseWait,
            "LA" => LastAck,
            "LI" => Listen,
            "SA" => Synack,
            _ => panic!("{s}"),
        };
        let fin = TcpFlags {
            fin: true,
            ..TcpFlags::default()
        };
        let rows: [(Dir, TcpFlags, &str); 12] = [
            (Dir::Input, SYN, "SR ES ES SR SR SR SR SR SR SR SR"),
            (Dir::Input, fin, "CL CW SS TW TW TW CL CW LA LI TW"),
            (Dir::Input, ACK, "ES ES SS ES FW TW CL CW CL LI ES"),
            (Dir::Input, RST, "CL CL CL SR CL CL CL CL LA LI SR"),
            (Dir::Output, SYN, "SS ES SS SR SS SS SS SS SS LI SR"),
            (Dir::Output, fin, "TW FW SS TW FW TW CL TW LA LI TW"),
            (Dir::Output, ACK, "ES ES SS ES FW TW CL CW LA ES ES"),
            (Dir::Output, RST, "CL CL SS CL CL TW CL CL CL CL CL"),
            (Dir::InputOnly, SYN, "SR ES ES SR SR SR SR SR SR SR SR"),
            (Dir::InputOnly, fin, "CL FW SS TW FW TW CL CW LA LI TW"),
            (Dir::InputOnly, ACK, "ES ES SS ES FW TW CL CW CL LI ES"),
            (Dir::InputOnly, RST, "CL CL CL SR CL CL CL CL LA LI CL"),
        ];
        for (dir, flags, row) in rows {
            for (from, to) in TcpState::ALL.iter().zip(row.split(' ')) {
                assert_eq!(
                    tcp_transition(*from, dir, flags),
                    t(to),
                    "{dir:?} {flags:?} from {}",
                    from.name()
                );
            }
        }
    }

    #[test]
    fn activity() {
        let active: std::vec::Vec<_> = TcpState::ALL
            .iter()
            .filter(|s| is_active(**s))
            .map(|s| s.name())
            .collect();
        assert_eq!(active, ["ESTABLISHED", "SYN_SENT", "SYN_RECV", "SYNACK"]);
    }

    #[test]
    fn timeouts() {
        let mut t = Timeouts::default();
        assert_eq!(t.timeout_for(Established), 900);
        assert_eq!(t.timeout_for(SynSent), 120);
        assert_eq!(t.timeout_for(SynRecv), 60);
        assert_eq!(t.timeout_for(FinWait), 120);
        assert_eq!(t.timeout_for(TimeWait), 120);
        assert_eq!(t.timeout_for(Close), 10);
        assert_eq!(t.timeout_for(CloseWait), 60);
        assert_eq!(t.timeout_for(LastAck), 30);
        assert_eq!(t.timeout_for(Listen), 120);
        assert_eq!(t.timeout_for(Synack), 120);
        assert_eq!(t.timeout_for(None), 2);
        assert_eq!(t.udp, 300);
        t.set_tcp(0);
        t.set_tcpfin(0);
        t.set_udp(0);
        assert_eq!(t, Timeouts::default());
        t.set_tcp(7200);
        t.set_tcpfin(30);
        t.set_udp(5);
        assert_eq!(t.timeout_for(Established), 7200);
        assert_eq!(t.timeout_for(FinWait), 30);
        assert_eq!(t.udp, 5);
        assert_eq!(t.timeout_for(TimeWait), 120);
        let before = t;
        assert_eq!(t.set_all(1, u32::MAX, 1), Err(u32::MAX));
        assert_eq!(t, before);
        assert_eq!(t.set_all(0, 0, 60), Ok(()));
        assert_eq!(t.udp, 60);
        assert_eq!(t.tcp_established, 7200);
    }
}

#[cfg(test)]
mod accounting_tests {
    use super::*;
    use std::sync::atomic::AtomicBool;
    use std::vec::Vec;

    #[derive(Default)]
    struct Server {
        active: AtomicU32,
        inactive: AtomicU32,
    }

    impl Counters for Server {
        fn counter(&self, c: Counted) -> &AtomicU32 {
            match c {
                Counted::Active => &self.active,
                Counted::Inactive => &self.inactive,
            }
        }
    }

    fn f(syn: bool, ack: bool, fin: bool, rst: bool) -> TcpFlags {
        TcpFlags { syn, ack, fin, rst }
    }

    /// A small xorshift generator (no std rand in a no_std crate's tests).
    fn rng(seed: &mut u64) -> u64 {
        *seed ^= *seed << 13;
        *seed ^= *seed >> 7;
        *seed ^= *seed << 17;
        *seed
    }

    /// A sync record sets any state; the entry moves between its server's
    /// counters once, and a retired entry is left alone.
    #[test]
    fn a_synced_state_moves_the_counters() {
        let s = Server::default();
        let c = ConnState::new();
        c.count_in(&s);
        let counts = |s: &Server| {
            (
                s.active.load(Ordering::Relaxed),
                s.inactive.load(Ordering::Relaxed),
            )
        };
        assert_eq!(counts(&s), (0, 1));
        assert_eq!(
            c.set(TcpState::Established, &s),
            Some(TcpState::Established)
        );
        assert_eq!(counts(&s), (1, 0));
        assert_eq!(
            c.set(TcpState::Established, &s),
            Some(TcpState::Established)
        );
        assert_eq!(counts(&s), (1, 0));
        assert_eq!(c.set(TcpState::TimeWait, &s), Some(TcpState::TimeWait));
        assert_eq!(counts(&s), (0, 1));
        c.retire(&s);
        assert_eq!(c.set(TcpState::Established, &s), None);
        assert_eq!(counts(&s), (0, 0));
        let x = ConnState::new_sctp();
        x.count_in(&s);
        assert_eq!(
            x.set_sctp(SctpState::Established, &s),
            Some(SctpState::Established)
        );
        assert_eq!(counts(&s), (1, 0));
    }

    #[test]
    fn an_sctp_entry_is_active_only_while_established() {
        let s = Server::default();
        let c = ConnState::new_sctp();
        c.count_in(&s);
        let counts = |s: &Server| {
            (
                s.active.load(Ordering::Relaxed),
                s.inactive.load(Ordering::Relaxed),
            )
        };
        assert_eq!(counts(&s), (0, 1));
        assert_eq!(c.get_sctp(), Some(SctpState::None));
        assert_eq!(c.get(), Some(TcpState::None));
        let steps = [
            (Dir::Input, SctpEvent::Init, SctpState::Init1, (0, 1)),
            (
                Dir::Output,
                SctpEvent::InitAck,
                SctpState::CookieSent,
                (0, 1),
            ),
            (
                Dir::Input,
                SctpEvent::CookieEcho,
                SctpState::CookieReplied,
                (0, 1),
            ),
            (
                Dir::Output,
                SctpEvent::CookieAck,
                SctpState::Established,
                (1, 0),
            ),
            (Dir::Input, SctpEvent::Data, SctpState::Established, (1, 0)),
            (
                Dir::Input,
                SctpEvent::Shutdown,
                SctpState::ShutdownReceived,
                (0, 1),
            ),
        ];
        for (dir, ev, want, want_counts) in steps {
            assert_eq!(c.advance_sctp(dir, ev, &s), Some(want));
            assert_eq!(c.get_sctp(), Some(want));
            assert_eq!(counts(&s), want_counts, "{want:?}");
        }
        // Leaving the table while established counts it out of ActiveConn.
        let c2 = ConnState::new_sctp();
        c2.count_in(&s);
        c2.advance_sctp(Dir::InputOnly, SctpEvent::Init, &s);
        c2.advance_sctp(Dir::InputOnly, SctpEvent::CookieEcho, &s);
        assert_eq!(counts(&s), (1, 1));
        c2.retire(&s);
        assert_eq!(counts(&s), (0, 1));
        assert_eq!(c2.get_sctp(), None);
        assert_eq!(c2.advance_sctp(Dir::Input, SctpEvent::Data, &s), None);
        c.retire(&s);
        assert_eq!(counts(&s), (0, 0));
        // A TCP entry has no SCTP state.
        assert_eq!(ConnState::new().get_sctp(), None);
    }

    #[test]
    fn single_thread_moves() {
        let s = Server::default();
        let c = ConnState::new();
        c.count_in(&s);
        assert_eq!(s.inactive.load(Ordering::Relaxed), 1);
        let mut last = TcpState::None;
        for (dir, seg) in [
            (Dir::Input, f(true, false, false, false)),
            (Dir::Output, f(true, true, false, false)),
            (Dir::Input, f(false, true, false, false)),
            (Dir::Input, f(false, true, true, false)),
            (Dir::Output, f(false, false, false, true)),
        ] {
            last = c.advance(dir, seg, &s).unwrap();
            let want = match Counted::of(last) {
                Counted::Active => (1, 0),
                Counted::Inactive => (0, 1),
            };
            let got = (
                s.active.load(Ordering::Relaxed),
                s.inactive.load(Ordering::Relaxed),
            );
            assert_eq!(got, want, "{last:?}");
        }
        assert_eq!(c.retire(&s), Some(last));
        assert_eq!(
            (
                s.active.load(Ordering::Relaxed),
                s.inactive.load(Ordering::Relaxed)
            ),
            (0, 0)
        );
    }

    /// Packets of both directions on several threads race each other and
    /// the collector's removal of the same entries: once every entry is
    /// gone both counters are 0, and they never underflow meanwhile.
    #[test]
    fn racing_transitions_and_removal_account_exactly_once() {
        const CONNS: usize = 64;
        const ROUNDS: usize = 300;
        let segs = [
            f(true, false, false, false),
            f(true, true, false, false),
            f(false, true, false, false),
            f(false, true, true, false),
            f(false, false, false, true),
            f(false, false, false, false),
        ];
        for round in 0..ROUNDS {
            let server = Server::default();
            let conns: Vec<ConnState> = (0..CONNS).map(|_| ConnState::new()).collect();
            for c in &conns {
                c.count_in(&server);
            }
            let go = AtomicBool::new(false);
            let underflow = AtomicBool::new(false);
            std::thread::scope(|t| {
                for dir in [Dir::Input, Dir::Output, Dir::Input] {
                    let (server, conns, go) = (&server, &conns, &go);
                    t.spawn(move || {
                        let mut seed = (round as u64 + 1) * 0x9e37_79b9 + dir as u64 + 7;
                        while !go.load(Ordering::Acquire) {}
                        for _ in 0..4 {
                            for c in conns {
                                let seg = segs[(rng(&mut seed) % segs.len() as u64) as usize];
                                c.advance(dir, seg, server);
                            }
                        }
                    });
                }
                let (server, conns, go, underflow) = (&server, &conns, &go, &underflow);
                t.spawn(move || {
                    while !go.load(Ordering::Acquire) {}
                    for c in conns {
                        c.retire(server);
                        let (a, i) = (
                            server.active.load(Ordering::Relaxed),
                            server.inactive.load(Ordering::Relaxed),
                        );
                        if a as usize > 2 * CONNS || i as usize > 2 * CONNS {
                            underflow.store(true, Ordering::Relaxed);
                        }
                    }
                });
                go.store(true, Ordering::Release);
            });
            // Removing an entry twice must not count it out again.
            for c in &conns {
                assert_eq!(c.retire(&server), None);
                assert_eq!(c.get(), None);
            }
            assert!(
                !underflow.load(Ordering::Relaxed),
                "round {round}: a counter wrapped"
            );
            assert_eq!(
                (
                    server.active.load(Ordering::Relaxed),
                    server.inactive.load(Ordering::Relaxed)
                ),
                (0, 0),
                "round {round}: counters left after every entry went"
            );
        }
    }
}
