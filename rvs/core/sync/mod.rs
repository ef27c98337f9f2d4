// SPDX-License-Identifier: GPL-2.0

//! IPVS's connection synchronisation messages: the datagrams a master
//! director multicasts so that backups hold its connections, decoded
//! ([`decode`]), built ([`encode`]), and the pure rules of when a
//! connection is sent and what a backup makes of it ([`policy`]).
//!
//! C counterpart: net/netfilter/ipvs/ip_vs_sync.c (Linux 6.12), with the
//! flags of include/uapi/linux/ip_vs.h and the defaults of
//! include/net/ip_vs.h. The layout below is read off the C structs
//! (`struct ip_vs_sync_mesg`, `ip_vs_sync_v4`, `ip_vs_sync_v6`,
//! `ip_vs_sync_mesg_v0`, `ip_vs_sync_conn_v0`, `ip_vs_sync_conn_options`);
//! the tests check it against bytes written by hand from those structs.
//!
//! # Version 1 (the default, `sync_version` = 1)
//!
//! Message header, 8 bytes:
//!
//! | offset | size | field | notes |
//! |---|---|---|---|
//! | 0 | 1 | reserved | 0 (a version 0 receiver reads it as `nr_conns` and sees none) |
//! | 1 | 1 | syncid | the master's `--syncid` |
//! | 2 | 2 | size | be16, the whole datagram, header included |
//! | 4 | 1 | nr_conns | records that follow |
//! | 5 | 1 | version | 1 |
//! | 6 | 2 | spare | 0 |
//!
//! Then `nr_conns` records, each starting on a 4-byte boundary of the
//! message. One record (`ip_vs_sync_v4`, 36 bytes; `ip_vs_sync_v6`, 72):
//!
//! | offset | size | field | notes |
//! |---|---|---|---|
//! | 0 | 1 | type | bit 0 set: IPv6; 0: IPv4 |
//! | 1 | 1 | protocol | IP protocol |
//! | 2 | 2 | ver_size | be16: version (0) in the top 4 bits, record length in the low 12 |
//! | 4 | 4 | flags | be32, `IP_VS_CONN_F_*` less HASHED |
//! | 8 | 2 | state | be16, IPVS's state number |
//! | 10 | 2 | cport | network order, as the packet has it |
//! | 12 | 2 | vport | network order |
//! | 14 | 2 | dport | network order |
//! | 16 | 4 | fwmark | be32 |
//! | 20 | 4 | timeout | be32, seconds |
//! | 24 | 4 / 16 | caddr | client address |
//! | 28 / 40 | 4 / 16 | vaddr | virtual address |
//! | 32 / 56 | 4 / 16 | daddr | real server address |
//!
//! Options follow at offset 36 (72), each a type byte, a length byte
//! (of the data, the two header bytes excluded) and the data, unpadded:
//!
//! - 1, `IPVS_OPT_SEQ_DATA`, 24 bytes: `in_seq` then `out_seq`, each
//!   `init_seq`, `delta`, `previous_delta` as be32 (`hton_seq`). Sent when
//!   the flags have IN_SEQ or OUT_SEQ.
//! - 2, `IPVS_OPT_PE_DATA`, 1..=255 bytes: persistence engine data.
//! - 3, `IPVS_OPT_PE_NAME`, 1..=16 bytes: the engine's name, no NUL; sent
//!   only after PE data.
//! - Type bit 0x40 (`IPVS_OPT_F_PARAM`) marks an option a receiver may
//!   skip. The type is matched with that bit cleared, so 0x41 is sequence
//!   data too.
//!
//! The record length in `ver_size` counts the options but not the padding
//! to the next 4-byte boundary: the padding sits *before* the next record
//! (`ip_vs_sync_conn` writes it when it appends one) and the last record of
//! a datagram is not padded, so `size` need not be a multiple of 4.
//!
//! # Version 0 (`sync_version` = 0, IPv4 only)
//!
//! Header, 4 bytes: `nr_conns` (u8, never 0), syncid (u8), size (be16).
//! Records of 24 bytes (`ip_vs_sync_conn_v0`): reserved (u8), protocol
//! (u8), cport, vport, dport (network order), caddr, vaddr, daddr (4
//! bytes each), flags (be16: only the low 16 bits of the flags), state
//! (be16). When the flags have IN_SEQ or OUT_SEQ, the 24 bytes of
//! `ip_vs_sync_conn_options` follow, copied from memory in the sender's
//! **host** byte order (`memcpy` in `ip_vs_sync_conn_v0`). No padding, no
//! timeout (the backup uses its own per-state timeout), no fwmark, no PE.
//!
//! A receiver tells the versions apart by the header alone
//! (`ip_vs_process_message`): version 1 iff byte 0 is 0, byte 5 is 1 and
//! bytes 6..8 are 0; anything else is read as version 0.
//!
//! # IPVS quirks kept (or deliberately not)
//!
//! - Ports and addresses travel as the packet had them; every other
//!   multi-byte field is converted with `htons`/`htonl`, except the
//!   version 0 sequence option (host order) and the version 1 header's
//!   `spare`, declared `__u16` rather than `__be16` (always 0, so moot).
//! - Flags: `ip_vs_sync_conn` sends `cp->flags & ~IP_VS_CONN_F_HASHED`,
//!   all 32 bits, so NFCT (bit 16) goes out in version 1 although
//!   ip_vs.h's comment says flags from bit 16 are not sent; the backup
//!   masks it off (`IP_VS_CONN_F_BACKUP_MASK`). Version 0 `htons` keeps
//!   only the low 16 bits.
//! - The timeout is `cp->timeout / HZ`: whole seconds, rounded down.
//! - A receiver checks that 36 bytes remain before reading a record even
//!   for IPv6 records, then that the record's own length fits; the
//!   IPv6 fixed part is checked against that length afterwards.
//! - `type` with bit 0 set is IPv6 whatever its other bits; any other
//!   non-zero type drops the rest of the datagram.
//! - `nr_conns` is a u8 the master increments without bound
//!   (`m->nr_conns++`): with a large `--syncmaxlen`, a 256th record would
//!   wrap it. [`encode::Builder`] reports such a message full instead.
//! - An error in a record's framing (length, options' framing) drops the
//!   rest of the datagram but keeps the records already applied; a record
//!   that is only unacceptable (unknown mandatory option, flags, protocol,
//!   state, PE) is skipped and the next one read. [`SyncError::is_fatal`]
//!   tells which, and [`decode::Records`] stops or goes on accordingly.
//! - Bytes after the `nr_conns`-th record are ignored.

