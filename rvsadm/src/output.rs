//! Rendering of the virtual server table: ipvsadm's `-L -n` layout and JSON.

use std::net::IpAddr;

use serde::Serialize;

use crate::types::{fmt_addr_port, Dest, Info, Service};
use crate::uapi::{self, linux};

/// One service with its real servers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    pub service: Service,
    pub dests: Vec<Dest>,
}

fn addr_key(a: &IpAddr) -> [u8; 16] {
    crate::msg::inet_addr_bytes(a)
}

/// Sorts services and their real servers as ipvsadm does (fwmark, family,
/// protocol, address, port), so the listing does not depend on hash order.
pub fn sort_entries(entries: &mut [Entry]) {
    entries.sort_by_key(|e| {
        let s = &e.service;
        (
            s.fwmark,
            s.af,
            s.protocol.number(),
            addr_key(&s.addr),
            s.port,
        )
    });
    for e in entries.iter_mut() {
        e.dests.sort_by_key(|d| (d.af, addr_key(&d.addr), d.port));
    }
}

/// The service part of a listing line, e.g. `TCP  10.0.0.1:80 rr persistent 300`.
pub fn service_line(s: &Service) -> String {
    let name = if s.fwmark != 0 {
        if s.af == linux::AF_INET6 {
            format!("FWM  {} IPv6", s.fwmark)
        } else {
            format!("FWM  {}", s.fwmark)
        }
    } else {
        format!(
            "{:<4} {}",
            s.protocol.label(),
            fmt_addr_port(&s.addr, s.port)
        )
    };
    let mut line = format!("{name} {}", s.scheduler);
    if s.is_persistent() {
        line.push_str(&format!(" persistent {}", s.timeout));
        if !s.netmask.is_default_for(s.af) {
            line.push_str(&format!(" mask {}", s.netmask.display(s.af)));
        }
        if !s.pe_name.is_empty() {
            line.push_str(&format!(" pe {}", s.pe_name));
        }
    }
    if s.flags & uapi::RVS_SVC_F_ONEPACKET != 0 {
        line.push_str(" ops");
    }
    line
}

/// A real server line, e.g. `  -> 10.0.1.1:80                  Masq    1      0          0`
/// (with ipvsadm's trailing padding).
pub fn dest_line(d: &Dest) -> String {
    format!(
        "  -> {:<28} {:<7} {:<6} {:<10} {:<10}",
        fmt_addr_port(&d.addr, d.port),
        d.forward.label(),
        d.weight,
        d.active_conns,
        d.inactive_conns
    )
}

/// The whole `-L -n` listing, ending in a newline. `with_version`: print
/// the version line first (ipvsadm omits it when listing one service).
pub fn format_table(info: &Info, entries: &[Entry], with_version: bool) -> String {
    let mut out = String::new();
    if with_version {
        out.push_str(&format!(
            "IP Virtual Server version {} (size={})\n",
            info.version_string(),
            info.conn_tab_size
        ));
    }
    out.push_str(
        "Prot LocalAddress:Port Scheduler Flags\n  \
         -> RemoteAddress:Port           Forward Weight ActiveConn InActConn\n",
    );
    for e in entries {
        out.push_str(&service_line(&e.service));
        out.push('\n');
        for d in &e.dests {
            out.push_str(&dest_line(d));
            out.push('\n');
        }
    }
    out
}

#[derive(Serialize)]
struct JsonTable<'a> {
    version: String,
    conn_tab_size: u32,
    services: Vec<JsonService<'a>>,
}

#[derive(Serialize)]
struct JsonService<'a> {
    protocol: String,
    address: String,
    port: u16,
    scheduler: &'a str,
    flags: Vec<&'static str>,
    persistent_timeout: Option<u32>,
    dests: Vec<JsonDest>,
}

#[derive(Serialize)]
struct JsonDest {
    address: String,
    port: u16,
    forward: String,
    weight: u32,
    upper_threshold: u32,
    lower_threshold: u32,
    active_conns: u32,
    inactive_conns: u32,
}

