// SPDX-License-Identifier: GPL-2.0

//! SCTP, as a director sees it: the chunk that decides a packet's event,
//! IPVS's coarse association tracker and its timeouts, and the CRC32c a
//! NAT rewrite of a port must renew.
//!
//! C counterpart: net/netfilter/ipvs/ip_vs_proto_sctp.c (`sctp_events`,
//! `sctp_states`, `sctp_timeouts`, `sctp_state_name_table`).
//!
//! As for TCP, this is not an SCTP implementation: it keeps IPVS's table
//! of which chunk moves an entry to which state, so that an entry lives as
//! long as IPVS keeps it, counts as active only while established, and is
//! listed under IPVS's names.

#![forbid(unsafe_code)]

use super::packet::ParseError;
use super::proto::Dir;

/// The common header: ports, verification tag, checksum.
pub const HEADER_LEN: usize = 12;
/// Where the CRC32c lies in the common header.
pub const CHECKSUM_OFFSET: usize = 8;
/// A chunk's header: type, flags, length.
pub const CHUNK_HEADER_LEN: usize = 4;

/// Chunk types (RFC 9260, 3.2) the tracker tells apart.
mod chunk {
    pub(super) const DATA: u8 = 0;
    pub(super) const INIT: u8 = 1;
    pub(super) const INIT_ACK: u8 = 2;
    pub(super) const SACK: u8 = 3;
    pub(super) const HEARTBEAT: u8 = 4;
    pub(super) const HEARTBEAT_ACK: u8 = 5;
    pub(super) const ABORT: u8 = 6;
    pub(super) const SHUTDOWN: u8 = 7;
    pub(super) const SHUTDOWN_ACK: u8 = 8;
    pub(super) const ERROR: u8 = 9;
    pub(super) const COOKIE_ECHO: u8 = 10;
    pub(super) const COOKIE_ACK: u8 = 11;
    pub(super) const ECN_ECNE: u8 = 12;
    pub(super) const ECN_CWR: u8 = 13;
    pub(super) const SHUTDOWN_COMPLETE: u8 = 14;
}

/// What a packet means to the tracker: its first chunk's kind (IPVS's
/// `ipvs_sctp_event_t`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SctpEvent {
    /// DATA, SACK, HEARTBEAT(-ACK), ECN chunks and any unknown type.
    Data,
    /// INIT: the only chunk that opens an association.
    Init,
    /// INIT ACK.
    InitAck,
    /// COOKIE ECHO.
    CookieEcho,
    /// COOKIE ACK.
    CookieAck,
    /// SHUTDOWN.
    Shutdown,
    /// SHUTDOWN ACK.
    ShutdownAck,
    /// SHUTDOWN COMPLETE.
    ShutdownComplete,
    /// ERROR.
    Error,
    /// ABORT.
    Abort,
}

impl SctpEvent {
    /// The event of a packet whose first chunk is of type `first`; `next`
    /// is the second chunk's type, if the packet has one. A COOKIE ECHO or
    /// COOKIE ACK bundled with an ABORT behind it is an abort (RFC 9260
    /// 6.10 lets these be bundled; IPVS looks that one chunk further).
    pub fn of(first: u8, next: Option<u8>) -> SctpEvent {
        if looks_past(first) && next == Some(chunk::ABORT) {
            return SctpEvent::Abort;
        }
        match first {
            chunk::INIT => SctpEvent::Init,
            chunk::INIT_ACK => SctpEvent::InitAck,
            chunk::ABORT => SctpEvent::Abort,
            chunk::SHUTDOWN => SctpEvent::Shutdown,
            chunk::SHUTDOWN_ACK => SctpEvent::ShutdownAck,
            chunk::ERROR => SctpEvent::Error,
            chunk::COOKIE_ECHO => SctpEvent::CookieEcho,
            chunk::COOKIE_ACK => SctpEvent::CookieAck,
            chunk::SHUTDOWN_COMPLETE => SctpEvent::ShutdownComplete,
            chunk::DATA
            | chunk::SACK
            | chunk::HEARTBEAT
            | chunk::HEARTBEAT_ACK
            | chunk::ECN_ECNE
            | chunk::ECN_CWR => SctpEvent::Data,
            _ => SctpEvent::Data,
        }
    }