#![forbid(unsafe_code)]

use super::config::AddrFamily;

pub mod daemon;
pub mod decode;
pub mod encode;
pub mod policy;
pub mod resync;

#[cfg(test)]
mod tests;

/// The multicast group of IPv4 sync traffic when none is given
/// (`IP_VS_SYNC_GROUP`, 224.0.0.81). IPVS has no IPv6 default: an IPv6
/// group must be configured.
pub const SYNC_GROUP_V4: [u8; 4] = [224, 0, 0, 81];
/// The UDP port when none is given (`IP_VS_SYNC_PORT`); sync thread `i`
/// of `sync_ports` uses port + `i` (`get_mcast_sockaddr`).
pub const SYNC_PORT: u16 = 8848;
/// Most sync threads, hence ports (`IPVS_SYNC_PORTS_MAX`).
pub const SYNC_PORTS_MAX: u32 = 1 << 6;

/// The protocol version in a version 1 header (`SYNC_PROTO_VER`).
pub const PROTO_VERSION: u8 = 1;
/// Length of the version 1 header (`struct ip_vs_sync_mesg`).
pub const HEADER_LEN: usize = 8;
/// Length of the version 0 header (`struct ip_vs_sync_mesg_v0`).
pub const HEADER_V0_LEN: usize = 4;
/// Length of an IPv4 record without options (`struct ip_vs_sync_v4`).
pub const RECORD_V4_LEN: usize = 36;
/// Length of an IPv6 record without options (`struct ip_vs_sync_v6`).
pub const RECORD_V6_LEN: usize = 72;
/// Length of a version 0 record without options (`SIMPLE_CONN_SIZE`).
pub const RECORD_V0_LEN: usize = 24;
/// Length of the sequence data (`struct ip_vs_sync_conn_options`).
pub const SEQ_OPT_LEN: usize = 24;
/// Length of a version 0 record with its sequence data (`FULL_CONN_SIZE`).
pub const RECORD_V0_FULL_LEN: usize = RECORD_V0_LEN + SEQ_OPT_LEN;
/// Longest version 1 record: IPv6, sequence data, 255 bytes of PE data and
/// a 16-byte PE name, each option with its 2 header bytes.
pub const MAX_RECORD_LEN: usize =
    RECORD_V6_LEN + 2 + SEQ_OPT_LEN + 2 + PEDATA_MAXLEN + 2 + PENAME_MAXLEN;

