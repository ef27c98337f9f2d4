// SPDX-License-Identifier: GPL-2.0

//! The wrapper layer: safe Rust views of the kernel's C API that rvs uses,
//! knowing nothing about load balancing.
//!
//! Raw C is reached only through `ffi` (generated bindings), which is
//! private to this folder: the load balancer above (rvs/lb/) cannot
//! name it. Each file wraps one concern and names its C header; every
//! `unsafe` block of the module is in this folder, with its `// SAFETY:`
//! argument. Registrations (hooks, the netdevice notifier, the genl
//! family, the pernet subsystem) call the load balancer through traits
//! defined here ([`hooks::HookHandler`], [`netdev::DeviceHandler`],
//! [`genl::Handler`], [`pernet::PernetState`]), as `kernel::net::phy`
//! calls a `Driver`.

mod ffi;

pub(crate) mod alloc;
pub(crate) mod chain;
pub(crate) mod error;
pub(crate) mod genl;
pub(crate) mod hooks;
pub(crate) mod inet;
pub(crate) mod ingress;
pub(crate) mod kthread;
pub(crate) mod mcast;
pub(crate) mod modwatch;
pub(crate) mod netdev;
pub(crate) mod netns;
pub(crate) mod param;
pub(crate) mod percpu;
pub(crate) mod pernet;
pub(crate) mod procfs;
pub(crate) mod random;
pub(crate) mod rcu;
pub(crate) mod route;
pub(crate) mod sched;
pub(crate) mod skb;
pub(crate) mod slab;
pub(crate) mod sysctl;
pub(crate) mod time;
pub(crate) mod verdict;
