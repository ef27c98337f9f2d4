//! Attribute payloads of rvs requests and parsing of the module's replies.
//!
//! Everything here is pure: requests are built into byte vectors (the
//! attributes that follow the generic netlink header) and replies are parsed
//! from such byte slices, so both are unit-tested without a kernel.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use crate::types::{
    af_of, Conn, ConnCounters, Daemon, DaemonSpec, DaemonState, Dest, DestKey, DestSpec, Forward,
    Info, Netmask, Protocol, Service, ServiceKey, ServiceSpec, Stats, Timeouts, TunnelOpts,
};
use crate::uapi::{self, linux};
use rvs_core::settings::{self, SettingSpec};

/// Set on nested attributes (kernels validating strictly require it).
pub const NLA_F_NESTED: u16 = 0x8000;
/// Set on attributes whose payload is in network byte order.
pub const NLA_F_NET_BYTEORDER: u16 = 0x4000;
/// Mask giving an attribute's type without its flags.
pub const NLA_TYPE_MASK: u16 = !(NLA_F_NESTED | NLA_F_NET_BYTEORDER);
const NLA_HDRLEN: usize = 4;

fn align4(n: usize) -> usize {
    (n + 3) & !3
}

/// Appends netlink attributes (`struct nlattr` + payload, 4-byte aligned).
#[derive(Debug, Default)]
pub struct AttrWriter {
    buf: Vec<u8>,
}

impl AttrWriter {
    pub fn new() -> AttrWriter {
        AttrWriter::default()
    }

    pub fn put(&mut self, ty: u16, payload: &[u8]) -> &mut Self {
        let len = NLA_HDRLEN + payload.len();
        self.buf.extend_from_slice(&(len as u16).to_ne_bytes());
        self.buf.extend_from_slice(&ty.to_ne_bytes());
        self.buf.extend_from_slice(payload);
        self.buf.resize(align4(self.buf.len()), 0);
        self
    }

    pub fn put_u16(&mut self, ty: u16, v: u16) -> &mut Self {
        self.put(ty, &v.to_ne_bytes())
    }

    pub fn put_u32(&mut self, ty: u16, v: u32) -> &mut Self {
        self.put(ty, &v.to_ne_bytes())
    }

    /// A u16 in network byte order (ports).
    pub fn put_be16(&mut self, ty: u16, v: u16) -> &mut Self {
        self.put(ty, &v.to_be_bytes())
    }

    /// Already encoded attributes, appended as they are.
    pub fn put_raw(&mut self, attrs: &[u8]) -> &mut Self {
        self.buf.extend_from_slice(attrs);
        self.buf.resize(align4(self.buf.len()), 0);
        self
    }

    /// A NUL-terminated string.
    pub fn put_str(&mut self, ty: u16, s: &str) -> &mut Self {
        let mut v = Vec::with_capacity(s.len() + 1);
        v.extend_from_slice(s.as_bytes());
        v.push(0);
        self.put(ty, &v)
    }

    /// A nested attribute whose content `fill` writes.
    pub fn nest(&mut self, ty: u16, fill: impl FnOnce(&mut AttrWriter)) -> &mut Self {
        let mut inner = AttrWriter::new();
        fill(&mut inner);
        self.put(ty | NLA_F_NESTED, &inner.buf)
    }

    pub fn finish(self) -> Vec<u8> {
        self.buf
    }
}

/// An address as `union nf_inet_addr`: 16 bytes, IPv4 in the first four.
pub fn inet_addr_bytes(addr: &IpAddr) -> [u8; 16] {
    let mut out = [0u8; 16];
    match addr {
        IpAddr::V4(a) => out[..4].copy_from_slice(&a.octets()),
        IpAddr::V6(a) => out.copy_from_slice(&a.octets()),
    }
    out
}

fn put_service_key(w: &mut AttrWriter, key: &ServiceKey) {
    w.put_u16(uapi::RVS_SVC_ATTR_AF, key.af());
    if key.fwmark != 0 {
        // As libipvs: a firewall-mark service is named by AF and mark only.
        w.put_u32(uapi::RVS_SVC_ATTR_FWMARK, key.fwmark);
        return;
    }
    w.put_u16(uapi::RVS_SVC_ATTR_PROTOCOL, key.protocol.number())
        .put(uapi::RVS_SVC_ATTR_ADDR, &inet_addr_bytes(&key.addr))
        .put_be16(uapi::RVS_SVC_ATTR_PORT, key.port);
}

/// Whether `cmd` can be one change of an APPLY request.
pub fn is_atomic_change(cmd: u8) -> bool {
    matches!(
        cmd,
        uapi::RVS_CMD_NEW_SERVICE
            | uapi::RVS_CMD_SET_SERVICE
            | uapi::RVS_CMD_DEL_SERVICE
            | uapi::RVS_CMD_NEW_DEST
            | uapi::RVS_CMD_SET_DEST
            | uapi::RVS_CMD_DEL_DEST
            | uapi::RVS_CMD_FLUSH
    )
}

/// One change of an APPLY request: `RVS_CMD_ATTR_OP` holding the command
/// and the attributes it would have alone (`RVS_OP_ATTR_SERVICE` and
/// `_DEST` have the numbers of `RVS_CMD_ATTR_SERVICE` and `_DEST`).
pub fn apply_op(cmd: u8, attrs: &[u8]) -> Vec<u8> {
    let mut w = AttrWriter::new();
    w.nest(uapi::RVS_CMD_ATTR_OP, |w| {
        w.put_u32(uapi::RVS_OP_ATTR_CMD, u32::from(cmd))
            .put_raw(attrs);
    });
    w.finish()
}

/// `RVS_CMD_ATTR_SERVICE` identifying a service (AF, PROTOCOL, ADDR, PORT):
/// DEL_SERVICE, GET_SERVICE and the service part of destination requests.
pub fn service_key_attrs(key: &ServiceKey) -> Vec<u8> {
    let mut w = AttrWriter::new();
    w.nest(uapi::RVS_CMD_ATTR_SERVICE, |s| put_service_key(s, key));
    w.finish()
}

/// NEW_SERVICE / SET_SERVICE: the full service, as ipvsadm sends it.
pub fn service_attrs(spec: &ServiceSpec) -> Vec<u8> {
    let mut flags = [0u8; uapi::RVS_FLAGS_SIZE];
    flags[..4].copy_from_slice(&spec.flags().to_ne_bytes());
    flags[4..].copy_from_slice(&u32::MAX.to_ne_bytes());
    let mut w = AttrWriter::new();
    w.nest(uapi::RVS_CMD_ATTR_SERVICE, |s| {
        put_service_key(s, &spec.key);
        s.put_str(uapi::RVS_SVC_ATTR_SCHED_NAME, &spec.scheduler)
            .put(uapi::RVS_SVC_ATTR_FLAGS, &flags)
            .put_u32(uapi::RVS_SVC_ATTR_TIMEOUT, spec.persistent.unwrap_or(0))
            .put_u32(uapi::RVS_SVC_ATTR_NETMASK, spec.netmask.0);
        // Only with --laddr: an absent LADDRS keeps the service's local
        // addresses (-E without --laddr), an empty nest clears them.
        if let Some(laddrs) = &spec.laddrs {
            s.nest(uapi::RVS_SVC_ATTR_LADDRS, |l| {
                for a in laddrs {
                    l.put(uapi::RVS_LADDR_ATTR_ADDR, &inet_addr_bytes(a));
                }
            });
        }
    });
    w.finish()
}

/// NEW_DEST / SET_DEST: the service key plus the full destination.
pub fn dest_attrs(svc: &ServiceKey, dest: &DestSpec) -> Vec<u8> {
    let mut w = AttrWriter::new();
    w.nest(uapi::RVS_CMD_ATTR_SERVICE, |s| put_service_key(s, svc));
    w.nest(uapi::RVS_CMD_ATTR_DEST, |d| {
        d.put(uapi::RVS_DEST_ATTR_ADDR, &inet_addr_bytes(&dest.key.addr))
            .put_be16(uapi::RVS_DEST_ATTR_PORT, dest.key.port)
            .put_u32(uapi::RVS_DEST_ATTR_FWD_METHOD, dest.forward.code())
            .put_u32(uapi::RVS_DEST_ATTR_WEIGHT, dest.weight)
            .put_u32(uapi::RVS_DEST_ATTR_U_THRESH, dest.upper_threshold)
            .put_u32(uapi::RVS_DEST_ATTR_L_THRESH, dest.lower_threshold)
            .put_u16(uapi::RVS_DEST_ATTR_ADDR_FAMILY, af_of(&dest.key.addr))
            .put(uapi::RVS_DEST_ATTR_TUN_TYPE, &[dest.tunnel.kind])
            .put_be16(uapi::RVS_DEST_ATTR_TUN_PORT, dest.tunnel.port)
            .put_u16(uapi::RVS_DEST_ATTR_TUN_FLAGS, dest.tunnel.flags);
    });
    w.finish()
}

/// What names a destination within its service: ADDR, PORT, ADDR_FAMILY.
fn put_dest_key(w: &mut AttrWriter, dest: &DestKey) {
    w.put(uapi::RVS_DEST_ATTR_ADDR, &inet_addr_bytes(&dest.addr))
        .put_be16(uapi::RVS_DEST_ATTR_PORT, dest.port)
        .put_u16(uapi::RVS_DEST_ATTR_ADDR_FAMILY, af_of(&dest.addr));
}

/// DEL_DEST: the service key plus the destination's ADDR, PORT, ADDR_FAMILY.
pub fn del_dest_attrs(svc: &ServiceKey, dest: &DestKey) -> Vec<u8> {
    let mut w = AttrWriter::new();
    w.nest(uapi::RVS_CMD_ATTR_SERVICE, |s| put_service_key(s, svc));
    w.nest(uapi::RVS_CMD_ATTR_DEST, |d| put_dest_key(d, dest));
    w.finish()
}

