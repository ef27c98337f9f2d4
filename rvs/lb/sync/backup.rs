// SPDX-License-Identifier: GPL-2.0

//! The backup daemon: receives a master's messages and holds the
//! connections they describe as this director's own, so that their
//! packets are forwarded as before once traffic moves here
//! (`sync_thread_backup`, `ip_vs_process_message`, `ip_vs_proc_conn`).
//!
//! Each record is bound to the real server of the same address and port
//! in this director's matching service (found by firewall mark, else by
//! protocol, virtual address and port); as IPVS does for a bound
//! connection, it takes that server's forwarding method. A record with no
//! such service or server here is refused and counted: rvs keeps no
//! connection without a real server (IPVS keeps it unbound until one is
//! added). Malformed datagrams and records are dropped and counted
//! (`rvs_core::sync::decode` reads them without trusting a length or a
//! count).

#![forbid(unsafe_code)]

use super::{should_stop, tick, DaemonStats, Handoff, Sockets};
use crate::lb::conn::Tuple;
use crate::lb::conn_table::ConnTable;
use crate::lb::state::NetState;
use crate::rvs_core::expiry;
use crate::rvs_core::packet::IPPROTO_TCP;
use crate::rvs_core::proto::TcpState;
use crate::rvs_core::sync::daemon::DaemonConfig;
use crate::rvs_core::sync::decode::{self, Message};
use crate::rvs_core::sync::policy::{self, Existing};
use crate::rvs_core::sync::resync;
use crate::rvs_core::sync::Record;
use crate::sys::pernet::Pernet;
use crate::sys::rcu::ReadGuard;
use crate::sys::sched::cond_resched;
use crate::sys::time::{hz, jiffies};
use core::sync::atomic::Ordering::Relaxed;
use kernel::prelude::*;
use kernel::sync::Arc;

/// Resync requests a backup sends before it gives up (the masters may
/// have nothing to send).
const RESYNC_TRIES: u32 = 3;

/// A running backup daemon.
#[pin_data]
pub(crate) struct Backup {
    pub(crate) cfg: DaemonConfig,
    pub(crate) stats: DaemonStats,
    #[pin]
    pub(super) handoff: Handoff,
}

impl Backup {
    pub(super) fn new(cfg: DaemonConfig, socks: Sockets) -> Result<Arc<Self>> {
        Arc::pin_init(
            pin_init!(Backup {
                cfg,
                stats: DaemonStats::default(),
                handoff <- Handoff::new(socks),
            }),
            GFP_KERNEL,
        )
    }

    /// The backup's thread: reads datagrams as they come until stopped.
    pub(super) fn run(&self, ns: &Pernet<NetState>) {
        let Some(socks) = self.handoff.take() else {
            return;
        };
        let sock = &socks.main;
        // Ask the masters for their tables now, and again every 2 s until
        // a record arrives (a request is a datagram: it may be lost), at
        // most RESYNC_TRIES times.
        let mut asked = 0u32;
        let mut next_ask = jiffies();
        // One buffer of the daemon's size: a longer datagram arrives cut,
        // and fails the size check unless its size field names the cut
        // length (then its records are read as far as it goes), as in
        // IPVS.
        let Ok(mut buf) = KVec::from_elem(0u8, usize::from(self.cfg.maxlen), GFP_KERNEL) else {
            pr_err!("sync: no memory for the backup's buffer; backup idle\n");
            return;
        };
        while !should_stop() {
            if let Some(r) = &socks.resync {
                let due = expiry::expired(next_ask, jiffies());
                if due && asked < RESYNC_TRIES && self.stats.conns.load(Relaxed) == 0 {
                    if r.send(&resync::request(self.cfg.syncid)).is_ok() {
                        DaemonStats::add(&self.stats.resyncs, 1);
                    }
                    asked = asked.wrapping_add(1);
                    next_ask = jiffies().wrapping_add(hz().saturating_mul(2));
                }
            }
            sock.wait_readable(tick().saturating_mul(25));
            while let Ok(n) = sock.recv(&mut buf) {
                DaemonStats::add(&self.stats.msgs, 1);
                self.process(ns, buf.get(..n).unwrap_or(&[]));
                if should_stop() {
                    break;
                }
                cond_resched();
            }
        }
    }

