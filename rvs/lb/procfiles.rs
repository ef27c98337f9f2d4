// SPDX-License-Identifier: GPL-2.0

//! IPVS's files in each namespace's `/proc/net`, with `ipvs_compat=1`, in
//! IPVS's text (`rvs_core::procfmt`, `rvs_core::procconn`), for the tools
//! that read them instead of netlink: `ip_vs` (the service table) and
//! `ip_vs_stats` (Prometheus node_exporter's ipvs collector),
//! `ip_vs_stats_percpu`, `ip_vs_conn` (`ipvsadm -L -c`) and
//! `ip_vs_conn_sync`; and the sysctl directory `net/ipv4/vs`
//! (`crate::lb::sysctls`).
//!
//! C counterparts: `ip_vs_info_seq_show`, `ip_vs_stats_show`,
//! `ip_vs_stats_percpu_show` in net/netfilter/ipvs/ip_vs_ctl.c;
//! `ip_vs_conn_seq_show`, `ip_vs_conn_sync_seq_show` in ip_vs_conn.c.

#![forbid(unsafe_code)]

use crate::lb::conn::ConnEntry;
use crate::lb::state::{conn_tab_bits, NetState};
use crate::lb::stats::Stats;
use crate::lb::sysctls::IpVsSysctls;
use crate::rvs_core::config::AddrFamily;
use crate::rvs_core::procconn::{self, ProcConn};
use crate::rvs_core::procfmt::{self, ProcCounts, ProcDest, ProcService, ProcStats};
use crate::rvs_core::uapi::{RVS_SVC_F_ONEPACKET, RVS_SVC_F_PERSISTENT};
use crate::sys::netns::Net;
use crate::sys::pernet::{Pernet, PernetId, PernetState};
use crate::sys::procfs::{ProcFile, ProcRecords, ProcShow, SeqText};
use crate::sys::rcu::ReadGuard;
use crate::sys::sysctl::SysctlDir;
use crate::sys::time;
use core::fmt;
use core::sync::atomic::Ordering::Relaxed;
use kernel::prelude::*;

/// The IPVS files of one namespace. A pernet state of its own, registered
/// after [`NetState`]'s: namespaces get it after theirs and lose it before
/// (pernet exits run in reverse order), and the module's unload removes
/// the files first, so a read never outlives the state it shows.
pub(crate) struct IpVsProc {
    _files: [ProcFile; 5],
    _sysctls: SysctlDir,
}

static PROC_ID: PernetId<IpVsProc> = PernetId::new();

impl PernetState for IpVsProc {
    fn id() -> &'static PernetId<Self> {
        &PROC_ID
    }

    fn new(net: &Net) -> Result<Pin<KBox<Self>>> {
        // Each file is removed on drop, so an error part-way removes those
        // made before it.
        let files = [
            ProcFile::create::<IpVsInfo>(net, c"ip_vs")?,
            ProcFile::create::<IpVsStats>(net, c"ip_vs_stats")?,
            ProcFile::create::<IpVsStatsPercpu>(net, c"ip_vs_stats_percpu")?,
            ProcFile::create_records::<IpVsConn<false>>(net, c"ip_vs_conn")?,
            ProcFile::create_records::<IpVsConn<true>>(net, c"ip_vs_conn_sync")?,
        ];
        let sysctls = SysctlDir::register::<IpVsSysctls>(net)?;
        Ok(KBox::pin(
            IpVsProc {
                _files: files,
                _sysctls: sysctls,
            },
            GFP_KERNEL,
        )?)
    }

    fn pre_exit(_this: &Pernet<Self>) {}

    fn exit(_this: &Pernet<Self>) {}

    fn work(_this: &Pernet<Self>) {}
}

/// `/proc/net/ip_vs`.
pub(crate) struct IpVsInfo;

impl ProcShow for IpVsInfo {
    fn show(net: &Net, out: &mut SeqText<'_>) -> fmt::Result {
        let Some(ns) = NetState::of(net) else {
            return procfmt::info_header(out, 1 << conn_tab_bits());
        };
        procfmt::info_header(out, ns.conn_tab_size())?;
        // Under the configuration lock, as a listing over netlink: a
        // consistent table, and the copying is all this does.
        let ctl = ns.lock();
        let (mut bucket, mut index) = (0, 0);
        while let Some((svc, b, i)) = ns.services.at(&ctl, bucket, index) {
            (bucket, index) = (b, i + 1);
            let (sched, flags, timeout, netmask) = svc.settings();
            let k = &svc.key;
            procfmt::service_line(
                out,
                &ProcService {
                    v6: k.af == AddrFamily::Inet6,
                    protocol: k.protocol,
                    addr: &k.addr,
                    port: k.port,
                    fwmark: k.fwmark,
                    sched: sched.name(),
                    onepacket: flags & RVS_SVC_F_ONEPACKET != 0,
                    // IPVS prints its timeout in jiffies.
                    persistent: (flags & RVS_SVC_F_PERSISTENT != 0)
                        .then(|| (u64::from(timeout).saturating_mul(time::hz()), netmask)),
                },
            )?;
            for d in svc.dests.get_writer(&ctl).iter() {
                procfmt::dest_line(
                    out,
                    &ProcDest {
                        v6: d.af == AddrFamily::Inet6,
                        addr: &d.addr,
                        port: d.port,
                        forward: d.fwd().name(),
                        weight: d.weight(),
                        active: d.active_conns.load(Relaxed),
                        inactive: d.inactive_conns.load(Relaxed),
                    },
                )?;
            }
        }
        Ok(())
    }
}

