// SPDX-License-Identifier: GPL-2.0

//! The "RVS" generic netlink family (and with `ipvs_compat=1` the same
//! commands as "IPVS"): IPVS's commands and attributes
//! (`rvs/uapi/rvs.h`), decoded by `rvs_core::svcattr` and applied to the
//! namespace's service model.
//!
//! Every error carries an extended-ACK message; validation errors come
//! with IPVS's errno (ENOENT unknown scheduler, EEXIST duplicate, ESRCH no
//! such service, ENOENT no such real server, ERANGE weight, ...).

#![forbid(unsafe_code)]

use crate::lb::conn::Conn;
use crate::lb::conn_table::ConnTable;
use crate::lb::dest::Dest;
use crate::lb::service::{LocalAddrs, ModelError, Service};
use crate::lb::state::{Ctl, NetState};
use crate::lb::stats::Stats;
use crate::lb::sync::{DaemonInfo, StartError, SyncDaemons};
use crate::lb::transaction::Txn;
use crate::rvs_core::batch::{self, OpKind};
use crate::rvs_core::config::{
    AddrFamily, ConfigError, EINVAL as CFG_EINVAL, EOPNOTSUPP as CFG_EOPNOTSUPP,
};
use crate::rvs_core::svcattr::{self, ServiceKey};
use crate::rvs_core::sync::daemon::{self, Role};
use crate::rvs_core::sync::policy;
use crate::rvs_core::uapi::*;
use crate::rvs_core::{fullnat, nlattr, settings};
use crate::sys::error::{eaddrnotavail, eopnotsupp};
use crate::sys::genl::{
    Attr, Dump, EventGroup, FamilySpec, Handler, Msg, OpSpec, Request, NLA_NESTED, NLA_U32,
    NLA_UNSPEC,
};
use crate::sys::netns::Net;
use crate::sys::pernet::{Pernet, PernetState};
use crate::sys::rcu::{ReadGuard, Writer};
use crate::sys::sched as ksched;
use core::ffi::CStr;
use kernel::prelude::*;

const CMD_ATTR_MAX: usize = RVS_CMD_ATTR_MAX as usize;

// The numbers are rvs_core's mirror of rvs/uapi/rvs.h (checked against
// the bindings at compile time in crate::sys).

const fn op(cmd: u8, doit: bool, dumpit: bool) -> OpSpec {
    OpSpec { cmd, doit, dumpit }
}

/// Top-level attribute policy, indexed by `RVS_CMD_ATTR_*`.
static POLICY: [u8; CMD_ATTR_MAX + 1] = {
    let mut p = [NLA_UNSPEC; CMD_ATTR_MAX + 1];
    p[RVS_CMD_ATTR_SERVICE as usize] = NLA_NESTED;
    p[RVS_CMD_ATTR_DEST as usize] = NLA_NESTED;
    p[RVS_CMD_ATTR_DAEMON as usize] = NLA_NESTED;
    p[RVS_CMD_ATTR_TIMEOUT_TCP as usize] = NLA_U32;
    p[RVS_CMD_ATTR_TIMEOUT_TCP_FIN as usize] = NLA_U32;
    p[RVS_CMD_ATTR_TIMEOUT_UDP as usize] = NLA_U32;
    p[RVS_CMD_ATTR_CONN as usize] = NLA_NESTED;
    // Runtime settings are the last attributes, u32 each (a host test in
    // rvs/core/uapi.rs checks that against the settings table).
    let mut a = RVS_CMD_ATTR_CONN as usize + 1;
    while a <= CMD_ATTR_MAX {
        p[a] = NLA_U32;
        a += 1;
    }
    p[RVS_CMD_ATTR_OP as usize] = NLA_NESTED;
    p
};

static OPS: [OpSpec; 19] = [
    op(RVS_CMD_NEW_SERVICE, true, false),
    op(RVS_CMD_SET_SERVICE, true, false),
    op(RVS_CMD_DEL_SERVICE, true, false),
    op(RVS_CMD_GET_SERVICE, true, true),
    op(RVS_CMD_NEW_DEST, true, false),
    op(RVS_CMD_SET_DEST, true, false),
    op(RVS_CMD_DEL_DEST, true, false),
    op(RVS_CMD_GET_DEST, false, true),
    op(RVS_CMD_GET_INFO, true, false),
    op(RVS_CMD_FLUSH, true, false),
    op(RVS_CMD_SET_CONFIG, true, false),
    op(RVS_CMD_GET_CONFIG, true, false),
    op(RVS_CMD_ZERO, true, false),
    op(RVS_CMD_GET_CONN, false, true),
    op(RVS_CMD_NEW_DAEMON, true, false),
    op(RVS_CMD_DEL_DAEMON, true, false),
    op(RVS_CMD_GET_DAEMON, false, true),
    op(RVS_CMD_FLUSH_CONNS, true, false),
    op(RVS_CMD_APPLY, true, false),
];

/// The family as registered by the module.
pub(crate) static FAMILY: FamilySpec = FamilySpec {
    name: RVS_GENL_NAME,
    version: RVS_GENL_VERSION as u32,
    policy: &POLICY,
    ops: &OPS,
    liberal_below: 0,
    events: Some((c"events", &EVENTS)),
};

