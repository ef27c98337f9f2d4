// SPDX-License-Identifier: GPL-2.0

//! Host tests of the sync codec: byte layouts written by hand from the C
//! structs, every refusal, round trips, and a fuzz run against a second
//! decoder written in the shape of ip_vs_sync.c's own loops.

use super::decode::{check_pe, Message};
use super::encode::{buffer_len, record_len, BuildError, Builder};
use super::*;
use std::vec;
use std::vec::Vec;

const TCP: u8 = 6;
const UDP: u8 = 17;
const SCTP: u8 = 132;

fn a4(a: [u8; 4]) -> [u8; 16] {
    let mut o = [0; 16];
    o[..4].copy_from_slice(&a);
    o
}

fn a6(last: u8) -> [u8; 16] {
    let mut o = [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
    o[15] = last;
    o
}

/// Decodes `buf` with syncid 0 and collects every item.
fn items(buf: &[u8]) -> Vec<Result<Record<'_>, SyncError>> {
    Message::parse(buf, 0).unwrap().records().collect()
}

/// Sets the header's size field to the buffer's length.
fn fix_size(buf: &mut [u8]) {
    let n = buf.len() as u16;
    buf[2..4].copy_from_slice(&n.to_be_bytes());
}

/// A version 1 message of `records` (raw record bytes, each padded to 4
/// bytes except the last), size and count filled in.
fn v1_msg(syncid: u8, records: &[&[u8]]) -> Vec<u8> {
    let mut m = vec![0, syncid, 0, 0, records.len() as u8, 1, 0, 0];
    for (i, r) in records.iter().enumerate() {
        m.extend_from_slice(r);
        if i + 1 < records.len() {
            while m.len() % 4 != 0 {
                m.push(0);
            }
        }
    }
    fix_size(&mut m);
    m
}

/// A plain IPv4 TCP ESTABLISHED record, 36 bytes, then `opts`; ver_size
/// counts them.
fn v4_rec(opts: &[u8]) -> Vec<u8> {
    let len = (36 + opts.len()) as u16;
    let mut r = vec![
        0x00, TCP, // type, protocol
    ];
    r.extend_from_slice(&len.to_be_bytes()); // ver_size
    r.extend_from_slice(&[0, 0, 0, 0x03]); // flags: DROUTE
    r.extend_from_slice(&[0, 1]); // state: ESTABLISHED
    r.extend_from_slice(&[0x9c, 0x40, 0, 80, 0, 80]); // cport 40000, vport, dport
    r.extend_from_slice(&[0, 0, 0, 0]); // fwmark
    r.extend_from_slice(&[0, 0, 0x03, 0x84]); // timeout 900
    r.extend_from_slice(&[10, 0, 0, 1, 192, 168, 1, 10, 10, 1, 1, 2]);
    r.extend_from_slice(opts);
    r
}

// ---------------------------------------------------------------------
// Exact layouts, written from the C structs.

/// One IPv4 TCP record with sequence data, as `struct ip_vs_sync_mesg`,
/// `struct ip_vs_sync_v4` and `ip_vs_sync_conn_options` lay it out.
const V1_V4_SEQ: [u8; 70] = [
    // struct ip_vs_sync_mesg
    0x00, // 0: reserved
    0x07, // 1: syncid
    0x00, 0x46, // 2: size = 70, be16
    0x01, // 4: nr_conns
    0x01, // 5: version = SYNC_PROTO_VER
    0x00, 0x00, // 6: spare
    // struct ip_vs_sync_v4, at offset 8
    0x00, // +0: type (IPv4)
    0x06, // +1: protocol TCP
    0x00, 0x3e, // +2: ver_size = version 0, size 62 = 36 + 2 + 24
    0x00, 0x00, 0x04, 0x03, // +4: flags be32 = IN_SEQ | DROUTE (HASHED dropped)
    0x00, 0x01, // +8: state ESTABLISHED
    0x9c, 0x40, // +10: cport 40000
    0x00, 0x50, // +12: vport 80
    0x1f, 0x90, // +14: dport 8080
    0x01, 0x02, 0x03, 0x04, // +16: fwmark be32
    0x00, 0x00, 0x03, 0x84, // +20: timeout 900 s
    10, 0, 0, 1, // +24: caddr
    192, 168, 1, 10, // +28: vaddr
    10, 1, 1, 2, // +32: daddr
    // option at +36: IPVS_OPT_SEQ_DATA, length 24
    0x01, 0x18, // type, length
    0x11, 0x11, 0x11, 0x11, // in_seq.init_seq
    0x00, 0x00, 0x00, 0x10, // in_seq.delta
    0x00, 0x00, 0x00, 0x08, // in_seq.previous_delta
    0x22, 0x22, 0x22, 0x22, // out_seq.init_seq
    0xff, 0xff, 0xff, 0xf0, // out_seq.delta
    0x00, 0x00, 0x00, 0x00, // out_seq.previous_delta
];

fn v1_v4_seq_record() -> Record<'static> {
    Record {
        af: AddrFamily::Inet,
        protocol: TCP,
        flags: flags::IN_SEQ | flags::HASHED | flags::DROUTE,
        state: 1,
        cport: 40000,
        vport: 80,
        dport: 8080,
        fwmark: 0x0102_0304,
        timeout: 900,
        caddr: a4([10, 0, 0, 1]),
        vaddr: a4([192, 168, 1, 10]),
        daddr: a4([10, 1, 1, 2]),
        seq: Some(SeqOpt {
            in_seq: Seq {
                init_seq: 0x1111_1111,
                delta: 0x10,
                previous_delta: 8,
            },
            out_seq: Seq {
                init_seq: 0x2222_2222,
                delta: 0xffff_fff0,
                previous_delta: 0,
            },
        }),
        pe_data: None,
        pe_name: None,
    }
}

