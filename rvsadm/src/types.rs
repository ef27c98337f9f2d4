//! Typed model shared by argument parsing, message building, reply parsing
//! and output: services, real servers (destinations) and module info.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use crate::uapi::{self, linux};

/// Transport protocol of a virtual service.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Protocol {
    Tcp,
    Udp,
    Sctp,
    /// A protocol number rvsadm does not know (shown as-is when listing).
    Other(u16),
}

impl Protocol {
    pub fn number(self) -> u16 {
        match self {
            Protocol::Tcp => linux::IPPROTO_TCP,
            Protocol::Udp => linux::IPPROTO_UDP,
            Protocol::Sctp => linux::IPPROTO_SCTP,
            Protocol::Other(n) => n,
        }
    }

    pub fn from_number(n: u16) -> Protocol {
        match n {
            linux::IPPROTO_TCP => Protocol::Tcp,
            linux::IPPROTO_UDP => Protocol::Udp,
            linux::IPPROTO_SCTP => Protocol::Sctp,
            n => Protocol::Other(n),
        }
    }

    /// Upper-case name as in ipvsadm's listing ("TCP", "UDP", "SCTP").
    pub fn label(self) -> String {
        match self {
            Protocol::Tcp => "TCP".to_string(),
            Protocol::Udp => "UDP".to_string(),
            Protocol::Sctp => "SCTP".to_string(),
            // Persistence templates of firewall-mark services (IPPROTO_IP).
            Protocol::Other(0) => "IP".to_string(),
            Protocol::Other(n) => format!("P{n}"),
        }
    }

    /// Lower-case name for JSON ("tcp", "udp", "sctp").
    pub fn json_name(self) -> String {
        self.label().to_ascii_lowercase()
    }
}

/// Packet-forwarding method of a real server.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Forward {
    /// NAT (`-m`).
    Masq,
    /// Local node (the kernel reports this for a real server on the director).
    Local,
    /// IP-in-IP tunnel (`-i`).
    Tunnel,
    /// Direct routing (`-g`, the default).
    Route,
    Bypass,
    /// FullNAT (`--fullnat`, an rvs addition): source and destination
    /// rewritten, the source to one of the service's local addresses.
    FullNat,
    /// ENAT (`--enat`, an rvs addition): the request leaves from the VIP,
    /// the client's address in a TCP option; the real server's companion
    /// (rvs_rs.ko) sends the replies straight to the client.
    Enat,
    Other(u32),
}

impl Forward {
    pub fn code(self) -> u32 {
        match self {
            Forward::Masq => uapi::RVS_CONN_F_MASQ,
            Forward::Local => uapi::RVS_CONN_F_LOCALNODE,
            Forward::Tunnel => uapi::RVS_CONN_F_TUNNEL,
            Forward::Route => uapi::RVS_CONN_F_DROUTE,
            Forward::Bypass => uapi::RVS_CONN_F_BYPASS,
            Forward::FullNat => uapi::RVS_CONN_F_FULLNAT,
            Forward::Enat => uapi::RVS_CONN_F_ENAT,
            Forward::Other(n) => n,
        }
    }

    pub fn from_code(code: u32) -> Forward {
        match code & uapi::RVS_CONN_F_FWD_MASK {
            uapi::RVS_CONN_F_MASQ => Forward::Masq,
            uapi::RVS_CONN_F_LOCALNODE => Forward::Local,
            uapi::RVS_CONN_F_TUNNEL => Forward::Tunnel,
            uapi::RVS_CONN_F_DROUTE => Forward::Route,
            uapi::RVS_CONN_F_BYPASS => Forward::Bypass,
            uapi::RVS_CONN_F_FULLNAT => Forward::FullNat,
            uapi::RVS_CONN_F_ENAT => Forward::Enat,
            n => Forward::Other(n),
        }
    }

    /// Name in ipvsadm's listing ("Masq", "Local", "Tunnel", "Route"),
    /// and rvs's "FullNat" and "Enat" (the module's names of them, no
    /// wider than ipvsadm's Forward column).
    pub fn label(self) -> &'static str {
        match self {
            Forward::Masq => "Masq",
            Forward::Local => "Local",
            Forward::Tunnel => "Tunnel",
            Forward::Route => "Route",
            Forward::Bypass => "Bypass",
            Forward::FullNat => "FullNat",
            Forward::Enat => "Enat",
            Forward::Other(_) => "Unknown",
        }
    }

    /// Whether the real server's port may differ from the service's: the
    /// methods that rewrite the destination (NAT and FullNAT).
    pub fn allows_port_mapping(self) -> bool {
        matches!(self, Forward::Masq | Forward::FullNat)
    }
}

