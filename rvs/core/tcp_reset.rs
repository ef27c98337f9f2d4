// SPDX-License-Identifier: GPL-2.0

//! Ending a TCP connection from the director: the sequence numbers each
//! end expects next, learnt from the segments that pass, and the reset
//! segment (IP header + TCP header, checksums filled in) that ends it.
//!
//! IPVS never ends a connection itself; rvs does when a real server's
//! connections are flushed or its drain deadline passes. Since RFC 5961
//! (Linux follows it) a reset is accepted only if its sequence number is
//! exactly the receiver's next expected one; one that is merely in the
//! window draws a challenge ACK instead, which the director then sees
//! pass (the client's goes to a VIP port that no longer has a
//! connection, and the director's own stack answers it with an exact
//! reset). So the director keeps, per connection, the latest "next
//! sequence" of each end: a client's segment says what the server expects
//! (its sequence plus length) and what the client expects (its
//! acknowledgement); a NAT reply says the same of the other end.

use super::config::AddrFamily;
use super::packet::{csum_add, csum_fold, ip_header_checksum, IPV4_CHECK_OFFSET};

/// What one TCP segment says about the sequence space of its connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SegSeq {
    /// The sequence number after this segment (sequence number plus
    /// payload length, plus one each for SYN and FIN): what its receiver
    /// expects next once it has it.
    pub end: u32,
    /// The acknowledgement number, if the ACK flag is set: what its
    /// sender expects next.
    pub ack: Option<u32>,
}

/// Reads the sequence facts of the TCP header at the start of `l4` (at
/// least 20 bytes) of a segment carrying `payload` bytes after its header.
pub fn seg_seq(l4: &[u8], payload: usize) -> Option<SegSeq> {
    let seq = u32::from_be_bytes(l4.get(4..8)?.try_into().ok()?);
    let ack = u32::from_be_bytes(l4.get(8..12)?.try_into().ok()?);
    let flags = *l4.get(13)?;
    let syn_fin = u32::from(flags & 0x02 != 0).wrapping_add(u32::from(flags & 0x01 != 0));
    // A segment is at most 4 GiB long only on paper; the low 32 bits are
    // what sequence arithmetic uses anyway.
    let end = seq.wrapping_add(payload as u32).wrapping_add(syn_fin);
    Some(SegSeq {
        end,
        ack: (flags & 0x10 != 0).then_some(ack),
    })
}

/// Whether sequence number `a` comes after `b` (RFC 1982 serial
/// arithmetic, as the kernel's `after()`).
pub fn after(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) > 0
}

/// The value to keep for one end's "next expected sequence", given the
/// kept one (`0`: nothing learnt yet) and a new observation: the later of
/// the two, so a retransmission or a stale acknowledgement never moves it
/// back.
pub fn advance(kept: u32, seen: u32) -> u32 {
    if kept == 0 || after(seen, kept) {
        seen
    } else {
        kept
    }
}

/// Length of an IPv4 reset: a 20-byte header and a 20-byte TCP header.
pub const RST_LEN_V4: usize = 40;
/// Length of an IPv6 reset: a 40-byte header and a 20-byte TCP header.
pub const RST_LEN_V6: usize = 60;
/// Room for a reset of either family.
pub const RST_MAX_LEN: usize = RST_LEN_V6;
/// The TTL (hop limit) of resets the director sends.
pub const RST_TTL: u8 = 64;

/// One end of a reset: address (16-byte form, IPv4 in its first four
/// bytes) and port (host order).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct End {
    /// Address, 16-byte form.
    pub addr: [u8; 16],
    /// Port, host order.
    pub port: u16,
}

