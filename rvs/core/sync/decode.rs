// SPDX-License-Identifier: GPL-2.0

//! Reading a received sync datagram: [`Message::parse`] checks the header
//! as `ip_vs_process_message` does, [`Message::records`] walks the records
//! as its loop, `ip_vs_proc_sync_conn` (version 1) and
//! `ip_vs_process_message_v0` do, borrowing from the datagram.
//!
//! Every length is checked before it is used: a hostile datagram yields a
//! [`SyncError`], never a read out of bounds or a panic.

#![forbid(unsafe_code)]

use super::super::config::AddrFamily;
use super::policy;
use super::{flags, Record, Seq, SeqOpt, SyncError, Version};
use super::{
    HEADER_LEN, HEADER_V0_LEN, OPT_F_PARAM, OPT_PE_DATA, OPT_PE_NAME, OPT_SEQ_DATA, PENAME_MAXLEN,
    PROTO_VERSION, RECORD_V0_FULL_LEN, RECORD_V0_LEN, RECORD_V4_LEN, RECORD_V6_LEN, SEQ_OPT_LEN,
    STYPE_F_INET6, SVER_MASK, SVER_SHIFT,
};
use core::iter::FusedIterator;

/// A sync datagram whose header passed the checks.
#[derive(Clone, Copy, Debug)]
pub struct Message<'a> {
    buf: &'a [u8],
    version: Version,
    syncid: u8,
    nr_conns: u8,
}

impl<'a> Message<'a> {
    /// Checks the header of the datagram `buf` as a backup whose syncid is
    /// `own_syncid` does (0 accepts any), in IPVS's order: length, size
    /// field, syncid, version.
    pub fn parse(buf: &'a [u8], own_syncid: u8) -> Result<Message<'a>, SyncError> {
        let &[b0, syncid, s0, s1, ..] = buf else {
            return Err(SyncError::TooShort);
        };
        if usize::from(u16::from_be_bytes([s0, s1])) != buf.len() {
            return Err(SyncError::SizeMismatch);
        }
        if !policy::accepts_syncid(own_syncid, syncid) {
            return Err(SyncError::OtherSyncId);
        }
        let (version, nr_conns) = match *buf {
            [0, _, _, _, nr, PROTO_VERSION, 0, 0, ..] => (Version::V1, nr),
            // A version 0 message never has 0 records (the master starts
            // a new one only to put a record in it): this is a version 1
            // header IPVS cannot read, or one cut short.
            [0, ..] if buf.len() < HEADER_LEN => return Err(SyncError::TooShort),
            [0, ..] => return Err(SyncError::UnknownVersion),
            _ => (Version::V0, b0),
        };
        Ok(Message {
            buf,
            version,
            syncid,
            nr_conns,
        })
    }

    /// The format of the message.
    pub fn version(&self) -> Version {
        self.version
    }

    /// The sender's syncid.
    pub fn syncid(&self) -> u8 {
        self.syncid
    }

    /// How many records the header announces.
    pub fn nr_conns(&self) -> u8 {
        self.nr_conns
    }

    /// The records, in order.
    pub fn records(&self) -> Records<'a> {
        Records {
            buf: self.buf,
            at: match self.version {
                Version::V0 => HEADER_V0_LEN,
                Version::V1 => HEADER_LEN,
            },
            left: self.nr_conns,
            version: self.version,
        }
    }
}

/// Iterator over a message's records: `Ok` for a record to apply, `Err`
/// for a refusal. After a fatal error ([`SyncError::is_fatal`]) it ends,
/// as IPVS drops the rest of the datagram; after any other it goes on with
/// the next record. It yields at most `nr_conns` items.
#[derive(Clone, Debug)]
pub struct Records<'a> {
    buf: &'a [u8],
    /// Offset of the next record (may lie past the end after the padding
    /// of a last, unpadded record).
    at: usize,
    left: u8,
    version: Version,
}

impl Records<'_> {
    /// Offset in the datagram of the next record, for logs.
    pub fn offset(&self) -> usize {
        self.at
    }
}

impl<'a> Iterator for Records<'a> {
    type Item = Result<Record<'a>, SyncError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.left = self.left.checked_sub(1)?;
        let item = match self.version {
            Version::V1 => self.next_v1(),
            Version::V0 => self.next_v0(),
        };
        if let Err(e) = item {
            if e.is_fatal() {
                self.left = 0;
            }
        }
        Some(item)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (0, Some(usize::from(self.left)))
    }
}

impl FusedIterator for Records<'_> {}

