// SPDX-License-Identifier: GPL-2.0

//! Building sync datagrams as a master does: [`Builder`] appends records to
//! a caller's buffer as `ip_vs_sync_conn` (version 1) and
//! `ip_vs_sync_conn_v0` append them to the current `ip_vs_sync_buff`, and
//! keeps the header's size and count up to date, so the buffer holds a
//! complete message after every successful push.
//!
//! Sizes follow `ip_vs_sync_buff_create`: a message may grow to
//! `sync_maxlen` bytes, except that its first record always fits (IPVS
//! allocates `max(record + header, sync_maxlen)`), so give the builder a
//! buffer of [`buffer_len`]`(sync_maxlen)` bytes.

#![forbid(unsafe_code)]

use super::super::config::AddrFamily;
use super::{flags, Record, SeqOpt, Version};
use super::{
    HEADER_LEN, HEADER_V0_LEN, MAX_RECORD_LEN, OPT_PE_DATA, OPT_PE_NAME, OPT_SEQ_DATA,
    PEDATA_MAXLEN, PENAME_MAXLEN, PROTO_VERSION, RECORD_V0_FULL_LEN, RECORD_V0_LEN, RECORD_V4_LEN,
    RECORD_V6_LEN, SEQ_OPT_LEN, STYPE_F_INET6, SVER_MASK,
};

/// Why a record was not appended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BuildError {
    /// The message has no room left for this record, or already holds 255
    /// records (`nr_conns` is a u8): send it and push into a new one.
    Full,
    /// The buffer is shorter than `sync_maxlen`, or than this record alone
    /// with a header (see [`buffer_len`]).
    BufferTooSmall,
    /// PE data longer than `IP_VS_PEDATA_MAXLEN` (255): its length byte
    /// cannot say it.
    PeDataTooLong,
    /// A PE name longer than `IP_VS_PENAME_MAXLEN` (16).
    PeNameTooLong,
    /// Version 0 carries IPv4 connections only; `ip_vs_sync_conn_v0` skips
    /// the others.
    V0NotIpv4,
}

/// The header length of a message of `version`.
pub fn header_len(version: Version) -> usize {
    match version {
        Version::V0 => HEADER_V0_LEN,
        Version::V1 => HEADER_LEN,
    }
}

/// The buffer a [`Builder`] needs for messages of up to `sync_maxlen`
/// bytes: that, or a header and the longest record if more.
pub fn buffer_len(sync_maxlen: u16) -> usize {
    usize::from(sync_maxlen).max(HEADER_LEN.saturating_add(MAX_RECORD_LEN))
}

/// The PE data and name a version 1 record carries: IPVS sends data only
/// if non-empty, and a name only with data (`ip_vs_sync_conn`).
fn pe_parts<'r>(rec: &Record<'r>) -> (Option<&'r [u8]>, Option<&'r [u8]>) {
    match rec.pe_data {
        Some(d) if !d.is_empty() => (Some(d), rec.pe_name.filter(|n| !n.is_empty())),
        _ => (None, None),
    }
}

/// The length IPVS gives `rec` in a message of `version`, without padding
/// (the `len` of `ip_vs_sync_conn` / `ip_vs_sync_conn_v0`).
pub fn record_len(rec: &Record<'_>, version: Version) -> Result<usize, BuildError> {
    let seq = rec.flags & flags::SEQ_MASK != 0;
    match version {
        Version::V0 => {
            if rec.af != AddrFamily::Inet {
                return Err(BuildError::V0NotIpv4);
            }
            Ok(if seq {
                RECORD_V0_FULL_LEN
            } else {
                RECORD_V0_LEN
            })
        }
        Version::V1 => {
            let mut len = match rec.af {
                AddrFamily::Inet => RECORD_V4_LEN,
                AddrFamily::Inet6 => RECORD_V6_LEN,
            };
            if seq {
                len = len.saturating_add(2 + SEQ_OPT_LEN);
            }
            let (data, name) = pe_parts(rec);
            if let Some(d) = data {
                if d.len() > PEDATA_MAXLEN {
                    return Err(BuildError::PeDataTooLong);
                }
                len = len.saturating_add(2).saturating_add(d.len());
            }
            if let Some(n) = name {
                if n.len() > PENAME_MAXLEN {
                    return Err(BuildError::PeNameTooLong);
                }
                len = len.saturating_add(2).saturating_add(n.len());
            }
            Ok(len)
        }
    }
}

/// A message being built in a caller's buffer.
///
/// # Invariants
///
/// `head <= end <= buf.len()` once a record is in (`end` is 0 before), and
/// `buf[..head]` is a complete message whose header says `head` bytes and
/// `nr` records.
#[derive(Debug)]
pub struct Builder<'b> {
    buf: &'b mut [u8],
    version: Version,
    maxlen: usize,
    /// Where the message must end: `max(maxlen, header + first record)`.
    end: usize,
    head: usize,
    nr: u8,
}