/// The RVS family's group of configuration changes
/// (`RVS_GENL_MCGRP_EVENTS`, `rvsadm --monitor`): each configuration
/// command that succeeds, in either family, is announced there.
static EVENTS: EventGroup = EventGroup::new();

/// The same commands under IPVS's name (module parameter `ipvs_compat`),
/// for IPVS's own clients: ipvsadm, keepalived, moby/ipvs, pyroute2.
/// IPVS's commands (up to FLUSH) are parsed as liberally as IPVS parses
/// them: its clients send nested attributes without `NLA_F_NESTED`
/// (moby/ipvs), which strict validation refuses.
pub(crate) static IPVS_FAMILY: FamilySpec = FamilySpec {
    name: RVS_IPVS_GENL_NAME,
    liberal_below: RVS_CMD_FLUSH + 1,
    // IPVS has no group; its clients' changes go to RVS's.
    events: None,
    ..FAMILY
};

/// Dispatches the family's commands.
pub(crate) struct RvsNetlink;

/// Turns a model error into the errno to return, setting the extended ACK.
fn fail_model(req: &Request<'_>, e: ModelError) -> Error {
    match e {
        ModelError::Config(c) => fail_config(req, c),
        ModelError::Kernel(e) => e,
    }
}

fn fail_config(req: &Request<'_>, c: ConfigError) -> Error {
    req.fail(Error::from_errno(-c.errno), c.msg)
}

fn state_of<'a>(req: &Request<'a>) -> Result<&'a Pernet<NetState>> {
    let net: &'a Net = req.net();
    NetState::of(net).ok_or_else(|| req.fail(ENODEV, c"rvs is not set up in this namespace"))
}

fn required<'a>(req: &Request<'a>, kind: u16, msg: &'static CStr) -> Result<Attr<'a>> {
    req.attr(kind).ok_or_else(|| req.fail(EINVAL, msg))
}

impl Handler for RvsNetlink {
    fn doit(cmd: u8, req: &Request<'_>) -> Result {
        let res = do_cmd(cmd, req);
        let changes = matches!(
            cmd,
            RVS_CMD_NEW_SERVICE
                | RVS_CMD_SET_SERVICE
                | RVS_CMD_DEL_SERVICE
                | RVS_CMD_NEW_DEST
                | RVS_CMD_SET_DEST
                | RVS_CMD_DEL_DEST
                | RVS_CMD_NEW_DAEMON
                | RVS_CMD_DEL_DAEMON
                | RVS_CMD_SET_CONFIG
                | RVS_CMD_ZERO
                | RVS_CMD_FLUSH
                | RVS_CMD_FLUSH_CONNS
                | RVS_CMD_APPLY
        );
        if res.is_ok() && changes {
            EVENTS.echo(req);
        }
        res
    }

    fn dumpit(cmd: u8, dump: &mut Dump<'_>) -> Result {
        dump_cmd(cmd, dump)
    }
}

/// Runs a doit command.
fn do_cmd(cmd: u8, req: &Request<'_>) -> Result {
    match cmd {
        RVS_CMD_NEW_SERVICE | RVS_CMD_SET_SERVICE | RVS_CMD_DEL_SERVICE => service_cmd(cmd, req),
        RVS_CMD_GET_SERVICE => get_service(req),
        RVS_CMD_NEW_DEST | RVS_CMD_SET_DEST | RVS_CMD_DEL_DEST => dest_cmd(cmd, req),
        RVS_CMD_GET_INFO => get_info(req),
        RVS_CMD_FLUSH => flush(req),
        RVS_CMD_SET_CONFIG => set_config(req),
        RVS_CMD_GET_CONFIG => get_config(req),
        RVS_CMD_ZERO => zero(req),
        RVS_CMD_FLUSH_CONNS => flush_conns(req),
        RVS_CMD_APPLY => apply(req),
        RVS_CMD_NEW_DAEMON => new_daemon(req),
        RVS_CMD_DEL_DAEMON => del_daemon(req),
        _ => Err(req.fail(eopnotsupp(), c"command not supported")),
    }
}

/// Runs a dump command.
fn dump_cmd(cmd: u8, dump: &mut Dump<'_>) -> Result {
    match cmd {
        RVS_CMD_GET_SERVICE => dump_services(dump),
        RVS_CMD_GET_DEST => dump_dests(dump),
        RVS_CMD_GET_CONN => dump_conns(dump),
        RVS_CMD_GET_DAEMON => dump_daemons(dump),
        _ => Err(dump.fail(eopnotsupp(), c"command cannot be dumped")),
    }
}

/// NEW_DAEMON: starts a sync daemon (`lb::sync`), with IPVS's errnos:
/// EEXIST if one of that role runs, ENODEV for an unknown interface.
fn new_daemon(req: &Request<'_>) -> Result {
    let ns = state_of(req)?;
    let nest = required(req, RVS_CMD_ATTR_DAEMON, c"sync daemon attribute missing")?;
    let cfg = daemon::parse_new(nest.payload).map_err(|c| fail_config(req, c))?;
    SyncDaemons::start(ns, &cfg).map_err(|e| match e {
        StartError::Running => match cfg.role {
            Role::Master => req.fail(EEXIST, c"a master sync daemon is already running"),
            Role::Backup => req.fail(EEXIST, c"a backup sync daemon is already running"),
        },
        StartError::NoDevice => req.fail(ENODEV, c"no such sync interface in this namespace"),
        StartError::NoAddress => req.fail(
            eaddrnotavail(),
            c"no IPv4 address in this namespace for the master to send from",
        ),
        StartError::Kernel(e) => req.fail(e, c"cannot start the sync daemon"),
    })
}

