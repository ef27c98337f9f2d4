//! rvsadm entry point: parse the command line, talk to the module, print.

use std::io::{self, BufRead, BufWriter, Write};
use std::process::ExitCode;
use std::time::{SystemTime, UNIX_EPOCH};

use rvsadm::cli::{self, Command, Invocation, ListMode, ListOptions, UsageError};
use rvsadm::error::{Error, NlError, Op, EXIT_OK};
use rvsadm::event;
use rvsadm::host_addrs;
use rvsadm::msg;
use rvsadm::netlink::{Client, ConnectError, Monitor, MonitorError, Notice, Reply};
use rvsadm::output::{self, Columns, Entry};
use rvsadm::types::{DestKey, ServiceKey};
use rvsadm::uapi;

/// Callback of [`Transport::dump_each`]; an error stops the dump.
type EachReply<'a> = &'a mut dyn FnMut(Reply) -> Result<(), Error>;

/// What the command dispatch needs from a connection to the module.
trait Transport {
    fn execute(&mut self, cmd: u8, attrs: &[u8]) -> Result<(), NlError>;
    fn get(&mut self, cmd: u8, attrs: &[u8]) -> Result<Reply, NlError>;
    fn dump(&mut self, cmd: u8, attrs: &[u8]) -> Result<Vec<Reply>, NlError>;
    /// A dump handed to `f` message by message (outer error: netlink's,
    /// inner: `f`'s).
    fn dump_each(
        &mut self,
        cmd: u8,
        attrs: &[u8],
        f: EachReply<'_>,
    ) -> Result<Result<(), Error>, NlError>;
    /// An APPLY request (`-R --atomic`); a refusal may come with the
    /// offset of the change at fault, from the start of the request.
    fn apply(&mut self, attrs: &[u8]) -> Result<(), (NlError, Option<u32>)>;
}

impl Transport for Client {
    fn execute(&mut self, cmd: u8, attrs: &[u8]) -> Result<(), NlError> {
        Client::execute(self, cmd, attrs)
    }
    fn get(&mut self, cmd: u8, attrs: &[u8]) -> Result<Reply, NlError> {
        Client::get(self, cmd, attrs)
    }
    fn dump(&mut self, cmd: u8, attrs: &[u8]) -> Result<Vec<Reply>, NlError> {
        Client::dump(self, cmd, attrs)
    }
    fn dump_each(
        &mut self,
        cmd: u8,
        attrs: &[u8],
        f: EachReply<'_>,
    ) -> Result<Result<(), Error>, NlError> {
        Client::dump_each(self, cmd, attrs, f)
    }
    fn apply(&mut self, attrs: &[u8]) -> Result<(), (NlError, Option<u32>)> {
        Client::apply(self, attrs)
    }
}

/// Carries out a command, writing what it prints to `out`.
fn run_command(t: &mut impl Transport, cmd: &Command, out: &mut dyn Write) -> Result<(), Error> {
    if let Some((op, nl_cmd, attrs)) = change_request(cmd) {
        return t.execute(nl_cmd, &attrs).map_err(Error::failed(op));
    }
    match cmd {
        Command::FlushConns {
            service,
            server,
            json,
        } => flush_conns(t, service, server.as_ref(), *json, out),
        Command::List(opts) => list(t, opts, out),
        Command::Save => save(t, out),
        // run() hands -R its input; without one there is nothing to apply.
        Command::Restore { atomic: false } => restore(t, &mut io::empty(), out),
        Command::Restore { atomic: true } => restore_atomic(t, &mut io::empty()),
        // run() hands --monitor the connection itself, which it turns
        // into a listener; -R refuses it (not a change).
        Command::Monitor { .. } => Err(Error::Usage(UsageError(
            "--monitor needs a connection of its own".into(),
        ))),
        // Every other command is a change, sent above.
        _ => Ok(()),
    }
}

/// The request of a command that changes the rules (or the daemons):
/// what it is called in errors, its netlink command and attributes.
fn change_request(cmd: &Command) -> Option<(Op, u8, Vec<u8>)> {
    Some(match cmd {
        Command::AddService(s) => (
            Op::AddService,
            uapi::RVS_CMD_NEW_SERVICE,
            msg::service_attrs(s),
        ),
        Command::EditService(s) => (
            Op::EditService,
            uapi::RVS_CMD_SET_SERVICE,
            msg::service_attrs(s),
        ),
        Command::DeleteService(k) => (
            Op::DeleteService,
            uapi::RVS_CMD_DEL_SERVICE,
            msg::service_key_attrs(k),
        ),
        Command::Clear => (Op::Clear, uapi::RVS_CMD_FLUSH, Vec::new()),
        Command::AddServer(s, d) => (Op::AddServer, uapi::RVS_CMD_NEW_DEST, msg::dest_attrs(s, d)),
        Command::EditServer(s, d) => (
            Op::EditServer,
            uapi::RVS_CMD_SET_DEST,
            msg::dest_attrs(s, d),
        ),
        Command::DeleteServer(s, d) => (
            Op::DeleteServer,
            uapi::RVS_CMD_DEL_DEST,
            msg::del_dest_attrs(s, d),
        ),
        Command::DrainServer(s, d, secs) => (
            Op::DrainServer,
            uapi::RVS_CMD_DEL_DEST,
            msg::drain_dest_attrs(s, d, *secs),
        ),
        Command::Zero(k) => (Op::Zero, uapi::RVS_CMD_ZERO, msg::zero_attrs(k.as_ref())),
        Command::SetTimeouts(t) => (
            Op::SetTimeouts,
            uapi::RVS_CMD_SET_CONFIG,
            msg::timeout_attrs(t),
        ),
        Command::SetOptions(v) => (
            Op::SetOptions,
            uapi::RVS_CMD_SET_CONFIG,
            msg::settings_attrs(v),
        ),
        Command::StartDaemon(d) => (
            Op::StartDaemon(d.state, d.mcast_ifn),
            uapi::RVS_CMD_NEW_DAEMON,
            msg::new_daemon_attrs(d),
        ),
        Command::StopDaemon(state) => (
            Op::StopDaemon(*state),
            uapi::RVS_CMD_DEL_DAEMON,
            msg::del_daemon_attrs(*state),
        ),
        Command::FlushConns { .. }
        | Command::List(_)
        | Command::Save
        | Command::Restore { .. }
        | Command::Monitor { .. } => return None,
    })
}

fn write_out(out: &mut dyn Write, text: &str) -> Result<(), Error> {
    out.write_all(text.as_bytes()).map_err(Error::Output)
}

/// `--flush-conns`: FLUSH_CONNS, answered by a message of the same
/// command with the number of connections ended, which is printed.
fn flush_conns(
    t: &mut impl Transport,
    service: &ServiceKey,
    server: Option<&DestKey>,
    json: bool,
    out: &mut dyn Write,
) -> Result<(), Error> {
    let fail = Error::failed(Op::FlushConns);
    let reply = t
        .get(
            uapi::RVS_CMD_FLUSH_CONNS,
            &msg::flush_conns_attrs(service, server),
        )
        .map_err(fail)?;
    if reply.cmd != uapi::RVS_CMD_FLUSH_CONNS {
        return Err(Error::failed(Op::FlushConns)(NlError::Protocol(format!(
            "FLUSH_CONNS answered by command {}",
            reply.cmd
        ))));
    }
    let n = msg::parse_flush_reply(&reply.attrs)
        .map_err(|e| Error::failed(Op::FlushConns)(e.into()))?;
    let text = if json {
        output::format_flushed_json(n)
    } else {
        output::format_flushed(service, server, n)
    };
    write_out(out, &text)
}

fn list(t: &mut impl Transport, opts: &ListOptions, out: &mut dyn Write) -> Result<(), Error> {
    let columns = match opts.mode {
        ListMode::Timeout => return list_timeouts(t, opts, out),
        ListMode::Options => return list_options(t, opts, out),
        ListMode::Connections => return list_connections(t, opts, out),
        ListMode::Daemon => return list_daemons(t, opts, out),
        ListMode::Table if opts.tun_info => Columns::TunInfo,
        ListMode::Table => Columns::Config,
        ListMode::Stats => Columns::Stats,
        ListMode::Rate => Columns::Rate,
        ListMode::Thresholds => Columns::Thresholds,
        ListMode::PersistentConn => Columns::PersistentConn,
    };
    let reply = t
        .get(uapi::RVS_CMD_GET_INFO, &[])
        .map_err(Error::failed(Op::GetInfo))?;
    let info =
        msg::parse_info(&reply.attrs).map_err(|e| Error::failed(Op::GetInfo)(NlError::from(e)))?;
    let mut entries = fetch_entries(t, opts.service.as_ref())?;
    if !opts.nosort {
        output::sort_entries(&mut entries);
    }
    let text = if opts.json {
        output::format_json(&info, &entries)
    } else {
        output::format_listing(&info, &entries, opts.service.is_none(), columns, opts.exact)
    };
    write_out(out, &text)
}

/// `-S`: every service and real server as the commands that make them.
fn save(t: &mut impl Transport, out: &mut dyn Write) -> Result<(), Error> {
    let mut entries = fetch_entries(t, None)?;
    output::sort_entries(&mut entries);
    write_out(out, &output::format_rules(&entries))
}

/// `-R`: applies the commands of `input` line by line over the one
/// netlink socket `t`, stopping at the first line that cannot be parsed
/// or that the module refuses (as ipvsadm does); that line is reported
/// with its number and text.
fn restore(
    t: &mut impl Transport,
    input: &mut dyn BufRead,
    out: &mut dyn Write,
) -> Result<(), Error> {
    let mut text = String::new();
    let mut number = 0;
    loop {
        text.clear();
        if input.read_line(&mut text).map_err(Error::Input)? == 0 {
            return Ok(());
        }
        number += 1;
        let line = text.trim_end_matches(['\n', '\r']);
        let at = |cause: Error| Error::Restore {
            line: number,
            text: line.to_string(),
            cause: Box::new(cause),
        };
        if let Some(cmd) = cli::parse_restore_line(line).map_err(|e| at(e.into()))? {
            run_command(t, &cmd, out).map_err(at)?;
        }
    }
}

/// `-R --atomic`: reads every line of `input` first, then sends them as
/// one APPLY request that the module applies all or nothing
/// (`rvs/lb/transaction.rs`). A line that cannot be parsed, or that is
/// not a service or real-server change, stops it before anything is sent;
/// a change the module refuses is reported with its line, and nothing
/// was applied.
fn restore_atomic(t: &mut impl Transport, input: &mut dyn BufRead) -> Result<(), Error> {
    let mut text = Vec::new();
    loop {
        let mut line = String::new();
        if input.read_line(&mut line).map_err(Error::Input)? == 0 {
            break;
        }
        line.truncate(line.trim_end_matches(['\n', '\r']).len());
        text.push(line);
    }
    let parsed = parse_lines(&text);
    if parsed.len() != text.len() {
        // A parser thread died: nothing can be trusted, nothing is sent.
        return Err(Error::Usage(UsageError(
            "parsing the input failed; nothing was applied".into(),
        )));
    }
    let mut request = Vec::new();
    // (offset of the change's attribute in `request`, line number, text,
    // what the line does, for the error).
    let mut lines: Vec<(usize, usize, &str, Op)> = Vec::new();
    for (i, (line, cmd)) in text.iter().zip(parsed).enumerate() {
        let at = |cause: Error| Error::AtomicRestore {
            line: i + 1,
            text: line.clone(),
            cause: Box::new(cause),
        };
        let Some(cmd) = cmd.map_err(|e| at(e.into()))? else {
            continue;
        };
        let change = match &cmd {
            Command::DrainServer(..) => None,
            c => change_request(c).filter(|(_, nl_cmd, _)| msg::is_atomic_change(*nl_cmd)),
        };
        let Some((op, nl_cmd, attrs)) = change else {
            return Err(at(Error::Usage(UsageError(
                "only -A -E -D -C -a -e -d (without --drain) can be part of an atomic restore"
                    .into(),
            ))));
        };
        lines.push((request.len(), i + 1, line, op));
        request.extend_from_slice(&msg::apply_op(nl_cmd, &attrs));
    }
    t.apply(&request).map_err(|(cause, offset)| {
        // The kernel's offset counts from the netlink header: 16 bytes,
        // then the 4 of the generic netlink header.
        let at = offset
            .and_then(|o| (o as usize).checked_sub(20))
            .and_then(|o| lines.iter().rev().find(|(start, ..)| *start <= o));
        match at {
            Some((_, line, text, op)) => Error::AtomicRestore {
                line: *line,
                text: text.to_string(),
                cause: Box::new(Error::Failed { op: *op, cause }),
            },
            None => Error::Failed {
                op: Op::Restore,
                cause,
            },
        }
    })
}

