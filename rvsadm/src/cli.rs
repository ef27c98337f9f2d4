//! ipvsadm-compatible command line parsing into a typed [`Command`].
//!
//! Every command and option is defined once, in the table of [`opts`]:
//! clap's arguments, the check of which options go with which command,
//! `--help` (`help.rs`) and the shell completions ([`completions`]) are
//! made from it, and a test holds the man page to it (`man.rs`).
//!
//! clap does the tokenising (short/long options, bundled flags, optional
//! values); the checks of which options go with which command, and the
//! parsing of addresses, ports and numbers, are done here so that every
//! mistake gets a message in ipvsadm's spirit and exit code 2.

use std::ffi::OsString;
use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use clap::parser::ValueSource;
use clap::{Arg, ArgAction, ArgGroup, ArgMatches};

use self::opts::{Cmd, Doc, Exit, Opt, Role, Takes, OPTS};

use crate::resolve::{self, Resolve};
use crate::types::{
    af_of, DaemonSpec, DaemonState, DestKey, DestSpec, Forward, IfName, Netmask, Protocol,
    ServiceKey, ServiceSpec, Timeouts, TunnelOpts, DEFAULT_MCAST_IFN, DEFAULT_PERSISTENT_TIMEOUT,
    DEFAULT_SCHEDULER, DEFAULT_SYNCID, MAX_SYNC_MAXLEN, SCHED_FLAG_NAMES,
};
use crate::uapi;
use rvs_core::settings;

pub mod completions;
mod help;
#[cfg(test)]
mod man;
pub mod opts;

/// Longest persistence timeout accepted by `-p` (31 days, in seconds).
pub const MAX_PERSISTENT_TIMEOUT: u32 = 31 * 86400;
/// Longest connection timeout accepted by `--set` (31 days, as ipvsadm).
pub const MAX_TIMEOUT: u32 = 31 * 86400;
/// Default weight of a real server.
pub const DEFAULT_WEIGHT: u32 = 1;
/// Longest drain accepted by `-d --drain` (one day, in seconds). A drain
/// outlives no long connection that a day would not, and a longer one is
/// more likely a unit mistake (milliseconds, minutes) than meant; a
/// server to be emptied over days is better quiesced (`-e -w 0`) and
/// deleted later. The module takes any u32.
pub const MAX_DRAIN: u32 = 86400;

/// What the user asked rvsadm to do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Command {
    AddService(ServiceSpec),
    EditService(ServiceSpec),
    DeleteService(ServiceKey),
    Clear,
    AddServer(ServiceKey, DestSpec),
    EditServer(ServiceKey, DestSpec),
    DeleteServer(ServiceKey, DestKey),
    /// `-d --drain SECONDS`: the real server takes no new connections,
    /// and is deleted (its remaining connections ended) after SECONDS.
    DrainServer(ServiceKey, DestKey, u32),
    /// `-Z`: zero the counters of one service, or of all.
    Zero(Option<ServiceKey>),
    /// `--flush-conns`: end the connections of a service, or of one of
    /// its real servers, now.
    FlushConns {
        service: ServiceKey,
        server: Option<DestKey>,
        /// `--json`: print the count as JSON.
        json: bool,
    },
    /// `--set TCP TCPFIN UDP`.
    SetTimeouts(Timeouts),
    /// `--set-option NAME=VALUE ...`: (netlink attribute, value) pairs,
    /// validated against `rvs_core::settings`.
    SetOptions(Vec<(u16, u32)>),
    List(ListOptions),
    /// `-S`: print the rules in ipvsadm's save form.
    Save,
    /// `-R`: apply rules in that form from standard input; `--atomic`:
    /// all of them or none, in one request.
    Restore {
        atomic: bool,
    },
    /// `--start-daemon`: start a connection sync daemon.
    StartDaemon(DaemonSpec),
    /// `--stop-daemon`: stop the daemon of this state.
    StopDaemon(DaemonState),
    /// `--monitor`: print configuration changes as they happen.
    Monitor {
        /// `--json`: one JSON object a change.
        json: bool,
        /// `--timestamp`: the local time first.
        timestamp: bool,
    },
}

impl Command {
    /// Whether this command changes the rules (what `-R` accepts).
    /// `--flush-conns` changes no rule: it ends connections, and a rules
    /// file replayed by `-R` (at every reload of rvs.service) must not.
    /// Nor are the sync daemons rules (`-S` does not write them, as
    /// ipvsadm's does not): a replayed `--start-daemon` would fail on the
    /// daemon already running. `--monitor` changes nothing.
    pub fn is_change(&self) -> bool {
        !matches!(
            self,
            Command::List(_)
                | Command::Save
                | Command::Restore { .. }
                | Command::FlushConns { .. }
                | Command::StartDaemon(_)
                | Command::StopDaemon(_)
                | Command::Monitor { .. }
        )
    }
}

/// What `-L` lists.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ListMode {
    /// The virtual server table (`-L`).
    #[default]
    Table,
    /// The table with traffic counters (`-L --stats`).
    Stats,
    /// The table with rates (`-L --rate`).
    Rate,
    /// Real servers' connection thresholds (`-L --thresholds`).
    Thresholds,
    /// Real servers' persistent connections (`-L --persistent-conn`).
    PersistentConn,
    /// The connection timeouts (`-L --timeout`).
    Timeout,
    /// The connection table (`-L -c`).
    Connections,
    /// The runtime settings (`-L --options`).
    Options,
    /// The connection sync daemons (`-L --daemon`).
    Daemon,
}

/// Options of `-L`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ListOptions {
    /// Only this service (`-L -t ADDR:PORT`).
    pub service: Option<ServiceKey>,
    pub numeric: bool,
    pub json: bool,
    pub mode: ListMode,
    /// `--exact`: counters and rates without K/M/G/T abbreviation.
    pub exact: bool,
    /// `--tun-info`: a TunnelInfo column for real servers.
    pub tun_info: bool,
    /// `--nosort`: services and real servers in the kernel's order.
    pub nosort: bool,
}

/// A parsed command line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Invocation {
    Run(Command),
    /// `-h`: the help text to print.
    Help(String),
    /// `-V`: the version text to print.
    Version(String),
    /// `--completions SHELL`: the completion script to print.
    Completions(String),
}

/// A command line rvsadm cannot accept; the message says why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UsageError(pub String);

impl fmt::Display for UsageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

fn usage<T>(msg: impl Into<String>) -> Result<T, UsageError> {
    Err(UsageError(msg.into()))
}

/// The clap argument of a table entry.
fn clap_arg(o: &Opt) -> Arg {
    let mut arg = Arg::new(o.id()).long(o.long);
    if let Some(s) = o.short {
        arg = arg.short(s);
    }
    if let Some(s) = o.short_alias {
        arg = arg.short_alias(s);
    }
    if let Some(a) = o.hidden_alias {
        arg = arg.alias(a);
    }
    if let Doc::Hidden(_) = o.doc {
        arg = arg.hide(true);
    }
    let names = |v: &opts::Value| v.name.split_whitespace().collect::<Vec<_>>();
    match o.takes {
        Takes::Nothing => arg.action(ArgAction::SetTrue),
        Takes::Value(v) => {
            let names = names(&v);
            arg.num_args(names.len())
                .value_names(names)
                .allow_hyphen_values(false)
        }
        Takes::OptionalValue(v) => arg.value_name(v.name).num_args(0..=1),
        Takes::RepeatedValue(v) => arg.value_name(v.name).num_args(1).action(ArgAction::Append),
    }
}

fn clap_command() -> clap::Command {
    let mut cmd = clap::Command::new("rvsadm")
        .disable_help_flag(true)
        .disable_version_flag(true)
        .disable_colored_help(true)
        .args(OPTS.iter().map(clap_arg));
    // Exactly one command; at most one option of each group.
    let commands = OPTS
        .iter()
        .filter(|o| matches!(o.role, Role::Command(_)))
        .map(Opt::id);
    cmd = cmd.group(ArgGroup::new("command").args(commands).multiple(false));
    let mut groups: Vec<&str> = Vec::new();
    for g in OPTS.iter().filter_map(|o| o.group) {
        if !groups.contains(&g) {
            groups.push(g);
        }
    }
    for g in groups {
        let members = OPTS.iter().filter(|o| o.group == Some(g)).map(Opt::id);
        cmd = cmd.group(ArgGroup::new(g).args(members).multiple(false));
    }
    cmd
}

/// Turns clap's error into a one-line message.
/// clap's error as one line. A message that ends in a colon lists its
/// subjects on the indented lines after it ("cannot be used with:" and the
/// conflicting options): they are joined on, the usage lines dropped.
fn clap_message(e: &clap::Error) -> String {
    let text = e.to_string();
    let mut lines = text.lines();
    let first = lines.next().unwrap_or("invalid command line").trim();
    let mut msg = first.strip_prefix("error: ").unwrap_or(first).to_string();
    if msg.ends_with(':') {
        let items: Vec<&str> = lines
            .take_while(|l| l.starts_with("  "))
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect();
        if !items.is_empty() {
            msg.push(' ');
            msg.push_str(&items.join(", "));
        }
    }
    msg
}

fn given(m: &ArgMatches, id: &str) -> bool {
    m.value_source(id) == Some(ValueSource::CommandLine)
}

fn string_of<'a>(m: &'a ArgMatches, id: &str) -> Option<&'a str> {
    m.get_one::<String>(id).map(String::as_str)
}

/// Parses rvsadm's arguments (the first item is the program name).
pub fn parse<I, T>(args: I) -> Result<Invocation, UsageError>
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    // Built once per thread: `-R` parses every line of its input with it,
    // and building the table of options costs more than matching a line.
    thread_local! {
        static CLAP: std::cell::RefCell<clap::Command> = std::cell::RefCell::new(clap_command());
    }
    let m = CLAP
        .with(|c| c.borrow_mut().try_get_matches_from_mut(args))
        .map_err(|e| UsageError(clap_message(&e)))?;

    for o in OPTS {
        let Role::Exit(exit) = o.role else { continue };
        if !given(&m, o.id()) {
            continue;
        }
        return match exit {
            Exit::Help => Ok(Invocation::Help(help::text())),
            Exit::Version => Ok(Invocation::Version(version_text())),
            Exit::Completions => {
                let shell = string_of(&m, o.id()).unwrap_or_default();
                match completions::script(shell) {
                    Some(script) => Ok(Invocation::Completions(script)),
                    None => usage(format!(
                        "{} takes a shell: {}, not '{shell}'",
                        o.display(),
                        completions::SHELLS.join(" or ")
                    )),
                }
            }
        };
    }

    let given_command = OPTS.iter().find_map(|o| match o.role {
        Role::Command(c) if given(&m, o.id()) => Some((c, o.display())),
        _ => None,
    });
    let (cmd, cmd_name) = given_command.unwrap_or_else(|| {
        let list = opts::command(Cmd::List).display();
        (Cmd::List, format!("{list} (the default command)"))
    });
    let cmd_name = cmd_name.as_str();

    let refused = opts::in_report_order()
        .into_iter()
        .find(|o| given(&m, o.id()) && !o.allowed_with(cmd));
    if let Some(o) = refused {
        return usage(format!(
            "option {} is not allowed with {cmd_name}",
            o.display()
        ));
    }

    let service = service_of(&m)?;
    let need_service = || match service {
        Some(s) => Ok(s),
        None => usage(format!(
            "{cmd_name} needs a service: -t ADDR:PORT, -u ADDR:PORT, \
             --sctp-service ADDR:PORT or -f MARK"
        )),
    };

    let cmd = match cmd {
        Cmd::AddService => Command::AddService(service_spec(&m, need_service()?)?),
        Cmd::EditService => Command::EditService(service_spec(&m, need_service()?)?),
        Cmd::DeleteService => Command::DeleteService(need_service()?),
        Cmd::Clear => Command::Clear,
        Cmd::AddServer | Cmd::EditServer => {
            let svc = need_service()?;
            let dest = dest_spec(&m, &svc, cmd_name)?;
            if cmd == Cmd::AddServer {
                Command::AddServer(svc, dest)
            } else {
                Command::EditServer(svc, dest)
            }
        }
        Cmd::DeleteServer => {
            let svc = need_service()?;
            let key = dest_key(&m, &svc, cmd_name)?;
            match string_of(&m, "drain") {
                Some(secs) => Command::DrainServer(svc, key, parse_drain(secs)?),
                None => Command::DeleteServer(svc, key),
            }
        }
        Cmd::Zero => Command::Zero(service),
        Cmd::FlushConns => {
            let svc = need_service()?;
            let server = match string_of(&m, "real-server") {
                Some(_) => Some(dest_key(&m, &svc, cmd_name)?),
                None => None,
            };
            Command::FlushConns {
                service: svc,
                server,
                json: m.get_flag("json"),
            }
        }
        Cmd::Set => Command::SetTimeouts(timeouts(&m)?),
        Cmd::SetOption => Command::SetOptions(set_options(&m)?),
        Cmd::Save => Command::Save,
        Cmd::Restore => Command::Restore {
            atomic: m.get_flag("atomic"),
        },
        Cmd::StartDaemon => Command::StartDaemon(daemon_spec(&m)?),
        Cmd::StopDaemon => {
            // Taken as ipvsadm takes it, and checked, but not sent: the
            // state alone names the daemon.
            if let Some(id) = string_of(&m, "syncid") {
                parse_number(id, 0, 255, "syncid")?;
            }
            Command::StopDaemon(daemon_state(&m, "stop-daemon")?)
        }
        Cmd::Monitor => Command::Monitor {
            json: m.get_flag("json"),
            timestamp: m.get_flag("timestamp"),
        },
        Cmd::List => {
            let mode = if m.get_flag("connection") {
                ListMode::Connections
            } else if m.get_flag("timeout") {
                ListMode::Timeout
            } else if m.get_flag("options") {
                ListMode::Options
            } else if m.get_flag("daemon") {
                ListMode::Daemon
            } else if m.get_flag("stats") {
                ListMode::Stats
            } else if m.get_flag("rate") {
                ListMode::Rate
            } else if m.get_flag("thresholds") {
                ListMode::Thresholds
            } else if m.get_flag("persistent-conn") {
                ListMode::PersistentConn
            } else {
                ListMode::Table
            };
            // The listings that take no service.
            let opt = match mode {
                ListMode::Connections => Some("connection"),
                ListMode::Timeout => Some("timeout"),
                ListMode::Options => Some("options"),
                ListMode::Daemon => Some("daemon"),
                _ => None,
            };
            if let (Some(_), Some(opt)) = (service, opt) {
                // The service option given (-t, -u, --sctp-service or -f).
                let svc = OPTS
                    .iter()
                    .filter(|o| o.group == Some("service"))
                    .map(Opt::id)
                    .find(|id| given(&m, id))
                    .unwrap_or("fwmark-service");
                return usage(format!(
                    "option {} is not allowed with -L {}",
                    opts::by_id(svc).display(),
                    opts::by_id(opt).display()
                ));
            }
            Command::List(ListOptions {
                service,
                numeric: m.get_flag("numeric"),
                json: m.get_flag("json"),
                mode,
                exact: m.get_flag("exact"),
                tun_info: m.get_flag("tun-info"),
                nosort: m.get_flag("nosort"),
            })
        }
    };
    Ok(Invocation::Run(cmd))
}