/// DEL_DAEMON: stops a sync daemon; ESRCH if none of that role runs.
fn del_daemon(req: &Request<'_>) -> Result {
    let ns = state_of(req)?;
    let nest = required(req, RVS_CMD_ATTR_DAEMON, c"sync daemon attribute missing")?;
    let role = daemon::parse_del(nest.payload).map_err(|c| fail_config(req, c))?;
    if SyncDaemons::stop(ns, role) {
        return Ok(());
    }
    Err(match role {
        Role::Master => req.fail(ESRCH, c"no master sync daemon is running"),
        Role::Backup => req.fail(ESRCH, c"no backup sync daemon is running"),
    })
}

/// GET_DAEMON: one message per running daemon, master first, each a
/// NEW_DAEMON as IPVS sends them.
fn dump_daemons(dump: &mut Dump<'_>) -> Result {
    let Some(ns) = NetState::of(dump.net()) else {
        return Ok(());
    };
    let from = usize::try_from(dump.cursor(0)).unwrap_or(usize::MAX);
    for (i, d) in ns.sync.list().iter().enumerate().skip(from) {
        let Some(d) = d else {
            continue;
        };
        if !dump.entry(RVS_CMD_NEW_DAEMON, |m| put_daemon(m, d))? {
            dump.set_cursor(0, i as i64);
            return Ok(());
        }
    }
    dump.set_cursor(0, 2);
    Ok(())
}

fn put_daemon(msg: &Msg, d: &DaemonInfo) -> Result {
    let c = &d.cfg;
    msg.nested(RVS_CMD_ATTR_DAEMON, |msg| {
        msg.put_u32(RVS_DAEMON_ATTR_STATE, c.role.to_u32())?;
        let name = c.ifname().to_str().unwrap_or("");
        msg.put_str(RVS_DAEMON_ATTR_MCAST_IFN, name)?;
        msg.put_u32(RVS_DAEMON_ATTR_SYNC_ID, u32::from(c.syncid))?;
        msg.put_u16(RVS_DAEMON_ATTR_SYNC_MAXLEN, c.maxlen)?;
        msg.put_u16(RVS_DAEMON_ATTR_MCAST_PORT, c.port)?;
        msg.put(RVS_DAEMON_ATTR_MCAST_TTL, &[c.ttl])?;
        if c.group_v6 {
            msg.put(RVS_DAEMON_ATTR_MCAST_GROUP6, &c.group)?;
        } else {
            msg.put(RVS_DAEMON_ATTR_MCAST_GROUP, c.group.get(..4).unwrap_or(&[]))?;
        }
        let pad = RVS_DAEMON_ATTR_PAD;
        msg.put_u64(RVS_DAEMON_ATTR_MSGS, d.msgs, pad)?;
        msg.put_u64(RVS_DAEMON_ATTR_CONNS, d.conns, pad)?;
        msg.put_u64(RVS_DAEMON_ATTR_REFUSED, d.refused, pad)?;
        msg.put_u64(RVS_DAEMON_ATTR_LOST, d.lost, pad)?;
        msg.put_u64(RVS_DAEMON_ATTR_RESYNCS, d.resyncs, pad)
    })
}

fn service_cmd(cmd: u8, req: &Request<'_>) -> Result {
    let ns = state_of(req)?;
    let nest = required(req, RVS_CMD_ATTR_SERVICE, c"service attribute missing")?;
    let full = cmd != RVS_CMD_DEL_SERVICE;
    let (key, params) =
        svcattr::parse_service(nest.payload, full).map_err(|c| fail_config(req, c))?;
    let laddrs = match full {
        true => local_addrs(req, nest.payload, key.af)?,
        false => None,
    };
    let mut ctl = ns.lock();
    let res = match (cmd, params) {
        (RVS_CMD_NEW_SERVICE, Some(p)) => {
            NetState::activate(ns, &mut ctl, key.af)?;
            ns.services.add(&mut ctl, key, &p, laddrs)
        }
        (RVS_CMD_SET_SERVICE, Some(p)) => ns.services.edit(&mut ctl, &key, &p, laddrs),
        _ => ns.services.delete(&mut ctl, &key),
    };
    res.map_err(|e| fail_model(req, e))
}

/// The FullNAT local addresses a service request names (`None`: it names
/// none, and an edit keeps the service's), checked in full before any is
/// taken (`rvs_core::fullnat::parse_laddrs`).
fn local_addrs(req: &Request<'_>, svc_nest: &[u8], af: AddrFamily) -> Result<Option<LocalAddrs>> {
    local_addrs_of(svc_nest, af).map_err(|e| fail_model(req, e))
}