/// Parses the lines of `-R --atomic`'s input, on every CPU: a rule set of
/// 100,000 lines takes seconds to parse on one.
fn parse_lines(lines: &[String]) -> Vec<Result<Option<Command>, UsageError>> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get().min(8));
    let chunk = lines.len().div_ceil(threads).max(1024);
    std::thread::scope(|s| {
        let parts: Vec<_> = lines
            .chunks(chunk)
            .map(|part| {
                s.spawn(move || {
                    part.iter()
                        .map(|l| cli::parse_restore_line(l))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        parts
            .into_iter()
            .flat_map(|h| h.join().unwrap_or_default())
            .collect()
    })
}

/// The services (all, or one) with their real servers, sorted as ipvsadm
/// sorts them.
fn fetch_entries(
    t: &mut impl Transport,
    service: Option<&ServiceKey>,
) -> Result<Vec<Entry>, Error> {
    let fail = Error::failed(Op::ListServices);
    let replies = match service {
        Some(key) => vec![t
            .get(uapi::RVS_CMD_GET_SERVICE, &msg::service_key_attrs(key))
            .map_err(fail)?],
        None => t.dump(uapi::RVS_CMD_GET_SERVICE, &[]).map_err(fail)?,
    };
    let mut entries = Vec::with_capacity(replies.len());
    for r in &replies {
        let service = msg::parse_service_reply(&r.attrs)
            .map_err(|e| Error::failed(Op::ListServices)(e.into()))?;
        let dest_replies = t
            .dump(
                uapi::RVS_CMD_GET_DEST,
                &msg::service_key_attrs(&service.key()),
            )
            .map_err(Error::failed(Op::ListServers))?;
        let dests = dest_replies
            .iter()
            .map(|d| msg::parse_dest_reply(&d.attrs, service.af))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| Error::failed(Op::ListServers)(e.into()))?;
        entries.push(Entry { service, dests });
    }
    Ok(entries)
}

/// `-L --timeout`: the timeouts of the GET_CONFIG reply.
fn list_timeouts(
    t: &mut impl Transport,
    opts: &ListOptions,
    out: &mut dyn Write,
) -> Result<(), Error> {
    let text = get_config(t, Op::GetTimeouts, |attrs| {
        let v = msg::parse_timeouts(attrs)?;
        Ok(if opts.json {
            output::format_timeouts_json(&v)
        } else {
            output::format_timeouts(&v)
        })
    })?;
    write_out(out, &text)
}

/// `-L --options`: the settings of the GET_CONFIG reply.
fn list_options(
    t: &mut impl Transport,
    opts: &ListOptions,
    out: &mut dyn Write,
) -> Result<(), Error> {
    let text = get_config(t, Op::GetOptions, |attrs| {
        let v = msg::parse_settings(attrs)?;
        Ok(if opts.json {
            output::format_settings_json(&v)
        } else {
            output::format_settings(&v)
        })
    })?;
    write_out(out, &text)
}

/// `-L --daemon`: the GET_DAEMON dump, one message per running daemon
/// (none when none runs), in the module's order.
fn list_daemons(
    t: &mut impl Transport,
    opts: &ListOptions,
    out: &mut dyn Write,
) -> Result<(), Error> {
    let replies = t
        .dump(uapi::RVS_CMD_GET_DAEMON, &[])
        .map_err(Error::failed(Op::ListDaemons))?;
    let daemons = replies
        .iter()
        .map(|r| msg::parse_daemon_reply(&r.attrs))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| Error::failed(Op::ListDaemons)(e.into()))?;
    let text = if opts.json {
        output::format_daemons_json(&daemons)
    } else {
        output::format_daemons(&daemons)
    };
    write_out(out, &text)
}

/// GET_CONFIG (answered by one SET_CONFIG message), its attributes turned
/// into text by `render`; failures are reported as `op`.
fn get_config(
    t: &mut impl Transport,
    op: Op,
    render: impl FnOnce(&[u8]) -> Result<String, msg::ParseError>,
) -> Result<String, Error> {
    let reply = t
        .get(uapi::RVS_CMD_GET_CONFIG, &[])
        .map_err(Error::failed(op))?;
    render(&reply.attrs).map_err(|e| Error::failed(op)(e.into()))
}

/// `-L -c`: the GET_CONN dump, printed entry by entry as it arrives.
fn list_connections(
    t: &mut impl Transport,
    opts: &ListOptions,
    out: &mut dyn Write,
) -> Result<(), Error> {
    write_out(
        out,
        if opts.json {
            output::CONN_JSON_START
        } else {
            output::CONN_HEADER
        },
    )?;
    let mut first = true;
    let mut line = String::new();
    let mut each = |r: Reply| -> Result<(), Error> {
        let c = msg::parse_conn_reply(&r.attrs)
            .map_err(|e| Error::failed(Op::ListConnections)(e.into()))?;
        line.clear();
        if opts.json {
            if !first {
                line.push(',');
            }
            line.push_str(&output::conn_json(&c));
        } else {
            line.push_str(&output::conn_line(&c));
            line.push('\n');
        }
        first = false;
        write_out(out, &line)
    };
    t.dump_each(uapi::RVS_CMD_GET_CONN, &[], &mut each)
        .map_err(Error::failed(Op::ListConnections))??;
    if opts.json {
        write_out(out, output::CONN_JSON_END)?;
    }
    Ok(())
}

/// Where `--monitor` gets what it prints: the module, or a test's list.
trait Notices {
    /// Blocks until something comes.
    fn receive(&mut self) -> Result<Vec<Notice>, NlError>;
}

impl Notices for Monitor {
    fn receive(&mut self) -> Result<Vec<Notice>, NlError> {
        Monitor::receive(self)
    }
}

/// `--monitor`: each notice printed as it comes (`event`'s lines, or
/// JSON objects), each line flushed at once so that a pipe sees it; with
/// `clock`, each line begins with its time. Returns only on failure: the
/// module unloaded, the socket or the output failed.
fn monitor(
    src: &mut impl Notices,
    json: bool,
    clock: &mut dyn FnMut() -> Option<String>,
    out: &mut dyn Write,
) -> Result<(), Error> {
    loop {
        for n in src.receive().map_err(Error::failed(Op::Monitor))? {
            let time = clock();
            let t = time.as_deref();
            let lines = match (&n, json) {
                (Notice::Gone, _) => return Err(Error::ModuleGone),
                (Notice::Event { cmd, attrs }, false) => match event::decode(*cmd, attrs) {
                    Ok(ev) => event::event_lines(&ev),
                    Err(u) => vec![event::undecoded_line(&u)],
                },
                (Notice::Event { cmd, attrs }, true) => vec![match event::decode(*cmd, attrs) {
                    Ok(ev) => event::event_json(&ev, t),
                    Err(u) => event::undecoded_json(&u, t),
                }],
                (Notice::Lost, false) => vec![event::LOST_LINE.to_string()],
                (Notice::Lost, true) => vec![event::lost_json(t)],
                (Notice::Malformed(why), false) => vec![event::malformed_line(why)],
                (Notice::Malformed(why), true) => vec![event::malformed_json(why, t)],
            };
            let mut text = String::new();
            for line in lines {
                if let (Some(t), false) = (t, json) {
                    text.push_str(t);
                    text.push(' ');
                }
                text.push_str(&line);
                text.push('\n');
            }
            write_out(out, &text)?;
            out.flush().map_err(Error::Output)?;
        }
    }
}

/// The local time of day as `--timestamp` prints it: `HH:MM:SS.mmm`.
fn time_of_day() -> String {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    let secs = now.as_secs() as libc::time_t;
    // SAFETY: an all-zero `tm` is a valid value (integers and a null
    // zone name), which localtime_r overwrites.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    // SAFETY: both pointers are to live values of the right types.
    let local = !unsafe { libc::localtime_r(&secs, &mut tm) }.is_null();
    let (h, m, s) = if local {
        (tm.tm_hour as u64, tm.tm_min as u64, tm.tm_sec as u64)
    } else {
        let day = now.as_secs() % 86400;
        (day / 3600, day / 60 % 60, day % 60)
    };
    format!("{h:02}:{m:02}:{s:02}.{:03}", now.subsec_millis())
}

/// SIGINT and SIGTERM end `--monitor` with status 0: every line it
/// printed is out already (each is flushed), and there is nothing to
/// undo. A signal ignored when rvsadm started stays ignored, as the shell
/// wants it for SIGINT in `rvsadm --monitor &`.
fn exit_on_interrupt() {
    extern "C" fn leave(_: libc::c_int) {
        // SAFETY: _exit is async-signal-safe and ends the process.
        unsafe { libc::_exit(0) }
    }
    let handler = leave as extern "C" fn(libc::c_int);
    for sig in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: all-zero is a valid `sigaction` (no handler, no flags,
        // an empty mask), which sigaction(2) reads or overwrites.
        let mut act: libc::sigaction = unsafe { std::mem::zeroed() };
        // SAFETY: a query: `act` is live and receives the disposition.
        let ok = unsafe { libc::sigaction(sig, std::ptr::null(), &mut act) } == 0;
        if !ok || act.sa_sigaction == libc::SIG_IGN {
            continue;
        }
        // SAFETY: all-zero, as above.
        let mut new: libc::sigaction = unsafe { std::mem::zeroed() };
        new.sa_sigaction = handler as libc::sighandler_t;
        // SAFETY: `new` is live; its handler only calls _exit, which a
        // signal handler may call.
        unsafe { libc::sigaction(sig, &new, std::ptr::null_mut()) };
    }
}

fn run(out: &mut dyn Write) -> Result<(), Error> {
    let cmd = match cli::parse(std::env::args_os())? {
        Invocation::Help(text) | Invocation::Version(text) | Invocation::Completions(text) => {
            return write_out(out, &text)
        }
        Invocation::Run(cmd) => cmd,
    };
    let mut client = Client::connect().map_err(|e| match e {
        ConnectError::NotLoaded => Error::NotLoaded,
        ConnectError::Nl(cause) => Error::Failed {
            op: Op::Connect,
            cause,
        },
    })?;
    if cmd == (Command::Restore { atomic: false }) {
        return restore(&mut client, &mut io::stdin().lock(), out);
    }
    if cmd == (Command::Restore { atomic: true }) {
        return restore_atomic(&mut client, &mut io::stdin().lock());
    }
    if let Command::Monitor { json, timestamp } = cmd {
        exit_on_interrupt();
        let mut m = client
            .monitor(uapi::RVS_GENL_MCGRP_EVENTS)
            .map_err(|e| match e {
                MonitorError::NoGroup => Error::NoEvents,
                MonitorError::Nl(cause) => Error::Failed {
                    op: Op::Monitor,
                    cause,
                },
            })?;
        let mut clock = || timestamp.then(time_of_day);
        return monitor(&mut m, json, &mut clock, out);
    }
    run_command(&mut client, &cmd, out)?;
    warn_foreign_laddrs(&cmd);
    Ok(())
}

/// After `-A`/`-E --laddr`: a warning on standard error for each local
/// address that is not this host's (`host_addrs`). Not for `-R`, which
/// may run at boot before every address is up.
fn warn_foreign_laddrs(cmd: &Command) {
    let (Command::AddService(s) | Command::EditService(s)) = cmd else {
        return;
    };
    let Some(laddrs) = s.laddrs.as_deref().filter(|l| !l.is_empty()) else {
        return;
    };
    if let Ok(host) = host_addrs::host_addresses() {
        for a in host_addrs::foreign(laddrs, &host) {
            eprintln!("{}", host_addrs::warning(a));
        }
    }
}

fn main() -> ExitCode {
    let mut out = BufWriter::with_capacity(64 * 1024, io::stdout().lock());
    let result = run(&mut out).and_then(|()| out.flush().map_err(Error::Output));
    let code = match result {
        Ok(()) => EXIT_OK,
        // A closed pipe (rvsadm -L | head) is not an error worth a message.
        Err(Error::Output(e)) if e.kind() == io::ErrorKind::BrokenPipe => EXIT_OK,
        Err(e) => {
            // Whatever was listed before the failure goes out first.
            let _ = out.flush();
            eprintln!("rvsadm: {e}");
            if let Error::Usage(_) = e {
                eprintln!("Try `rvsadm -h' or `rvsadm --help' for more information.");
            }
            e.exit_code()
        }
    };
    ExitCode::from(code as u8)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rvsadm::msg::AttrWriter;

    /// Records requests and answers from canned replies.
    #[derive(Default)]
    struct Fake {
        sent: Vec<(&'static str, u8, Vec<u8>)>,
        fail_execute: Option<i32>,
        /// With `fail_execute`: the module gives no extended-ack message.
        no_extack: bool,
        services: Vec<Vec<u8>>,
        dests: Vec<Vec<u8>>,
        conns: Vec<Vec<u8>>,
        config: Vec<u8>,
        /// The FLUSH_CONNS reply (command, attributes), or its errno.
        flush: Option<Result<(u8, Vec<u8>), i32>>,
        /// Attributes the GET_INFO reply has after version and size.
        info: Vec<u8>,
        /// The GET_DAEMON dump's messages.
        daemons: Vec<Vec<u8>>,
        /// APPLY's refusal: errno and offset of the change at fault.
        fail_apply: Option<(i32, Option<u32>)>,
    }

    impl Transport for Fake {
        fn execute(&mut self, cmd: u8, attrs: &[u8]) -> Result<(), NlError> {
            self.sent.push(("execute", cmd, attrs.to_vec()));
            match self.fail_execute {
                Some(errno) => Err(NlError::Kernel {
                    errno,
                    message: (!self.no_extack).then(|| "Service not found".into()),
                }),
                None => Ok(()),
            }
        }
        fn get(&mut self, cmd: u8, attrs: &[u8]) -> Result<Reply, NlError> {
            self.sent.push(("get", cmd, attrs.to_vec()));
            if cmd == uapi::RVS_CMD_GET_INFO {
                let mut w = AttrWriter::new();
                w.put_u32(uapi::RVS_INFO_ATTR_VERSION, uapi::RVS_VERSION_CODE)
                    .put_u32(uapi::RVS_INFO_ATTR_CONN_TAB_SIZE, 4096)
                    .put_raw(&self.info);
                return Ok(Reply {
                    cmd: uapi::RVS_CMD_GET_INFO,
                    attrs: w.finish(),
                });
            }
            if cmd == uapi::RVS_CMD_FLUSH_CONNS {
                return match self.flush.clone().expect("no FLUSH_CONNS reply set") {
                    Ok((cmd, attrs)) => Ok(Reply { cmd, attrs }),
                    Err(errno) => Err(NlError::Kernel {
                        errno,
                        message: None,
                    }),
                };
            }
            if cmd == uapi::RVS_CMD_GET_CONFIG {
                return Ok(Reply {
                    cmd: uapi::RVS_CMD_SET_CONFIG,
                    attrs: self.config.clone(),
                });
            }
            Ok(Reply {
                cmd: uapi::RVS_CMD_NEW_SERVICE,
                attrs: self.services[0].clone(),
            })
        }
        fn dump(&mut self, cmd: u8, attrs: &[u8]) -> Result<Vec<Reply>, NlError> {
            self.sent.push(("dump", cmd, attrs.to_vec()));
            if cmd == uapi::RVS_CMD_GET_DAEMON {
                return Ok(self
                    .daemons
                    .iter()
                    .map(|a| Reply {
                        cmd: uapi::RVS_CMD_NEW_DAEMON,
                        attrs: a.clone(),
                    })
                    .collect());
            }
            let list = if cmd == uapi::RVS_CMD_GET_SERVICE {
                &self.services
            } else {
                &self.dests
            };
            Ok(list
                .iter()
                .map(|a| Reply {
                    cmd: cmd - 3, // NEW_SERVICE / NEW_DEST
                    attrs: a.clone(),
                })
                .collect())
        }
        fn dump_each(
            &mut self,
            cmd: u8,
            attrs: &[u8],
            f: EachReply<'_>,
        ) -> Result<Result<(), Error>, NlError> {
            self.sent.push(("dump_each", cmd, attrs.to_vec()));
            for a in &self.conns {
                let r = f(Reply {
                    cmd,
                    attrs: a.clone(),
                });
                if r.is_err() {
                    return Ok(r);
                }
            }
            Ok(Ok(()))
        }
        fn apply(&mut self, attrs: &[u8]) -> Result<(), (NlError, Option<u32>)> {
            self.sent
                .push(("apply", uapi::RVS_CMD_APPLY, attrs.to_vec()));
            match self.fail_apply {
                Some((errno, offset)) => Err((
                    NlError::Kernel {
                        errno,
                        message: Some("real server already exists".into()),
                    },
                    offset,
                )),
                None => Ok(()),
            }
        }
    }

    /// Runs a command against `f`, returning its output.
    fn run_on(f: &mut Fake, cmd: &Command) -> Result<String, Error> {
        let mut out = Vec::new();
        run_command(f, cmd, &mut out)?;
        Ok(String::from_utf8(out).unwrap())
    }

    fn command(args: &[&str]) -> Command {
        let mut v = vec!["rvsadm"];
        v.extend_from_slice(args);
        match cli::parse(v).unwrap() {
            Invocation::Run(c) => c,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn modifying_commands_send_the_right_request() {
        let cases: &[(&[&str], u8)] = &[
            (
                &["-A", "-t", "10.0.0.1:80", "-s", "rr"],
                uapi::RVS_CMD_NEW_SERVICE,
            ),
            (&["-E", "-t", "10.0.0.1:80"], uapi::RVS_CMD_SET_SERVICE),
            (&["-D", "-t", "10.0.0.1:80"], uapi::RVS_CMD_DEL_SERVICE),
            (&["-C"], uapi::RVS_CMD_FLUSH),
            (
                &["-a", "-t", "10.0.0.1:80", "-r", "10.0.1.1"],
                uapi::RVS_CMD_NEW_DEST,
            ),
            (
                &["-e", "-t", "10.0.0.1:80", "-r", "10.0.1.1"],
                uapi::RVS_CMD_SET_DEST,
            ),
            (
                &["-d", "-t", "10.0.0.1:80", "-r", "10.0.1.1"],
                uapi::RVS_CMD_DEL_DEST,
            ),
            (&["-Z"], uapi::RVS_CMD_ZERO),
            (&["-Z", "-u", "10.0.0.1:53"], uapi::RVS_CMD_ZERO),
            (&["--set", "900", "120", "300"], uapi::RVS_CMD_SET_CONFIG),
        ];
        for (args, want) in cases {
            let mut f = Fake::default();
            let out = run_on(&mut f, &command(args)).unwrap();
            assert_eq!(out, "");
            assert_eq!(f.sent.len(), 1, "{args:?}");
            assert_eq!((f.sent[0].0, f.sent[0].1), ("execute", *want), "{args:?}");
        }
        let mut f = Fake::default();
        run_on(&mut f, &Command::Clear).unwrap();
        assert!(f.sent[0].2.is_empty(), "FLUSH carries no attributes");
    }

    /// A FLUSH_CONNS reply as the module lays it out: the u64 count after
    /// a pad attribute that aligns it.
    fn flush_reply(n: u64) -> Option<Result<(u8, Vec<u8>), i32>> {
        let mut w = AttrWriter::new();
        w.put(uapi::RVS_INFO_ATTR_PAD, &[])
            .put(uapi::RVS_INFO_ATTR_CONN_FLUSHED, &n.to_ne_bytes());
        Some(Ok((uapi::RVS_CMD_FLUSH_CONNS, w.finish())))
    }

    #[test]
    fn flush_conns_sends_the_key_and_prints_the_count() {
        let key = rvsadm::types::ServiceKey::new(
            rvsadm::types::Protocol::Tcp,
            "10.0.0.1".parse().unwrap(),
            80,
        );
        let dest = rvsadm::types::DestKey {
            addr: "10.0.1.1".parse().unwrap(),
            port: 80,
        };
        let mut f = Fake {
            flush: flush_reply(3),
            ..Fake::default()
        };
        let out = run_on(&mut f, &command(&["--flush-conns", "-t", "10.0.0.1:80"])).unwrap();
        assert_eq!(out, "flushed 3 connections of TCP 10.0.0.1:80\n");
        assert_eq!(f.sent.len(), 1);
        assert_eq!(
            (f.sent[0].0, f.sent[0].1),
            ("get", uapi::RVS_CMD_FLUSH_CONNS)
        );
        assert_eq!(f.sent[0].2, msg::service_key_attrs(&key));
        let mut f = Fake {
            flush: flush_reply(1),
            ..Fake::default()
        };
        let args = ["--flush-conns", "-t", "10.0.0.1:80", "-r", "10.0.1.1"];
        let out = run_on(&mut f, &command(&args)).unwrap();
        assert_eq!(
            out,
            "flushed 1 connection of TCP 10.0.0.1:80 real server 10.0.1.1:80\n"
        );
        assert_eq!(f.sent[0].2, msg::flush_conns_attrs(&key, Some(&dest)));
        // The DEST nest is DEL_DEST's.
        assert_eq!(f.sent[0].2, msg::del_dest_attrs(&key, &dest));
        let mut f = Fake {
            flush: flush_reply(0),
            ..Fake::default()
        };
        let out = run_on(
            &mut f,
            &command(&["--flush-conns", "-f", "7", "-6", "--json"]),
        )
        .unwrap();
        assert_eq!(out, "{\"flushed\":0}\n");
        // The module's refusals, and replies rvsadm cannot read.
        for (errno, want) in [
            (
                3,
                "flushing connections failed: No such process (Service not defined)",
            ),
            (
                2,
                "flushing connections failed: No such file or directory (No such destination)",
            ),
        ] {
            let mut f = Fake {
                flush: Some(Err(errno)),
                ..Fake::default()
            };
            let e = run_on(&mut f, &command(&args)).unwrap_err();
            assert_eq!((e.to_string().as_str(), e.exit_code()), (want, 1));
        }
        for (reply, want) in [
            (
                (uapi::RVS_CMD_FLUSH_CONNS, Vec::new()),
                "flush reply without CONN_FLUSHED",
            ),
            (
                (uapi::RVS_CMD_GET_INFO, Vec::new()),
                "FLUSH_CONNS answered by command 15",
            ),
        ] {
            let mut f = Fake {
                flush: Some(Ok(reply)),
                ..Fake::default()
            };
            let e = run_on(&mut f, &command(&args)).unwrap_err();
            assert!(
                e.to_string()
                    .starts_with("flushing connections failed: malformed reply"),
                "{e}"
            );
            assert!(e.to_string().contains(want), "{e}");
        }
    }

    #[test]
    fn drain_sends_del_dest_with_drain_and_lists_seconds_left() {
        let args = ["-d", "-t", "10.0.0.1:80", "-r", "10.0.1.1", "--drain", "30"];
        let mut f = Fake::default();
        assert_eq!(run_on(&mut f, &command(&args)).unwrap(), "");
        let (how, cmd, attrs) = &f.sent[0];
        assert_eq!((*how, *cmd), ("execute", uapi::RVS_CMD_DEL_DEST));
        let dest = msg::find_attr(attrs, uapi::RVS_CMD_ATTR_DEST)
            .unwrap()
            .unwrap();
        assert_eq!(
            msg::find_attr(dest, uapi::RVS_DEST_ATTR_DRAIN).unwrap(),
            Some(&30u32.to_ne_bytes()[..])
        );
        // Without --drain, no DRAIN: the module deletes at once.
        let plain = command(&["-d", "-t", "10.0.0.1:80", "-r", "10.0.1.1"]).pipe_attrs();
        let dest = msg::find_attr(&plain, uapi::RVS_CMD_ATTR_DEST)
            .unwrap()
            .unwrap();
        assert_eq!(
            msg::find_attr(dest, uapi::RVS_DEST_ATTR_DRAIN).unwrap(),
            None
        );
        let mut f = Fake {
            fail_execute: Some(2),
            ..Fake::default()
        };
        let e = run_on(&mut f, &command(&args)).unwrap_err();
        assert!(
            e.to_string().starts_with("draining real server failed: "),
            "{e}"
        );
        // GET_DEST's DRAIN: the seconds left, after the counters.
        let mut draining = dest_reply([10, 0, 1, 1], 80);
        let inner = msg::find_attr(&draining, uapi::RVS_CMD_ATTR_DEST)
            .unwrap()
            .unwrap()
            .to_vec();
        let mut w = AttrWriter::new();
        w.nest(uapi::RVS_CMD_ATTR_DEST, |d| {
            d.put_raw(&inner).put_u32(uapi::RVS_DEST_ATTR_DRAIN, 25);
        });
        draining = w.finish();
        let mut f = Fake {
            services: vec![service_reply([10, 0, 0, 1], 80)],
            dests: vec![draining, dest_reply([10, 0, 1, 2], 80)],
            ..Fake::default()
        };
        let out = run_on(&mut f, &command(&["-L", "-n"])).unwrap();
        assert!(
            out.ends_with(
                "  -> 10.0.1.1:80                  Masq    1      0          0           draining 25s\n\
                 \x20 -> 10.0.1.2:80                  Masq    1      0          0         \n"
            ),
            "{out}"
        );
        let out = run_on(&mut f, &command(&["-S"])).unwrap();
        assert!(!out.contains("drain"), "{out}");
        let out = run_on(&mut f, &command(&["-L", "--json"])).unwrap();
        assert_eq!(out.matches(r#""drain_secs_left":25"#).count(), 1, "{out}");
    }

    #[test]
    fn zero_and_set_attributes() {
        let mut f = Fake::default();
        run_on(&mut f, &command(&["-Z"])).unwrap();
        assert!(f.sent[0].2.is_empty(), "ZERO of all carries no attributes");
        let mut f = Fake::default();
        run_on(&mut f, &command(&["--zero", "-t", "10.0.0.1:80"])).unwrap();
        let key = rvsadm::types::ServiceKey::new(
            rvsadm::types::Protocol::Tcp,
            "10.0.0.1".parse().unwrap(),
            80,
        );
        assert_eq!(f.sent[0].2, msg::service_key_attrs(&key));
        let mut f = Fake::default();
        run_on(&mut f, &command(&["--set", "0", "120", "300"])).unwrap();
        let mut w = AttrWriter::new();
        w.put_u32(4, 0).put_u32(5, 120).put_u32(6, 300);
        assert_eq!(f.sent[0].2, w.finish());
        let mut f = Fake {
            fail_execute: Some(3),
            ..Fake::default()
        };
        let e = run_on(&mut f, &command(&["-Z", "-t", "10.0.0.1:80"])).unwrap_err();
        assert!(
            e.to_string().starts_with("zeroing counters failed: "),
            "{e}"
        );
    }

    #[test]
    fn options() {
        let mut w = AttrWriter::new();
        w.put_u32(uapi::RVS_CMD_ATTR_TIMEOUT_TCP, 900)
            .put_u32(uapi::RVS_CMD_ATTR_EXPIRE_QUIESCENT_TEMPLATE, 1)
            .put_u32(uapi::RVS_CMD_ATTR_EXPIRE_NODEST_CONN, 0);
        let mut f = Fake {
            config: w.finish(),
            ..Fake::default()
        };
        let out = run_on(&mut f, &command(&["-L", "--options"])).unwrap();
        assert_eq!(
            out,
            "expire_nodest_conn        0\nexpire_quiescent_template 1\n"
        );
        let out = run_on(&mut f, &command(&["-L", "--options", "--json"])).unwrap();
        assert_eq!(
            out,
            "{\"options\":{\"expire_nodest_conn\":0,\"expire_quiescent_template\":1}}\n"
        );
        run_on(&mut f, &command(&["--set-option", "expire_nodest_conn=1"])).unwrap();
        let (_, cmd, attrs) = f.sent.last().unwrap();
        assert_eq!(*cmd, uapi::RVS_CMD_SET_CONFIG);
        let mut w = AttrWriter::new();
        w.put_u32(uapi::RVS_CMD_ATTR_EXPIRE_NODEST_CONN, 1);
        assert_eq!(*attrs, w.finish());
        // FullNAT's port range: listed and set through the settings table.
        let mut w = AttrWriter::new();
        w.put_u32(uapi::RVS_CMD_ATTR_VIP_GUARD, 0)
            .put_u32(uapi::RVS_CMD_ATTR_FULLNAT_PORT_MIN, 1024)
            .put_u32(uapi::RVS_CMD_ATTR_FULLNAT_PORT_MAX, 65535);
        let mut f = Fake {
            config: w.finish(),
            ..Fake::default()
        };
        assert_eq!(
            run_on(&mut f, &command(&["-L", "--options"])).unwrap(),
            "vip_guard        0 (off)\nfullnat_port_min 1024\nfullnat_port_max 65535\n"
        );
        assert_eq!(
            run_on(&mut f, &command(&["-L", "--options", "--json"])).unwrap(),
            "{\"options\":{\"vip_guard\":0,\"fullnat_port_min\":1024,\"fullnat_port_max\":65535}}\n"
        );
        let args = [
            "--set-option",
            "fullnat_port_max=60000",
            "--set-option",
            "fullnat_port_min=10000",
        ];
        run_on(&mut f, &command(&args)).unwrap();
        let mut w = AttrWriter::new();
        w.put_u32(uapi::RVS_CMD_ATTR_FULLNAT_PORT_MAX, 60000)
            .put_u32(uapi::RVS_CMD_ATTR_FULLNAT_PORT_MIN, 10000);
        assert_eq!(f.sent.last().unwrap().2, w.finish());
    }

    #[test]
    fn list_timeouts() {
        let mut w = AttrWriter::new();
        w.put_u32(uapi::RVS_CMD_ATTR_TIMEOUT_TCP, 900)
            .put_u32(uapi::RVS_CMD_ATTR_TIMEOUT_TCP_FIN, 120)
            .put_u32(uapi::RVS_CMD_ATTR_TIMEOUT_UDP, 300);
        let mut f = Fake {
            config: w.finish(),
            ..Fake::default()
        };
        let out = run_on(&mut f, &command(&["-L", "--timeout"])).unwrap();
        assert_eq!(out, "Timeout (tcp tcpfin udp): 900 120 300\n");
        assert_eq!(f.sent.len(), 1);
        assert_eq!(
            (f.sent[0].0, f.sent[0].1, f.sent[0].2.is_empty()),
            ("get", uapi::RVS_CMD_GET_CONFIG, true)
        );
        let out = run_on(&mut f, &command(&["-l", "--timeout", "--json"])).unwrap();
        assert_eq!(
            out,
            "{\"timeout\":{\"tcp\":900,\"tcpfin\":120,\"udp\":300}}\n"
        );
    }

    fn conn_reply(cport: u16, state: &str, expires_ms: u32) -> Vec<u8> {
        let v4 = |a: [u8; 4]| {
            let mut b = [0u8; 16];
            b[..4].copy_from_slice(&a);
            b
        };
        let mut w = AttrWriter::new();
        w.nest(uapi::RVS_CMD_ATTR_CONN, |c| {
            c.put_u16(uapi::RVS_CONN_ATTR_AF, 2)
                .put_u16(uapi::RVS_CONN_ATTR_PROTOCOL, 6)
                .put(uapi::RVS_CONN_ATTR_CADDR, &v4([10, 0, 0, 2]))
                .put_be16(uapi::RVS_CONN_ATTR_CPORT, cport)
                .put(uapi::RVS_CONN_ATTR_VADDR, &v4([10, 0, 100, 1]))
                .put_be16(uapi::RVS_CONN_ATTR_VPORT, 80)
                .put(uapi::RVS_CONN_ATTR_DADDR, &v4([10, 0, 1, 1]))
                .put_be16(uapi::RVS_CONN_ATTR_DPORT, 80)
                .put_str(uapi::RVS_CONN_ATTR_STATE, state)
                .put_u32(uapi::RVS_CONN_ATTR_EXPIRES, expires_ms)
                .put_u32(uapi::RVS_CONN_ATTR_FWD_METHOD, uapi::RVS_CONN_F_MASQ);
        });
        w.finish()
    }

    #[test]
    fn list_connections() {
        let mut f = Fake {
            conns: vec![
                conn_reply(40962, "ESTABLISHED", 899_999),
                conn_reply(40964, "SYN_RECV", 59_000),
            ],
            ..Fake::default()
        };
        let out = run_on(&mut f, &command(&["-L", "-n", "-c"])).unwrap();
        assert_eq!(
            out,
            "IPVS connection entries\n\
             pro expire state       source             virtual            destination\n\
             TCP 14:59  ESTABLISHED 10.0.0.2:40962     10.0.100.1:80      10.0.1.1:80\n\
             TCP 00:59  SYN_RECV    10.0.0.2:40964     10.0.100.1:80      10.0.1.1:80\n"
        );
        assert_eq!(f.sent.len(), 1);
        assert_eq!(
            (f.sent[0].0, f.sent[0].1, f.sent[0].2.is_empty()),
            ("dump_each", uapi::RVS_CMD_GET_CONN, true)
        );
        let out = run_on(&mut f, &command(&["-Lnc", "--json"])).unwrap();
        assert_eq!(
            out,
            concat!(
                r#"{"connections":[{"protocol":"tcp","expire_ms":899999,"state":"ESTABLISHED","#,
                r#""client":"10.0.0.2:40962","virtual":"10.0.100.1:80","destination":"10.0.1.1:80","forward":"masq"},"#,
                r#"{"protocol":"tcp","expire_ms":59000,"state":"SYN_RECV","client":"10.0.0.2:40964","#,
                r#""virtual":"10.0.100.1:80","destination":"10.0.1.1:80","forward":"masq"}]}"#,
                "\n"
            )
        );
        // Empty table: headers only; valid JSON.
        let mut f = Fake::default();
        assert_eq!(
            run_on(&mut f, &command(&["-L", "-c", "--json"])).unwrap(),
            "{\"connections\":[]}\n"
        );
        assert_eq!(
            run_on(&mut f, &command(&["-L", "-c"]))
                .unwrap()
                .lines()
                .count(),
            2
        );
        // A malformed entry stops the listing with an error.
        let mut f = Fake {
            conns: vec![conn_reply(1, "UDP", 0), vec![4, 0, 7, 0]],
            ..Fake::default()
        };
        let e = run_on(&mut f, &command(&["-L", "-c"])).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("listing connections failed: malformed reply"),
            "{e}"
        );
    }

    #[test]
    fn fullnat_connections_and_no_port_count() {
        let mut fullnat = conn_reply(40962, "ESTABLISHED", 899_999);
        let inner = msg::find_attr(&fullnat, uapi::RVS_CMD_ATTR_CONN)
            .unwrap()
            .unwrap()
            .to_vec();
        // FWD_METHOD again, FullNAT: the last one counts.
        let mut w = AttrWriter::new();
        w.nest(uapi::RVS_CMD_ATTR_CONN, |c| {
            c.put_raw(&inner)
                .put_u32(uapi::RVS_CONN_ATTR_FWD_METHOD, uapi::RVS_CONN_F_FULLNAT)
                .put(
                    uapi::RVS_CONN_ATTR_LADDR,
                    &[10, 0, 2, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
                )
                .put_be16(uapi::RVS_CONN_ATTR_LPORT, 1025);
        });
        fullnat = w.finish();
        let mut f = Fake {
            conns: vec![fullnat, conn_reply(40964, "SYN_RECV", 59_000)],
            ..Fake::default()
        };
        assert_eq!(
            run_on(&mut f, &command(&["-L", "-n", "-c"])).unwrap(),
            "IPVS connection entries\n\
             pro expire state       source             virtual            destination\n\
             TCP 14:59  ESTABLISHED 10.0.0.2:40962     10.0.100.1:80      10.0.1.1:80 local 10.0.2.1:1025\n\
             TCP 00:59  SYN_RECV    10.0.0.2:40964     10.0.100.1:80      10.0.1.1:80\n"
        );
        let json = run_on(&mut f, &command(&["-Lnc", "--json"])).unwrap();
        assert!(
            json.contains(r#""destination":"10.0.1.1:80","forward":"fullnat","laddr":"10.0.2.1","lport":1025},"#),
            "{json}"
        );
        assert!(
            json.ends_with(
                r#""destination":"10.0.1.1:80","forward":"masq"}]}
"#
            ),
            "{json}"
        );
        // GET_INFO's count: in the JSON listing only, as vip_guarded.
        let mut w = AttrWriter::new();
        w.put(uapi::RVS_INFO_ATTR_PAD, &[])
            .put(uapi::RVS_INFO_ATTR_VIP_GUARDED, &0u64.to_ne_bytes())
            .put(uapi::RVS_INFO_ATTR_CONN_FLUSHED, &0u64.to_ne_bytes())
            .put(uapi::RVS_INFO_ATTR_FULLNAT_NO_PORT, &12u64.to_ne_bytes())
            .put(uapi::RVS_INFO_ATTR_ENAT_NO_ROOM, &1u64.to_ne_bytes());
        let mut f = Fake {
            info: w.finish(),
            ..Fake::default()
        };
        assert_eq!(
            run_on(&mut f, &command(&["-L", "--json"])).unwrap(),
            "{\"version\":\"1.2.1\",\"conn_tab_size\":4096,\"vip_guarded\":0,\
             \"conn_flushed\":0,\"fullnat_no_port\":12,\"enat_no_room\":1,\"services\":[]}\n"
        );
        assert_eq!(
            run_on(&mut f, &command(&["-L", "-n"])).unwrap(),
            "IP Virtual Server version 1.2.1 (size=4096)\n\
             Prot LocalAddress:Port Scheduler Flags\n  \
             -> RemoteAddress:Port           Forward Weight ActiveConn InActConn\n"
        );
    }

    /// An ENAT connection, as the module sends it: method 6 and the local
    /// end (the VIP, a local port) in LADDR/LPORT, shown as FullNAT's.
    #[test]
    fn enat_connections_and_no_room_count() {
        let mut enat = conn_reply(40962, "ESTABLISHED", 899_999);
        let inner = msg::find_attr(&enat, uapi::RVS_CMD_ATTR_CONN)
            .unwrap()
            .unwrap()
            .to_vec();
        let mut w = AttrWriter::new();
        w.nest(uapi::RVS_CMD_ATTR_CONN, |c| {
            c.put_raw(&inner)
                .put_u32(uapi::RVS_CONN_ATTR_FWD_METHOD, uapi::RVS_CONN_F_ENAT)
                .put(
                    uapi::RVS_CONN_ATTR_LADDR,
                    &[10, 0, 100, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
                )
                .put_be16(uapi::RVS_CONN_ATTR_LPORT, 1030);
        });
        enat = w.finish();
        let mut f = Fake {
            conns: vec![enat, conn_reply(40964, "SYN_RECV", 59_000)],
            ..Fake::default()
        };
        assert_eq!(
            run_on(&mut f, &command(&["-L", "-n", "-c"])).unwrap(),
            "IPVS connection entries\n\
             pro expire state       source             virtual            destination\n\
             TCP 14:59  ESTABLISHED 10.0.0.2:40962     10.0.100.1:80      10.0.1.1:80 local 10.0.100.1:1030\n\
             TCP 00:59  SYN_RECV    10.0.0.2:40964     10.0.100.1:80      10.0.1.1:80\n"
        );
        let json = run_on(&mut f, &command(&["-Lnc", "--json"])).unwrap();
        assert!(
            json.contains(r#""destination":"10.0.1.1:80","forward":"enat","laddr":"10.0.100.1","lport":1030},"#),
            "{json}"
        );
        // GET_INFO's count: in the JSON listing only, absent when the
        // module does not send it, alone when only it is sent.
        let mut w = AttrWriter::new();
        w.put(uapi::RVS_INFO_ATTR_PAD, &[])
            .put(uapi::RVS_INFO_ATTR_ENAT_NO_ROOM, &5u64.to_ne_bytes());
        let mut f = Fake {
            info: w.finish(),
            ..Fake::default()
        };
        assert_eq!(
            run_on(&mut f, &command(&["-L", "--json"])).unwrap(),
            "{\"version\":\"1.2.1\",\"conn_tab_size\":4096,\"enat_no_room\":5,\"services\":[]}\n"
        );
        assert!(!run_on(&mut f, &command(&["-L", "-n"]))
            .unwrap()
            .contains("enat"));
        let mut f = Fake::default();
        assert!(!run_on(&mut f, &command(&["-L", "--json"]))
            .unwrap()
            .contains("enat_no_room"));
    }

    /// Stops after a byte budget, like a pipe closed by the reader.
    struct ShortWriter(usize);

    impl Write for ShortWriter {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            if self.0 < buf.len() {
                return Err(io::ErrorKind::BrokenPipe.into());
            }
            self.0 -= buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn connection_listing_stops_when_output_fails() {
        let mut f = Fake {
            conns: (0..1000)
                .map(|i| conn_reply(i, "ESTABLISHED", 1000))
                .collect(),
            ..Fake::default()
        };
        let mut out = ShortWriter(500);
        let e = run_command(&mut f, &command(&["-L", "-c"]), &mut out).unwrap_err();
        assert!(matches!(e, Error::Output(ref io) if io.kind() == io::ErrorKind::BrokenPipe));
    }

    #[test]
    fn restore_applies_lines_and_stops_at_the_first_bad_one() {
        let input = "# rules\n-A -t 10.0.0.1:80 -s rr\n\n-a -t 10.0.0.1:80 -r 10.0.1.1:80 -m -w 1\n-A -f 1 -s sh -b sh-port\n";
        let mut f = Fake::default();
        let mut out = Vec::new();
        restore(&mut f, &mut input.as_bytes(), &mut out).unwrap();
        let cmds: Vec<u8> = f.sent.iter().map(|s| s.1).collect();
        assert_eq!(
            cmds,
            vec![
                uapi::RVS_CMD_NEW_SERVICE,
                uapi::RVS_CMD_NEW_DEST,
                uapi::RVS_CMD_NEW_SERVICE
            ]
        );
        assert_eq!(
            f.sent[1].2,
            command(&[
                "-a",
                "-t",
                "10.0.0.1:80",
                "-r",
                "10.0.1.1:80",
                "-m",
                "-w",
                "1"
            ])
            .pipe_attrs()
        );

        // A bad line: the ones before were applied, none after.
        let input = "-A -t 10.0.0.1:80 -s rr\n-a -t 10.0.0.1:80 -r 10.0.1.1:8080 -g\n-C\n";
        let mut f = Fake::default();
        let e = restore(&mut f, &mut input.as_bytes(), &mut Vec::new()).unwrap_err();
        assert_eq!(f.sent.len(), 1);
        assert_eq!(e.exit_code(), 2);
        let text = e.to_string();
        assert!(
            text.starts_with("restore stopped at line 2 `-a -t 10.0.0.1:80 -r 10.0.1.1:8080 -g': port mapping requires masquerading"),
            "{text}"
        );
        // A line the module refuses.
        let mut f = Fake {
            fail_execute: Some(17),
            ..Fake::default()
        };
        let e = restore(
            &mut f,
            &mut "\n-A -t 10.0.0.1:80 -s rr\n-C\n".as_bytes(),
            &mut Vec::new(),
        )
        .unwrap_err();
        assert_eq!(f.sent.len(), 1);
        assert_eq!(e.exit_code(), 1);
        assert!(
            e.to_string()
                .starts_with("restore stopped at line 2 `-A -t 10.0.0.1:80 -s rr': adding service failed: File exists"),
            "{e}"
        );
    }

    #[test]
    fn atomic_restore_sends_every_line_in_one_request() {
        let input = "# rules\n-C\n-A -t 10.0.0.1:80 -s rr\n\n-a -t 10.0.0.1:80 -r 10.0.1.1:80 -m -w 1\n-d -t 10.0.0.1:80 -r 10.0.1.2:80\n";
        let mut f = Fake::default();
        restore_atomic(&mut f, &mut input.as_bytes()).unwrap();
        assert_eq!(f.sent.len(), 1);
        let (kind, cmd, attrs) = &f.sent[0];
        assert_eq!((*kind, *cmd), ("apply", uapi::RVS_CMD_APPLY));
        // Each change is an RVS_CMD_ATTR_OP with its command and the
        // attributes the command sends alone.
        let mut expect = Vec::new();
        expect.extend(msg::apply_op(uapi::RVS_CMD_FLUSH, &[]));
        expect.extend(msg::apply_op(
            uapi::RVS_CMD_NEW_SERVICE,
            &command(&["-A", "-t", "10.0.0.1:80", "-s", "rr"]).pipe_attrs(),
        ));
        expect.extend(msg::apply_op(
            uapi::RVS_CMD_NEW_DEST,
            &command(&[
                "-a",
                "-t",
                "10.0.0.1:80",
                "-r",
                "10.0.1.1:80",
                "-m",
                "-w",
                "1",
            ])
            .pipe_attrs(),
        ));
        expect.extend(msg::apply_op(
            uapi::RVS_CMD_DEL_DEST,
            &command(&["-d", "-t", "10.0.0.1:80", "-r", "10.0.1.2:80"]).pipe_attrs(),
        ));
        assert_eq!(attrs, &expect);
        let ops: Vec<u16> = msg::Attrs::new(attrs).map(|a| a.unwrap().0).collect();
        assert_eq!(ops, vec![uapi::RVS_CMD_ATTR_OP; 4]);
    }

    #[test]
    fn atomic_restore_names_the_refused_line_and_applies_nothing() {
        let input = "-A -t 10.0.0.1:80 -s rr\n-a -t 10.0.0.1:80 -r 10.0.1.1:80 -m\n\n-a -t 10.0.0.1:80 -r 10.0.1.1:80 -m\n";
        let first = msg::apply_op(
            uapi::RVS_CMD_NEW_SERVICE,
            &command(&["-A", "-t", "10.0.0.1:80", "-s", "rr"]).pipe_attrs(),
        )
        .len();
        let second = msg::apply_op(
            uapi::RVS_CMD_NEW_DEST,
            &command(&["-a", "-t", "10.0.0.1:80", "-r", "10.0.1.1:80", "-m"]).pipe_attrs(),
        )
        .len();
        // The kernel points at the third change's attribute: 20 bytes of
        // headers before the attributes.
        let mut f = Fake {
            fail_apply: Some((17, Some((20 + first + second) as u32))),
            ..Fake::default()
        };
        let e = restore_atomic(&mut f, &mut input.as_bytes()).unwrap_err();
        assert_eq!(e.exit_code(), 1);
        assert_eq!(
            e.to_string(),
            "atomic restore refused line 4 `-a -t 10.0.0.1:80 -r 10.0.1.1:80 -m': adding real server failed: File exists (real server already exists) (nothing was applied)"
        );
        // Without an offset, the request as a whole.
        let mut f = Fake {
            fail_apply: Some((12, None)),
            ..Fake::default()
        };
        let e = restore_atomic(&mut f, &mut input.as_bytes()).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("applying the rules atomically failed"),
            "{e}"
        );
        // Lines that are not rule changes stop it before anything is sent.
        for (line, n) in [
            ("-Z", 2),
            ("--set 1 2 3", 2),
            ("-d -t 10.0.0.1:80 -r 10.0.1.1 --drain 5", 2),
        ] {
            let mut f = Fake::default();
            let input = format!("-A -t 10.0.0.1:80 -s rr\n{line}\n");
            let e = restore_atomic(&mut f, &mut input.as_bytes()).unwrap_err();
            assert!(f.sent.is_empty());
            assert_eq!(e.exit_code(), 2);
            assert_eq!(
                e.to_string(),
                format!("atomic restore refused line {n} `{line}': only -A -E -D -C -a -e -d (without --drain) can be part of an atomic restore (nothing was applied)")
            );
        }
    }

    /// The attributes a command line sends.
    trait PipeAttrs {
        fn pipe_attrs(&self) -> Vec<u8>;
    }

    impl PipeAttrs for Command {
        fn pipe_attrs(&self) -> Vec<u8> {
            let mut f = Fake::default();
            run_on(&mut f, self).unwrap();
            f.sent.remove(0).2
        }
    }

    #[test]
    fn save_prints_rules() {
        let mut f = Fake {
            services: vec![service_reply([10, 0, 0, 1], 80)],
            dests: vec![dest_reply([10, 0, 1, 1], 80)],
            ..Fake::default()
        };
        let out = run_on(&mut f, &command(&["-S", "-n"])).unwrap();
        assert_eq!(
            out,
            "-A -t 10.0.0.1:80 -s rr\n-a -t 10.0.0.1:80 -r 10.0.1.1:80 -m -w 1\n"
        );
        let calls: Vec<(&str, u8)> = f.sent.iter().map(|s| (s.0, s.1)).collect();
        assert_eq!(
            calls,
            vec![
                ("dump", uapi::RVS_CMD_GET_SERVICE),
                ("dump", uapi::RVS_CMD_GET_DEST)
            ]
        );
    }

    #[test]
    fn kernel_error_is_reported_with_context() {
        let mut f = Fake {
            fail_execute: Some(2),
            ..Fake::default()
        };
        let e = run_on(&mut f, &command(&["-E", "-t", "10.0.0.1:80"])).unwrap_err();
        assert_eq!(
            e.to_string(),
            "editing service failed: No such file or directory (Service not found)"
        );
        assert_eq!(e.exit_code(), 1);
    }

    fn service_reply(addr: [u8; 4], port: u16) -> Vec<u8> {
        let mut a = [0u8; 16];
        a[..4].copy_from_slice(&addr);
        let mut w = AttrWriter::new();
        w.nest(uapi::RVS_CMD_ATTR_SERVICE, |s| {
            s.put_u16(uapi::RVS_SVC_ATTR_AF, 2)
                .put_u16(uapi::RVS_SVC_ATTR_PROTOCOL, 6)
                .put(uapi::RVS_SVC_ATTR_ADDR, &a)
                .put_be16(uapi::RVS_SVC_ATTR_PORT, port)
                .put_str(uapi::RVS_SVC_ATTR_SCHED_NAME, "rr")
                .put(uapi::RVS_SVC_ATTR_FLAGS, &[0; 8]);
        });
        w.finish()
    }

    fn dest_reply(addr: [u8; 4], port: u16) -> Vec<u8> {
        dest_reply_fwd(addr, port, uapi::RVS_CONN_F_MASQ)
    }

    /// `dest_reply` with forwarding method `fwd`.
    fn dest_reply_fwd(addr: [u8; 4], port: u16, fwd: u32) -> Vec<u8> {
        let mut a = [0u8; 16];
        a[..4].copy_from_slice(&addr);
        let mut w = AttrWriter::new();
        w.nest(uapi::RVS_CMD_ATTR_DEST, |d| {
            d.put(uapi::RVS_DEST_ATTR_ADDR, &a)
                .put_be16(uapi::RVS_DEST_ATTR_PORT, port)
                .put_u32(uapi::RVS_DEST_ATTR_FWD_METHOD, fwd)
                .put_u32(uapi::RVS_DEST_ATTR_WEIGHT, 1);
        });
        w.finish()
    }

    /// `service_reply` with local addresses, as the module sends them: a
    /// LADDRS nest of 16-byte ADDRs.
    fn laddrs_service_reply(addr: [u8; 4], port: u16, laddrs: &[[u8; 4]]) -> Vec<u8> {
        let plain = service_reply(addr, port);
        let inner = msg::find_attr(&plain, uapi::RVS_CMD_ATTR_SERVICE)
            .unwrap()
            .unwrap()
            .to_vec();
        let mut w = AttrWriter::new();
        w.nest(uapi::RVS_CMD_ATTR_SERVICE, |s| {
            s.put_raw(&inner).nest(uapi::RVS_SVC_ATTR_LADDRS, |l| {
                for a in laddrs {
                    let mut b = [0u8; 16];
                    b[..4].copy_from_slice(a);
                    l.put(uapi::RVS_LADDR_ATTR_ADDR, &b);
                }
            });
        });
        w.finish()
    }

    /// `dest_reply` of a FullNAT real server.
    fn fullnat_dest_reply(addr: [u8; 4], port: u16) -> Vec<u8> {
        dest_reply_fwd(addr, port, uapi::RVS_CONN_F_FULLNAT)
    }

    /// An ENAT real server: listed, saved, restored and saved again.
    #[test]
    fn enat_servers_listed_saved_and_restored() {
        let mut f = Fake {
            services: vec![service_reply([10, 0, 0, 5], 80)],
            dests: vec![
                dest_reply_fwd([10, 0, 1, 7], 80, uapi::RVS_CONN_F_ENAT),
                dest_reply([10, 0, 1, 8], 80),
            ],
            ..Fake::default()
        };
        assert_eq!(
            run_on(&mut f, &command(&["-L", "-n"])).unwrap(),
            "IP Virtual Server version 1.2.1 (size=4096)\n\
             Prot LocalAddress:Port Scheduler Flags\n  \
             -> RemoteAddress:Port           Forward Weight ActiveConn InActConn\n\
             TCP  10.0.0.5:80 rr\n  \
             -> 10.0.1.7:80                  Enat    1      0          0         \n  \
             -> 10.0.1.8:80                  Masq    1      0          0         \n"
        );
        let json = run_on(&mut f, &command(&["-L", "--json"])).unwrap();
        assert!(
            json.contains(r#"{"address":"10.0.1.7","port":80,"forward":"enat","#),
            "{json}"
        );
        let rules = run_on(&mut f, &command(&["-S", "-n"])).unwrap();
        assert_eq!(
            rules,
            "-A -t 10.0.0.5:80 -s rr\n\
             -a -t 10.0.0.5:80 -r 10.0.1.7:80 --enat -w 1\n\
             -a -t 10.0.0.5:80 -r 10.0.1.8:80 -m -w 1\n"
        );
        let mut g = Fake::default();
        restore(&mut g, &mut rules.as_bytes(), &mut Vec::new()).unwrap();
        let cmds: Vec<u8> = g.sent.iter().map(|s| s.1).collect();
        assert_eq!(
            cmds,
            [
                uapi::RVS_CMD_NEW_SERVICE,
                uapi::RVS_CMD_NEW_DEST,
                uapi::RVS_CMD_NEW_DEST
            ]
        );
        let d = msg::parse_dest_reply(&g.sent[1].2, 2).unwrap();
        assert_eq!((d.forward, d.port), (rvsadm::types::Forward::Enat, 80));
        let mut h = Fake {
            services: vec![g.sent[0].2.clone()],
            dests: vec![g.sent[1].2.clone(), g.sent[2].2.clone()],
            ..Fake::default()
        };
        assert_eq!(run_on(&mut h, &command(&["-S"])).unwrap(), rules);
    }

    /// The LADDRS nest of a NEW/SET_SERVICE request, if any.
    fn sent_laddrs(attrs: &[u8]) -> Option<Vec<u8>> {
        let svc = msg::find_attr(attrs, uapi::RVS_CMD_ATTR_SERVICE)
            .unwrap()
            .unwrap();
        msg::find_attr(svc, uapi::RVS_SVC_ATTR_LADDRS)
            .unwrap()
            .map(<[u8]>::to_vec)
    }

    #[test]
    fn local_addresses_sent_listed_saved_and_restored() {
        // -A/-E send LADDRS only with --laddr; none sends an empty nest.
        let sent = |args: &[&str]| sent_laddrs(&command(args).pipe_attrs());
        assert_eq!(sent(&["-E", "-t", "10.0.0.5:80", "-s", "rr"]), None);
        assert_eq!(sent(&["-A", "-t", "10.0.0.5:80"]), None);
        assert_eq!(
            sent(&["-E", "-t", "10.0.0.5:80", "--laddr", "none"]),
            Some(vec![])
        );
        let mut one = AttrWriter::new();
        one.put(
            uapi::RVS_LADDR_ATTR_ADDR,
            &[10, 0, 2, 9, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
        );
        assert_eq!(
            sent(&["-E", "-t", "10.0.0.5:80", "--laddr", "10.0.2.9"]),
            Some(one.finish())
        );
        let mut f = Fake {
            services: vec![laddrs_service_reply(
                [10, 0, 0, 5],
                80,
                &[[10, 0, 2, 1], [10, 0, 2, 2]],
            )],
            dests: vec![
                fullnat_dest_reply([10, 0, 1, 7], 8080),
                dest_reply([10, 0, 1, 8], 80),
            ],
            ..Fake::default()
        };
        assert_eq!(
            run_on(&mut f, &command(&["-L", "-n"])).unwrap(),
            "IP Virtual Server version 1.2.1 (size=4096)\n\
             Prot LocalAddress:Port Scheduler Flags\n  \
             -> RemoteAddress:Port           Forward Weight ActiveConn InActConn\n\
             TCP  10.0.0.5:80 rr\n  \
             local addresses: 10.0.2.1, 10.0.2.2\n  \
             -> 10.0.1.7:8080                FullNat 1      0          0         \n  \
             -> 10.0.1.8:80                  Masq    1      0          0         \n"
        );
        let json = run_on(&mut f, &command(&["-L", "--json"])).unwrap();
        assert!(
            json.contains(r#""laddrs":["10.0.2.1","10.0.2.2"]"#),
            "{json}"
        );
        assert!(json.contains(r#""forward":"fullnat""#), "{json}");
        let rules = run_on(&mut f, &command(&["-S", "-n"])).unwrap();
        assert_eq!(
            rules,
            "-A -t 10.0.0.5:80 -s rr --laddr 10.0.2.1 --laddr 10.0.2.2\n\
             -a -t 10.0.0.5:80 -r 10.0.1.7:8080 --fullnat -w 1\n\
             -a -t 10.0.0.5:80 -r 10.0.1.8:80 -m -w 1\n"
        );
        // -R of those lines: the service with its local addresses first,
        // then its servers, FullNAT as FullNAT.
        let mut g = Fake::default();
        restore(&mut g, &mut rules.as_bytes(), &mut Vec::new()).unwrap();
        let cmds: Vec<u8> = g.sent.iter().map(|s| s.1).collect();
        assert_eq!(
            cmds,
            [
                uapi::RVS_CMD_NEW_SERVICE,
                uapi::RVS_CMD_NEW_DEST,
                uapi::RVS_CMD_NEW_DEST
            ]
        );
        let svc = msg::parse_service_reply(&g.sent[0].2).unwrap();
        assert_eq!(
            svc.laddrs,
            [
                "10.0.2.1".parse::<std::net::IpAddr>().unwrap(),
                "10.0.2.2".parse().unwrap()
            ]
        );
        let d = msg::parse_dest_reply(&g.sent[1].2, 2).unwrap();
        assert_eq!((d.forward, d.port), (rvsadm::types::Forward::FullNat, 8080));
        // And what was restored saves as it was: the requests, answered
        // back as the module lists them, give the same rules.
        let mut h = Fake {
            services: vec![g.sent[0].2.clone()],
            dests: vec![g.sent[1].2.clone(), g.sent[2].2.clone()],
            ..Fake::default()
        };
        assert_eq!(run_on(&mut h, &command(&["-S"])).unwrap(), rules);
    }

    #[test]
    fn list_queries_info_services_and_dests() {
        let mut f = Fake {
            services: vec![service_reply([10, 0, 0, 1], 80)],
            dests: vec![dest_reply([10, 0, 1, 1], 80)],
            ..Fake::default()
        };
        let out = run_on(&mut f, &command(&["-L", "-n"])).unwrap();
        assert_eq!(
            out,
            "IP Virtual Server version 1.2.1 (size=4096)\n\
             Prot LocalAddress:Port Scheduler Flags\n  \
             -> RemoteAddress:Port           Forward Weight ActiveConn InActConn\n\
             TCP  10.0.0.1:80 rr\n  \
             -> 10.0.1.1:80                  Masq    1      0          0         \n"
        );
        let calls: Vec<(&str, u8)> = f.sent.iter().map(|s| (s.0, s.1)).collect();
        assert_eq!(
            calls,
            vec![
                ("get", uapi::RVS_CMD_GET_INFO),
                ("dump", uapi::RVS_CMD_GET_SERVICE),
                ("dump", uapi::RVS_CMD_GET_DEST),
            ]
        );
        assert!(f.sent[0].2.is_empty() && f.sent[1].2.is_empty());
        // GET_DEST names the service by AF, PROTOCOL, ADDR, PORT.
        let key = msg::service_key_attrs(&rvsadm::types::ServiceKey::new(
            rvsadm::types::Protocol::Tcp,
            "10.0.0.1".parse().unwrap(),
            80,
        ));
        assert_eq!(f.sent[2].2, key);

        // One service: GET_SERVICE as a plain request, then JSON.
        let mut f = Fake {
            services: vec![service_reply([10, 0, 0, 1], 80)],
            ..Fake::default()
        };
        let out = run_on(&mut f, &command(&["-L", "-t", "10.0.0.1:80", "--json"])).unwrap();
        assert!(out.starts_with("{\"version\":\"1.2.1\""), "{out}");
        assert_eq!(
            (f.sent[1].0, f.sent[1].1),
            ("get", uapi::RVS_CMD_GET_SERVICE)
        );
        assert_eq!(f.sent[1].2, key);
    }

    #[test]
    fn list_stats_and_rate_from_stats64() {
        let stats = |w: &mut AttrWriter| {
            w.put(uapi::RVS_STATS_ATTR_PAD, &[]);
            for (ty, v) in [(1u16, 5u64), (2, 50), (3, 40), (4, 3000), (5, 250_000_000)] {
                w.put(ty, &v.to_ne_bytes());
            }
            w.put(uapi::RVS_STATS_ATTR_PAD, &[0; 5]);
            for (ty, v) in [(6u16, 1u64), (7, 12), (8, 10), (9, 900), (10, 800)] {
                w.put(ty, &v.to_ne_bytes());
            }
        };
        let mut svc = service_reply([10, 0, 0, 1], 80);
        // Append STATS64 inside the service nest: rebuild it.
        let inner = msg::find_attr(&svc, uapi::RVS_CMD_ATTR_SERVICE)
            .unwrap()
            .unwrap()
            .to_vec();
        let mut w = AttrWriter::new();
        w.nest(uapi::RVS_CMD_ATTR_SERVICE, |s| {
            s.put_raw(&inner);
            s.nest(uapi::RVS_SVC_ATTR_STATS64, stats);
        });
        svc = w.finish();
        let mut a = [0u8; 16];
        a[..4].copy_from_slice(&[10, 0, 1, 1]);
        let mut w = AttrWriter::new();
        w.nest(uapi::RVS_CMD_ATTR_DEST, |d| {
            d.put(uapi::RVS_DEST_ATTR_ADDR, &a)
                .put_be16(uapi::RVS_DEST_ATTR_PORT, 80)
                .nest(uapi::RVS_DEST_ATTR_STATS64, stats);
        });
        let mut f = Fake {
            services: vec![svc],
            dests: vec![w.finish()],
            ..Fake::default()
        };
        let out = run_on(&mut f, &command(&["-L", "-n", "--stats"])).unwrap();
        assert_eq!(
            out,
            "IP Virtual Server version 1.2.1 (size=4096)\n\
             Prot LocalAddress:Port               Conns   InPkts  OutPkts  InBytes OutBytes\n  \
             -> RemoteAddress:Port\n\
             TCP  10.0.0.1:80                         5       50       40     3000  250000K\n  \
             -> 10.0.1.1:80                         5       50       40     3000  250000K\n"
        );
        let out = run_on(&mut f, &command(&["-L", "-n", "--stats", "--exact"])).unwrap();
        assert!(out.contains("     3000 250000000\n"), "{out}");
        let out = run_on(&mut f, &command(&["-L", "-n", "--rate"])).unwrap();
        assert_eq!(
            out,
            "IP Virtual Server version 1.2.1 (size=4096)\n\
             Prot LocalAddress:Port                 CPS    InPPS   OutPPS    InBPS   OutBPS\n  \
             -> RemoteAddress:Port\n\
             TCP  10.0.0.1:80                         1       12       10      900      800\n  \
             -> 10.0.1.1:80                         1       12       10      900      800\n"
        );
        let out = run_on(&mut f, &command(&["-L", "--json"])).unwrap();
        assert!(
            out.contains(r#""stats":{"conns":5,"inpkts":50,"outpkts":40,"inbytes":3000,"outbytes":250000000,"cps":1,"inpps":12,"outpps":10,"inbps":900,"outbps":800}"#),
            "{out}"
        );
    }

    /// A GET_DAEMON dump message as the module lays one out (IPVS's
    /// fields, then rvs's counters after a PAD).
    fn daemon_reply(state: u32, ifn: &str, syncid: u32, counters: [u64; 5]) -> Vec<u8> {
        let mut w = AttrWriter::new();
        w.nest(uapi::RVS_CMD_ATTR_DAEMON, |d| {
            d.put_u32(uapi::RVS_DAEMON_ATTR_STATE, state)
                .put_str(uapi::RVS_DAEMON_ATTR_MCAST_IFN, ifn)
                .put_u32(uapi::RVS_DAEMON_ATTR_SYNC_ID, syncid)
                .put_u16(uapi::RVS_DAEMON_ATTR_SYNC_MAXLEN, 1472)
                .put(uapi::RVS_DAEMON_ATTR_MCAST_GROUP, &[224, 0, 0, 81])
                .put_u16(uapi::RVS_DAEMON_ATTR_MCAST_PORT, 8848)
                .put(uapi::RVS_DAEMON_ATTR_MCAST_TTL, &[1])
                .put(uapi::RVS_DAEMON_ATTR_PAD, &[]);
            for (ty, v) in [
                uapi::RVS_DAEMON_ATTR_MSGS,
                uapi::RVS_DAEMON_ATTR_CONNS,
                uapi::RVS_DAEMON_ATTR_REFUSED,
                uapi::RVS_DAEMON_ATTR_LOST,
                uapi::RVS_DAEMON_ATTR_RESYNCS,
            ]
            .into_iter()
            .zip(counters)
            {
                d.put(ty, &v.to_ne_bytes());
            }
        });
        w.finish()
    }

    #[test]
    fn sync_daemons_started_stopped_and_listed() {
        // --start-daemon: one NEW_DAEMON, nothing printed; its nest by hand
        // (native-endian numbers as the module reads them).
        let ne16 = |v: u16| v.to_ne_bytes();
        let ne32 = |v: u32| v.to_ne_bytes();
        let mut f = Fake::default();
        let out = run_on(
            &mut f,
            &command(&[
                "--start-daemon",
                "master",
                "--mcast-interface",
                "eth1",
                "--syncid",
                "7",
                "--mcast-port",
                "8849",
                "--mcast-group",
                "239.0.0.9",
            ]),
        )
        .unwrap();
        assert_eq!(out, "");
        let want: Vec<u8> = [
            &ne16(48)[..],
            &ne16(0x8003),
            &ne16(8),
            &ne16(1),
            &ne32(1),
            &ne16(9),
            &ne16(2),
            b"eth1\0\0\0\0",
            &ne16(8),
            &ne16(3),
            &ne32(7),
            &ne16(6),
            &ne16(7),
            &ne16(8849),
            &[0, 0],
            &ne16(8),
            &ne16(5),
            &[239, 0, 0, 9],
        ]
        .concat();
        assert_eq!(f.sent, vec![("execute", uapi::RVS_CMD_NEW_DAEMON, want)]);
        // Without options: ipvsadm's eth0 and syncid 0, nothing else.
        let mut f = Fake::default();
        run_on(&mut f, &command(&["--start-daemon", "backup"])).unwrap();
        let want: Vec<u8> = [
            &ne16(32)[..],
            &ne16(0x8003),
            &ne16(8),
            &ne16(1),
            &ne32(2),
            &ne16(9),
            &ne16(2),
            b"eth0\0\0\0\0",
            &ne16(8),
            &ne16(3),
            &ne32(0),
        ]
        .concat();
        assert_eq!(f.sent, vec![("execute", uapi::RVS_CMD_NEW_DAEMON, want)]);
        // --stop-daemon: DEL_DAEMON with the state alone (--syncid, which
        // ipvsadm takes, not sent).
        let mut f = Fake::default();
        run_on(
            &mut f,
            &command(&["--stop-daemon", "backup", "--syncid", "7"]),
        )
        .unwrap();
        let want: Vec<u8> = [&ne16(12)[..], &ne16(0x8003), &ne16(8), &ne16(1), &ne32(2)].concat();
        assert_eq!(f.sent, vec![("execute", uapi::RVS_CMD_DEL_DAEMON, want)]);

        // -L --daemon: one GET_DAEMON dump without attributes; the lines
        // of ipvsadm's list_daemon, the counters only in the JSON.
        let mut f = Fake {
            daemons: vec![
                daemon_reply(uapi::RVS_DAEMON_MASTER, "eth1", 7, [120, 3400, 0, 2, 1]),
                daemon_reply(uapi::RVS_DAEMON_BACKUP, "eth2", 0, [5, 50, 1, 0, 3]),
            ],
            ..Fake::default()
        };
        assert_eq!(
            run_on(&mut f, &command(&["-L", "--daemon"])).unwrap(),
            "master sync daemon (mcast=eth1, syncid=7, maxlen=1472, group=224.0.0.81, port=8848, ttl=1)\n\
             backup sync daemon (mcast=eth2, syncid=0, maxlen=1472, group=224.0.0.81, port=8848, ttl=1)\n"
        );
        assert_eq!(f.sent, vec![("dump", uapi::RVS_CMD_GET_DAEMON, vec![])]);
        assert_eq!(
            run_on(&mut f, &command(&["--list", "--daemon", "--json"])).unwrap(),
            concat!(
                r#"{"daemons":[{"state":"master","mcast_interface":"eth1","syncid":7,"sync_maxlen":1472,"#,
                r#""mcast_group":"224.0.0.81","mcast_port":8848,"mcast_ttl":1,"msgs":120,"conns":3400,"#,
                r#""refused":0,"lost":2,"resyncs":1},{"state":"backup","mcast_interface":"eth2","syncid":0,"#,
                r#""sync_maxlen":1472,"mcast_group":"224.0.0.81","mcast_port":8848,"mcast_ttl":1,"#,
                r#""msgs":5,"conns":50,"refused":1,"lost":0,"resyncs":3}]}"#,
                "\n"
            )
        );
        // None runs: nothing (as ipvsadm), or an empty list.
        let mut f = Fake::default();
        assert_eq!(run_on(&mut f, &command(&["-L", "--daemon"])).unwrap(), "");
        assert_eq!(
            run_on(&mut f, &command(&["-L", "--daemon", "--json"])).unwrap(),
            "{\"daemons\":[]}\n"
        );
        // A reply rvsadm cannot read.
        let mut f = Fake {
            daemons: vec![daemon_reply(3, "eth1", 7, [0; 5])],
            ..Fake::default()
        };
        let e = run_on(&mut f, &command(&["-L", "--daemon"])).unwrap_err();
        assert_eq!(
            (e.to_string().as_str(), e.exit_code()),
            (
                "listing sync daemons failed: malformed reply from the module: daemon STATE 3 \
                 is neither master (1) nor backup (2)",
                1
            )
        );
        // -S lists no daemon (ipvsadm's -S neither).
        let mut f = Fake {
            daemons: vec![daemon_reply(uapi::RVS_DAEMON_MASTER, "eth1", 7, [0; 5])],
            ..Fake::default()
        };
        assert_eq!(run_on(&mut f, &command(&["-S"])).unwrap(), "");
        assert_eq!(f.sent, vec![("dump", uapi::RVS_CMD_GET_SERVICE, vec![])]);
    }

    #[test]
    fn sync_daemon_refusals() {
        let fail = |args: &[&str], errno: i32, extack: bool| {
            let mut f = Fake {
                fail_execute: Some(errno),
                no_extack: !extack,
                ..Fake::default()
            };
            let e = run_on(&mut f, &command(args)).unwrap_err();
            assert_eq!(e.exit_code(), 1);
            e.to_string()
        };
        let start = ["--start-daemon", "master", "--mcast-interface", "bond0"];
        assert_eq!(
            fail(&start, 17, false),
            "starting master sync daemon on bond0 failed: File exists (a master sync daemon is already running)"
        );
        assert_eq!(
            fail(&start, 19, false),
            "starting master sync daemon on bond0 failed: No such device (no interface bond0 in this network namespace)"
        );
        assert_eq!(
            fail(&["--start-daemon", "backup"], 19, false),
            "starting backup sync daemon on eth0 failed: No such device (no interface eth0 in this network namespace: without --mcast-interface, eth0 is used, as by ipvsadm)"
        );
        assert_eq!(
            fail(&["--stop-daemon", "master"], 3, false),
            "stopping master sync daemon failed: No such process (no master sync daemon is running)"
        );
        assert_eq!(
            fail(&["--stop-daemon", "backup"], 3, false),
            "stopping backup sync daemon failed: No such process (no backup sync daemon is running)"
        );
        // The module's extended ack, when it sends one, is shown instead.
        assert_eq!(
            fail(&start, 17, true),
            "starting master sync daemon on bond0 failed: File exists (Service not found)"
        );
        // In -R they are refused before anything is sent.
        let mut f = Fake::default();
        let e = restore(
            &mut f,
            &mut "--start-daemon master\n".as_bytes(),
            &mut Vec::new(),
        )
        .unwrap_err();
        assert!(f.sent.is_empty());
        assert_eq!(e.exit_code(), 2);
        assert!(
            e.to_string().starts_with(
                "restore stopped at line 1 `--start-daemon master': only commands that change the rules"
            ),
            "{e}"
        );
    }

    /// Every change rvsadm makes, as --monitor prints it: the request
    /// rvsadm sends, decoded as the module's event; the line printed,
    /// given back to rvsadm, sends the same request.
    #[test]
    fn monitor_prints_each_change_as_the_command_that_makes_it() {
        let cases: &[(&[&str], &str)] = &[
            (&["-A", "-t", "10.0.0.1:80", "-s", "rr"], "-A -t 10.0.0.1:80 -s rr"),
            (&["-A", "-t", "10.0.0.1:80"], "-A -t 10.0.0.1:80 -s wlc"),
            (
                &["-A", "-u", "[2001:db8::1]:53", "-s", "sh", "-b", "sh-port", "-p", "60", "-M", "64", "-o"],
                "-A -u [2001:db8::1]:53 -s sh -p 60 -M 64 -o -b sh-port",
            ),
            (
                &["-A", "-f", "7", "-6", "-s", "mh", "-b", "mh-fallback,mh-port", "-p"],
                "-A -f 7 -6 -s mh -p 300 -b mh-fallback,mh-port",
            ),
            (
                &["-A", "--sctp-service", "10.0.0.1:3868", "-s", "rr"],
                "-A --sctp-service 10.0.0.1:3868 -s rr",
            ),
            (
                &["-E", "-t", "10.0.0.5:80", "-s", "rr", "--laddr", "10.0.2.1", "--laddr", "10.0.2.2"],
                "-E -t 10.0.0.5:80 -s rr --laddr 10.0.2.1 --laddr 10.0.2.2",
            ),
            (
                &["-E", "-t", "10.0.0.5:80", "-s", "rr", "--laddr", "none"],
                "-E -t 10.0.0.5:80 -s rr --laddr none",
            ),
            (&["-E", "-t", "10.0.0.1:80", "-s", "wrr", "-p", "120"], "-E -t 10.0.0.1:80 -s wrr -p 120"),
            (&["-D", "-t", "10.0.0.1:80"], "-D -t 10.0.0.1:80"),
            (&["-D", "-f", "7"], "-D -f 7"),
            (&["-C"], "-C"),
            (
                &["-a", "-t", "10.0.0.1:80", "-r", "10.0.1.1"],
                "-a -t 10.0.0.1:80 -r 10.0.1.1:80 -g -w 1",
            ),
            (
                &["-a", "-t", "10.0.0.1:80", "-r", "10.0.1.1:8080", "-m", "-w", "3", "-x", "100", "-y", "10"],
                "-a -t 10.0.0.1:80 -r 10.0.1.1:8080 -m -w 3 -x 100 -y 10",
            ),
            (
                &["-a", "-t", "10.0.0.5:80", "-r", "10.0.1.7:8080", "--fullnat"],
                "-a -t 10.0.0.5:80 -r 10.0.1.7:8080 --fullnat -w 1",
            ),
            (
                &["-e", "-t", "10.0.0.5:80", "-r", "10.0.1.7", "--enat", "-w", "2"],
                "-e -t 10.0.0.5:80 -r 10.0.1.7:80 --enat -w 2",
            ),
            (
                &["-e", "-t", "10.0.0.1:80", "-r", "10.0.1.1", "-i", "--tun-type", "gre", "--tun-csum", "-w", "2"],
                "-e -t 10.0.0.1:80 -r 10.0.1.1:80 -i -w 2 --tun-type gre --tun-csum",
            ),
            (
                &["-e", "-t", "[2001:db8::1]:80", "-r", "10.0.1.1", "-i"],
                "-e -t [2001:db8::1]:80 -r 10.0.1.1:80 -i -w 1 --tun-type ipip",
            ),
            (
                &["-d", "-t", "10.0.0.1:80", "-r", "10.0.1.1"],
                "-d -t 10.0.0.1:80 -r 10.0.1.1:80",
            ),
            (
                &["-d", "-t", "10.0.0.1:80", "-r", "10.0.1.1", "--drain", "30"],
                "-d -t 10.0.0.1:80 -r 10.0.1.1:80 --drain 30",
            ),
            (&["-Z"], "-Z"),
            (&["-Z", "-u", "10.0.0.1:53"], "-Z -u 10.0.0.1:53"),
            (&["--set", "900", "120", "300"], "--set 900 120 300"),
            (&["--set", "0", "0", "60"], "--set 0 0 60"),
            (
                &["--set-option", "vip_guard=drop", "--set-option", "expire_nodest_conn=1"],
                "--set-option vip_guard=1 --set-option expire_nodest_conn=1",
            ),
            (
                &["--start-daemon", "master", "--mcast-interface", "eth1", "--syncid", "7", "--mcast-port", "8849", "--mcast-group", "239.0.0.9"],
                "--start-daemon master --mcast-interface eth1 --syncid 7 --mcast-group 239.0.0.9 --mcast-port 8849",
            ),
            (
                &["--start-daemon", "backup", "--sync-maxlen", "1400", "--mcast-ttl", "3", "--mcast-group", "[ff02::1:81]"],
                "--start-daemon backup --mcast-interface eth0 --syncid 0 --sync-maxlen 1400 --mcast-group ff02::1:81 --mcast-ttl 3",
            ),
            (&["--stop-daemon", "backup", "--syncid", "7"], "--stop-daemon backup"),
            (
                &["--flush-conns", "-t", "10.0.0.1:80", "-r", "10.0.1.1"],
                "--flush-conns -t 10.0.0.1:80 -r 10.0.1.1:80",
            ),
            (&["--flush-conns", "-f", "7", "-6"], "--flush-conns -f 7 -6"),
        ];
        let sent = |args: &[&str]| {
            let mut f = Fake {
                flush: flush_reply(0),
                ..Fake::default()
            };
            run_on(&mut f, &command(args)).unwrap();
            assert_eq!(f.sent.len(), 1, "{args:?}");
            let (_, cmd, attrs) = f.sent.remove(0);
            (cmd, attrs)
        };
        for (args, want) in cases {
            let (cmd, attrs) = sent(args);
            let ev = event::decode(cmd, &attrs).unwrap_or_else(|u| panic!("{args:?}: {u:?}"));
            assert_eq!(event::event_lines(&ev), [*want], "{args:?}");
            let again: Vec<&str> = want.split(' ').collect();
            assert_eq!(sent(&again), (cmd, attrs), "{want}");
        }
    }

    /// Gives its list of receive results, then fails (`end`).
    struct Script(std::collections::VecDeque<Result<Vec<Notice>, NlError>>);

    impl Notices for Script {
        fn receive(&mut self) -> Result<Vec<Notice>, NlError> {
            self.0
                .pop_front()
                .unwrap_or_else(|| Err(NlError::Protocol("end".into())))
        }
    }

    /// Records what was written, and where it was flushed.
    #[derive(Default)]
    struct Flushes {
        text: String,
        flushed: Vec<String>,
    }

    impl Write for Flushes {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.text.push_str(std::str::from_utf8(buf).unwrap());
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            self.flushed.push(std::mem::take(&mut self.text));
            Ok(())
        }
    }

    /// The event of the request rvsadm sends for `args`.
    fn sent_by(args: &[&str]) -> Notice {
        let mut f = Fake::default();
        run_on(&mut f, &command(args)).unwrap();
        let (_, cmd, attrs) = f.sent.remove(0);
        Notice::Event { cmd, attrs }
    }

    /// Runs the monitor over `notices`; what it flushed, line by line,
    /// and how it ended.
    fn monitored(
        notices: Vec<Result<Vec<Notice>, NlError>>,
        json: bool,
        timestamp: bool,
    ) -> (Vec<String>, Error) {
        let mut src = Script(notices.into());
        let mut out = Flushes::default();
        let mut n = 0;
        let mut clock = || {
            n += 1;
            timestamp.then(|| format!("10:00:0{n}.00{n}"))
        };
        let end = monitor(&mut src, json, &mut clock, &mut out).unwrap_err();
        assert_eq!(out.text, "", "written but not flushed");
        (out.flushed, end)
    }

    #[test]
    fn monitor_loop_prints_and_flushes_each_event() {
        let add = sent_by(&["-A", "-t", "10.0.0.1:80", "-s", "rr"]);
        let server = sent_by(&[
            "-a",
            "-t",
            "10.0.0.1:80",
            "-r",
            "10.0.1.1:80",
            "-m",
            "-w",
            "1",
        ]);
        let both = {
            let mut w = AttrWriter::new();
            w.put_u32(uapi::RVS_CMD_ATTR_TIMEOUT_UDP, 60)
                .put_u32(uapi::RVS_CMD_ATTR_VIP_GUARD, 1);
            Notice::Event {
                cmd: uapi::RVS_CMD_SET_CONFIG,
                attrs: w.finish(),
            }
        };
        let broken = Notice::Event {
            cmd: uapi::RVS_CMD_DEL_DEST,
            attrs: vec![200, 0, 1, 0],
        };
        let notices = || {
            vec![
                Ok(vec![add.clone()]),
                // Two in one datagram, each line flushed on its own.
                Ok(vec![
                    server.clone(),
                    Notice::Event {
                        cmd: uapi::RVS_CMD_FLUSH,
                        attrs: vec![],
                    },
                ]),
                Ok(vec![Notice::Lost]),
                Ok(vec![broken.clone()]),
                Ok(vec![Notice::Malformed("bad length".into())]),
                Ok(vec![both.clone()]),
                Ok(vec![Notice::Event {
                    cmd: 99,
                    attrs: vec![],
                }]),
            ]
        };
        let (lines, end) = monitored(notices(), false, false);
        assert_eq!(
            lines,
            [
                "-A -t 10.0.0.1:80 -s rr\n",
                "-a -t 10.0.0.1:80 -r 10.0.1.1:80 -m -w 1\n",
                "-C\n",
                "# events lost: the receive buffer overflowed; read the table again (-S) to resynchronise\n",
                "# could not decode event 7 (DEL_DEST): attribute 1 has length 200, outside its buffer\n",
                "# could not decode a netlink message: bad length\n",
                "--set 0 0 60\n--set-option vip_guard=1\n",
                "# could not decode event 99: not a configuration command\n",
            ]
        );
        // The script's end: a failure of the socket, reported as such.
        assert_eq!(
            (end.to_string().as_str(), end.exit_code()),
            (
                "monitoring configuration changes failed: malformed reply from the module: end",
                1
            )
        );
        // With the time first, on both lines of a two-line event.
        let (lines, _) = monitored(notices(), false, true);
        assert_eq!(lines[0], "10:00:01.001 -A -t 10.0.0.1:80 -s rr\n");
        assert_eq!(lines[2], "10:00:03.003 -C\n");
        assert_eq!(
            lines[6],
            "10:00:07.007 --set 0 0 60\n10:00:07.007 --set-option vip_guard=1\n"
        );
        // JSON: one object a line, the time its first member.
        let (lines, _) = monitored(notices(), true, true);
        assert_eq!(
            lines,
            [
                "{\"time\":\"10:00:01.001\",\"event\":\"NEW_SERVICE\",\"service\":{\"family\":\"ipv4\",\
                 \"protocol\":\"tcp\",\"address\":\"10.0.0.1\",\"port\":80,\"scheduler\":\"rr\",\
                 \"flags\":[],\"persistent_timeout\":null,\"netmask\":\"255.255.255.255\"}}\n",
                "{\"time\":\"10:00:02.002\",\"event\":\"NEW_DEST\",\"service\":{\"family\":\"ipv4\",\
                 \"protocol\":\"tcp\",\"address\":\"10.0.0.1\",\"port\":80},\"dest\":{\"address\":\
                 \"10.0.1.1\",\"port\":80,\"forward\":\"masq\",\"weight\":1,\"upper_threshold\":0,\
                 \"lower_threshold\":0}}\n",
                "{\"time\":\"10:00:03.003\",\"event\":\"FLUSH\"}\n",
                "{\"time\":\"10:00:04.004\",\"event\":\"LOST\"}\n",
                "{\"time\":\"10:00:05.005\",\"event\":\"DEL_DEST\",\"cmd\":7,\"error\":\
                 \"attribute 1 has length 200, outside its buffer\"}\n",
                "{\"time\":\"10:00:06.006\",\"event\":null,\"error\":\"bad length\"}\n",
                "{\"time\":\"10:00:07.007\",\"event\":\"SET_CONFIG\",\"timeout\":{\"udp\":60},\
                 \"options\":{\"vip_guard\":1}}\n",
                "{\"time\":\"10:00:08.008\",\"event\":null,\"cmd\":99,\"error\":\
                 \"not a configuration command\"}\n",
            ]
        );
        let (lines, _) = monitored(notices(), true, false);
        assert_eq!(lines[2], "{\"event\":\"FLUSH\"}\n");
    }

    #[test]
    fn monitor_ends_when_the_module_goes_or_the_output_closes() {
        let clear = Notice::Event {
            cmd: uapi::RVS_CMD_FLUSH,
            attrs: vec![],
        };
        // Unloaded: what came before is printed, then the error (exit 1).
        let (lines, end) = monitored(
            vec![
                Ok(vec![clear.clone()]),
                Ok(vec![Notice::Gone, clear.clone()]),
            ],
            false,
            false,
        );
        assert_eq!(lines, ["-C\n"]);
        assert_eq!(
            end.to_string(),
            "the rvs module was unloaded: no more changes will be seen (start rvsadm \
             --monitor again once it is loaded)"
        );
        // The socket's error.
        let (_, end) = monitored(
            vec![Err(NlError::Io(io::Error::from_raw_os_error(libc::EBADF)))],
            false,
            false,
        );
        assert!(
            end.to_string().starts_with(
                "monitoring configuration changes failed: netlink socket: Bad file descriptor"
            ),
            "{end}"
        );
        // A closed pipe: Error::Output(BrokenPipe), which main() takes
        // as success.
        let mut src = Script(vec![Ok(vec![clear.clone()])].into());
        let e = monitor(&mut src, false, &mut || None, &mut ShortWriter(0)).unwrap_err();
        assert!(matches!(e, Error::Output(ref io) if io.kind() == io::ErrorKind::BrokenPipe));
        // Not restorable, not run without its connection.
        let mut f = Fake::default();
        let e = restore(&mut f, &mut "--monitor\n".as_bytes(), &mut Vec::new()).unwrap_err();
        assert!(f.sent.is_empty());
        assert!(
            e.to_string()
                .starts_with("restore stopped at line 1 `--monitor': only commands that change"),
            "{e}"
        );
    }

    #[test]
    fn time_of_day_form() {
        let t = time_of_day();
        let b = t.as_bytes();
        assert_eq!(b.len(), 12, "{t}");
        assert_eq!((b[2], b[5], b[8]), (b':', b':', b'.'), "{t}");
        assert!(t.chars().filter(char::is_ascii_digit).count() == 9, "{t}");
        assert!(t[..2].parse::<u8>().unwrap() < 24 && t[3..5].parse::<u8>().unwrap() < 60);
    }
}