/// Writes forward into a buffer; a write past its end is refused.
struct Cursor<'x> {
    buf: &'x mut [u8],
    at: usize,
}

impl Cursor<'_> {
    fn put(&mut self, bytes: &[u8]) -> Result<(), BuildError> {
        let end = self
            .at
            .checked_add(bytes.len())
            .ok_or(BuildError::BufferTooSmall)?;
        self.buf
            .get_mut(self.at..end)
            .ok_or(BuildError::BufferTooSmall)?
            .copy_from_slice(bytes);
        self.at = end;
        Ok(())
    }

    fn seq(&mut self, s: &SeqOpt, word: fn(u32) -> [u8; 4]) -> Result<(), BuildError> {
        for w in [
            s.in_seq.init_seq,
            s.in_seq.delta,
            s.in_seq.previous_delta,
            s.out_seq.init_seq,
            s.out_seq.delta,
            s.out_seq.previous_delta,
        ] {
            self.put(&word(w))?;
        }
        Ok(())
    }
}

impl<'b> Builder<'b> {
    /// Starts a message of `version` from `syncid` in `buf`, to be at most
    /// `sync_maxlen` bytes long (but see [`buffer_len`]). The header is
    /// written at once (`ip_vs_sync_buff_create`, `_create_v0`).
    pub fn new(
        buf: &'b mut [u8],
        version: Version,
        syncid: u8,
        sync_maxlen: u16,
    ) -> Result<Builder<'b>, BuildError> {
        let maxlen = usize::from(sync_maxlen);
        let hlen = header_len(version);
        if buf.len() < maxlen || buf.len() < hlen {
            return Err(BuildError::BufferTooSmall);
        }
        let mut b = Builder {
            buf,
            version,
            maxlen,
            end: 0,
            head: hlen,
            nr: 0,
        };
        let mut c = Cursor { buf: b.buf, at: 0 };
        match version {
            // reserved (0: old nr_conns), syncid, size, nr_conns, version,
            // spare.
            Version::V1 => c.put(&[0, syncid, 0, 0, 0, PROTO_VERSION, 0, 0])?,
            // nr_conns, syncid, size.
            Version::V0 => c.put(&[0, syncid, 0, 0])?,
        }
        b.write_header()?;
        Ok(b)
    }

    /// Updates size and nr_conns in the header.
    fn write_header(&mut self) -> Result<(), BuildError> {
        let size = u16::try_from(self.head).map_err(|_| BuildError::BufferTooSmall)?;
        let [s0, s1] = size.to_be_bytes();
        let slots = match self.version {
            Version::V1 => [(2, s0), (3, s1), (4, self.nr)],
            Version::V0 => [(2, s0), (3, s1), (0, self.nr)],
        };
        for (at, byte) in slots {
            *self.buf.get_mut(at).ok_or(BuildError::BufferTooSmall)? = byte;
        }
        Ok(())
    }

    /// Appends `rec`. On [`BuildError::Full`] the message is unchanged and
    /// complete: send it, start another and push `rec` there. A record
    /// that does not fit an empty message is [`BuildError::BufferTooSmall`].
    pub fn push(&mut self, rec: &Record<'_>) -> Result<(), BuildError> {
        let len = record_len(rec, self.version)?;
        // Version 1 records start on a 4-byte boundary of the message
        // (IPVS pads from the buffer's address, which kmalloc aligns).
        let pad = match self.version {
            Version::V1 => self.head.wrapping_neg() & 3,
            Version::V0 => 0,
        };
        let new_head = self
            .head
            .checked_add(pad)
            .and_then(|h| h.checked_add(len))
            .ok_or(BuildError::BufferTooSmall)?;
        let end = if self.nr == 0 {
            let end = self.maxlen.max(new_head);
            if end > self.buf.len() {
                return Err(BuildError::BufferTooSmall);
            }
            end
        } else {
            if new_head > self.end || self.nr == u8::MAX {
                return Err(BuildError::Full);
            }
            self.end
        };
        let mut c = Cursor {
            buf: self.buf,
            at: self.head,
        };
        c.put([0u8; 3].get(..pad).unwrap_or(&[]))?;
        match self.version {
            Version::V1 => write_v1(&mut c, rec, len)?,
            Version::V0 => write_v0(&mut c, rec)?,
        }
        self.end = end;
        self.head = new_head;
        self.nr = self.nr.saturating_add(1);
        self.write_header()
    }

    /// Records in the message.
    pub fn nr_conns(&self) -> u8 {
        self.nr
    }

    /// Whether the message holds no record (IPVS never sends one).
    pub fn is_empty(&self) -> bool {
        self.nr == 0
    }

    /// Length of the message so far, header included.
    pub fn len(&self) -> usize {
        self.head
    }

    /// The message so far, ready to send.
    pub fn as_bytes(&self) -> &[u8] {
        self.buf.get(..self.head).unwrap_or(&[])
    }

    /// Ends the message: its length, the first bytes of the buffer.
    pub fn finish(self) -> usize {
        self.head
    }

    /// Where the message stands, to go on with [`Builder::resume`] once
    /// this builder's borrow of the buffer has ended (a master's current
    /// message lives across packets).
    pub fn progress(&self) -> Progress {
        Progress {
            version: self.version,
            maxlen: self.maxlen,
            end: self.end,
            head: self.head,
            nr: self.nr,
        }
    }

    /// Goes on with the message `p` describes, in the buffer it was begun
    /// in (another buffer gives a garbled message, never an access out of
    /// bounds: every write is checked).
    pub fn resume(buf: &'b mut [u8], p: Progress) -> Result<Builder<'b>, BuildError> {
        if buf.len() < p.maxlen || buf.len() < p.end || buf.len() < p.head {
            return Err(BuildError::BufferTooSmall);
        }
        Ok(Builder {
            buf,
            version: p.version,
            maxlen: p.maxlen,
            end: p.end,
            head: p.head,
            nr: p.nr,
        })
    }
}

