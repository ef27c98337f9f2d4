// SPDX-License-Identifier: GPL-2.0

//! FullNAT's pure parts: the service's local addresses as netlink sends
//! them, the order local ports are tried in, and the TCP option that
//! carries the client's address to the real server (TOA).
//!
//! With FullNAT a request leaves the director from one of the service's
//! local addresses and a port allocated for the connection, so the real
//! server answers the director whatever its routes; it no longer sees the
//! client's address in the IP header. The TOA option puts it in the TCP
//! header instead, in the format of Alibaba's LVS and DPVS that TOA
//! readers on real servers understand: kind 254, length 8, the client's
//! port then its IPv4 address; for IPv6 (DPVS's form) length 20, the port
//! then the 16-byte address. The option goes into the client's SYN (for
//! the real server's companion module, rvs_rs.ko, which restores the
//! client's address from the first packet) and its first segments after
//! it (the handshake's ACK and the first data), where a TOA reader looks
//! for it. To keep those segments within the path the real server
//! announced, the MSS of the real server's SYN-ACK is lowered by the
//! option's length on its way to the client.
//!
//! ENAT's option has the same layout under the other experimental kind
//! (RFC 4727), 253, and goes into the client's SYNs only: the companion
//! needs it there, and a TOA reader looking for 254 never mistakes an ENAT
//! connection (whose source is the VIP) for a FullNAT one.

#![forbid(unsafe_code)]

use super::config::{self, AddrFamily, ConfigError, EINVAL};
use super::nlattr::{AttrError, AttrIter};
use super::uapi::{RVS_LADDRS_MAX, RVS_LADDR_ATTR_ADDR};

/// TCP option kind of the client address option (TOA).
pub const TOA_KIND: u8 = 254;
/// TCP option kind of ENAT's client address option (same layout).
pub const ENAT_KIND: u8 = 253;
/// Its length with an IPv4 address.
pub const TOA_LEN_V4: usize = 8;
/// Its length with an IPv6 address.
pub const TOA_LEN_V6: usize = 20;
/// The longest TCP header (data offset 15).
pub const TCP_HLEN_MAX: usize = 60;
/// The last client segment (counted from its SYN, the first) that
/// carries the option: segments 2 to 4 do, the handshake's ACK, the first
/// data segment, and one more (a retransmission of either, or the next
/// segment).
pub const TOA_LAST_PACKET: u8 = 4;

/// The client address option of kind `kind` ([`TOA_KIND`] or
/// [`ENAT_KIND`]) for client `addr:port` of family `af` into `out`;
/// returns its length.
pub fn toa_option(
    kind: u8,
    af: AddrFamily,
    addr: &[u8; 16],
    port: u16,
    out: &mut [u8; TOA_LEN_V6],
) -> usize {
    let [p0, p1] = port.to_be_bytes();
    let len = toa_len(af);
    let [k, olen, hi, lo, rest @ ..] = out;
    (*k, *olen, *hi, *lo) = (kind, len as u8, p0, p1);
    for (dst, src) in rest.iter_mut().zip(addr.iter()).take(af.addr_len()) {
        *dst = *src;
    }
    len
}

/// The TOA option's length for family `af`.
pub fn toa_len(af: AddrFamily) -> usize {
    match af {
        AddrFamily::Inet => TOA_LEN_V4,
        AddrFamily::Inet6 => TOA_LEN_V6,
    }
}

/// The client address and port in a TOA option found in the options of
/// TCP header `tcp` (for tests and readers): `None` if there is none.
pub fn find_toa(af: AddrFamily, tcp: &[u8]) -> Option<([u8; 16], u16)> {
    find_client_option(TOA_KIND, af, tcp)
}

/// The client address and port in an option of kind `want_kind` (of the
/// family's length) found in the options of TCP header `tcp`; `None` if
/// there is none. The first such option counts.
pub fn find_client_option(want_kind: u8, af: AddrFamily, tcp: &[u8]) -> Option<([u8; 16], u16)> {
    let want = toa_len(af);
    let (at, _, len) = options(tcp).find(|&(_, kind, len)| kind == want_kind && len == want)?;
    let opt = tcp.get(at..at.checked_add(len)?)?;
    let [_, _, hi, lo, rest @ ..] = opt else {
        return None;
    };
    let mut addr = [0u8; 16];
    for (dst, src) in addr.iter_mut().zip(rest.iter()).take(af.addr_len()) {
        *dst = *src;
    }
    Some((addr, u16::from_be_bytes([*hi, *lo])))
}