/// An IPv4 template with PE data and name (46 bytes, padded to 48), then
/// an IPv6 UDP record (72 bytes, last, unpadded).
const V1_PE_V6: [u8; 128] = [
    // header
    0x00, 0x00, // reserved, syncid 0
    0x00, 0x80, // size 128
    0x02, 0x01, 0x00, 0x00, // nr_conns 2, version 1, spare
    // record 1 at 8: struct ip_vs_sync_v4
    0x00, 0x11, // type IPv4, protocol UDP
    0x00, 0x2e, // ver_size: 46 = 36 + (2 + 3) + (2 + 3)
    0x00, 0x00, 0x10, 0x00, // flags TEMPLATE | MASQ
    0x00, 0x00, // state NONE
    0x13, 0xc4, // cport 5060
    0x13, 0xc4, // vport 5060
    0x13, 0xc4, // dport 5060
    0x00, 0x00, 0x00, 0x00, // fwmark
    0x00, 0x00, 0x01, 0x2c, // timeout 300
    10, 0, 0, 9, 10, 0, 0, 100, 10, 0, 1, 1, // caddr, vaddr, daddr
    0x02, 0x03, b'a', b'b', b'c', // +36: IPVS_OPT_PE_DATA "abc"
    0x03, 0x03, b's', b'i', b'p', // +41: IPVS_OPT_PE_NAME "sip"
    0x00, 0x00, // padding to 56 (written before the next record)
    // record 2 at 56: struct ip_vs_sync_v6
    0x01, 0x11, // type STYPE_F_INET6, protocol UDP
    0x00, 0x48, // ver_size 72
    0x00, 0x00, 0x01, 0x02, // flags INACTIVE | TUNNEL
    0x00, 0x00, // state 0
    0x00, 0x35, 0x00, 0x35, 0x00, 0x35, // ports 53
    0x00, 0x00, 0x00, 0x2a, // fwmark 42
    0x00, 0x00, 0x01, 0x2c, // timeout 300
    0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01, // caddr
    0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x02, // vaddr
    0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x03, // daddr
];

fn v1_pe_v6_records() -> [Record<'static>; 2] {
    [
        Record {
            af: AddrFamily::Inet,
            protocol: UDP,
            flags: flags::TEMPLATE,
            cport: 5060,
            vport: 5060,
            dport: 5060,
            timeout: 300,
            caddr: a4([10, 0, 0, 9]),
            vaddr: a4([10, 0, 0, 100]),
            daddr: a4([10, 0, 1, 1]),
            pe_data: Some(b"abc"),
            pe_name: Some(b"sip"),
            ..Record::EMPTY
        },
        Record {
            af: AddrFamily::Inet6,
            protocol: UDP,
            flags: flags::INACTIVE | flags::TUNNEL,
            cport: 53,
            vport: 53,
            dport: 53,
            fwmark: 42,
            timeout: 300,
            caddr: a6(1),
            vaddr: a6(2),
            daddr: a6(3),
            ..Record::EMPTY
        },
    ]
}

/// Version 0: a plain record, then one with sequence data in host order
/// (`struct ip_vs_sync_mesg_v0`, `struct ip_vs_sync_conn_v0`).
fn v0_bytes() -> Vec<u8> {
    let mut m = vec![
        // struct ip_vs_sync_mesg_v0
        0x02, // 0: nr_conns
        0x05, // 1: syncid
        0x00, 0x4c, // 2: size 76 = 4 + 24 + 48
        // struct ip_vs_sync_conn_v0 at 4
        0x00, 0x06, // reserved, protocol TCP
        0x9c, 0x40, 0x00, 0x50, 0x00, 0x50, // cport 40000, vport 80, dport 80
        10, 0, 0, 1, 192, 168, 1, 10, 10, 1, 1, 2, // caddr, vaddr, daddr
        0x00, 0x03, // flags be16: DROUTE (NFCT, bit 16, cut off)
        0x00, 0x05, // state TIME_WAIT
        // struct ip_vs_sync_conn_v0 at 28
        0x00, 0x06, 0x9c, 0x41, 0x00, 0x50, 0x00, 0x50, //
        10, 0, 0, 2, 192, 168, 1, 10, 10, 1, 1, 3, //
        0x06, 0x00, // flags: IN_SEQ | OUT_SEQ | MASQ
        0x00, 0x01, // state ESTABLISHED
    ];
    // ip_vs_sync_conn_options at 52: a memcpy, so host byte order.
    for w in [1u32, 2, 3, 4, 5, 6] {
        m.extend_from_slice(&w.to_ne_bytes());
    }
    assert_eq!(m.len(), 76);
    m
}

fn v0_records() -> [Record<'static>; 2] {
    [
        Record {
            protocol: TCP,
            flags: flags::NFCT | flags::HASHED | flags::DROUTE,
            state: 5,
            cport: 40000,
            vport: 80,
            dport: 80,
            caddr: a4([10, 0, 0, 1]),
            vaddr: a4([192, 168, 1, 10]),
            daddr: a4([10, 1, 1, 2]),
            ..Record::EMPTY
        },
        Record {
            protocol: TCP,
            flags: flags::SEQ_MASK,
            state: 1,
            cport: 40001,
            vport: 80,
            dport: 80,
            caddr: a4([10, 0, 0, 2]),
            vaddr: a4([192, 168, 1, 10]),
            daddr: a4([10, 1, 1, 3]),
            seq: Some(SeqOpt {
                in_seq: Seq {
                    init_seq: 1,
                    delta: 2,
                    previous_delta: 3,
                },
                out_seq: Seq {
                    init_seq: 4,
                    delta: 5,
                    previous_delta: 6,
                },
            }),
            ..Record::EMPTY
        },
    ]
}