impl<'a> Records<'a> {
    /// One version 1 record: the framing checks of `ip_vs_process_message`,
    /// then `ip_vs_proc_sync_conn`'s.
    fn next_v1(&mut self) -> Result<Record<'a>, SyncError> {
        let rest = self.buf.get(self.at..).unwrap_or(&[]);
        if rest.is_empty() {
            return Err(SyncError::MissingRecords);
        }
        // IPVS wants an IPv4 record's worth before it looks at the record,
        // whatever its type.
        let &[typ, _, v0, v1, ..] = rest else {
            return Err(SyncError::RecordTruncated);
        };
        if rest.len() < RECORD_V4_LEN {
            return Err(SyncError::RecordTruncated);
        }
        let ver_size = u16::from_be_bytes([v0, v1]);
        let size = usize::from(ver_size & SVER_MASK);
        let rec = rest.get(..size).ok_or(SyncError::RecordOverrun)?;
        if ver_size >> SVER_SHIFT != 0 {
            return Err(SyncError::RecordVersion);
        }
        // The next record starts at the next 4-byte boundary; size is at
        // most 0xfff, so neither sum overflows a usize.
        self.at = self.at.saturating_add(size.saturating_add(3) & !3);
        parse_v1(typ, rec)
    }

    /// One version 0 record (`ip_vs_process_message_v0`).
    fn next_v0(&mut self) -> Result<Record<'a>, SyncError> {
        let rest = self.buf.get(self.at..).unwrap_or(&[]);
        if rest.is_empty() {
            return Err(SyncError::MissingRecords);
        }
        let Some((fixed, after)) = rest.split_first_chunk::<RECORD_V0_LEN>() else {
            return Err(SyncError::V0Truncated);
        };
        let &[_reserved, protocol, cp0, cp1, vp0, vp1, dp0, dp1, c0, c1, c2, c3, a0, a1, a2, a3, d0, d1, d2, d3, f0, f1, s0, s1] =
            fixed;
        let wire_flags = u32::from(u16::from_be_bytes([f0, f1]));
        let seq = if wire_flags & flags::SEQ_MASK != 0 {
            let opt = after
                .first_chunk::<SEQ_OPT_LEN>()
                .ok_or(SyncError::V0SeqTruncated)?;
            self.at = self.at.saturating_add(RECORD_V0_FULL_LEN);
            // Copied from the sender's memory: host order.
            Some(seq_opt(opt, u32::from_ne_bytes))
        } else {
            self.at = self.at.saturating_add(RECORD_V0_LEN);
            None
        };
        let rec = Record {
            af: AddrFamily::Inet,
            protocol,
            flags: wire_flags,
            state: u16::from_be_bytes([s0, s1]),
            cport: u16::from_be_bytes([cp0, cp1]),
            vport: u16::from_be_bytes([vp0, vp1]),
            dport: u16::from_be_bytes([dp0, dp1]),
            fwmark: 0,
            timeout: 0,
            caddr: v4([c0, c1, c2, c3]),
            vaddr: v4([a0, a1, a2, a3]),
            daddr: v4([d0, d1, d2, d3]),
            seq,
            pe_data: None,
            pe_name: None,
        };
        check(&rec)?;
        Ok(rec)
    }
}

/// A version 1 record `rec` of exactly its declared length, whose type
/// byte is `typ` (`ip_vs_proc_sync_conn`). IPVS reads the type before it
/// compares the length with the family's fixed part, so `typ` comes from
/// the datagram even when the declared length is 0.
fn parse_v1(typ: u8, rec: &[u8]) -> Result<Record<'_>, SyncError> {
    let (af, fixed_len) = match typ {
        t if t & STYPE_F_INET6 != 0 => (AddrFamily::Inet6, RECORD_V6_LEN),
        0 => (AddrFamily::Inet, RECORD_V4_LEN),
        _ => return Err(SyncError::BadType),
    };
    let (fixed, mut opts) = split(rec, fixed_len).ok_or(SyncError::RecordTooShort)?;
    let (head, addrs) = fixed
        .split_first_chunk::<24>()
        .ok_or(SyncError::RecordTooShort)?;
    let &[_type, protocol, _, _, f0, f1, f2, f3, s0, s1, cp0, cp1, vp0, vp1, dp0, dp1, m0, m1, m2, m3, t0, t1, t2, t3] =
        head;
    let (caddr, vaddr, daddr) = addresses(af, addrs).ok_or(SyncError::RecordTooShort)?;

    let mut seq = None;
    let mut pe_data = None;
    let mut pe_name = None;
    while !opts.is_empty() {
        let &[ptype, plen, ref tail @ ..] = opts else {
            return Err(SyncError::OptionTruncated);
        };
        if plen == 0 {
            return Err(SyncError::OptionEmpty);
        }
        let (data, next) = split(tail, usize::from(plen)).ok_or(SyncError::OptionOverrun)?;
        match ptype & !OPT_F_PARAM {
            OPT_SEQ_DATA => {
                let opt = data
                    .first_chunk::<SEQ_OPT_LEN>()
                    .filter(|_| data.len() == SEQ_OPT_LEN)
                    .ok_or(SyncError::SeqLength)?;
                if seq.is_some() {
                    return Err(SyncError::SeqTwice);
                }
                seq = Some(seq_opt(opt, u32::from_be_bytes));
            }
            // The length byte cannot exceed IP_VS_PEDATA_MAXLEN (255).
            OPT_PE_DATA => {
                if pe_data.is_some() {
                    return Err(SyncError::PeDataTwice);
                }
                pe_data = Some(data);
            }
            OPT_PE_NAME => {
                if data.len() > PENAME_MAXLEN {
                    return Err(SyncError::PeNameTooLong);
                }
                if pe_name.is_some() {
                    return Err(SyncError::PeNameTwice);
                }
                pe_name = Some(data);
            }
            // IPVS stops reading the record's options here, so a broken
            // option after it goes unseen.
            _ if ptype & OPT_F_PARAM == 0 => return Err(SyncError::UnknownOption),
            _ => {}
        }
        opts = next;
    }

    let rec = Record {
        af,
        protocol,
        flags: u32::from_be_bytes([f0, f1, f2, f3]),
        state: u16::from_be_bytes([s0, s1]),
        cport: u16::from_be_bytes([cp0, cp1]),
        vport: u16::from_be_bytes([vp0, vp1]),
        dport: u16::from_be_bytes([dp0, dp1]),
        fwmark: u32::from_be_bytes([m0, m1, m2, m3]),
        timeout: u32::from_be_bytes([t0, t1, t2, t3]),
        caddr,
        vaddr,
        daddr,
        seq,
        pe_data,
        pe_name,
    };
    check(&rec)?;
    if rec.pe_data.is_some() && rec.pe_name.is_none() {
        // `ip_vs_conn_fill_param_sync`: "Invalid PE parameters".
        return Err(SyncError::PeParams);
    }
    Ok(rec)
}