/// Address family number (AF_INET / AF_INET6) of an address.
pub fn af_of(addr: &IpAddr) -> u16 {
    match addr {
        IpAddr::V4(_) => linux::AF_INET,
        IpAddr::V6(_) => linux::AF_INET6,
    }
}

/// Formats `addr:port`, with brackets around IPv6 addresses.
pub fn fmt_addr_port(addr: &IpAddr, port: u16) -> String {
    match addr {
        IpAddr::V4(a) => format!("{a}:{port}"),
        IpAddr::V6(a) => format!("[{a}]:{port}"),
    }
}

/// What identifies a virtual service: protocol, address and port, or a
/// firewall mark (`-f`; then protocol, address and port are not used and
/// `addr` only gives the family).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ServiceKey {
    pub protocol: Protocol,
    pub addr: IpAddr,
    pub port: u16,
    /// Firewall mark; 0 for an address/port service.
    pub fwmark: u32,
}

impl ServiceKey {
    /// An address/port service.
    pub fn new(protocol: Protocol, addr: IpAddr, port: u16) -> ServiceKey {
        ServiceKey {
            protocol,
            addr,
            port,
            fwmark: 0,
        }
    }

    /// An IPv4 firewall-mark service.
    pub fn fwmark(mark: u32) -> ServiceKey {
        ServiceKey {
            protocol: Protocol::Tcp,
            addr: IpAddr::V4(Ipv4Addr::UNSPECIFIED),
            port: 0,
            fwmark: mark,
        }
    }

    /// An IPv6 firewall-mark service (`-f MARK -6`).
    pub fn fwmark6(mark: u32) -> ServiceKey {
        ServiceKey {
            addr: IpAddr::V6(Ipv6Addr::UNSPECIFIED),
            ..ServiceKey::fwmark(mark)
        }
    }

    pub fn af(&self) -> u16 {
        af_of(&self.addr)
    }
}

impl fmt::Display for ServiceKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.fwmark != 0 {
            let v6 = if self.addr.is_ipv6() { " IPv6" } else { "" };
            return write!(f, "FWM {}{v6}", self.fwmark);
        }
        write!(
            f,
            "{} {}",
            self.protocol.label(),
            fmt_addr_port(&self.addr, self.port)
        )
    }
}

/// Persistence netmask as sent on the wire (`RVS_SVC_ATTR_NETMASK`).
///
/// For IPv4 the u32 holds the mask in network byte order (its in-memory
/// bytes are the dotted-quad octets), like ipvsadm sends it; for IPv6 it is
/// a prefix length (1..=128).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Netmask(pub u32);

impl Netmask {
    pub fn from_ipv4(mask: Ipv4Addr) -> Netmask {
        Netmask(u32::from_ne_bytes(mask.octets()))
    }

    /// The default mask for a family: 255.255.255.255 or /128.
    pub fn default_for(addr: &IpAddr) -> Netmask {
        match addr {
            IpAddr::V4(_) => Netmask(0xffff_ffff),
            IpAddr::V6(_) => Netmask(128),
        }
    }

    pub fn is_default_for(self, af: u16) -> bool {
        if af == linux::AF_INET6 {
            self.0 == 128
        } else {
            self.0 == 0xffff_ffff
        }
    }

    /// Human form: dotted quad for IPv4, prefix length for IPv6.
    pub fn display(self, af: u16) -> String {
        if af == linux::AF_INET6 {
            self.0.to_string()
        } else {
            Ipv4Addr::from(self.0.to_ne_bytes()).to_string()
        }
    }
}

/// Default persistence timeout in seconds for `-p` without a value.
pub const DEFAULT_PERSISTENT_TIMEOUT: u32 = 300;
/// Default scheduler, as in ipvsadm.
pub const DEFAULT_SCHEDULER: &str = "wlc";