fn build(version: Version, syncid: u8, maxlen: u16, recs: &[Record<'_>]) -> Vec<u8> {
    let mut buf = vec![0u8; buffer_len(maxlen)];
    let mut b = Builder::new(&mut buf, version, syncid, maxlen).unwrap();
    for r in recs {
        b.push(r).unwrap();
    }
    let n = b.finish();
    buf.truncate(n);
    buf
}

#[test]
fn encodes_v4_record_with_seq_exactly() {
    assert_eq!(
        build(Version::V1, 7, 1472, &[v1_v4_seq_record()]),
        V1_V4_SEQ
    );
}

#[test]
fn decodes_v4_record_with_seq() {
    let m = Message::parse(&V1_V4_SEQ, 7).unwrap();
    assert_eq!((m.version(), m.syncid(), m.nr_conns()), (Version::V1, 7, 1));
    let got: Vec<_> = m.records().collect();
    let want = Record {
        flags: flags::IN_SEQ | flags::DROUTE,
        ..v1_v4_seq_record()
    };
    assert_eq!(got, vec![Ok(want)]);
}

#[test]
fn encodes_pe_options_and_padding_exactly() {
    assert_eq!(build(Version::V1, 0, 1472, &v1_pe_v6_records()), V1_PE_V6);
}

#[test]
fn decodes_pe_options_and_padding() {
    let got = items(&V1_PE_V6);
    let want = v1_pe_v6_records();
    assert_eq!(got, vec![Ok(want[0]), Ok(want[1])]);
    // rvs has no persistence engine: the template is refused after all.
    let first = got[0].unwrap();
    assert_eq!(check_pe(&first, |_| false), Err(SyncError::NoPeEngine));
    assert_eq!(check_pe(&first, |n| n == b"sip"), Ok(()));
    assert_eq!(check_pe(&got[1].unwrap(), |_| false), Ok(()));
}

#[test]
fn encodes_v0_exactly() {
    assert_eq!(build(Version::V0, 5, 1472, &v0_records()), v0_bytes());
}

#[test]
fn decodes_v0() {
    let buf = v0_bytes();
    let m = Message::parse(&buf, 5).unwrap();
    assert_eq!((m.version(), m.nr_conns()), (Version::V0, 2));
    let [a, b] = v0_records();
    let got: Vec<_> = m.records().collect();
    assert_eq!(
        got,
        vec![
            Ok(Record {
                flags: flags::DROUTE,
                ..a
            }),
            Ok(b)
        ]
    );
}

// ---------------------------------------------------------------------
// What the encoder sends.

#[test]
fn flags_sent_are_the_connections_less_hashed() {
    let all = 0x0001_3fff & !flags::ONE_PACKET;
    let r = Record {
        protocol: UDP,
        flags: all,
        ..Record::EMPTY
    };
    let buf = build(Version::V1, 0, 1472, &[r]);
    // NFCT (bit 16) goes out in version 1 despite ip_vs.h's comment.
    assert_eq!(&buf[12..16], &(all & !flags::HASHED).to_be_bytes());
    let buf = build(Version::V0, 0, 1472, &[r]);
    assert_eq!(&buf[24..26], &((all & !flags::HASHED) as u16).to_be_bytes());
}

#[test]
fn seq_option_follows_the_flags() {
    // SEQ flags without data: zeros are sent, as IPVS sends its zeroed
    // in_seq/out_seq.
    let r = Record {
        protocol: TCP,
        state: 1,
        flags: flags::OUT_SEQ,
        ..Record::EMPTY
    };
    let buf = build(Version::V1, 0, 1472, &[r]);
    assert_eq!(buf.len(), 8 + 62);
    assert_eq!(&buf[44..46], &[1, 24]);
    assert!(buf[46..].iter().all(|&b| b == 0));
    // Data without flags: not sent.
    let r = Record {
        flags: 0,
        ..v1_v4_seq_record()
    };
    assert_eq!(build(Version::V1, 0, 1472, &[r]).len(), 8 + 36);
}

#[test]
fn pe_name_goes_only_with_pe_data() {
    let r = Record {
        protocol: UDP,
        pe_name: Some(b"sip"),
        ..Record::EMPTY
    };
    assert_eq!(record_len(&r, Version::V1), Ok(36));
    assert_eq!(build(Version::V1, 0, 1472, &[r]).len(), 8 + 36);
    let r = Record {
        pe_data: Some(b""),
        ..r
    };
    assert_eq!(record_len(&r, Version::V1), Ok(36));
    // Version 0 has no options but sequence data.
    let r = Record {
        pe_data: Some(b"x"),
        ..r
    };
    assert_eq!(record_len(&r, Version::V0), Ok(24));
}

#[test]
fn refuses_what_cannot_be_sent() {
    let mut buf = vec![0u8; 2000];
    let mut b = Builder::new(&mut buf, Version::V1, 0, 1472).unwrap();
    let long = [0u8; 256];
    let r = Record {
        pe_data: Some(&long),
        ..Record::EMPTY
    };
    assert_eq!(b.push(&r), Err(BuildError::PeDataTooLong));
    let r = Record {
        pe_data: Some(&long[..255]),
        pe_name: Some(&long[..17]),
        ..Record::EMPTY
    };
    assert_eq!(b.push(&r), Err(BuildError::PeNameTooLong));
    // The longest record IPVS can send.
    let r = Record {
        af: AddrFamily::Inet6,
        flags: flags::SEQ_MASK,
        pe_data: Some(&long[..255]),
        pe_name: Some(&long[..16]),
        ..Record::EMPTY
    };
    assert_eq!(record_len(&r, Version::V1), Ok(MAX_RECORD_LEN));
    assert_eq!(b.push(&r), Ok(()));
    assert!(!b.is_empty() && b.nr_conns() == 1);

    let mut b = Builder::new(&mut buf, Version::V0, 0, 1472).unwrap();
    let r = Record {
        af: AddrFamily::Inet6,
        ..Record::EMPTY
    };
    assert_eq!(b.push(&r), Err(BuildError::V0NotIpv4));
    assert!(b.is_empty());
    assert_eq!(b.as_bytes(), &[0, 0, 0, 4]);
}

#[test]
fn a_full_message_is_reported_and_left_complete() {
    let r = Record {
        protocol: UDP,
        ..Record::EMPTY
    };
    let mut buf = vec![0u8; 100];
    let mut b = Builder::new(&mut buf, Version::V1, 3, 100).unwrap();
    b.push(&r).unwrap(); // 44
    b.push(&r).unwrap(); // 80
    assert_eq!(b.push(&r), Err(BuildError::Full)); // 116 > 100
    assert_eq!(b.len(), 80);
    let bytes = b.as_bytes().to_vec();
    assert_eq!(bytes.len(), 80);
    assert_eq!(items(&bytes).len(), 2);
    // Exactly at the limit fits.
    let mut buf = vec![0u8; 80];
    let mut b = Builder::new(&mut buf, Version::V1, 3, 80).unwrap();
    b.push(&r).unwrap();
    b.push(&r).unwrap();
    assert_eq!(b.finish(), 80);
}

#[test]
fn padding_counts_in_the_fit_check() {
    // 8 + 41 = 49; the next record needs 3 bytes of padding and 36.
    let odd = Record {
        protocol: UDP,
        flags: flags::TEMPLATE,
        pe_data: Some(b"abc"),
        ..Record::EMPTY
    };
    let plain = Record {
        protocol: UDP,
        ..Record::EMPTY
    };
    for (maxlen, fits) in [(87u16, false), (88, true)] {
        let mut buf = vec![0u8; buffer_len(maxlen)];
        let mut b = Builder::new(&mut buf, Version::V1, 0, maxlen).unwrap();
        b.push(&odd).unwrap();
        assert_eq!(b.len(), 49);
        assert_eq!(b.push(&plain).is_ok(), fits, "maxlen {maxlen}");
        if fits {
            assert_eq!(b.len(), 88);
            assert_eq!(&b.as_bytes()[49..52], &[0, 0, 0]);
        }
    }
}

#[test]
fn the_first_record_always_fits_as_in_ip_vs_sync_buff_create() {
    // A master's sync_maxlen may be as small as 1.
    let r = Record {
        protocol: UDP,
        ..Record::EMPTY
    };
    let mut buf = vec![0u8; buffer_len(1)];
    let mut b = Builder::new(&mut buf, Version::V1, 0, 1).unwrap();
    b.push(&r).unwrap();
    assert_eq!(b.push(&r), Err(BuildError::Full));
    assert_eq!(b.finish(), 44);
    // Unless the caller's buffer is too short for it.
    let mut buf = vec![0u8; 40];
    let mut b = Builder::new(&mut buf, Version::V1, 0, 1).unwrap();
    assert_eq!(b.push(&r), Err(BuildError::BufferTooSmall));
    let mut buf = vec![0u8; 40];
    assert_eq!(
        Builder::new(&mut buf, Version::V1, 0, 41).err(),
        Some(BuildError::BufferTooSmall)
    );
    let mut buf = vec![0u8; 3];
    assert_eq!(
        Builder::new(&mut buf, Version::V0, 0, 0).err(),
        Some(BuildError::BufferTooSmall)
    );
}

#[test]
fn at_most_255_records_per_message() {
    let r = Record {
        protocol: UDP,
        ..Record::EMPTY
    };
    let mut buf = vec![0u8; 65535];
    let mut b = Builder::new(&mut buf, Version::V1, 0, 65535).unwrap();
    for _ in 0..255 {
        b.push(&r).unwrap();
    }
    assert_eq!(b.push(&r), Err(BuildError::Full));
    let n = b.finish();
    assert_eq!(n, 8 + 255 * 36);
    let got = items(&buf[..n]);
    assert_eq!(got.len(), 255);
    assert!(got.iter().all(|x| x.is_ok()));
}

// ---------------------------------------------------------------------
// The header.

#[test]
fn header_refusals() {
    for len in 0..4 {
        assert_eq!(
            Message::parse(&[0, 0, 0, len as u8][..len], 0).err(),
            Some(SyncError::TooShort)
        );
    }
    // A version 1 header cut short (size consistent).
    for len in 4..8 {
        let mut m = vec![0, 0, 0, 0, 0, 1, 0, 0];
        m.truncate(len);
        fix_size(&mut m);
        assert_eq!(Message::parse(&m, 0).err(), Some(SyncError::TooShort));
    }
    let good = v1_msg(9, &[&v4_rec(&[])]);
    let mut m = good.clone();
    m[3] += 1;
    assert_eq!(Message::parse(&m, 0).err(), Some(SyncError::SizeMismatch));
    let mut m = good.clone();
    m.push(0);
    assert_eq!(Message::parse(&m, 0).err(), Some(SyncError::SizeMismatch));
    // syncid: 0 takes all, else only its own.
    assert!(Message::parse(&good, 0).is_ok());
    assert!(Message::parse(&good, 9).is_ok());
    assert_eq!(Message::parse(&good, 8).err(), Some(SyncError::OtherSyncId));
    // Version, spare.
    for (at, v) in [(5, 2u8), (5, 0), (6, 1), (7, 1)] {
        let mut m = good.clone();
        m[at] = v;
        assert_eq!(
            Message::parse(&m, 0).err(),
            Some(SyncError::UnknownVersion),
            "byte {at} = {v}"
        );
    }
    // The size check comes first, then syncid, then the version.
    let mut m = good.clone();
    m[5] = 2;
    assert_eq!(Message::parse(&m, 8).err(), Some(SyncError::OtherSyncId));
    m[2] = 0xff;
    assert_eq!(Message::parse(&m, 8).err(), Some(SyncError::SizeMismatch));
    // A zero-record version 1 message is valid and empty.
    let m = v1_msg(0, &[]);
    assert_eq!(items(&m), vec![]);
}

#[test]
fn a_nonzero_first_byte_means_version_0() {
    // Version 1 bytes with byte 0 set are a version 0 message of byte-0
    // records, as IPVS reads them.
    let mut m = v1_msg(0, &[&v4_rec(&[])]);
    m[0] = 1;
    let msg = Message::parse(&m, 0).unwrap();
    assert_eq!((msg.version(), msg.nr_conns()), (Version::V0, 1));
}

// ---------------------------------------------------------------------
// Record framing: each drops the rest of the datagram.

fn first_err(buf: &[u8]) -> SyncError {
    items(buf)
        .into_iter()
        .find_map(|x| x.err())
        .expect("an error")
}

#[test]
fn nr_conns_promising_more_than_there_is() {
    let mut m = v1_msg(0, &[&v4_rec(&[])]);
    m[4] = 3;
    let got = items(&m);
    assert_eq!(got.len(), 2);
    assert!(got[0].is_ok());
    assert_eq!(got[1], Err(SyncError::MissingRecords));
    // The last record's missing padding does not count as a record.
    let mut m = v1_msg(0, &[&v4_rec(&[0x44, 1, 0])]); // 39 bytes
    m[4] = 2;
    assert_eq!(first_err(&m), SyncError::MissingRecords);
    // Fewer records than there are: the rest is ignored.
    let mut m = v1_msg(0, &[&v4_rec(&[]), &v4_rec(&[])]);
    m[4] = 1;
    assert_eq!(items(&m).len(), 1);
}

#[test]
fn fewer_than_36_bytes_for_a_record() {
    for tail in 1..36 {
        let mut m = v1_msg(0, &[&v4_rec(&[])]);
        m[4] = 2;
        m.extend(std::iter::repeat_n(0, tail));
        fix_size(&mut m);
        assert_eq!(first_err(&m), SyncError::RecordTruncated, "tail {tail}");
    }
    // Even for an IPv6 record whose declared length would fit.
    let mut r = v4_rec(&[]);
    r[0] = 1;
    r[2..4].copy_from_slice(&30u16.to_be_bytes());
    r.truncate(30);
    let m = v1_msg(0, &[&r]);
    assert_eq!(first_err(&m), SyncError::RecordTruncated);
}

#[test]
fn record_length_past_the_datagram() {
    let mut r = v4_rec(&[]);
    r[2..4].copy_from_slice(&37u16.to_be_bytes());
    assert_eq!(first_err(&v1_msg(0, &[&r])), SyncError::RecordOverrun);
    r[2..4].copy_from_slice(&0x0fffu16.to_be_bytes());
    assert_eq!(first_err(&v1_msg(0, &[&r])), SyncError::RecordOverrun);
    // The overrun is checked before the version.
    r[2..4].copy_from_slice(&0x1fffu16.to_be_bytes());
    assert_eq!(first_err(&v1_msg(0, &[&r])), SyncError::RecordOverrun);
}

#[test]
fn record_version_not_0() {
    for v in 1..16u16 {
        let mut r = v4_rec(&[]);
        r[2..4].copy_from_slice(&((v << 12) | 36).to_be_bytes());
        assert_eq!(first_err(&v1_msg(0, &[&r])), SyncError::RecordVersion);
    }
}

#[test]
fn record_types() {
    for t in 0..=255u8 {
        let mut r = v4_rec(&[]);
        r[0] = t;
        let m = v1_msg(0, &[&r]);
        let got = items(&m);
        match t {
            0 => assert!(got[0].is_ok()),
            // Bit 0: IPv6 whatever the other bits, and 36 bytes are too
            // few for it.
            t if t & 1 != 0 => assert_eq!(got[0], Err(SyncError::RecordTooShort)),
            _ => assert_eq!(got[0], Err(SyncError::BadType), "type {t}"),
        }
    }
}

#[test]
fn record_shorter_than_its_fixed_part() {
    for size in [0u16, 1, 4, 24, 35] {
        let mut r = v4_rec(&[]);
        r[2..4].copy_from_slice(&size.to_be_bytes());
        assert_eq!(
            first_err(&v1_msg(0, &[&r])),
            SyncError::RecordTooShort,
            "size {size}"
        );
        // The type is read from the datagram before the length is judged.
        r[0] = 2;
        assert_eq!(first_err(&v1_msg(0, &[&r])), SyncError::BadType);
    }
    let mut r = v4_rec(&[0; 36]);
    r[0] = 1;
    r[2..4].copy_from_slice(&71u16.to_be_bytes());
    assert_eq!(first_err(&v1_msg(0, &[&r])), SyncError::RecordTooShort);
    r[2..4].copy_from_slice(&72u16.to_be_bytes());
    // 72 bytes of IPv6, all zero addresses: fine.
    assert!(items(&v1_msg(0, &[&r]))[0].is_ok());
}

#[test]
fn option_framing() {
    let cases: &[(&[u8], SyncError)] = &[
        (&[0x44], SyncError::OptionTruncated),
        (&[1, 0], SyncError::OptionEmpty),
        (&[0x44, 0], SyncError::OptionEmpty),
        (&[2, 10, 1], SyncError::OptionOverrun),
        (&[0x44, 2, 0], SyncError::OptionOverrun),
        (
            &[
                1, 23, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
            ],
            SyncError::SeqLength,
        ),
        (&[2, 1, 7, 0x44, 1, 0, 2, 1, 8], SyncError::PeDataTwice),
        (
            &[3, 17, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
            SyncError::PeNameTooLong,
        ),
        (&[3, 1, b'x', 3, 1, b'y'], SyncError::PeNameTwice),
        // A well-formed option then a broken one.
        (&[0x45, 1, 0, 0x46], SyncError::OptionTruncated),
    ];
    for (opts, want) in cases {
        let m = v1_msg(0, &[&v4_rec(opts)]);
        assert_eq!(first_err(&m), *want, "{opts:?}");
        assert!(want.is_fatal());
    }
    let mut seq = vec![1, 24];
    seq.extend([0; 24]);
    let twice = [seq.clone(), seq.clone()].concat();
    assert_eq!(
        first_err(&v1_msg(0, &[&v4_rec(&twice)])),
        SyncError::SeqTwice
    );
    // 0x41 is sequence data too.
    let mut other = seq.clone();
    other[0] = 0x41;
    let m = v1_msg(0, &[&v4_rec(&[seq.clone(), other].concat())]);
    assert_eq!(first_err(&m), SyncError::SeqTwice);
    // Length is checked before the repeat.
    let mut bad = vec![1, 25];
    bad.extend([0; 25]);
    let m = v1_msg(0, &[&v4_rec(&[seq, bad].concat())]);
    assert_eq!(first_err(&m), SyncError::SeqLength);
}

#[test]
fn a_pe_name_of_16_bytes_is_fine() {
    let mut o = vec![2, 1, 9, 3, 16];
    o.extend([b'n'; 16]);
    let m = v1_msg(0, &[&v4_rec(&o)]);
    let got = items(&m);
    assert_eq!(got[0].unwrap().pe_name, Some(&[b'n'; 16][..]));
    assert_eq!(got[0].unwrap().pe_data, Some(&[9u8][..]));
}

#[test]
fn a_fatal_error_stops_after_the_records_before_it() {
    let mut bad = v4_rec(&[]);
    bad[0] = 2;
    let m = v1_msg(0, &[&v4_rec(&[]), &bad, &v4_rec(&[])]);
    let got = items(&m);
    assert_eq!(got.len(), 2);
    assert!(got[0].is_ok());
    assert_eq!(got[1], Err(SyncError::BadType));
}

// ---------------------------------------------------------------------
// Records refused alone: the next one is read.

#[test]
fn unknown_options() {
    // Skippable: ignored.
    for t in [0x40u8, 0x44, 0x47, 0x7f] {
        let m = v1_msg(0, &[&v4_rec(&[t, 2, 0, 0])]);
        let got = items(&m);
        assert!(got[0].is_ok(), "type {t:#x}");
    }
    // Mandatory: the record is refused, even with a broken option after
    // it (IPVS stops reading there), and the next record is read.
    for t in [0u8, 4, 7, 0x80, 0x81, 0xbf] {
        let m = v1_msg(0, &[&v4_rec(&[t, 1, 0, 1, 0, 0xff]), &v4_rec(&[])]);
        let got = items(&m);
        assert_eq!(got.len(), 2, "type {t:#x}");
        assert_eq!(got[0], Err(SyncError::UnknownOption));
        assert!(got[1].is_ok());
    }
}

/// A record with its flags, protocol and state replaced.
fn with(flags: u32, protocol: u8, state: u16, opts: &[u8]) -> Vec<u8> {
    let mut r = v4_rec(opts);
    r[1] = protocol;
    r[4..8].copy_from_slice(&flags.to_be_bytes());
    r[8..10].copy_from_slice(&state.to_be_bytes());
    r
}

/// The outcome of one record followed by a good one.
fn alone(rec: &[u8]) -> Result<(), SyncError> {
    let m = v1_msg(0, &[rec, &v4_rec(&[])]);
    let got = items(&m);
    assert_eq!(got.len(), 2);
    assert!(got[1].is_ok());
    got[0].map(|_| ())
}

#[test]
fn flag_checks() {
    use flags::*;
    assert_eq!(
        alone(&with(ONE_PACKET, UDP, 0, &[])),
        Err(SyncError::BadFlags)
    );
    assert_eq!(
        alone(&with(NO_CPORT | TEMPLATE, UDP, 0, &[])),
        Err(SyncError::BadFlags)
    );
    assert_eq!(alone(&with(NO_CPORT, UDP, 0, &[])), Ok(()));
    assert_eq!(alone(&with(TEMPLATE, UDP, 0, &[])), Ok(()));
    // Everything else is accepted as sent (the backup masks later).
    assert_eq!(alone(&with(!(ONE_PACKET | NO_CPORT), TCP, 1, &[])), Ok(()));
    // Flags are judged before protocol and state.
    assert_eq!(
        alone(&with(ONE_PACKET, 1, 99, &[])),
        Err(SyncError::BadFlags)
    );
}

#[test]
fn protocol_and_state_checks() {
    let t = flags::TEMPLATE;
    for (proto, states) in [(TCP, 11u16), (UDP, 1), (SCTP, 14)] {
        assert_eq!(alone(&with(0, proto, states - 1, &[])), Ok(()));
        assert_eq!(alone(&with(0, proto, states, &[])), Err(SyncError::State));
        assert_eq!(alone(&with(0, proto, 0xffff, &[])), Err(SyncError::State));
    }
    for proto in [0u8, 1, 50, 51, 58, 255] {
        assert_eq!(alone(&with(0, proto, 0, &[])), Err(SyncError::Protocol));
        // Templates: any protocol, states NONE and ASSURED.
        assert_eq!(alone(&with(t, proto, 1, &[])), Ok(()));
        assert_eq!(alone(&with(t, proto, 2, &[])), Err(SyncError::State));
    }
}

#[test]
fn pe_data_needs_a_pe_name() {
    assert_eq!(
        alone(&with(flags::TEMPLATE, UDP, 0, &[2, 1, 7])),
        Err(SyncError::PeParams)
    );
    // State is judged first.
    assert_eq!(
        alone(&with(flags::TEMPLATE, UDP, 2, &[2, 1, 7])),
        Err(SyncError::State)
    );
    // A name alone is ignored.
    assert_eq!(alone(&with(flags::TEMPLATE, UDP, 0, &[3, 1, b'x'])), Ok(()));
    let r = Record {
        pe_data: Some(b"x"),
        ..Record::EMPTY
    };
    assert_eq!(check_pe(&r, |_| true), Err(SyncError::PeParams));
}

// ---------------------------------------------------------------------
// Version 0 refusals.

fn v0_msg(records: &[&[u8]]) -> Vec<u8> {
    let mut m = vec![records.len() as u8, 0, 0, 0];
    for r in records {
        m.extend_from_slice(r);
    }
    fix_size(&mut m);
    m
}

fn v0_rec(flags: u16, protocol: u8, state: u16) -> Vec<u8> {
    let mut r = vec![0, protocol, 0, 1, 0, 2, 0, 3];
    r.extend([1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3]);
    r.extend(flags.to_be_bytes());
    r.extend(state.to_be_bytes());
    if u32::from(flags) & flags::SEQ_MASK != 0 {
        r.extend([0; 24]);
    }
    r
}

#[test]
fn v0_refusals() {
    let good = v0_rec(0, TCP, 1);
    let m = v0_msg(&[&good, &good]);
    assert!(items(&m).iter().all(|x| x.is_ok()));
    // Truncated records.
    for cut in 1..24 {
        let m = v0_msg(&[&good, &good[..cut]]);
        let got = items(&m);
        assert_eq!(got[1], Err(SyncError::V0Truncated), "cut {cut}");
    }
    let seq = v0_rec(flags::IN_SEQ as u16, TCP, 1);
    for cut in 24..48 {
        let m = v0_msg(&[&seq[..cut]]);
        assert_eq!(items(&m)[0], Err(SyncError::V0SeqTruncated), "cut {cut}");
    }
    let mut m = v0_msg(&[&good]);
    m[0] = 2;
    assert_eq!(items(&m)[1], Err(SyncError::MissingRecords));
    // Refused alone, as in version 1.
    for (rec, want) in [
        (
            v0_rec(flags::ONE_PACKET as u16, TCP, 1),
            SyncError::BadFlags,
        ),
        (v0_rec(0, 1, 0), SyncError::Protocol),
        (v0_rec(0, TCP, 11), SyncError::State),
        (v0_rec(flags::TEMPLATE as u16, 0, 2), SyncError::State),
    ] {
        let m = v0_msg(&[&rec, &good]);
        let got = items(&m);
        assert_eq!(got, vec![Err(want), Ok(got[1].unwrap())]);
    }
    // Version 0 cannot say IPv6: not a framing byte.
    let mut odd = good.clone();
    odd[0] = 0xff;
    assert!(items(&v0_msg(&[&odd]))[0].is_ok());
}

#[test]
fn error_kinds_are_countable() {
    let mut seen = [false; SyncError::COUNT];
    for (i, e) in SyncError::ALL.iter().enumerate() {
        assert_eq!(e.index(), i);
        assert!(!seen[i]);
        seen[i] = true;
        assert!(!e.name().is_empty());
    }
    let names: std::collections::BTreeSet<_> = SyncError::ALL.iter().map(|e| e.name()).collect();
    assert_eq!(names.len(), SyncError::COUNT);
}

// ---------------------------------------------------------------------
// Round trips and fuzzing.

struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn bytes<const N: usize>(&mut self) -> [u8; N] {
        let mut o = [0; N];
        for b in &mut o {
            *b = self.next() as u8;
        }
        o
    }
}

/// A random record the backup accepts: a valid protocol and state, flags
/// without ONE_PACKET nor NO_CPORT on a template, PE data with a name.
fn random_record<'a>(rng: &mut XorShift, pe: &'a [u8], version: Version) -> Record<'a> {
    let v6 = version == Version::V1 && rng.below(2) == 0;
    let af = if v6 {
        AddrFamily::Inet6
    } else {
        AddrFamily::Inet
    };
    let addr = |rng: &mut XorShift| {
        let mut a: [u8; 16] = rng.bytes();
        if !v6 {
            a[4..].fill(0);
        }
        a
    };
    let template = rng.below(4) == 0;
    let mut fl = (rng.next() as u32) & !(flags::ONE_PACKET | flags::HASHED);
    if template {
        fl = (fl | flags::TEMPLATE) & !flags::NO_CPORT;
    } else {
        fl &= !flags::TEMPLATE;
    }
    let (protocol, state) = if template {
        (rng.next() as u8, rng.below(2) as u16)
    } else {
        match rng.below(3) {
            0 => (TCP, rng.below(11) as u16),
            1 => (UDP, 0),
            _ => (SCTP, rng.below(14) as u16),
        }
    };
    let seq = SeqOpt {
        in_seq: Seq {
            init_seq: rng.next() as u32,
            delta: rng.next() as u32,
            previous_delta: rng.next() as u32,
        },
        out_seq: Seq {
            init_seq: rng.next() as u32,
            delta: rng.next() as u32,
            previous_delta: rng.next() as u32,
        },
    };
    let (pe_data, pe_name) = if version == Version::V1 && rng.below(3) == 0 {
        let d = 1 + rng.below(255) as usize;
        let n = 1 + rng.below(16) as usize;
        (Some(&pe[..d]), Some(&pe[..n]))
    } else {
        (None, None)
    };
    if version == Version::V0 {
        fl &= 0xffff;
    }
    Record {
        af,
        protocol,
        flags: fl,
        state,
        cport: rng.next() as u16,
        vport: rng.next() as u16,
        dport: rng.next() as u16,
        fwmark: if version == Version::V1 {
            rng.next() as u32
        } else {
            0
        },
        timeout: if version == Version::V1 {
            rng.next() as u32
        } else {
            0
        },
        caddr: addr(rng),
        vaddr: addr(rng),
        daddr: addr(rng),
        seq: (fl & flags::SEQ_MASK != 0).then_some(seq),
        pe_data,
        pe_name,
    }
}

