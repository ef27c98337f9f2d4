//! `--monitor`: the module's configuration events, decoded and printed.
//!
//! After every configuration command that succeeds, from any client
//! (rvsadm, or ipvsadm, keepalived and other IPVS clients through
//! `ipvs_compat=1`), the module sends the RVS family's "events" group a
//! message with the request's command and an exact copy of its
//! attributes. An event therefore holds what the client sent: a delete
//! names only its service or real server, a SET_CONFIG only the settings
//! given. The attribute layouts are those of the requests, which are
//! those of the GET replies, so the reply parsers of `msg` read them; as
//! IPVS clients send nests without `NLA_F_NESTED` and attributes rvsadm
//! does not know, the decoding takes both (`msg::Attrs` ignores the flag,
//! the parsers skip unknown types).
//!
//! Each event is printed as the rvsadm command that makes the same change
//! (`-S`'s form where there is one: [`event_lines`]), or as one JSON
//! object ([`event_json`]). What cannot be decoded is printed as a line
//! saying so, never fatal.

use std::net::IpAddr;

use serde::Serialize;

use rvs_core::settings;

use crate::msg::{self, Attrs, ParseError};
use crate::output::{self, JsonTunnel};
use crate::types::{fmt_addr_port, Daemon, DaemonState, Dest, DestKey, Service, ServiceKey};
use crate::uapi::{self, linux};

/// A configuration change the module announced.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    /// NEW_SERVICE (`-A`): the service as the module takes it (what the
    /// request left out at its default), and whether it sent local
    /// addresses (`RVS_SVC_ATTR_LADDRS`, perhaps empty: `--laddr none`).
    AddService { service: Service, laddrs_sent: bool },
    /// SET_SERVICE (`-E`), as NEW_SERVICE.
    EditService { service: Service, laddrs_sent: bool },
    /// DEL_SERVICE (`-D`).
    DeleteService(ServiceKey),
    /// NEW_DEST (`-a`): the service, and the real server as the module
    /// takes it.
    AddServer(ServiceKey, Dest),
    /// SET_DEST (`-e`), as NEW_DEST.
    EditServer(ServiceKey, Dest),
    /// DEL_DEST (`-d`), with its drain in seconds (`--drain`) if any.
    DeleteServer(ServiceKey, DestKey, Option<u32>),
    /// NEW_DAEMON (`--start-daemon`).
    StartDaemon(Daemon),
    /// DEL_DAEMON (`--stop-daemon`).
    StopDaemon(DaemonState),
    /// SET_CONFIG (`--set`, `--set-option`): the timeouts sent (tcp,
    /// tcpfin, udp; `None`: not sent), and the settings sent (name,
    /// value), in the request's order.
    SetConfig {
        timeouts: [Option<u32>; 3],
        settings: Vec<(&'static str, u32)>,
    },
    /// ZERO (`-Z`): of one service, or of all.
    Zero(Option<ServiceKey>),
    /// FLUSH (`-C`).
    Clear,
    /// FLUSH_CONNS (`--flush-conns`): of a service, or of one of its real
    /// servers.
    FlushConns(ServiceKey, Option<DestKey>),
    /// APPLY (`-R --atomic`): its changes, in order, which took effect
    /// together.
    Apply(Vec<Event>),
}

/// An event rvsadm could not make sense of: its command and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Undecoded {
    pub cmd: u8,
    pub why: String,
}

/// The name of a configuration command, as the header names it without
/// its `RVS_CMD_` prefix (the `event` of the JSON form).
pub fn command_name(cmd: u8) -> Option<&'static str> {
    Some(match cmd {
        uapi::RVS_CMD_NEW_SERVICE => "NEW_SERVICE",
        uapi::RVS_CMD_SET_SERVICE => "SET_SERVICE",
        uapi::RVS_CMD_DEL_SERVICE => "DEL_SERVICE",
        uapi::RVS_CMD_NEW_DEST => "NEW_DEST",
        uapi::RVS_CMD_SET_DEST => "SET_DEST",
        uapi::RVS_CMD_DEL_DEST => "DEL_DEST",
        uapi::RVS_CMD_NEW_DAEMON => "NEW_DAEMON",
        uapi::RVS_CMD_DEL_DAEMON => "DEL_DAEMON",
        uapi::RVS_CMD_SET_CONFIG => "SET_CONFIG",
        uapi::RVS_CMD_ZERO => "ZERO",
        uapi::RVS_CMD_FLUSH => "FLUSH",
        uapi::RVS_CMD_FLUSH_CONNS => "FLUSH_CONNS",
        uapi::RVS_CMD_APPLY => "APPLY",
        _ => return None,
    })
}

/// Decodes the event of command `cmd` with attributes `attrs`.
pub fn decode(cmd: u8, attrs: &[u8]) -> Result<Event, Undecoded> {
    let undecoded = |why: String| Undecoded { cmd, why };
    if command_name(cmd).is_none() {
        return Err(undecoded("not a configuration command".into()));
    }
    decode_known(cmd, attrs).map_err(|e| undecoded(e.0))
}