/// [`local_addrs`] without a request to report to.
fn local_addrs_of(svc_nest: &[u8], af: AddrFamily) -> Result<Option<LocalAddrs>, ModelError> {
    let mut t: [Option<&[u8]>; RVS_SVC_ATTR_MAX as usize + 1] =
        [None; RVS_SVC_ATTR_MAX as usize + 1];
    nlattr::parse_nested(svc_nest, &mut t)
        .map_err(|e| ModelError::Config(ConfigError::new(CFG_EINVAL, e.msg())))?;
    let Some(Some(payload)) = t.get(usize::from(RVS_SVC_ATTR_LADDRS)) else {
        return Ok(None);
    };
    let mut list = KVec::with_capacity(RVS_LADDRS_MAX, GFP_KERNEL_ACCOUNT)?;
    let mut short = false;
    fullnat::parse_laddrs(payload, af, |a| {
        // Within the capacity reserved above: no allocation.
        short |= list.push(*a, GFP_KERNEL_ACCOUNT).is_err();
    })
    .map_err(ModelError::Config)?;
    if short {
        return Err(ModelError::Kernel(ENOMEM));
    }
    Ok(Some(list))
}

/// APPLY: the changes of `rvsadm -R --atomic`, all or nothing
/// (`lb::transaction`). A refused change's error names it: its message,
/// and the offset of its `RVS_CMD_ATTR_OP`.
fn apply(req: &Request<'_>) -> Result {
    let ns = state_of(req)?;
    let mut ctl = ns.lock();
    let mut txn = Txn::new(&ns.services)?;
    for (n, item) in batch::ops(req.attr_stream()).enumerate() {
        let (op, _) = item.map_err(|c| fail_config(req, c))?;
        if n >= batch::APPLY_OPS_MAX {
            return Err(req.fail_at(E2BIG, c"too many changes in one request", op));
        }
        stage(ns, &mut ctl, &mut txn, op).map_err(|e| match e {
            ModelError::Config(c) => req.fail_at(Error::from_errno(-c.errno), c.msg, op),
            ModelError::Kernel(e) => req.fail_at(e, c"no memory to stage this change", op),
        })?;
        if n % 1024 == 1023 {
            // Process context, holding only the configuration mutex.
            ksched::cond_resched();
        }
    }
    let applied = txn.commit(&mut ctl).map_err(|e| fail_model(req, e))?;
    drop(ctl);
    // Deleted servers that were draining: their connections end now, as
    // after `-d` of a draining server.
    for d in applied.drained.iter() {
        NetState::end_drained(ns, d);
    }
    Ok(())
}

/// Stages one change of an APPLY request.
fn stage(
    ns: &Pernet<NetState>,
    ctl: &mut Writer<'_, Ctl>,
    txn: &mut Txn<'_>,
    payload: &[u8],
) -> Result<(), ModelError> {
    let op = batch::parse_op(payload).map_err(ModelError::Config)?;
    let Some(svc_nest) = op.service else {
        return txn.flush(&*ctl);
    };
    let full = !matches!(op.kind, OpKind::DelService);
    let (key, params) = svcattr::parse_service(svc_nest, full && !op.kind.has_dest())
        .map_err(ModelError::Config)?;
    if let Some(dest_nest) = op.dest {
        let full = op.kind != OpKind::DelDest;
        let d = svcattr::parse_dest(dest_nest, &key, full).map_err(ModelError::Config)?;
        if op.kind == OpKind::DelDest
            && svcattr::parse_drain(dest_nest)
                .map_err(ModelError::Config)?
                .is_some()
        {
            return Err(ModelError::Config(ConfigError::new(
                CFG_EOPNOTSUPP,
                c"a drain cannot be part of an atomic change",
            )));
        }
        return match op.kind {
            OpKind::NewDest => txn.add_dest(&*ctl, &key, &d),
            OpKind::SetDest => txn.edit_dest(&*ctl, &key, &d),
            _ => txn.delete_dest(&*ctl, &key, &d),
        };
    }
    match (op.kind, params) {
        (OpKind::NewService, Some(p)) => {
            let laddrs = local_addrs_of(svc_nest, key.af)?;
            NetState::activate(ns, ctl, key.af)?;
            txn.add_service(&*ctl, key, &p, laddrs)
        }
        (OpKind::SetService, Some(p)) => {
            let laddrs = local_addrs_of(svc_nest, key.af)?;
            txn.edit_service(&*ctl, &key, &p, laddrs)
        }
        _ => txn.delete_service(&*ctl, &key),
    }
}

fn dest_cmd(cmd: u8, req: &Request<'_>) -> Result {
    let ns = state_of(req)?;
    let svc_nest = required(req, RVS_CMD_ATTR_SERVICE, c"service attribute missing")?;
    let dest_nest = required(req, RVS_CMD_ATTR_DEST, c"real server attribute missing")?;
    let (key, _) =
        svcattr::parse_service(svc_nest.payload, false).map_err(|c| fail_config(req, c))?;
    let full = cmd != RVS_CMD_DEL_DEST;
    let d = svcattr::parse_dest(dest_nest.payload, &key, full).map_err(|c| fail_config(req, c))?;
    let drain = match cmd {
        RVS_CMD_DEL_DEST => {
            svcattr::parse_drain(dest_nest.payload).map_err(|c| fail_config(req, c))?
        }
        _ => None,
    };
    let mut ctl = ns.lock();
    let res = match (cmd, drain) {
        (RVS_CMD_NEW_DEST, _) => ns.services.add_dest(&mut ctl, &key, &d),
        (RVS_CMD_SET_DEST, _) => ns.services.edit_dest(&mut ctl, &key, &d),
        (_, Some(secs)) => ns
            .services
            .drain_dest(&mut ctl, &key, &d, secs)
            .map(|at| ns.note_drain(at)),
        _ => match ns.services.delete_dest(&mut ctl, &key, &d) {
            // `-d` of a draining server ends the drain now, as its
            // deadline would (not under the lock: a table walk).
            Ok(Some(gone)) if gone.is_draining() => {
                drop(ctl);
                NetState::end_drained(ns, &gone);
                Ok(())
            }
            r => r.map(|_| ()),
        },
    };
    res.map_err(|e| fail_model(req, e))
}