/// Random messages of random valid records: every record comes back.
#[test]
fn round_trips() {
    let mut rng = XorShift(0x9e37_79b9_7f4a_7c15);
    let pe: Vec<u8> = (0..=255u8).collect();
    for round in 0..2000 {
        let version = if round % 4 == 0 {
            Version::V0
        } else {
            Version::V1
        };
        let maxlen = [1u16, 100, 576, 1472, 8972, 65507][rng.below(6) as usize];
        let syncid = rng.next() as u8;
        let mut buf = vec![0u8; buffer_len(maxlen)];
        let mut sent = Vec::new();
        let mut b = Builder::new(&mut buf, version, syncid, maxlen).unwrap();
        loop {
            let r = random_record(&mut rng, &pe, version);
            match b.push(&r) {
                Ok(()) => sent.push(r),
                Err(BuildError::Full) => break,
                Err(e) => panic!("{e:?}"),
            }
            if sent.len() > 300 {
                panic!("never full");
            }
        }
        let n = b.finish();
        let m = Message::parse(&buf[..n], syncid).unwrap();
        assert_eq!(m.version(), version);
        let got: Vec<_> = m.records().map(|x| x.unwrap()).collect();
        assert_eq!(got, sent, "round {round}");
    }
}

// A decoder in the shape of ip_vs_process_message, ip_vs_proc_sync_conn
// and ip_vs_process_message_v0: offsets into the buffer, checks in the
// C's order, written from the C and not from decode.rs. It returns the
// datagram-level refusal, or each record's outcome.
fn be16(b: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([b[at], b[at + 1]])
}
fn be32(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

fn c_states(template: bool, protocol: u8) -> Option<u16> {
    if template {
        return Some(2); // IP_VS_CTPL_S_LAST
    }
    match protocol {
        6 => Some(11),   // IP_VS_TCP_S_LAST
        17 => Some(1),   // IP_VS_UDP_S_LAST
        132 => Some(14), // IP_VS_SCTP_S_LAST
        _ => None,
    }
}

fn c_validate(flags: u32) -> bool {
    !((flags & 0x0800 != 0 && flags & 0x1000 != 0) || flags & 0x2000 != 0)
}

/// `ip_vs_proc_sync_conn`: Ok(()) applied, Err((fatal, kind)).
fn c_proc_sync_conn(b: &[u8], p: usize, msg_end: usize) -> Result<(), SyncError> {
    let t = b[p];
    let mut q = if t & 1 != 0 {
        p + 72
    } else if t == 0 {
        p + 36
    } else {
        return Err(SyncError::BadType);
    };
    if q > msg_end {
        return Err(SyncError::RecordTooShort);
    }
    let (mut seq, mut data, mut name) = (false, false, false);
    while q < msg_end {
        if q + 2 > msg_end {
            return Err(SyncError::OptionTruncated);
        }
        let ptype = b[q];
        let plen = b[q + 1] as usize;
        q += 2;
        if plen == 0 {
            return Err(SyncError::OptionEmpty);
        }
        if q + plen > msg_end {
            return Err(SyncError::OptionOverrun);
        }
        match ptype & !0x40 {
            1 => {
                if plen != 24 {
                    return Err(SyncError::SeqLength);
                }
                if seq {
                    return Err(SyncError::SeqTwice);
                }
                seq = true;
            }
            2 => {
                // plen > IP_VS_PEDATA_MAXLEN (255) cannot happen: a u8.
                if data {
                    return Err(SyncError::PeDataTwice);
                }
                data = true;
            }
            3 => {
                if plen > 16 {
                    return Err(SyncError::PeNameTooLong);
                }
                if name {
                    return Err(SyncError::PeNameTwice);
                }
                name = true;
            }
            _ => {
                if ptype & 0x40 == 0 {
                    return Err(SyncError::UnknownOption);
                }
            }
        }
        q += plen;
    }
    let flags = be32(b, p + 4);
    if !c_validate(flags) {
        return Err(SyncError::BadFlags);
    }
    let state = be16(b, p + 8);
    match c_states(flags & 0x1000 != 0, b[p + 1]) {
        None => return Err(SyncError::Protocol),
        Some(n) if state >= n => return Err(SyncError::State),
        Some(_) => {}
    }
    if data {
        // No engines loaded.
        return Err(if name {
            SyncError::NoPeEngine
        } else {
            SyncError::PeParams
        });
    }
    Ok(())
}

enum COut {
    Dropped(SyncError),
    Records(Vec<Result<(), SyncError>>),
}

fn c_process_message(b: &[u8], own: u8) -> COut {
    let buflen = b.len();
    if buflen < 4 {
        return COut::Dropped(SyncError::TooShort);
    }
    if buflen != be16(b, 2) as usize {
        return COut::Dropped(SyncError::SizeMismatch);
    }
    if own != 0 && b[1] != own {
        return COut::Dropped(SyncError::OtherSyncId);
    }
    let mut out = Vec::new();
    if buflen >= 8 && b[5] == 1 && b[0] == 0 && b[6] == 0 && b[7] == 0 {
        let mut msg_end = 8;
        for _ in 0..b[4] {
            let p = msg_end;
            if p + 36 > buflen {
                out.push(Err(if p >= buflen {
                    SyncError::MissingRecords
                } else {
                    SyncError::RecordTruncated
                }));
                return COut::Records(out);
            }
            let size = (be16(b, p + 2) & 0x0fff) as usize;
            msg_end = p + size;
            if msg_end > buflen {
                out.push(Err(SyncError::RecordOverrun));
                return COut::Records(out);
            }
            if be16(b, p + 2) >> 12 != 0 {
                out.push(Err(SyncError::RecordVersion));
                return COut::Records(out);
            }
            let r = c_proc_sync_conn(b, p, msg_end);
            out.push(r);
            if matches!(r, Err(e) if e.is_fatal()) {
                return COut::Records(out);
            }
            msg_end = p + ((size + 3) & !3);
        }
    } else {
        let mut p = 4;
        for _ in 0..b[0] {
            if p + 24 > buflen {
                out.push(Err(if p >= buflen {
                    SyncError::MissingRecords
                } else {
                    SyncError::V0Truncated
                }));
                return COut::Records(out);
            }
            let s = p;
            let flags = u32::from(be16(b, s + 20));
            if flags & 0x0600 != 0 {
                p += 48;
                if p > buflen {
                    out.push(Err(SyncError::V0SeqTruncated));
                    return COut::Records(out);
                }
            } else {
                p += 24;
            }
            if !c_validate(flags) {
                out.push(Err(SyncError::BadFlags));
                continue;
            }
            let state = be16(b, s + 22);
            match c_states(flags & 0x1000 != 0, b[s + 1]) {
                None => out.push(Err(SyncError::Protocol)),
                Some(n) if state >= n => out.push(Err(SyncError::State)),
                Some(_) => out.push(Ok(())),
            }
        }
    }
    COut::Records(out)
}

/// Decodes `buf` with decode.rs and with the C-shaped decoder, and checks
/// they agree. Returns whether the datagram got past the header.
fn agree(buf: &[u8], own: u8) -> bool {
    let c = c_process_message(buf, own);
    match Message::parse(buf, own) {
        Err(e) => {
            match c {
                COut::Dropped(ce) => assert_eq!(e, ce, "{buf:02x?}"),
                // Where IPVS reads a version 0 message of no records.
                COut::Records(r) => {
                    assert!(r.is_empty(), "{buf:02x?}");
                    assert!(matches!(e, SyncError::TooShort | SyncError::UnknownVersion));
                    assert_eq!(buf[0], 0);
                }
            }
            assert!(SyncError::ALL.contains(&e));
            false
        }
        Ok(m) => {
            let ours: Vec<Result<(), SyncError>> = m
                .records()
                .map(|x| x.and_then(|r| check_pe(&r, |_| false)))
                .collect();
            assert!(ours.len() <= usize::from(m.nr_conns()));
            if let Some(i) = ours
                .iter()
                .position(|x| matches!(x, Err(e) if e.is_fatal()))
            {
                assert_eq!(i + 1, ours.len(), "items after a fatal error");
            }
            match c {
                COut::Records(r) => assert_eq!(ours, r, "{buf:02x?}"),
                COut::Dropped(e) => panic!("C dropped with {e:?}: {buf:02x?}"),
            }
            true
        }
    }
}

#[test]
fn agrees_with_the_c_shaped_decoder_on_the_hand_built_messages() {
    for m in [&V1_V4_SEQ[..], &V1_PE_V6[..], &v0_bytes()] {
        assert!(agree(m, 0));
    }
}

/// Tens of thousands of datagrams, valid ones damaged at random: cut
/// short, bits flipped, bytes overwritten, with the size field fixed up
/// or not. decode.rs must never panic, must stop after a fatal error, and
/// must agree record by record with the C-shaped decoder.
#[test]
fn fuzz_damaged_datagrams() {
    let mut rng = XorShift(0x2545_f491_4f6c_dd1d);
    let pe: Vec<u8> = (0..=255u8).collect();
    let mut past_header = 0;
    let mut seen = [0u32; SyncError::COUNT];
    for round in 0..40_000 {
        let version = if round % 3 == 0 {
            Version::V0
        } else {
            Version::V1
        };
        let maxlen = [60u16, 200, 600][rng.below(3) as usize];
        let mut buf = vec![0u8; buffer_len(maxlen)];
        let mut b = Builder::new(&mut buf, version, 0, maxlen).unwrap();
        let mut last = None;
        for _ in 0..rng.below(6) {
            let r = random_record(&mut rng, &pe, version);
            let start = (b.len() + 3) & !3;
            if b.push(&r).is_err() {
                break;
            }
            last = Some(start);
        }
        let n = b.finish();
        buf.truncate(n);
        // Damage.
        match rng.below(7) {
            5 if version == Version::V1 && last.is_some() => {
                // One more option on the last record, its length grown to
                // match: repeats and odd lengths reach the option checks.
                let at = last.unwrap();
                let kind = [1u8, 0x41, 2, 3, 4, 0x44][rng.below(6) as usize];
                let len = [24usize, 23, 1, 16, 17][rng.below(5) as usize];
                buf.push(kind);
                buf.push(len as u8);
                buf.extend((0..len).map(|_| rng.next() as u8));
                let size = be16(&buf, at + 2) + 2 + len as u16;
                buf[at + 2..at + 4].copy_from_slice(&size.to_be_bytes());
            }
            0 => {
                let cut = rng.below(n as u64 + 1) as usize;
                buf.truncate(cut);
            }
            1 => {
                for _ in 0..1 + rng.below(4) {
                    let at = rng.below(n as u64) as usize;
                    buf[at] ^= 1 << rng.below(8);
                }
            }
            2 => {
                let at = rng.below(n as u64) as usize;
                buf[at] = rng.next() as u8;
            }
            3 => {
                // Lie about a record length or the count.
                let at = if rng.below(2) == 0 { 4 } else { 10 };
                if at < n {
                    buf[at] = rng.next() as u8;
                }
            }
            4 => {
                // Random garbage behind a plausible header.
                let len = 4 + rng.below(300) as usize;
                buf = (0..len).map(|_| rng.next() as u8).collect();
                if rng.below(2) == 0 {
                    buf[0] = 0;
                    if len >= 8 {
                        buf[5] = 1;
                        buf[6] = 0;
                        buf[7] = 0;
                    }
                }
            }
            _ => {}
        }
        if buf.len() >= 4 && rng.below(4) != 0 {
            fix_size(&mut buf);
        }
        let own = if rng.below(8) == 0 { 1 } else { 0 };
        if agree(&buf, own) {
            past_header += 1;
            let m = Message::parse(&buf, own).unwrap();
            for e in m.records().filter_map(|x| x.err()) {
                seen[e.index()] += 1;
            }
        } else if let Err(e) = Message::parse(&buf, own) {
            seen[e.index()] += 1;
        }
    }
    assert!(past_header > 20_000, "{past_header}");
    // The damage reaches every check but the engine lookup (check_pe).
    for e in SyncError::ALL {
        if e != SyncError::NoPeEngine {
            assert!(seen[e.index()] > 0, "{e:?} never seen");
        }
    }
}

/// A message built a record at a time through `progress`/`resume` (a
/// master's current buffer across packets) has the bytes of one built in
/// one go.
#[test]
fn resumed_builder_builds_the_same_message() {
    let recs = v1_pe_v6_records();
    let whole = build(Version::V1, 9, 1500, &recs);
    let mut buf = vec![0u8; encode::buffer_len(1500)];
    let mut p = encode::Builder::new(&mut buf, Version::V1, 9, 1500)
        .unwrap()
        .progress();
    for r in &recs {
        let mut b = encode::Builder::resume(&mut buf, p).unwrap();
        b.push(r).unwrap();
        p = b.progress();
    }
    assert_eq!(p.nr_conns(), 2);
    assert_eq!(&buf[..p.len()], &whole[..]);
    let mut short = vec![0u8; 10];
    assert_eq!(
        encode::Builder::resume(&mut short, p).unwrap_err(),
        encode::BuildError::BufferTooSmall
    );
}