fn decode_known(cmd: u8, attrs: &[u8]) -> Result<Event, ParseError> {
    Ok(match cmd {
        uapi::RVS_CMD_NEW_SERVICE | uapi::RVS_CMD_SET_SERVICE => {
            let (service, laddrs_sent) = service_params(need_service(attrs)?)?;
            if cmd == uapi::RVS_CMD_NEW_SERVICE {
                Event::AddService {
                    service,
                    laddrs_sent,
                }
            } else {
                Event::EditService {
                    service,
                    laddrs_sent,
                }
            }
        }
        uapi::RVS_CMD_DEL_SERVICE => Event::DeleteService(service_key(attrs)?),
        uapi::RVS_CMD_NEW_DEST | uapi::RVS_CMD_SET_DEST => {
            let svc = msg::parse_service(need_service(attrs)?)?;
            let dest = msg::parse_dest(need_dest(attrs)?, svc.af)?;
            if cmd == uapi::RVS_CMD_NEW_DEST {
                Event::AddServer(svc.key(), dest)
            } else {
                Event::EditServer(svc.key(), dest)
            }
        }
        uapi::RVS_CMD_DEL_DEST => {
            let svc = msg::parse_service(need_service(attrs)?)?;
            let dest = msg::parse_dest(need_dest(attrs)?, svc.af)?;
            let key = DestKey {
                addr: dest.addr,
                port: dest.port,
            };
            Event::DeleteServer(svc.key(), key, dest.drain_secs_left)
        }
        uapi::RVS_CMD_NEW_DAEMON => Event::StartDaemon(msg::parse_daemon(need_daemon(attrs)?)?),
        uapi::RVS_CMD_DEL_DAEMON => Event::StopDaemon(daemon_state(need_daemon(attrs)?)?),
        uapi::RVS_CMD_SET_CONFIG => set_config(attrs)?,
        uapi::RVS_CMD_ZERO => {
            Event::Zero(match msg::find_attr(attrs, uapi::RVS_CMD_ATTR_SERVICE)? {
                Some(nest) => Some(msg::parse_service(nest)?.key()),
                None => None,
            })
        }
        uapi::RVS_CMD_FLUSH => Event::Clear,
        uapi::RVS_CMD_APPLY => {
            // Each change is the command's own attributes (the numbers of
            // RVS_OP_ATTR_SERVICE and _DEST are those of the top level)
            // beside RVS_OP_ATTR_CMD.
            let mut changes = Vec::new();
            for a in Attrs::new(attrs) {
                let (kind, op) = a?;
                if kind != uapi::RVS_CMD_ATTR_OP {
                    continue;
                }
                let cmd = match msg::find_attr(op, uapi::RVS_OP_ATTR_CMD)? {
                    Some(&[a, b, c, d]) => u32::from_ne_bytes([a, b, c, d]),
                    _ => return Err(ParseError("a change without its command".into())),
                };
                let cmd = u8::try_from(cmd)
                    .ok()
                    .filter(|c| msg::is_atomic_change(*c))
                    .ok_or_else(|| ParseError(format!("unknown command {cmd} in a change")))?;
                changes.push(decode_known(cmd, op)?);
            }
            Event::Apply(changes)
        }
        uapi::RVS_CMD_FLUSH_CONNS => {
            let svc = msg::parse_service(need_service(attrs)?)?;
            let dest = match msg::find_attr(attrs, uapi::RVS_CMD_ATTR_DEST)? {
                Some(nest) => {
                    let d = msg::parse_dest(nest, svc.af)?;
                    Some(DestKey {
                        addr: d.addr,
                        port: d.port,
                    })
                }
                None => None,
            };
            Event::FlushConns(svc.key(), dest)
        }
        _ => return Err(ParseError("not a configuration command".into())),
    })
}

fn need_service(attrs: &[u8]) -> Result<&[u8], ParseError> {
    msg::find_attr(attrs, uapi::RVS_CMD_ATTR_SERVICE)?
        .ok_or_else(|| ParseError("no service (RVS_CMD_ATTR_SERVICE)".into()))
}

fn need_dest(attrs: &[u8]) -> Result<&[u8], ParseError> {
    msg::find_attr(attrs, uapi::RVS_CMD_ATTR_DEST)?
        .ok_or_else(|| ParseError("no real server (RVS_CMD_ATTR_DEST)".into()))
}

fn need_daemon(attrs: &[u8]) -> Result<&[u8], ParseError> {
    msg::find_attr(attrs, uapi::RVS_CMD_ATTR_DAEMON)?
        .ok_or_else(|| ParseError("no daemon (RVS_CMD_ATTR_DAEMON)".into()))
}

fn service_key(attrs: &[u8]) -> Result<ServiceKey, ParseError> {
    Ok(msg::parse_service(need_service(attrs)?)?.key())
}

/// A NEW/SET_SERVICE nest: the service with the module's defaults for
/// what was not sent, and whether LADDRS was sent. FLAGS is taken with
/// its mask applied, as the module applies it.
fn service_params(nest: &[u8]) -> Result<(Service, bool), ParseError> {
    let mut service = msg::parse_service(nest)?;
    let mut laddrs_sent = false;
    for a in Attrs::new(nest) {
        let (ty, p) = a?;
        match (ty, p) {
            (uapi::RVS_SVC_ATTR_LADDRS, _) => laddrs_sent = true,
            (uapi::RVS_SVC_ATTR_FLAGS, [f0, f1, f2, f3, m0, m1, m2, m3, ..]) => {
                let f = u32::from_ne_bytes([*f0, *f1, *f2, *f3]);
                let m = u32::from_ne_bytes([*m0, *m1, *m2, *m3]);
                service.flags = f & m;
            }
            _ => {}
        }
    }
    Ok((service, laddrs_sent))
}

/// The STATE of a DAEMON nest, all that names a daemon to stop.
fn daemon_state(nest: &[u8]) -> Result<DaemonState, ParseError> {
    let state = msg::find_attr(nest, uapi::RVS_DAEMON_ATTR_STATE)?
        .ok_or_else(|| ParseError("daemon without STATE".into()))?;
    let code = match state {
        [a, b, c, d] => u32::from_ne_bytes([*a, *b, *c, *d]),
        _ => {
            return Err(ParseError(format!(
                "daemon STATE: expected 4 bytes, got {}",
                state.len()
            )))
        }
    };
    DaemonState::from_code(code).ok_or_else(|| {
        ParseError(format!(
            "daemon STATE {code} is neither master (1) nor backup (2)"
        ))
    })
}