/// Whether a TCP header of `hlen` bytes has room for `opt_len` more.
pub fn toa_fits(hlen: usize, opt_len: usize) -> bool {
    hlen.checked_add(opt_len).is_some_and(|n| n <= TCP_HLEN_MAX) && opt_len.trailing_zeros() >= 2
}

/// Where in TCP header `tcp` (whole, options included) a new option goes:
/// at its end-of-options kind if it has one (a receiver stops reading
/// there; the kind and the padding after it move behind the new option),
/// else at the end of the header.
pub fn option_insert_at(tcp: &[u8]) -> usize {
    let doff = tcp.get(12).map_or(0, |b| usize::from(b >> 4));
    let end = doff.saturating_mul(4).min(tcp.len());
    let head = tcp.get(..end).unwrap_or(&[]);
    let mut at = 20usize;
    loop {
        match head.get(at..) {
            Some([0, ..]) => return at,
            Some([1, rest @ ..]) if !rest.is_empty() => at = at.saturating_add(1),
            Some([_, len, ..]) if usize::from(*len) >= 2 => {
                at = at.saturating_add(usize::from(*len))
            }
            _ => return end,
        }
    }
}

/// The options of TCP header `tcp` as (offset, kind, length), stopping at
/// the end-of-options kind or at the first malformed one.
fn options(tcp: &[u8]) -> impl Iterator<Item = (usize, u8, usize)> + '_ {
    let doff = tcp.get(12).map_or(0, |b| usize::from(b >> 4));
    let end = doff.saturating_mul(4).min(tcp.len());
    let head = tcp.get(..end).unwrap_or(&[]);
    let mut at = 20usize;
    core::iter::from_fn(move || loop {
        let rest = head.get(at..)?;
        match rest {
            [] | [0, ..] => return None,
            [1, ..] => at = at.saturating_add(1),
            [kind, len, ..] => {
                let len = usize::from(*len);
                if len < 2 || len > rest.len() {
                    return None;
                }
                let item = (at, *kind, len);
                at = at.saturating_add(len);
                return Some(item);
            }
            [_] => return None,
        }
    })
}

/// The offset (in `tcp`) of the MSS value of a SYN's options and the value
/// it becomes with `less` bytes taken off (not below 536, IPv4's default
/// MSS): `None` when there is no well-formed MSS option, or nothing to
/// change.
pub fn mss_clamp(tcp: &[u8], less: usize) -> Option<(usize, u16, u16)> {
    let (at, _, _) = options(tcp).find(|&(_, kind, len)| kind == 2 && len == 4)?;
    let value_at = at.checked_add(2)?;
    let [hi, lo] = tcp.get(value_at..value_at.checked_add(2)?)? else {
        return None;
    };
    let old = u16::from_be_bytes([*hi, *lo]);
    let new = old.saturating_sub(u16::try_from(less).ok()?).max(536);
    (new < old).then_some((value_at, old, new))
}

/// The local ports tried for a new connection, in order: at most `tries`
/// of the range `min..=max`, consecutive from the one `seed` picks
/// (wrapping), each once. An empty range (min above max) tries none.
pub fn port_candidates(min: u16, max: u16, seed: u32, tries: u32) -> impl Iterator<Item = u16> {
    // At most 65536.
    let span = u32::from(max)
        .checked_sub(u32::from(min))
        .map_or(0, |d| d.saturating_add(1));
    let start = seed.checked_rem(span).unwrap_or(0);
    (0..span.min(tries)).map(move |i| {
        let off = start.wrapping_add(i).checked_rem(span).unwrap_or(0);
        // `off < span`, so `min + off <= max`.
        min.wrapping_add(off as u16)
    })
}