/// User-visible flag names (the kernel-internal "hashed" flag is left out).
fn flag_names(flags: u32) -> Vec<&'static str> {
    let mut v = Vec::new();
    if flags & uapi::RVS_SVC_F_PERSISTENT != 0 {
        v.push("persistent");
    }
    if flags & uapi::RVS_SVC_F_ONEPACKET != 0 {
        v.push("onepacket");
    }
    v
}

/// The listing as one line of JSON, ending in a newline.
pub fn format_json(info: &Info, entries: &[Entry]) -> String {
    let table = JsonTable {
        version: info.version_string(),
        conn_tab_size: info.conn_tab_size,
        services: entries
            .iter()
            .map(|e| {
                let s = &e.service;
                JsonService {
                    protocol: s.protocol.json_name(),
                    address: s.addr.to_string(),
                    port: s.port,
                    scheduler: &s.scheduler,
                    flags: flag_names(s.flags),
                    persistent_timeout: s.is_persistent().then_some(s.timeout),
                    dests: e
                        .dests
                        .iter()
                        .map(|d| JsonDest {
                            address: d.addr.to_string(),
                            port: d.port,
                            forward: d.forward.label().to_ascii_lowercase(),
                            weight: d.weight,
                            upper_threshold: d.upper_threshold,
                            lower_threshold: d.lower_threshold,
                            active_conns: d.active_conns,
                            inactive_conns: d.inactive_conns,
                        })
                        .collect(),
                }
            })
            .collect(),
    };
    let mut s = serde_json::to_string(&table).expect("serialising plain data cannot fail");
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{Forward, Netmask, Protocol, Stats};

    fn svc(addr: &str, port: u16, sched: &str) -> Service {
        let addr: IpAddr = addr.parse().unwrap();
        Service {
            af: crate::types::af_of(&addr),
            protocol: Protocol::Tcp,
            addr,
            port,
            fwmark: 0,
            scheduler: sched.into(),
            flags: uapi::RVS_SVC_F_HASHED,
            timeout: 0,
            netmask: Netmask::default_for(&addr),
            pe_name: String::new(),
            stats: Stats::default(),
        }
    }

    fn dest(addr: &str, port: u16, fwd: Forward, w: u32, a: u32, i: u32) -> Dest {
        let addr: IpAddr = addr.parse().unwrap();
        Dest {
            af: crate::types::af_of(&addr),
            addr,
            port,
            forward: fwd,
            weight: w,
            upper_threshold: 0,
            lower_threshold: 0,
            active_conns: a,
            inactive_conns: i,
            persist_conns: 0,
            stats: Stats::default(),
        }
    }

    fn info() -> Info {
        Info {
            version: 0x010201,
            conn_tab_size: 4096,
        }
    }

    #[test]
    fn table_like_ipvsadm() {
        let entries = vec![Entry {
            service: svc("10.0.0.1", 80, "rr"),
            dests: vec![dest("10.0.1.1", 80, Forward::Masq, 1, 0, 0)],
        }];
        let want = "IP Virtual Server version 1.2.1 (size=4096)\n\
Prot LocalAddress:Port Scheduler Flags\n\
\x20 -> RemoteAddress:Port           Forward Weight ActiveConn InActConn\n\
TCP  10.0.0.1:80 rr\n\
\x20 -> 10.0.1.1:80                  Masq    1      0          0         \n";
        assert_eq!(format_table(&info(), &entries, true), want);
        let one = format_table(&info(), &entries, false);
        assert_eq!(one, want.split_once('\n').unwrap().1);
    }

    #[test]
    fn service_line_variants() {
        let mut s = svc("10.0.0.1", 443, "wlc");
        s.flags |= uapi::RVS_SVC_F_PERSISTENT;
        s.timeout = 300;
        assert_eq!(service_line(&s), "TCP  10.0.0.1:443 wlc persistent 300");
        s.netmask = Netmask::from_ipv4("255.255.255.0".parse().unwrap());
        assert_eq!(
            service_line(&s),
            "TCP  10.0.0.1:443 wlc persistent 300 mask 255.255.255.0"
        );
        let mut u = svc("2001:db8::1", 53, "sh");
        u.protocol = Protocol::Udp;
        u.flags |= uapi::RVS_SVC_F_PERSISTENT | uapi::RVS_SVC_F_ONEPACKET;
        u.timeout = 60;
        u.netmask = Netmask(64);
        assert_eq!(
            service_line(&u),
            "UDP  [2001:db8::1]:53 sh persistent 60 mask 64 ops"
        );
        let mut f = svc("0.0.0.0", 0, "rr");
        f.fwmark = 7;
        assert_eq!(service_line(&f), "FWM  7 rr");
    }

    #[test]
    fn dest_line_variants() {
        assert_eq!(
            dest_line(&dest("10.0.1.2", 8080, Forward::Route, 65535, 1234567, 12)),
            "  -> 10.0.1.2:8080                Route   65535  1234567    12        "
        );
        assert_eq!(
            dest_line(&dest("2001:db8::2", 80, Forward::Tunnel, 0, 0, 0)),
            "  -> [2001:db8::2]:80             Tunnel  0      0          0         "
        );
        assert_eq!(
            dest_line(&dest("10.0.1.3", 80, Forward::Local, 1, 0, 0))
                .split_whitespace()
                .nth(2),
            Some("Local")
        );
    }

    #[test]
    fn sorting() {
        let mut entries = vec![
            Entry {
                service: svc("10.0.0.2", 80, "rr"),
                dests: vec![],
            },
            Entry {
                service: svc("10.0.0.1", 443, "rr"),
                dests: vec![
                    dest("10.0.1.9", 443, Forward::Route, 1, 0, 0),
                    dest("10.0.1.10", 443, Forward::Route, 1, 0, 0),
                ],
            },
            Entry {
                service: svc("10.0.0.1", 80, "rr"),
                dests: vec![],
            },
        ];
        sort_entries(&mut entries);
        let order: Vec<String> = entries.iter().map(|e| service_line(&e.service)).collect();
        assert_eq!(
            order,
            [
                "TCP  10.0.0.1:80 rr",
                "TCP  10.0.0.1:443 rr",
                "TCP  10.0.0.2:80 rr"
            ]
        );
        assert_eq!(entries[1].dests[0].addr.to_string(), "10.0.1.9");
    }

    #[test]
    fn json_listing() {
        let mut p = svc("10.0.0.2", 443, "wlc");
        p.flags |= uapi::RVS_SVC_F_PERSISTENT;
        p.timeout = 300;
        let mut d = dest("10.0.1.1", 8080, Forward::Masq, 2, 3, 4);
        d.upper_threshold = 10;
        d.lower_threshold = 5;
        let entries = vec![
            Entry {
                service: svc("10.0.0.1", 80, "rr"),
                dests: vec![d],
            },
            Entry {
                service: p,
                dests: vec![],
            },
        ];
        let want = concat!(
            r#"{"version":"1.2.1","conn_tab_size":4096,"services":["#,
            r#"{"protocol":"tcp","address":"10.0.0.1","port":80,"scheduler":"rr","flags":[],"persistent_timeout":null,"dests":["#,
            r#"{"address":"10.0.1.1","port":8080,"forward":"masq","weight":2,"upper_threshold":10,"lower_threshold":5,"active_conns":3,"inactive_conns":4}]},"#,
            r#"{"protocol":"tcp","address":"10.0.0.2","port":443,"scheduler":"wlc","flags":["persistent"],"persistent_timeout":300,"dests":[]}]}"#,
            "\n"
        );
        assert_eq!(format_json(&info(), &entries), want);
        assert_eq!(
            format_json(&info(), &[]),
            "{\"version\":\"1.2.1\",\"conn_tab_size\":4096,\"services\":[]}\n"
        );
    }
}