/// DEL_DEST with `RVS_DEST_ATTR_DRAIN` (`-d --drain`): the server drains
/// for `secs` seconds, then its remaining connections are ended and it
/// is deleted.
pub fn drain_dest_attrs(svc: &ServiceKey, dest: &DestKey, secs: u32) -> Vec<u8> {
    let mut w = AttrWriter::new();
    w.nest(uapi::RVS_CMD_ATTR_SERVICE, |s| put_service_key(s, svc));
    w.nest(uapi::RVS_CMD_ATTR_DEST, |d| {
        put_dest_key(d, dest);
        d.put_u32(uapi::RVS_DEST_ATTR_DRAIN, secs);
    });
    w.finish()
}

/// FLUSH_CONNS (`--flush-conns`): the service key, and the destination's
/// key (as DEL_DEST names it) when only that server's connections end.
pub fn flush_conns_attrs(svc: &ServiceKey, dest: Option<&DestKey>) -> Vec<u8> {
    let mut w = AttrWriter::new();
    w.nest(uapi::RVS_CMD_ATTR_SERVICE, |s| put_service_key(s, svc));
    if let Some(dest) = dest {
        w.nest(uapi::RVS_CMD_ATTR_DEST, |d| put_dest_key(d, dest));
    }
    w.finish()
}

/// The FLUSH_CONNS reply: how many connections the flush ended
/// (`RVS_INFO_ATTR_CONN_FLUSHED`, a u64 as in GET_INFO replies).
pub fn parse_flush_reply(attrs: &[u8]) -> Result<u64, ParseError> {
    match find_attr(attrs, uapi::RVS_INFO_ATTR_CONN_FLUSHED)? {
        Some(p) => get_u64(p, "flush CONN_FLUSHED"),
        None => perr("flush reply without CONN_FLUSHED"),
    }
}

/// SET_CONFIG (`--set`): the three timeouts as top-level u32 attributes,
/// always all three (0 leaves a timeout unchanged), as ipvsadm sends them.
pub fn timeout_attrs(t: &Timeouts) -> Vec<u8> {
    let mut w = AttrWriter::new();
    w.put_u32(uapi::RVS_CMD_ATTR_TIMEOUT_TCP, t.tcp)
        .put_u32(uapi::RVS_CMD_ATTR_TIMEOUT_TCP_FIN, t.tcp_fin)
        .put_u32(uapi::RVS_CMD_ATTR_TIMEOUT_UDP, t.udp);
    w.finish()
}

/// SET_CONFIG (`--set-option`): one u32 attribute per setting given.
pub fn settings_attrs(values: &[(u16, u32)]) -> Vec<u8> {
    let mut w = AttrWriter::new();
    for (attr, v) in values {
        w.put_u32(*attr, *v);
    }
    w.finish()
}

/// The settings in a GET_CONFIG reply, in the settings table's order;
/// settings the module did not report (an older module) are left out.
pub fn parse_settings(attrs: &[u8]) -> Result<Vec<(&'static SettingSpec, u32)>, ParseError> {
    let mut out = Vec::new();
    for spec in settings::SETTINGS.iter() {
        for a in Attrs::new(attrs) {
            let (ty, p) = a?;
            if ty == spec.attr {
                out.push((spec, get_u32(p, spec.name)?));
            }
        }
    }
    Ok(out)
}

/// ZERO (`-Z`): the service key for one service, nothing for all.
pub fn zero_attrs(key: Option<&ServiceKey>) -> Vec<u8> {
    key.map(service_key_attrs).unwrap_or_default()
}

/// NEW_DAEMON (`--start-daemon`): a DAEMON nest as libipvs's
/// `ipvs_start_daemon` fills it, in its order: STATE, MCAST_IFN and
/// SYNC_ID always (the module needs them), then SYNC_MAXLEN, MCAST_PORT
/// and MCAST_TTL when given, then the group when given, as MCAST_GROUP6
/// (16 bytes) or MCAST_GROUP (4 bytes, network order). The port is a u16
/// in host order (IPVS's `nla_get_u16`), unlike the services' ports.
pub fn new_daemon_attrs(spec: &DaemonSpec) -> Vec<u8> {
    let mut w = AttrWriter::new();
    w.nest(uapi::RVS_CMD_ATTR_DAEMON, |d| {
        d.put_u32(uapi::RVS_DAEMON_ATTR_STATE, spec.state.code())
            .put_str(uapi::RVS_DAEMON_ATTR_MCAST_IFN, spec.mcast_ifn.as_str())
            .put_u32(uapi::RVS_DAEMON_ATTR_SYNC_ID, u32::from(spec.syncid));
        if let Some(n) = spec.sync_maxlen {
            d.put_u16(uapi::RVS_DAEMON_ATTR_SYNC_MAXLEN, n);
        }
        if let Some(port) = spec.mcast_port {
            d.put_u16(uapi::RVS_DAEMON_ATTR_MCAST_PORT, port);
        }
        if let Some(ttl) = spec.mcast_ttl {
            d.put(uapi::RVS_DAEMON_ATTR_MCAST_TTL, &[ttl]);
        }
        match spec.mcast_group {
            Some(IpAddr::V6(g)) => {
                d.put(uapi::RVS_DAEMON_ATTR_MCAST_GROUP6, &g.octets());
            }
            Some(IpAddr::V4(g)) => {
                d.put(uapi::RVS_DAEMON_ATTR_MCAST_GROUP, &g.octets());
            }
            None => {}
        }
    });
    w.finish()
}

/// DEL_DAEMON (`--stop-daemon`): a DAEMON nest with the STATE alone,
/// which is all that names a daemon (one of each state runs).
pub fn del_daemon_attrs(state: DaemonState) -> Vec<u8> {
    let mut w = AttrWriter::new();
    w.nest(uapi::RVS_CMD_ATTR_DAEMON, |d| {
        d.put_u32(uapi::RVS_DAEMON_ATTR_STATE, state.code());
    });
    w.finish()
}

/// Parses the attributes of a GET_DAEMON dump entry.
pub fn parse_daemon_reply(attrs: &[u8]) -> Result<Daemon, ParseError> {
    match find_attr(attrs, uapi::RVS_CMD_ATTR_DAEMON)? {
        Some(nested) => parse_daemon(nested),
        None => perr("daemon reply without RVS_CMD_ATTR_DAEMON"),
    }
}

/// Parses the content of a nested `RVS_CMD_ATTR_DAEMON`. STATE,
/// MCAST_IFN and SYNC_ID are required, as libipvs requires them; an
/// IPv4 group is read before an IPv6 one, as libipvs reads them.
pub fn parse_daemon(buf: &[u8]) -> Result<Daemon, ParseError> {
    let (mut state, mut ifn, mut syncid) = (None, None, None);
    let (mut group4, mut group6) = (None, None);
    let mut d = Daemon {
        state: DaemonState::Master,
        mcast_ifn: String::new(),
        syncid: 0,
        sync_maxlen: None,
        mcast_group: None,
        mcast_port: None,
        mcast_ttl: None,
        msgs: None,
        conns: None,
        refused: None,
        lost: None,
        resyncs: None,
    };
    for a in Attrs::new(buf) {
        let (ty, p) = a?;
        match ty {
            uapi::RVS_DAEMON_ATTR_STATE => state = Some(get_u32(p, "daemon STATE")?),
            uapi::RVS_DAEMON_ATTR_MCAST_IFN => ifn = Some(get_string(p)),
            uapi::RVS_DAEMON_ATTR_SYNC_ID => syncid = Some(get_u32(p, "daemon SYNC_ID")?),
            uapi::RVS_DAEMON_ATTR_SYNC_MAXLEN => {
                d.sync_maxlen = Some(get_u16(p, "daemon SYNC_MAXLEN")?)
            }
            uapi::RVS_DAEMON_ATTR_MCAST_GROUP => match p {
                [a, b, c, e] => group4 = Some(IpAddr::V4(Ipv4Addr::new(*a, *b, *c, *e))),
                _ => {
                    return perr(format!(
                        "daemon MCAST_GROUP: expected 4 bytes, got {}",
                        p.len()
                    ))
                }
            },
            uapi::RVS_DAEMON_ATTR_MCAST_GROUP6 => {
                group6 = Some(get_addr(p, linux::AF_INET6, "daemon MCAST_GROUP6")?)
            }
            uapi::RVS_DAEMON_ATTR_MCAST_PORT => {
                d.mcast_port = Some(get_u16(p, "daemon MCAST_PORT")?)
            }
            uapi::RVS_DAEMON_ATTR_MCAST_TTL => match p {
                [t] => d.mcast_ttl = Some(*t),
                _ => {
                    return perr(format!(
                        "daemon MCAST_TTL: expected 1 byte, got {}",
                        p.len()
                    ))
                }
            },
            uapi::RVS_DAEMON_ATTR_MSGS => d.msgs = Some(get_u64(p, "daemon MSGS")?),
            uapi::RVS_DAEMON_ATTR_CONNS => d.conns = Some(get_u64(p, "daemon CONNS")?),
            uapi::RVS_DAEMON_ATTR_REFUSED => d.refused = Some(get_u64(p, "daemon REFUSED")?),
            uapi::RVS_DAEMON_ATTR_LOST => d.lost = Some(get_u64(p, "daemon LOST")?),
            uapi::RVS_DAEMON_ATTR_RESYNCS => d.resyncs = Some(get_u64(p, "daemon RESYNCS")?),
            // RVS_DAEMON_ATTR_PAD and anything newer.
            _ => {}
        }
    }
    let Some(state) = state else {
        return perr("daemon without STATE");
    };
    d.state = DaemonState::from_code(state).ok_or_else(|| {
        ParseError(format!(
            "daemon STATE {state} is neither master (1) nor backup (2)"
        ))
    })?;
    d.mcast_ifn = match ifn {
        Some(name) => name,
        None => return perr("daemon without MCAST_IFN"),
    };
    d.syncid = match syncid {
        Some(id) => id,
        None => return perr("daemon without SYNC_ID"),
    };
    d.mcast_group = group4.or(group6);
    Ok(d)
}

/// A reply the module sent that rvsadm cannot make sense of.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError(pub String);

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "malformed reply from the module: {}", self.0)
    }
}

impl std::error::Error for ParseError {}

fn perr<T>(msg: impl Into<String>) -> Result<T, ParseError> {
    Err(ParseError(msg.into()))
}

/// Iterates over the attributes of a buffer as (type without flags, payload).
pub struct Attrs<'a> {
    buf: &'a [u8],
}