/// SET_CONFIG: the timeouts and the settings it carries, the settings
/// in the request's order; one that carries neither (only attributes
/// rvsadm does not know) is not decoded.
fn set_config(attrs: &[u8]) -> Result<Event, ParseError> {
    let mut timeouts = [None; 3];
    let mut settings = Vec::new();
    for a in Attrs::new(attrs) {
        let (ty, p) = a?;
        let slot = match ty {
            uapi::RVS_CMD_ATTR_TIMEOUT_TCP => Some(0),
            uapi::RVS_CMD_ATTR_TIMEOUT_TCP_FIN => Some(1),
            uapi::RVS_CMD_ATTR_TIMEOUT_UDP => Some(2),
            _ => None,
        };
        let spec = settings::by_attr(ty);
        let name = match (slot, spec) {
            (None, None) => continue,
            (_, Some(spec)) => spec.name.to_string(),
            (Some(_), None) => format!("timeout {ty}"),
        };
        let v = match p {
            [a, b, c, d] => u32::from_ne_bytes([*a, *b, *c, *d]),
            _ => {
                return Err(ParseError(format!(
                    "{name}: expected 4 bytes, got {}",
                    p.len()
                )))
            }
        };
        match (slot, spec) {
            (Some(i), _) => timeouts[i] = Some(v),
            (None, Some(spec)) => settings.push((spec.name, v)),
            (None, None) => {}
        }
    }
    if timeouts.iter().all(Option::is_none) && settings.is_empty() {
        return Err(ParseError("no timeout or setting rvsadm knows".to_string()));
    }
    Ok(Event::SetConfig { timeouts, settings })
}

/// The command that makes the same change, in `-S`'s form where it has
/// one, e.g. `-a -t 10.0.0.1:80 -r 10.0.1.1:80 -m -w 1`. One line, but
/// two for a SET_CONFIG carrying both timeouts and settings (`--set`,
/// then `--set-option`), which rvsadm sends apart.
pub fn event_lines(ev: &Event) -> Vec<String> {
    let dest_name = |d: &DestKey| fmt_addr_port(&d.addr, d.port);
    vec![match ev {
        Event::AddService {
            service,
            laddrs_sent,
        } => format!("-A {}", service_args(service, *laddrs_sent)),
        Event::EditService {
            service,
            laddrs_sent,
        } => format!("-E {}", service_args(service, *laddrs_sent)),
        Event::DeleteService(k) => format!("-D {}", output::rule_key(k)),
        Event::AddServer(k, d) => {
            format!("-a {} {}", output::rule_key(k), output::rule_dest_args(d))
        }
        Event::EditServer(k, d) => {
            format!("-e {} {}", output::rule_key(k), output::rule_dest_args(d))
        }
        Event::DeleteServer(k, d, drain) => {
            let mut line = format!("-d {} -r {}", output::rule_key(k), dest_name(d));
            if let Some(secs) = drain {
                line.push_str(&format!(" --drain {secs}"));
            }
            line
        }
        Event::StartDaemon(d) => start_daemon_line(d),
        Event::StopDaemon(state) => format!("--stop-daemon {}", state.name()),
        Event::SetConfig { timeouts, settings } => {
            let mut lines = Vec::new();
            if timeouts.iter().any(Option::is_some) {
                let [tcp, fin, udp] = timeouts.map(|t| t.unwrap_or(0));
                lines.push(format!("--set {tcp} {fin} {udp}"));
            }
            if !settings.is_empty() {
                let opts: Vec<String> = settings
                    .iter()
                    .map(|(name, v)| format!("--set-option {name}={v}"))
                    .collect();
                lines.push(opts.join(" "));
            }
            return lines;
        }
        Event::Zero(None) => "-Z".to_string(),
        Event::Zero(Some(k)) => format!("-Z {}", output::rule_key(k)),
        Event::Clear => "-C".to_string(),
        Event::FlushConns(k, d) => {
            let mut line = format!("--flush-conns {}", output::rule_key(k));
            if let Some(d) = d {
                line.push_str(&format!(" -r {}", dest_name(d)));
            }
            line
        }
        Event::Apply(changes) => {
            let mut lines = vec![format!("# -R --atomic: {} changes at once", changes.len())];
            lines.extend(changes.iter().flat_map(event_lines));
            return lines;
        }
    }]
}

/// `-S`'s service arguments, with `--laddr none` when the request sent
/// an empty LADDRS (it cleared the local addresses).
fn service_args(s: &Service, laddrs_sent: bool) -> String {
    let mut args = output::rule_service_args(s);
    if laddrs_sent && s.laddrs.is_empty() {
        args.push_str(" --laddr none");
    }
    args
}

/// `--start-daemon` with the options the request carried (interface and
/// syncid always: the module needs them).
fn start_daemon_line(d: &Daemon) -> String {
    let mut line = format!(
        "--start-daemon {} --mcast-interface {} --syncid {}",
        d.state.name(),
        d.mcast_ifn,
        d.syncid
    );
    if let Some(n) = d.sync_maxlen {
        line.push_str(&format!(" --sync-maxlen {n}"));
    }
    if let Some(g) = d.mcast_group {
        line.push_str(&format!(" --mcast-group {g}"));
    }
    if let Some(p) = d.mcast_port {
        line.push_str(&format!(" --mcast-port {p}"));
    }
    if let Some(t) = d.mcast_ttl {
        line.push_str(&format!(" --mcast-ttl {t}"));
    }
    line
}

/// The line printed for an event that could not be decoded (a `#`
/// comment, which `-R` skips), e.g. `# could not decode event 6
/// (SET_DEST): no real server (RVS_CMD_ATTR_DEST)`.
pub fn undecoded_line(u: &Undecoded) -> String {
    match command_name(u.cmd) {
        Some(name) => format!("# could not decode event {} ({name}): {}", u.cmd, u.why),
        None => format!("# could not decode event {}: {}", u.cmd, u.why),
    }
}

/// The line printed when events were lost.
pub const LOST_LINE: &str =
    "# events lost: the receive buffer overflowed; read the table again (-S) to resynchronise";

/// The line printed for a datagram that could not be decoded.
pub fn malformed_line(why: &str) -> String {
    format!("# could not decode a netlink message: {why}")
}

/// A service's name in the JSON form: its family, then its protocol,
/// address and port, or its firewall mark.
#[derive(Serialize)]
struct JsonKey {
    family: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    protocol: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    address: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    port: Option<u16>,
    #[serde(skip_serializing_if = "Option::is_none")]
    fwmark: Option<u32>,
}

impl JsonKey {
    fn of(k: &ServiceKey) -> JsonKey {
        let fwmark = k.fwmark != 0;
        JsonKey {
            family: family_name(k.af()),
            protocol: (!fwmark).then(|| k.protocol.json_name()),
            address: (!fwmark).then(|| k.addr.to_string()),
            port: (!fwmark).then_some(k.port),
            fwmark: fwmark.then_some(k.fwmark),
        }
    }
}

