// SPDX-License-Identifier: GPL-2.0

//! The text of IPVS's `/proc/net/ip_vs_conn` and `/proc/net/ip_vs_conn_sync`,
//! byte for byte (net/netfilter/ipvs/ip_vs_conn.c, `ip_vs_conn_seq_show`
//! and `ip_vs_conn_sync_seq_show`): `ipvsadm -L -c` reads the first
//! instead of asking over netlink.
//!
//! Quirks kept on purpose: IPv4 addresses and every port in upper-case hex,
//! IPv6 addresses in `%pI6`'s eight groups, the real server's address in
//! its own family (a tunnelled IPv4 service may have an IPv6 server), the
//! expiry in whole seconds, and the PE columns empty (rvs has no
//! persistence engines; IPVS prints them only for SIP).

#![forbid(unsafe_code)]

use super::procfmt::{v4_hex, Ipv6Full, ProtoName};
use core::fmt::{self, Write};

/// What one connection line shows.
pub struct ProcConn<'a> {
    /// The client side is IPv6 (else IPv4).
    pub v6: bool,
    /// The real server's address is IPv6.
    pub dest_v6: bool,
    /// IP protocol.
    pub protocol: u8,
    /// Client address (16-byte form, IPv4 in the first 4 bytes) and port.
    pub caddr: &'a [u8; 16],
    /// Client port, host order.
    pub cport: u16,
    /// Virtual address.
    pub vaddr: &'a [u8; 16],
    /// Virtual port, host order.
    pub vport: u16,
    /// Real server address.
    pub daddr: &'a [u8; 16],
    /// Real server port, host order.
    pub dport: u16,
    /// State name as IPVS prints it (`ip_vs_state_name`).
    pub state: &'a str,
    /// Seconds until the entry expires.
    pub expires: u32,
}

/// An address in the family it has: `%08X` or `%pI6`.
struct Addr<'a>(bool, &'a [u8; 16]);

impl fmt::Display for Addr<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0 {
            Ipv6Full(self.1).fmt(f)
        } else {
            write!(f, "{:08X}", v4_hex(self.1))
        }
    }
}

/// The columns both files share, up to and including the state.
fn common(out: &mut impl Write, c: &ProcConn<'_>) -> fmt::Result {
    write!(
        out,
        "{:<3} {} {:04X} {} {:04X} {} {:04X} {:<11}",
        ProtoNamePadded(c.protocol),
        Addr(c.v6, c.caddr),
        c.cport,
        Addr(c.v6, c.vaddr),
        c.vport,
        Addr(c.dest_v6, c.daddr),
        c.dport,
        c.state
    )
}

/// `%-3s` of the protocol name: `Formatter` padding applies only to
/// `str`-like output, so the name is written first.
struct ProtoNamePadded(u8);

impl fmt::Display for ProtoNamePadded {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut name = NameBuf::default();
        write!(name, "{}", ProtoName(self.0))?;
        f.pad(name.as_str())
    }
}

/// A short stack buffer for a protocol name ("ICMPv6", "IP_255").
#[derive(Default)]
struct NameBuf {
    buf: [u8; 8],
    len: usize,
}

impl NameBuf {
    fn as_str(&self) -> &str {
        self.buf
            .get(..self.len)
            .and_then(|b| core::str::from_utf8(b).ok())
            .unwrap_or("")
    }
}

impl Write for NameBuf {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let end = self.len.checked_add(s.len()).ok_or(fmt::Error)?;
        let slot = self.buf.get_mut(self.len..end).ok_or(fmt::Error)?;
        slot.copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

/// The title line of `/proc/net/ip_vs_conn`.
pub fn conn_header(out: &mut impl Write) -> fmt::Result {
    out.write_str(
        "Pro FromIP   FPrt ToIP     TPrt DestIP   DPrt State       Expires PEName PEData\n",
    )
}

/// One line of `/proc/net/ip_vs_conn`, newline included.
pub fn conn_line(out: &mut impl Write, c: &ProcConn<'_>) -> fmt::Result {
    common(out, c)?;
    writeln!(out, " {:7}", c.expires)
}

/// The title line of `/proc/net/ip_vs_conn_sync`.
pub fn conn_sync_header(out: &mut impl Write) -> fmt::Result {
    out.write_str("Pro FromIP   FPrt ToIP     TPrt DestIP   DPrt State       Origin Expires\n")
}

/// One line of `/proc/net/ip_vs_conn_sync`: as `ip_vs_conn`'s, with the
/// entry's origin (`synced`: learnt from a master's sync messages).
pub fn conn_sync_line(out: &mut impl Write, c: &ProcConn<'_>, synced: bool) -> fmt::Result {
    common(out, c)?;
    let origin = if synced { "SYNC" } else { "LOCAL" };
    writeln!(out, " {:<6} {:7}", origin, c.expires)
}

#[cfg(test)]
mod tests {
    //! Every expected string below is IPVS's printf format applied by
    //! hand (Python's `%` operator, which follows C's printf), not this
    //! module's output.
    use super::*;
    use std::string::String;

