//! rvsadm's options, defined once: [`OPTS`] holds every command and option
//! with its names, its value, its line of `--help`, the commands it is
//! allowed with and the options it excludes. The clap arguments
//! (`cli::clap_command`), the allowed-options check (`cli::parse`), the
//! `--help` text (`help.rs`), the shell completions (`completions.rs`) and
//! the check of the man page's option list (`man.rs`) all come from it.

use super::completions::SHELLS;

/// A command: what one rvsadm invocation does. At most one is given;
/// without any, rvsadm lists (`-L`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cmd {
    AddService,
    EditService,
    DeleteService,
    Clear,
    Restore,
    Save,
    AddServer,
    EditServer,
    DeleteServer,
    List,
    Zero,
    /// `--flush-conns`: end a service's (or one real server's) connections.
    FlushConns,
    Set,
    SetOption,
    /// `--start-daemon master|backup`: start a connection sync daemon.
    StartDaemon,
    /// `--stop-daemon master|backup`.
    StopDaemon,
    /// `--monitor`: print configuration changes as they happen.
    Monitor,
}

/// What printing option `-h`, `-V` or `--completions` prints.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exit {
    Help,
    Version,
    Completions,
}

/// What a table entry is.
#[derive(Clone, Copy, Debug)]
pub enum Role {
    /// It selects the command.
    Command(Cmd),
    /// It prints something and exits, whatever else is given (the first
    /// given, in table order).
    Exit(Exit),
    /// It qualifies the command, and is allowed only with these commands.
    Option(&'static [Cmd]),
}

/// What a value may be completed with in the shell.
#[derive(Clone, Copy, Debug)]
pub enum Complete {
    /// Nothing to offer (an address, a number).
    Nothing,
    /// One of these words.
    Words(&'static [&'static str]),
    /// A scheduler rvs implements (`rvs_core::sched::SchedKind::ALL`).
    Schedulers,
    /// A comma-separated list of scheduler flags (`types::SCHED_FLAG_NAMES`).
    SchedFlags,
    /// `NAME=` of a runtime setting (`rvs_core::settings::SETTINGS`).
    Settings,
}

/// An option's value.
#[derive(Clone, Copy, Debug)]
pub struct Value {
    /// Its name in clap's messages (`<ADDR:PORT>`); each word is a value
    /// of its own (`--set TCP TCPFIN UDP` takes three).
    pub name: &'static str,
    /// Its name in `--help`.
    pub help: &'static str,
    /// Its name in the man page (ipvsadm's: `service-address`).
    pub man: &'static str,
    pub complete: Complete,
}

/// A value named the same in clap's messages and in `--help`.
const fn value(name: &'static str, man: &'static str, complete: Complete) -> Value {
    Value {
        name,
        help: name,
        man,
        complete,
    }
}

/// Whether an option takes a value.
#[derive(Clone, Copy, Debug)]
pub enum Takes {
    /// A flag.
    Nothing,
    /// A value (as many as its name has words).
    Value(Value),
    /// A value that may be left out (`-p [TIMEOUT]`): one that is not an
    /// option's name.
    OptionalValue(Value),
    /// A value, and the option may be given again (`--set-option`).
    RepeatedValue(Value),
}

impl Takes {
    pub fn value(&self) -> Option<&Value> {
        match self {
            Takes::Nothing => None,
            Takes::Value(v) | Takes::OptionalValue(v) | Takes::RepeatedValue(v) => Some(v),
        }
    }
}

