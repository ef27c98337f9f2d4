// SPDX-License-Identifier: GPL-2.0

//! The text of IPVS's `/proc/net/ip_vs`, `/proc/net/ip_vs_stats` and
//! `/proc/net/ip_vs_stats_percpu`, byte for byte
//! (net/netfilter/ipvs/ip_vs_ctl.c, `ip_vs_info_seq_show`,
//! `ip_vs_stats_show`, `ip_vs_stats_percpu_show`), for the tools that parse it: Prometheus
//! node_exporter's ipvs collector, scripts that predate netlink.
//!
//! Pure formatting into any [`core::fmt::Write`]; the kernel side walks
//! the services and hands each one here. The quirks are IPVS's own and
//! kept on purpose: addresses and ports in upper-case hex, IPv6 addresses
//! as eight zero-padded groups (`%pI6`), the netmask printed as the
//! big-endian reading of its attribute bytes (so an IPv6 prefix length of
//! 128 shows as `80000000`), the persistence timeout in jiffies, `ops`
//! only on IPv4 and mark services.

use core::fmt::{self, Write};

/// IPVS's version as GET_INFO and the listing report it.
const VERSION: (u32, u32, u32) = (1, 2, 1);

/// IPVS's name of an IP protocol (`ip_vs_proto_name`).
pub struct ProtoName(pub u8);

impl fmt::Display for ProtoName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            0 => f.write_str("IP"),
            6 => f.write_str("TCP"),
            17 => f.write_str("UDP"),
            132 => f.write_str("SCTP"),
            1 => f.write_str("ICMP"),
            58 => f.write_str("ICMPv6"),
            p => write!(f, "IP_{p}"),
        }
    }
}

/// The three title lines of `/proc/net/ip_vs`.
pub fn info_header(out: &mut impl Write, conn_tab_size: u32) -> fmt::Result {
    let (a, b, c) = VERSION;
    write!(
        out,
        "IP Virtual Server version {a}.{b}.{c} (size={conn_tab_size})\n\
         Prot LocalAddress:Port Scheduler Flags\n  \
         -> RemoteAddress:Port Forward Weight ActiveConn InActConn\n"
    )
}

/// What a service line of `/proc/net/ip_vs` shows.
pub struct ProcService<'a> {
    /// IPv6 (else IPv4).
    pub v6: bool,
    /// IP protocol (ignored for a mark service).
    pub protocol: u8,
    /// Virtual address, 16-byte form (IPv4 in the first 4 bytes).
    pub addr: &'a [u8; 16],
    /// Virtual port.
    pub port: u16,
    /// Firewall mark; non-zero makes this a mark service.
    pub fwmark: u32,
    /// Scheduler name.
    pub sched: &'a str,
    /// One-packet scheduling.
    pub onepacket: bool,
    /// Persistence: the timeout in jiffies (IPVS prints its internal
    /// value, seconds times HZ) and the netmask as its attribute carries
    /// it (host-order u32 of the attribute's bytes).
    pub persistent: Option<(u64, u32)>,
}

/// IPVS's `%pI6`: eight groups of four lower-case hex digits.
pub(crate) struct Ipv6Full<'a>(pub(crate) &'a [u8; 16]);

impl fmt::Display for Ipv6Full<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, pair) in self.0.chunks_exact(2).enumerate() {
            let (hi, lo) = match pair {
                [h, l] => (*h, *l),
                _ => (0, 0),
            };
            if i > 0 {
                f.write_char(':')?;
            }
            write!(f, "{:04x}", u16::from_be_bytes([hi, lo]))?;
        }
        Ok(())
    }
}

/// The first four bytes of a 16-byte address as IPVS prints an IPv4
/// address (`%08X` of its host-order value).
pub(crate) fn v4_hex(addr: &[u8; 16]) -> u32 {
    match addr {
        [a, b, c, d, ..] => u32::from_be_bytes([*a, *b, *c, *d]),
    }
}