    /// Applies one datagram.
    fn process(&self, ns: &NetState, dgram: &[u8]) {
        let msg = match Message::parse(dgram, self.cfg.syncid) {
            Ok(m) => m,
            Err(_) => {
                DaemonStats::add(&self.stats.refused, 1);
                return;
            }
        };
        // No service was ever added here: nothing to bind a record to.
        let Some(conns) = ns.conns() else {
            DaemonStats::add(&self.stats.refused, u64::from(msg.nr_conns()));
            return;
        };
        let g = ReadGuard::new();
        for item in msg.records() {
            let ok = match item {
                Ok(rec) => self.apply(ns, conns, &g, &rec),
                Err(_) => false,
            };
            let c = if ok {
                &self.stats.conns
            } else {
                &self.stats.refused
            };
            DaemonStats::add(c, 1);
        }
    }

    /// Applies one record; `false` if refused.
    fn apply(&self, ns: &NetState, conns: &ConnTable, g: &ReadGuard, rec: &Record<'_>) -> bool {
        // Flags a backup must not take, and persistence engine data: rvs
        // has no engines, so such a record is refused, as IPVS refuses it
        // without the engine loaded.
        if !policy::valid_flags(rec.flags) || decode::check_pe(rec, |_| false).is_err() {
            return false;
        }
        let template = rec.is_template();
        // A state the protocol does not have (templates: NONE or ASSURED).
        let states = if template {
            Some(crate::rvs_core::sync::TEMPLATE_STATES)
        } else {
            policy::num_states(rec.protocol)
        };
        if !states.is_some_and(|n| rec.state < n) {
            return false;
        }
        let svc = match ns.services.lookup_fwmark(g, rec.af, rec.fwmark) {
            Some(s) => Some(s),
            None => ns
                .services
                .lookup(g, rec.af, rec.protocol, &rec.vaddr, rec.vport),
        };
        let Some(dest) = svc.and_then(|s| s.find_dest(g, &rec.daddr, rec.dport)) else {
            return false;
        };
        let flags = policy::backup_flags(rec.flags);
        let existing = if template {
            conns.lookup_template(g, rec.af, rec.protocol, &rec.caddr, &rec.vaddr, rec.vport)
        } else {
            conns.lookup_in(
                g,
                rec.af,
                rec.protocol,
                &rec.caddr,
                rec.cport,
                &rec.vaddr,
                rec.vport,
            )
        };
        let state_timeout = (rec.protocol == IPPROTO_TCP && !template)
            .then(|| TcpState::from_u16(rec.state))
            .flatten()
            .map(|s| ns.timeouts.get(g).timeout_for(s));
        let timeout = policy::backup_timeout(rec.timeout, template, state_timeout);
        let in_pkts =
            u8::try_from(policy::backup_in_pkts(&super::master::settings(ns))).unwrap_or(u8::MAX);
        if let Some(c) = existing {
            let same = c.tuple.daddr == rec.daddr && c.tuple.dport == rec.dport;
            match policy::on_existing(flags, same) {
                Existing::Update => {
                    if !c.set_synced_state(rec.state) {
                        return false;
                    }
                    c.set_in_pkts(in_pkts);
                    conns.touch(c, timeout);
                    return true;
                }
                // The master moved the client to another server.
                Existing::Replace => conns.expire_now(c),
                Existing::Ignore => return true,
            }
        }
        let tuple = Tuple {
            af: rec.af,
            protocol: rec.protocol,
            caddr: rec.caddr,
            cport: rec.cport,
            vaddr: rec.vaddr,
            vport: rec.vport,
            daddr: rec.daddr,
            dport: rec.dport,
        };
        let fwd = dest.fwd();
        let Some(c) = conns.insert(
            g,
            tuple,
            fwd,
            dest.clone(),
            template,
            timeout,
            ns.limits(),
            None,
        ) else {
            return false;
        };
        c.set_in_pkts(in_pkts);
        c.set_synced_state(rec.state)
    }
}