/// How an entry shows in `--help` and the man page.
#[derive(Clone, Copy, Debug)]
pub enum Doc {
    /// A row of its own with this text; each line of it a line of
    /// `--help`.
    Row(&'static str),
    /// In the row of the entry before it (`--tun-nocsum, --tun-csum`).
    WithPrevious,
    /// Not in `--help` nor the man page; the text describes it in shell
    /// completions.
    Hidden(&'static str),
}

/// One command or option.
#[derive(Clone, Copy, Debug)]
pub struct Opt {
    /// The long name, also its clap id.
    pub long: &'static str,
    pub short: Option<char>,
    /// Another short name, shown beside the first (`-L, -l`).
    pub short_alias: Option<char>,
    /// Another long name, accepted but not shown (`--connections`).
    pub hidden_alias: Option<&'static str>,
    pub takes: Takes,
    pub doc: Doc,
    /// A paragraph of `--help` after its row, one line a line ("": none).
    pub note: &'static str,
    pub role: Role,
    /// Options with the same group exclude each other (as the commands
    /// do, without one).
    pub group: Option<&'static str>,
    /// When several options given are not allowed with the command, the
    /// one with the lowest `report` is named (the order rvsadm checked
    /// them in before this table, kept so the messages stay the same).
    pub report: u8,
}

impl Opt {
    /// Its clap id.
    pub fn id(&self) -> &'static str {
        self.long
    }

    /// Its name in messages: `-t/--tcp-service`, `--tun-type`.
    pub fn display(&self) -> String {
        match self.short {
            Some(s) => format!("-{s}/--{}", self.long),
            None => format!("--{}", self.long),
        }
    }

    /// Whether it is allowed with command `cmd` (commands and printing
    /// options are not checked).
    pub fn allowed_with(&self, cmd: Cmd) -> bool {
        match self.role {
            Role::Option(with) => with.contains(&cmd),
            Role::Command(_) | Role::Exit(_) => true,
        }
    }

    /// Its names as given on the command line, the shown ones first:
    /// `-L`, `-l`, `--list`.
    pub fn names(&self) -> Vec<String> {
        let mut v: Vec<String> = self
            .short
            .iter()
            .chain(&self.short_alias)
            .map(|c| format!("-{c}"))
            .collect();
        v.push(format!("--{}", self.long));
        v.extend(self.hidden_alias.map(|a| format!("--{a}")));
        v
    }

    /// Its names as shown in `--help` and the man page.
    pub fn shown_names(&self) -> Vec<String> {
        let mut v = self.names();
        v.truncate(v.len() - usize::from(self.hidden_alias.is_some()));
        v
    }
}

/// The entry for clap id (long name) `id`.
pub fn by_id(id: &str) -> &'static Opt {
    OPTS.iter()
        .find(|o| o.id() == id)
        .unwrap_or_else(|| panic!("no option {id} in OPTS"))
}

/// The entry of command `cmd`.
pub fn command(cmd: Cmd) -> &'static Opt {
    OPTS.iter()
        .find(|o| matches!(o.role, Role::Command(c) if c == cmd))
        .unwrap_or_else(|| panic!("no command {cmd:?} in OPTS"))
}

/// The options (not commands), in the order the allowed-options check
/// reports them.
pub fn in_report_order() -> Vec<&'static Opt> {
    let mut v: Vec<&Opt> = OPTS
        .iter()
        .filter(|o| matches!(o.role, Role::Option(_)))
        .collect();
    v.sort_by_key(|o| o.report);
    v
}

/// The rows of `--help` and the man page: each shown entry with the ones
/// shown with it.
pub fn rows() -> Vec<Vec<&'static Opt>> {
    let mut rows: Vec<Vec<&Opt>> = Vec::new();
    for o in OPTS {
        match o.doc {
            Doc::Row(_) => rows.push(vec![o]),
            Doc::WithPrevious => rows
                .last_mut()
                .expect("WithPrevious on the first entry")
                .push(o),
            Doc::Hidden(_) => {}
        }
    }
    rows
}

use Cmd::*;

/// The commands a service (`-t`, `-u`, `--sctp-service`, `-f`) goes with.
const SERVICE: &[Cmd] = &[
    AddService,
    EditService,
    DeleteService,
    AddServer,
    EditServer,
    DeleteServer,
    List,
    Zero,
    FlushConns,
];
const SERVICE_EDIT: &[Cmd] = &[AddService, EditService];
const SERVER: &[Cmd] = &[AddServer, EditServer, DeleteServer, FlushConns];
const SERVER_EDIT: &[Cmd] = &[AddServer, EditServer];
const SERVER_DELETE: &[Cmd] = &[DeleteServer];
const LIST: &[Cmd] = &[List];
/// The commands that print JSON with `--json`.
const JSON: &[Cmd] = &[List, FlushConns, Monitor];
const MONITOR: &[Cmd] = &[Monitor];
const RESTORE: &[Cmd] = &[Restore];
const LIST_SAVE: &[Cmd] = &[List, Save];
const START_DAEMON: &[Cmd] = &[StartDaemon];
/// ipvsadm takes `--syncid` with `--stop-daemon` too (and the kernel
/// ignores it there).
const DAEMON_SYNCID: &[Cmd] = &[StartDaemon, StopDaemon];