/// One service line of `/proc/net/ip_vs`, newline included.
pub fn service_line(out: &mut impl Write, s: &ProcService<'_>) -> fmt::Result {
    let ops = if s.onepacket { "ops " } else { "" };
    if s.fwmark != 0 {
        write!(out, "FWM  {:08X} {} {}", s.fwmark, s.sched, ops)?;
    } else if s.v6 {
        write!(
            out,
            "{}  [{}]:{:04X} {} ",
            ProtoName(s.protocol),
            Ipv6Full(s.addr),
            s.port,
            s.sched
        )?;
    } else {
        write!(
            out,
            "{}  {:08X}:{:04X} {} {} ",
            ProtoName(s.protocol),
            v4_hex(s.addr),
            s.port,
            s.sched,
            ops
        )?;
    }
    match s.persistent {
        Some((timeout, netmask)) => writeln!(
            out,
            "persistent {} {:08X}",
            timeout,
            u32::from_be_bytes(netmask.to_ne_bytes())
        ),
        None => out.write_char('\n'),
    }
}

/// What a real server line of `/proc/net/ip_vs` shows.
pub struct ProcDest<'a> {
    /// IPv6 (else IPv4).
    pub v6: bool,
    /// Address, 16-byte form.
    pub addr: &'a [u8; 16],
    /// Port.
    pub port: u16,
    /// IPVS's forwarding name (`FwdMethod::name`): Masq, Local, Tunnel,
    /// Route, and rvs's FullNat (seven letters, so it fills IPVS's `%-7s`
    /// column exactly and the columns after it stay in place).
    pub forward: &'a str,
    /// Weight.
    pub weight: u32,
    /// Active connections (ActiveConn).
    pub active: u32,
    /// Inactive connections (InActConn).
    pub inactive: u32,
}

/// One real server line of `/proc/net/ip_vs`, newline included.
pub fn dest_line(out: &mut impl Write, d: &ProcDest<'_>) -> fmt::Result {
    if d.v6 {
        write!(out, "  -> [{}]:{:04X}", Ipv6Full(d.addr), d.port)?;
    } else {
        write!(out, "  -> {:08X}:{:04X}", v4_hex(d.addr), d.port)?;
    }
    // IPVS prints these as `%d` of its atomics.
    writeln!(
        out,
        "      {:<7} {:<6} {:<10} {:<10}",
        d.forward, d.weight as i32, d.active as i32, d.inactive as i32
    )
}

/// Totals and rates of a namespace, as `/proc/net/ip_vs_stats` shows them
/// (the fields are the counters and rates of `-L --stats` / `--rate`).
#[allow(missing_docs)]
#[derive(Default)]
pub struct ProcStats {
    pub conns: u64,
    pub inpkts: u64,
    pub outpkts: u64,
    pub inbytes: u64,
    pub outbytes: u64,
    pub cps: u64,
    pub inpps: u64,
    pub outpps: u64,
    pub inbps: u64,
    pub outbps: u64,
}

impl ProcStats {
    fn counts(&self) -> [u64; 5] {
        [
            self.conns,
            self.inpkts,
            self.outpkts,
            self.inbytes,
            self.outbytes,
        ]
    }

    fn rates(&self) -> [u64; 5] {
        [self.cps, self.inpps, self.outpps, self.inbps, self.outbps]
    }
}

/// One line of five values as the stats files print them, `lead` first:
/// `%8LX %8LX %8LX %16LX %16LX`.
fn five(out: &mut impl Write, lead: fmt::Arguments<'_>, v: [u64; 5]) -> fmt::Result {
    let [a, b, c, d, e] = v;
    writeln!(out, "{lead}{a:8X} {b:8X} {c:8X} {d:16X} {e:16X}")
}

/// The whole of `/proc/net/ip_vs_stats`.
pub fn stats(out: &mut impl Write, s: &ProcStats) -> fmt::Result {
    out.write_str("   Total Incoming Outgoing         Incoming         Outgoing\n")?;
    out.write_str("   Conns  Packets  Packets            Bytes            Bytes\n")?;
    five(out, format_args!(""), s.counts())?;
    out.write_str("\n Conns/s   Pkts/s   Pkts/s          Bytes/s          Bytes/s\n")?;
    five(out, format_args!(""), s.rates())
}

/// The counts of one CPU, or the total, in `/proc/net/ip_vs_stats_percpu`.
#[allow(missing_docs)]
#[derive(Clone, Copy, Default)]
pub struct ProcCounts {
    pub conns: u64,
    pub inpkts: u64,
    pub outpkts: u64,
    pub inbytes: u64,
    pub outbytes: u64,
}