impl<'a> Attrs<'a> {
    pub fn new(buf: &'a [u8]) -> Attrs<'a> {
        Attrs { buf }
    }
}

impl<'a> Iterator for Attrs<'a> {
    type Item = Result<(u16, &'a [u8]), ParseError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.buf.len() < NLA_HDRLEN {
            // Trailing bytes shorter than a header are padding.
            return None;
        }
        let len = u16::from_ne_bytes([self.buf[0], self.buf[1]]) as usize;
        let ty = u16::from_ne_bytes([self.buf[2], self.buf[3]]) & NLA_TYPE_MASK;
        if len < NLA_HDRLEN || len > self.buf.len() {
            self.buf = &[];
            return Some(perr(format!(
                "attribute {ty} has length {len}, outside its buffer"
            )));
        }
        let payload = &self.buf[NLA_HDRLEN..len];
        let next = align4(len).min(self.buf.len());
        self.buf = &self.buf[next..];
        Some(Ok((ty, payload)))
    }
}

/// Finds the first attribute of type `ty`.
pub fn find_attr(buf: &[u8], ty: u16) -> Result<Option<&[u8]>, ParseError> {
    for a in Attrs::new(buf) {
        let (t, p) = a?;
        if t == ty {
            return Ok(Some(p));
        }
    }
    Ok(None)
}

fn get_u16(p: &[u8], what: &str) -> Result<u16, ParseError> {
    match p {
        [a, b] => Ok(u16::from_ne_bytes([*a, *b])),
        _ => perr(format!("{what}: expected 2 bytes, got {}", p.len())),
    }
}

fn get_be16(p: &[u8], what: &str) -> Result<u16, ParseError> {
    get_u16(p, what).map(u16::from_be)
}

fn get_u32(p: &[u8], what: &str) -> Result<u32, ParseError> {
    match p {
        [a, b, c, d] => Ok(u32::from_ne_bytes([*a, *b, *c, *d])),
        _ => perr(format!("{what}: expected 4 bytes, got {}", p.len())),
    }
}

fn get_u64(p: &[u8], what: &str) -> Result<u64, ParseError> {
    match p.len() {
        4 => get_u32(p, what).map(u64::from),
        8 => {
            let mut b = [0u8; 8];
            b.copy_from_slice(p);
            Ok(u64::from_ne_bytes(b))
        }
        n => perr(format!("{what}: expected 4 or 8 bytes, got {n}")),
    }
}

fn get_string(p: &[u8]) -> String {
    let end = p.iter().position(|&b| b == 0).unwrap_or(p.len());
    String::from_utf8_lossy(&p[..end]).into_owned()
}

fn get_addr(p: &[u8], af: u16, what: &str) -> Result<IpAddr, ParseError> {
    match (af, p.len()) {
        (linux::AF_INET, 4..=16) => Ok(IpAddr::V4(Ipv4Addr::new(p[0], p[1], p[2], p[3]))),
        (linux::AF_INET6, 16) => {
            let mut b = [0u8; 16];
            b.copy_from_slice(p);
            Ok(IpAddr::V6(Ipv6Addr::from(b)))
        }
        (linux::AF_INET | linux::AF_INET6, n) => {
            perr(format!("{what}: {n} bytes for address family {af}"))
        }
        _ => perr(format!("{what}: unknown address family {af}")),
    }
}

/// Parses the content of a nested `*_ATTR_STATS` / `*_ATTR_STATS64`.
pub fn parse_stats(buf: &[u8]) -> Result<Stats, ParseError> {
    let mut s = Stats::default();
    for a in Attrs::new(buf) {
        let (ty, p) = a?;
        let field = match ty {
            uapi::RVS_STATS_ATTR_CONNS => &mut s.conns,
            uapi::RVS_STATS_ATTR_INPKTS => &mut s.inpkts,
            uapi::RVS_STATS_ATTR_OUTPKTS => &mut s.outpkts,
            uapi::RVS_STATS_ATTR_INBYTES => &mut s.inbytes,
            uapi::RVS_STATS_ATTR_OUTBYTES => &mut s.outbytes,
            uapi::RVS_STATS_ATTR_CPS => &mut s.cps,
            uapi::RVS_STATS_ATTR_INPPS => &mut s.inpps,
            uapi::RVS_STATS_ATTR_OUTPPS => &mut s.outpps,
            uapi::RVS_STATS_ATTR_INBPS => &mut s.inbps,
            uapi::RVS_STATS_ATTR_OUTBPS => &mut s.outbps,
            // RVS_STATS_ATTR_PAD (alignment of the u64s) and anything newer.
            _ => continue,
        };
        *field = get_u64(p, "stats counter")?;
    }
    Ok(s)
}

/// Parses the attributes of a NEW_SERVICE reply (a GET_SERVICE answer).
pub fn parse_service_reply(attrs: &[u8]) -> Result<Service, ParseError> {
    match find_attr(attrs, uapi::RVS_CMD_ATTR_SERVICE)? {
        Some(nested) => parse_service(nested),
        None => perr("service reply without RVS_CMD_ATTR_SERVICE"),
    }
}

/// Parses the content of a nested `RVS_CMD_ATTR_SERVICE`.
pub fn parse_service(buf: &[u8]) -> Result<Service, ParseError> {
    let mut af = None;
    let mut protocol = 0u16;
    let mut addr_raw: Option<&[u8]> = None;
    let mut port = 0u16;
    let mut fwmark = 0u32;
    let mut scheduler = String::new();
    let mut flags = 0u32;
    let mut timeout = 0u32;
    let mut netmask = None;
    let mut pe_name = String::new();
    let mut stats = None;
    let mut stats64 = None;
    let mut laddrs_raw: Option<&[u8]> = None;
    for a in Attrs::new(buf) {
        let (ty, p) = a?;
        match ty {
            uapi::RVS_SVC_ATTR_AF => af = Some(get_u16(p, "service AF")?),
            uapi::RVS_SVC_ATTR_PROTOCOL => protocol = get_u16(p, "service PROTOCOL")?,
            uapi::RVS_SVC_ATTR_ADDR => addr_raw = Some(p),
            uapi::RVS_SVC_ATTR_PORT => port = get_be16(p, "service PORT")?,
            uapi::RVS_SVC_ATTR_FWMARK => fwmark = get_u32(p, "service FWMARK")?,
            uapi::RVS_SVC_ATTR_SCHED_NAME => scheduler = get_string(p),
            uapi::RVS_SVC_ATTR_FLAGS => {
                if p.len() < 4 {
                    return perr("service FLAGS shorter than 4 bytes");
                }
                flags = get_u32(&p[..4], "service FLAGS")?;
            }
            uapi::RVS_SVC_ATTR_TIMEOUT => timeout = get_u32(p, "service TIMEOUT")?,
            uapi::RVS_SVC_ATTR_NETMASK => netmask = Some(Netmask(get_u32(p, "service NETMASK")?)),
            uapi::RVS_SVC_ATTR_PE_NAME => pe_name = get_string(p),
            uapi::RVS_SVC_ATTR_STATS => stats = Some(parse_stats(p)?),
            uapi::RVS_SVC_ATTR_STATS64 => stats64 = Some(parse_stats(p)?),
            uapi::RVS_SVC_ATTR_LADDRS => laddrs_raw = Some(p),
            _ => {}
        }
    }
    let Some(af) = af else {
        return perr("service without AF");
    };
    let laddrs = match laddrs_raw {
        Some(p) => parse_laddrs(p, af)?,
        None => Vec::new(),
    };
    let addr = match addr_raw {
        Some(p) => get_addr(p, af, "service ADDR")?,
        None if fwmark != 0 => unspecified(af),
        None => return perr("service without ADDR"),
    };
    Ok(Service {
        af,
        protocol: Protocol::from_number(protocol),
        addr,
        port,
        fwmark,
        scheduler,
        flags,
        timeout,
        netmask: netmask.unwrap_or_else(|| Netmask::default_for(&addr)),
        pe_name,
        stats: stats64.or(stats).unwrap_or_default(),
        laddrs,
    })
}

/// The content of a service's `RVS_SVC_ATTR_LADDRS`: its
/// `RVS_LADDR_ATTR_ADDR`s, addresses of the service's family `af` (the
/// module sends them in the 16-byte form); attributes of other types are
/// skipped, as a newer module's would be.
fn parse_laddrs(buf: &[u8], af: u16) -> Result<Vec<IpAddr>, ParseError> {
    let mut out = Vec::new();
    for a in Attrs::new(buf) {
        let (ty, p) = a?;
        if ty == uapi::RVS_LADDR_ATTR_ADDR {
            out.push(get_addr(p, af, "service LADDR")?);
        }
    }
    Ok(out)
}

fn unspecified(af: u16) -> IpAddr {
    if af == linux::AF_INET6 {
        IpAddr::V6(Ipv6Addr::UNSPECIFIED)
    } else {
        IpAddr::V4(Ipv4Addr::UNSPECIFIED)
    }
}

/// Parses the attributes of a NEW_DEST reply (a GET_DEST dump entry).
/// `svc_af` is the service's family, used when the module sends no
/// `RVS_DEST_ATTR_ADDR_FAMILY`.
pub fn parse_dest_reply(attrs: &[u8], svc_af: u16) -> Result<Dest, ParseError> {
    match find_attr(attrs, uapi::RVS_CMD_ATTR_DEST)? {
        Some(nested) => parse_dest(nested, svc_af),
        None => perr("destination reply without RVS_CMD_ATTR_DEST"),
    }
}