/// The checks of a well-framed record, common to both versions, in
/// IPVS's order: flags (`ip_vs_sync_validate_flags`), then protocol and
/// state against the protocol's number of states (templates: against
/// `IP_VS_CTPL_S_LAST`).
fn check(rec: &Record<'_>) -> Result<(), SyncError> {
    if !policy::valid_flags(rec.flags) {
        return Err(SyncError::BadFlags);
    }
    let states = if rec.is_template() {
        super::TEMPLATE_STATES
    } else {
        policy::num_states(rec.protocol).ok_or(SyncError::Protocol)?
    };
    if rec.state >= states {
        return Err(SyncError::State);
    }
    Ok(())
}

/// The persistence engine check of `ip_vs_conn_fill_param_sync` that needs
/// the backup's engines: a record with PE data names an engine, which
/// `known` must recognise. rvs has no persistence engines, so the module
/// passes `|_| false` and such records are refused as IPVS without the
/// engine loaded refuses them. A PE name without PE data is ignored.
pub fn check_pe(rec: &Record<'_>, known: impl FnOnce(&[u8]) -> bool) -> Result<(), SyncError> {
    match (rec.pe_data, rec.pe_name) {
        (None, _) => Ok(()),
        (Some(_), None) => Err(SyncError::PeParams),
        (Some(_), Some(name)) if known(name) => Ok(()),
        (Some(_), Some(_)) => Err(SyncError::NoPeEngine),
    }
}

/// `b` cut after `n` bytes, if it has them (`split_at_checked`, which the
/// kernel's minimum Rust version predates).
fn split(b: &[u8], n: usize) -> Option<(&[u8], &[u8])> {
    Some((b.get(..n)?, b.get(n..)?))
}

/// The three addresses after the fixed header of a record of family `af`.
fn addresses(af: AddrFamily, b: &[u8]) -> Option<([u8; 16], [u8; 16], [u8; 16])> {
    match af {
        AddrFamily::Inet => {
            let (c, rest) = b.split_first_chunk::<4>()?;
            let (v, rest) = rest.split_first_chunk::<4>()?;
            let d = rest.first_chunk::<4>()?;
            Some((v4(*c), v4(*v), v4(*d)))
        }
        AddrFamily::Inet6 => {
            let (c, rest) = b.split_first_chunk::<16>()?;
            let (v, rest) = rest.split_first_chunk::<16>()?;
            let d = rest.first_chunk::<16>()?;
            Some((*c, *v, *d))
        }
    }
}

/// An IPv4 address in rvs's 16-byte form.
fn v4(a: [u8; 4]) -> [u8; 16] {
    let [a0, a1, a2, a3] = a;
    [a0, a1, a2, a3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]
}

/// The sequence option's six words, read with `word` (network order in
/// version 1, host order in version 0).
fn seq_opt(b: &[u8; SEQ_OPT_LEN], word: fn([u8; 4]) -> u32) -> SeqOpt {
    let &[a0, a1, a2, a3, b0, b1, b2, b3, c0, c1, c2, c3, d0, d1, d2, d3, e0, e1, e2, e3, f0, f1, f2, f3] =
        b;
    SeqOpt {
        in_seq: Seq {
            init_seq: word([a0, a1, a2, a3]),
            delta: word([b0, b1, b2, b3]),
            previous_delta: word([c0, c1, c2, c3]),
        },
        out_seq: Seq {
            init_seq: word([d0, d1, d2, d3]),
            delta: word([e0, e1, e2, e3]),
            previous_delta: word([f0, f1, f2, f3]),
        },
    }
}
