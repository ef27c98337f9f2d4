// SPDX-License-Identifier: GPL-2.0

//! The load balancer: the service model, the connection table, the packet
//! path, transmit and the control commands, written in safe Rust against
//! the wrappers of `crate::sys`; each file's `forbid` attribute makes the
//! compiler reject anything else here.

#![forbid(unsafe_code)]

pub(crate) mod config_gate;
pub(crate) mod conn;
pub(crate) mod conn_collect;
pub(crate) mod conn_flush;
pub(crate) mod conn_table;
pub(crate) mod datapath;
pub(crate) mod dest;
pub(crate) mod drain;
pub(crate) mod fastpath;
pub(crate) mod fullnat;
pub(crate) mod netlink;
pub(crate) mod packet;
pub(crate) mod procfiles;
pub(crate) mod sched;
pub(crate) mod service;
pub(crate) mod service_table;
pub(crate) mod state;
pub(crate) mod stats;
pub(crate) mod sync;
pub(crate) mod sysctls;
pub(crate) mod transaction;
pub(crate) mod vip_set;
pub(crate) mod xmit;