    /// Row of the transition table.
    fn index(self) -> usize {
        match self {
            SctpEvent::Data => 0,
            SctpEvent::Init => 1,
            SctpEvent::InitAck => 2,
            SctpEvent::CookieEcho => 3,
            SctpEvent::CookieAck => 4,
            SctpEvent::Shutdown => 5,
            SctpEvent::ShutdownAck => 6,
            SctpEvent::ShutdownComplete => 7,
            SctpEvent::Error => 8,
            SctpEvent::Abort => 9,
        }
    }

    /// Whether a packet of this event may open a new entry: only an INIT,
    /// as IPVS with `sloppy_sctp` 0 (`L4Event::opens` has the sloppy
    /// mode). Anything else for no known association goes to the local
    /// stack, which answers it with an ABORT.
    pub fn opens(self) -> bool {
        self == SctpEvent::Init
    }
}

/// Whether the event of a chunk of type `t` depends on the chunk after it.
pub fn looks_past(t: u8) -> bool {
    t == chunk::COOKIE_ECHO || t == chunk::COOKIE_ACK
}

/// The first chunk's type and length, from the start of the SCTP header
/// `l4` (at least [`HEADER_LEN`] + [`CHUNK_HEADER_LEN`] bytes).
pub fn first_chunk(l4: &[u8]) -> Result<(u8, u16), ParseError> {
    match l4.get(HEADER_LEN..HEADER_LEN + CHUNK_HEADER_LEN) {
        Some(&[t, _, l0, l1]) => Ok((t, u16::from_be_bytes([l0, l1]))),
        _ => Err(ParseError::Truncated),
    }
}

/// Where the chunk after a first chunk of length `len` starts, from the
/// start of the SCTP header: lengths are padded to four bytes. `None` for
/// a length below a chunk header's, which declares no next chunk.
pub fn next_chunk_offset(len: u16) -> Option<usize> {
    let len = usize::from(len);
    if len < CHUNK_HEADER_LEN {
        return None;
    }
    HEADER_LEN.checked_add(len.checked_add(3)? & !3)
}

/// IPVS's SCTP states (`IP_VS_SCTP_S_*`), as listed by `ipvsadm -Lc`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum SctpState {
    /// Entry created, no chunk classified yet.
    #[default]
    None,
    /// The client's first INIT.
    Init1,
    /// INIT repeated.
    Init,
    /// INIT ACK sent by the server.
    CookieSent,
    /// COOKIE ECHO seen from the client after the INIT ACK.
    CookieReplied,
    /// The server sent INIT (a collision).
    CookieWait,
    /// A cookie seen in both directions.
    Cookie,
    /// The server sent COOKIE ECHO.
    CookieEchoed,
    /// Association up.
    Established,
    /// The server sent SHUTDOWN.
    ShutdownSent,
    /// The client sent SHUTDOWN.
    ShutdownReceived,
    /// SHUTDOWN ACK sent by the server.
    ShutdownAckSent,
    /// Aborted during setup.
    Rejected,
    /// Closed.
    Closed,
}

use SctpState as S;

impl SctpState {
    /// Every state, in IPVS's numbering order.
    pub const ALL: [SctpState; 14] = [
        S::None,
        S::Init1,
        S::Init,
        S::CookieSent,
        S::CookieReplied,
        S::CookieWait,
        S::Cookie,
        S::CookieEchoed,
        S::Established,
        S::ShutdownSent,
        S::ShutdownReceived,
        S::ShutdownAckSent,
        S::Rejected,
        S::Closed,
    ];

