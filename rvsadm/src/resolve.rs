//! Host and service names in addresses, resolved as ipvsadm resolves them:
//! a host name to its first IPv4 address (ipvsadm's `gethostbyname`), a
//! port name through `/etc/services` for the service's protocol
//! (`getservbyname(name, "tcp"|"udp"|"sctp")`). Numeric forms never reach a
//! resolver, and neither does anything made only of digits and dots (a
//! mistyped address such as `10.0.0.300` is an error, not a DNS query).

use crate::types::Protocol;
use std::net::{Ipv4Addr, SocketAddr, ToSocketAddrs};

/// Where names are looked up (the system, or a test's table).
pub trait Resolve {
    /// The first IPv4 address of host `name`.
    fn host_v4(&self, name: &str) -> Option<Ipv4Addr>;
    /// The port of service `name` over `proto` ("tcp", "udp" or "sctp").
    fn service(&self, name: &str, proto: &str) -> Option<u16>;
}

/// The system's resolver (`getaddrinfo`) and `/etc/services`.
pub struct System;

impl Resolve for System {
    fn host_v4(&self, name: &str) -> Option<Ipv4Addr> {
        let addrs = (name, 0u16).to_socket_addrs().ok()?;
        addrs.into_iter().find_map(|a| match a {
            SocketAddr::V4(v4) => Some(*v4.ip()),
            SocketAddr::V6(_) => None,
        })
    }

    fn service(&self, name: &str, proto: &str) -> Option<u16> {
        let text = std::fs::read_to_string("/etc/services").ok()?;
        service_port(&text, name, proto)
    }
}

/// The protocol name `/etc/services` lists a service's port under (a
/// firewall-mark service's ports are looked up as TCP, as ipvsadm does).
pub fn proto_name(p: Protocol) -> &'static str {
    match p {
        Protocol::Udp => "udp",
        Protocol::Sctp => "sctp",
        _ => "tcp",
    }
}

/// The port of service `name` (or one of its aliases) over `proto` in the
/// text of an `/etc/services` file: `name port/proto [alias...] [# ...]`.
pub fn service_port(services: &str, name: &str, proto: &str) -> Option<u16> {
    services.lines().find_map(|line| {
        let line = line.split('#').next().unwrap_or("");
        let mut words = line.split_whitespace();
        let (first, port_proto) = (words.next()?, words.next()?);
        let (port, p) = port_proto.split_once('/')?;
        if p != proto || !(first == name || words.any(|alias| alias == name)) {
            return None;
        }
        port.parse().ok()
    })
}

/// Whether `s` looks like a numeric IPv4 address (digits and dots only),
/// so that a bad one is reported instead of being looked up as a name.
pub fn looks_numeric(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit() || b == b'.')
}

#[cfg(test)]
mod tests {
    use super::*;

    const SERVICES: &str = "\
# Network services, Internet style
tcpmux\t\t1/tcp\t\t\t\t# TCP port service multiplexer
domain\t\t53/tcp\t\t\t\t# Domain Name Server
domain\t\t53/udp
http\t\t80/tcp\t\twww\t\t# WorldWideWeb HTTP
https\t\t443/tcp
https\t\t443/udp
syslog\t\t514/udp
diameter\t3868/tcp
diameter\t3868/sctp
";

    #[test]
    fn services_by_name_alias_and_protocol() {
        assert_eq!(service_port(SERVICES, "http", "tcp"), Some(80));
        assert_eq!(service_port(SERVICES, "www", "tcp"), Some(80));
        assert_eq!(service_port(SERVICES, "http", "udp"), None);
        assert_eq!(service_port(SERVICES, "domain", "udp"), Some(53));
        assert_eq!(service_port(SERVICES, "syslog", "tcp"), None);
        assert_eq!(service_port(SERVICES, "Domain", "tcp"), None);
        assert_eq!(
            service_port(SERVICES, "Internet", "tcp"),
            None,
            "comments are not names"
        );
        assert_eq!(service_port(SERVICES, "nosuch", "tcp"), None);
        assert_eq!(service_port(SERVICES, "diameter", "sctp"), Some(3868));
        assert_eq!(service_port(SERVICES, "http", "sctp"), None);
    }

    #[test]
    fn protocol_names_as_getservbyname() {
        assert_eq!(proto_name(Protocol::Tcp), "tcp");
        assert_eq!(proto_name(Protocol::Udp), "udp");
        assert_eq!(proto_name(Protocol::Sctp), "sctp");
    }

    #[test]
    fn numeric_looking_strings() {
        assert!(looks_numeric("10.0.0.300"));
        assert!(looks_numeric("1234"));
        assert!(!looks_numeric("localhost"));
        assert!(!looks_numeric("host-1.example"));
        assert!(!looks_numeric(""));
    }
}