/// `type` bit of an IPv6 record (`STYPE_F_INET6`).
pub const STYPE_F_INET6: u8 = 1;
/// Shift of the record version in `ver_size` (`SVER_SHIFT`).
pub const SVER_SHIFT: u32 = 12;
/// Mask of the record length in `ver_size` (`SVER_MASK`).
pub const SVER_MASK: u16 = 0x0fff;

/// Option: TCP sequence adjustment data (`IPVS_OPT_SEQ_DATA`).
pub const OPT_SEQ_DATA: u8 = 1;
/// Option: persistence engine data (`IPVS_OPT_PE_DATA`).
pub const OPT_PE_DATA: u8 = 2;
/// Option: persistence engine name (`IPVS_OPT_PE_NAME`).
pub const OPT_PE_NAME: u8 = 3;
/// Option type bit: the receiver may skip it if unknown
/// (`IPVS_OPT_F_PARAM`, `1 << (IPVS_OPT_PARAM - 1)`).
pub const OPT_F_PARAM: u8 = 1 << 6;
/// Longest PE name (`IP_VS_PENAME_MAXLEN`).
pub const PENAME_MAXLEN: usize = 16;
/// Longest PE data (`IP_VS_PEDATA_MAXLEN`).
pub const PEDATA_MAXLEN: usize = 255;

/// States a persistence template may be in (`IP_VS_CTPL_S_LAST`):
/// NONE 0 and ASSURED 1.
pub const TEMPLATE_STATES: u16 = 2;

/// IPVS's connection flags (`IP_VS_CONN_F_*`, include/uapi/linux/ip_vs.h),
/// as they travel in a record.
pub mod flags {
    /// Forwarding method mask.
    pub const FWD_MASK: u32 = 0x0007;
    /// Masquerading (NAT).
    pub const MASQ: u32 = 0x0000;
    /// Local node.
    pub const LOCALNODE: u32 = 0x0001;
    /// Tunnelling.
    pub const TUNNEL: u32 = 0x0002;
    /// Direct routing.
    pub const DROUTE: u32 = 0x0003;
    /// Cache bypass.
    pub const BYPASS: u32 = 0x0004;
    /// Entry created by sync (set by the backup).
    pub const SYNC: u32 = 0x0020;
    /// Hashed entry (never sent).
    pub const HASHED: u32 = 0x0040;
    /// No output packets.
    pub const NOOUTPUT: u32 = 0x0080;
    /// Not established.
    pub const INACTIVE: u32 = 0x0100;
    /// Output sequence adjustment.
    pub const OUT_SEQ: u32 = 0x0200;
    /// Input sequence adjustment.
    pub const IN_SEQ: u32 = 0x0400;
    /// Either sequence adjustment.
    pub const SEQ_MASK: u32 = 0x0600;
    /// Client port not known yet.
    pub const NO_CPORT: u32 = 0x0800;
    /// A persistence template, not a connection.
    pub const TEMPLATE: u32 = 0x1000;
    /// One-packet scheduling entry.
    pub const ONE_PACKET: u32 = 0x2000;
    /// Use netfilter conntrack (sent in version 1, dropped by the backup).
    pub const NFCT: u32 = 1 << 16;
    /// What a backup keeps of a new connection's flags
    /// (`IP_VS_CONN_F_BACKUP_MASK`).
    pub const BACKUP_MASK: u32 = FWD_MASK | NOOUTPUT | INACTIVE | SEQ_MASK | NO_CPORT | TEMPLATE;
    /// What a backup updates in an existing connection's flags
    /// (`IP_VS_CONN_F_BACKUP_UPD_MASK`).
    pub const BACKUP_UPD_MASK: u32 = INACTIVE | SEQ_MASK;