    /// The name `ipvsadm -Lc` and `/proc/net/ip_vs_conn` print.
    pub fn name(self) -> &'static str {
        match self {
            S::None => "NONE",
            S::Init1 => "INIT1",
            S::Init => "INIT",
            S::CookieSent => "C-SENT",
            S::CookieReplied => "C-REPLIED",
            S::CookieWait => "C-WAIT",
            S::Cookie => "COOKIE",
            S::CookieEchoed => "C-ECHOED",
            S::Established => "ESTABLISHED",
            S::ShutdownSent => "S-SENT",
            S::ShutdownReceived => "S-RECEIVED",
            S::ShutdownAckSent => "S-ACK-SENT",
            S::Rejected => "REJECTED",
            S::Closed => "CLOSED",
        }
    }

    /// IPVS's number (`IP_VS_SCTP_S_*`), as the sync protocol sends it.
    pub fn to_u16(self) -> u16 {
        match self {
            S::None => 0,
            S::Init1 => 1,
            S::Init => 2,
            S::CookieSent => 3,
            S::CookieReplied => 4,
            S::CookieWait => 5,
            S::Cookie => 6,
            S::CookieEchoed => 7,
            S::Established => 8,
            S::ShutdownSent => 9,
            S::ShutdownReceived => 10,
            S::ShutdownAckSent => 11,
            S::Rejected => 12,
            S::Closed => 13,
        }
    }

    /// Inverse of [`SctpState::to_u16`]; `None` out of range.
    pub fn from_u16(v: u16) -> Option<SctpState> {
        SctpState::ALL.get(usize::from(v)).copied()
    }

    /// Whether an entry in this state counts as an active connection of
    /// its real server: only an established association, as IPVS.
    pub fn is_active(self) -> bool {
        self == S::Established
    }

    /// Idle timeout in seconds (IPVS's `sctp_timeouts`, which no
    /// configuration changes): an established association 15 minutes,
    /// the handshake and shutdown states the largest RTO plus a second,
    /// a lone INIT or a rejected setup 4 seconds.
    pub fn timeout_secs(self) -> u32 {
        const MAX_RTO: u32 = 60 + 1;
        match self {
            S::None => 2,
            S::Init1 | S::Rejected => 3 + 1,
            S::Established => 15 * 60,
            S::Init
            | S::CookieSent
            | S::CookieReplied
            | S::CookieWait
            | S::Cookie
            | S::CookieEchoed
            | S::ShutdownSent
            | S::ShutdownReceived
            | S::ShutdownAckSent
            | S::Closed => MAX_RTO,
        }
    }
}

// The transition table, IPVS's `sctp_states`: per direction, a row per
// event (in `SctpEvent::index` order), a column per state (in `ALL` order),
// laid out as IPVS's so that the two can be read side by side.
type Table = [[SctpState; 14]; 10];

const I1: S = S::Init1;
const IN: S = S::Init;
const CS: S = S::CookieSent;
const CR: S = S::CookieReplied;
const CW: S = S::CookieWait;
const CO: S = S::Cookie;
const CE: S = S::CookieEchoed;
const ES: S = S::Established;
const SS: S = S::ShutdownSent;
const SR: S = S::ShutdownReceived;
const SA: S = S::ShutdownAckSent;
const RJ: S = S::Rejected;
const CL: S = S::Closed;

#[rustfmt::skip]
const INPUT: Table = [
    //        NO, I1, IN, CS, CR, CW, CO, CE, ES, SS, SR, SA, RJ, CL
    /* d    */ [ES, I1, IN, CS, CR, CW, CO, CE, ES, SS, SR, SA, RJ, CL],
    /* i    */ [I1, IN, IN, CS, CR, CW, CO, CE, ES, SS, SR, SA, IN, IN],
    /* i_a  */ [CW, CW, CW, CS, CR, CO, CO, CE, ES, SS, SR, SA, RJ, CL],
    /* c_e  */ [CR, IN, IN, CR, CR, CW, CO, CE, ES, SS, SR, SA, RJ, CL],
    /* c_a  */ [ES, I1, IN, CS, CR, CW, CO, ES, ES, SS, SR, SA, RJ, CL],
    /* s    */ [SR, I1, IN, CS, CR, CW, CO, CE, SR, SS, SR, SA, RJ, CL],
    /* s_a  */ [CL, IN, IN, CS, CR, CW, CO, CE, ES, CL, SR, CL, RJ, CL],
    /* s_c  */ [CL, CL, CL, CS, CR, CW, CO, CE, ES, SS, SR, CL, RJ, CL],
    /* err  */ [CL, I1, IN, CS, CR, CW, CO, CL, ES, SS, SR, SA, RJ, CL],
    /* ab   */ [CL, CL, CL, CL, CL, RJ, CL, CL, CL, CL, CL, CL, CL, CL],
];