/// Everything `-A`/`-E` set on a virtual service.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServiceSpec {
    pub key: ServiceKey,
    pub scheduler: String,
    /// Persistence timeout in seconds; `None` when not persistent.
    pub persistent: Option<u32>,
    pub netmask: Netmask,
    /// Scheduler flags (`-b`): `RVS_SVC_F_SCHED1..3` bits.
    pub sched_flags: u32,
    /// One-packet scheduling (`-o`).
    pub one_packet: bool,
    /// `--laddr`: the local addresses FullNAT real servers are reached
    /// from, all of them (`Some` of an empty list: `--laddr none`, which
    /// clears them); `None` without `--laddr`, which leaves them as they
    /// are (`RVS_SVC_ATTR_LADDRS` absent).
    pub laddrs: Option<Vec<IpAddr>>,
}

impl ServiceSpec {
    pub fn flags(&self) -> u32 {
        let mut f = self.sched_flags;
        if self.persistent.is_some() {
            f |= uapi::RVS_SVC_F_PERSISTENT;
        }
        if self.one_packet {
            f |= uapi::RVS_SVC_F_ONEPACKET;
        }
        f
    }
}

/// The scheduler flags `-b` knows, as ipvsadm names them: name, bit, and
/// the scheduler it needs (`None`: any).
pub const SCHED_FLAG_NAMES: &[(&str, u32, Option<&str>)] = &[
    ("flag-1", uapi::RVS_SVC_F_SCHED1, None),
    ("flag-2", uapi::RVS_SVC_F_SCHED2, None),
    ("flag-3", uapi::RVS_SVC_F_SCHED3, None),
    ("sh-fallback", uapi::RVS_SVC_F_SCHED1, Some("sh")),
    ("sh-port", uapi::RVS_SVC_F_SCHED2, Some("sh")),
    ("mh-fallback", uapi::RVS_SVC_F_SCHED1, Some("mh")),
    ("mh-port", uapi::RVS_SVC_F_SCHED2, Some("mh")),
];

/// All scheduler flag bits.
pub const SCHED_FLAGS_MASK: u32 =
    uapi::RVS_SVC_F_SCHED1 | uapi::RVS_SVC_F_SCHED2 | uapi::RVS_SVC_F_SCHED3;

/// The scheduler flags of `flags` as ipvsadm prints them for scheduler
/// `sched`, comma-separated (`sh-fallback,sh-port`); empty if none.
pub fn sched_flags_text(sched: &str, flags: u32) -> String {
    let (one, two) = match sched {
        "sh" => ("sh-fallback", "sh-port"),
        "mh" => ("mh-fallback", "mh-port"),
        _ => ("flag-1", "flag-2"),
    };
    let mut v = Vec::new();
    if flags & uapi::RVS_SVC_F_SCHED1 != 0 {
        v.push(one);
    }
    if flags & uapi::RVS_SVC_F_SCHED2 != 0 {
        v.push(two);
    }
    if flags & uapi::RVS_SVC_F_SCHED3 != 0 {
        v.push("flag-3");
    }
    v.join(",")
}

/// What identifies a real server within a service.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DestKey {
    pub addr: IpAddr,
    pub port: u16,
}

/// Everything `-a`/`-e` set on a real server.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DestSpec {
    pub key: DestKey,
    pub forward: Forward,
    pub weight: u32,
    pub upper_threshold: u32,
    pub lower_threshold: u32,
    pub tunnel: TunnelOpts,
}

/// Tunnel encapsulation of a real server (`--tun-type`, `--tun-port`,
/// `--tun-csum`...), in the kernel's numbers (`RVS_DEST_ATTR_TUN_*`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TunnelOpts {
    /// 0 ipip, 1 gue, 2 gre.
    pub kind: u8,
    /// GUE's UDP port.
    pub port: u16,
    /// Bit 0: checksum; bit 1: remote checksum offload.
    pub flags: u16,
}

impl TunnelOpts {
    pub const IPIP: u8 = crate::uapi::RVS_TUN_TYPE_IPIP;
    pub const GUE: u8 = crate::uapi::RVS_TUN_TYPE_GUE;
    pub const GRE: u8 = crate::uapi::RVS_TUN_TYPE_GRE;
    pub const CSUM: u16 = crate::uapi::RVS_TUN_F_CSUM;
    pub const REMCSUM: u16 = crate::uapi::RVS_TUN_F_REMCSUM;