    /// Every single-bit or value flag above with its C name, for the test
    /// against the kernel's header.
    pub const ALL: &[(&str, u32)] = &[
        ("IP_VS_CONN_F_FWD_MASK", FWD_MASK),
        ("IP_VS_CONN_F_MASQ", MASQ),
        ("IP_VS_CONN_F_LOCALNODE", LOCALNODE),
        ("IP_VS_CONN_F_TUNNEL", TUNNEL),
        ("IP_VS_CONN_F_DROUTE", DROUTE),
        ("IP_VS_CONN_F_BYPASS", BYPASS),
        ("IP_VS_CONN_F_SYNC", SYNC),
        ("IP_VS_CONN_F_HASHED", HASHED),
        ("IP_VS_CONN_F_NOOUTPUT", NOOUTPUT),
        ("IP_VS_CONN_F_INACTIVE", INACTIVE),
        ("IP_VS_CONN_F_OUT_SEQ", OUT_SEQ),
        ("IP_VS_CONN_F_IN_SEQ", IN_SEQ),
        ("IP_VS_CONN_F_SEQ_MASK", SEQ_MASK),
        ("IP_VS_CONN_F_NO_CPORT", NO_CPORT),
        ("IP_VS_CONN_F_TEMPLATE", TEMPLATE),
        ("IP_VS_CONN_F_ONE_PACKET", ONE_PACKET),
        ("IP_VS_CONN_F_NFCT", NFCT),
        ("IP_VS_CONN_F_BACKUP_MASK", BACKUP_MASK),
        ("IP_VS_CONN_F_BACKUP_UPD_MASK", BACKUP_UPD_MASK),
    ];
}

/// The message format: version 1, or the old version 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Version {
    /// The original format: IPv4 only, 24-byte records, 4-byte header.
    V0,
    /// The current format (`SYNC_PROTO_VER`).
    V1,
}

/// One direction's TCP sequence adjustment (`struct ip_vs_seq`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Seq {
    /// Add the delta from this sequence number on.
    pub init_seq: u32,
    /// Delta in sequence numbers.
    pub delta: u32,
    /// Delta before the last resized packet.
    pub previous_delta: u32,
}

/// Both directions' sequence adjustments (`struct ip_vs_sync_conn_options`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SeqOpt {
    /// Incoming direction.
    pub in_seq: Seq,
    /// Outgoing direction.
    pub out_seq: Seq,
}