fn flush(req: &Request<'_>) -> Result {
    let ns = state_of(req)?;
    let mut ctl = ns.lock();
    ns.services
        .flush(&mut ctl)
        .map_err(|e| fail_model(req, e))?;
    // Unlike IPVS, flushing also drops the connections: after `-C` nothing
    // is balanced any more, not even established flows.
    if let Some(conns) = ns.conns() {
        conns.clear();
    }
    Ok(())
}

/// Ends a service's connections now, or one real server's (rvs's
/// addition; `lb::conn_flush`), and answers how many ended. A server's
/// connections are found by its service's counters, which every server
/// of the service shares, deleted ones still carrying connections
/// included.
fn flush_conns(req: &Request<'_>) -> Result {
    let ns = state_of(req)?;
    let svc_nest = required(req, RVS_CMD_ATTR_SERVICE, c"service attribute missing")?;
    let (key, _) =
        svcattr::parse_service(svc_nest.payload, false).map_err(|c| fail_config(req, c))?;
    let server = match req.attr(RVS_CMD_ATTR_DEST) {
        Some(n) => {
            Some(svcattr::parse_dest(n.payload, &key, false).map_err(|c| fail_config(req, c))?)
        }
        None => None,
    };
    let svc_stats = {
        let mut ctl = ns.lock();
        let svc = ns
            .services
            .get(&mut ctl, &key)
            .map_err(|e| fail_model(req, e))?
            .clone();
        if let Some(d) = &server {
            let dests = svc.dests.get_writer(&ctl);
            if !dests.iter().any(|x| x.same(d.af, &d.addr, d.port)) {
                return Err(req.fail(ENOENT, c"no such real server"));
            }
        }
        svc.stats.clone()
    };
    // The walk may take a while on a big table: not under the lock.
    let ended = match ns.conns() {
        Some(conns) => conns.flush_matching(req.net(), |c| {
            core::ptr::eq(&*c.dest.svc_stats, &*svc_stats)
                && server
                    .as_ref()
                    .map_or(true, |d| c.dest.same(d.af, &d.addr, d.port))
        }),
        None => 0,
    };
    let mut reply = req.reply(RVS_CMD_FLUSH_CONNS)?;
    reply.msg().put_u64(
        RVS_INFO_ATTR_CONN_FLUSHED,
        u64::from(ended),
        RVS_INFO_ATTR_PAD,
    )?;
    reply.send()
}

fn get_info(req: &Request<'_>) -> Result {
    let ns = state_of(req)?;
    let mut reply = req.reply(RVS_CMD_GET_INFO)?;
    let msg = reply.msg();
    msg.put_u32(RVS_INFO_ATTR_VERSION, RVS_VERSION_CODE)?;
    msg.put_u32(RVS_INFO_ATTR_CONN_TAB_SIZE, ns.conn_tab_size())?;
    msg.put_u32(RVS_INFO_ATTR_CONN_TAB_MAX, ns.conn_tab_max())?;
    if let Some(conns) = ns.conns() {
        let pad = RVS_INFO_ATTR_PAD;
        msg.put_u32(RVS_INFO_ATTR_CONN_COUNT, conns.count())?;
        msg.put_u64(RVS_INFO_ATTR_CONN_MEMORY, conns.memory(), pad)?;
        msg.put_u64(RVS_INFO_ATTR_CONN_REFUSED, conns.refused(), pad)?;
        msg.put_u64(RVS_INFO_ATTR_CONN_EVICTED, conns.evicted(), pad)?;
        msg.put_u64(RVS_INFO_ATTR_CONN_FLUSHED, conns.flushed(), pad)?;
        msg.put_u64(RVS_INFO_ATTR_FULLNAT_NO_PORT, conns.no_port_count(), pad)?;
        msg.put_u64(RVS_INFO_ATTR_ENAT_NO_ROOM, conns.enat_no_room_count(), pad)?;
    }
    msg.put_u64(RVS_INFO_ATTR_VIP_GUARDED, ns.guarded(), RVS_INFO_ATTR_PAD)?;
    reply.send()
}