/// Writes into `out` a TCP reset from `src` to `dst` with sequence number
/// `seq` (flags RST only, so no acknowledgement number, window 0), in an
/// IP header of family `af` with TTL [`RST_TTL`], every checksum filled
/// in. Returns its length ([`RST_LEN_V4`] or [`RST_LEN_V6`]).
pub fn build_rst(
    af: AddrFamily,
    src: &End,
    dst: &End,
    seq: u32,
    out: &mut [u8; RST_MAX_LEN],
) -> usize {
    *out = [0; RST_MAX_LEN];
    let proto = super::packet::IPPROTO_TCP;
    let (ip_len, pseudo) = match af {
        AddrFamily::Inet => {
            let mut ip = [0u8; 20];
            ip[0] = 0x45;
            put(&mut ip, 2, &(RST_LEN_V4 as u16).to_be_bytes());
            // Don't fragment, as the kernel's own resets.
            ip[6] = 0x40;
            ip[8] = RST_TTL;
            ip[9] = proto;
            let (s4, d4) = (v4(&src.addr), v4(&dst.addr));
            put(&mut ip, 12, &s4);
            put(&mut ip, 16, &d4);
            let check = ip_header_checksum(&ip);
            put(&mut ip, IPV4_CHECK_OFFSET, &check.to_be_bytes());
            put(out, 0, &ip);
            (20, csum_add(csum_add(0, &s4), &d4))
        }
        AddrFamily::Inet6 => {
            let mut ip = [0u8; 40];
            ip[0] = 0x60;
            put(&mut ip, 4, &20u16.to_be_bytes());
            ip[6] = proto;
            ip[7] = RST_TTL;
            put(&mut ip, 8, &src.addr);
            put(&mut ip, 24, &dst.addr);
            put(out, 0, &ip);
            (40, csum_add(csum_add(0, &src.addr), &dst.addr))
        }
    };
    let mut tcp = [0u8; 20];
    put(&mut tcp, 0, &src.port.to_be_bytes());
    put(&mut tcp, 2, &dst.port.to_be_bytes());
    put(&mut tcp, 4, &seq.to_be_bytes());
    // Header length 20 bytes, flag RST.
    tcp[12] = 5 << 4;
    tcp[13] = 0x04;
    // Pseudo header: addresses, protocol, TCP length.
    let sum = csum_add(pseudo, &[0, proto, 0, 20]);
    let check = csum_fold(csum_add(sum, &tcp));
    put(&mut tcp, 16, &check.to_be_bytes());
    put(out, ip_len, &tcp);
    match af {
        AddrFamily::Inet => RST_LEN_V4,
        AddrFamily::Inet6 => RST_LEN_V6,
    }
}

/// The IPv4 address in the first four bytes of a 16-byte form.
fn v4(a: &[u8; 16]) -> [u8; 4] {
    [a[0], a[1], a[2], a[3]]
}

