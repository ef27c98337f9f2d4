// SPDX-License-Identifier: GPL-2.0

//! The real-server companion (rvs_rs.ko): connections that a FullNAT or
//! ENAT director announced with the client's address, and what the
//! packets of each become on this host.
//!
//! - `flows`: the connections, found by their packets from the director
//!   and by the application's replies;
//! - `hook`: the two netfilter hooks that rewrite those packets;
//! - `state`: a namespace's state (table, trusted directors, counters);
//! - `files`: its sysctls (`net.rvs_rs.*`) and `/proc/net/rvs_rs`.
//!
//! Safe Rust only, on the wrapper layer `crate::sys`; pure parts in
//! `rvs_core::rs`.

#![forbid(unsafe_code)]

pub(crate) mod files;
pub(crate) mod flows;
pub(crate) mod hook;
pub(crate) mod state;