    /// ipvsadm's name of the type.
    pub fn type_name(&self) -> &'static str {
        match self.kind {
            Self::IPIP => "ipip",
            Self::GUE => "gue",
            Self::GRE => "gre",
            _ => "unknown",
        }
    }

    /// ipvsadm's name of the checksum mode.
    pub fn csum_name(&self) -> &'static str {
        if self.flags & Self::REMCSUM != 0 {
            "remcsum"
        } else if self.flags & Self::CSUM != 0 {
            "csum"
        } else {
            "nocsum"
        }
    }
}

/// A virtual service as reported by the module.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Service {
    pub af: u16,
    pub protocol: Protocol,
    pub addr: IpAddr,
    pub port: u16,
    pub fwmark: u32,
    pub scheduler: String,
    pub flags: u32,
    pub timeout: u32,
    pub netmask: Netmask,
    pub pe_name: String,
    pub stats: Stats,
    /// Its local addresses (`--laddr`, `RVS_SVC_ATTR_LADDRS`); empty when
    /// it has none.
    pub laddrs: Vec<IpAddr>,
}

impl Service {
    pub fn key(&self) -> ServiceKey {
        ServiceKey {
            protocol: self.protocol,
            addr: self.addr,
            port: self.port,
            fwmark: self.fwmark,
        }
    }

    pub fn is_persistent(&self) -> bool {
        self.flags & uapi::RVS_SVC_F_PERSISTENT != 0
    }
}

/// A real server as reported by the module.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dest {
    pub af: u16,
    pub addr: IpAddr,
    pub port: u16,
    pub forward: Forward,
    pub weight: u32,
    pub upper_threshold: u32,
    pub lower_threshold: u32,
    pub active_conns: u32,
    pub inactive_conns: u32,
    pub persist_conns: u32,
    pub stats: Stats,
    pub tunnel: TunnelOpts,
    /// Seconds left of its drain (`-d --drain`), while it drains
    /// (`RVS_DEST_ATTR_DRAIN`); `None` otherwise.
    pub drain_secs_left: Option<u32>,
}

/// Traffic counters and rates (`*_ATTR_STATS` / `*_ATTR_STATS64`); zero
/// where the module sent none.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Connections scheduled.
    pub conns: u64,
    pub inpkts: u64,
    pub outpkts: u64,
    pub inbytes: u64,
    pub outbytes: u64,
    /// Connections per second.
    pub cps: u64,
    /// Incoming / outgoing packets per second.
    pub inpps: u64,
    pub outpps: u64,
    /// Incoming / outgoing bytes per second.
    pub inbps: u64,
    pub outbps: u64,
}

/// Connection timeouts in seconds (`--set`, `-L --timeout`); on `--set`,
/// 0 leaves the module's value unchanged.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Timeouts {
    pub tcp: u32,
    pub tcp_fin: u32,
    pub udp: u32,
}

/// A connection as reported by GET_CONN.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Conn {
    pub af: u16,
    pub protocol: Protocol,
    /// Client.
    pub caddr: IpAddr,
    pub cport: u16,
    /// Virtual service.
    pub vaddr: IpAddr,
    pub vport: u16,
    /// Real server.
    pub daddr: IpAddr,
    pub dport: u16,
    /// Protocol state, e.g. "ESTABLISHED", "SYN_RECV", "UDP".
    pub state: String,
    /// Milliseconds until the entry expires.
    pub expires_ms: u32,
    pub forward: Forward,
    /// A FullNAT connection's local end, the address and port its packets
    /// leave the director from toward the real server
    /// (`RVS_CONN_ATTR_LADDR`, `RVS_CONN_ATTR_LPORT`); `None` for others.
    pub local: Option<(IpAddr, u16)>,
}