fn set_config(req: &Request<'_>) -> Result {
    let ns = state_of(req)?;
    let get_opt = |kind: u16| -> Result<Option<u32>> {
        match req.attr(kind) {
            Some(a) => crate::rvs_core::nlattr::get_u32(kind, a.payload)
                .map(Some)
                .map_err(|e| req.fail(EINVAL, e.msg())),
            None => Ok(None),
        }
    };
    let get = |kind| get_opt(kind).map(|v| v.unwrap_or(0));
    // Validate every setting before changing anything.
    let mut values = [None; settings::COUNT];
    for (value, spec) in values.iter_mut().zip(settings::SETTINGS.iter()) {
        if let Some(v) = get_opt(spec.attr)? {
            *value = Some(settings::validate(spec, v).map_err(|c| fail_config(req, c))?);
        }
    }
    let (tcp, tcpfin, udp) = (
        get(RVS_CMD_ATTR_TIMEOUT_TCP)?,
        get(RVS_CMD_ATTR_TIMEOUT_TCP_FIN)?,
        get(RVS_CMD_ATTR_TIMEOUT_UDP)?,
    );
    let mut ctl = ns.lock();
    let port = |s: settings::Setting| {
        values
            .get(s.index())
            .copied()
            .flatten()
            .unwrap_or_else(|| ns.setting(s))
    };
    let (threshold, period) = (
        port(settings::Setting::SyncThreshold),
        port(settings::Setting::SyncPeriod),
    );
    if !policy::valid_threshold(threshold as i32, period as i32) {
        return Err(req.fail(
            EINVAL,
            c"sync_threshold must be below sync_period (unless sync_period is 0)",
        ));
    }
    if port(settings::Setting::FullnatPortMin) > port(settings::Setting::FullnatPortMax) {
        return Err(req.fail(EINVAL, c"fullnat_port_min must not exceed fullnat_port_max"));
    }
    let mut t = *ns.timeouts.get_writer(&ctl);
    t.set_all(tcp, tcpfin, udp)
        .map_err(|_| req.fail(EINVAL, c"timeout too large"))?;
    ns.timeouts.replace(t, &mut ctl)?;
    ns.set_settings(&mut ctl, &values);
    drop(ctl);
    let fastpath = settings::Setting::Fastpath;
    if values.get(fastpath.index()).copied().flatten().is_some() {
        // Outside the configuration lock: hooking takes RTNL, under which
        // device events take that lock.
        if let Err(e) = ns.ingress_sync() {
            let mut off = [None; settings::COUNT];
            if let Some(v) = off.get_mut(fastpath.index()) {
                *v = Some(0);
            }
            ns.set_settings(&mut ns.lock(), &off);
            return Err(req.fail(e, c"fastpath: the namespace's devices could not be hooked"));
        }
        pr_info!(
            "fast path {}: {} devices hooked\n",
            if ns.setting(fastpath) != 0 {
                "on"
            } else {
                "off"
            },
            ns.ingress_devices()
        );
    }
    Ok(())
}

fn get_config(req: &Request<'_>) -> Result {
    let ns = state_of(req)?;
    let t = {
        let ctl = ns.lock();
        *ns.timeouts.get_writer(&ctl)
    };
    let mut reply = req.reply(RVS_CMD_SET_CONFIG)?;
    let msg = reply.msg();
    msg.put_u32(RVS_CMD_ATTR_TIMEOUT_TCP, t.tcp_established)?;
    msg.put_u32(RVS_CMD_ATTR_TIMEOUT_TCP_FIN, t.tcp_fin_wait)?;
    msg.put_u32(RVS_CMD_ATTR_TIMEOUT_UDP, t.udp)?;
    for spec in settings::SETTINGS.iter() {
        msg.put_u32(spec.attr, ns.setting(spec.setting))?;
    }
    reply.send()
}

fn zero(req: &Request<'_>) -> Result {
    let ns = state_of(req)?;
    let key = match req.attr(RVS_CMD_ATTR_SERVICE) {
        Some(nest) => Some(
            svcattr::parse_service(nest.payload, false)
                .map_err(|c| fail_config(req, c))?
                .0,
        ),
        None => None,
    };
    let mut ctl = ns.lock();
    if let (None, Some(t)) = (&key, &ns.tot_stats) {
        // As IPVS's zeroing of everything: the namespace's totals too.
        t.zero();
    }
    ns.services
        .zero(&mut ctl, key.as_ref())
        .map_err(|e| fail_model(req, e))
}

/// IPVS's older 32-bit statistics attribute (`*_ATTR_STATS`), which
/// IPVS still sends before the 64-bit one and older clients read: counts
/// and rates truncated to 32 bits, byte counts in full.
fn put_stats32(msg: &Msg, kind: u16, stats: &Stats) -> Result {
    let t = stats.read();
    let r = stats.rates();
    let pad = RVS_STATS_ATTR_PAD;
    msg.nested(kind, |msg| {
        msg.put_u32(RVS_STATS_ATTR_CONNS, t.conns as u32)?;
        msg.put_u32(RVS_STATS_ATTR_INPKTS, t.inpkts as u32)?;
        msg.put_u32(RVS_STATS_ATTR_OUTPKTS, t.outpkts as u32)?;
        msg.put_u64(RVS_STATS_ATTR_INBYTES, t.inbytes, pad)?;
        msg.put_u64(RVS_STATS_ATTR_OUTBYTES, t.outbytes, pad)?;
        msg.put_u32(RVS_STATS_ATTR_CPS, r.cps as u32)?;
        msg.put_u32(RVS_STATS_ATTR_INPPS, r.inpps as u32)?;
        msg.put_u32(RVS_STATS_ATTR_OUTPPS, r.outpps as u32)?;
        msg.put_u32(RVS_STATS_ATTR_INBPS, r.inbps as u32)?;
        msg.put_u32(RVS_STATS_ATTR_OUTBPS, r.outbps as u32)?;
        Ok(())
    })
}