/// The local addresses of a RVS_SVC_ATTR_LADDRS nest for a service of
/// family `af`: calls `f` with each (16-byte form) after checking them
/// all; returns how many. Each is an RVS_LADDR_ATTR_ADDR of the service's
/// family (IPv4: 4 or 16 bytes), a unicast address, at most
/// `RVS_LADDRS_MAX` of them, none twice.
pub fn parse_laddrs(
    nest: &[u8],
    af: AddrFamily,
    mut f: impl FnMut(&[u8; 16]),
) -> Result<usize, ConfigError> {
    let mut seen = [[0u8; 16]; RVS_LADDRS_MAX];
    let mut n = 0;
    for item in AttrIter::new(nest) {
        let (kind, payload) = item.map_err(|e| ConfigError::new(EINVAL, e.msg()))?;
        if kind != RVS_LADDR_ATTR_ADDR {
            return Err(ConfigError::new(EINVAL, AttrError::UnknownType(kind).msg()));
        }
        // IPv4 may come in the 16-byte form, whose rest is zero: an IPv6
        // address is not an IPv4 one cut short.
        let v4_tail = payload.get(4..).unwrap_or(&[]);
        if af == AddrFamily::Inet && v4_tail.iter().any(|&b| b != 0) {
            return Err(ConfigError::new(
                EINVAL,
                c"an IPv4 service's local addresses are IPv4 addresses",
            ));
        }
        let addr = config::parse_addr(af, payload)?;
        if !unicast(af, &addr) {
            return Err(ConfigError::new(
                EINVAL,
                c"a local address must be a unicast address",
            ));
        }
        if seen.iter().take(n).any(|a| *a == addr) {
            return Err(ConfigError::new(EINVAL, c"local address given twice"));
        }
        let slot = seen.get_mut(n).ok_or(ConfigError::new(
            EINVAL,
            c"too many local addresses (at most 64)",
        ))?;
        *slot = addr;
        n = n.saturating_add(1);
    }
    seen.iter().take(n).for_each(&mut f);
    Ok(n)
}