/// Parses the content of a nested `RVS_CMD_ATTR_DEST`.
pub fn parse_dest(buf: &[u8], svc_af: u16) -> Result<Dest, ParseError> {
    let mut af = svc_af;
    let mut addr_raw: Option<&[u8]> = None;
    let mut d = Dest {
        af,
        addr: unspecified(af),
        port: 0,
        forward: Forward::Masq,
        weight: 0,
        upper_threshold: 0,
        lower_threshold: 0,
        active_conns: 0,
        inactive_conns: 0,
        persist_conns: 0,
        stats: Stats::default(),
        tunnel: TunnelOpts::default(),
        drain_secs_left: None,
    };
    let mut stats = None;
    let mut stats64 = None;
    for a in Attrs::new(buf) {
        let (ty, p) = a?;
        match ty {
            uapi::RVS_DEST_ATTR_ADDR => addr_raw = Some(p),
            uapi::RVS_DEST_ATTR_PORT => d.port = get_be16(p, "dest PORT")?,
            uapi::RVS_DEST_ATTR_FWD_METHOD => {
                d.forward = Forward::from_code(get_u32(p, "dest FWD_METHOD")?)
            }
            uapi::RVS_DEST_ATTR_WEIGHT => d.weight = get_u32(p, "dest WEIGHT")?,
            uapi::RVS_DEST_ATTR_U_THRESH => d.upper_threshold = get_u32(p, "dest U_THRESH")?,
            uapi::RVS_DEST_ATTR_L_THRESH => d.lower_threshold = get_u32(p, "dest L_THRESH")?,
            uapi::RVS_DEST_ATTR_ACTIVE_CONNS => d.active_conns = get_u32(p, "dest ACTIVE_CONNS")?,
            uapi::RVS_DEST_ATTR_INACT_CONNS => d.inactive_conns = get_u32(p, "dest INACT_CONNS")?,
            uapi::RVS_DEST_ATTR_PERSIST_CONNS => {
                d.persist_conns = get_u32(p, "dest PERSIST_CONNS")?
            }
            uapi::RVS_DEST_ATTR_ADDR_FAMILY => af = get_u16(p, "dest ADDR_FAMILY")?,
            uapi::RVS_DEST_ATTR_TUN_TYPE => match p {
                [t] => d.tunnel.kind = *t,
                _ => return perr(format!("dest TUN_TYPE: expected 1 byte, got {}", p.len())),
            },
            uapi::RVS_DEST_ATTR_TUN_PORT => d.tunnel.port = get_be16(p, "dest TUN_PORT")?,
            uapi::RVS_DEST_ATTR_TUN_FLAGS => d.tunnel.flags = get_u16(p, "dest TUN_FLAGS")?,
            uapi::RVS_DEST_ATTR_STATS => stats = Some(parse_stats(p)?),
            uapi::RVS_DEST_ATTR_STATS64 => stats64 = Some(parse_stats(p)?),
            uapi::RVS_DEST_ATTR_DRAIN => d.drain_secs_left = Some(get_u32(p, "dest DRAIN")?),
            _ => {}
        }
    }
    let Some(raw) = addr_raw else {
        return perr("destination without ADDR");
    };
    d.af = af;
    d.addr = get_addr(raw, af, "dest ADDR")?;
    d.stats = stats64.or(stats).unwrap_or_default();
    Ok(d)
}

/// Parses a GET_INFO reply.
pub fn parse_info(attrs: &[u8]) -> Result<Info, ParseError> {
    let mut version = None;
    let mut size = 0;
    let mut conn_tab_max = None;
    let mut conns: Option<ConnCounters> = None;
    let mut vip_guarded = None;
    let mut conn_flushed = None;
    let mut fullnat_no_port = None;
    let mut enat_no_room = None;
    for a in Attrs::new(attrs) {
        let (ty, p) = a?;
        match ty {
            uapi::RVS_INFO_ATTR_VERSION => version = Some(get_u32(p, "info VERSION")?),
            uapi::RVS_INFO_ATTR_CONN_TAB_SIZE => size = get_u32(p, "info CONN_TAB_SIZE")?,
            uapi::RVS_INFO_ATTR_CONN_TAB_MAX => {
                conn_tab_max = Some(get_u32(p, "info CONN_TAB_MAX")?)
            }
            uapi::RVS_INFO_ATTR_CONN_COUNT => {
                conns.get_or_insert_default().count = get_u32(p, "info CONN_COUNT")?
            }
            uapi::RVS_INFO_ATTR_CONN_MEMORY => {
                conns.get_or_insert_default().memory = get_u64(p, "info CONN_MEMORY")?
            }
            uapi::RVS_INFO_ATTR_CONN_REFUSED => {
                conns.get_or_insert_default().refused = get_u64(p, "info CONN_REFUSED")?
            }
            uapi::RVS_INFO_ATTR_CONN_EVICTED => {
                conns.get_or_insert_default().evicted = get_u64(p, "info CONN_EVICTED")?
            }
            uapi::RVS_INFO_ATTR_VIP_GUARDED => vip_guarded = Some(get_u64(p, "info VIP_GUARDED")?),
            uapi::RVS_INFO_ATTR_CONN_FLUSHED => {
                conn_flushed = Some(get_u64(p, "info CONN_FLUSHED")?)
            }
            uapi::RVS_INFO_ATTR_FULLNAT_NO_PORT => {
                fullnat_no_port = Some(get_u64(p, "info FULLNAT_NO_PORT")?)
            }
            uapi::RVS_INFO_ATTR_ENAT_NO_ROOM => {
                enat_no_room = Some(get_u64(p, "info ENAT_NO_ROOM")?)
            }
            _ => {}
        }
    }
    match version {
        Some(version) => Ok(Info {
            version,
            conn_tab_size: size,
            conn_tab_max,
            conns,
            vip_guarded,
            conn_flushed,
            fullnat_no_port,
            enat_no_room,
        }),
        None => perr("info reply without VERSION"),
    }
}

/// Parses a GET_CONFIG reply (command SET_CONFIG); a missing timeout is 0.
pub fn parse_timeouts(attrs: &[u8]) -> Result<Timeouts, ParseError> {
    let mut t = Timeouts::default();
    for a in Attrs::new(attrs) {
        let (ty, p) = a?;
        match ty {
            uapi::RVS_CMD_ATTR_TIMEOUT_TCP => t.tcp = get_u32(p, "TIMEOUT_TCP")?,
            uapi::RVS_CMD_ATTR_TIMEOUT_TCP_FIN => t.tcp_fin = get_u32(p, "TIMEOUT_TCP_FIN")?,
            uapi::RVS_CMD_ATTR_TIMEOUT_UDP => t.udp = get_u32(p, "TIMEOUT_UDP")?,
            _ => {}
        }
    }
    Ok(t)
}

/// Parses the attributes of a GET_CONN dump entry.
pub fn parse_conn_reply(attrs: &[u8]) -> Result<Conn, ParseError> {
    match find_attr(attrs, uapi::RVS_CMD_ATTR_CONN)? {
        Some(nested) => parse_conn(nested),
        None => perr("connection reply without RVS_CMD_ATTR_CONN"),
    }
}

