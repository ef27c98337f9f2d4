// SPDX-License-Identifier: GPL-2.0

//! Pure-logic core of rvs: everything that needs no kernel call.
//!
//! The same files are built twice: as the host crate `rvs-core` (so
//! `cargo test` covers them) and as an inline module of the kernel module
//! crate (`#[path = "core"] mod rvs_core { pub mod sched; ... }`). Hence the
//! rules every file here follows: `no_std`, no `alloc`, no `unsafe`, no
//! panicking operations on runtime data, and sibling modules are reached
//! through `super::`, never `crate::`.

#![no_std]
#![forbid(unsafe_code)]
// Tests may index, unwrap and panic; the library code may not (see the
// [lints] table in Cargo.toml, checked on the non-test build).
#![cfg_attr(
    test,
    allow(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic,
        clippy::indexing_slicing,
        clippy::arithmetic_side_effects
    )
)]

#[cfg(test)]
extern crate std;

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
pub mod rs;
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
