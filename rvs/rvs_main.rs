// SPDX-License-Identifier: GPL-2.0

//! rvs: a Layer-4 load balancer in the spirit of Linux IPVS, in Rust.
//!
//! The crate is split by concern, like IPVS's C files: `netns` (per-namespace
//! state), `genl` (the generic netlink family), ... Raw C is reached only
//! through `ffi` (generated bindings) and the small safe wrappers; everything
//! above them is safe Rust.

use kernel::prelude::*;

mod ffi;
mod genl;
mod netlink;
mod netns;
mod state;

module! {
    type: Rvs,
    name: "rvs",
    author: "rvs developers",
    description: "rvs: Layer-4 load balancer (IPVS-compatible model) in Rust",
    license: "GPL",
}

/// The loaded module: dropping it unregisters everything, in reverse order.
struct Rvs {
    // Field order is drop order: the family goes first so that no request
    // can reach a namespace's state while it is torn down.
    _family: genl::Family<netlink::RvsNetlink>,
    _pernet: netns::Registration<state::NetState>,
}

impl kernel::Module for Rvs {
    fn init(module: &'static ThisModule) -> Result<Self> {
        let pernet = netns::Registration::new()?;
        let family = genl::Family::register(&netlink::FAMILY, module)?;
        pr_info!("rvs: loaded\n");
        Ok(Rvs {
            _family: family,
            _pernet: pernet,
        })
    }
}

impl Drop for Rvs {
    fn drop(&mut self) {
        pr_info!("rvs: unloading\n");
    }
}