/// The two title lines of `/proc/net/ip_vs_stats_percpu`.
pub fn percpu_header(out: &mut impl Write) -> fmt::Result {
    out.write_str("       Total Incoming Outgoing         Incoming         Outgoing\n")?;
    out.write_str("CPU    Conns  Packets  Packets            Bytes            Bytes\n")
}

/// One CPU's line of `/proc/net/ip_vs_stats_percpu`: its raw counts.
pub fn percpu_line(out: &mut impl Write, cpu: u32, c: &ProcCounts) -> fmt::Result {
    let v = [c.conns, c.inpkts, c.outpkts, c.inbytes, c.outbytes];
    five(out, format_args!("{cpu:3X} "), v)
}

/// The end of `/proc/net/ip_vs_stats_percpu`: the totals since the last
/// zeroing (`s`'s counts) and the rates.
pub fn percpu_footer(out: &mut impl Write, s: &ProcStats) -> fmt::Result {
    five(out, format_args!("  ~ "), s.counts())?;
    out.write_str("\n     Conns/s   Pkts/s   Pkts/s          Bytes/s          Bytes/s\n")?;
    five(out, format_args!("    "), s.rates())
}

#[cfg(test)]
mod tests {
    //! Every expected string below is IPVS's printf format applied by
    //! hand (Python's `%` operator, which follows C's printf), not this
    //! module's output.
    use super::super::config::FwdMethod;
    use super::*;
    use std::string::String;

    fn v4(a: [u8; 4]) -> [u8; 16] {
        let mut x = [0u8; 16];
        x[..4].copy_from_slice(&a);
        x
    }

    fn svc<'a>(addr: &'a [u8; 16], sched: &'a str) -> ProcService<'a> {
        ProcService {
            v6: false,
            protocol: 6,
            addr,
            port: 80,
            fwmark: 0,
            sched,
            onepacket: false,
            persistent: None,
        }
    }

    fn line(s: &ProcService<'_>) -> String {
        let mut o = String::new();
        service_line(&mut o, s).unwrap();
        o
    }

    #[test]
    fn header() {
        let mut o = String::new();
        info_header(&mut o, 4096).unwrap();
        assert_eq!(
            o,
            "IP Virtual Server version 1.2.1 (size=4096)\n\
             Prot LocalAddress:Port Scheduler Flags\n\
             \x20 -> RemoteAddress:Port Forward Weight ActiveConn InActConn\n"
        );
    }

    #[test]
    fn ipv4_services() {
        // "%s  %08X:%04X %s %s " % ("TCP", 0x0A006401, 80, "rr", "")
        let a = v4([10, 0, 100, 1]);
        assert_eq!(line(&svc(&a, "rr")), "TCP  0A006401:0050 rr  \n");
        let mut s = svc(&a, "wlc");
        s.protocol = 17;
        s.port = 53;
        s.onepacket = true;
        assert_eq!(line(&s), "UDP  0A006401:0035 wlc ops  \n");
        // + "persistent %d %08X\n" % (300 * 250, ntohl(0xffffff00 in network order))
        let mut s = svc(&a, "sh");
        s.persistent = Some((75_000, u32::from_ne_bytes([255, 255, 255, 0])));
        assert_eq!(
            line(&s),
            "TCP  0A006401:0050 sh  persistent 75000 FFFFFF00\n"
        );
        s.protocol = 99;
        assert!(line(&s).starts_with("IP_99  0A006401:0050 "));
    }

    #[test]
    fn ipv6_and_mark_services() {
        let mut a = [0u8; 16];
        a[..4].copy_from_slice(&[0x20, 0x01, 0x0d, 0xb8]);
        a[15] = 1;
        let mut s = svc(&a, "rr");
        s.v6 = true;
        s.onepacket = true; // IPVS prints no "ops" for IPv6
        s.persistent = Some((600, 128));
        // "%s  [%pI6]:%04X %s " then "persistent %d %08X\n" % (600, ntohl(128))
        assert_eq!(
            line(&s),
            "TCP  [2001:0db8:0000:0000:0000:0000:0000:0001]:0050 rr persistent 600 80000000\n"
        );
        let z = [0u8; 16];
        let mut m = svc(&z, "rr");
        m.fwmark = 7;
        // "FWM  %08X %s %s" % (7, "rr", "")
        assert_eq!(line(&m), "FWM  00000007 rr \n");
        m.onepacket = true;
        assert_eq!(line(&m), "FWM  00000007 rr ops \n");
    }