/// A message's state between two [`Builder`]s over one buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Progress {
    version: Version,
    maxlen: usize,
    end: usize,
    head: usize,
    nr: u8,
}

impl Progress {
    /// Records in the message.
    pub fn nr_conns(&self) -> u8 {
        self.nr
    }

    /// Length of the message so far.
    pub fn len(&self) -> usize {
        self.head
    }

    /// Whether the message holds no record.
    pub fn is_empty(&self) -> bool {
        self.nr == 0
    }
}

/// An address of family `af` as it travels: 4 or 16 bytes.
fn addr(af: AddrFamily, a: &[u8; 16]) -> &[u8] {
    match af {
        AddrFamily::Inet => a.get(..4).unwrap_or(&[]),
        AddrFamily::Inet6 => a,
    }
}

/// A version 1 record of length `len` (`ip_vs_sync_conn`).
fn write_v1(c: &mut Cursor<'_>, rec: &Record<'_>, len: usize) -> Result<(), BuildError> {
    let typ = match rec.af {
        AddrFamily::Inet => 0,
        AddrFamily::Inet6 => STYPE_F_INET6,
    };
    // Version 0 in the top bits; len is at most MAX_RECORD_LEN < 0x1000.
    let ver_size = u16::try_from(len).map_err(|_| BuildError::BufferTooSmall)? & SVER_MASK;
    c.put(&[typ, rec.protocol])?;
    c.put(&ver_size.to_be_bytes())?;
    c.put(&(rec.flags & !flags::HASHED).to_be_bytes())?;
    c.put(&rec.state.to_be_bytes())?;
    c.put(&rec.cport.to_be_bytes())?;
    c.put(&rec.vport.to_be_bytes())?;
    c.put(&rec.dport.to_be_bytes())?;
    c.put(&rec.fwmark.to_be_bytes())?;
    c.put(&rec.timeout.to_be_bytes())?;
    c.put(addr(rec.af, &rec.caddr))?;
    c.put(addr(rec.af, &rec.vaddr))?;
    c.put(addr(rec.af, &rec.daddr))?;
    if rec.flags & flags::SEQ_MASK != 0 {
        // SEQ_OPT_LEN is 24: fits the length byte.
        c.put(&[OPT_SEQ_DATA, SEQ_OPT_LEN as u8])?;
        c.seq(&rec.seq.unwrap_or_default(), u32::to_be_bytes)?;
    }
    let (data, name) = pe_parts(rec);
    for (kind, part) in [(OPT_PE_DATA, data), (OPT_PE_NAME, name)] {
        if let Some(p) = part {
            let plen = u8::try_from(p.len()).map_err(|_| BuildError::PeDataTooLong)?;
            c.put(&[kind, plen])?;
            c.put(p)?;
        }
    }
    Ok(())
}

/// A version 0 record (`ip_vs_sync_conn_v0`).
fn write_v0(c: &mut Cursor<'_>, rec: &Record<'_>) -> Result<(), BuildError> {
    c.put(&[0, rec.protocol])?;
    c.put(&rec.cport.to_be_bytes())?;
    c.put(&rec.vport.to_be_bytes())?;
    c.put(&rec.dport.to_be_bytes())?;
    c.put(addr(AddrFamily::Inet, &rec.caddr))?;
    c.put(addr(AddrFamily::Inet, &rec.vaddr))?;
    c.put(addr(AddrFamily::Inet, &rec.daddr))?;
    // `htons(cp->flags & ~IP_VS_CONN_F_HASHED)`: the low 16 bits only.
    let low = (rec.flags & !flags::HASHED & 0xffff) as u16;
    c.put(&low.to_be_bytes())?;
    c.put(&rec.state.to_be_bytes())?;
    if rec.flags & flags::SEQ_MASK != 0 {
        // A memcpy of the connection's `struct ip_vs_seq`s: host order.
        c.seq(&rec.seq.unwrap_or_default(), u32::to_ne_bytes)?;
    }
    Ok(())
}
