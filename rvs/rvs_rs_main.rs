// SPDX-License-Identifier: GPL-2.0

//! rvs_rs: the real servers' companion of rvs, in Rust.
//!
//! On a real server behind an rvs director, it gives applications the
//! client's address: a FullNAT or ENAT director puts it in a TCP option of
//! the client's SYN, and this module presents the connection to the
//! stack as coming from the client, then maps the replies back (FullNAT:
//! to the director's local address; ENAT: from the VIP straight to the
//! client). It trusts only the directors it is told of, per namespace
//! (`net.rvs_rs.directors`), and does nothing anywhere until told.
//!
//! Built with rvs.ko on the same wrapper layer (`sys`, rvs/sys/) and pure
//! core (`rvs_core`, rvs/core/); its own code is in `rs` (rvs/rs/), safe
//! Rust only. Documentation/forwarding.md describes it.

use kernel::prelude::*;

// The wrapper layer is rvs.ko's; the companion uses a part of it.
#[allow(dead_code, unreachable_pub)]
mod sys;

mod rs;

use rs::files::RsFiles;
use rs::flows::FlowCaches;
use rs::state::RsState;
use sys::{pernet, rcu};

/// Pure logic shared with rvs.ko and the host tests (`rvs/core`).
#[path = "core"]
#[allow(dead_code, unreachable_pub)]
pub mod rvs_core {
    pub mod config;
    pub mod defense;
    pub mod estimator;
    pub mod expiry;
    pub mod fullnat;
    pub mod hash;
    pub mod icmp;
    pub mod ipvs_sysctl;
    pub mod nlattr;
    pub mod packet;
    pub mod procconn;
    pub mod procfmt;
    pub mod proto;
    pub mod rs;
    pub mod sched;
    pub mod sctp;
    pub mod settings;
    pub mod svcattr;
    pub mod sync;
    pub mod tcp_reset;
    pub mod tunnel;
    pub mod tunnel_icmp;
    pub mod uapi;
}

module! {
    type: RvsRs,
    name: "rvs_rs",
    author: "rvs developers",
    description: "rvs real-server companion: client addresses for FullNAT, direct replies for ENAT",
    license: "GPL",
}

/// The loaded module: dropping it unregisters everything, in reverse order.
struct RvsRs {
    // Field order is drop order. The files go first (their handlers reach
    // the namespaces' state), then the state (hooks first, a grace period,
    // then the tables).
    _files: pernet::Registration<RsFiles>,
    _pernet: pernet::Registration<RsState>,
    // Waits for the RCU callbacks (this module's code) that free entries.
    _rcu_barrier: RcuBarrier,
    // After the barrier: every entry has been freed by then.
    _caches: FlowCaches,
}

/// Runs `rcu_barrier()` when dropped.
struct RcuBarrier;

impl Drop for RcuBarrier {
    fn drop(&mut self) {
        rcu::barrier();
    }
}

impl kernel::Module for RvsRs {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        let caches = FlowCaches::create()?;
        let pernet = pernet::Registration::new()?;
        let files = pernet::Registration::new()?;
        pr_info!("loaded: off in every namespace until net.rvs_rs.directors is set there\n");
        Ok(RvsRs {
            _files: files,
            _pernet: pernet,
            _rcu_barrier: RcuBarrier,
            _caches: caches,
        })
    }
}

impl Drop for RvsRs {
    fn drop(&mut self) {
        pr_info!("unloading\n");
    }
}