/// One connection as a sync record carries it: what [`decode::Records`]
/// yields and what [`encode::Builder::push`] takes. Ports are in host
/// order, addresses in rvs's 16-byte form (IPv4 in the first 4 bytes, the
/// rest zero).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Record<'a> {
    /// Family of all three addresses.
    pub af: AddrFamily,
    /// IP protocol (`IPPROTO_*`).
    pub protocol: u8,
    /// Connection flags (`flags::*`). Decoded: as received, before the
    /// backup's masking ([`policy::backup_flags`]); for encoding: the
    /// connection's own, of which the builder drops HASHED.
    pub flags: u32,
    /// IPVS's state number (`TcpState::to_u16`, `SctpState`'s numbering,
    /// 0 for UDP; templates: 0 or 1 = ASSURED).
    pub state: u16,
    /// Client port.
    pub cport: u16,
    /// Virtual port.
    pub vport: u16,
    /// Real server port.
    pub dport: u16,
    /// Firewall mark (0 in version 0).
    pub fwmark: u32,
    /// Remaining timeout in seconds (0 in version 0: the backup picks its
    /// own, [`policy::backup_timeout`]).
    pub timeout: u32,
    /// Client address.
    pub caddr: [u8; 16],
    /// Virtual address.
    pub vaddr: [u8; 16],
    /// Real server address.
    pub daddr: [u8; 16],
    /// Sequence adjustments. Decoded: present iff the record had the
    /// option (version 1) or SEQ flags (version 0). Encoding follows the
    /// flags, as IPVS does: sent iff `flags & SEQ_MASK`, zeros if `None`.
    pub seq: Option<SeqOpt>,
    /// Persistence engine data, borrowed from the datagram (1..=255 bytes).
    pub pe_data: Option<&'a [u8]>,
    /// Persistence engine name (1..=16 bytes, no NUL). Encoding sends it
    /// only with `pe_data`, as IPVS does.
    pub pe_name: Option<&'a [u8]>,
}

impl Record<'_> {
    /// A record with every field zero or absent (IPv4, protocol 0).
    pub const EMPTY: Record<'static> = Record {
        af: AddrFamily::Inet,
        protocol: 0,
        flags: 0,
        state: 0,
        cport: 0,
        vport: 0,
        dport: 0,
        fwmark: 0,
        timeout: 0,
        caddr: [0; 16],
        vaddr: [0; 16],
        daddr: [0; 16],
        seq: None,
        pe_data: None,
        pe_name: None,
    };

    /// Whether this is a persistence template.
    pub fn is_template(&self) -> bool {
        self.flags & flags::TEMPLATE != 0
    }
}

/// Why a datagram, the rest of it, or one record was refused, named after
/// the check of ip_vs_sync.c that refuses it. Field-less so that a caller
/// can count refusals by kind ([`SyncError::index`], [`SyncError::COUNT`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SyncError {
    // The datagram as a whole (`ip_vs_process_message`): nothing applied.
    /// Shorter than a version 0 header, or a version 1 header cut short
    /// ("message header too short").
    TooShort,
    /// The header's size differs from the datagram's length ("bogus
    /// message size").
    SizeMismatch,
    /// A syncid other than the backup's own, which is not 0 ("Ignoring
    /// syncid").
    OtherSyncId,
    /// Byte 0 is 0 but the version is not 1 or `spare` not 0. IPVS reads
    /// this as a version 0 message of zero records and does nothing.
    UnknownVersion,

    // Framing of a version 1 record: the rest of the datagram is dropped.
    /// `nr_conns` promises more records than the datagram holds: it ends
    /// where the next record would start ("Dropping buffer, too small").
    MissingRecords,
    /// Fewer than 36 bytes left for a record's fixed part ("too small").
    RecordTruncated,
    /// The record's length runs past the datagram ("msg > buffer").
    RecordOverrun,
    /// The record's version (top 4 bits of `ver_size`) is not 0 ("Unknown
    /// version").
    RecordVersion,
    /// `type` is neither 0 (IPv4) nor has bit 0 (IPv6) (error -10).
    BadType,
    /// The record's length is smaller than its family's fixed part (-20).
    RecordTooShort,
    /// An option's type and length bytes run past the record (-30).
    OptionTruncated,
    /// An option of length 0 (-40).
    OptionEmpty,
    /// An option's data runs past the record (-40).
    OptionOverrun,
    /// Sequence data not exactly 24 bytes long (-50).
    SeqLength,
    /// Sequence data twice in one record (-50).
    SeqTwice,
    /// PE data twice in one record (-60).
    PeDataTwice,
    /// A PE name longer than 16 bytes (-70).
    PeNameTooLong,
    /// A PE name twice in one record (-70).
    PeNameTwice,

    // Framing of a version 0 record: the rest of the datagram is dropped.
    /// Fewer than 24 bytes left for a record ("BACKUP v0, bogus conn").
    V0Truncated,
    /// SEQ flags but fewer than 48 bytes left ("bogus conn options").
    V0SeqTruncated,

    // One record refused; the next one is read ("Single msg dropped").
    /// An unknown option without the skippable bit 0x40 (20).
    UnknownOption,
    /// NO_CPORT on a template, or ONE_PACKET
    /// (`ip_vs_sync_validate_flags`, 25).
    BadFlags,
    /// A protocol rvs does not handle (30).
    Protocol,
    /// A state number beyond the protocol's (or a template's) (40).
    State,
    /// PE data without a PE name (50).
    PeParams,
    /// A PE name rvs has no engine for (50): reported by
    /// [`decode::check_pe`], not by the iterator.
    NoPeEngine,
}