fn family_name(af: u16) -> &'static str {
    if af == linux::AF_INET6 {
        "ipv6"
    } else {
        "ipv4"
    }
}

/// A NEW/SET_SERVICE's service: the listing's fields, without counters
/// and real servers; `netmask` as `-M` takes it; `laddrs` only when sent.
#[derive(Serialize)]
struct JsonService {
    #[serde(flatten)]
    key: JsonKey,
    scheduler: String,
    flags: Vec<String>,
    persistent_timeout: Option<u32>,
    netmask: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    laddrs: Option<Vec<String>>,
}

/// A NEW/SET_DEST's real server: the listing's fields without counters.
#[derive(Serialize)]
struct JsonDest {
    address: String,
    port: u16,
    forward: String,
    weight: u32,
    upper_threshold: u32,
    lower_threshold: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    tunnel: Option<JsonTunnel>,
}

/// A real server as a delete or a flush names it.
#[derive(Serialize)]
struct JsonDestKey {
    address: String,
    port: u16,
    #[serde(skip_serializing_if = "Option::is_none")]
    drain_secs: Option<u32>,
}

/// A daemon: `-L --daemon --json`'s fields, those the request carried.
#[derive(Serialize)]
struct JsonDaemon {
    state: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    mcast_interface: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    syncid: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    sync_maxlen: Option<u16>,
    #[serde(skip_serializing_if = "Option::is_none")]
    mcast_group: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    mcast_port: Option<u16>,
    #[serde(skip_serializing_if = "Option::is_none")]
    mcast_ttl: Option<u8>,
}

fn json<T: Serialize>(v: &T) -> String {
    serde_json::to_string(v).expect("serialising plain data cannot fail")
}

/// Builds one JSON object from its members, in order: `"time"` when
/// given, `"event"`, then `members` (name, JSON value).
fn object(time: Option<&str>, event: Option<&str>, members: &[(&str, String)]) -> String {
    let mut parts = Vec::new();
    if let Some(t) = time {
        parts.push(format!("\"time\":{}", json(&t)));
    }
    parts.push(format!("\"event\":{}", json(&event)));
    for (name, value) in members {
        parts.push(format!("{}:{value}", json(name)));
    }
    format!("{{{}}}", parts.join(","))
}

/// The event as one JSON object, e.g. `{"event":"DEL_DEST","service":
/// {...},"dest":{"address":"10.0.1.1","port":80}}`: `event` is the
/// command's name, then what the request carried, as `service`, `dest`,
/// `daemon`, `timeout` (the timeouts sent) and `options` (the settings
/// sent). `time` first when given.
pub fn event_json(ev: &Event, time: Option<&str>) -> String {
    let key = |k: &ServiceKey| json(&JsonKey::of(k));
    let dest_key = |d: &DestKey, drain: Option<u32>| {
        json(&JsonDestKey {
            address: d.addr.to_string(),
            port: d.port,
            drain_secs: drain,
        })
    };
    let (name, members): (&str, Vec<(&str, String)>) = match ev {
        Event::AddService {
            service,
            laddrs_sent,
        } => (
            "NEW_SERVICE",
            vec![("service", service_json(service, *laddrs_sent))],
        ),
        Event::EditService {
            service,
            laddrs_sent,
        } => (
            "SET_SERVICE",
            vec![("service", service_json(service, *laddrs_sent))],
        ),
        Event::DeleteService(k) => ("DEL_SERVICE", vec![("service", key(k))]),
        Event::AddServer(k, d) => (
            "NEW_DEST",
            vec![("service", key(k)), ("dest", dest_json(d))],
        ),
        Event::EditServer(k, d) => (
            "SET_DEST",
            vec![("service", key(k)), ("dest", dest_json(d))],
        ),
        Event::DeleteServer(k, d, drain) => (
            "DEL_DEST",
            vec![("service", key(k)), ("dest", dest_key(d, *drain))],
        ),
        Event::StartDaemon(d) => ("NEW_DAEMON", vec![("daemon", daemon_json(d))]),
        Event::StopDaemon(state) => (
            "DEL_DAEMON",
            vec![(
                "daemon",
                json(&JsonDaemon {
                    state: state.name(),
                    mcast_interface: None,
                    syncid: None,
                    sync_maxlen: None,
                    mcast_group: None,
                    mcast_port: None,
                    mcast_ttl: None,
                }),
            )],
        ),
        Event::SetConfig { timeouts, settings } => {
            let mut members = Vec::new();
            let sent: Vec<String> = ["tcp", "tcpfin", "udp"]
                .iter()
                .zip(timeouts)
                .filter_map(|(n, t)| t.map(|t| format!("{}:{t}", json(n))))
                .collect();
            if !sent.is_empty() {
                members.push(("timeout", format!("{{{}}}", sent.join(","))));
            }
            if !settings.is_empty() {
                // In the request's order.
                let items: Vec<String> = settings
                    .iter()
                    .map(|(name, v)| format!("{}:{v}", json(name)))
                    .collect();
                members.push(("options", format!("{{{}}}", items.join(","))));
            }
            ("SET_CONFIG", members)
        }
        Event::Zero(k) => ("ZERO", k.iter().map(|k| ("service", key(k))).collect()),
        Event::Clear => ("FLUSH", Vec::new()),
        Event::FlushConns(k, d) => {
            let mut members = vec![("service", key(k))];
            if let Some(d) = d {
                members.push(("dest", dest_key(d, None)));
            }
            ("FLUSH_CONNS", members)
        }
        Event::Apply(changes) => {
            let items: Vec<String> = changes.iter().map(|c| event_json(c, None)).collect();
            ("APPLY", vec![("changes", format!("[{}]", items.join(",")))])
        }
    };
    object(time, Some(name), &members)
}

fn service_json(s: &Service, laddrs_sent: bool) -> String {
    json(&JsonService {
        key: JsonKey::of(&s.key()),
        scheduler: s.scheduler.clone(),
        flags: output::flag_names(&s.scheduler, s.flags),
        persistent_timeout: s.is_persistent().then_some(s.timeout),
        netmask: s.netmask.display(s.af),
        laddrs: laddrs_sent.then(|| s.laddrs.iter().map(IpAddr::to_string).collect()),
    })
}

