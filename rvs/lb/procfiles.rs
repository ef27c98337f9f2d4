// SPDX-License-Identifier: GPL-2.0

//! IPVS's `/proc/net/ip_vs` of each namespace, with `ipvs_compat=1`: the
//! service table in IPVS's text (`rvs_core::procfmt`), for the tools that
//! read it instead of netlink (Prometheus node_exporter's ipvs collector).
//!
//! C counterpart: `ip_vs_info_seq_show` in net/netfilter/ipvs/ip_vs_ctl.c.

#![forbid(unsafe_code)]

use crate::lb::state::{conn_tab_bits, NetState};
use crate::rvs_core::config::AddrFamily;
use crate::rvs_core::procfmt::{self, ProcDest, ProcService};
use crate::rvs_core::uapi::{RVS_SVC_F_ONEPACKET, RVS_SVC_F_PERSISTENT};
use crate::sys::netns::Net;
use crate::sys::pernet::{Pernet, PernetId, PernetState};
use crate::sys::procfs::{ProcFile, ProcShow, SeqText};
use crate::sys::time;
use core::fmt;
use core::sync::atomic::Ordering::Relaxed;
use kernel::prelude::*;

/// The IPVS files of one namespace. A pernet state of its own, registered
/// after [`NetState`]'s: namespaces get it after theirs and lose it before
/// (pernet exits run in reverse order), and the module's unload removes
/// the files first, so a read never outlives the state it shows.
pub(crate) struct IpVsProc {
    _info: ProcFile,
}

static PROC_ID: PernetId<IpVsProc> = PernetId::new();

impl PernetState for IpVsProc {
    fn id() -> &'static PernetId<Self> {
        &PROC_ID
    }

    fn new(net: &Net) -> Result<Pin<KBox<Self>>> {
        let info = ProcFile::create::<IpVsInfo>(net, c"ip_vs")?;
        Ok(KBox::pin(IpVsProc { _info: info }, GFP_KERNEL)?)
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