impl SyncError {
    /// Every kind, in [`SyncError::index`] order.
    pub const ALL: [SyncError; 26] = [
        SyncError::TooShort,
        SyncError::SizeMismatch,
        SyncError::OtherSyncId,
        SyncError::UnknownVersion,
        SyncError::MissingRecords,
        SyncError::RecordTruncated,
        SyncError::RecordOverrun,
        SyncError::RecordVersion,
        SyncError::BadType,
        SyncError::RecordTooShort,
        SyncError::OptionTruncated,
        SyncError::OptionEmpty,
        SyncError::OptionOverrun,
        SyncError::SeqLength,
        SyncError::SeqTwice,
        SyncError::PeDataTwice,
        SyncError::PeNameTooLong,
        SyncError::PeNameTwice,
        SyncError::V0Truncated,
        SyncError::V0SeqTruncated,
        SyncError::UnknownOption,
        SyncError::BadFlags,
        SyncError::Protocol,
        SyncError::State,
        SyncError::PeParams,
        SyncError::NoPeEngine,
    ];
    /// Number of kinds: the size of a counter array.
    pub const COUNT: usize = SyncError::ALL.len();

    /// Position in [`SyncError::ALL`], below [`SyncError::COUNT`].
    pub fn index(self) -> usize {
        self as usize
    }

    /// Whether IPVS stops reading the datagram here (true), or skips only
    /// this record and reads the next (false).
    pub fn is_fatal(self) -> bool {
        !matches!(
            self,
            SyncError::UnknownOption
                | SyncError::BadFlags
                | SyncError::Protocol
                | SyncError::State
                | SyncError::PeParams
                | SyncError::NoPeEngine
        )
    }

    /// A short name for counters and logs.
    pub fn name(self) -> &'static str {
        match self {
            SyncError::TooShort => "too_short",
            SyncError::SizeMismatch => "size_mismatch",
            SyncError::OtherSyncId => "other_syncid",
            SyncError::UnknownVersion => "unknown_version",
            SyncError::MissingRecords => "missing_records",
            SyncError::RecordTruncated => "record_truncated",
            SyncError::RecordOverrun => "record_overrun",
            SyncError::RecordVersion => "record_version",
            SyncError::BadType => "bad_type",
            SyncError::RecordTooShort => "record_too_short",
            SyncError::OptionTruncated => "option_truncated",
            SyncError::OptionEmpty => "option_empty",
            SyncError::OptionOverrun => "option_overrun",
            SyncError::SeqLength => "seq_length",
            SyncError::SeqTwice => "seq_twice",
            SyncError::PeDataTwice => "pe_data_twice",
            SyncError::PeNameTooLong => "pe_name_too_long",
            SyncError::PeNameTwice => "pe_name_twice",
            SyncError::V0Truncated => "v0_truncated",
            SyncError::V0SeqTruncated => "v0_seq_truncated",
            SyncError::UnknownOption => "unknown_option",
            SyncError::BadFlags => "bad_flags",
            SyncError::Protocol => "protocol",
            SyncError::State => "state",
            SyncError::PeParams => "pe_params",
            SyncError::NoPeEngine => "no_pe_engine",
        }
    }
}
