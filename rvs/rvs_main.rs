// SPDX-License-Identifier: GPL-2.0

//! rvs: a Layer-4 load balancer in the spirit of Linux IPVS, in Rust.
//!
//! Two layers, in two folders: `sys` (rvs/sys/), safe wrappers of the
//! kernel's C API that know nothing about load balancing (the generated
//! bindings are private to it), and `lb` (rvs/lb/), the load balancer,
//! written against them in safe Rust (every file forbids `unsafe`). Below
//! both, `rvs_core` (rvs/core/) is the pure logic shared with the host
//! tests. Within each folder the files are split by concern, like IPVS's C
//! files.

use kernel::prelude::*;

mod lb;
mod sys;

use lb::{conn, netlink, procfiles, state::NetState};
use sys::{genl, modwatch, netdev, pernet, rcu};

/// Pure logic shared with the host tests (`rvs/core`, the `rvs-core` crate).
#[path = "core"]
#[allow(dead_code, unreachable_pub)]
pub mod rvs_core {
    pub mod batch;
    pub mod config;
    pub mod defense;
    pub mod estimator;
    pub mod expiry;
    pub mod fastpath;
    pub mod fullnat;
    pub mod hash;
    pub mod icmp;
    pub mod ipvs_sysctl;
    pub mod nlattr;
    pub mod packet;
    pub mod procconn;
    pub mod procfmt;
    pub mod proto;
    pub mod sched;
    pub mod sctp;
    pub mod settings;
    pub mod source_end;
    pub mod svcattr;
    pub mod sync;
    pub mod table_size;
    pub mod tcp_reset;
    pub mod tunnel;
    pub mod tunnel_icmp;
    pub mod uapi;
}

module! {
    type: Rvs,
    name: "rvs",
    author: "rvs developers",
    description: "rvs: Layer-4 load balancer (IPVS-compatible model) in Rust",
    license: "GPL",
}

/// The loaded module: dropping it unregisters everything, in reverse order.
struct Rvs {
    // Field order is drop order: the families go first so that no request
    // can reach a namespace's state while it is torn down.
    _ipvs_family: Option<genl::Family<netlink::RvsNetlink>>,
    _family: genl::Family<netlink::RvsNetlink>,
    // Before the namespaces' state, which its events reach.
    _devices: netdev::DeviceEvents<NetState>,
    // ipvs_compat=1: /proc/net/ip_vs of each namespace, removed before the
    // state it shows.
    _ipvs_proc: Option<pernet::Registration<procfiles::IpVsProc>>,
    _pernet: pernet::Registration<NetState>,
    // ipvs_compat=1: ip_vs refused until everything it would collide with
    // is gone.
    _refuse_ip_vs: Option<modwatch::RefuseModule>,
    // Last: waits for RCU callbacks (which run this module's code) queued
    // by the teardown above.
    _rcu_barrier: RcuBarrier,
    // After the barrier: every connection entry has been freed by then.
    _conn_cache: conn::ConnCache,
}

/// Runs `rcu_barrier()` when dropped.
struct RcuBarrier;

impl Drop for RcuBarrier {
    fn drop(&mut self) {
        rcu::barrier();
    }
}

impl kernel::Module for Rvs {
    fn init(module: &'static ThisModule) -> Result<Self> {
        let bits = lb::state::conn_tab_bits();
        if let Err(e) = rvs_core::config::validate_conn_tab_bits(bits) {
            pr_err!(
                "conn_tab_bits={}: {}\n",
                bits,
                e.msg.to_str().unwrap_or("out of range")
            );
            return Err(Error::from_errno(-e.errno));
        }
        let conn_cache = conn::ConnCache::create()?;
        let compat = sys::param::ipvs_compat();
        // ipvs_compat=1 takes what ip_vs would make, in this order: first
        // ip_vs's future loads are refused, then the family is claimed
        // (EEXIST if ip_vs is loaded now), and only then do the
        // namespaces get their /proc/net/ip_vs (which ip_vs's own would
        // collide with). Until the state below exists, "IPVS" requests
        // get ENODEV.
        let refuse_ip_vs = compat.then(modwatch::RefuseModule::ip_vs).transpose()?;
        let ipvs_family = if compat {
            Some(
                genl::Family::register(&netlink::IPVS_FAMILY, module).inspect_err(|e| {
                    if *e == EEXIST {
                        pr_err!(
                            "ipvs_compat=1: the generic netlink family \"IPVS\" is taken \
                             (ip_vs is loaded): unload it (modprobe -r ip_vs) or load rvs \
                             without ipvs_compat\n"
                        );
                    }
                })?,
            )
        } else {
            None
        };
        let pernet = pernet::Registration::new()?;
        let ipvs_proc = compat.then(pernet::Registration::new).transpose()?;
        let devices = netdev::DeviceEvents::register()?;
        let family = genl::Family::register(&netlink::FAMILY, module)?;
        pr_info!(
            "loaded (connection tables of {} buckets){}\n",
            1u32 << bits,
            if ipvs_family.is_some() {
                "; answering as \"IPVS\" too (ipvs_compat=1)"
            } else {
                ""
            }
        );
        Ok(Rvs {
            _ipvs_family: ipvs_family,
            _family: family,
            _devices: devices,
            _ipvs_proc: ipvs_proc,
            _pernet: pernet,
            _refuse_ip_vs: refuse_ip_vs,
            _rcu_barrier: RcuBarrier,
            _conn_cache: conn_cache,
        })
    }
}

impl Drop for Rvs {
    fn drop(&mut self) {
        pr_info!("unloading\n");
    }
}