/// The text printed by `-V`.
pub fn version_text() -> String {
    format!(
        "rvsadm {} (rvs generic netlink family {} version {})\n",
        env!("CARGO_PKG_VERSION"),
        uapi::RVS_GENL_NAME,
        uapi::RVS_GENL_VERSION
    )
}

/// The value of `--start-daemon` or `--stop-daemon` (clap id `id`).
fn daemon_state(m: &ArgMatches, id: &str) -> Result<DaemonState, UsageError> {
    let word = string_of(m, id).unwrap_or_default();
    match DaemonState::from_name(word) {
        Some(state) => Ok(state),
        None => usage(format!("--{id} takes master or backup, not '{word}'")),
    }
}

/// `--start-daemon` and its options, checked as ipvsadm checks them
/// (the same ranges), with ipvsadm's interface and syncid where they are
/// not given; the options not given are not sent (the module's defaults).
fn daemon_spec(m: &ArgMatches) -> Result<DaemonSpec, UsageError> {
    let state = daemon_state(m, "start-daemon")?;
    let ifn = string_of(m, "mcast-interface").unwrap_or(DEFAULT_MCAST_IFN);
    let mcast_ifn = IfName::new(ifn)
        .map_err(|why| UsageError(format!("invalid mcast-interface '{ifn}': {why}")))?;
    let number = |id: &str, min: u32, max: u32| match string_of(m, id) {
        Some(v) => parse_number(v, min, max, id).map(Some),
        None => Ok(None),
    };
    Ok(DaemonSpec {
        state,
        mcast_ifn,
        syncid: number("syncid", 0, 255)?.map_or(DEFAULT_SYNCID, |v| v as u8),
        sync_maxlen: number("sync-maxlen", 1, u32::from(MAX_SYNC_MAXLEN))?.map(|v| v as u16),
        mcast_group: string_of(m, "mcast-group")
            .map(parse_mcast_group)
            .transpose()?,
        mcast_port: number("mcast-port", 1, 65535)?.map(|v| v as u16),
        mcast_ttl: number("mcast-ttl", 1, 255)?.map(|v| v as u8),
    })
}

/// `--mcast-group`: an IPv4 multicast address (224.0.0.0/4) or an IPv6
/// one (ff00::/8), as ipvsadm checks it; an IPv6 one may be bracketed.
fn parse_mcast_group(text: &str) -> Result<IpAddr, UsageError> {
    let bare = text
        .strip_prefix('[')
        .and_then(|t| t.strip_suffix(']'))
        .filter(|t| t.contains(':'))
        .unwrap_or(text);
    let Ok(addr) = bare.parse::<IpAddr>() else {
        return usage(format!(
            "invalid mcast-group '{text}': not a numeric IPv4 or IPv6 address"
        ));
    };
    if !addr.is_multicast() {
        return usage(format!(
            "invalid mcast-group '{text}': not a multicast address (IPv4 224.0.0.0/4, \
             IPv6 ff00::/8)"
        ));
    }
    Ok(addr)
}

fn timeouts(m: &ArgMatches) -> Result<Timeouts, UsageError> {
    let values: Vec<&String> = m.get_many::<String>("set").into_iter().flatten().collect();
    let [tcp, tcp_fin, udp] = values[..] else {
        return usage("--set needs 3 timeout values: tcp tcpfin udp");
    };
    let parse = |v: &str, what: &str| parse_number(v, 0, MAX_TIMEOUT, what);
    Ok(Timeouts {
        tcp: parse(tcp, "tcp timeout")?,
        tcp_fin: parse(tcp_fin, "tcpfin timeout")?,
        udp: parse(udp, "udp timeout")?,
    })
}

/// `--set-option NAME=VALUE`, each checked against the settings table.
fn set_options(m: &ArgMatches) -> Result<Vec<(u16, u32)>, UsageError> {
    let mut out: Vec<(u16, u32)> = Vec::new();
    for item in m.get_many::<String>("set-option").into_iter().flatten() {
        let Some((name, value)) = item.split_once('=') else {
            return usage(format!(
                "--set-option takes NAME=VALUE (e.g. expire_nodest_conn=1), not '{item}'"
            ));
        };
        let Some(spec) = settings::by_name(name.trim()) else {
            let names: Vec<&str> = settings::SETTINGS.iter().map(|s| s.name).collect();
            return usage(format!(
                "unknown setting '{name}' (settings: {})",
                names.join(", ")
            ));
        };
        let value = value.trim();
        let v = match spec.names.iter().position(|n| *n == value) {
            Some(i) => i as u32,
            None if spec.names.is_empty() => parse_number(value, spec.min, spec.max, spec.name)?,
            None => parse_number(value, spec.min, spec.max, spec.name).map_err(|_| {
                UsageError(format!(
                    "invalid {} '{value}' (expected {} or a number {}-{})",
                    spec.name,
                    spec.names.join(", "),
                    spec.min,
                    spec.max
                ))
            })?,
        };
        if out.iter().any(|(a, _)| *a == spec.attr) {
            return usage(format!("setting {} given twice", spec.name));
        }
        out.push((spec.attr, v));
    }
    // FullNAT's port range, when both ends are given: the module refuses
    // a range that ends below its start (and checks one end against the
    // other's current value when only one is given).
    let value_of = |s: settings::Setting| {
        out.iter()
            .find(|(a, _)| *a == s.spec().attr)
            .map(|(_, v)| *v)
    };
    if let (Some(min), Some(max)) = (
        value_of(settings::Setting::FullnatPortMin),
        value_of(settings::Setting::FullnatPortMax),
    ) {
        if min > max {
            return usage(format!(
                "fullnat_port_min {min} is above fullnat_port_max {max}: the local port \
                 range would be empty"
            ));
        }
    }
    Ok(out)
}

fn service_of(m: &ArgMatches) -> Result<Option<ServiceKey>, UsageError> {
    // As ipvsadm: -6 only qualifies a mark; -t, -u and --sctp-service take
    // the family from their address.
    if m.get_flag("ipv6") && !given(m, "fwmark-service") {
        return usage(
            "option -6/--ipv6 needs -f/--fwmark-service: it makes a firewall-mark \
             service IPv6 (-t, -u and --sctp-service take the family from their address)",
        );
    }
    let (protocol, text) = if let Some(t) = string_of(m, "tcp-service") {
        (Protocol::Tcp, t)
    } else if let Some(u) = string_of(m, "udp-service") {
        (Protocol::Udp, u)
    } else if let Some(s) = string_of(m, "sctp-service") {
        (Protocol::Sctp, s)
    } else if let Some(f) = string_of(m, "fwmark-service") {
        let mark = parse_number(f, 1, u32::MAX, "fwmark value")?;
        return Ok(Some(if m.get_flag("ipv6") {
            ServiceKey::fwmark6(mark)
        } else {
            ServiceKey::fwmark(mark)
        }));
    } else {
        return Ok(None);
    };
    let (addr, port) = parse_addr_port(text, protocol)
        .map_err(|e| UsageError(format!("invalid service address '{text}': {e}")))?;
    Ok(Some(ServiceKey::new(protocol, addr, port.unwrap_or(0))))
}

fn service_spec(m: &ArgMatches, key: ServiceKey) -> Result<ServiceSpec, UsageError> {
    let scheduler = match string_of(m, "scheduler") {
        Some(s) => parse_scheduler(s)?,
        None => DEFAULT_SCHEDULER.to_string(),
    };
    let persistent = if given(m, "persistent") {
        Some(match string_of(m, "persistent") {
            Some(t) => parse_number(t, 1, MAX_PERSISTENT_TIMEOUT, "persistence timeout")?,
            None => DEFAULT_PERSISTENT_TIMEOUT,
        })
    } else {
        None
    };
    let netmask = match string_of(m, "netmask") {
        Some(s) => parse_netmask(s, &key.addr)?,
        None => Netmask::default_for(&key.addr),
    };
    if key.fwmark == 0 && key.port == 0 && persistent.is_none() {
        return usage(format!(
            "zero port specified for non-persistent service {key}: give a port or -p"
        ));
    }
    let sched_flags = match string_of(m, "sched-flags") {
        Some(f) => parse_sched_flags(f, &scheduler)?,
        None => 0,
    };
    let one_packet = m.get_flag("ops");
    if one_packet && key.fwmark == 0 && key.protocol != Protocol::Udp {
        return usage(format!(
            "one-packet scheduling (-o) is only for UDP services, not {key}"
        ));
    }
    Ok(ServiceSpec {
        key,
        scheduler,
        persistent,
        netmask,
        sched_flags,
        one_packet,
        laddrs: local_addrs(m, &key)?,
    })
}

/// `--laddr` of -A/-E: the service's local addresses, checked as the
/// module checks them (its family, unicast, none twice, at most
/// [`uapi::RVS_LADDRS_MAX`]) so that a mistake is told here in words;
/// `Some` of an empty list for `--laddr none`; `None` without `--laddr`,
/// which leaves the service's local addresses as they are.
fn local_addrs(m: &ArgMatches, key: &ServiceKey) -> Result<Option<Vec<IpAddr>>, UsageError> {
    let Some(values) = m.get_many::<String>("laddr") else {
        return Ok(None);
    };
    let values: Vec<&str> = values.map(String::as_str).collect();
    if values.contains(&"none") {
        if values.len() > 1 {
            return usage(
                "--laddr none clears the service's local addresses and cannot be given \
                 with addresses: give --laddr none alone, or --laddr ADDR for each address",
            );
        }
        return Ok(Some(Vec::new()));
    }
    let max = uapi::RVS_LADDRS_MAX;
    if values.len() > max {
        return usage(format!(
            "too many local addresses: {} given with --laddr, at most {max}",
            values.len()
        ));
    }
    let family = |a: &IpAddr| if a.is_ipv6() { "IPv6" } else { "IPv4" };
    let mut out: Vec<IpAddr> = Vec::with_capacity(values.len());
    for text in values {
        let addr = parse_laddr(text)?;
        if af_of(&addr) != key.af() {
            let hint = if key.fwmark != 0 && key.addr.is_ipv4() {
                " (-6 makes a firewall-mark service IPv6)"
            } else {
                ""
            };
            return usage(format!(
                "local address {addr} is {} but service {key} is {}: a service's local \
                 addresses are of its family{hint}",
                family(&addr),
                family(&key.addr)
            ));
        }
        if let Some(what) = not_unicast(&addr) {
            return usage(format!(
                "local address {addr} is {what}: local addresses must be unicast \
                 addresses of this director"
            ));
        }
        if out.contains(&addr) {
            return usage(format!("local address {addr} given twice"));
        }
        out.push(addr);
    }
    Ok(Some(out))
}

/// One `--laddr` value: a numeric IPv4 or IPv6 address (brackets
/// around an IPv6 one accepted), no port, no host name.
fn parse_laddr(text: &str) -> Result<IpAddr, UsageError> {
    if let Ok(a) = text.parse::<IpAddr>() {
        return Ok(a);
    }
    let bracketed = |t: &str| {
        t.strip_prefix('[')
            .and_then(|t| t.strip_suffix(']'))
            .and_then(|t| t.parse::<Ipv6Addr>().ok())
    };
    if let Some(a) = bracketed(text) {
        return Ok(IpAddr::V6(a));
    }
    // ADDR:PORT or [ADDR]:PORT, as -r takes them: say what is wrong.
    let with_port = text.rsplit_once(':').is_some_and(|(host, port)| {
        !port.is_empty()
            && port.bytes().all(|b| b.is_ascii_digit())
            && (host.parse::<Ipv4Addr>().is_ok() || bracketed(host).is_some())
    });
    if with_port {
        return usage(format!(
            "invalid local address '{text}': --laddr takes an address without a port"
        ));
    }
    usage(format!(
        "invalid local address '{text}': --laddr takes a numeric IPv4 or IPv6 address, \
         or none"
    ))
}

/// Why `addr` cannot be a local address, as the module refuses it:
/// unspecified, multicast, broadcast or loopback.
fn not_unicast(addr: &IpAddr) -> Option<&'static str> {
    match addr {
        IpAddr::V4(a) if a.is_unspecified() => Some("unspecified"),
        IpAddr::V4(a) if a.is_broadcast() => Some("the broadcast address"),
        IpAddr::V4(a) if a.is_multicast() => Some("a multicast address"),
        IpAddr::V4(a) if a.is_loopback() => Some("a loopback address"),
        IpAddr::V6(a) if a.is_unspecified() => Some("unspecified"),
        IpAddr::V6(a) if a.is_multicast() => Some("a multicast address"),
        IpAddr::V6(a) if a.is_loopback() => Some("a loopback address"),
        _ => None,
    }
}

fn forward_of(m: &ArgMatches) -> Forward {
    if m.get_flag("masquerading") {
        Forward::Masq
    } else if m.get_flag("fullnat") {
        Forward::FullNat
    } else if m.get_flag("enat") {
        Forward::Enat
    } else if m.get_flag("ipip") {
        Forward::Tunnel
    } else {
        Forward::Route
    }
}

fn dest_key(m: &ArgMatches, svc: &ServiceKey, cmd_name: &str) -> Result<DestKey, UsageError> {
    let Some(text) = string_of(m, "real-server") else {
        return usage(format!("{cmd_name} needs a real server: -r ADDR[:PORT]"));
    };
    let (addr, port) = parse_addr_port(text, svc.protocol)
        .map_err(|e| UsageError(format!("invalid real server address '{text}': {e}")))?;
    let port = match port {
        Some(0) | None => svc.port,
        Some(p) => p,
    };
    Ok(DestKey { addr, port })
}