    #[test]
    fn real_servers() {
        let a = v4([10, 0, 1, 1]);
        let mut o = String::new();
        let d = ProcDest {
            v6: false,
            addr: &a,
            port: 8080,
            forward: "Masq",
            weight: 1,
            active: 2,
            inactive: 30,
        };
        dest_line(&mut o, &d).unwrap();
        // "  -> %08X:%04X      %-7s %-6d %-10d %-10d\n"
        assert_eq!(
            o,
            "  -> 0A000101:1F90      Masq    1      2          30        \n"
        );
        let mut b = [0u8; 16];
        b[0] = 0xfd;
        b[15] = 0x10;
        let mut o = String::new();
        dest_line(
            &mut o,
            &ProcDest {
                v6: true,
                addr: &b,
                forward: "Tunnel",
                ..d
            },
        )
        .unwrap();
        // "  -> [%pI6]:%04X      %-7s %-6d %-10d %-10d\n"
        assert_eq!(
            o,
            "  -> [fd00:0000:0000:0000:0000:0000:0000:0010]:1F90      Tunnel  1      2          30        \n"
        );
        // rvs's FullNAT, by the name the module hands over: as wide as
        // the column, so weight and counters stay where tools look.
        let mut o = String::new();
        dest_line(
            &mut o,
            &ProcDest {
                forward: FwdMethod::FullNat.name(),
                ..d
            },
        )
        .unwrap();
        assert_eq!(
            o,
            "  -> 0A000101:1F90      FullNat 1      2          30        \n"
        );
    }

    #[test]
    fn stats_file() {
        let mut o = String::new();
        stats(
            &mut o,
            &ProcStats {
                conns: 30,
                inpkts: 300,
                outpkts: 200,
                inbytes: 123_456,
                outbytes: 0x1_0000_0000,
                cps: 1,
                inpps: 10,
                outpps: 7,
                inbps: 900,
                outbps: 600,
            },
        )
        .unwrap();
        // "%8LX %8LX %8LX %16LX %16LX\n\n" and the rates line.
        assert_eq!(
            o,
            "   Total Incoming Outgoing         Incoming         Outgoing\n\
             \x20  Conns  Packets  Packets            Bytes            Bytes\n\
             \x20     1E      12C       C8            1E240        100000000\n\
             \n\
             \x20Conns/s   Pkts/s   Pkts/s          Bytes/s          Bytes/s\n\
             \x20      1        A        7              384              258\n"
        );
    }

    #[test]
    fn percpu_file() {
        let mut o = String::new();
        percpu_header(&mut o).unwrap();
        let c = ProcCounts {
            conns: 3,
            inpkts: 40,
            outpkts: 20,
            inbytes: 5000,
            outbytes: 0xfff,
        };
        percpu_line(&mut o, 0, &c).unwrap();
        percpu_line(&mut o, 17, &ProcCounts::default()).unwrap();
        let tot = ProcStats {
            conns: 3,
            inpkts: 40,
            outpkts: 20,
            inbytes: 5000,
            outbytes: 0xfff,
            cps: 0,
            inpps: 2,
            outpps: 1,
            inbps: 250,
            outbps: 0x80,
        };
        percpu_footer(&mut o, &tot).unwrap();
        // "%3X %8LX %8LX %8LX %16LX %16LX\n" per CPU, then
        // "  ~ %8LX ..\n\n", the rates title and "    %8LX ...\n".
        assert_eq!(
            o,
            "       Total Incoming Outgoing         Incoming         Outgoing\n\
             CPU    Conns  Packets  Packets            Bytes            Bytes\n\
             \x20 0        3       28       14             1388              FFF\n\
             \x2011        0        0        0                0                0\n\
             \x20 ~        3       28       14             1388              FFF\n\
             \n\
             \x20    Conns/s   Pkts/s   Pkts/s          Bytes/s          Bytes/s\n\
             \x20          0        2        1               FA               80\n"
        );
    }
}
