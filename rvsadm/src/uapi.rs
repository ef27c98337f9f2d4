//! Numbers of the rvs generic netlink protocol: rvs-core's mirror of
//! `rvs/uapi/rvs.h` (the one Rust copy, checked against the header by
//! rvs/core/tests/uapi.rs).

pub use rvs_core::uapi::*;