/// GET_INFO reply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Info {
    /// Version code, e.g. 0x010201 for 1.2.1.
    pub version: u32,
    pub conn_tab_size: u32,
    /// The most buckets the table may grow to (rvs addition; absent from
    /// older modules).
    pub conn_tab_max: Option<u32>,
    /// The connection table's counters (rvs addition; absent before the
    /// namespace's first service).
    pub conns: Option<ConnCounters>,
    /// Packets the VIP port guard dropped or refused (rvs addition;
    /// absent from older modules).
    pub vip_guarded: Option<u64>,
    /// Connections ended by flushes (`--flush-conns`) and drains (rvs
    /// addition; absent from older modules).
    pub conn_flushed: Option<u64>,
    /// ENAT client SYNs dropped: no room in their TCP header for the
    /// option (RVS_INFO_ATTR_ENAT_NO_ROOM; absent from older modules).
    pub enat_no_room: Option<u64>,
    /// New FullNAT connections dropped for want of a free local port
    /// (rvs addition; absent from older modules).
    pub fullnat_no_port: Option<u64>,
}

/// The connection table's size and flood counters (GET_INFO, rvs addition).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ConnCounters {
    /// Entries in the table.
    pub count: u32,
    /// Bytes held by the table (bucket array and entries).
    pub memory: u64,
    /// New connections refused: table at `conn_max`, or no memory.
    pub refused: u64,
    /// Embryonic entries evicted by `drop_entry`.
    pub evicted: u64,
}

impl Info {
    /// "X.Y.Z" from the version code.
    pub fn version_string(&self) -> String {
        format!(
            "{}.{}.{}",
            (self.version >> 16) & 0xff,
            (self.version >> 8) & 0xff,
            self.version & 0xff
        )
    }
}

/// The longest interface name, its NUL included (the kernel's `IFNAMSIZ`).
pub const IFNAMSIZ: usize = 16;

/// The interface `--start-daemon` uses without `--mcast-interface`:
/// ipvsadm's `DEF_MCAST_IFN`.
pub const DEFAULT_MCAST_IFN: &str = "eth0";

/// The syncid `--start-daemon` sends without `--syncid`: ipvsadm's (its
/// man page's "default is 0"; its `--help` says 255, but 0 is what it
/// sends). A backup with syncid 0 accepts every master's messages.
pub const DEFAULT_SYNCID: u8 = 0;

/// The longest `--sync-maxlen`, as ipvsadm's: a UDP payload in an IPv4
/// datagram (65535 less the IP and UDP headers).
pub const MAX_SYNC_MAXLEN: u16 = 65535 - 20 - 8;

/// A connection sync daemon's role (IPVS's `IP_VS_STATE_MASTER` and
/// `IP_VS_STATE_BACKUP`): at most one of each runs in a namespace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DaemonState {
    /// Sends this director's connections to the group.
    Master,
    /// Receives another director's connections from the group.
    Backup,
}

impl DaemonState {
    /// `RVS_DAEMON_ATTR_STATE`'s value.
    pub fn code(self) -> u32 {
        match self {
            DaemonState::Master => uapi::RVS_DAEMON_MASTER,
            DaemonState::Backup => uapi::RVS_DAEMON_BACKUP,
        }
    }

    pub fn from_code(code: u32) -> Option<DaemonState> {
        match code {
            uapi::RVS_DAEMON_MASTER => Some(DaemonState::Master),
            uapi::RVS_DAEMON_BACKUP => Some(DaemonState::Backup),
            _ => None,
        }
    }

    /// ipvsadm's word for it, on the command line and in listings.
    pub fn name(self) -> &'static str {
        match self {
            DaemonState::Master => "master",
            DaemonState::Backup => "backup",
        }
    }

    /// The state named `word` (`--start-daemon master`).
    pub fn from_name(word: &str) -> Option<DaemonState> {
        match word {
            "master" => Some(DaemonState::Master),
            "backup" => Some(DaemonState::Backup),
            _ => None,
        }
    }
}

/// A network interface's name as the kernel takes one (`dev_valid_name`):
/// 1 to 15 bytes, not `.` or `..`, without `/`, `:` or white space. Of
/// fixed size, so that it is `Copy` and an error can carry it.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct IfName {
    len: u8,
    bytes: [u8; IFNAMSIZ - 1],
}