fn dest_json(d: &Dest) -> String {
    json(&JsonDest {
        address: d.addr.to_string(),
        port: d.port,
        forward: d.forward.label().to_ascii_lowercase(),
        weight: d.weight,
        upper_threshold: d.upper_threshold,
        lower_threshold: d.lower_threshold,
        tunnel: JsonTunnel::of(d),
    })
}

fn daemon_json(d: &Daemon) -> String {
    json(&JsonDaemon {
        state: d.state.name(),
        mcast_interface: Some(d.mcast_ifn.clone()),
        syncid: Some(d.syncid),
        sync_maxlen: d.sync_maxlen,
        mcast_group: d.mcast_group.map(|g| g.to_string()),
        mcast_port: d.mcast_port,
        mcast_ttl: d.mcast_ttl,
    })
}

/// An undecodable event as JSON: `{"event":"SET_DEST","cmd":6,"error":
/// "..."}` (`"event":null` for a command rvsadm does not know).
pub fn undecoded_json(u: &Undecoded, time: Option<&str>) -> String {
    object(
        time,
        command_name(u.cmd),
        &[("cmd", u.cmd.to_string()), ("error", json(&u.why))],
    )
}

/// Lost events as JSON: `{"event":"LOST"}`.
pub fn lost_json(time: Option<&str>) -> String {
    object(time, Some("LOST"), &[])
}