    fn v4(a: [u8; 4]) -> [u8; 16] {
        let mut x = [0u8; 16];
        x[..4].copy_from_slice(&a);
        x
    }

    #[test]
    fn ipv4_lines() {
        let (c, v, d) = (v4([10, 0, 0, 2]), v4([10, 0, 100, 1]), v4([10, 0, 1, 1]));
        let conn = ProcConn {
            v6: false,
            dest_v6: false,
            protocol: 6,
            caddr: &c,
            cport: 41_000,
            vaddr: &v,
            vport: 80,
            daddr: &d,
            dport: 8080,
            state: "ESTABLISHED",
            expires: 899,
        };
        let mut o = String::new();
        conn_header(&mut o).unwrap();
        conn_line(&mut o, &conn).unwrap();
        // "%-3s %08X %04X %08X %04X %s %04X %-11s %7u%s\n"
        //   % ("TCP", 0x0A000002, 41000, 0x0A006401, 80, "0A000101", 8080,
        //      "ESTABLISHED", 899, "")
        assert_eq!(
            o,
            "Pro FromIP   FPrt ToIP     TPrt DestIP   DPrt State       Expires PEName PEData\n\
             TCP 0A000002 A028 0A006401 0050 0A000101 1F90 ESTABLISHED     899\n"
        );
        let udp = ProcConn {
            protocol: 17,
            state: "UDP",
            expires: 5,
            ..conn
        };
        let mut o = String::new();
        conn_sync_line(&mut o, &udp, false).unwrap();
        // "%-3s %08X %04X %08X %04X %s %04X %-11s %-6s %7u\n" with "LOCAL"
        assert_eq!(
            o,
            "UDP 0A000002 A028 0A006401 0050 0A000101 1F90 UDP         LOCAL        5\n"
        );
        let mut o = String::new();
        conn_sync_line(&mut o, &udp, true).unwrap();
        assert!(o.contains(" UDP         SYNC         5\n"), "{o}");
        let mut o = String::new();
        conn_line(
            &mut o,
            &ProcConn {
                protocol: 58,
                state: "NONE",
                ..conn
            },
        )
        .unwrap();
        // "%-3s" does not truncate a longer name.
        assert!(o.starts_with("ICMPv6 0A000002 "), "{o}");
    }

    #[test]
    fn ipv6_and_mixed_families() {
        let mut c = [0u8; 16];
        c[0] = 0xfd;
        c[15] = 2;
        let mut v = c;
        v[15] = 0x64;
        let d4 = v4([10, 0, 1, 1]);
        let conn = ProcConn {
            v6: true,
            dest_v6: false,
            protocol: 6,
            caddr: &c,
            cport: 1,
            vaddr: &v,
            vport: 443,
            daddr: &d4,
            dport: 443,
            state: "SYN_RECV",
            expires: 59,
        };
        let mut o = String::new();
        conn_line(&mut o, &conn).unwrap();
        // "%-3s %pI6 %04X %pI6 %04X %s %04X %-11s %7u%s\n", dbuf "%08X"
        // of the IPv4 real server (cp->daf)
        assert_eq!(
            o,
            "TCP fd00:0000:0000:0000:0000:0000:0000:0002 0001 \
             fd00:0000:0000:0000:0000:0000:0000:0064 01BB 0A000101 01BB SYN_RECV         59\n"
        );
        let mut o = String::new();
        conn_line(
            &mut o,
            &ProcConn {
                v6: false,
                dest_v6: true,
                caddr: &d4,
                vaddr: &d4,
                daddr: &c,
                ..conn
            },
        )
        .unwrap();
        assert!(
            o.contains(" 01BB fd00:0000:0000:0000:0000:0000:0000:0002 01BB "),
            "{o}"
        );
    }
}
