// SPDX-License-Identifier: GPL-2.0

//! Full resynchronisation, an rvs extension of IPVS's protocol: a backup
//! that starts asks the masters of its group for their whole connection
//! table, instead of waiting for each connection's next record (IPVS
//! sends a connection again only at its 50th packet or a state change, so
//! a director that restarts and takes over again loses the connections
//! opened while it was away).
//!
//! The request is a version 1 message with no record, followed by a
//! marker, sent to the group and port of the sync messages:
//!
//! | offset | size | field |
//! |---|---|---|
//! | 0 | 8 | version 1 header: reserved 0, syncid, size 24, nr_conns 0, version 1, spare 0 |
//! | 8 | 16 | [`MARKER`] |
//!
//! An IPVS backup that receives it reads a valid message of no record
//! and ignores the rest (`ip_vs_process_message` reads `nr_conns`
//! records, and bytes after them are not looked at); an IPVS master has
//! no socket that receives it. An rvs master whose syncid the request
//! names (or any master if it names 0) answers with its table as
//! ordinary sync messages, which every backup, rvs or IPVS, applies as
//! it applies any record.

#![forbid(unsafe_code)]

use super::{policy, HEADER_LEN, PROTO_VERSION};

/// What follows the header of a request.
pub const MARKER: [u8; 16] = *b"rvs-resync-req/1";

/// Length of a request.
pub const REQUEST_LEN: usize = HEADER_LEN + MARKER.len();

/// A request from a backup whose syncid is `syncid`.
pub fn request(syncid: u8) -> [u8; REQUEST_LEN] {
    let mut r = [0u8; REQUEST_LEN];
    let [s0, s1] = (REQUEST_LEN as u16).to_be_bytes();
    let header = [0, syncid, s0, s1, 0, PROTO_VERSION, 0, 0];
    for (dst, src) in r.iter_mut().zip(header.iter().chain(MARKER.iter())) {
        *dst = *src;
    }
    r
}

/// Whether `dgram` is a request that a master with syncid `own` answers:
/// exactly [`request`]'s bytes for a syncid that is `own`, or 0, or any
/// when `own` is 0 (the syncid rules of `policy::accepts_syncid`, both
/// ways).
pub fn is_request_for(dgram: &[u8], own: u8) -> bool {
    let Ok(r) = <[u8; REQUEST_LEN]>::try_from(dgram) else {
        return false;
    };
    let [_, syncid, ..] = r;
    r == request(syncid) && (policy::accepts_syncid(own, syncid) || syncid == 0)
}

#[cfg(test)]
mod tests {
    use super::super::decode::Message;
    use super::*;

    #[test]
    fn a_request_is_an_empty_version_1_message_to_backups() {
        let r = request(7);
        assert_eq!(&r[..8], &[0, 7, 0, 24, 0, 1, 0, 0]);
        // A backup (rvs's decoder, which follows IPVS's) reads no record.
        let m = Message::parse(&r, 7).unwrap();
        assert_eq!(m.nr_conns(), 0);
        assert_eq!(m.records().count(), 0);
        let m = Message::parse(&r, 0).unwrap();
        assert_eq!(m.records().count(), 0);
    }

    #[test]
    fn masters_answer_their_syncid_only() {
        assert!(is_request_for(&request(7), 7));
        assert!(is_request_for(&request(7), 0));
        assert!(is_request_for(&request(0), 7));
        assert!(!is_request_for(&request(8), 7));
    }

    #[test]
    fn anything_else_is_not_a_request() {
        let r = request(7);
        assert!(!is_request_for(&r[..23], 7));
        let mut longer = [0u8; REQUEST_LEN + 1];
        longer[..REQUEST_LEN].copy_from_slice(&r);
        assert!(!is_request_for(&longer, 7));
        for i in 0..REQUEST_LEN {
            if i == 1 {
                continue;
            }
            let mut bad = r;
            bad[i] ^= 0x20;
            assert!(!is_request_for(&bad, 7), "byte {i} changed");
        }
    }
}