#[rustfmt::skip]
const OUTPUT: Table = [
    //        NO, I1, IN, CS, CR, CW, CO, CE, ES, SS, SR, SA, RJ, CL
    /* d    */ [ES, I1, IN, CS, CR, CW, CO, CE, ES, SS, SR, SA, RJ, CL],
    /* i    */ [CW, CW, CW, CW, CW, CW, CW, CW, ES, CW, CW, CW, CW, CW],
    /* i_a  */ [CS, CS, CS, CS, CR, CW, CO, CE, ES, SS, SR, SA, RJ, CL],
    /* c_e  */ [CE, CE, CE, CE, CE, CE, CE, CE, ES, SS, SR, SA, RJ, CL],
    /* c_a  */ [ES, ES, ES, ES, ES, ES, ES, ES, ES, SS, SR, SA, RJ, CL],
    /* s    */ [SS, SS, SS, SS, SS, SS, SS, SS, SS, SS, SR, SA, RJ, CL],
    /* s_a  */ [SA, SA, SA, SA, SA, CW, CO, CE, ES, SA, SA, SA, RJ, CL],
    /* s_c  */ [CL, I1, IN, CS, CR, CW, CO, CE, ES, SS, SR, SA, RJ, CL],
    /* err  */ [CL, CL, CL, CL, CL, CW, CO, CE, ES, SS, SR, SA, RJ, CL],
    /* ab   */ [CL, RJ, CL, CL, CL, CL, CL, CL, CL, CL, CL, CL, CL, CL],
];

#[rustfmt::skip]
const INPUT_ONLY: Table = [
    //        NO, I1, IN, CS, CR, CW, CO, CE, ES, SS, SR, SA, RJ, CL
    /* d    */ [ES, I1, IN, CS, CR, ES, CO, CE, ES, SS, SR, SA, RJ, CL],
    /* i    */ [I1, IN, IN, IN, IN, IN, CO, CE, ES, SS, SR, SA, IN, IN],
    /* i_a  */ [CE, CE, CE, CE, CE, CE, CO, CE, ES, SS, SR, SA, RJ, CL],
    /* c_e  */ [ES, ES, ES, ES, ES, ES, CO, CE, ES, SS, SR, SA, RJ, CL],
    /* c_a  */ [ES, I1, IN, ES, ES, CW, ES, ES, ES, SS, SR, SA, RJ, CL],
    /* s    */ [SR, I1, IN, CS, CR, CW, CO, CE, SR, SS, SR, SA, RJ, CL],
    /* s_a  */ [CL, IN, IN, CS, CR, CW, CO, CE, CL, CL, SR, CL, RJ, CL],
    /* s_c  */ [CL, CL, CL, CL, CL, CW, CO, CE, ES, SS, CL, CL, RJ, CL],
    /* err  */ [CL, I1, IN, CS, CR, CW, CO, CE, ES, SS, SR, SA, RJ, CL],
    /* ab   */ [CL, CL, CL, CL, CL, RJ, CL, CL, CL, CL, CL, CL, CL, CL],
];

/// The state after a packet of event `ev` travelling in `dir` (IPVS's
/// `set_sctp_state`; DR and tunnel entries see only `Dir::InputOnly`).
pub fn transition(state: SctpState, dir: Dir, ev: SctpEvent) -> SctpState {
    let table = match dir {
        Dir::Input => &INPUT,
        Dir::Output => &OUTPUT,
        Dir::InputOnly => &INPUT_ONLY,
    };
    table
        .get(ev.index())
        .and_then(|row| row.get(usize::from(state.to_u16())))
        .copied()
        .unwrap_or(state)
}

/// CRC32c (Castagnoli, reflected polynomial 0x82F63B78) lookup table.
// Built at compile time: an index out of range would fail the build, it
// cannot panic at run time.
#[allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)]
const CRC32C_TABLE: [u32; 256] = {
    let mut t = [0u32; 256];
    let mut i = 0;
    while i < 256 {
        let mut c = i as u32;
        let mut k = 0;
        while k < 8 {
            c = if c & 1 != 0 {
                (c >> 1) ^ 0x82F6_3B78
            } else {
                c >> 1
            };
            k += 1;
        }
        t[i] = c;
        i += 1;
    }
    t
};

/// Continues a CRC32c register over `data` (no final inversion).
fn crc32c_update(mut crc: u32, data: &[u8]) -> u32 {
    for &b in data {
        let i = usize::from((crc as u8) ^ b);
        crc = CRC32C_TABLE.get(i).copied().unwrap_or(0) ^ (crc >> 8);
    }
    crc
}

/// The CRC32c of `data`, as RFC 9260 appendix B computes it.
pub fn crc32c(data: &[u8]) -> u32 {
    !crc32c_update(!0, data)
}