/// The value of `--start-daemon` and `--stop-daemon`.
const DAEMON_STATE: Value = Value {
    name: "STATE",
    help: "master|backup",
    man: "state",
    complete: Complete::Words(&["master", "backup"]),
};

const SERVICE_ADDR: Value = Value {
    name: "ADDR:PORT",
    help: "ADDR[:PORT]",
    man: "service-address",
    complete: Complete::Nothing,
};

/// The fields most entries leave as they are.
const OPT: Opt = Opt {
    long: "",
    short: None,
    short_alias: None,
    hidden_alias: None,
    takes: Takes::Nothing,
    doc: Doc::Hidden(""),
    note: "",
    role: Role::Option(&[]),
    group: None,
    report: 0,
};

/// Every command and option, in `--help`'s and the man page's order.
pub static OPTS: &[Opt] = &[
    // The commands.
    Opt {
        long: "add-service",
        short: Some('A'),
        doc: Doc::Row("add a virtual service"),
        role: Role::Command(AddService),
        ..OPT
    },
    Opt {
        long: "edit-service",
        short: Some('E'),
        doc: Doc::Row("edit a virtual service (unset options get their defaults)"),
        role: Role::Command(EditService),
        ..OPT
    },
    Opt {
        long: "delete-service",
        short: Some('D'),
        doc: Doc::Row("delete a virtual service and its real servers"),
        role: Role::Command(DeleteService),
        ..OPT
    },
    Opt {
        long: "clear",
        short: Some('C'),
        doc: Doc::Row("delete all virtual services"),
        role: Role::Command(Clear),
        ..OPT
    },
    Opt {
        long: "restore",
        short: Some('R'),
        doc: Doc::Row(
            "apply rules from standard input, one command a\n\
             line in the form -S prints (ipvsadm-save's too);\n\
             stops at the first failing line (--atomic:\n\
             applies all lines or none)",
        ),
        role: Role::Command(Restore),
        ..OPT
    },
    Opt {
        long: "save",
        short: Some('S'),
        doc: Doc::Row("print the rules as rvsadm/ipvsadm commands"),
        role: Role::Command(Save),
        ..OPT
    },
    Opt {
        long: "add-server",
        short: Some('a'),
        doc: Doc::Row("add a real server to a virtual service"),
        role: Role::Command(AddServer),
        ..OPT
    },
    Opt {
        long: "edit-server",
        short: Some('e'),
        doc: Doc::Row("edit a real server (unset options get their defaults)"),
        role: Role::Command(EditServer),
        ..OPT
    },
    Opt {
        long: "delete-server",
        short: Some('d'),
        doc: Doc::Row("delete a real server from a virtual service"),
        role: Role::Command(DeleteServer),
        ..OPT
    },
    Opt {
        long: "list",
        short: Some('L'),
        short_alias: Some('l'),
        doc: Doc::Row("list the virtual server table (or one service)"),
        role: Role::Command(List),
        ..OPT
    },
    Opt {
        long: "zero",
        short: Some('Z'),
        doc: Doc::Row(
            "zero the packet, byte and rate counters of a\n\
             service, or of all services",
        ),
        role: Role::Command(Zero),
        ..OPT
    },
    Opt {
        // No short form: ending connections should be spelt out.
        long: "flush-conns",
        doc: Doc::Row(
            "end the connections of a service, or of one\n\
             of its real servers (-r), now: TCP ones are\n\
             reset, the others and persistence templates\n\
             removed",
        ),
        role: Role::Command(FlushConns),
        ..OPT
    },
    Opt {
        long: "set",
        takes: Takes::Value(value("TCP TCPFIN UDP", "tcp tcpfin udp", Complete::Nothing)),
        doc: Doc::Row(
            "set the connection timeouts in seconds (TCP,\n\
             TCP after FIN, UDP; 0-2678400, 0 = leave unchanged)",
        ),
        role: Role::Command(Set),
        ..OPT
    },
    Opt {
        long: "set-option",
        takes: Takes::RepeatedValue(value("NAME=VALUE", "name=value", Complete::Settings)),
        doc: Doc::Row(
            "change a runtime setting of this network namespace\n\
             (repeatable; `-L --options` lists them, see rvsadm(8))",
        ),
        role: Role::Command(SetOption),
        ..OPT
    },
    Opt {
        long: "start-daemon",
        takes: Takes::Value(DAEMON_STATE),
        doc: Doc::Row(
            "start the connection sync daemon: a master\n\
             sends this director's connections to a\n\
             multicast group, a backup applies those a\n\
             master sends (see the --start-daemon options)",
        ),
        role: Role::Command(StartDaemon),
        ..OPT
    },
    Opt {
        long: "stop-daemon",
        takes: Takes::Value(DAEMON_STATE),
        doc: Doc::Row("stop the master or the backup sync daemon"),
        role: Role::Command(StopDaemon),
        ..OPT
    },
    Opt {
        long: "monitor",
        doc: Doc::Row(
            "print each configuration change of this network\n\
             namespace as it happens, from any client, as the\n\
             command that makes it; until interrupted",
        ),
        role: Role::Command(Monitor),
        ..OPT
    },
    Opt {
        long: "help",
        short: Some('h'),
        doc: Doc::Row("show this help and exit"),
        role: Role::Exit(Exit::Help),
        ..OPT
    },
    Opt {
        long: "version",
        short: Some('V'),
        // ipvsadm's own short form, which scripts probe with.
        short_alias: Some('v'),
        doc: Doc::Row("show the version and exit"),
        role: Role::Exit(Exit::Version),
        ..OPT
    },
    Opt {
        long: "completions",
        takes: Takes::Value(value("SHELL", "shell", Complete::Words(SHELLS))),
        doc: Doc::Hidden("print the completion script for a shell (bash or zsh)"),
        role: Role::Exit(Exit::Completions),
        ..OPT
    },
    // The options.
    Opt {
        long: "tcp-service",
        short: Some('t'),
        takes: Takes::Value(SERVICE_ADDR),
        doc: Doc::Row("TCP virtual service"),
        role: Role::Option(SERVICE),
        group: Some("service"),
        report: 1,
        ..OPT
    },
    Opt {
        long: "udp-service",
        short: Some('u'),
        takes: Takes::Value(SERVICE_ADDR),
        doc: Doc::Row("UDP virtual service"),
        role: Role::Option(SERVICE),
        group: Some("service"),
        report: 2,
        ..OPT
    },
    Opt {
        // ipvsadm's, which has no short form either.
        long: "sctp-service",
        takes: Takes::Value(SERVICE_ADDR),
        doc: Doc::Row("SCTP virtual service"),
        role: Role::Option(SERVICE),
        group: Some("service"),
        report: 3,
        ..OPT
    },
    Opt {
        long: "fwmark-service",
        short: Some('f'),
        takes: Takes::Value(value("MARK", "mark", Complete::Nothing)),
        doc: Doc::Row(
            "firewall-mark service: packets whose mark\n\
             (nftables meta mark, iptables MARK) is MARK\n\
             (1-4294967295), any protocol and address",
        ),
        role: Role::Option(SERVICE),
        group: Some("service"),
        report: 4,
        ..OPT
    },
    Opt {
        long: "ipv6",
        short: Some('6'),
        doc: Doc::Row(
            "with -f: the mark service is IPv6 (its\n\
             packets and real servers are IPv6)",
        ),
        note: "ADDR is an IPv4 or IPv6 address, or a host name (its first IPv4\n\
               address); IPv6 with a port is written [ADDR]:PORT. PORT is a number\n\
               or a service name of /etc/services (-t localhost:http); a missing\n\
               port means 0 (all ports), which needs -p.",
        role: Role::Option(SERVICE),
        report: 5,
        ..OPT
    },
    Opt {
        long: "scheduler",
        short: Some('s'),
        takes: Takes::Value(value("NAME", "scheduler", Complete::Schedulers)),
        doc: Doc::Row(
            "scheduler: rr, wrr, lc, wlc, sh, dh, ...\n\
             (as provided by the module; default wlc)",
        ),
        role: Role::Option(SERVICE_EDIT),
        report: 8,
        ..OPT
    },
    Opt {
        long: "persistent",
        short: Some('p'),
        takes: Takes::OptionalValue(value("TIMEOUT", "timeout", Complete::Nothing)),
        doc: Doc::Row(
            "persistent service; TIMEOUT in seconds\n\
             (1-2678400, default 300)",
        ),
        role: Role::Option(SERVICE_EDIT),
        report: 9,
        ..OPT
    },
    Opt {
        long: "netmask",
        short: Some('M'),
        takes: Takes::Value(value("NETMASK", "netmask", Complete::Nothing)),
        doc: Doc::Row(
            "persistence granularity: an IPv4 netmask\n\
             (default 255.255.255.255) or an IPv6\n\
             prefix length 1-128 (default 128)",
        ),
        role: Role::Option(SERVICE_EDIT),
        report: 10,
        ..OPT
    },
    Opt {
        long: "sched-flags",
        short: Some('b'),
        takes: Takes::Value(value("FLAGS", "flags", Complete::SchedFlags)),
        doc: Doc::Row(
            "scheduler flags, comma-separated:\n\
             sh-fallback, sh-port (sh), mh-fallback,\n\
             mh-port (mh), flag-1, flag-2, flag-3",
        ),
        role: Role::Option(SERVICE_EDIT),
        report: 6,
        ..OPT
    },
    Opt {
        long: "ops",
        short: Some('o'),
        doc: Doc::Row(
            "one-packet scheduling: every UDP datagram\n\
             is scheduled on its own, no connection\n\
             entry is kept",
        ),
        role: Role::Option(SERVICE_EDIT),
        report: 7,
        ..OPT
    },
    Opt {
        long: "laddr",
        takes: Takes::RepeatedValue(value("ADDR", "address", Complete::Nothing)),
        doc: Doc::Row(
            "a local address of the service (repeatable,\n\
             at most 64, of its family): FullNAT real\n\
             servers are reached from these addresses of\n\
             the director; `--laddr none` clears them;\n\
             -E without --laddr keeps them",
        ),
        role: Role::Option(SERVICE_EDIT),
        report: 38,
        ..OPT
    },
    Opt {
        long: "real-server",
        short: Some('r'),
        takes: Takes::Value(value("ADDR[:PORT]", "server-address", Complete::Nothing)),
        doc: Doc::Row(
            "real server; the port defaults to the\n\
             service's, and may differ only with -m\n\
             or --fullnat",
        ),
        role: Role::Option(SERVER),
        report: 11,
        ..OPT
    },
    Opt {
        long: "gatewaying",
        short: Some('g'),
        doc: Doc::Row("forward by direct routing (default)"),
        role: Role::Option(SERVER_EDIT),
        group: Some("forward"),
        report: 12,
        ..OPT
    },
    Opt {
        long: "ipip",
        short: Some('i'),
        doc: Doc::Row("forward by IP-in-IP tunnelling"),
        role: Role::Option(SERVER_EDIT),
        group: Some("forward"),
        report: 13,
        ..OPT
    },
    Opt {
        long: "masquerading",
        short: Some('m'),
        doc: Doc::Row("forward by NAT (allows port mapping)"),
        role: Role::Option(SERVER_EDIT),
        group: Some("forward"),
        report: 14,
        ..OPT
    },
    Opt {
        // Long only: -b, FullNAT's letter elsewhere, is ipvsadm's
        // scheduler flags.
        long: "fullnat",
        doc: Doc::Row(
            "forward by FullNAT: source and destination\n\
             rewritten, the source to one of the service's\n\
             local addresses (-A/-E --laddr, required);\n\
             allows port mapping",
        ),
        role: Role::Option(SERVER_EDIT),
        group: Some("forward"),
        report: 37,
        ..OPT
    },
    Opt {
        // Long only, as --fullnat.
        long: "enat",
        doc: Doc::Row(
            "forward by ENAT: the request leaves from the\n\
             VIP, the client's address in a TCP option; the\n\
             real server's rvs_rs.ko replies straight to the\n\
             client (TCP services only; no port mapping)",
        ),
        role: Role::Option(SERVER_EDIT),
        group: Some("forward"),
        report: 47,
        ..OPT
    },
    Opt {
        long: "weight",
        short: Some('w'),
        takes: Takes::Value(value("WEIGHT", "weight", Complete::Nothing)),
        doc: Doc::Row("weight 0-65535 (default 1; 0 quiesces)"),
        role: Role::Option(SERVER_EDIT),
        report: 15,
        ..OPT
    },
    Opt {
        long: "u-threshold",
        short: Some('x'),
        takes: Takes::Value(value("N", "upper-threshold", Complete::Nothing)),
        doc: Doc::Row("upper connection threshold (0 = none)"),
        role: Role::Option(SERVER_EDIT),
        report: 16,
        ..OPT
    },
    Opt {
        long: "l-threshold",
        short: Some('y'),
        takes: Takes::Value(value("N", "lower-threshold", Complete::Nothing)),
        doc: Doc::Row("lower connection threshold (0 = none)"),
        role: Role::Option(SERVER_EDIT),
        report: 17,
        ..OPT
    },
    Opt {
        long: "tun-type",
        takes: Takes::Value(value(
            "TYPE",
            "type",
            Complete::Words(&["ipip", "gue", "gre"]),
        )),
        doc: Doc::Row("with -i: ipip (default), gue or gre"),
        role: Role::Option(SERVER_EDIT),
        report: 18,
        ..OPT
    },
    Opt {
        long: "tun-port",
        takes: Takes::Value(value("PORT", "port", Complete::Nothing)),
        doc: Doc::Row(
            "with --tun-type gue: the real server's\n\
             GUE UDP port (required)",
        ),
        role: Role::Option(SERVER_EDIT),
        report: 19,
        ..OPT
    },
    Opt {
        long: "tun-nocsum",
        doc: Doc::Row(
            "with gue or gre: no tunnel checksum\n\
             (default) or a UDP/GRE checksum",
        ),
        role: Role::Option(SERVER_EDIT),
        group: Some("tun-csum-mode"),
        report: 20,
        ..OPT
    },
    Opt {
        long: "tun-csum",
        doc: Doc::WithPrevious,
        role: Role::Option(SERVER_EDIT),
        group: Some("tun-csum-mode"),
        report: 21,
        ..OPT
    },
    Opt {
        long: "tun-remcsum",
        doc: Doc::Row(
            "with gue: remote checksum offload (the\n\
             real server completes the inner checksum)",
        ),
        role: Role::Option(SERVER_EDIT),
        group: Some("tun-csum-mode"),
        report: 22,
        ..OPT
    },
    Opt {
        long: "drain",
        takes: Takes::Value(value("SECONDS", "seconds", Complete::Nothing)),
        doc: Doc::Row(
            "with -d: drain first (1-86400 s): no new\n\
             connections, the existing ones go on;\n\
             then they are ended and the server deleted",
        ),
        role: Role::Option(SERVER_DELETE),
        report: 36,
        ..OPT
    },
    Opt {
        long: "numeric",
        short: Some('n'),
        doc: Doc::Row(
            "numeric output (rvsadm always prints\n\
             numeric addresses and ports)",
        ),
        role: Role::Option(LIST_SAVE),
        report: 24,
        ..OPT
    },
    Opt {
        long: "connection",
        short: Some('c'),
        hidden_alias: Some("connections"),
        doc: Doc::Row("with -L: list the connections"),
        role: Role::Option(LIST),
        group: Some("list-mode"),
        report: 26,
        ..OPT
    },
    Opt {
        long: "timeout",
        doc: Doc::Row("with -L: show the timeouts (tcp tcpfin udp)"),
        role: Role::Option(LIST),
        group: Some("list-mode"),
        report: 27,
        ..OPT
    },
    Opt {
        long: "options",
        doc: Doc::Row("with -L: show the runtime settings"),
        role: Role::Option(LIST),
        group: Some("list-mode"),
        report: 28,
        ..OPT
    },
    Opt {
        long: "daemon",
        doc: Doc::Row("with -L: list the connection sync daemons"),
        role: Role::Option(LIST),
        group: Some("list-mode"),
        report: 39,
        ..OPT
    },
    Opt {
        long: "stats",
        doc: Doc::Row(
            "with -L: counters (connections, packets,\n\
             bytes) of services and real servers",
        ),
        role: Role::Option(LIST),
        group: Some("list-mode"),
        report: 29,
        ..OPT
    },
    Opt {
        long: "rate",
        doc: Doc::Row(
            "with -L: rates (connections, packets,\n\
             bytes per second)",
        ),
        role: Role::Option(LIST),
        group: Some("list-mode"),
        report: 30,
        ..OPT
    },
    Opt {
        long: "thresholds",
        doc: Doc::Row(
            "with -L: each real server's upper and lower\n\
             connection thresholds",
        ),
        role: Role::Option(LIST),
        group: Some("list-mode"),
        report: 32,
        ..OPT
    },
    Opt {
        long: "persistent-conn",
        doc: Doc::Row(
            "with -L: each real server's weight and\n\
             persistent connections (templates)",
        ),
        role: Role::Option(LIST),
        group: Some("list-mode"),
        report: 33,
        ..OPT
    },
    Opt {
        long: "sort",
        doc: Doc::Row("with -L: sort the listing (the default)"),
        role: Role::Option(LIST),
        group: Some("sort-order"),
        report: 34,
        ..OPT
    },
    Opt {
        long: "nosort",
        doc: Doc::Row("with -L: the kernel's order, unsorted"),
        role: Role::Option(LIST),
        group: Some("sort-order"),
        report: 35,
        ..OPT
    },
    Opt {
        long: "tun-info",
        doc: Doc::Row("with -L: show each real server's tunnel"),
        role: Role::Option(LIST),
        report: 23,
        ..OPT
    },
    Opt {
        long: "exact",
        short: Some('X'),
        doc: Doc::Row(
            "with --stats/--rate: exact numbers instead\n\
             of abbreviating large ones with K/M/G/T",
        ),
        role: Role::Option(LIST),
        report: 31,
        ..OPT
    },
    Opt {
        long: "json",
        doc: Doc::Row(
            "list as JSON instead of ipvsadm's table (with\n\
             --flush-conns: print the count as JSON; with\n\
             --monitor: one JSON object a line)",
        ),
        role: Role::Option(JSON),
        report: 25,
        ..OPT
    },
    Opt {
        long: "atomic",
        doc: Doc::Row(
            "with -R: apply every line or none, at one\n\
             instant for new connections (service and\n\
             real server lines, -C)",
        ),
        role: Role::Option(RESTORE),
        report: 48,
        ..OPT
    },
    Opt {
        long: "timestamp",
        doc: Doc::Row(
            "with --monitor: begin each line with the local\n\
             time, HH:MM:SS.mmm (\"time\" in JSON)",
        ),
        role: Role::Option(MONITOR),
        report: 46,
        ..OPT
    },
    // The options of --start-daemon, in ipvsadm's order.
    Opt {
        long: "syncid",
        takes: Takes::Value(value("ID", "syncid", Complete::Nothing)),
        doc: Doc::Row(
            "with --start-daemon: the sync ID 0-255 a\n\
             master puts in its messages, or the one a\n\
             backup accepts (default 0: a backup\n\
             accepts every ID)",
        ),
        role: Role::Option(DAEMON_SYNCID),
        report: 40,
        ..OPT
    },
    Opt {
        long: "sync-maxlen",
        takes: Takes::Value(value("LENGTH", "length", Complete::Nothing)),
        doc: Doc::Row(
            "with --start-daemon: the most bytes of a sync\n\
             message's UDP payload, 1-65507 (default: the\n\
             MTU less the IP and UDP headers; a master's\n\
             MTU 1500)",
        ),
        role: Role::Option(START_DAEMON),
        report: 41,
        ..OPT
    },
    Opt {
        long: "mcast-interface",
        takes: Takes::Value(value("IF", "interface", Complete::Nothing)),
        doc: Doc::Row(
            "with --start-daemon: the interface the sync\n\
             messages leave or arrive by (default eth0,\n\
             as ipvsadm's)",
        ),
        role: Role::Option(START_DAEMON),
        report: 42,
        ..OPT
    },
    Opt {
        long: "mcast-group",
        takes: Takes::Value(value("ADDR", "address", Complete::Nothing)),
        doc: Doc::Row(
            "with --start-daemon: the IPv4 or IPv6 multicast\n\
             group (default 224.0.0.81)",
        ),
        role: Role::Option(START_DAEMON),
        report: 43,
        ..OPT
    },
    Opt {
        long: "mcast-port",
        takes: Takes::Value(value("PORT", "port", Complete::Nothing)),
        doc: Doc::Row("with --start-daemon: the UDP port 1-65535\n(default 8848)"),
        role: Role::Option(START_DAEMON),
        report: 44,
        ..OPT
    },
    Opt {
        long: "mcast-ttl",
        takes: Takes::Value(value("TTL", "ttl", Complete::Nothing)),
        doc: Doc::Row("with --start-daemon: the multicast TTL 1-255\n(default 1)"),
        role: Role::Option(START_DAEMON),
        report: 45,
        ..OPT
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique() {
        let mut names: Vec<String> = OPTS.iter().flat_map(Opt::names).collect();
        let n = names.len();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), n, "an option name is used twice");
    }

    #[test]
    fn every_command_once_and_report_order_total() {
        for cmd in [
            AddService,
            EditService,
            DeleteService,
            Clear,
            Restore,
            Save,
            AddServer,
            EditServer,
            DeleteServer,
            List,
            Zero,
            FlushConns,
            Set,
            SetOption,
            StartDaemon,
            StopDaemon,
            Monitor,
        ] {
            let n = OPTS
                .iter()
                .filter(|o| matches!(o.role, Role::Command(c) if c == cmd))
                .count();
            assert_eq!(n, 1, "{cmd:?}");
        }
        let ranks: Vec<u8> = in_report_order().iter().map(|o| o.report).collect();
        let want: Vec<u8> = (1..=ranks.len() as u8).collect();
        assert_eq!(ranks, want, "every option needs its own report rank");
        assert!(OPTS
            .iter()
            .filter(|o| !matches!(o.role, Role::Option(_)))
            .all(|o| o.report == 0 && o.group.is_none()));
    }

    #[test]
    fn names_for_messages() {
        assert_eq!(by_id("tcp-service").display(), "-t/--tcp-service");
        assert_eq!(by_id("tun-type").display(), "--tun-type");
        assert_eq!(by_id("sctp-service").display(), "--sctp-service");
        assert_eq!(by_id("sctp-service").names(), ["--sctp-service"]);
        assert!(by_id("sctp-service").allowed_with(Zero));
        assert!(!by_id("sctp-service").allowed_with(Clear));
        assert_eq!(command(List).display(), "-L/--list");
        assert_eq!(command(List).shown_names(), ["-L", "-l", "--list"]);
        assert_eq!(
            by_id("connection").names(),
            ["-c", "--connection", "--connections"]
        );
        assert_eq!(by_id("connection").shown_names(), ["-c", "--connection"]);
        assert!(by_id("weight").allowed_with(EditServer));
        assert!(!by_id("weight").allowed_with(DeleteServer));
        assert!(by_id("drain").allowed_with(DeleteServer));
        assert!(!by_id("drain").allowed_with(EditServer));
        assert_eq!(by_id("drain").display(), "--drain");
        assert_eq!(by_id("fullnat").names(), ["--fullnat"]);
        assert!(by_id("laddr").allowed_with(EditService));
        assert!(!by_id("laddr").allowed_with(AddServer));
        assert!(matches!(by_id("laddr").takes, Takes::RepeatedValue(_)));
        assert_eq!(by_id("fullnat").group, by_id("masquerading").group);
        assert!(by_id("fullnat").allowed_with(EditServer));
        assert!(!by_id("fullnat").allowed_with(AddService));
        assert_eq!(by_id("enat").names(), ["--enat"]);
        assert_eq!(by_id("enat").group, by_id("masquerading").group);
        assert!(by_id("enat").allowed_with(AddServer));
        assert!(by_id("enat").allowed_with(EditServer));
        assert!(!by_id("enat").allowed_with(AddService));
        assert!(!by_id("enat").allowed_with(DeleteServer));
        assert_eq!(command(FlushConns).display(), "--flush-conns");
        assert!(by_id("real-server").allowed_with(FlushConns));
        assert!(by_id("ipv6").allowed_with(FlushConns));
        assert!(by_id("json").allowed_with(FlushConns));
        assert!(!by_id("weight").allowed_with(FlushConns));
        assert_eq!(command(StartDaemon).display(), "--start-daemon");
        assert_eq!(command(StopDaemon).names(), ["--stop-daemon"]);
        assert_eq!(by_id("daemon").group, by_id("timeout").group);
        assert!(by_id("daemon").allowed_with(List));
        assert!(!by_id("daemon").allowed_with(StartDaemon));
        for id in [
            "mcast-interface",
            "sync-maxlen",
            "mcast-group",
            "mcast-port",
            "mcast-ttl",
        ] {
            assert!(by_id(id).allowed_with(StartDaemon), "{id}");
            assert!(!by_id(id).allowed_with(StopDaemon), "{id}");
            assert!(!by_id(id).allowed_with(List), "{id}");
            assert_eq!(by_id(id).short, None, "{id}");
        }
        // As ipvsadm's table: --syncid with --stop-daemon too.
        assert!(by_id("syncid").allowed_with(StartDaemon));
        assert!(by_id("syncid").allowed_with(StopDaemon));
        assert!(!by_id("syncid").allowed_with(List));
        assert!(by_id("json").allowed_with(List));
        assert!(!by_id("json").allowed_with(StartDaemon));
        assert_eq!(command(Monitor).names(), ["--monitor"]);
        assert!(by_id("json").allowed_with(Monitor));
        assert!(by_id("timestamp").allowed_with(Monitor));
        assert!(!by_id("timestamp").allowed_with(List));
        assert!(!by_id("tcp-service").allowed_with(Monitor));
    }
}