fn dest_spec(m: &ArgMatches, svc: &ServiceKey, cmd_name: &str) -> Result<DestSpec, UsageError> {
    let key = dest_key(m, svc, cmd_name)?;
    let forward = forward_of(m);
    // A firewall-mark service has no port: a server port of 0 keeps the
    // packet's, any other is used as given (as ipvsadm).
    if svc.fwmark == 0 && !forward.allows_port_mapping() && key.port != svc.port {
        return usage(format!(
            "port mapping requires masquerading (-m) or --fullnat: real server port {} \
             differs from service port {} but {} forwarding keeps the port",
            key.port,
            svc.port,
            if forward == Forward::Tunnel {
                "tunnel (-i)"
            } else if forward == Forward::Enat {
                "ENAT (--enat)"
            } else {
                "direct-routing (-g)"
            },
        ));
    }
    if af_of(&key.addr) != svc.af() && forward != Forward::Tunnel {
        return usage(format!(
            "real server {} and service {} differ in address family; \
             that is allowed only for tunnelling (-i)",
            key.addr, svc
        ));
    }
    let weight = match string_of(m, "weight") {
        Some(w) => parse_number(w, 0, uapi::RVS_DEST_WEIGHT_MAX, "weight")?,
        None => DEFAULT_WEIGHT,
    };
    let upper = match string_of(m, "u-threshold") {
        Some(x) => parse_number(x, 0, i32::MAX as u32, "upper threshold")?,
        None => 0,
    };
    let lower = match string_of(m, "l-threshold") {
        Some(y) => parse_number(y, 0, i32::MAX as u32, "lower threshold")?,
        None => 0,
    };
    if upper != 0 && lower > upper {
        return usage(format!(
            "lower threshold {lower} is above upper threshold {upper}"
        ));
    }
    Ok(DestSpec {
        key,
        forward,
        weight,
        upper_threshold: upper,
        lower_threshold: lower,
        tunnel: tunnel_opts(m, forward)?,
    })
}

/// `--tun-type`, `--tun-port` and the checksum options, with ipvsadm's
/// rules (and messages): only with -i; GUE needs a port and only GUE takes
/// one; checksums only for GUE and GRE, remote checksum offload only GUE.
fn tunnel_opts(m: &ArgMatches, forward: Forward) -> Result<TunnelOpts, UsageError> {
    let csum_opt = ["tun-nocsum", "tun-csum", "tun-remcsum"]
        .into_iter()
        .find(|id| m.get_flag(id));
    let any = given(m, "tun-type") || given(m, "tun-port") || csum_opt.is_some();
    if !any {
        return Ok(TunnelOpts::default());
    }
    if forward != Forward::Tunnel {
        return usage("tunnel options conflict with the forwarding method (they need -i)");
    }
    let kind = match string_of(m, "tun-type").unwrap_or("ipip") {
        "ipip" => TunnelOpts::IPIP,
        "gue" => TunnelOpts::GUE,
        "gre" => TunnelOpts::GRE,
        other => return usage(format!("illegal tunnel type '{other}' (ipip, gue or gre)")),
    };
    let mut t = TunnelOpts {
        kind,
        ..TunnelOpts::default()
    };
    let name = t.type_name();
    match string_of(m, "tun-port") {
        Some(p) if kind == TunnelOpts::GUE => {
            t.port = parse_number(p, 1, 65535, "tun-port")? as u16
        }
        Some(_) => {
            return usage(format!(
                "illegal 'tun-port' option with the '{name}' tunnel type"
            ))
        }
        None if kind == TunnelOpts::GUE => {
            return usage("you need to supply the 'tun-port' option for the 'gue' tunnel type")
        }
        None => {}
    }
    match csum_opt {
        Some(o) if kind == TunnelOpts::IPIP => {
            return usage(format!("illegal '{o}' option with the 'ipip' tunnel type"))
        }
        Some("tun-remcsum") if kind != TunnelOpts::GUE => {
            return usage(format!(
                "illegal 'tun-remcsum' option with the '{name}' tunnel type"
            ))
        }
        Some("tun-csum") => t.flags = TunnelOpts::CSUM,
        Some("tun-remcsum") => t.flags = TunnelOpts::REMCSUM,
        _ => {}
    }
    Ok(t)
}

/// Parses `ADDR`, `ADDR:PORT`, `[IPV6]` or `[IPV6]:PORT`, where ADDR may
/// be an IPv4 host name and PORT a service name of `proto`, as ipvsadm
/// accepts them (`-t localhost:http`), resolved by the system.
pub fn parse_addr_port(s: &str, proto: Protocol) -> Result<(IpAddr, Option<u16>), String> {
    parse_addr_port_with(s, proto, &resolve::System)
}

/// [`parse_addr_port`] with names looked up in `r`.
pub fn parse_addr_port_with(
    s: &str,
    proto: Protocol,
    r: &dyn Resolve,
) -> Result<(IpAddr, Option<u16>), String> {
    if s.is_empty() {
        return Err("empty address".into());
    }
    if let Some(rest) = s.strip_prefix('[') {
        let Some((inner, after)) = rest.split_once(']') else {
            return Err("missing ']' after IPv6 address".into());
        };
        let addr: Ipv6Addr = inner
            .parse()
            .map_err(|_| format!("'{inner}' is not a numeric IPv6 address"))?;
        let port = match after {
            "" => None,
            p => match p.strip_prefix(':') {
                Some(p) => Some(parse_port(p, proto, r)?),
                None => return Err(format!("unexpected '{after}' after ']'")),
            },
        };
        return Ok((IpAddr::V6(addr), port));
    }
    if let Ok(addr) = s.parse::<IpAddr>() {
        return Ok((addr, None));
    }
    let (host, port) = match s.split_once(':') {
        Some((host, port)) if !port.contains(':') => (host, Some(parse_port(port, proto, r)?)),
        Some(_) => return Err("an IPv6 address with a port must be written [ADDR]:PORT".into()),
        None => (s, None),
    };
    if host.is_empty() {
        return Err(format!("missing address before ':' in '{s}'"));
    }
    let addr = match host.parse::<Ipv4Addr>() {
        Ok(a) => a,
        Err(_) if resolve::looks_numeric(host) => {
            return Err(format!("'{host}' is not a valid IPv4 address"))
        }
        Err(_) => r.host_v4(host).ok_or_else(|| {
            format!("'{host}' is neither a numeric address nor a host name with an IPv4 address")
        })?,
    };
    Ok((IpAddr::V4(addr), port))
}

/// A port number, or a service name of `proto` (`/etc/services`).
fn parse_port(p: &str, proto: Protocol, r: &dyn Resolve) -> Result<u16, String> {
    if !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()) {
        return p
            .parse::<u16>()
            .map_err(|_| format!("invalid port '{p}' (expected a number 0-65535)"));
    }
    let name = resolve::proto_name(proto);
    if p.is_empty()
        || !p
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_.+".contains(&b))
    {
        return Err(format!(
            "invalid port '{p}' (expected a number 0-65535 or a service name)"
        ));
    }
    r.service(p, name).ok_or_else(|| {
        format!("invalid port '{p}': not a number, nor a {name} service in /etc/services")
    })
}

/// Parses `-b`'s comma-separated scheduler flags for scheduler `sched`
/// into `RVS_SVC_F_SCHED*` bits, as ipvsadm: sh-* only with sh, mh-* only
/// with mh.
pub fn parse_sched_flags(s: &str, sched: &str) -> Result<u32, UsageError> {
    let mut flags = 0;
    for name in s.split(',') {
        let Some(&(_, bit, needs)) = SCHED_FLAG_NAMES.iter().find(|f| f.0 == name) else {
            let known: Vec<&str> = SCHED_FLAG_NAMES.iter().map(|f| f.0).collect();
            return usage(format!(
                "invalid scheduler flag '{name}' (expected {})",
                known.join(", ")
            ));
        };
        if let Some(need) = needs {
            if need != sched {
                return usage(format!(
                    "incompatible scheduler flag '{name}': it needs scheduler {need}, not {sched}"
                ));
            }
        }
        flags |= bit;
    }
    Ok(flags)
}

/// One line of `-R` input: `None` for a blank line or a `#` comment, else
/// the command it holds (a change: -A -E -D -C -a -e -d -Z --set
/// --set-option). The
/// words are split at white space, as ipvsadm does.
pub fn parse_restore_line(line: &str) -> Result<Option<Command>, UsageError> {
    let line = line.trim();
    if line.is_empty() || line.starts_with('#') {
        return Ok(None);
    }
    let mut args = vec!["rvsadm"];
    args.extend(line.split_whitespace());
    match parse(args)? {
        Invocation::Run(cmd) if cmd.is_change() => Ok(Some(cmd)),
        _ => usage(
            "only commands that change the rules (-A -E -D -C -a -e -d -Z --set --set-option) may be restored",
        ),
    }
}

/// Parses a decimal number in `min..=max`.
pub fn parse_number(s: &str, min: u32, max: u32, what: &str) -> Result<u32, UsageError> {
    match s.parse::<u64>() {
        Ok(n) if n >= u64::from(min) && n <= u64::from(max) && !s.starts_with('+') => Ok(n as u32),
        _ => usage(format!(
            "invalid {what} '{s}' (expected a number {min}-{max})"
        )),
    }
}

/// `--drain SECONDS`: 1 to [`MAX_DRAIN`]; 0, which would not drain,
/// gets a message of its own.
fn parse_drain(s: &str) -> Result<u32, UsageError> {
    if s.parse::<u64>() == Ok(0) {
        return usage(format!(
            "--drain 0 would not drain: give 1-{MAX_DRAIN} seconds, or leave --drain \
             out to delete the real server at once"
        ));
    }
    parse_number(s, 1, MAX_DRAIN, "drain time (seconds)")
}

fn parse_scheduler(s: &str) -> Result<String, UsageError> {
    let max = uapi::RVS_SCHEDNAME_MAXLEN - 1;
    if s.is_empty() || s.len() > max {
        return usage(format!("invalid scheduler name '{s}' (1-{max} characters)"));
    }
    if !s
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    {
        return usage(format!(
            "invalid scheduler name '{s}' (letters, digits, '_' and '-' only)"
        ));
    }
    Ok(s.to_string())
}