fn put_stats(msg: &Msg, kind: u16, stats: &Stats) -> Result {
    let t = stats.read();
    let pad = RVS_STATS_ATTR_PAD;
    msg.nested(kind, |msg| {
        msg.put_u64(RVS_STATS_ATTR_CONNS, t.conns, pad)?;
        msg.put_u64(RVS_STATS_ATTR_INPKTS, t.inpkts, pad)?;
        msg.put_u64(RVS_STATS_ATTR_OUTPKTS, t.outpkts, pad)?;
        msg.put_u64(RVS_STATS_ATTR_INBYTES, t.inbytes, pad)?;
        msg.put_u64(RVS_STATS_ATTR_OUTBYTES, t.outbytes, pad)?;
        let r = stats.rates();
        msg.put_u64(RVS_STATS_ATTR_CPS, r.cps, pad)?;
        msg.put_u64(RVS_STATS_ATTR_INPPS, r.inpps, pad)?;
        msg.put_u64(RVS_STATS_ATTR_OUTPPS, r.outpps, pad)?;
        msg.put_u64(RVS_STATS_ATTR_INBPS, r.inbps, pad)?;
        msg.put_u64(RVS_STATS_ATTR_OUTBPS, r.outbps, pad)?;
        Ok(())
    })
}

fn put_conn(msg: &Msg, g: &ReadGuard, c: &Conn) -> Result {
    let t = &c.tuple;
    let state = c.state_name();
    msg.nested(RVS_CMD_ATTR_CONN, |msg| {
        msg.put_u16(RVS_CONN_ATTR_AF, t.af.to_u16())?;
        msg.put_u16(RVS_CONN_ATTR_PROTOCOL, u16::from(t.protocol))?;
        put_addr(msg, RVS_CONN_ATTR_CADDR, &t.caddr)?;
        msg.put_be16(RVS_CONN_ATTR_CPORT, t.cport)?;
        put_addr(msg, RVS_CONN_ATTR_VADDR, &t.vaddr)?;
        msg.put_be16(RVS_CONN_ATTR_VPORT, t.vport)?;
        put_addr(msg, RVS_CONN_ATTR_DADDR, &t.daddr)?;
        msg.put_be16(RVS_CONN_ATTR_DPORT, t.dport)?;
        msg.put_str(RVS_CONN_ATTR_STATE, state)?;
        msg.put_u32(RVS_CONN_ATTR_EXPIRES, c.expires_ms())?;
        msg.put_u32(RVS_CONN_ATTR_FWD_METHOD, c.fwd.to_uapi())?;
        msg.put_u16(RVS_CONN_ATTR_DEST_AF, c.dest.af.to_u16())?;
        if let Some((laddr, lport)) = ConnTable::local_end(g, c) {
            put_addr(msg, RVS_CONN_ATTR_LADDR, &laddr)?;
            msg.put_be16(RVS_CONN_ATTR_LPORT, lport)?;
        }
        Ok(())
    })
}

fn dump_conns(dump: &mut Dump<'_>) -> Result {
    let Some(conns) = NetState::of(dump.net()).and_then(|ns| ns.conns()) else {
        return Ok(());
    };
    let bucket = usize::try_from(dump.cursor(0)).unwrap_or(usize::MAX);
    let index = usize::try_from(dump.cursor(1)).unwrap_or(usize::MAX);
    let g = ReadGuard::new();
    let mut failed = Ok(());
    let (b, i) = conns.for_each_from(&g, bucket, index, |c| {
        match dump.entry(RVS_CMD_GET_CONN, |m| put_conn(m, &g, c)) {
            Ok(added) => added,
            Err(e) => {
                failed = Err(e);
                false
            }
        }
    });
    drop(g);
    failed?;
    dump.set_cursor(0, b as i64);
    dump.set_cursor(1, i as i64);
    Ok(())
}

fn put_addr(msg: &Msg, kind: u16, addr: &[u8; 16]) -> Result {
    msg.put(kind, addr)
}

fn put_service(msg: &Msg, svc: &Service) -> Result {
    let (sched, flags, timeout, netmask) = svc.settings();
    let k = &svc.key;
    msg.nested(RVS_CMD_ATTR_SERVICE, |msg| {
        msg.put_u16(RVS_SVC_ATTR_AF, k.af.to_u16())?;
        if k.is_fwmark() {
            // As IPVS: a firewall-mark service is reported by its mark alone.
            msg.put_u32(RVS_SVC_ATTR_FWMARK, k.fwmark)?;
        } else {
            msg.put_u16(RVS_SVC_ATTR_PROTOCOL, u16::from(k.protocol))?;
            put_addr(msg, RVS_SVC_ATTR_ADDR, &k.addr)?;
            msg.put_be16(RVS_SVC_ATTR_PORT, k.port)?;
        }
        msg.put_str(RVS_SVC_ATTR_SCHED_NAME, sched.name())?;
        // A listed service is in the table: IPVS reports that as HASHED,
        // and kube-proxy checks for it.
        let mut fl = [0u8; 8];
        fl[..4].copy_from_slice(&(flags | RVS_SVC_F_HASHED).to_ne_bytes());
        fl[4..].copy_from_slice(&u32::MAX.to_ne_bytes());
        msg.put(RVS_SVC_ATTR_FLAGS, &fl)?;
        msg.put_u32(RVS_SVC_ATTR_TIMEOUT, timeout)?;
        msg.put_u32(RVS_SVC_ATTR_NETMASK, netmask)?;
        put_stats32(msg, RVS_SVC_ATTR_STATS, &svc.stats)?;
        put_stats(msg, RVS_SVC_ATTR_STATS64, &svc.stats)?;
        let g = ReadGuard::new();
        let laddrs = svc.laddrs.get(&g);
        if !laddrs.is_empty() {
            msg.nested(RVS_SVC_ATTR_LADDRS, |msg| {
                laddrs
                    .iter()
                    .try_for_each(|a| put_addr(msg, RVS_LADDR_ATTR_ADDR, a))
            })?;
        }
        Ok(())
    })
}