/// An undecodable datagram as JSON: `{"event":null,"error":"..."}`.
pub fn malformed_json(why: &str, time: Option<&str>) -> String {
    object(time, None, &[("error", json(&why))])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::msg::{AttrWriter, NLA_F_NESTED};

    /// An attribute by hand: length, type, payload, padding.
    fn attr(ty: u16, payload: &[u8]) -> Vec<u8> {
        let mut w = AttrWriter::new();
        w.put(ty, payload);
        w.finish()
    }

    fn ne16(v: u16) -> [u8; 2] {
        v.to_ne_bytes()
    }
    fn ne32(v: u32) -> [u8; 4] {
        v.to_ne_bytes()
    }

    /// A service nest as libipvs (ipvsadm, keepalived) and moby/ipvs send
    /// it: no NLA_F_NESTED, and here a 4-byte IPv4 address (moby's) and an
    /// attribute rvsadm does not know.
    fn ipvs_service(extra: &[Vec<u8>]) -> Vec<u8> {
        let mut inner = [
            attr(1, &ne16(2)),
            attr(2, &ne16(6)),
            attr(3, &[10, 0, 0, 1]),
            attr(4, &80u16.to_be_bytes()),
            attr(99, b"newer"),
        ]
        .concat();
        inner.extend(extra.concat());
        attr(uapi::RVS_CMD_ATTR_SERVICE, &inner)
    }

    fn ipvs_dest(extra: &[Vec<u8>]) -> Vec<u8> {
        let mut inner = [
            attr(1, &[10, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]),
            attr(2, &8080u16.to_be_bytes()),
            attr(99, &[1, 2, 3]),
        ]
        .concat();
        inner.extend(extra.concat());
        attr(uapi::RVS_CMD_ATTR_DEST, &inner)
    }

    /// The one line an event prints.
    fn line(cmd: u8, attrs: &[u8]) -> String {
        match decode(cmd, attrs) {
            Ok(ev) => {
                let lines = event_lines(&ev);
                assert_eq!(lines.len(), 1, "{lines:?}");
                lines[0].clone()
            }
            Err(u) => undecoded_line(&u),
        }
    }

    fn json_of(cmd: u8, attrs: &[u8]) -> String {
        match decode(cmd, attrs) {
            Ok(ev) => event_json(&ev, None),
            Err(u) => undecoded_json(&u, None),
        }
    }

    #[test]
    fn an_atomic_change_prints_its_changes_in_order() {
        let del = [ipvs_service(&[]), ipvs_dest(&[])].concat();
        let mut apply = msg::apply_op(uapi::RVS_CMD_FLUSH, &[]);
        apply.extend(msg::apply_op(uapi::RVS_CMD_DEL_DEST, &del));
        let ev = decode(uapi::RVS_CMD_APPLY, &apply).unwrap();
        assert_eq!(
            event_lines(&ev),
            vec![
                "# -R --atomic: 2 changes at once".to_string(),
                "-C".to_string(),
                "-d -t 10.0.0.1:80 -r 10.0.1.1:8080".to_string(),
            ]
        );
        assert_eq!(
            event_json(&ev, None),
            concat!(
                r#"{"event":"APPLY","changes":[{"event":"FLUSH"},{"event":"DEL_DEST","#,
                r#""service":{"family":"ipv4","protocol":"tcp","address":"10.0.0.1","port":80},"#,
                r#""dest":{"address":"10.0.1.1","port":8080}}]}"#
            )
        );
        // A change the module would not apply atomically.
        let bad = msg::apply_op(uapi::RVS_CMD_ZERO, &[]);
        assert_eq!(
            line(uapi::RVS_CMD_APPLY, &bad),
            "# could not decode event 20 (APPLY): unknown command 16 in a change"
        );
    }

    #[test]
    fn ipvs_clients_services_unflagged_nests_unknown_attributes() {
        // ipvsadm -A -t 10.0.0.1:80 -s wrr -p 60, and an unknown
        // attribute at the top level too.
        let params = [
            attr(6, b"wrr\0"),
            attr(7, &[ne32(1), ne32(u32::MAX)].concat()),
            attr(8, &ne32(60)),
            attr(9, &[255, 255, 255, 255]),
        ];
        let mut add = ipvs_service(&params);
        add.extend(attr(42, &ne32(7)));
        assert_eq!(
            line(uapi::RVS_CMD_NEW_SERVICE, &add),
            "-A -t 10.0.0.1:80 -s wrr -p 60"
        );
        assert_eq!(
            json_of(uapi::RVS_CMD_NEW_SERVICE, &add),
            concat!(
                r#"{"event":"NEW_SERVICE","service":{"family":"ipv4","protocol":"tcp","#,
                r#""address":"10.0.0.1","port":80,"scheduler":"wrr","flags":["persistent"],"#,
                r#""persistent_timeout":60,"netmask":"255.255.255.255"}}"#
            )
        );
        // -E: the flags under their mask, as the module applies them
        // (one-packet asked for but masked out), sh's flags by name.
        let edit = ipvs_service(&[
            attr(6, b"sh\0"),
            attr(
                7,
                &[
                    ne32(uapi::RVS_SVC_F_ONEPACKET | uapi::RVS_SVC_F_SCHED2),
                    ne32(uapi::RVS_SVC_F_SCHED2),
                ]
                .concat(),
            ),
            attr(8, &ne32(0)),
        ]);
        assert_eq!(
            line(uapi::RVS_CMD_SET_SERVICE, &edit),
            "-E -t 10.0.0.1:80 -s sh -b sh-port"
        );
        assert_eq!(
            json_of(uapi::RVS_CMD_SET_SERVICE, &edit),
            concat!(
                r#"{"event":"SET_SERVICE","service":{"family":"ipv4","protocol":"tcp","#,
                r#""address":"10.0.0.1","port":80,"scheduler":"sh","flags":["sh-port"],"#,
                r#""persistent_timeout":null,"netmask":"255.255.255.255"}}"#
            )
        );
        // A delete names the service only.
        let del = ipvs_service(&[]);
        assert_eq!(line(uapi::RVS_CMD_DEL_SERVICE, &del), "-D -t 10.0.0.1:80");
        assert_eq!(
            json_of(uapi::RVS_CMD_DEL_SERVICE, &del),
            r#"{"event":"DEL_SERVICE","service":{"family":"ipv4","protocol":"tcp","address":"10.0.0.1","port":80}}"#
        );
    }

    #[test]
    fn local_addresses_sent_kept_or_cleared() {
        let sched = attr(6, b"rr\0");
        let a16 = |a: [u8; 4]| {
            let mut b = [0u8; 16];
            b[..4].copy_from_slice(&a);
            b
        };
        // Not sent: kept (no --laddr, no laddrs in the JSON).
        let kept = ipvs_service(std::slice::from_ref(&sched));
        assert_eq!(
            line(uapi::RVS_CMD_SET_SERVICE, &kept),
            "-E -t 10.0.0.1:80 -s rr"
        );
        assert!(!json_of(uapi::RVS_CMD_SET_SERVICE, &kept).contains("laddrs"));
        // Sent empty: cleared.
        let cleared = ipvs_service(&[sched.clone(), attr(13 | NLA_F_NESTED, &[])]);
        assert_eq!(
            line(uapi::RVS_CMD_SET_SERVICE, &cleared),
            "-E -t 10.0.0.1:80 -s rr --laddr none"
        );
        assert!(
            json_of(uapi::RVS_CMD_SET_SERVICE, &cleared).ends_with(r#""laddrs":[]}}"#),
            "{}",
            json_of(uapi::RVS_CMD_SET_SERVICE, &cleared)
        );
        // Sent with addresses.
        let two = [attr(1, &a16([10, 0, 2, 1])), attr(1, &a16([10, 0, 2, 2]))].concat();
        let set = ipvs_service(&[sched, attr(13, &two)]);
        assert_eq!(
            line(uapi::RVS_CMD_NEW_SERVICE, &set),
            "-A -t 10.0.0.1:80 -s rr --laddr 10.0.2.1 --laddr 10.0.2.2"
        );
        assert!(json_of(uapi::RVS_CMD_NEW_SERVICE, &set)
            .ends_with(r#""netmask":"255.255.255.255","laddrs":["10.0.2.1","10.0.2.2"]}}"#));
    }

    #[test]
    fn ipvs_clients_servers() {
        let svc = ipvs_service(&[]);
        let fields = [
            attr(3, &ne32(uapi::RVS_CONN_F_MASQ)),
            attr(4, &ne32(3)),
            attr(5, &ne32(100)),
            attr(6, &ne32(10)),
            attr(11, &ne16(2)),
        ];
        let add = [svc.clone(), ipvs_dest(&fields)].concat();
        assert_eq!(
            line(uapi::RVS_CMD_NEW_DEST, &add),
            "-a -t 10.0.0.1:80 -r 10.0.1.1:8080 -m -w 3 -x 100 -y 10"
        );
        assert_eq!(
            json_of(uapi::RVS_CMD_NEW_DEST, &add),
            concat!(
                r#"{"event":"NEW_DEST","service":{"family":"ipv4","protocol":"tcp","address":"10.0.0.1","port":80},"#,
                r#""dest":{"address":"10.0.1.1","port":8080,"forward":"masq","weight":3,"upper_threshold":100,"#,
                r#""lower_threshold":10}}"#
            )
        );
        // -e to a GUE tunnel with a checksum.
        let tun = [
            attr(3, &ne32(uapi::RVS_CONN_F_TUNNEL)),
            attr(4, &ne32(0)),
            attr(13, &[uapi::RVS_TUN_TYPE_GUE]),
            attr(14, &6080u16.to_be_bytes()),
            attr(15, &ne16(uapi::RVS_TUN_F_CSUM)),
        ];
        let edit = [svc.clone(), ipvs_dest(&tun)].concat();
        assert_eq!(
            line(uapi::RVS_CMD_SET_DEST, &edit),
            "-e -t 10.0.0.1:80 -r 10.0.1.1:8080 -i -w 0 --tun-type gue --tun-port 6080 --tun-csum"
        );
        assert!(
            json_of(uapi::RVS_CMD_SET_DEST, &edit).ends_with(
                r#""forward":"tunnel","weight":0,"upper_threshold":0,"lower_threshold":0,"tunnel":{"type":"gue","port":6080,"checksum":"csum"}}}"#
            ),
            "{}",
            json_of(uapi::RVS_CMD_SET_DEST, &edit)
        );
        // Delete: address and port only; with a drain.
        let del = [svc.clone(), ipvs_dest(&[])].concat();
        assert_eq!(
            line(uapi::RVS_CMD_DEL_DEST, &del),
            "-d -t 10.0.0.1:80 -r 10.0.1.1:8080"
        );
        let drain = [svc.clone(), ipvs_dest(&[attr(16, &ne32(30))])].concat();
        assert_eq!(
            line(uapi::RVS_CMD_DEL_DEST, &drain),
            "-d -t 10.0.0.1:80 -r 10.0.1.1:8080 --drain 30"
        );
        assert_eq!(
            json_of(uapi::RVS_CMD_DEL_DEST, &drain),
            concat!(
                r#"{"event":"DEL_DEST","service":{"family":"ipv4","protocol":"tcp","address":"10.0.0.1","port":80},"#,
                r#""dest":{"address":"10.0.1.1","port":8080,"drain_secs":30}}"#
            )
        );
        // Flags or not, the same event.
        let mut flagged = AttrWriter::new();
        flagged.put(
            uapi::RVS_CMD_ATTR_SERVICE | NLA_F_NESTED,
            msg::find_attr(&svc, 1).unwrap().unwrap(),
        );
        let flagged = [flagged.finish(), ipvs_dest(&[])].concat();
        assert_eq!(
            decode(uapi::RVS_CMD_DEL_DEST, &flagged),
            decode(uapi::RVS_CMD_DEL_DEST, &del)
        );
    }

    #[test]
    fn firewall_marks_and_ipv6() {
        let fwm6 = attr(
            1 | NLA_F_NESTED,
            &[attr(1, &ne16(10)), attr(5, &ne32(6))].concat(),
        );
        assert_eq!(line(uapi::RVS_CMD_DEL_SERVICE, &fwm6), "-D -f 6 -6");
        assert_eq!(line(uapi::RVS_CMD_ZERO, &fwm6), "-Z -f 6 -6");
        assert_eq!(
            json_of(uapi::RVS_CMD_ZERO, &fwm6),
            r#"{"event":"ZERO","service":{"family":"ipv6","fwmark":6}}"#
        );
        let v6 = |s: &str| s.parse::<std::net::Ipv6Addr>().unwrap().octets();
        let udp6 = attr(
            1,
            &[
                attr(1, &ne16(10)),
                attr(2, &ne16(17)),
                attr(3, &v6("2001:db8::1")),
                attr(4, &53u16.to_be_bytes()),
            ]
            .concat(),
        );
        let server = attr(
            2,
            &[attr(1, &v6("2001:db8::2")), attr(2, &53u16.to_be_bytes())].concat(),
        );
        let flush = [udp6.clone(), server].concat();
        assert_eq!(
            line(uapi::RVS_CMD_FLUSH_CONNS, &flush),
            "--flush-conns -u [2001:db8::1]:53 -r [2001:db8::2]:53"
        );
        assert_eq!(
            json_of(uapi::RVS_CMD_FLUSH_CONNS, &flush),
            concat!(
                r#"{"event":"FLUSH_CONNS","service":{"family":"ipv6","protocol":"udp","address":"2001:db8::1","port":53},"#,
                r#""dest":{"address":"2001:db8::2","port":53}}"#
            )
        );
        assert_eq!(
            line(uapi::RVS_CMD_FLUSH_CONNS, &udp6),
            "--flush-conns -u [2001:db8::1]:53"
        );
    }

    #[test]
    fn table_wide_commands() {
        assert_eq!(line(uapi::RVS_CMD_FLUSH, &[]), "-C");
        assert_eq!(json_of(uapi::RVS_CMD_FLUSH, &[]), r#"{"event":"FLUSH"}"#);
        assert_eq!(line(uapi::RVS_CMD_ZERO, &[]), "-Z");
        assert_eq!(json_of(uapi::RVS_CMD_ZERO, &[]), r#"{"event":"ZERO"}"#);
        // An unknown attribute changes nothing.
        assert_eq!(line(uapi::RVS_CMD_FLUSH, &attr(77, &[1])), "-C");
    }

    #[test]
    fn settings_and_timeouts() {
        // As ipvsadm --set sends them: all three.
        let set = [attr(4, &ne32(900)), attr(5, &ne32(0)), attr(6, &ne32(300))].concat();
        assert_eq!(line(uapi::RVS_CMD_SET_CONFIG, &set), "--set 900 0 300");
        assert_eq!(
            json_of(uapi::RVS_CMD_SET_CONFIG, &set),
            r#"{"event":"SET_CONFIG","timeout":{"tcp":900,"tcpfin":0,"udp":300}}"#
        );
        // Only one sent (another client): 0 for the others, as --set
        // takes it; the JSON names only the one sent.
        let udp = attr(6, &ne32(60));
        assert_eq!(line(uapi::RVS_CMD_SET_CONFIG, &udp), "--set 0 0 60");
        assert_eq!(
            json_of(uapi::RVS_CMD_SET_CONFIG, &udp),
            r#"{"event":"SET_CONFIG","timeout":{"udp":60}}"#
        );
        // Settings, in the request's order, values as numbers; an
        // unknown one skipped.
        let opts = [
            attr(uapi::RVS_CMD_ATTR_VIP_GUARD, &ne32(1)),
            attr(99, &ne32(5)),
            attr(uapi::RVS_CMD_ATTR_EXPIRE_NODEST_CONN, &ne32(1)),
        ]
        .concat();
        assert_eq!(
            line(uapi::RVS_CMD_SET_CONFIG, &opts),
            "--set-option vip_guard=1 --set-option expire_nodest_conn=1"
        );
        assert_eq!(
            json_of(uapi::RVS_CMD_SET_CONFIG, &opts),
            r#"{"event":"SET_CONFIG","options":{"vip_guard":1,"expire_nodest_conn":1}}"#
        );
        // Both in one request: two commands.
        let both = [udp.clone(), opts].concat();
        let ev = decode(uapi::RVS_CMD_SET_CONFIG, &both).unwrap();
        assert_eq!(
            event_lines(&ev),
            [
                "--set 0 0 60",
                "--set-option vip_guard=1 --set-option expire_nodest_conn=1"
            ]
        );
        assert_eq!(
            event_json(&ev, Some("09:05:01.007")),
            concat!(
                r#"{"time":"09:05:01.007","event":"SET_CONFIG","timeout":{"udp":60},"#,
                r#""options":{"vip_guard":1,"expire_nodest_conn":1}}"#
            )
        );
        // Nothing rvsadm knows; a value of the wrong size.
        assert_eq!(
            line(uapi::RVS_CMD_SET_CONFIG, &attr(99, &ne32(5))),
            "# could not decode event 12 (SET_CONFIG): no timeout or setting rvsadm knows"
        );
        assert_eq!(
            line(uapi::RVS_CMD_SET_CONFIG, &attr(4, &ne16(9))),
            "# could not decode event 12 (SET_CONFIG): timeout 4: expected 4 bytes, got 2"
        );
        assert_eq!(
            line(
                uapi::RVS_CMD_SET_CONFIG,
                &attr(uapi::RVS_CMD_ATTR_CONN_MAX, &[1])
            ),
            "# could not decode event 12 (SET_CONFIG): conn_max: expected 4 bytes, got 1"
        );
    }

    #[test]
    fn sync_daemons() {
        let v6: std::net::Ipv6Addr = "ff02::1:81".parse().unwrap();
        let start = attr(
            3,
            &[
                attr(1, &ne32(uapi::RVS_DAEMON_BACKUP)),
                attr(2, b"eth1\0"),
                attr(3, &ne32(7)),
                attr(4, &ne16(1400)),
                attr(6, &v6.octets()),
                attr(7, &ne16(8849)),
                attr(8, &[2]),
            ]
            .concat(),
        );
        assert_eq!(
            line(uapi::RVS_CMD_NEW_DAEMON, &start),
            "--start-daemon backup --mcast-interface eth1 --syncid 7 --sync-maxlen 1400 \
             --mcast-group ff02::1:81 --mcast-port 8849 --mcast-ttl 2"
        );
        assert_eq!(
            json_of(uapi::RVS_CMD_NEW_DAEMON, &start),
            concat!(
                r#"{"event":"NEW_DAEMON","daemon":{"state":"backup","mcast_interface":"eth1","syncid":7,"#,
                r#""sync_maxlen":1400,"mcast_group":"ff02::1:81","mcast_port":8849,"mcast_ttl":2}}"#
            )
        );
        let least = attr(
            3,
            &[
                attr(1, &ne32(uapi::RVS_DAEMON_MASTER)),
                attr(2, b"eth0\0"),
                attr(3, &ne32(0)),
            ]
            .concat(),
        );
        assert_eq!(
            line(uapi::RVS_CMD_NEW_DAEMON, &least),
            "--start-daemon master --mcast-interface eth0 --syncid 0"
        );
        let stop = attr(3, &attr(1, &ne32(uapi::RVS_DAEMON_MASTER)));
        assert_eq!(
            line(uapi::RVS_CMD_DEL_DAEMON, &stop),
            "--stop-daemon master"
        );
        assert_eq!(
            json_of(uapi::RVS_CMD_DEL_DAEMON, &stop),
            r#"{"event":"DEL_DAEMON","daemon":{"state":"master"}}"#
        );
        let bad = attr(3, &attr(1, &ne32(3)));
        assert_eq!(
            line(uapi::RVS_CMD_DEL_DAEMON, &bad),
            "# could not decode event 10 (DEL_DAEMON): daemon STATE 3 is neither master (1) nor backup (2)"
        );
    }

    #[test]
    fn malformed_events_are_told_not_fatal() {
        let svc = ipvs_service(&[]);
        // A destination nest whose attribute claims more bytes than it has.
        let mut cut = [svc.clone(), ipvs_dest(&[])].concat();
        let at = svc.len() + 4; // the DEST nest's first attribute
        cut[at..at + 2].copy_from_slice(&ne16(200));
        assert_eq!(
            line(uapi::RVS_CMD_DEL_DEST, &cut),
            "# could not decode event 7 (DEL_DEST): attribute 1 has length 200, outside its buffer"
        );
        assert_eq!(
            json_of(uapi::RVS_CMD_DEL_DEST, &cut),
            r#"{"event":"DEL_DEST","cmd":7,"error":"attribute 1 has length 200, outside its buffer"}"#
        );
        // Truncated at every length: decoded or told, never a panic.
        let whole = [
            svc.clone(),
            ipvs_dest(&[attr(3, &ne32(0)), attr(4, &ne32(1))]),
        ]
        .concat();
        for n in 0..whole.len() {
            for cmd in 0..=20 {
                let _ =
                    decode(cmd, &whole[..n]).map(|ev| (event_lines(&ev), event_json(&ev, None)));
            }
        }
        // A nest missing, a service without its address, a command that
        // announces nothing.
        assert_eq!(
            line(uapi::RVS_CMD_NEW_DEST, &svc),
            "# could not decode event 5 (NEW_DEST): no real server (RVS_CMD_ATTR_DEST)"
        );
        assert_eq!(
            line(uapi::RVS_CMD_DEL_SERVICE, &[]),
            "# could not decode event 3 (DEL_SERVICE): no service (RVS_CMD_ATTR_SERVICE)"
        );
        assert_eq!(
            line(uapi::RVS_CMD_DEL_SERVICE, &attr(1, &attr(1, &ne16(2)))),
            "# could not decode event 3 (DEL_SERVICE): service without ADDR"
        );
        let u = decode(42, &svc).unwrap_err();
        assert_eq!(
            undecoded_line(&u),
            "# could not decode event 42: not a configuration command"
        );
        assert_eq!(
            undecoded_json(&u, Some("23:59:59.999")),
            r#"{"time":"23:59:59.999","event":null,"cmd":42,"error":"not a configuration command"}"#
        );
        assert_eq!(
            line(uapi::RVS_CMD_GET_SERVICE, &svc),
            "# could not decode event 4: not a configuration command"
        );
        assert_eq!(lost_json(None), r#"{"event":"LOST"}"#);
        assert_eq!(
            malformed_json("short", Some("00:00:00.000")),
            r#"{"time":"00:00:00.000","event":null,"error":"short"}"#
        );
        assert_eq!(
            malformed_line("short"),
            "# could not decode a netlink message: short"
        );
    }
}
