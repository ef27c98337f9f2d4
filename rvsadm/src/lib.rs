//! rvsadm: the control tool of the rvs Layer-4 load balancer.
//!
//! One concern per module: `uapi` (protocol numbers), `cli` (arguments,
//! from the option table in `cli/opts.rs`), `types` (typed model), `msg`
//! (attribute payloads and reply parsing), `netlink` (the socket and
//! message framing), `output` (listings), `event` (`--monitor`'s events,
//! decoded and printed), `error` (messages and exit codes). `main.rs`
//! glues them together.

pub mod cli;
pub mod error;
pub mod event;
pub mod host_addrs;
pub mod msg;
pub mod netlink;
pub mod output;
pub mod resolve;
pub mod types;
pub mod uapi;