/// The checksum field's bytes for the SCTP packet `l4` (common header and
/// chunks, to the end of the packet), computed with the field itself taken
/// as zero; stored as they are at [`CHECKSUM_OFFSET`]. `None` if `l4` is
/// shorter than the common header.
pub fn packet_checksum(l4: &[u8]) -> Option<[u8; 4]> {
    let head = l4.get(..CHECKSUM_OFFSET)?;
    let rest = l4.get(HEADER_LEN..)?;
    let crc = crc32c_update(!0, head);
    let crc = crc32c_update(crc, &[0; 4]);
    // The CRC goes on the wire least significant byte first (RFC 9260
    // appendix B: the reflected register, as the kernel's cpu_to_le32).
    Some((!crc32c_update(crc, rest)).to_le_bytes())
}

/// Whether the checksum stored in the SCTP packet `l4` is right.
pub fn checksum_ok(l4: &[u8]) -> bool {
    let stored = l4.get(CHECKSUM_OFFSET..HEADER_LEN);
    packet_checksum(l4).is_some_and(|c| stored == Some(&c[..]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::vec::Vec;

    #[test]
    fn crc32c_matches_the_published_check_values() {
        // The standard check value, and RFC 3720 B.4's vectors.
        assert_eq!(crc32c(b"123456789"), 0xE306_9283);
        assert_eq!(crc32c(&[0u8; 32]), 0x8A91_36AA);
        assert_eq!(crc32c(&[0xffu8; 32]), 0x62A8_AB43);
        let inc: Vec<u8> = (0u8..32).collect();
        assert_eq!(crc32c(&inc), 0x46DD_794E);
        let dec: Vec<u8> = (0u8..32).rev().collect();
        assert_eq!(crc32c(&dec), 0x113F_DB5C);
    }

    /// The start of an INIT to port 80 (common header, checksum field
    /// zero, and the chunk's fixed part).
    const INIT: [u8; 32] = [
        0x8c, 0x2f, 0x00, 0x50, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, //
        0x01, 0x00, 0x00, 0x14, 0x11, 0x22, 0x33, 0x44, 0x00, 0x01, 0xa0, 0x00, //
        0x00, 0x0a, 0xff, 0xff, 0x55, 0x66, 0x77, 0x88,
    ];

    #[test]
    fn a_stored_checksum_verifies_and_a_rewritten_port_needs_a_new_one() {
        let mut p = INIT;
        let c = packet_checksum(&p).unwrap();
        p[8..12].copy_from_slice(&c);
        assert!(checksum_ok(&p));
        // The stored field does not enter its own computation.
        assert_eq!(packet_checksum(&p), Some(c));
        // NAT to port 8080: the old checksum no longer holds.
        p[2..4].copy_from_slice(&8080u16.to_be_bytes());
        assert!(!checksum_ok(&p));
        let c2 = packet_checksum(&p).unwrap();
        assert_ne!(c, c2);
        p[8..12].copy_from_slice(&c2);
        assert!(checksum_ok(&p));
        // Equal to the CRC of the packet with a zeroed field.
        let mut z = p;
        z[8..12].fill(0);
        assert_eq!(c2, crc32c(&z).to_le_bytes());
        assert_eq!(packet_checksum(&p[..11]), None);
        assert!(!checksum_ok(&p[..11]));
    }

    #[test]
    fn events_follow_the_first_chunk_and_a_bundled_abort() {
        assert_eq!(SctpEvent::of(1, None), SctpEvent::Init);
        assert_eq!(SctpEvent::of(0, Some(6)), SctpEvent::Data);
        assert_eq!(SctpEvent::of(10, Some(6)), SctpEvent::Abort);
        assert_eq!(SctpEvent::of(11, Some(6)), SctpEvent::Abort);
        assert_eq!(SctpEvent::of(11, Some(0)), SctpEvent::CookieAck);
        assert_eq!(SctpEvent::of(4, None), SctpEvent::Data);
        assert_eq!(SctpEvent::of(200, None), SctpEvent::Data);
        assert_eq!(SctpEvent::of(14, None), SctpEvent::ShutdownComplete);
        assert!(SctpEvent::Init.opens());
        for t in (0u8..=255).filter(|&t| t != 1) {
            assert!(!SctpEvent::of(t, None).opens(), "{t}");
        }
    }

    #[test]
    fn chunk_offsets_are_padded_and_bounded() {
        assert_eq!(first_chunk(&INIT), Ok((1, 20)));
        assert_eq!(first_chunk(&INIT[..15]), Err(ParseError::Truncated));
        assert_eq!(next_chunk_offset(20), Some(32));
        assert_eq!(next_chunk_offset(21), Some(36));
        assert_eq!(next_chunk_offset(4), Some(16));
        assert_eq!(next_chunk_offset(3), None);
        assert_eq!(next_chunk_offset(u16::MAX), Some(12 + 65536));
    }

    fn run(dir: Dir, evs: &[SctpEvent]) -> Vec<SctpState> {
        let mut s = SctpState::None;
        evs.iter()
            .map(|&e| {
                s = transition(s, dir, e);
                s
            })
            .collect()
    }

    #[test]
    fn a_nat_association_is_established_and_closed_as_ipvs_tracks_it() {
        use Dir::{Input as I, Output as O};
        let mut s = SctpState::None;
        let steps = [
            (I, SctpEvent::Init, S::Init1),
            (O, SctpEvent::InitAck, S::CookieSent),
            (I, SctpEvent::CookieEcho, S::CookieReplied),
            // A COOKIE ACK from the server: established.
            (O, SctpEvent::CookieAck, S::Established),
            (I, SctpEvent::Data, S::Established),
            (O, SctpEvent::Data, S::Established),
            (I, SctpEvent::Shutdown, S::ShutdownReceived),
            (O, SctpEvent::ShutdownAck, S::ShutdownAckSent),
            (I, SctpEvent::ShutdownComplete, S::Closed),
        ];
        for (dir, ev, want) in steps {
            s = transition(s, dir, ev);
            assert_eq!(s, want, "{dir:?} {ev:?}");
        }
        assert!(S::Established.is_active());
        assert_eq!(
            S::ALL.iter().filter(|s| s.is_active()).count(),
            1,
            "only ESTABLISHED counts as active"
        );
    }

    #[test]
    fn a_direct_routing_association_sees_only_the_client_side() {
        let s = run(
            Dir::InputOnly,
            &[
                SctpEvent::Init,
                SctpEvent::CookieEcho,
                SctpEvent::Data,
                SctpEvent::Shutdown,
                SctpEvent::ShutdownComplete,
            ],
        );
        assert_eq!(
            s,
            [
                S::Init1,
                S::Established,
                S::Established,
                S::ShutdownReceived,
                S::Closed
            ]
        );
        // An abort during setup rejects it; a new INIT reopens.
        assert_eq!(
            run(
                Dir::InputOnly,
                &[SctpEvent::Init, SctpEvent::Abort, SctpEvent::Init]
            ),
            [S::Init1, S::Closed, S::Init]
        );
        assert_eq!(
            run(Dir::Output, &[SctpEvent::Init, SctpEvent::Abort]),
            [S::CookieWait, S::Closed]
        );
    }

    #[test]
    fn spot_checks_against_ipvs_table() {
        // Cells read off ip_vs_proto_sctp.c's sctp_states, one per table
        // region, so that a mistyped row shows.
        use Dir::{Input as I, InputOnly as IO, Output as O};
        use SctpEvent as E;
        let cells = [
            (S::CookieWait, I, E::InitAck, S::Cookie),
            (S::Rejected, I, E::Init, S::Init),
            (S::CookieEchoed, I, E::Error, S::Closed),
            (S::ShutdownSent, I, E::ShutdownAck, S::Closed),
            (S::Established, O, E::Init, S::Established),
            (S::CookieWait, O, E::ShutdownAck, S::CookieWait),
            (S::Init1, O, E::Abort, S::Rejected),
            (S::CookieWait, IO, E::Data, S::Established),
            (S::ShutdownReceived, IO, E::ShutdownComplete, S::Closed),
            (S::CookieWait, IO, E::Abort, S::Rejected),
        ];
        for (from, dir, ev, want) in cells {
            assert_eq!(transition(from, dir, ev), want, "{from:?} {dir:?} {ev:?}");
        }
        for s in S::ALL {
            assert_eq!(SctpState::from_u16(s.to_u16()), Some(s));
            assert!(s.timeout_secs() >= 2);
        }
        assert_eq!(SctpState::from_u16(14), None);
        assert_eq!(S::Established.timeout_secs(), 900);
        assert_eq!(S::Closed.timeout_secs(), 61);
    }
}
