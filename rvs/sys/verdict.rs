// SPDX-License-Identifier: GPL-2.0

//! What a hook tells netfilter to do with a packet: used by the hooks
//! (`sys::hooks`) and by packets rvs sends itself (`sys::skb`).

/// What a hook tells netfilter to do with the packet.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// Let it continue (not ours, or ours and rewritten in place).
    Accept,
    /// Drop it (netfilter frees it).
    Drop,
    /// rvs took the packet over and sent it on (`NF_STOLEN`).
    Stolen,
}