/// Copies `bytes` into `buf` at `at` (callers pass offsets that fit).
fn put(buf: &mut [u8], at: usize, bytes: &[u8]) {
    if let Some(d) = buf.get_mut(at..at.saturating_add(bytes.len())) {
        d.copy_from_slice(bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{csum_fold_raw, parse_ip, IPPROTO_TCP};

    fn end(a: &[u8], port: u16) -> End {
        let mut addr = [0u8; 16];
        addr[..a.len()].copy_from_slice(a);
        End { addr, port }
    }

    /// The one's-complement sum over a checksummed region (checksum field
    /// included) is 0xffff exactly when the checksum is right.
    fn sums_to_ffff(sum: u32) -> bool {
        csum_fold_raw(sum) == 0xffff
    }

    #[test]
    fn seg_seq_counts_payload_syn_and_fin() {
        let mut h = [0u8; 20];
        h[4..8].copy_from_slice(&1000u32.to_be_bytes());
        h[8..12].copy_from_slice(&77u32.to_be_bytes());
        h[13] = 0x10; // ACK
        assert_eq!(
            seg_seq(&h, 100),
            Some(SegSeq {
                end: 1100,
                ack: Some(77)
            })
        );
        h[13] = 0x02; // SYN
        assert_eq!(
            seg_seq(&h, 0),
            Some(SegSeq {
                end: 1001,
                ack: None
            })
        );
        h[13] = 0x11; // FIN ACK
        h[4..8].copy_from_slice(&u32::MAX.to_be_bytes());
        assert_eq!(
            seg_seq(&h, 1),
            Some(SegSeq {
                end: 1,
                ack: Some(77)
            })
        );
        assert_eq!(seg_seq(&h[..12], 0), None);
    }

    #[test]
    fn advance_keeps_the_later_number_across_wrap() {
        assert_eq!(advance(0, 5), 5);
        assert_eq!(advance(10, 5), 10);
        assert_eq!(advance(10, 11), 11);
        assert_eq!(advance(u32::MAX - 1, 3), 3);
        assert_eq!(advance(3, u32::MAX - 1), 3);
        assert!(after(1, u32::MAX));
        assert!(!after(7, 7));
    }

    #[test]
    fn ipv4_reset_has_right_checksums_and_parses() {
        let mut out = [0u8; RST_MAX_LEN];
        let (s, d) = (end(&[10, 0, 0, 1], 80), end(&[192, 168, 7, 9], 40001));
        let n = build_rst(AddrFamily::Inet, &s, &d, 0xdead_beef, &mut out);
        assert_eq!(n, RST_LEN_V4);
        let pkt = &out[..n];
        assert!(
            sums_to_ffff(csum_add(0, &pkt[..20])),
            "IPv4 header checksum"
        );
        let mut pseudo = csum_add(0, &pkt[12..20]);
        pseudo = csum_add(pseudo, &[0, IPPROTO_TCP, 0, 20]);
        assert!(sums_to_ffff(csum_add(pseudo, &pkt[20..])), "TCP checksum");
        let ip = parse_ip(AddrFamily::Inet, pkt, n).unwrap();
        assert_eq!(
            (ip.proto, ip.l4_offset, ip.saddr, ip.daddr),
            (IPPROTO_TCP, 20, s.addr, d.addr)
        );
        assert!(ip.df);
        assert_eq!(&pkt[20..24], &[0, 80, 0x9c, 0x41]);
        assert_eq!(&pkt[24..28], &0xdead_beefu32.to_be_bytes());
        assert_eq!(pkt[33], 0x04, "RST only");
        assert_eq!(pkt[8], RST_TTL);
    }

    #[test]
    fn ipv6_reset_has_right_checksum_and_parses() {
        let mut out = [0u8; RST_MAX_LEN];
        let (s, d) = (
            end(
                &[0x20, 0x01, 0xd, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1],
                443,
            ),
            end(
                &[0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x12, 0x34],
                5555,
            ),
        );
        let n = build_rst(AddrFamily::Inet6, &s, &d, 42, &mut out);
        assert_eq!(n, RST_LEN_V6);
        let pkt = &out[..n];
        let mut pseudo = csum_add(0, &pkt[8..40]);
        pseudo = csum_add(pseudo, &[0, IPPROTO_TCP, 0, 20]);
        assert!(sums_to_ffff(csum_add(pseudo, &pkt[40..])), "TCP checksum");
        let ip = parse_ip(AddrFamily::Inet6, pkt, n).unwrap();
        assert_eq!(
            (ip.proto, ip.l4_offset, ip.saddr, ip.daddr),
            (IPPROTO_TCP, 40, s.addr, d.addr)
        );
        assert_eq!(pkt[7], RST_TTL);
        assert_eq!(&pkt[44..48], &42u32.to_be_bytes());
    }

    #[test]
    fn reset_checksum_changes_with_every_field() {
        let mut a = [0u8; RST_MAX_LEN];
        let mut b = [0u8; RST_MAX_LEN];
        let (s, d) = (end(&[10, 0, 0, 1], 80), end(&[10, 0, 0, 2], 9));
        build_rst(AddrFamily::Inet, &s, &d, 1, &mut a);
        build_rst(AddrFamily::Inet, &s, &d, 2, &mut b);
        assert_ne!(a[36..38], b[36..38]);
    }
}