/// Whether `addr` may be a local address: not unspecified, multicast,
/// broadcast or loopback.
fn unicast(af: AddrFamily, a: &[u8; 16]) -> bool {
    let [a0, a1, a2, a3, .., last] = *a;
    match af {
        AddrFamily::Inet => {
            let v4 = [a0, a1, a2, a3];
            v4 != [0; 4] && v4 != [255; 4] && !(224..=239).contains(&a0) && a0 != 127
        }
        AddrFamily::Inet6 => {
            let loopback = a.iter().take(15).all(|&b| b == 0) && last == 1;
            a.iter().any(|&b| b != 0) && a0 != 0xff && !loopback
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::vec;
    use std::vec::Vec;

    fn v4(a: [u8; 4]) -> [u8; 16] {
        let mut x = [0; 16];
        x[..4].copy_from_slice(&a);
        x
    }

    #[test]
    fn toa_bytes_v4_and_v6() {
        let mut o = [0u8; TOA_LEN_V6];
        let n = toa_option(
            TOA_KIND,
            AddrFamily::Inet,
            &v4([10, 0, 0, 2]),
            40000,
            &mut o,
        );
        assert_eq!(&o[..n], &[254, 8, 0x9c, 0x40, 10, 0, 0, 2]);
        let mut a6 = [0u8; 16];
        a6[0] = 0xfd;
        a6[15] = 2;
        let n = toa_option(TOA_KIND, AddrFamily::Inet6, &a6, 1, &mut o);
        assert_eq!(n, 20);
        assert_eq!(&o[..4], &[254, 20, 0, 1]);
        assert_eq!(&o[4..20], &a6);
    }

    #[test]
    fn enat_option_is_toa_under_kind_253() {
        let mut o = [0u8; TOA_LEN_V6];
        let n = toa_option(
            ENAT_KIND,
            AddrFamily::Inet,
            &v4([10, 0, 0, 2]),
            40000,
            &mut o,
        );
        assert_eq!(&o[..n], &[253, 8, 0x9c, 0x40, 10, 0, 0, 2]);
        let h = tcp_with(&o[..n]);
        assert_eq!(
            find_client_option(ENAT_KIND, AddrFamily::Inet, &h),
            Some((v4([10, 0, 0, 2]), 40000))
        );
        // Neither kind is mistaken for the other.
        assert_eq!(find_toa(AddrFamily::Inet, &h), None);
        let n = toa_option(
            TOA_KIND,
            AddrFamily::Inet,
            &v4([10, 0, 0, 2]),
            40000,
            &mut o,
        );
        let h = tcp_with(&o[..n]);
        assert_eq!(find_client_option(ENAT_KIND, AddrFamily::Inet, &h), None);
    }

    /// A TCP header with `opts` (padded with NOPs to a multiple of 4).
    fn tcp_with(opts: &[u8]) -> Vec<u8> {
        let mut o = opts.to_vec();
        while o.len() % 4 != 0 {
            o.insert(0, 1);
        }
        let mut h = vec![0u8; 20];
        h[12] = (((20 + o.len()) / 4) as u8) << 4;
        h.extend(o);
        h
    }

    #[test]
    fn find_toa_reads_what_toa_option_wrote() {
        let mut o = [0u8; TOA_LEN_V6];
        let n = toa_option(
            TOA_KIND,
            AddrFamily::Inet,
            &v4([192, 0, 2, 9]),
            5555,
            &mut o,
        );
        // After a timestamp option, as a real ACK carries.
        let mut opts = vec![1, 1, 8, 10, 0, 0, 0, 1, 0, 0, 0, 2];
        opts.extend_from_slice(&o[..n]);
        let h = tcp_with(&opts);
        assert_eq!(
            find_toa(AddrFamily::Inet, &h),
            Some((v4([192, 0, 2, 9]), 5555))
        );
        assert_eq!(
            find_toa(AddrFamily::Inet6, &h),
            None,
            "length 8 is not IPv6's"
        );
        assert_eq!(find_toa(AddrFamily::Inet, &tcp_with(&[2, 4, 5, 180])), None);
        // An option running past the header is not read.
        let mut bad = tcp_with(&[254, 8, 0, 1]);
        bad[21] = 8;
        assert_eq!(find_toa(AddrFamily::Inet, &bad), None);
    }

    #[test]
    fn the_option_goes_before_an_end_of_options() {
        // MSS, then EOL and padding: before the EOL.
        let h = tcp_with(&[2, 4, 5, 180, 0, 0, 0, 0]);
        assert_eq!(h.len(), 28);
        assert_eq!(option_insert_at(&h), 24);
        // NOP padding only: at the end.
        assert_eq!(
            option_insert_at(&tcp_with(&[1, 1, 8, 10, 0, 0, 0, 1, 0, 0, 0, 2])),
            32
        );
        // No options at all, and a malformed length: at the end.
        assert_eq!(option_insert_at(&tcp_with(&[])), 20);
        assert_eq!(option_insert_at(&tcp_with(&[2, 1, 5, 180])), 24);
        assert_eq!(option_insert_at(&tcp_with(&[2, 40, 5, 180])), 24);
    }

    #[test]
    fn room_for_the_option() {
        assert!(toa_fits(20, 8));
        assert!(toa_fits(52, 8));
        assert!(!toa_fits(56, 8));
        assert!(toa_fits(40, 20));
        assert!(!toa_fits(44, 20));
    }

    #[test]
    fn mss_is_lowered_by_the_option() {
        let syn = tcp_with(&[
            2, 4, 0x05, 0xb4, 4, 2, 8, 10, 0, 0, 0, 1, 0, 0, 0, 0, 1, 3, 3, 7,
        ]);
        let (at, old, new) = mss_clamp(&syn, 8).unwrap();
        assert_eq!((old, new), (1460, 1452));
        assert_eq!(&syn[at..at + 2], &[0x05, 0xb4]);
        assert_eq!(mss_clamp(&syn, 20).map(|m| m.2), Some(1440));
        // Never below 536; nothing to do at 536.
        assert_eq!(
            mss_clamp(&tcp_with(&[2, 4, 2, 30]), 8).map(|m| m.2),
            Some(536)
        );
        assert_eq!(mss_clamp(&tcp_with(&[2, 4, 2, 24]), 8), None);
        assert_eq!(mss_clamp(&tcp_with(&[4, 2]), 8), None, "no MSS option");
        assert_eq!(mss_clamp(&tcp_with(&[2, 3, 5]), 8), None, "malformed");
    }

    #[test]
    fn ports_tried_once_each_within_the_range() {
        let all: Vec<u16> = port_candidates(1024, 1027, 6, 64).collect();
        assert_eq!(all, [1026, 1027, 1024, 1025]);
        assert_eq!(port_candidates(5, 5, 99, 64).collect::<Vec<_>>(), [5]);
        assert_eq!(port_candidates(6, 5, 0, 64).count(), 0);
        let big: Vec<u16> = port_candidates(1, 65535, u32::MAX, 64).collect();
        assert_eq!(big.len(), 64);
        assert!(big.iter().all(|&p| p >= 1));
        let full: Vec<u16> = port_candidates(0, 65535, 7, u32::MAX).collect();
        assert_eq!(full.len(), 65536);
        assert_eq!(full[0], 7);
        assert_eq!(full[65535], 6);
    }

    fn nest(addrs: &[&[u8]]) -> Vec<u8> {
        let mut b = Vec::new();
        for a in addrs {
            let len = 4 + a.len();
            b.extend_from_slice(&(len as u16).to_ne_bytes());
            b.extend_from_slice(&RVS_LADDR_ATTR_ADDR.to_ne_bytes());
            b.extend_from_slice(a);
            while b.len() % 4 != 0 {
                b.push(0);
            }
        }
        b
    }

    #[test]
    fn local_addresses_are_checked_before_any_is_taken() {
        let mut got = Vec::new();
        let n = parse_laddrs(
            &nest(&[&[10, 0, 2, 1], &[10, 0, 2, 2]]),
            AddrFamily::Inet,
            |a| got.push(*a),
        );
        assert_eq!(n, Ok(2));
        assert_eq!(got, [v4([10, 0, 2, 1]), v4([10, 0, 2, 2])]);
        assert_eq!(parse_laddrs(&[], AddrFamily::Inet, |_| {}), Ok(0));
        let mut called = false;
        let e = parse_laddrs(
            &nest(&[&[10, 0, 2, 1], &[10, 0, 2, 1]]),
            AddrFamily::Inet,
            |_| called = true,
        )
        .unwrap_err();
        assert_eq!(e.msg, c"local address given twice");
        assert!(!called, "nothing is taken from a refused nest");
        for bad in [[0u8, 0, 0, 0], [224, 0, 0, 1], [127, 0, 0, 1], [255; 4]] {
            let e = parse_laddrs(&nest(&[&bad]), AddrFamily::Inet, |_| {}).unwrap_err();
            assert_eq!(e.msg, c"a local address must be a unicast address");
        }
        let e = parse_laddrs(&nest(&[&[10, 0, 2]]), AddrFamily::Inet, |_| {}).unwrap_err();
        assert_eq!(e.errno, EINVAL);
        let mut v6 = [0u8; 16];
        v6[0] = 0xfd;
        v6[15] = 1;
        assert_eq!(
            parse_laddrs(&nest(&[&v6]), AddrFamily::Inet6, |_| {}),
            Ok(1)
        );
        assert!(parse_laddrs(&nest(&[&[10, 0, 2, 1]]), AddrFamily::Inet6, |_| {}).is_err());
        // IPv4 in the 16-byte form, and an IPv6 address sent to an IPv4 service.
        let mut long4 = [0u8; 16];
        long4[..4].copy_from_slice(&[10, 0, 2, 1]);
        assert_eq!(
            parse_laddrs(&nest(&[&long4]), AddrFamily::Inet, |_| {}),
            Ok(1)
        );
        let e = parse_laddrs(&nest(&[&v6]), AddrFamily::Inet, |_| {}).unwrap_err();
        assert_eq!(
            e.msg,
            c"an IPv4 service's local addresses are IPv4 addresses"
        );
        let many: Vec<[u8; 4]> = (0..65u8).map(|i| [10, 1, 0, i + 1]).collect();
        let refs: Vec<&[u8]> = many.iter().map(|a| &a[..]).collect();
        let e = parse_laddrs(&nest(&refs), AddrFamily::Inet, |_| {}).unwrap_err();
        assert_eq!(e.msg, c"too many local addresses (at most 64)");
        assert_eq!(
            parse_laddrs(&nest(&refs[..64]), AddrFamily::Inet, |_| {}),
            Ok(64)
        );
        // Another attribute type in the nest.
        let mut other = nest(&[&[10, 0, 2, 1]]);
        other[2] = 2;
        assert!(parse_laddrs(&other, AddrFamily::Inet, |_| {}).is_err());
    }
}