/// The totals and rates of `stats` as the stats files print them.
fn proc_stats(stats: &Stats) -> ProcStats {
    let t = stats.read();
    let r = stats.rates();
    ProcStats {
        conns: t.conns,
        inpkts: t.inpkts,
        outpkts: t.outpkts,
        inbytes: t.inbytes,
        outbytes: t.outbytes,
        cps: r.cps,
        inpps: r.inpps,
        outpps: r.outpps,
        inbps: r.inbps,
        outbps: r.outbps,
    }
}

/// `/proc/net/ip_vs_stats`: the namespace's traffic since the last `-Z`.
pub(crate) struct IpVsStats;

impl ProcShow for IpVsStats {
    fn show(net: &Net, out: &mut SeqText<'_>) -> fmt::Result {
        match NetState::of(net).and_then(|ns| ns.tot_stats.as_ref()) {
            Some(t) => procfmt::stats(out, &proc_stats(t)),
            None => procfmt::stats(out, &ProcStats::default()),
        }
    }
}

/// `/proc/net/ip_vs_stats_percpu`: each CPU's raw counts, then the totals.
pub(crate) struct IpVsStatsPercpu;

impl ProcShow for IpVsStatsPercpu {
    fn show(net: &Net, out: &mut SeqText<'_>) -> fmt::Result {
        procfmt::percpu_header(out)?;
        let Some(tot) = NetState::of(net).and_then(|ns| ns.tot_stats.as_ref()) else {
            return procfmt::percpu_footer(out, &ProcStats::default());
        };
        let mut res = Ok(());
        tot.for_each_cpu(|cpu, t| {
            if res.is_ok() {
                res = procfmt::percpu_line(
                    out,
                    cpu,
                    &ProcCounts {
                        conns: t.conns,
                        inpkts: t.inpkts,
                        outpkts: t.outpkts,
                        inbytes: t.inbytes,
                        outbytes: t.outbytes,
                    },
                );
            }
        });
        res?;
        procfmt::percpu_footer(out, &proc_stats(tot))
    }
}

/// One connection as the connection files print it.
fn proc_conn(c: &ConnEntry) -> ProcConn<'_> {
    let t = &c.tuple;
    ProcConn {
        v6: t.af == AddrFamily::Inet6,
        dest_v6: c.dest.af == AddrFamily::Inet6,
        protocol: t.protocol,
        caddr: &t.caddr,
        cport: t.cport,
        vaddr: &t.vaddr,
        vport: t.vport,
        daddr: &t.daddr,
        dport: t.dport,
        state: c.state_name(),
        expires: c.expires_ms() / 1000,
    }
}

/// `/proc/net/ip_vs_conn` (`SYNC` false: every connection and persistence
/// template) and `/proc/net/ip_vs_conn_sync` (`SYNC` true: the same with
/// each entry's origin; every entry is LOCAL until rvs takes part in
/// connection sync), read one chain at a time.
pub(crate) struct IpVsConn<const SYNC: bool>;

impl<const SYNC: bool> ProcRecords for IpVsConn<SYNC> {
    fn header(out: &mut SeqText<'_>) -> fmt::Result {
        if SYNC {
            procconn::conn_sync_header(out)
        } else {
            procconn::conn_header(out)
        }
    }

    fn slots(net: &Net) -> usize {
        NetState::of(net)
            .and_then(|ns| ns.conns())
            .map_or(0, |c| c.slots(&ReadGuard::new()))
    }

    fn show_slot(net: &Net, slot: usize, out: &mut SeqText<'_>) -> fmt::Result {
        let Some(conns) = NetState::of(net).and_then(|ns| ns.conns()) else {
            return Ok(());
        };
        let g = ReadGuard::new();
        let mut res = Ok(());
        conns.for_each_in(&g, slot, |c| {
            if res.is_ok() {
                let line = proc_conn(c);
                res = if SYNC {
                    procconn::conn_sync_line(out, &line, false)
                } else {
                    procconn::conn_line(out, &line)
                };
            }
        });
        res
    }
}