fn parse_netmask(s: &str, addr: &IpAddr) -> Result<Netmask, UsageError> {
    match addr {
        IpAddr::V4(_) => {
            let mask: Ipv4Addr = s.parse().map_err(|_| {
                UsageError(format!(
                    "invalid netmask '{s}' (expected an IPv4 netmask such as 255.255.255.0)"
                ))
            })?;
            let bits = u32::from(mask);
            if bits.leading_ones() + bits.trailing_zeros() != 32 {
                return usage(format!(
                    "invalid netmask '{s}': its bits are not contiguous"
                ));
            }
            Ok(Netmask::from_ipv4(mask))
        }
        IpAddr::V6(_) => parse_number(s, 1, 128, "IPv6 netmask (prefix length)").map(Netmask),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(args: &[&str]) -> Result<Command, String> {
        let mut v = vec!["rvsadm"];
        v.extend_from_slice(args);
        match parse(v) {
            Ok(Invocation::Run(c)) => Ok(c),
            Ok(other) => Err(format!("unexpected {other:?}")),
            Err(e) => Err(e.0),
        }
    }

    fn err(args: &[&str]) -> String {
        run(args).expect_err("should be rejected")
    }

    fn tcp(addr: &str, port: u16) -> ServiceKey {
        ServiceKey::new(Protocol::Tcp, addr.parse().unwrap(), port)
    }

    #[test]
    fn add_service_defaults() {
        let c = run(&["-A", "-t", "10.0.0.1:80"]).unwrap();
        assert_eq!(
            c,
            Command::AddService(ServiceSpec {
                key: tcp("10.0.0.1", 80),
                scheduler: "wlc".into(),
                persistent: None,
                netmask: Netmask(0xffff_ffff),
                sched_flags: 0,
                one_packet: false,
                laddrs: None,
            })
        );
    }

    #[test]
    fn add_service_full_long_options() {
        let c = run(&[
            "--add-service",
            "--udp-service",
            "[2001:db8::1]:53",
            "--scheduler",
            "rr",
            "--persistent",
            "600",
            "--netmask",
            "64",
        ])
        .unwrap();
        let Command::AddService(s) = c else {
            panic!("{c:?}")
        };
        assert_eq!(s.key.protocol, Protocol::Udp);
        assert_eq!(s.key.addr, "2001:db8::1".parse::<IpAddr>().unwrap());
        assert_eq!(s.key.port, 53);
        assert_eq!(s.scheduler, "rr");
        assert_eq!(s.persistent, Some(600));
        assert_eq!(s.netmask, Netmask(64));
    }

    #[test]
    fn persistent_without_value_and_ipv4_mask() {
        let c = run(&["-E", "-t", "10.0.0.1:0", "-p", "-M", "255.255.255.0"]).unwrap();
        let Command::EditService(s) = c else {
            panic!("{c:?}")
        };
        assert_eq!(s.persistent, Some(300));
        assert_eq!(s.netmask.display(2), "255.255.255.0");
        assert_eq!(s.netmask.0.to_ne_bytes(), [255, 255, 255, 0]);
        // -p followed by another option takes no value.
        let c = run(&["-A", "-t", "10.0.0.1:80", "-p", "-s", "rr"]).unwrap();
        let Command::AddService(s) = c else {
            panic!("{c:?}")
        };
        assert_eq!((s.persistent, s.scheduler.as_str()), (Some(300), "rr"));
        // Attached value.
        let Command::AddService(s) = run(&["-A", "-t", "10.0.0.1:80", "-p120"]).unwrap() else {
            panic!()
        };
        assert_eq!(s.persistent, Some(120));
    }

    #[test]
    fn servers() {
        let c = run(&["-a", "-t", "10.0.0.1:80", "-r", "10.0.1.1", "-m", "-w", "3"]).unwrap();
        assert_eq!(
            c,
            Command::AddServer(
                tcp("10.0.0.1", 80),
                DestSpec {
                    key: DestKey {
                        addr: "10.0.1.1".parse().unwrap(),
                        port: 80
                    },
                    forward: Forward::Masq,
                    weight: 3,
                    upper_threshold: 0,
                    lower_threshold: 0,
                    tunnel: TunnelOpts::default(),
                }
            )
        );
        let Command::EditServer(_, d) = run(&[
            "-e",
            "-t",
            "10.0.0.1:80",
            "-r",
            "10.0.1.1:8080",
            "-m",
            "-x",
            "100",
            "-y",
            "50",
        ])
        .unwrap() else {
            panic!()
        };
        assert_eq!(
            (d.key.port, d.upper_threshold, d.lower_threshold),
            (8080, 100, 50)
        );
        let Command::AddServer(_, d) = run(&["-a", "-t", "10.0.0.1:80", "-r", "10.0.1.2"]).unwrap()
        else {
            panic!()
        };
        assert_eq!((d.forward, d.weight, d.key.port), (Forward::Route, 1, 80));
        let Command::AddServer(_, d) =
            run(&["-a", "-t", "10.0.0.1:80", "-r", "10.0.1.2:80", "-i"]).unwrap()
        else {
            panic!()
        };
        assert_eq!(d.forward, Forward::Tunnel);
        // Tunnelling may mix families.
        assert!(run(&["-a", "-t", "10.0.0.1:80", "-r", "[2001:db8::2]:80", "-i"]).is_ok());
        assert_eq!(
            run(&["-d", "-u", "10.0.0.1:53", "-r", "10.0.1.1"]).unwrap(),
            Command::DeleteServer(
                ServiceKey::new(Protocol::Udp, "10.0.0.1".parse().unwrap(), 53),
                DestKey {
                    addr: "10.0.1.1".parse().unwrap(),
                    port: 53
                }
            )
        );
    }

    #[test]
    fn other_commands() {
        assert_eq!(run(&["-C"]).unwrap(), Command::Clear);
        assert_eq!(
            run(&["-D", "-t", "10.0.0.1:80"]).unwrap(),
            Command::DeleteService(tcp("10.0.0.1", 80))
        );
        assert_eq!(run(&[]).unwrap(), Command::List(ListOptions::default()));
        assert_eq!(
            run(&["-L", "-n"]).unwrap(),
            Command::List(ListOptions {
                service: None,
                numeric: true,
                json: false,
                ..ListOptions::default()
            })
        );
        assert_eq!(run(&["-ln"]).unwrap(), run(&["-L", "-n"]).unwrap());
        assert_eq!(
            run(&["--list", "--json", "-t", "[::1]:443"]).unwrap(),
            Command::List(ListOptions {
                service: Some(tcp("::1", 443)),
                numeric: false,
                json: true,
                ..ListOptions::default()
            })
        );
        assert_eq!(
            run(&["--json"]).unwrap(),
            Command::List(ListOptions {
                json: true,
                ..ListOptions::default()
            })
        );
    }

    fn list_opts(args: &[&str]) -> ListOptions {
        match run(args).unwrap() {
            Command::List(o) => o,
            c => panic!("{args:?}: {c:?}"),
        }
    }

    #[test]
    fn list_modes() {
        assert_eq!(list_opts(&["-L", "-n"]).mode, ListMode::Table);
        let o = list_opts(&["-L", "-n", "--stats"]);
        assert_eq!((o.mode, o.exact, o.numeric), (ListMode::Stats, false, true));
        let o = list_opts(&["-l", "--rate", "--exact", "-t", "10.0.0.1:80"]);
        assert_eq!((o.mode, o.exact), (ListMode::Rate, true));
        assert_eq!(o.service, Some(tcp("10.0.0.1", 80)));
        assert_eq!(list_opts(&["-L", "--timeout"]).mode, ListMode::Timeout);
        // ipvsadm's other listings and aliases.
        assert_eq!(
            list_opts(&["-L", "--thresholds"]).mode,
            ListMode::Thresholds
        );
        assert_eq!(
            list_opts(&["-L", "-n", "--persistent-conn"]).mode,
            ListMode::PersistentConn
        );
        assert!(list_opts(&["-L", "--nosort"]).nosort);
        assert!(!list_opts(&["-L", "--sort"]).nosort);
        assert!(list_opts(&["-L", "--stats", "-X"]).exact);
        assert!(run(&["-L", "--sort", "--nosort"]).is_err());
        assert!(run(&["-L", "--thresholds", "--stats"]).is_err());
        assert_eq!(
            list_opts(&["-l", "--timeout", "--json"]).mode,
            ListMode::Timeout
        );
        for args in [
            &["-L", "-c"][..],
            &["-L", "-n", "-c"],
            &["-Lnc"],
            &["-lnc"],
            &["-L", "--connection"],
            &["-c"],
        ] {
            assert_eq!(list_opts(args).mode, ListMode::Connections, "{args:?}");
        }
        assert!(list_opts(&["-Lnc", "--json"]).json);
    }

    #[test]
    fn zero_and_set() {
        assert_eq!(run(&["-Z"]).unwrap(), Command::Zero(None));
        assert_eq!(
            run(&["--zero", "-t", "10.0.0.1:80"]).unwrap(),
            Command::Zero(Some(tcp("10.0.0.1", 80)))
        );
        assert_eq!(
            run(&["-Z", "-u", "[2001:db8::1]:53"]).unwrap(),
            Command::Zero(Some(ServiceKey::new(
                Protocol::Udp,
                "2001:db8::1".parse().unwrap(),
                53
            )))
        );
        assert_eq!(
            run(&["--set", "900", "120", "300"]).unwrap(),
            Command::SetTimeouts(Timeouts {
                tcp: 900,
                tcp_fin: 120,
                udp: 300
            })
        );
        assert_eq!(
            run(&["--set", "0", "0", "2678400"]).unwrap(),
            Command::SetTimeouts(Timeouts {
                tcp: 0,
                tcp_fin: 0,
                udp: 2678400
            })
        );
    }

    #[test]
    fn flush_conns() {
        let flush = |service, server, json| Command::FlushConns {
            service,
            server,
            json,
        };
        let d = |addr: &str, port| DestKey {
            addr: addr.parse().unwrap(),
            port,
        };
        assert_eq!(
            run(&["--flush-conns", "-t", "10.0.0.1:80"]).unwrap(),
            flush(tcp("10.0.0.1", 80), None, false)
        );
        // The server's port defaults to the service's, as with -d.
        assert_eq!(
            run(&["--flush-conns", "-t", "10.0.0.1:80", "-r", "10.0.1.1"]).unwrap(),
            flush(tcp("10.0.0.1", 80), Some(d("10.0.1.1", 80)), false)
        );
        assert_eq!(
            run(&[
                "--flush-conns",
                "-u",
                "[2001:db8::1]:53",
                "-r",
                "[2001:db8:1::2]:5353",
                "--json"
            ])
            .unwrap(),
            flush(
                ServiceKey::new(Protocol::Udp, "2001:db8::1".parse().unwrap(), 53),
                Some(d("2001:db8:1::2", 5353)),
                true
            )
        );
        assert_eq!(
            run(&["--flush-conns", "--sctp-service", "10.0.0.1:3868"]).unwrap(),
            flush(
                ServiceKey::new(Protocol::Sctp, "10.0.0.1".parse().unwrap(), 3868),
                None,
                false
            )
        );
        assert_eq!(
            run(&["--flush-conns", "-f", "6", "-6", "-r", "[2001:db8:1::2]:0"]).unwrap(),
            flush(ServiceKey::fwmark6(6), Some(d("2001:db8:1::2", 0)), false)
        );
        assert_eq!(
            run(&["-f", "6", "--flush-conns"]).unwrap(),
            flush(ServiceKey::fwmark(6), None, false)
        );
        for (args, want) in [
            (&["--flush-conns"][..], "--flush-conns needs a service: -t ADDR:PORT, -u ADDR:PORT, --sctp-service ADDR:PORT or -f MARK"),
            (&["--flush-conns", "-r", "10.0.1.1"], "--flush-conns needs a service"),
            (&["--flush-conns", "-t", "10.0.0.1:80", "-w", "1"], "option -w/--weight is not allowed with --flush-conns"),
            (&["--flush-conns", "-t", "10.0.0.1:80", "-m"], "option -m/--masquerading is not allowed with --flush-conns"),
            (&["--flush-conns", "-t", "10.0.0.1:80", "-n"], "option -n/--numeric is not allowed with --flush-conns"),
            (&["--flush-conns", "-t", "10.0.0.1:80", "-s", "rr"], "option -s/--scheduler is not allowed with --flush-conns"),
            (&["--flush-conns", "-t", "10.0.0.1:80", "--stats"], "option --stats is not allowed with --flush-conns"),
            (&["--flush-conns", "-t", "10.0.0.1:80", "-6"], "option -6/--ipv6 needs -f/--fwmark-service"),
            (&["--flush-conns", "-t", "10.0.0.1:80", "-r", "10.0.1.1:x"], "invalid real server address '10.0.1.1:x'"),
            (&["--flush-conns", "-t", "10.0.0.1:80", "-Z"], "cannot be used with"),
            (&["--flush-conns", "-t", "10.0.0.1:80", "-d"], "cannot be used with"),
            (&["--flush", "-t", "10.0.0.1:80"], "unexpected argument '--flush'"),
            (&["-Z", "--json"], "option --json is not allowed with -Z/--zero"),
        ] {
            let got = err(args);
            assert!(got.contains(want), "args {args:?}: got {got:?}, want {want:?}");
            assert!(!got.contains('\n'), "multi-line error for {args:?}: {got:?}");
        }
        // Not a rule: -R refuses it (a rules file replayed at reload must
        // not cut connections), and -S never writes it.
        let e = parse_restore_line("--flush-conns -t 10.0.0.1:80").unwrap_err();
        assert!(e.0.contains("only commands that change the rules"), "{e}");
    }

    fn laddrs_of(args: &[&str]) -> Option<Vec<IpAddr>> {
        match run(args).unwrap() {
            Command::AddService(s) | Command::EditService(s) => s.laddrs,
            c => panic!("{args:?}: {c:?}"),
        }
    }

    fn ips(v: &[&str]) -> Option<Vec<IpAddr>> {
        Some(v.iter().map(|a| a.parse().unwrap()).collect())
    }

    #[test]
    fn local_addresses() {
        assert_eq!(
            laddrs_of(&[
                "-A",
                "-t",
                "10.0.0.1:80",
                "--laddr",
                "10.0.2.1",
                "--laddr",
                "10.0.2.2"
            ]),
            ips(&["10.0.2.1", "10.0.2.2"])
        );
        // Given order kept; the value may be attached (--laddr=ADDR).
        assert_eq!(
            laddrs_of(&[
                "-E",
                "-u",
                "[2001:db8::1]:53",
                "--laddr=2001:db8:2::2",
                "--laddr",
                "[2001:db8:2::1]"
            ]),
            ips(&["2001:db8:2::2", "2001:db8:2::1"])
        );
        // Without --laddr: None, the service's local addresses stay.
        assert_eq!(laddrs_of(&["-E", "-t", "10.0.0.1:80"]), None);
        assert_eq!(laddrs_of(&["-A", "-t", "10.0.0.1:80"]), None);
        // none: clear them.
        assert_eq!(
            laddrs_of(&["-E", "-t", "10.0.0.1:80", "--laddr", "none"]),
            Some(vec![])
        );
        // Mark services: the family of -6.
        assert_eq!(
            laddrs_of(&["-A", "-f", "7", "--laddr", "10.0.2.1"]),
            ips(&["10.0.2.1"])
        );
        assert_eq!(
            laddrs_of(&["-A", "-f", "7", "-6", "-p", "--laddr", "fd00::2"]),
            ips(&["fd00::2"])
        );
        // Up to 64.
        let many: Vec<String> = (1..=65).map(|i| format!("10.0.2.{i}")).collect();
        let with = |n: usize| {
            let mut v = vec!["-A", "-t", "10.0.0.1:80"];
            for a in &many[..n] {
                v.extend(["--laddr", a.as_str()]);
            }
            v
        };
        assert_eq!(laddrs_of(&with(64)).unwrap().len(), 64);
        assert_eq!(
            err(&with(65)),
            "too many local addresses: 65 given with --laddr, at most 64"
        );
        let one = |svc: &[&str], a: &str| {
            let mut v = vec!["-A"];
            v.extend_from_slice(svc);
            v.extend(["--laddr", a]);
            err(&v)
        };
        let t = ["-t", "10.0.0.1:80"];
        for (svc, a, want) in [
            (
                &t[..],
                "2001:db8::10",
                "local address 2001:db8::10 is IPv6 but service TCP 10.0.0.1:80 is IPv4: \
                 a service's local addresses are of its family",
            ),
            (
                &["-u", "[2001:db8::1]:53"],
                "10.0.2.1",
                "local address 10.0.2.1 is IPv4 but service UDP [2001:db8::1]:53 is IPv6: \
                 a service's local addresses are of its family",
            ),
            (
                &["-f", "7", "-p"],
                "fd00::2",
                "local address fd00::2 is IPv6 but service FWM 7 is IPv4: a service's \
                 local addresses are of its family (-6 makes a firewall-mark service IPv6)",
            ),
            (
                &["-f", "7", "-6", "-p"],
                "10.0.2.1",
                "local address 10.0.2.1 is IPv4 but service FWM 7 IPv6 is IPv6: a \
                 service's local addresses are of its family",
            ),
            (
                &t,
                "10.0.2",
                "invalid local address '10.0.2': --laddr takes a numeric IPv4 or IPv6 \
                 address, or none",
            ),
            (
                &t,
                "director",
                "invalid local address 'director': --laddr takes a numeric IPv4 or IPv6 \
                 address, or none",
            ),
            (&t, "", "invalid local address '': --laddr takes a numeric"),
            (&t, "None", "invalid local address 'None'"),
            (&t, "10.0.2.1/24", "invalid local address '10.0.2.1/24'"),
            (
                &t,
                "10.0.2.1:80",
                "invalid local address '10.0.2.1:80': --laddr takes an address without a port",
            ),
            (
                &["-t", "[2001:db8::1]:80"],
                "[2001:db8::10]:80",
                "invalid local address '[2001:db8::10]:80': --laddr takes an address \
                 without a port",
            ),
            (
                &["-t", "[2001:db8::1]:80"],
                "[10.0.2.1]",
                "invalid local address '[10.0.2.1]'",
            ),
            (
                &t,
                "127.0.0.1",
                "local address 127.0.0.1 is a loopback address: local addresses must be \
                 unicast addresses of this director",
            ),
            (&t, "0.0.0.0", "local address 0.0.0.0 is unspecified: "),
            (
                &t,
                "224.0.0.5",
                "local address 224.0.0.5 is a multicast address: ",
            ),
            (
                &t,
                "255.255.255.255",
                "local address 255.255.255.255 is the broadcast address: ",
            ),
            (
                &["-t", "[2001:db8::1]:80"],
                "::1",
                "local address ::1 is a loopback address: ",
            ),
            (
                &["-t", "[2001:db8::1]:80"],
                "::",
                "local address :: is unspecified: ",
            ),
            (
                &["-t", "[2001:db8::1]:80"],
                "ff02::1",
                "local address ff02::1 is a multicast",
            ),
        ] {
            let got = one(svc, a);
            assert!(
                got.starts_with(want),
                "{svc:?} {a:?}: got {got:?}, want {want:?}"
            );
        }
        for (args, want) in [
            (
                &[
                    "-A",
                    "-t",
                    "10.0.0.1:80",
                    "--laddr",
                    "10.0.2.1",
                    "--laddr",
                    "10.0.2.1",
                ][..],
                "local address 10.0.2.1 given twice".to_string(),
            ),
            (
                // The same address written twice in two forms.
                &[
                    "-A",
                    "-t",
                    "[fd00::1]:80",
                    "--laddr",
                    "fd00::2",
                    "--laddr",
                    "[fd00:0::2]",
                ],
                "local address fd00::2 given twice".to_string(),
            ),
            (
                &[
                    "-E",
                    "-t",
                    "10.0.0.1:80",
                    "--laddr",
                    "none",
                    "--laddr",
                    "10.0.2.1",
                ],
                "--laddr none clears the service's local addresses and cannot be given with \
                 addresses: give --laddr none alone, or --laddr ADDR for each address"
                    .to_string(),
            ),
            (
                &[
                    "-E",
                    "-t",
                    "10.0.0.1:80",
                    "--laddr",
                    "10.0.2.1",
                    "--laddr",
                    "none",
                ],
                "--laddr none clears".to_string(),
            ),
            (
                &[
                    "-E",
                    "-t",
                    "10.0.0.1:80",
                    "--laddr",
                    "none",
                    "--laddr",
                    "none",
                ],
                "--laddr none clears".to_string(),
            ),
            (
                &[
                    "-a",
                    "-t",
                    "10.0.0.1:80",
                    "-r",
                    "10.0.1.1",
                    "--laddr",
                    "10.0.2.1",
                ],
                "option --laddr is not allowed with -a/--add-server".to_string(),
            ),
            (
                &["-D", "-t", "10.0.0.1:80", "--laddr", "none"],
                "option --laddr is not allowed with -D/--delete-service".to_string(),
            ),
            (
                &["-L", "--laddr", "10.0.2.1"],
                "option --laddr is not allowed with -L/--list".to_string(),
            ),
            (
                &["-A", "-t", "10.0.0.1:80", "--laddr"],
                "a value is required".to_string(),
            ),
        ] {
            let got = err(args);
            assert!(
                got.starts_with(&want),
                "{args:?}: got {got:?}, want {want:?}"
            );
            assert!(!got.contains('\n'), "{args:?}: {got:?}");
        }
        // -S's form; -R reads it.
        let Some(Command::AddService(s)) =
            parse_restore_line("-A -t 10.0.0.1:80 -s rr --laddr 10.0.2.1 --laddr 10.0.2.2")
                .unwrap()
        else {
            panic!()
        };
        assert_eq!(s.laddrs, ips(&["10.0.2.1", "10.0.2.2"]));
    }

    #[test]
    fn fullnat_servers() {
        let server = |args: &[&str]| match run(args).unwrap() {
            Command::AddServer(_, d) | Command::EditServer(_, d) => d,
            c => panic!("{args:?}: {c:?}"),
        };
        let d = server(&["-a", "-t", "10.0.0.1:80", "-r", "10.0.1.1", "--fullnat"]);
        assert_eq!(
            (d.forward, d.key.port, d.weight, d.tunnel),
            (Forward::FullNat, 80, 1, TunnelOpts::default())
        );
        assert_eq!(d.forward.code(), 5);
        // Port mapping, as with -m; the other options as with any method.
        let d = server(&[
            "-e",
            "-t",
            "10.0.0.1:80",
            "-r",
            "10.0.1.1:8080",
            "--fullnat",
            "-w",
            "3",
            "-x",
            "100",
        ]);
        assert_eq!(
            (d.forward, d.key.port, d.weight, d.upper_threshold),
            (Forward::FullNat, 8080, 3, 100)
        );
        let d = server(&[
            "-a",
            "-u",
            "[2001:db8::1]:53",
            "-r",
            "[2001:db8:1::2]:5353",
            "--fullnat",
        ]);
        assert_eq!((d.forward, d.key.port), (Forward::FullNat, 5353));
        let d = server(&["-a", "-f", "7", "-6", "-r", "[2001:db8:1::2]", "--fullnat"]);
        assert_eq!((d.forward, d.key.port), (Forward::FullNat, 0));
        for (args, want) in [
            (
                &[
                    "-a",
                    "-t",
                    "10.0.0.1:80",
                    "-r",
                    "10.0.1.1",
                    "--fullnat",
                    "-i",
                ][..],
                "cannot be used with",
            ),
            (
                &[
                    "-a",
                    "-t",
                    "10.0.0.1:80",
                    "-r",
                    "10.0.1.1",
                    "--fullnat",
                    "-g",
                ],
                "cannot be used with",
            ),
            (
                &[
                    "-a",
                    "-t",
                    "10.0.0.1:80",
                    "-r",
                    "[2001:db8::2]:80",
                    "--fullnat",
                ],
                "real server 2001:db8::2 and service TCP 10.0.0.1:80 differ in address family; \
                 that is allowed only for tunnelling (-i)",
            ),
            (
                &[
                    "-a",
                    "-t",
                    "10.0.0.1:80",
                    "-r",
                    "10.0.1.1",
                    "--fullnat",
                    "--tun-type",
                    "gre",
                ],
                "tunnel options conflict with the forwarding method (they need -i)",
            ),
            (
                &["-A", "-t", "10.0.0.1:80", "--fullnat"],
                "option --fullnat is not allowed with -A/--add-service",
            ),
            (
                &["-d", "-t", "10.0.0.1:80", "-r", "10.0.1.1", "--fullnat"],
                "option --fullnat is not allowed with -d/--delete-server",
            ),
            (
                &["-L", "--fullnat"],
                "option --fullnat is not allowed with -L/--list",
            ),
            // Long only: -b is ipvsadm's scheduler flags.
            (
                &["-a", "-t", "10.0.0.1:80", "-r", "10.0.1.1", "-b", "x"],
                "option -b/--sched-flags is not allowed with -a/--add-server",
            ),
        ] {
            let got = err(args);
            assert!(
                got.contains(want),
                "args {args:?}: got {got:?}, want {want:?}"
            );
        }
        // -S writes --fullnat where -m would be; -R reads it back.
        assert_eq!(
            parse_restore_line("-a -t 10.0.0.1:80 -r 10.0.1.1:8080 --fullnat -w 2").unwrap(),
            run(&[
                "-a",
                "-t",
                "10.0.0.1:80",
                "-r",
                "10.0.1.1:8080",
                "--fullnat",
                "-w",
                "2"
            ])
            .ok()
        );
    }

    #[test]
    fn enat_servers() {
        let server = |args: &[&str]| match run(args).unwrap() {
            Command::AddServer(_, d) | Command::EditServer(_, d) => d,
            c => panic!("{args:?}: {c:?}"),
        };
        let d = server(&[
            "-a",
            "-t",
            "10.0.0.1:80",
            "-r",
            "10.0.1.1",
            "--enat",
            "-w",
            "2",
        ]);
        assert_eq!((d.forward, d.key.port, d.weight), (Forward::Enat, 80, 2));
        assert_eq!(d.forward.code(), 6);
        let d = server(&[
            "-e",
            "-t",
            "[2001:db8::1]:443",
            "-r",
            "[fd00:3::1]",
            "--enat",
        ]);
        assert_eq!((d.forward, d.key.port), (Forward::Enat, 443));
        for (args, want) in [
            (
                &["-a", "-t", "10.0.0.1:80", "-r", "10.0.1.1:8080", "--enat"][..],
                "port mapping requires masquerading (-m) or --fullnat: real server port 8080 \
                 differs from service port 80 but ENAT (--enat) forwarding keeps the port",
            ),
            (
                &["-a", "-t", "10.0.0.1:80", "-r", "10.0.1.1", "--enat", "-m"],
                "cannot be used with",
            ),
            (
                &[
                    "-a",
                    "-t",
                    "10.0.0.1:80",
                    "-r",
                    "10.0.1.1",
                    "--enat",
                    "--fullnat",
                ],
                "cannot be used with",
            ),
            (
                &["-a", "-t", "10.0.0.1:80", "-r", "10.0.1.1", "--enat", "-i"],
                "cannot be used with",
            ),
            (
                &["-a", "-t", "10.0.0.1:80", "-r", "10.0.1.1", "--enat", "-g"],
                "cannot be used with",
            ),
            (
                &["-a", "-t", "10.0.0.1:80", "-r", "[2001:db8::2]", "--enat"],
                "real server 2001:db8::2 and service TCP 10.0.0.1:80 differ in address family; \
                 that is allowed only for tunnelling (-i)",
            ),
            (
                &[
                    "-a",
                    "-t",
                    "10.0.0.1:80",
                    "-r",
                    "10.0.1.1",
                    "--enat",
                    "--tun-type",
                    "gue",
                ],
                "tunnel options conflict with the forwarding method (they need -i)",
            ),
            (
                &["-A", "-t", "10.0.0.1:80", "--enat"],
                "option --enat is not allowed with -A/--add-service",
            ),
            (
                &["-E", "-t", "10.0.0.1:80", "--enat"],
                "option --enat is not allowed with -E/--edit-service",
            ),
            (
                &["-d", "-t", "10.0.0.1:80", "-r", "10.0.1.1", "--enat"],
                "option --enat is not allowed with -d/--delete-server",
            ),
            (
                &["-L", "--enat"],
                "option --enat is not allowed with -L/--list",
            ),
            (
                &["--flush-conns", "-t", "10.0.0.1:80", "--enat"],
                "option --enat is not allowed with --flush-conns",
            ),
        ] {
            let got = err(args);
            assert!(
                got.contains(want),
                "args {args:?}: got {got:?}, want {want:?}"
            );
        }
        // -S writes --enat where -m would be; -R reads it back.
        assert_eq!(
            parse_restore_line("-a -t 10.0.0.1:80 -r 10.0.1.1:80 --enat -w 1").unwrap(),
            run(&[
                "-a",
                "-t",
                "10.0.0.1:80",
                "-r",
                "10.0.1.1:80",
                "--enat",
                "-w",
                "1"
            ])
            .ok()
        );
    }

    #[test]
    fn drain() {
        let key = DestKey {
            addr: "10.0.1.1".parse().unwrap(),
            port: 80,
        };
        assert_eq!(
            run(&["-d", "-t", "10.0.0.1:80", "-r", "10.0.1.1", "--drain", "30"]).unwrap(),
            Command::DrainServer(tcp("10.0.0.1", 80), key, 30)
        );
        assert_eq!(
            run(&[
                "--drain",
                "86400",
                "--delete-server",
                "-t",
                "10.0.0.1:80",
                "-r",
                "10.0.1.1:80"
            ])
            .unwrap(),
            Command::DrainServer(tcp("10.0.0.1", 80), key, MAX_DRAIN)
        );
        assert_eq!(
            run(&[
                "-d",
                "-f",
                "6",
                "-6",
                "-r",
                "[2001:db8:1::2]:8080",
                "--drain",
                "1"
            ])
            .unwrap(),
            Command::DrainServer(
                ServiceKey::fwmark6(6),
                DestKey {
                    addr: "2001:db8:1::2".parse().unwrap(),
                    port: 8080
                },
                1
            )
        );
        // Without --drain, -d deletes at once, as before.
        assert_eq!(
            run(&["-d", "-t", "10.0.0.1:80", "-r", "10.0.1.1"]).unwrap(),
            Command::DeleteServer(tcp("10.0.0.1", 80), key)
        );
        let d = |v: &str| err(&["-d", "-t", "10.0.0.1:80", "-r", "10.0.1.1", "--drain", v]);
        assert_eq!(
            d("0"),
            "--drain 0 would not drain: give 1-86400 seconds, or leave --drain out to \
             delete the real server at once"
        );
        assert_eq!(d("00"), d("0"));
        for v in ["86401", "4294967296", "x", "1.5", "+5", ""] {
            assert_eq!(
                d(v),
                format!("invalid drain time (seconds) '{v}' (expected a number 1-86400)")
            );
        }
        assert!(d("-5").contains("unexpected argument '-5'"));
        for (args, want) in [
            (
                &["-a", "-t", "10.0.0.1:80", "-r", "10.0.1.1", "--drain", "5"][..],
                "option --drain is not allowed with -a/--add-server",
            ),
            (
                &["-e", "-t", "10.0.0.1:80", "-r", "10.0.1.1", "--drain", "5"],
                "option --drain is not allowed with -e/--edit-server",
            ),
            (
                &["-D", "-t", "10.0.0.1:80", "--drain", "5"],
                "option --drain is not allowed with -D/--delete-service",
            ),
            (
                &["--flush-conns", "-t", "10.0.0.1:80", "--drain", "5"],
                "option --drain is not allowed with --flush-conns",
            ),
            (
                &["-L", "--drain", "5"],
                "option --drain is not allowed with -L/--list",
            ),
            (
                &["-d", "-t", "10.0.0.1:80", "--drain", "5"],
                "-d/--delete-server needs a real server: -r ADDR[:PORT]",
            ),
            (
                &["-d", "-t", "10.0.0.1:80", "-r", "10.0.1.1", "--drain"],
                "a value is required",
            ),
            (
                &[
                    "-d",
                    "-t",
                    "10.0.0.1:80",
                    "-r",
                    "10.0.1.1",
                    "--drain",
                    "5",
                    "--drain",
                    "6",
                ],
                "cannot be used multiple times",
            ),
        ] {
            let got = err(args);
            assert!(
                got.contains(want),
                "args {args:?}: got {got:?}, want {want:?}"
            );
            assert!(
                !got.contains('\n'),
                "multi-line error for {args:?}: {got:?}"
            );
        }
        // A drain is a -d: -R takes it.
        assert_eq!(
            parse_restore_line("-d -t 10.0.0.1:80 -r 10.0.1.1 --drain 30").unwrap(),
            Some(Command::DrainServer(tcp("10.0.0.1", 80), key, 30))
        );
    }

    #[test]
    fn tunnel_options() {
        let tun = |extra: &[&str]| {
            let mut args = vec!["-a", "-t", "10.0.0.1:80", "-r", "10.0.1.1", "-i"];
            args.extend_from_slice(extra);
            match run(&args) {
                Ok(Command::AddServer(_, d)) => Ok(d.tunnel),
                Ok(c) => panic!("{c:?}"),
                Err(e) => Err(e),
            }
        };
        let t = |kind, port, flags| Ok(TunnelOpts { kind, port, flags });
        assert_eq!(tun(&[]), t(0, 0, 0));
        assert_eq!(tun(&["--tun-type", "ipip"]), t(0, 0, 0));
        assert_eq!(
            tun(&["--tun-type", "gue", "--tun-port", "6080"]),
            t(1, 6080, 0)
        );
        assert_eq!(
            tun(&["--tun-type", "gue", "--tun-port", "6080", "--tun-csum"]),
            t(1, 6080, 1)
        );
        assert_eq!(
            tun(&["--tun-type", "gue", "--tun-port", "1", "--tun-remcsum"]),
            t(1, 1, 2)
        );
        assert_eq!(tun(&["--tun-type", "gre", "--tun-csum"]), t(2, 0, 1));
        assert_eq!(tun(&["--tun-type", "gre", "--tun-nocsum"]), t(2, 0, 0));
        let bad = |extra: &[&str], want: &str| {
            let e = tun(extra).unwrap_err();
            assert!(e.contains(want), "{extra:?}: {e}");
        };
        bad(&["--tun-type", "gue"], "supply the 'tun-port' option");
        bad(
            &["--tun-type", "gre", "--tun-port", "5"],
            "illegal 'tun-port' option with the 'gre'",
        );
        bad(&["--tun-csum"], "illegal 'tun-csum' option with the 'ipip'");
        bad(
            &["--tun-type", "gre", "--tun-remcsum"],
            "illegal 'tun-remcsum'",
        );
        bad(&["--tun-type", "foo"], "illegal tunnel type 'foo'");
        bad(
            &["--tun-type", "gue", "--tun-port", "0"],
            "invalid tun-port",
        );
        bad(&["--tun-csum", "--tun-nocsum"], "cannot be used");
        let e = run(&[
            "-a",
            "-t",
            "10.0.0.1:80",
            "-r",
            "10.0.1.1",
            "-m",
            "--tun-type",
            "gre",
        ]);
        assert!(e
            .unwrap_err()
            .contains("conflict with the forwarding method"));
        assert!(list_opts(&["-L", "-n", "--tun-info"]).tun_info);
    }

    #[test]
    fn set_options() {
        assert_eq!(
            run(&["--set-option", "expire_nodest_conn=1"]).unwrap(),
            Command::SetOptions(vec![(8, 1)])
        );
        assert_eq!(
            run(&[
                "--set-option",
                "expire_quiescent_template=1",
                "--set-option",
                "expire_nodest_conn=0"
            ])
            .unwrap(),
            Command::SetOptions(vec![(9, 1), (8, 0)])
        );
        let err = |args: &[&str]| run(args).unwrap_err();
        // A choice takes its names or their numbers.
        assert_eq!(
            run(&["--set-option", "vip_guard=reject"]).unwrap(),
            Command::SetOptions(vec![(17, 2)])
        );
        assert_eq!(
            run(&["--set-option", "vip_guard=1"]).unwrap(),
            Command::SetOptions(vec![(17, 1)])
        );
        assert_eq!(
            err(&["--set-option", "vip_guard=on"]),
            "invalid vip_guard 'on' (expected off, drop, reject or a number 0-2)"
        );
        assert!(err(&["--set-option", "nope=1"])
            .starts_with("unknown setting 'nope' (settings: expire_nodest_conn, "));
        assert!(err(&["--set-option", "expire_nodest_conn"]).contains("NAME=VALUE"));
        assert_eq!(
            err(&["--set-option", "expire_nodest_conn=2"]),
            "invalid expire_nodest_conn '2' (expected a number 0-1)"
        );
        assert!(err(&[
            "--set-option",
            "expire_nodest_conn=1",
            "--set-option",
            "expire_nodest_conn=0"
        ])
        .contains("twice"));
        assert_eq!(list_opts(&["-L", "--options"]).mode, ListMode::Options);
        assert!(list_opts(&["-L", "--options", "--json"]).json);
        assert!(err(&["-L", "--options", "-t", "10.0.0.1:80"])
            .contains("not allowed with -L --options"));
        assert!(err(&["-L", "--options", "--timeout"]).contains("cannot be used"));
        // FullNAT's local port range, through the settings table.
        assert_eq!(
            run(&[
                "--set-option",
                "fullnat_port_min=10000",
                "--set-option",
                "fullnat_port_max=60000"
            ])
            .unwrap(),
            Command::SetOptions(vec![(18, 10000), (19, 60000)])
        );
        assert_eq!(
            run(&["--set-option", "fullnat_port_max=1"]).unwrap(),
            Command::SetOptions(vec![(19, 1)])
        );
        assert_eq!(
            run(&[
                "--set-option",
                "fullnat_port_min=5",
                "--set-option",
                "fullnat_port_max=5"
            ])
            .unwrap(),
            Command::SetOptions(vec![(18, 5), (19, 5)])
        );
        assert_eq!(
            err(&["--set-option", "fullnat_port_min=0"]),
            "invalid fullnat_port_min '0' (expected a number 1-65535)"
        );
        assert_eq!(
            err(&["--set-option", "fullnat_port_max=65536"]),
            "invalid fullnat_port_max '65536' (expected a number 1-65535)"
        );
        assert_eq!(
            err(&[
                "--set-option",
                "fullnat_port_max=40000",
                "--set-option",
                "fullnat_port_min=50000"
            ]),
            "fullnat_port_min 50000 is above fullnat_port_max 40000: the local port range \
             would be empty"
        );
    }

    #[test]
    fn help_and_version() {
        let Ok(Invocation::Help(h)) = parse(["rvsadm", "-h"]) else {
            panic!()
        };
        for opt in [
            "--add-service",
            "--edit-service",
            "--delete-service",
            "--clear",
            "--add-server",
            "--edit-server",
            "--delete-server",
            "--list",
            "--tcp-service",
            "--udp-service",
            "--sctp-service",
            "--scheduler",
            "--persistent",
            "--netmask",
            "--real-server",
            "--gatewaying",
            "--ipip",
            "--masquerading",
            "--weight",
            "--u-threshold",
            "--l-threshold",
            "--numeric",
            "--json",
            "--zero",
            "--set",
            "--connection",
            "--timeout",
            "--stats",
            "--rate",
            "--exact",
            "--fwmark-service",
            "--sched-flags",
            "--ops",
            "--save",
            "--restore",
            "--tun-type",
            "--version",
            "--help",
            "/etc/services",
        ] {
            assert!(h.contains(opt), "help lacks {opt}");
        }
        assert!(matches!(
            parse(["rvsadm", "--help"]),
            Ok(Invocation::Help(_))
        ));
        // ipvsadm's -v, which scripts probe with.
        assert!(matches!(
            parse(["rvsadm", "-v"]),
            Ok(Invocation::Version(_))
        ));
        let Ok(Invocation::Version(v)) = parse(["rvsadm", "-V"]) else {
            panic!()
        };
        assert!(v.starts_with("rvsadm "), "{v}");
    }

    #[test]
    fn rejected_command_lines() {
        let cases: &[(&[&str], &str)] = &[
            (&["-A"], "-A/--add-service needs a service: -t ADDR:PORT, -u ADDR:PORT, --sctp-service ADDR:PORT or -f MARK"),
            (&["-A", "-t", "10.0.0.1:80", "-r", "10.0.1.1"], "option -r/--real-server is not allowed with -A/--add-service"),
            (&["-A", "-t", "10.0.0.1"], "zero port specified for non-persistent service TCP 10.0.0.1:0: give a port or -p"),
            (&["-A", "-t", "10.0.0.256:80"], "invalid service address '10.0.0.256:80': '10.0.0.256' is not a valid IPv4 address"),
            (&["-A", "-t", "10.0.0.1:no_such_service"], "invalid service address '10.0.0.1:no_such_service': invalid port 'no_such_service': not a number, nor a tcp service in /etc/services"),
            (&["-A", "-t", "10.0.0.1:65536"], "invalid port '65536'"),
            (&["-A", "-t", "2001:db8::1:80:x"], "written [ADDR]:PORT"),
            (&["-A", "-t", "[2001:db8::1:80"], "missing ']'"),
            (&["-A", "-t", "[10.0.0.1]:80"], "is not a numeric IPv6 address"),
            (&["-A", "-t", "10.0.0.1:80", "-s", "averyveryverylongname"], "invalid scheduler name 'averyveryverylongname' (1-15 characters)"),
            (&["-A", "-t", "10.0.0.1:80", "-s", "r r"], "letters, digits"),
            (&["-A", "-t", "10.0.0.1:80", "-p", "0"], "invalid persistence timeout '0' (expected a number 1-2678400)"),
            (&["-A", "-t", "10.0.0.1:80", "-p", "-5"], "unexpected argument '-5'"),
            (&["-A", "-t", "10.0.0.1:80", "-p", "-M", "255.0.255.0"], "not contiguous"),
            (&["-A", "-t", "10.0.0.1:80", "-M", "64"], "invalid netmask '64'"),
            (&["-A", "-t", "[::1]:80", "-M", "129"], "invalid IPv6 netmask (prefix length) '129' (expected a number 1-128)"),
            (&["-A", "-t", "10.0.0.1:80", "-u", "10.0.0.1:80"], "cannot be used with"),
            (&["-A", "-D", "-t", "10.0.0.1:80"], "cannot be used with"),
            (&["-a", "-t", "10.0.0.1:80"], "-a/--add-server needs a real server: -r ADDR[:PORT]"),
            (&["-a", "-t", "10.0.0.1:80", "-r", "10.0.1.1:8080"], "port mapping requires masquerading (-m) or --fullnat: real server port 8080 differs from service port 80 but direct-routing (-g) forwarding keeps the port"),
            (&["-a", "-t", "10.0.0.1:80", "-r", "10.0.1.1:8080", "-i"], "port mapping requires masquerading (-m) or --fullnat: real server port 8080 differs from service port 80 but tunnel (-i) forwarding keeps the port"),
            (&["-a", "-t", "10.0.0.1:80", "-r", "10.0.1.1", "-m", "-g"], "cannot be used with"),
            (&["-a", "-t", "10.0.0.1:80", "-r", "10.0.1.1", "-m", "--fullnat"], "cannot be used with"),
            (&["-a", "-t", "10.0.0.1:80", "-r", "10.0.1.1:8080", "--enat"], "port mapping requires masquerading (-m) or --fullnat: real server port 8080 differs from service port 80 but ENAT (--enat) forwarding keeps the port"),
            (&["-a", "-t", "10.0.0.1:80", "-r", "10.0.1.1", "--fullnat", "--enat"], "cannot be used with"),
            (&["-a", "-t", "10.0.0.1:80", "-r", "10.0.1.1", "-w", "70000"], "invalid weight '70000' (expected a number 0-65535)"),
            (&["-a", "-t", "10.0.0.1:80", "-r", "10.0.1.1", "-w", "x"], "invalid weight 'x'"),
            (&["-a", "-t", "10.0.0.1:80", "-r", "10.0.1.1", "-x", "5", "-y", "10"], "lower threshold 10 is above upper threshold 5"),
            (&["-a", "-t", "10.0.0.1:80", "-r", "[::2]:80", "-m"], "differ in address family; that is allowed only for tunnelling (-i)"),
            (&["-a", "-t", "10.0.0.1:80", "-r", "10.0.1.1", "-s", "rr"], "option -s/--scheduler is not allowed with -a/--add-server"),
            (&["-d", "-t", "10.0.0.1:80", "-r", "10.0.1.1", "-w", "2"], "option -w/--weight is not allowed with -d/--delete-server"),
            (&["-C", "-t", "10.0.0.1:80"], "option -t/--tcp-service is not allowed with -C/--clear"),
            (&["-D", "-t", "10.0.0.1:80", "-n"], "option -n/--numeric is not allowed with -D/--delete-service"),
            (&["-L", "--json", "-r", "10.0.1.1"], "option -r/--real-server is not allowed with -L/--list"),
            (&["-s", "rr"], "option -s/--scheduler is not allowed with -L/--list (the default command)"),
            (&["-Z", "-r", "10.0.1.1"], "option -r/--real-server is not allowed with -Z/--zero"),
            (&["-Z", "-n"], "option -n/--numeric is not allowed with -Z/--zero"),
            (&["-Z", "-L"], "cannot be used with"),
            (&["-Z", "-c"], "option -c/--connection is not allowed with -Z/--zero"),
            (&["--set", "900", "120"], "3 values required"),
            (&["--set", "900", "120", "x"], "invalid udp timeout 'x' (expected a number 0-2678400)"),
            (&["--set", "2678401", "1", "1"], "invalid tcp timeout '2678401'"),
            (&["--set", "1", "-1", "1"], "unexpected argument '-1'"),
            (&["--set", "1", "2", "3", "-t", "10.0.0.1:80"], "option -t/--tcp-service is not allowed with --set"),
            (&["--set", "1", "2", "3", "-L"], "cannot be used with"),
            (&["--stats", "-A", "-t", "10.0.0.1:80"], "option --stats is not allowed with -A/--add-service"),
            (&["-L", "--stats", "--rate"], "cannot be used with"),
            (&["-L", "-c", "--timeout"], "cannot be used with"),
            (&["-L", "-c", "--stats"], "cannot be used with"),
            (&["-L", "-c", "-t", "10.0.0.1:80"], "option -t/--tcp-service is not allowed with -L -c/--connection"),
            (&["-L", "--timeout", "-u", "10.0.0.1:53"], "option -u/--udp-service is not allowed with -L --timeout"),
            (&["-C", "--exact"], "option -X/--exact is not allowed with -C/--clear"),
            (&["-Y"], "unexpected argument '-Y'"),
            (&["--bogus"], "unexpected argument '--bogus'"),
            (&["-A", "-A", "-t", "10.0.0.1:80"], "cannot be used multiple times"),
            (&["-A", "-t"], "a value is required"),
            (&["extra"], "unexpected argument 'extra'"),
        ];
        for (args, want) in cases {
            let got = err(args);
            assert!(
                got.contains(want),
                "args {args:?}: got {got:?}, want it to contain {want:?}"
            );
            assert!(
                !got.contains('\n'),
                "multi-line error for {args:?}: {got:?}"
            );
        }
    }

    #[test]
    fn fwmark_sched_flags_ops_save_restore() {
        let Command::AddService(s) =
            run(&["-A", "-f", "1", "-s", "sh", "-b", "sh-fallback,sh-port"]).unwrap()
        else {
            panic!()
        };
        assert_eq!(s.key, ServiceKey::fwmark(1));
        assert_eq!(s.sched_flags, 0x18);
        assert!(!s.one_packet);
        let Command::AddService(s) = run(&["-A", "-u", "10.0.0.1:53", "-s", "rr", "-o"]).unwrap()
        else {
            panic!()
        };
        assert_eq!(s.flags(), uapi::RVS_SVC_F_ONEPACKET);
        let Command::EditService(s) = run(&[
            "-E",
            "--fwmark-service",
            "4294967295",
            "-p",
            "60",
            "--ops",
            "-s",
            "mh",
            "--sched-flags",
            "mh-port",
        ])
        .unwrap() else {
            panic!()
        };
        assert_eq!(s.flags(), 0x1 | 0x4 | 0x10);
        assert_eq!(s.key.fwmark, u32::MAX);
        assert_eq!(
            run(&["-b", "flag-1,flag-2,flag-3", "-A", "-t", "10.0.0.1:80"]).map(|c| match c {
                Command::AddService(s) => s.sched_flags,
                _ => 0,
            }),
            Ok(0x38)
        );
        // Real servers of a fwmark service: port 0 (keep the packet's) or
        // any port, with any forwarding method.
        let Command::AddServer(k, d) = run(&["-a", "-f", "1", "-r", "10.0.1.1", "-g"]).unwrap()
        else {
            panic!()
        };
        assert_eq!((k.fwmark, d.key.port), (1, 0));
        let Command::AddServer(_, d) =
            run(&["-a", "-f", "1", "-r", "10.0.1.1:8080", "-g"]).unwrap()
        else {
            panic!()
        };
        assert_eq!(d.key.port, 8080);
        assert_eq!(
            run(&["-D", "-f", "9"]).unwrap(),
            Command::DeleteService(ServiceKey::fwmark(9))
        );
        assert_eq!(run(&["-S"]).unwrap(), Command::Save);
        assert_eq!(run(&["-S", "-n"]).unwrap(), Command::Save);
        assert_eq!(run(&["--save"]).unwrap(), Command::Save);
        assert_eq!(run(&["-R"]).unwrap(), Command::Restore { atomic: false });
        assert_eq!(
            run(&["-R", "--atomic"]).unwrap(),
            Command::Restore { atomic: true }
        );
        assert_eq!(
            run(&["-A", "-t", "10.0.0.1:80", "--atomic"]).unwrap_err(),
            "option --atomic is not allowed with -A/--add-service"
        );
        assert_eq!(
            run(&[
                "-a",
                "-u",
                "10.0.0.1:53",
                "-r",
                "10.0.1.3:53",
                "-i",
                "-w",
                "2",
                "--tun-type",
                "ipip"
            ]),
            run(&[
                "-a",
                "-u",
                "10.0.0.1:53",
                "-r",
                "10.0.1.3:53",
                "-i",
                "-w",
                "2"
            ])
        );
        for (args, want) in [
            (&["-A", "-f", "0"][..], "invalid fwmark value '0' (expected a number 1-4294967295)"),
            (&["-A", "-f", "x"], "invalid fwmark value 'x'"),
            (&["-A", "-f", "1", "-t", "10.0.0.1:80"], "cannot be used with"),
            (&["-A", "-t", "10.0.0.1:80", "-s", "rr", "-b", "sh-port"], "incompatible scheduler flag 'sh-port': it needs scheduler sh, not rr"),
            (&["-A", "-t", "10.0.0.1:80", "-b", "mh-fallback"], "it needs scheduler mh, not wlc"),
            (&["-A", "-t", "10.0.0.1:80", "-s", "sh", "-b", "sh-port,bogus"], "invalid scheduler flag 'bogus' (expected flag-1, flag-2, flag-3, sh-fallback, sh-port, mh-fallback, mh-port)"),
            (&["-A", "-t", "10.0.0.1:80", "-s", "sh", "-b", ""], "invalid scheduler flag ''"),
            (&["-A", "-t", "10.0.0.1:80", "-o"], "one-packet scheduling (-o) is only for UDP services, not TCP 10.0.0.1:80"),
            (&["-a", "-t", "10.0.0.1:80", "-r", "10.0.1.1", "-o"], "option -o/--ops is not allowed with -a/--add-server"),
            (&["-S", "-t", "10.0.0.1:80"], "option -t/--tcp-service is not allowed with -S/--save"),
            (&["-R", "-n"], "option -n/--numeric is not allowed with -R/--restore"),
            (&["-S", "-R"], "cannot be used with"),
            (&["-L", "-c", "-f", "3"], "option -f/--fwmark-service is not allowed with -L -c/--connection"),
            (&["-a", "-t", "10.0.0.1:80", "-r", "10.0.1.1", "-m", "--tun-type", "ipip"], "tunnel options conflict with the forwarding method"),
        ] {
            let got = err(args);
            assert!(got.contains(want), "args {args:?}: got {got:?}, want {want:?}");
        }
    }

    #[test]
    fn ipv6_fwmark_services() {
        // -6 makes a mark service IPv6, in either order, as ipvsadm's -f N -6.
        let Command::AddService(s) =
            run(&["-A", "-f", "6", "-6", "-s", "rr", "-p", "60", "-M", "64"]).unwrap()
        else {
            panic!()
        };
        assert_eq!(s.key, ServiceKey::fwmark6(6));
        assert_eq!(s.key.af(), uapi::linux::AF_INET6);
        assert_eq!(s.key.to_string(), "FWM 6 IPv6");
        assert_eq!(s.netmask, Netmask(64));
        let Command::AddService(s) = run(&["-A", "--ipv6", "--fwmark-service", "6"]).unwrap()
        else {
            panic!()
        };
        assert_eq!((s.key, s.netmask), (ServiceKey::fwmark6(6), Netmask(128)));
        assert_ne!(ServiceKey::fwmark6(6), ServiceKey::fwmark(6));
        assert_eq!(ServiceKey::fwmark(6).af(), uapi::linux::AF_INET);
        // Real servers: IPv6, any port (0 keeps the packet's).
        let Command::AddServer(k, d) =
            run(&["-a", "-f", "6", "-6", "-r", "[2001:db8:1::2]:8080", "-m"]).unwrap()
        else {
            panic!()
        };
        assert_eq!(k, ServiceKey::fwmark6(6));
        assert_eq!(
            (d.key.addr, d.key.port),
            ("2001:db8:1::2".parse().unwrap(), 8080)
        );
        let Command::AddServer(_, d) =
            run(&["-a", "-f", "6", "-6", "-r", "2001:db8:1::3", "-g"]).unwrap()
        else {
            panic!()
        };
        assert_eq!(d.key.port, 0);
        for (args, cmd) in [
            (
                &["-D", "-f", "6", "-6"][..],
                Command::DeleteService(ServiceKey::fwmark6(6)),
            ),
            (
                &["-Z", "-f", "6", "-6"],
                Command::Zero(Some(ServiceKey::fwmark6(6))),
            ),
        ] {
            assert_eq!(run(args).unwrap(), cmd, "{args:?}");
        }
        let Command::DeleteServer(k, d) =
            run(&["-d", "-f", "6", "-6", "-r", "[2001:db8:1::2]:8080"]).unwrap()
        else {
            panic!()
        };
        assert_eq!((k, d.port), (ServiceKey::fwmark6(6), 8080));
        assert_eq!(
            list_opts(&["-L", "-n", "-f", "6", "-6"]).service,
            Some(ServiceKey::fwmark6(6))
        );
        // What -S writes (ipvsadm-save's form) reads back.
        let Some(Command::AddService(s)) = parse_restore_line("-A -f 6 -6 -s rr").unwrap() else {
            panic!()
        };
        assert_eq!(s.key, ServiceKey::fwmark6(6));
        let Some(Command::AddServer(k, d)) =
            parse_restore_line("-a -f 6 -6 -r [2001:db8:1::2]:8080 -m -w 1").unwrap()
        else {
            panic!()
        };
        assert_eq!(
            (k, d.forward, d.weight),
            (ServiceKey::fwmark6(6), Forward::Masq, 1)
        );
        for (args, want) in [
            (&["-A", "-t", "10.0.0.1:80", "-6"][..], "option -6/--ipv6 needs -f/--fwmark-service: it makes a firewall-mark service IPv6 (-t, -u and --sctp-service take the family from their address)"),
            (&["-A", "-u", "[2001:db8::1]:53", "-6"], "option -6/--ipv6 needs -f/--fwmark-service"),
            (&["-L", "-n", "-6"], "option -6/--ipv6 needs -f/--fwmark-service"),
            (&["-6"], "option -6/--ipv6 needs -f/--fwmark-service"),
            (&["-C", "-6"], "option -6/--ipv6 is not allowed with -C/--clear"),
            (&["-S", "-6"], "option -6/--ipv6 is not allowed with -S/--save"),
            (&["-A", "-f", "6", "-6", "-p", "-M", "255.255.255.0"], "invalid IPv6 netmask (prefix length)"),
            (&["-a", "-f", "6", "-6", "-r", "10.0.1.1", "-m"], "real server 10.0.1.1 and service FWM 6 IPv6 differ in address family; that is allowed only for tunnelling (-i)"),
            (&["-a", "-f", "6", "-r", "[2001:db8::2]:80", "-m"], "real server 2001:db8::2 and service FWM 6 differ in address family"),
        ] {
            let got = err(args);
            assert!(got.contains(want), "args {args:?}: got {got:?}, want {want:?}");
            assert!(!got.contains('\n'), "multi-line error for {args:?}: {got:?}");
        }
        assert!(parse_restore_line("-A -t 10.0.0.1:80 -6").is_err());
    }

    fn sctp(addr: &str, port: u16) -> ServiceKey {
        ServiceKey::new(Protocol::Sctp, addr.parse().unwrap(), port)
    }

    #[test]
    fn sctp_services() {
        // ipvsadm 1.31's --sctp-service (no short form), wherever -t and -u go.
        let Command::AddService(s) =
            run(&["-A", "--sctp-service", "10.0.0.1:3868", "-s", "rr"]).unwrap()
        else {
            panic!()
        };
        assert_eq!(s.key, sctp("10.0.0.1", 3868));
        assert_eq!(s.key.protocol.number(), 132);
        assert_eq!(s.key.to_string(), "SCTP 10.0.0.1:3868");
        let Command::EditService(s) =
            run(&["-E", "--sctp-service", "[2001:db8::1]:0", "-p", "-M", "64"]).unwrap()
        else {
            panic!()
        };
        assert_eq!(
            (s.key, s.persistent, s.netmask),
            (sctp("2001:db8::1", 0), Some(300), Netmask(64))
        );
        assert_eq!(
            run(&["-D", "--sctp-service", "10.0.0.1:3868"]).unwrap(),
            Command::DeleteService(sctp("10.0.0.1", 3868))
        );
        let Command::AddServer(k, d) = run(&[
            "-a",
            "--sctp-service",
            "10.0.0.1:3868",
            "-r",
            "10.0.1.1:3869",
            "-m",
            "-w",
            "2",
        ])
        .unwrap() else {
            panic!()
        };
        assert_eq!((k, d.key.port, d.weight), (sctp("10.0.0.1", 3868), 3869, 2));
        let Command::EditServer(_, d) = run(&[
            "-e",
            "--sctp-service",
            "10.0.0.1:3868",
            "-r",
            "10.0.1.1",
            "-i",
        ])
        .unwrap() else {
            panic!()
        };
        assert_eq!((d.key.port, d.forward), (3868, Forward::Tunnel));
        assert_eq!(
            run(&["-d", "--sctp-service", "10.0.0.1:3868", "-r", "10.0.1.1"]).unwrap(),
            Command::DeleteServer(
                sctp("10.0.0.1", 3868),
                DestKey {
                    addr: "10.0.1.1".parse().unwrap(),
                    port: 3868
                }
            )
        );
        assert_eq!(
            list_opts(&["-L", "-n", "--sctp-service", "10.0.0.1:3868"]).service,
            Some(sctp("10.0.0.1", 3868))
        );
        let o = list_opts(&["-L", "--stats", "--sctp-service", "10.0.0.1:3868"]);
        assert_eq!(o.mode, ListMode::Stats);
        assert_eq!(
            run(&["-Z", "--sctp-service", "10.0.0.1:3868"]).unwrap(),
            Command::Zero(Some(sctp("10.0.0.1", 3868)))
        );
        // The lines -S writes for SCTP (ipvsadm-save's too) are restored.
        assert_eq!(
            parse_restore_line("-A --sctp-service 10.0.0.1:3868 -s rr").unwrap(),
            run(&["-A", "--sctp-service", "10.0.0.1:3868", "-s", "rr"]).ok()
        );
        let Some(Command::AddServer(k, d)) =
            parse_restore_line("-a --sctp-service 10.0.0.1:3868 -r 10.0.1.1:3868 -m -w 1").unwrap()
        else {
            panic!()
        };
        assert_eq!(
            (k, d.forward, d.weight),
            (sctp("10.0.0.1", 3868), Forward::Masq, 1)
        );
        for (args, want) in [
            (&["-A", "-t", "10.0.0.1:80", "--sctp-service", "10.0.0.1:80"][..], "cannot be used with"),
            (&["-A", "--sctp-service", "10.0.0.1:80", "-u", "10.0.0.1:80"], "cannot be used with"),
            (&["-A", "--sctp-service", "10.0.0.1:80", "-f", "1"], "cannot be used with"),
            (&["-A", "--sctp-service", "10.0.0.1:80", "--sctp-service", "10.0.0.2:80"], "cannot be used multiple times"),
            (&["-A", "--sctp-service"], "a value is required"),
            (&["-A", "--sctp-service", "10.0.0.1"], "zero port specified for non-persistent service SCTP 10.0.0.1:0: give a port or -p"),
            (&["-A", "--sctp-service", "10.0.0.1:no_such_service"], "invalid service address '10.0.0.1:no_such_service': invalid port 'no_such_service': not a number, nor a sctp service in /etc/services"),
            (&["-A", "--sctp-service", "10.0.0.1:3868", "-o"], "one-packet scheduling (-o) is only for UDP services, not SCTP 10.0.0.1:3868"),
            (&["-A", "--sctp-service", "10.0.0.1:3868", "-6"], "option -6/--ipv6 needs -f/--fwmark-service"),
            (&["-a", "--sctp-service", "10.0.0.1:3868", "-r", "10.0.1.1:3869"], "port mapping requires masquerading (-m)"),
            (&["-C", "--sctp-service", "10.0.0.1:3868"], "option --sctp-service is not allowed with -C/--clear"),
            (&["-S", "--sctp-service", "10.0.0.1:3868"], "option --sctp-service is not allowed with -S/--save"),
            (&["--set", "1", "2", "3", "--sctp-service", "10.0.0.1:3868"], "option --sctp-service is not allowed with --set"),
            (&["-L", "-c", "--sctp-service", "10.0.0.1:3868"], "option --sctp-service is not allowed with -L -c/--connection"),
            (&["-L", "--timeout", "--sctp-service", "10.0.0.1:3868"], "option --sctp-service is not allowed with -L --timeout"),
            (&["-L", "--options", "--sctp-service", "10.0.0.1:3868"], "option --sctp-service is not allowed with -L --options"),
            (&["-C", "-s", "rr", "--sctp-service", "10.0.0.1:3868"], "option --sctp-service is not allowed with -C/--clear"),
            (&["-Z", "--sctp-service", "10.0.0.1:3868", "-r", "10.0.1.1"], "option -r/--real-server is not allowed with -Z/--zero"),
        ] {
            let got = err(args);
            assert!(got.contains(want), "args {args:?}: got {got:?}, want {want:?}");
            assert!(!got.contains('\n'), "multi-line error for {args:?}: {got:?}");
        }
        // ipvsadm has no short form; nothing else answers to "sctp".
        assert!(err(&["-A", "--sctp", "10.0.0.1:80"]).contains("unexpected argument '--sctp'"));
        assert!(parse_restore_line("-A --sctp-service 10.0.0.1:3868 -6").is_err());
    }

    #[test]
    fn restore_lines() {
        assert_eq!(parse_restore_line("").unwrap(), None);
        assert_eq!(parse_restore_line("   \t").unwrap(), None);
        assert_eq!(parse_restore_line("# saved by rvsadm").unwrap(), None);
        assert_eq!(
            parse_restore_line("-A -t 10.0.0.1:80 -s rr\n").unwrap(),
            run(&["-A", "-t", "10.0.0.1:80", "-s", "rr"]).ok()
        );
        assert_eq!(
            parse_restore_line("-a  -t 10.0.0.1:80   -r 10.0.1.1:80 -m -w 1").unwrap(),
            run(&[
                "-a",
                "-t",
                "10.0.0.1:80",
                "-r",
                "10.0.1.1:80",
                "-m",
                "-w",
                "1"
            ])
            .ok()
        );
        assert_eq!(parse_restore_line("-C").unwrap(), Some(Command::Clear));
        for bad in ["-L -n", "-S", "-R", "-h", "", "-A -t"] {
            if bad.is_empty() {
                continue;
            }
            assert!(parse_restore_line(bad).is_err(), "{bad}");
        }
        assert!(parse_restore_line("-L -n")
            .unwrap_err()
            .0
            .contains("only commands that change the rules"));
    }

    #[test]
    fn completions_flag() {
        for shell in completions::SHELLS {
            let Ok(Invocation::Completions(script)) = parse(["rvsadm", "--completions", shell])
            else {
                panic!("{shell}")
            };
            assert!(script.contains("--add-service"), "{shell}");
        }
        assert!(matches!(
            parse(["rvsadm", "-A", "--completions", "zsh"]),
            Ok(Invocation::Completions(_))
        ));
        assert_eq!(
            parse(["rvsadm", "--completions", "fish"]),
            Err(UsageError(
                "--completions takes a shell: bash or zsh, not 'fish'".into()
            ))
        );
        assert!(parse(["rvsadm", "--completions"]).is_err());
        assert!(!parse(["rvsadm", "-h"])
            .map(|i| format!("{i:?}"))
            .unwrap()
            .contains("--completions"));
        assert!(parse_restore_line("--completions bash").is_err());
    }

    /// Names as a test table, not the system's.
    struct Table;

    impl Resolve for Table {
        fn host_v4(&self, name: &str) -> Option<Ipv4Addr> {
            match name {
                "localhost" => Some(Ipv4Addr::LOCALHOST),
                "lb-1.example" => Some(Ipv4Addr::new(10, 0, 100, 1)),
                _ => None,
            }
        }

        fn service(&self, name: &str, proto: &str) -> Option<u16> {
            match (name, proto) {
                ("http", "tcp") | ("www", "tcp") => Some(80),
                ("domain", _) => Some(53),
                ("diameter", "sctp") => Some(3868),
                _ => None,
            }
        }
    }

    fn num(s: &str) -> Result<(IpAddr, Option<u16>), String> {
        parse_addr_port_with(s, Protocol::Tcp, &Table)
    }

    #[test]
    fn addr_port_forms() {
        assert_eq!(
            num("10.1.2.3:8080").unwrap(),
            ("10.1.2.3".parse().unwrap(), Some(8080))
        );
        assert_eq!(
            num("10.1.2.3").unwrap(),
            ("10.1.2.3".parse().unwrap(), None)
        );
        assert_eq!(
            num("[fe80::1]").unwrap(),
            ("fe80::1".parse().unwrap(), None)
        );
        assert_eq!(
            num("2001:db8::1").unwrap(),
            ("2001:db8::1".parse().unwrap(), None)
        );
        assert!(num("").is_err());
        assert!(num("[::1]x").is_err());
        assert!(num("1.2.3.4:").is_err());
        assert!(num("1.2.3.4:+80").is_err());
    }

    #[test]
    fn addr_port_names_as_ipvsadm() {
        let tcp = |s: &str| parse_addr_port_with(s, Protocol::Tcp, &Table);
        let udp = |s: &str| parse_addr_port_with(s, Protocol::Udp, &Table);
        let lo = IpAddr::V4(Ipv4Addr::LOCALHOST);
        assert_eq!(tcp("localhost:http").unwrap(), (lo, Some(80)));
        assert_eq!(tcp("localhost:www").unwrap(), (lo, Some(80)));
        assert_eq!(tcp("localhost").unwrap(), (lo, None));
        assert_eq!(
            tcp("lb-1.example:80").unwrap(),
            ("10.0.100.1".parse().unwrap(), Some(80))
        );
        assert_eq!(tcp("10.0.0.1:domain").unwrap().1, Some(53));
        assert_eq!(tcp("[2001:db8::1]:http").unwrap().1, Some(80));
        assert_eq!(udp("localhost:domain").unwrap().1, Some(53));
        let e = udp("localhost:http").unwrap_err();
        assert!(e.contains("not a number, nor a udp service"), "{e}");
        // SCTP services' ports are looked up as getservbyname(name, "sctp").
        let sctp = |s: &str| parse_addr_port_with(s, Protocol::Sctp, &Table);
        assert_eq!(sctp("localhost:diameter").unwrap(), (lo, Some(3868)));
        assert_eq!(sctp("[2001:db8::1]:diameter").unwrap().1, Some(3868));
        let e = sctp("localhost:http").unwrap_err();
        assert!(e.contains("not a number, nor a sctp service"), "{e}");
        let e = tcp("localhost:diameter").unwrap_err();
        assert!(e.contains("not a number, nor a tcp service"), "{e}");
        let e = tcp("nosuch.example:80").unwrap_err();
        assert!(
            e.contains("'nosuch.example' is neither a numeric address nor a host name"),
            "{e}"
        );
        // Numeric-looking strings are never looked up.
        let e = tcp("10.0.0.300:80").unwrap_err();
        assert_eq!(e, "'10.0.0.300' is not a valid IPv4 address");
        assert!(tcp("localhost:99999").unwrap_err().contains("0-65535"));
        assert!(tcp("localhost:a b").is_err());
    }

    fn start(args: &[&str]) -> DaemonSpec {
        let mut v = vec!["--start-daemon"];
        v.extend_from_slice(args);
        match run(&v).unwrap() {
            Command::StartDaemon(d) => d,
            c => panic!("{args:?}: {c:?}"),
        }
    }

    #[test]
    fn sync_daemon_commands() {
        // Nothing but the state: what ipvsadm sends, eth0 and syncid 0.
        let ifn = |n: &str| IfName::new(n).unwrap();
        assert_eq!(
            start(&["master"]),
            DaemonSpec {
                state: DaemonState::Master,
                mcast_ifn: ifn("eth0"),
                syncid: 0,
                sync_maxlen: None,
                mcast_group: None,
                mcast_port: None,
                mcast_ttl: None,
            }
        );
        // Every option, with its bounds.
        assert_eq!(
            start(&[
                "backup",
                "--mcast-interface",
                "bond0.12",
                "--syncid",
                "255",
                "--sync-maxlen",
                "65507",
                "--mcast-group",
                "239.255.0.1",
                "--mcast-port",
                "65535",
                "--mcast-ttl",
                "255",
            ]),
            DaemonSpec {
                state: DaemonState::Backup,
                mcast_ifn: ifn("bond0.12"),
                syncid: 255,
                sync_maxlen: Some(65507),
                mcast_group: Some("239.255.0.1".parse().unwrap()),
                mcast_port: Some(65535),
                mcast_ttl: Some(255),
            }
        );
        let d = start(&[
            "master",
            "--syncid",
            "0",
            "--sync-maxlen",
            "1",
            "--mcast-port",
            "1",
            "--mcast-ttl",
            "1",
            "--mcast-group",
            "224.0.0.0",
        ]);
        assert_eq!(
            (
                d.syncid,
                d.sync_maxlen,
                d.mcast_port,
                d.mcast_ttl,
                d.mcast_group
            ),
            (
                0,
                Some(1),
                Some(1),
                Some(1),
                Some("224.0.0.0".parse().unwrap())
            )
        );
        // IPv6 groups, bare (as ipvsadm takes them) or bracketed.
        for g in ["ff02::1:81", "[ff02::1:81]"] {
            assert_eq!(
                start(&["master", "--mcast-group", g]).mcast_group,
                Some("ff02::1:81".parse().unwrap()),
                "{g}"
            );
        }
        assert_eq!(
            run(&["--stop-daemon", "master"]).unwrap(),
            Command::StopDaemon(DaemonState::Master)
        );
        // ipvsadm takes --syncid with --stop-daemon: checked, not kept.
        assert_eq!(
            run(&["--stop-daemon", "backup", "--syncid", "7"]).unwrap(),
            Command::StopDaemon(DaemonState::Backup)
        );
        assert_eq!(list_opts(&["-L", "--daemon"]).mode, ListMode::Daemon);
        let o = list_opts(&["--list", "--daemon", "--json", "-n"]);
        assert_eq!((o.mode, o.json, o.numeric), (ListMode::Daemon, true, true));
        assert_eq!(list_opts(&["--daemon"]).mode, ListMode::Daemon);
        for (args, want) in [
            (&["--start-daemon", "primary"][..], "--start-daemon takes master or backup, not 'primary'"),
            (&["--start-daemon", "primary", "--mcast-interface", "eth0:1"], "--start-daemon takes master or backup, not 'primary'"),
            (&["--start-daemon", "Master"], "--start-daemon takes master or backup, not 'Master'"),
            (&["--stop-daemon", ""], "--stop-daemon takes master or backup, not ''"),
            (&["--start-daemon"], "a value is required for '--start-daemon <STATE>' but none was supplied"),
            (&["--start-daemon", "master", "--syncid", "256"], "invalid syncid '256' (expected a number 0-255)"),
            (&["--start-daemon", "master", "--syncid", "-1"], "unexpected argument '-1' found"),
            (&["--start-daemon", "master", "--syncid", "+1"], "invalid syncid '+1' (expected a number 0-255)"),
            (&["--stop-daemon", "master", "--syncid", "x"], "invalid syncid 'x' (expected a number 0-255)"),
            (&["--start-daemon", "master", "--sync-maxlen", "0"], "invalid sync-maxlen '0' (expected a number 1-65507)"),
            (&["--start-daemon", "master", "--sync-maxlen", "65508"], "invalid sync-maxlen '65508' (expected a number 1-65507)"),
            (&["--start-daemon", "master", "--mcast-port", "0"], "invalid mcast-port '0' (expected a number 1-65535)"),
            (&["--start-daemon", "master", "--mcast-port", "65536"], "invalid mcast-port '65536' (expected a number 1-65535)"),
            (&["--start-daemon", "master", "--mcast-ttl", "0"], "invalid mcast-ttl '0' (expected a number 1-255)"),
            (&["--start-daemon", "master", "--mcast-ttl", "256"], "invalid mcast-ttl '256' (expected a number 1-255)"),
            (&["--start-daemon", "master", "--mcast-group", "10.0.0.1"], "invalid mcast-group '10.0.0.1': not a multicast address (IPv4 224.0.0.0/4, IPv6 ff00::/8)"),
            (&["--start-daemon", "master", "--mcast-group", "240.0.0.1"], "invalid mcast-group '240.0.0.1': not a multicast address (IPv4 224.0.0.0/4, IPv6 ff00::/8)"),
            (&["--start-daemon", "master", "--mcast-group", "2001:db8::1"], "invalid mcast-group '2001:db8::1': not a multicast address (IPv4 224.0.0.0/4, IPv6 ff00::/8)"),
            (&["--start-daemon", "master", "--mcast-group", "sync.example"], "invalid mcast-group 'sync.example': not a numeric IPv4 or IPv6 address"),
            (&["--start-daemon", "master", "--mcast-group", "[224.0.0.81]"], "invalid mcast-group '[224.0.0.81]': not a numeric IPv4 or IPv6 address"),
            (&["--start-daemon", "master", "--mcast-interface", "eth0:1"], "invalid mcast-interface 'eth0:1': interface names have no '/', ':' or white space"),
            (&["--start-daemon", "master", "--mcast-interface", "a-very-long-name"], "invalid mcast-interface 'a-very-long-name': interface names have at most 15 bytes"),
            (&["--start-daemon", "master", "--mcast-interface", ""], "invalid mcast-interface '': it is empty"),
            (&["--stop-daemon", "master", "--mcast-interface", "eth1"], "option --mcast-interface is not allowed with --stop-daemon"),
            (&["--stop-daemon", "master", "--mcast-ttl", "2"], "option --mcast-ttl is not allowed with --stop-daemon"),
            (&["--start-daemon", "master", "-t", "10.0.0.1:80"], "option -t/--tcp-service is not allowed with --start-daemon"),
            (&["--start-daemon", "master", "--json"], "option --json is not allowed with --start-daemon"),
            (&["--start-daemon", "master", "--daemon"], "option --daemon is not allowed with --start-daemon"),
            (&["--start-daemon", "master", "--stop-daemon", "master"], "the argument '--start-daemon <STATE>' cannot be used with '--stop-daemon <STATE>'"),
            (&["--start-daemon", "master", "--start-daemon", "backup"], "the argument '--start-daemon <STATE>' cannot be used multiple times"),
            (&["-A", "-t", "10.0.0.1:80", "--syncid", "1"], "option --syncid is not allowed with -A/--add-service"),
            (&["-L", "--syncid", "1"], "option --syncid is not allowed with -L/--list"),
            (&["--mcast-group", "224.0.0.81"], "option --mcast-group is not allowed with -L/--list (the default command)"),
            (&["-L", "--daemon", "-t", "10.0.0.1:80"], "option -t/--tcp-service is not allowed with -L --daemon"),
            (&["-L", "--daemon", "-f", "1"], "option -f/--fwmark-service is not allowed with -L --daemon"),
            (&["-L", "--daemon", "--stats"], "the argument '--daemon' cannot be used with '--stats'"),
            (&["-L", "--daemon", "-c"], "the argument '--daemon' cannot be used with '--connection'"),
            (&["-S", "--daemon"], "option --daemon is not allowed with -S/--save"),
        ] {
            assert_eq!(err(args), want, "{args:?}");
        }
        // -R takes no daemon command (-S writes none).
        for line in ["--start-daemon master", "--stop-daemon backup"] {
            assert_eq!(
                parse_restore_line(line).unwrap_err().0,
                "only commands that change the rules (-A -E -D -C -a -e -d -Z --set --set-option) may be restored"
            );
        }
    }
}