/// Parses the content of a nested `RVS_CMD_ATTR_CONN`.
pub fn parse_conn(buf: &[u8]) -> Result<Conn, ParseError> {
    let mut af = None;
    let mut protocol = 0u16;
    let (mut caddr, mut vaddr, mut daddr) = (None, None, None);
    let (mut cport, mut vport, mut dport) = (0u16, 0u16, 0u16);
    let mut state = String::new();
    let mut expires_ms = 0u32;
    let mut fwd = uapi::RVS_CONN_F_MASQ;
    let mut dest_af = None;
    let (mut laddr, mut lport) = (None, 0u16);
    for a in Attrs::new(buf) {
        let (ty, p) = a?;
        match ty {
            uapi::RVS_CONN_ATTR_AF => af = Some(get_u16(p, "conn AF")?),
            uapi::RVS_CONN_ATTR_PROTOCOL => protocol = get_u16(p, "conn PROTOCOL")?,
            uapi::RVS_CONN_ATTR_CADDR => caddr = Some(p),
            uapi::RVS_CONN_ATTR_CPORT => cport = get_be16(p, "conn CPORT")?,
            uapi::RVS_CONN_ATTR_VADDR => vaddr = Some(p),
            uapi::RVS_CONN_ATTR_VPORT => vport = get_be16(p, "conn VPORT")?,
            uapi::RVS_CONN_ATTR_DADDR => daddr = Some(p),
            uapi::RVS_CONN_ATTR_DPORT => dport = get_be16(p, "conn DPORT")?,
            uapi::RVS_CONN_ATTR_STATE => state = get_string(p),
            uapi::RVS_CONN_ATTR_EXPIRES => expires_ms = get_u32(p, "conn EXPIRES")?,
            uapi::RVS_CONN_ATTR_FWD_METHOD => fwd = get_u32(p, "conn FWD_METHOD")?,
            uapi::RVS_CONN_ATTR_DEST_AF => dest_af = Some(get_u16(p, "conn DEST_AF")?),
            uapi::RVS_CONN_ATTR_LADDR => laddr = Some(p),
            uapi::RVS_CONN_ATTR_LPORT => lport = get_be16(p, "conn LPORT")?,
            _ => {}
        }
    }
    let Some(af) = af else {
        return perr("connection without AF");
    };
    // A tunnelled real server may be of the other family.
    let addr = |raw: Option<&[u8]>, af: u16, what: &str| match raw {
        Some(p) => get_addr(p, af, what),
        None => perr(format!("connection without {what}")),
    };
    Ok(Conn {
        af,
        protocol: Protocol::from_number(protocol),
        caddr: addr(caddr, af, "CADDR")?,
        cport,
        vaddr: addr(vaddr, af, "VADDR")?,
        vport,
        daddr: addr(daddr, dest_af.unwrap_or(af), "DADDR")?,
        dport,
        state,
        expires_ms,
        forward: Forward::from_code(fwd),
        // FullNAT's local end faces the real server: its family.
        local: match laddr {
            Some(p) => Some((get_addr(p, dest_af.unwrap_or(af), "conn LADDR")?, lport)),
            None => None,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::DEFAULT_PERSISTENT_TIMEOUT;

    fn tcp_key() -> ServiceKey {
        ServiceKey::new(Protocol::Tcp, "10.0.0.1".parse().unwrap(), 80)
    }

    /// Little helper for expected bytes: native-endian u16/u32.
    fn ne16(v: u16) -> [u8; 2] {
        v.to_ne_bytes()
    }
    fn ne32(v: u32) -> [u8; 4] {
        v.to_ne_bytes()
    }

    fn attr(ty: u16, payload: &[u8]) -> Vec<u8> {
        let mut v = Vec::new();
        v.extend_from_slice(&ne16((4 + payload.len()) as u16));
        v.extend_from_slice(&ne16(ty));
        v.extend_from_slice(payload);
        while v.len() % 4 != 0 {
            v.push(0);
        }
        v
    }

    fn key_bytes() -> Vec<u8> {
        let mut addr = [0u8; 16];
        addr[..4].copy_from_slice(&[10, 0, 0, 1]);
        [
            attr(1, &ne16(2)),
            attr(2, &ne16(6)),
            attr(3, &addr),
            attr(4, &[0, 80]),
        ]
        .concat()
    }

    #[test]
    fn new_service_exact_bytes() {
        let spec = ServiceSpec {
            key: tcp_key(),
            scheduler: "rr".into(),
            persistent: None,
            netmask: Netmask(0xffff_ffff),
            sched_flags: 0,
            one_packet: false,
            laddrs: None,
        };
        let got = service_attrs(&spec);
        let inner = [
            key_bytes(),
            attr(6, b"rr\0"),
            attr(7, &[ne32(0), ne32(u32::MAX)].concat()),
            attr(8, &ne32(0)),
            attr(9, &[0xff, 0xff, 0xff, 0xff]),
        ]
        .concat();
        let want = attr(1 | NLA_F_NESTED, &inner);
        assert_eq!(got, want);
        // Spot-check the framing by hand: total length, nested header.
        assert_eq!(got.len(), 4 + 8 + 8 + 20 + 8 + 8 + 12 + 8 + 8);
        assert_eq!(
            &got[..4],
            &[ne16(got.len() as u16), ne16(0x8001)].concat()[..]
        );
        // AF attribute: len 6, type 1, value 2, two bytes of padding.
        assert_eq!(
            &got[4..12],
            &[ne16(6), ne16(1), ne16(2), [0, 0]].concat()[..]
        );
    }

    #[test]
    fn local_addresses_bytes_and_replies() {
        let spec = |laddrs: Option<Vec<IpAddr>>| ServiceSpec {
            key: tcp_key(),
            scheduler: "rr".into(),
            persistent: None,
            netmask: Netmask(0xffff_ffff),
            sched_flags: 0,
            one_packet: false,
            laddrs,
        };
        let base = [
            key_bytes(),
            attr(6, b"rr\0"),
            attr(7, &[ne32(0), ne32(u32::MAX)].concat()),
            attr(8, &ne32(0)),
            attr(9, &[0xff, 0xff, 0xff, 0xff]),
        ]
        .concat();
        // Without --laddr: no LADDRS (the module keeps the pool).
        assert_eq!(service_attrs(&spec(None)), attr(1 | NLA_F_NESTED, &base));
        // --laddr none: an empty nest (the module clears it).
        assert_eq!(
            service_attrs(&spec(Some(vec![]))),
            attr(
                1 | NLA_F_NESTED,
                &[base.clone(), attr(13 | NLA_F_NESTED, &[])].concat()
            )
        );
        // Addresses: one ADDR (type 1) each, in the 16-byte form.
        let v4 = |a: [u8; 4]| {
            let mut b = [0u8; 16];
            b[..4].copy_from_slice(&a);
            b
        };
        let two = vec!["10.0.2.1".parse().unwrap(), "10.0.2.2".parse().unwrap()];
        let nest = [attr(1, &v4([10, 0, 2, 1])), attr(1, &v4([10, 0, 2, 2]))].concat();
        assert_eq!(
            service_attrs(&spec(Some(two.clone()))),
            attr(
                1 | NLA_F_NESTED,
                &[base, attr(13 | NLA_F_NESTED, &nest)].concat()
            )
        );
        let v6: Ipv6Addr = "2001:db8:2::1".parse().unwrap();
        let six = ServiceSpec {
            key: ServiceKey::fwmark6(7),
            laddrs: Some(vec![IpAddr::V6(v6)]),
            ..spec(None)
        };
        let got = service_attrs(&six);
        let svc = find_attr(&got, uapi::RVS_CMD_ATTR_SERVICE)
            .unwrap()
            .unwrap();
        assert_eq!(
            find_attr(svc, uapi::RVS_SVC_ATTR_LADDRS).unwrap(),
            Some(&attr(1, &v6.octets())[..])
        );
        // Replies: the service's LADDRS, as the module sends them (16
        // bytes; 4 taken for IPv4 too); unknown inner types skipped.
        let reply = [key_bytes(), attr(13 | NLA_F_NESTED, &nest)].concat();
        assert_eq!(parse_service(&reply).unwrap().laddrs, two);
        assert!(parse_service(&key_bytes()).unwrap().laddrs.is_empty());
        let odd = [
            key_bytes(),
            attr(
                13 | NLA_F_NESTED,
                &[
                    attr(1, &[10, 0, 2, 7]),
                    attr(9, b"new"),
                    attr(1, &v4([10, 0, 2, 8])),
                ]
                .concat(),
            ),
        ]
        .concat();
        assert_eq!(
            parse_service(&odd).unwrap().laddrs,
            vec![
                "10.0.2.7".parse::<IpAddr>().unwrap(),
                "10.0.2.8".parse().unwrap()
            ]
        );
        let v6_reply = [
            attr(1, &ne16(10)),
            attr(5, &ne32(7)),
            attr(13 | NLA_F_NESTED, &attr(1, &v6.octets())),
        ]
        .concat();
        assert_eq!(
            parse_service(&v6_reply).unwrap().laddrs,
            vec![IpAddr::V6(v6)]
        );
        // An IPv6 service's address of 4 bytes, a cut nest: errors.
        let short6 = [
            attr(1, &ne16(10)),
            attr(5, &ne32(7)),
            attr(13 | NLA_F_NESTED, &attr(1, &[1, 2, 3, 4])),
        ]
        .concat();
        let e = parse_service(&short6).unwrap_err();
        assert!(e.to_string().contains("service LADDR: 4 bytes"), "{e}");
        let cut = [key_bytes(), attr(13 | NLA_F_NESTED, &[8, 0, 1, 0, 10])].concat();
        assert!(parse_service(&cut).is_err());
    }

    #[test]
    fn fwmark_service_is_named_by_af_and_mark() {
        let got = service_key_attrs(&ServiceKey::fwmark(7));
        let inner = [attr(1, &ne16(2)), attr(5, &ne32(7))].concat();
        assert_eq!(got, attr(1 | NLA_F_NESTED, &inner));
        // Flags of -b and -o travel in FLAGS with the persistence bit.
        let spec = ServiceSpec {
            key: ServiceKey::fwmark(7),
            scheduler: "sh".into(),
            persistent: Some(60),
            netmask: Netmask(0xffff_ffff),
            sched_flags: uapi::RVS_SVC_F_SCHED1 | uapi::RVS_SVC_F_SCHED2,
            one_packet: true,
            laddrs: None,
        };
        assert_eq!(spec.flags(), 0x1 | 0x4 | 0x8 | 0x10);
        let got = service_attrs(&spec);
        let nested = find_attr(&got, uapi::RVS_CMD_ATTR_SERVICE)
            .unwrap()
            .unwrap();
        assert_eq!(
            find_attr(nested, uapi::RVS_SVC_ATTR_FWMARK).unwrap(),
            Some(&ne32(7)[..])
        );
        assert_eq!(find_attr(nested, uapi::RVS_SVC_ATTR_ADDR).unwrap(), None);
        assert_eq!(
            find_attr(nested, uapi::RVS_SVC_ATTR_FLAGS).unwrap(),
            Some(&[ne32(0x1d), ne32(u32::MAX)].concat()[..])
        );
    }

    #[test]
    fn persistent_service_flags_timeout_and_mask() {
        let spec = ServiceSpec {
            key: tcp_key(),
            scheduler: "wlc".into(),
            persistent: Some(DEFAULT_PERSISTENT_TIMEOUT),
            netmask: Netmask::from_ipv4("255.255.255.0".parse().unwrap()),
            sched_flags: 0,
            one_packet: false,
            laddrs: None,
        };
        let got = service_attrs(&spec);
        let nested = find_attr(&got, uapi::RVS_CMD_ATTR_SERVICE)
            .unwrap()
            .unwrap();
        let flags = find_attr(nested, uapi::RVS_SVC_ATTR_FLAGS)
            .unwrap()
            .unwrap();
        assert_eq!(flags, &[ne32(1), ne32(u32::MAX)].concat()[..]);
        let timeout = find_attr(nested, uapi::RVS_SVC_ATTR_TIMEOUT)
            .unwrap()
            .unwrap();
        assert_eq!(timeout, &ne32(300));
        let mask = find_attr(nested, uapi::RVS_SVC_ATTR_NETMASK)
            .unwrap()
            .unwrap();
        assert_eq!(mask, &[255, 255, 255, 0]);
    }

    #[test]
    fn new_dest_exact_bytes() {
        let dest = DestSpec {
            key: DestKey {
                addr: "10.0.1.1".parse().unwrap(),
                port: 8080,
            },
            forward: Forward::Masq,
            weight: 3,
            upper_threshold: 100,
            lower_threshold: 10,
            tunnel: TunnelOpts {
                kind: 1,
                port: 6080,
                flags: 1,
            },
        };
        let got = dest_attrs(&tcp_key(), &dest);
        let mut daddr = [0u8; 16];
        daddr[..4].copy_from_slice(&[10, 0, 1, 1]);
        let want = [
            attr(1 | NLA_F_NESTED, &key_bytes()),
            attr(
                2 | NLA_F_NESTED,
                &[
                    attr(1, &daddr),
                    attr(2, &8080u16.to_be_bytes()),
                    attr(3, &ne32(0)),
                    attr(4, &ne32(3)),
                    attr(5, &ne32(100)),
                    attr(6, &ne32(10)),
                    attr(11, &ne16(2)),
                    attr(13, &[1]),
                    attr(14, &6080u16.to_be_bytes()),
                    attr(15, &ne16(1)),
                ]
                .concat(),
            ),
        ]
        .concat();
        assert_eq!(got, want);
    }

    #[test]
    fn del_dest_and_service_key_bytes() {
        let key = DestKey {
            addr: "2001:db8::5".parse().unwrap(),
            port: 443,
        };
        let svc = ServiceKey::new(Protocol::Udp, "2001:db8::1".parse().unwrap(), 443);
        let got = del_dest_attrs(&svc, &key);
        let v6: Ipv6Addr = "2001:db8::5".parse().unwrap();
        let want_dest = [
            attr(1, &v6.octets()),
            attr(2, &443u16.to_be_bytes()),
            attr(11, &ne16(10)),
        ]
        .concat();
        assert_eq!(
            find_attr(&got, uapi::RVS_CMD_ATTR_DEST).unwrap().unwrap(),
            &want_dest[..]
        );
        let sk = service_key_attrs(&svc);
        assert!(got.starts_with(&sk));
        let inner = find_attr(&sk, uapi::RVS_CMD_ATTR_SERVICE).unwrap().unwrap();
        let names: Vec<u16> = Attrs::new(inner).map(|a| a.unwrap().0).collect();
        assert_eq!(names, vec![1, 2, 3, 4]);
        assert_eq!(
            find_attr(inner, uapi::RVS_SVC_ATTR_PROTOCOL).unwrap(),
            Some(&ne16(17)[..])
        );
    }

    #[test]
    fn flush_conns_bytes_and_reply() {
        // A service: its key only, as -Z and -D send it.
        assert_eq!(
            flush_conns_attrs(&tcp_key(), None),
            attr(1 | NLA_F_NESTED, &key_bytes())
        );
        // One real server: DEL_DEST's DEST nest (ADDR, PORT, ADDR_FAMILY).
        let key = DestKey {
            addr: "10.0.1.1".parse().unwrap(),
            port: 8080,
        };
        let mut daddr = [0u8; 16];
        daddr[..4].copy_from_slice(&[10, 0, 1, 1]);
        let want = [
            attr(1 | NLA_F_NESTED, &key_bytes()),
            attr(
                2 | NLA_F_NESTED,
                &[
                    attr(1, &daddr),
                    attr(2, &8080u16.to_be_bytes()),
                    attr(11, &ne16(2)),
                ]
                .concat(),
            ),
        ]
        .concat();
        assert_eq!(flush_conns_attrs(&tcp_key(), Some(&key)), want);
        assert_eq!(del_dest_attrs(&tcp_key(), &key), want);
        let fw = flush_conns_attrs(&ServiceKey::fwmark6(7), None);
        assert_eq!(
            fw,
            attr(
                1 | NLA_F_NESTED,
                &[attr(1, &ne16(10)), attr(5, &ne32(7))].concat()
            )
        );
        // The reply: CONN_FLUSHED (u64, after its pad), other attributes
        // skipped; missing or of the wrong size, an error.
        let reply = [
            attr(7, &[]),
            attr(9, &12_345u64.to_ne_bytes()),
            attr(99, b"new"),
        ]
        .concat();
        assert_eq!(parse_flush_reply(&reply), Ok(12_345));
        assert_eq!(parse_flush_reply(&attr(9, &ne32(4))), Ok(4));
        let e = parse_flush_reply(&attr(7, &[])).unwrap_err();
        assert_eq!(
            e.to_string(),
            "malformed reply from the module: flush reply without CONN_FLUSHED"
        );
        assert!(parse_flush_reply(&attr(9, &[1, 2, 3])).is_err());
    }

    #[test]
    fn drain_dest_bytes_and_seconds_left() {
        let key = DestKey {
            addr: "10.0.1.1".parse().unwrap(),
            port: 80,
        };
        let mut daddr = [0u8; 16];
        daddr[..4].copy_from_slice(&[10, 0, 1, 1]);
        let want = [
            attr(1 | NLA_F_NESTED, &key_bytes()),
            attr(
                2 | NLA_F_NESTED,
                &[
                    attr(1, &daddr),
                    attr(2, &80u16.to_be_bytes()),
                    attr(11, &ne16(2)),
                    attr(16, &ne32(30)),
                ]
                .concat(),
            ),
        ]
        .concat();
        assert_eq!(drain_dest_attrs(&tcp_key(), &key, 30), want);
        // DEL_DEST's attributes and DRAIN after them.
        let plain = del_dest_attrs(&tcp_key(), &key);
        assert_eq!(want.len(), plain.len() + 8);
        // GET_DEST: DRAIN, the seconds left, only while draining.
        let inner = [attr(1, &daddr), attr(2, &80u16.to_be_bytes())].concat();
        assert_eq!(parse_dest(&inner, 2).unwrap().drain_secs_left, None);
        let draining = [inner.clone(), attr(16, &ne32(25))].concat();
        assert_eq!(parse_dest(&draining, 2).unwrap().drain_secs_left, Some(25));
        let zero = [inner.clone(), attr(16, &ne32(0))].concat();
        assert_eq!(parse_dest(&zero, 2).unwrap().drain_secs_left, Some(0));
        let bad = [inner, attr(16, &[1, 2])].concat();
        let e = parse_dest(&bad, 2).unwrap_err();
        assert!(e.to_string().contains("dest DRAIN"), "{e}");
    }

    fn stats_bytes() -> Vec<u8> {
        [attr(1, &ne32(7)), attr(2, &ne32(70)), attr(99, b"future")].concat()
    }

    #[test]
    fn parse_service_reply_with_unknown_attrs() {
        let inner = [
            key_bytes(),
            attr(5, &ne32(0)),
            attr(6, b"rr\0"),
            attr(7, &[ne32(3), ne32(u32::MAX)].concat()),
            attr(8, &ne32(360)),
            attr(9, &[255, 255, 0, 0]),
            attr(10 | NLA_F_NESTED, &stats_bytes()),
            attr(200, b"something new"),
        ]
        .concat();
        let msg = [attr(77, &[1, 2, 3]), attr(1 | NLA_F_NESTED, &inner)].concat();
        let s = parse_service_reply(&msg).unwrap();
        assert_eq!(s.key(), tcp_key());
        assert_eq!(s.af, 2);
        assert_eq!(s.scheduler, "rr");
        assert!(s.is_persistent());
        assert_eq!(s.flags, 3);
        assert_eq!(s.timeout, 360);
        assert_eq!(s.netmask.display(2), "255.255.0.0");
        assert_eq!(s.stats.conns, 7);
        assert_eq!(s.stats.inpkts, 70);
    }

    #[test]
    fn parse_service_minimal_and_errors() {
        let s = parse_service(&key_bytes()).unwrap();
        assert_eq!(s.scheduler, "");
        assert_eq!(s.netmask, Netmask(0xffff_ffff));
        assert_eq!(s.timeout, 0);
        // Missing AF.
        let no_af = [attr(2, &ne16(6)), attr(3, &[0u8; 16])].concat();
        assert!(parse_service(&no_af).is_err());
        // Truncated attribute.
        let mut bad = key_bytes();
        bad.truncate(bad.len() - 3);
        let e = parse_service(&bad).unwrap_err();
        assert!(e.to_string().contains("malformed reply"), "{e}");
        // Wrong payload size.
        let bad_port = [attr(1, &ne16(2)), attr(3, &[0u8; 16]), attr(4, &[1])].concat();
        assert!(parse_service(&bad_port).is_err());
        // Reply without the nested service.
        assert!(parse_service_reply(&attr(2, &[])).is_err());
    }

    #[test]
    fn parse_dest_reply_v4_and_v6() {
        let mut addr = [0u8; 16];
        addr[..4].copy_from_slice(&[10, 0, 1, 1]);
        let inner = [
            attr(1, &addr),
            attr(2, &80u16.to_be_bytes()),
            attr(3, &ne32(3)),
            attr(4, &ne32(5)),
            attr(5, &ne32(0)),
            attr(6, &ne32(0)),
            attr(7, &ne32(12)),
            attr(8, &ne32(34)),
            attr(9, &ne32(1)),
            attr(10 | NLA_F_NESTED, &stats_bytes()),
            attr(11, &ne16(2)),
            attr(250, &[0; 8]),
        ]
        .concat();
        let d = parse_dest_reply(&attr(2 | NLA_F_NESTED, &inner), 2).unwrap();
        assert_eq!(d.addr, "10.0.1.1".parse::<IpAddr>().unwrap());
        assert_eq!(d.port, 80);
        assert_eq!(d.forward, Forward::Route);
        assert_eq!(d.weight, 5);
        assert_eq!(d.active_conns, 12);
        assert_eq!(d.inactive_conns, 34);
        assert_eq!(d.persist_conns, 1);
        assert_eq!(d.stats.conns, 7);

        // IPv6 destination without ADDR_FAMILY: the service's family is used.
        let v6: Ipv6Addr = "2001:db8::7".parse().unwrap();
        let inner6 = [attr(1, &v6.octets()), attr(2, &443u16.to_be_bytes())].concat();
        let d6 = parse_dest(&inner6, 10).unwrap();
        assert_eq!(d6.addr, IpAddr::V6(v6));
        assert_eq!(d6.forward, Forward::Masq);
        assert_eq!(d6.weight, 0);

        assert!(parse_dest(&attr(2, &80u16.to_be_bytes()), 2).is_err());
        assert!(parse_dest_reply(&[], 2).is_err());
    }

    #[test]
    fn parse_info_reply() {
        let buf = [
            attr(1, &ne32(0x010201)),
            attr(2, &ne32(4096)),
            attr(99, &[0; 4]),
        ]
        .concat();
        let info = parse_info(&buf).unwrap();
        assert_eq!(info.version_string(), "1.2.1");
        assert_eq!(info.conn_tab_size, 4096);
        assert_eq!(info.conn_tab_max, None, "absent from older modules");
        assert_eq!(info.conns, None, "no counters before the first service");
        assert!(parse_info(&attr(2, &ne32(1))).is_err());
        let grown = [
            attr(1, &ne32(0x010201)),
            attr(2, &ne32(256)),
            attr(12, &ne32(1 << 20)),
        ]
        .concat();
        let info = parse_info(&grown).unwrap();
        assert_eq!(
            (info.conn_tab_size, info.conn_tab_max),
            (256, Some(1 << 20))
        );
        assert!(parse_info(&[attr(1, &ne32(0x010201)), attr(12, &[0; 8])].concat()).is_err());

        let counters = [
            attr(1, &ne32(0x010201)),
            attr(2, &ne32(65536)),
            attr(3, &ne32(2000)),
            attr(4, &(1u64 << 20).to_ne_bytes()),
            attr(5, &7u64.to_ne_bytes()),
            attr(6, &9u64.to_ne_bytes()),
        ]
        .concat();
        let c = parse_info(&counters).unwrap().conns.unwrap();
        assert_eq!(
            (c.count, c.memory, c.refused, c.evicted),
            (2000, 1 << 20, 7, 9)
        );
        assert!(parse_info(&[attr(1, &ne32(1)), attr(5, &[1, 2])].concat()).is_err());
        // The VIP guard's and the flushes' counters (u64 after a pad).
        let info = parse_info(&[attr(1, &ne32(1)), attr(2, &ne32(16))].concat()).unwrap();
        assert_eq!((info.vip_guarded, info.conn_flushed), (None, None));
        let counted = [
            attr(1, &ne32(0x010201)),
            attr(2, &ne32(4096)),
            attr(7, &[]),
            u64a(8, 5),
            attr(7, &[]),
            u64a(9, 1 << 40),
        ]
        .concat();
        let info = parse_info(&counted).unwrap();
        assert_eq!(
            (info.vip_guarded, info.conn_flushed),
            (Some(5), Some(1 << 40))
        );
        assert!(parse_info(&[attr(1, &ne32(1)), attr(9, &[0; 3])].concat()).is_err());
        // FullNAT's no-port count, attribute 10, a u64 too.
        assert_eq!(info.fullnat_no_port, None);
        let counted = [attr(1, &ne32(0x010201)), attr(7, &[]), u64a(10, 3)].concat();
        assert_eq!(parse_info(&counted).unwrap().fullnat_no_port, Some(3));
        let e = parse_info(&[attr(1, &ne32(1)), attr(10, &[0; 2])].concat()).unwrap_err();
        assert!(e.to_string().contains("info FULLNAT_NO_PORT"), "{e}");
        // ENAT's no-room count, attribute 11, a u64 too.
        assert_eq!(info.enat_no_room, None);
        let counted = [attr(1, &ne32(0x010201)), attr(7, &[]), u64a(11, 4)].concat();
        assert_eq!(parse_info(&counted).unwrap().enat_no_room, Some(4));
        let e = parse_info(&[attr(1, &ne32(1)), attr(11, &[0; 2])].concat()).unwrap_err();
        assert!(e.to_string().contains("info ENAT_NO_ROOM"), "{e}");
    }

    #[test]
    fn stats64_preferred_over_stats() {
        let s64 = [attr(1, &99u64.to_ne_bytes())].concat();
        let inner = [
            key_bytes(),
            attr(10 | NLA_F_NESTED, &stats_bytes()),
            attr(12 | NLA_F_NESTED, &s64),
        ]
        .concat();
        assert_eq!(parse_service(&inner).unwrap().stats.conns, 99);
    }

    #[test]
    fn set_config_exact_bytes() {
        let got = timeout_attrs(&Timeouts {
            tcp: 900,
            tcp_fin: 0,
            udp: 300,
        });
        let want = [attr(4, &ne32(900)), attr(5, &ne32(0)), attr(6, &ne32(300))].concat();
        assert_eq!(got, want);
        assert_eq!(got.len(), 24);
        assert_eq!(&got[..4], &[ne16(8), ne16(4)].concat()[..]);
        assert_eq!(&got[4..8], &ne32(900));
    }

    #[test]
    fn zero_attrs_with_and_without_service() {
        assert!(zero_attrs(None).is_empty());
        let got = zero_attrs(Some(&tcp_key()));
        assert_eq!(got, attr(1 | NLA_F_NESTED, &key_bytes()));
        assert_eq!(got.len(), 4 + 8 + 8 + 20 + 8);
    }

    #[test]
    fn parse_timeouts_reply() {
        let buf = [
            attr(4, &ne32(900)),
            attr(5, &ne32(120)),
            attr(6, &ne32(300)),
            attr(42, &[1]),
        ]
        .concat();
        assert_eq!(
            parse_timeouts(&buf).unwrap(),
            Timeouts {
                tcp: 900,
                tcp_fin: 120,
                udp: 300
            }
        );
        assert_eq!(parse_timeouts(&[]).unwrap(), Timeouts::default());
        assert!(parse_timeouts(&attr(4, &[1, 2])).is_err());
    }

    fn u64a(ty: u16, v: u64) -> Vec<u8> {
        attr(ty, &v.to_ne_bytes())
    }

    /// STATS64 as the kernel lays it out: u64 attributes with PAD
    /// attributes (empty or 4 bytes) between them for alignment.
    fn stats64_with_pad() -> Vec<u8> {
        [
            attr(11, &[]),
            u64a(1, 5),
            u64a(2, 50),
            attr(11, &[0; 4]),
            u64a(3, 40),
            u64a(4, 3000),
            u64a(5, 123_456_789_012),
            attr(11, &[]),
            u64a(6, 1),
            u64a(7, 12),
            u64a(8, 10),
            u64a(9, 900),
            u64a(10, u64::MAX),
            attr(11, &[0; 4]),
        ]
        .concat()
    }

    #[test]
    fn parse_stats64_with_pad() {
        let s = parse_stats(&stats64_with_pad()).unwrap();
        assert_eq!(
            s,
            Stats {
                conns: 5,
                inpkts: 50,
                outpkts: 40,
                inbytes: 3000,
                outbytes: 123_456_789_012,
                cps: 1,
                inpps: 12,
                outpps: 10,
                inbps: 900,
                outbps: u64::MAX,
            }
        );
        assert_eq!(parse_stats(&[]).unwrap(), Stats::default());
        // Truncated counter.
        assert!(parse_stats(&attr(1, &[0; 6])).is_err());
        // In service and destination replies.
        let inner = [key_bytes(), attr(12 | NLA_F_NESTED, &stats64_with_pad())].concat();
        assert_eq!(parse_service(&inner).unwrap().stats, s);
        let dest = [
            attr(1, &[10, 0, 1, 1]),
            attr(12 | NLA_F_NESTED, &stats64_with_pad()),
        ]
        .concat();
        assert_eq!(parse_dest(&dest, 2).unwrap().stats, s);
        // Without stats (older module): zeros.
        assert_eq!(parse_service(&key_bytes()).unwrap().stats, Stats::default());
    }

    fn conn_bytes(af: u16, c: &[u8], v: &[u8], d: &[u8]) -> Vec<u8> {
        [
            attr(1, &ne16(af)),
            attr(2, &ne16(6)),
            attr(3, c),
            attr(4, &40962u16.to_be_bytes()),
            attr(5, v),
            attr(6, &80u16.to_be_bytes()),
            attr(7, d),
            attr(8, &8080u16.to_be_bytes()),
            attr(9, b"ESTABLISHED\0"),
            attr(10, &ne32(899_999)),
            attr(11, &ne32(uapi::RVS_CONN_F_DROUTE)),
            attr(99, b"future"),
        ]
        .concat()
    }

    #[test]
    fn parse_conn_v4_v6_and_errors() {
        let a16 = |a: [u8; 4]| {
            let mut b = [0u8; 16];
            b[..4].copy_from_slice(&a);
            b
        };
        let inner = conn_bytes(
            2,
            &a16([10, 0, 0, 2]),
            &a16([10, 0, 100, 1]),
            &a16([10, 0, 1, 1]),
        );
        let c = parse_conn_reply(&attr(7 | NLA_F_NESTED, &inner)).unwrap();
        assert_eq!(
            c,
            Conn {
                af: 2,
                protocol: Protocol::Tcp,
                caddr: "10.0.0.2".parse().unwrap(),
                cport: 40962,
                vaddr: "10.0.100.1".parse().unwrap(),
                vport: 80,
                daddr: "10.0.1.1".parse().unwrap(),
                dport: 8080,
                state: "ESTABLISHED".into(),
                expires_ms: 899_999,
                forward: Forward::Route,
                local: None,
            }
        );
        let v6 = |s: &str| s.parse::<Ipv6Addr>().unwrap().octets();
        let inner6 = conn_bytes(
            10,
            &v6("2001:db8::2"),
            &v6("2001:db8::1"),
            &v6("2001:db8::3"),
        );
        let c6 = parse_conn(&inner6).unwrap();
        assert_eq!(c6.vaddr, "2001:db8::1".parse::<IpAddr>().unwrap());
        assert_eq!(c6.af, 10);
        // A tunnelled IPv4 real server of an IPv6 service (DEST_AF).
        let mut mixed = conn_bytes(
            10,
            &v6("2001:db8::2"),
            &v6("2001:db8::1"),
            &[10, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
        );
        mixed.extend(attr(12, &ne16(2)));
        let cm = parse_conn(&mixed).unwrap();
        assert_eq!(cm.daddr, "10.0.1.1".parse::<IpAddr>().unwrap());
        assert_eq!(cm.vaddr, "2001:db8::1".parse::<IpAddr>().unwrap());
        // Missing nest, AF or an address; a short IPv6 address.
        assert!(parse_conn_reply(&attr(1, &ne16(2))).is_err());
        assert!(parse_conn(&inner[8..]).is_err());
        let no_daddr = [attr(1, &ne16(2)), attr(3, &[0; 16]), attr(5, &[0; 16])].concat();
        let e = parse_conn(&no_daddr).unwrap_err();
        assert!(e.to_string().contains("DADDR"), "{e}");
        assert!(parse_conn(&conn_bytes(10, &[0; 4], &[0; 16], &[0; 16])).is_err());
    }

    #[test]
    fn parse_fullnat_conn_local_end() {
        let a16 = |a: [u8; 4]| {
            let mut b = [0u8; 16];
            b[..4].copy_from_slice(&a);
            b
        };
        let mut inner = conn_bytes(
            2,
            &a16([10, 0, 0, 2]),
            &a16([10, 0, 100, 1]),
            &a16([10, 0, 1, 1]),
        );
        inner.extend(attr(13, &a16([10, 0, 2, 1])));
        inner.extend(attr(14, &1025u16.to_be_bytes()));
        let c = parse_conn(&inner).unwrap();
        assert_eq!(c.local, Some(("10.0.2.1".parse().unwrap(), 1025)));
        let v6 = |s: &str| s.parse::<Ipv6Addr>().unwrap().octets();
        let mut inner6 = conn_bytes(
            10,
            &v6("2001:db8::2"),
            &v6("2001:db8::1"),
            &v6("2001:db8::3"),
        );
        inner6.extend(attr(14, &65535u16.to_be_bytes()));
        inner6.extend(attr(13, &v6("fd00:2::1")));
        assert_eq!(
            parse_conn(&inner6).unwrap().local,
            Some(("fd00:2::1".parse().unwrap(), 65535))
        );
        // A short address, a port that is not a u16: errors.
        let mut bad = inner6.clone();
        bad.extend(attr(13, &[1, 2, 3, 4]));
        let e = parse_conn(&bad).unwrap_err();
        assert!(e.to_string().contains("conn LADDR"), "{e}");
        let mut bad = inner.clone();
        bad.extend(attr(14, &ne32(1)));
        assert!(parse_conn(&bad)
            .unwrap_err()
            .to_string()
            .contains("conn LPORT"));
    }

    /// An ENAT connection: method 6, and its local end (the VIP and the
    /// local port) in the same LADDR/LPORT attributes as FullNAT's.
    #[test]
    fn parse_enat_conn_local_end() {
        let a16 = |a: [u8; 4]| {
            let mut b = [0u8; 16];
            b[..4].copy_from_slice(&a);
            b
        };
        let mut inner = conn_bytes(
            2,
            &a16([10, 0, 0, 2]),
            &a16([10, 0, 100, 1]),
            &a16([10, 0, 1, 1]),
        );
        inner.extend(attr(11, &ne32(uapi::RVS_CONN_F_ENAT)));
        inner.extend(attr(13, &a16([10, 0, 100, 1])));
        inner.extend(attr(14, &1030u16.to_be_bytes()));
        let c = parse_conn(&inner).unwrap();
        assert_eq!(c.forward, Forward::Enat);
        assert_eq!(c.local, Some(("10.0.100.1".parse().unwrap(), 1030)));
        let v6 = |s: &str| s.parse::<Ipv6Addr>().unwrap().octets();
        let mut inner6 = conn_bytes(
            10,
            &v6("2001:db8::2"),
            &v6("2001:db8::1"),
            &v6("2001:db8::3"),
        );
        inner6.extend(attr(11, &ne32(uapi::RVS_CONN_F_ENAT)));
        inner6.extend(attr(13, &v6("2001:db8::1")));
        inner6.extend(attr(14, &1024u16.to_be_bytes()));
        let c = parse_conn(&inner6).unwrap();
        assert_eq!(
            (c.forward, c.local),
            (Forward::Enat, Some(("2001:db8::1".parse().unwrap(), 1024)))
        );
    }

    fn daemon_spec(state: DaemonState) -> DaemonSpec {
        DaemonSpec {
            state,
            mcast_ifn: crate::types::IfName::new("eth0").unwrap(),
            syncid: 0,
            sync_maxlen: None,
            mcast_group: None,
            mcast_port: None,
            mcast_ttl: None,
        }
    }

    #[test]
    fn new_daemon_exact_bytes() {
        // Nothing but the state given: ipvsadm's eth0 and syncid 0.
        let got = new_daemon_attrs(&daemon_spec(DaemonState::Master));
        let want = attr(
            3 | NLA_F_NESTED,
            &[attr(1, &ne32(1)), attr(2, b"eth0\0"), attr(3, &ne32(0))].concat(),
        );
        assert_eq!(got, want);
        // By hand: nest of 4 + 8 + 12 + 8 bytes; "eth0\0" padded to 8.
        assert_eq!(got.len(), 32);
        assert_eq!(&got[..4], &[ne16(32), ne16(0x8003)].concat()[..]);
        assert_eq!(
            &got[12..24],
            &[&ne16(9)[..], &ne16(2), b"eth0", &[0, 0, 0, 0]].concat()[..]
        );
        // Everything, IPv4 group: libipvs's order, the port in host order,
        // the TTL one byte, the group its 4 bytes in network order.
        let full = DaemonSpec {
            mcast_ifn: crate::types::IfName::new("bond0.12").unwrap(),
            syncid: 7,
            sync_maxlen: Some(1400),
            mcast_group: Some("239.1.2.3".parse().unwrap()),
            mcast_port: Some(8849),
            mcast_ttl: Some(3),
            ..daemon_spec(DaemonState::Backup)
        };
        let want = attr(
            3 | NLA_F_NESTED,
            &[
                attr(1, &ne32(2)),
                attr(2, b"bond0.12\0"),
                attr(3, &ne32(7)),
                attr(4, &ne16(1400)),
                attr(7, &ne16(8849)),
                attr(8, &[3]),
                attr(5, &[239, 1, 2, 3]),
            ]
            .concat(),
        );
        assert_eq!(new_daemon_attrs(&full), want);
        // TTL after STATE (8), "bond0.12\0" (16), SYNC_ID, SYNC_MAXLEN and
        // MCAST_PORT (8 each): length 5, then three bytes of padding.
        let inner = find_attr(&want, uapi::RVS_CMD_ATTR_DAEMON)
            .unwrap()
            .unwrap();
        assert_eq!(
            &inner[48..56],
            &[&ne16(5)[..], &ne16(8), &[3, 0, 0, 0]].concat()[..]
        );
        // An IPv6 group: MCAST_GROUP6, 16 bytes, and no MCAST_GROUP.
        let v6: Ipv6Addr = "ff02::1:81".parse().unwrap();
        let six = DaemonSpec {
            mcast_group: Some(IpAddr::V6(v6)),
            ..daemon_spec(DaemonState::Master)
        };
        let want = attr(
            3 | NLA_F_NESTED,
            &[
                attr(1, &ne32(1)),
                attr(2, b"eth0\0"),
                attr(3, &ne32(0)),
                attr(6, &v6.octets()),
            ]
            .concat(),
        );
        assert_eq!(new_daemon_attrs(&six), want);
    }

    #[test]
    fn del_daemon_exact_bytes() {
        // By hand: the nest (12 bytes, type 3 nested), STATE (8 bytes,
        // type 1), master = 1.
        let want: Vec<u8> = [&ne16(12)[..], &ne16(0x8003), &ne16(8), &ne16(1), &ne32(1)].concat();
        assert_eq!(del_daemon_attrs(DaemonState::Master), want);
        assert_eq!(
            del_daemon_attrs(DaemonState::Backup),
            attr(3 | NLA_F_NESTED, &attr(1, &ne32(2)))
        );
    }

    #[test]
    fn parse_daemon_replies() {
        // As IPVS's ip_vs_genl_fill_daemon lays one out, with rvs's
        // counters after a PAD.
        let u64a = |ty: u16, v: u64| attr(ty, &v.to_ne_bytes());
        let master = [
            attr(1, &ne32(1)),
            attr(2, b"eth1\0"),
            attr(3, &ne32(9)),
            attr(4, &ne16(1472)),
            attr(7, &ne16(8848)),
            attr(8, &[1]),
            attr(5, &[224, 0, 0, 81]),
            attr(9, &[]),
            u64a(10, 12),
            u64a(11, 340),
            u64a(12, 0),
            u64a(13, 5),
            attr(99, b"future"),
        ]
        .concat();
        let d = parse_daemon_reply(&attr(3 | NLA_F_NESTED, &master)).unwrap();
        assert_eq!(
            d,
            Daemon {
                state: DaemonState::Master,
                mcast_ifn: "eth1".into(),
                syncid: 9,
                sync_maxlen: Some(1472),
                mcast_group: Some("224.0.0.81".parse().unwrap()),
                mcast_port: Some(8848),
                mcast_ttl: Some(1),
                msgs: Some(12),
                conns: Some(340),
                refused: Some(0),
                lost: Some(5),
                resyncs: None,
            }
        );
        // The least a reply may hold (an IPVS of before 4.4): state,
        // interface, syncid; an IPv6 group.
        let least = [attr(1, &ne32(2)), attr(2, b"eth0\0"), attr(3, &ne32(0))].concat();
        let d = parse_daemon(&least).unwrap();
        assert_eq!(
            (
                d.state,
                d.mcast_ifn.as_str(),
                d.syncid,
                d.sync_maxlen,
                d.mcast_group,
                d.msgs
            ),
            (DaemonState::Backup, "eth0", 0, None, None, None)
        );
        let v6: Ipv6Addr = "ff02::1:81".parse().unwrap();
        let six = [least.clone(), attr(6, &v6.octets())].concat();
        assert_eq!(
            parse_daemon(&six).unwrap().mcast_group,
            Some(IpAddr::V6(v6))
        );
        // Both groups: the IPv4 one, as libipvs reads it first.
        let both = [six, attr(5, &[239, 0, 0, 1])].concat();
        assert_eq!(
            parse_daemon(&both).unwrap().mcast_group,
            Some("239.0.0.1".parse().unwrap())
        );
        // What libipvs refuses, and sizes that are wrong.
        let err = |buf: &[u8]| parse_daemon(buf).unwrap_err().0;
        assert_eq!(err(&least[8..]), "daemon without STATE");
        assert_eq!(
            err(&[&least[..8], &least[20..]].concat()),
            "daemon without MCAST_IFN"
        );
        assert_eq!(err(&least[..20]), "daemon without SYNC_ID");
        assert_eq!(
            err(&[attr(1, &ne32(3)), least[8..].to_vec()].concat()),
            "daemon STATE 3 is neither master (1) nor backup (2)"
        );
        assert_eq!(
            err(&[least.clone(), attr(5, &[224, 0, 0])].concat()),
            "daemon MCAST_GROUP: expected 4 bytes, got 3"
        );
        assert_eq!(
            err(&[least.clone(), attr(6, &[0xff; 4])].concat()),
            "daemon MCAST_GROUP6: 4 bytes for address family 10"
        );
        assert_eq!(
            err(&[least.clone(), attr(8, &ne16(1))].concat()),
            "daemon MCAST_TTL: expected 1 byte, got 2"
        );
        assert_eq!(
            err(&[least.clone(), attr(7, &ne32(8848))].concat()),
            "daemon MCAST_PORT: expected 2 bytes, got 4"
        );
        assert_eq!(
            parse_daemon_reply(&attr(1 | NLA_F_NESTED, &least))
                .unwrap_err()
                .0,
            "daemon reply without RVS_CMD_ATTR_DAEMON"
        );
    }
}