impl IfName {
    /// `name` if the kernel would take it, else why not.
    pub fn new(name: &str) -> Result<IfName, &'static str> {
        let b = name.as_bytes();
        if b.is_empty() {
            return Err("it is empty");
        }
        if b.len() >= IFNAMSIZ {
            return Err("interface names have at most 15 bytes");
        }
        if name == "." || name == ".." {
            return Err("'.' and '..' are not interface names");
        }
        if b.iter()
            .any(|c| *c == b'/' || *c == b':' || c.is_ascii_whitespace())
        {
            return Err("interface names have no '/', ':' or white space");
        }
        let mut bytes = [0u8; IFNAMSIZ - 1];
        bytes[..b.len()].copy_from_slice(b);
        Ok(IfName {
            len: b.len() as u8,
            bytes,
        })
    }

    pub fn as_str(&self) -> &str {
        // Copied from a `&str` whole (never cut), so always UTF-8.
        std::str::from_utf8(&self.bytes[..usize::from(self.len)]).unwrap_or_default()
    }
}

impl fmt::Display for IfName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Debug for IfName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "IfName({:?})", self.as_str())
    }
}

/// What `--start-daemon` asks for (NEW_DAEMON). The interface and syncid
/// are always sent, as the module needs them ([`DEFAULT_MCAST_IFN`],
/// [`DEFAULT_SYNCID`] when not given, as ipvsadm); the others only when
/// given (`None`: the module's default, as with ipvsadm).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DaemonSpec {
    pub state: DaemonState,
    pub mcast_ifn: IfName,
    pub syncid: u8,
    /// Most bytes of a sync message's UDP payload.
    pub sync_maxlen: Option<u16>,
    /// A multicast group, IPv4 or IPv6.
    pub mcast_group: Option<IpAddr>,
    pub mcast_port: Option<u16>,
    pub mcast_ttl: Option<u8>,
}

/// A running sync daemon, as a GET_DAEMON reply reports it; what the
/// module left out is `None`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Daemon {
    pub state: DaemonState,
    pub mcast_ifn: String,
    pub syncid: u32,
    pub sync_maxlen: Option<u16>,
    pub mcast_group: Option<IpAddr>,
    pub mcast_port: Option<u16>,
    pub mcast_ttl: Option<u8>,
    /// Datagrams sent (master) or received (backup) (rvs addition).
    pub msgs: Option<u64>,
    /// Connection records sent, or applied (rvs addition).
    pub conns: Option<u64>,
    /// Datagrams or records refused (rvs addition).
    pub refused: Option<u64>,
    /// Records not sent (rvs addition).
    pub lost: Option<u64>,
    /// Whole tables sent (master) or asked for (backup) (rvs addition:
    /// full resynchronisation, `--set-option sync_resync`).
    pub resyncs: Option<u64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interface_names_as_the_kernel_takes_them() {
        for ok in [
            "eth0",
            "bond0.12",
            "enp3s0f1np1",
            "a",
            "123456789012345",
            "vé",
        ] {
            let n = IfName::new(ok).unwrap();
            assert_eq!((n.as_str(), n.to_string()), (ok, ok.to_string()));
        }
        assert_eq!(
            format!("{:?}", IfName::new("eth0").unwrap()),
            "IfName(\"eth0\")"
        );
        for (bad, why) in [
            ("", "it is empty"),
            ("1234567890123456", "interface names have at most 15 bytes"),
            ("ééééééééé", "interface names have at most 15 bytes"),
            (".", "'.' and '..' are not interface names"),
            ("..", "'.' and '..' are not interface names"),
            ("eth0:1", "interface names have no '/', ':' or white space"),
            ("a/b", "interface names have no '/', ':' or white space"),
            ("eth 0", "interface names have no '/', ':' or white space"),
            ("eth0\n", "interface names have no '/', ':' or white space"),
        ] {
            assert_eq!(IfName::new(bad), Err(why), "{bad:?}");
        }
    }

    #[test]
    fn daemon_states() {
        for (s, code, name) in [
            (DaemonState::Master, 1, "master"),
            (DaemonState::Backup, 2, "backup"),
        ] {
            assert_eq!((s.code(), s.name()), (code, name));
            assert_eq!(DaemonState::from_code(code), Some(s));
            assert_eq!(DaemonState::from_name(name), Some(s));
        }
        assert_eq!(DaemonState::from_code(0), None);
        assert_eq!(DaemonState::from_code(3), None);
        assert_eq!(DaemonState::from_name("Master"), None);
        assert_eq!(MAX_SYNC_MAXLEN, 65507);
    }
}