fn put_dest(msg: &Msg, d: &Dest) -> Result {
    let (u, l) = d.thresholds();
    msg.nested(RVS_CMD_ATTR_DEST, |msg| {
        put_addr(msg, RVS_DEST_ATTR_ADDR, &d.addr)?;
        msg.put_be16(RVS_DEST_ATTR_PORT, d.port)?;
        msg.put_u32(RVS_DEST_ATTR_FWD_METHOD, d.fwd().to_uapi())?;
        msg.put_u32(RVS_DEST_ATTR_WEIGHT, d.weight())?;
        if let Some(left) = d.drain_secs_left() {
            msg.put_u32(RVS_DEST_ATTR_DRAIN, left)?;
        }
        let (tun_type, tun_port, tun_flags) = d.tunnel().to_uapi();
        msg.put(RVS_DEST_ATTR_TUN_TYPE, &[tun_type])?;
        msg.put_be16(RVS_DEST_ATTR_TUN_PORT, tun_port)?;
        msg.put_u16(RVS_DEST_ATTR_TUN_FLAGS, tun_flags)?;
        msg.put_u32(RVS_DEST_ATTR_U_THRESH, u)?;
        msg.put_u32(RVS_DEST_ATTR_L_THRESH, l)?;
        msg.put_u32(
            RVS_DEST_ATTR_ACTIVE_CONNS,
            d.active_conns.load(core::sync::atomic::Ordering::Relaxed),
        )?;
        msg.put_u32(
            RVS_DEST_ATTR_INACT_CONNS,
            d.inactive_conns.load(core::sync::atomic::Ordering::Relaxed),
        )?;
        msg.put_u32(
            RVS_DEST_ATTR_PERSIST_CONNS,
            d.persist_conns.load(core::sync::atomic::Ordering::Relaxed),
        )?;
        msg.put_u16(RVS_DEST_ATTR_ADDR_FAMILY, d.af.to_u16())?;
        put_stats32(msg, RVS_DEST_ATTR_STATS, &d.stats)?;
        put_stats(msg, RVS_DEST_ATTR_STATS64, &d.stats)?;
        Ok(())
    })
}

fn get_service(req: &Request<'_>) -> Result {
    let ns = state_of(req)?;
    let nest = required(req, RVS_CMD_ATTR_SERVICE, c"service attribute missing")?;
    let (key, _) = svcattr::parse_service(nest.payload, false).map_err(|c| fail_config(req, c))?;
    let svc = {
        let mut ctl = ns.lock();
        ns.services
            .get(&mut ctl, &key)
            .map_err(|e| fail_model(req, e))?
            .clone()
    };
    let mut reply = req.reply(RVS_CMD_NEW_SERVICE)?;
    put_service(reply.msg(), &svc)?;
    reply.send()
}

fn dump_services(dump: &mut Dump<'_>) -> Result {
    let Some(ns) = NetState::of(dump.net()) else {
        return Ok(());
    };
    // Position: (bucket, index in its chain) of the next service to send.
    let mut bucket = usize::try_from(dump.cursor(0)).unwrap_or(usize::MAX);
    let mut index = usize::try_from(dump.cursor(1)).unwrap_or(usize::MAX);
    let ctl = ns.lock();
    while let Some((svc, b, i)) = ns.services.at(&ctl, bucket, index) {
        (bucket, index) = (b, i);
        if !dump.entry(RVS_CMD_NEW_SERVICE, |m| put_service(m, svc))? {
            break;
        }
        index += 1;
    }
    dump.set_cursor(0, bucket as i64);
    dump.set_cursor(1, index as i64);
    Ok(())
}

fn dump_dests(dump: &mut Dump<'_>) -> Result {
    let Some(ns) = NetState::of(dump.net()) else {
        return Ok(());
    };
    let Some(nest) = dump.attr(RVS_CMD_ATTR_SERVICE, RVS_CMD_ATTR_MAX) else {
        return Err(dump.fail(EINVAL, c"service attribute missing"));
    };
    let key: ServiceKey = match svcattr::parse_service(nest.payload, false) {
        Ok((k, _)) => k,
        Err(c) => return Err(dump.fail(Error::from_errno(-c.errno), c.msg)),
    };
    let dests = {
        let mut ctl = ns.lock();
        match ns.services.dests_of(&mut ctl, &key) {
            Ok(d) => d,
            Err(ModelError::Config(c)) => return Err(dump.fail(Error::from_errno(-c.errno), c.msg)),
            Err(ModelError::Kernel(e)) => return Err(e),
        }
    };
    let start = usize::try_from(dump.cursor(0)).unwrap_or(usize::MAX);
    let mut i = start;
    while let Some(d) = dests.get(i) {
        if !dump.entry(RVS_CMD_NEW_DEST, |m| put_dest(m, d))? {
            break;
        }
        i += 1;
    }
    dump.set_cursor(0, i as i64);
    Ok(())
}
