// SPDX-License-Identifier: GPL-2.0

//! Netfilter hook registration for one network namespace.
//!
//! C header: [`include/linux/netfilter.h`]
//!
//! rvs hooks IPv4 and IPv6 at IPVS's points and priorities (see
//! `Documentation/architecture.md`); IPv6 uses the same numbers, as
//! IPVS does (`NF_IP6_PRI_*` equal `NF_IP_PRI_*`). [`Hooks`] registers them in one
//! namespace and unregisters them on drop; every hook calls
//! [`HookHandler::hook`] of the state given at registration, the way
//! `kernel::net::phy` calls its `Driver`. `nf_unregister_net_hooks` does
//! not wait for hook calls still running (it frees the old hook array by
//! `call_rcu`): the state the hooks see must outlive an RCU grace period
//! after the drop, which `crate::sys::pernet` guarantees (the namespace's
//! `pre_exit` drops them, its `exit`, a grace period later, frees the
//! state).

use super::ffi;
use super::netns::Net;
use super::skb::{NfHook, Skb};
use crate::rvs_core::config::AddrFamily;
use core::ffi::{c_uint, c_void};
use kernel::prelude::*;

/// What a hook tells netfilter to do with the packet (its own file, so
/// that `skb`, below the hooks, can name it too).
pub(crate) use super::verdict::Verdict;

/// Where in netfilter a hook sits (see [`POINTS`]).
#[derive(Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum HookPoint {
    /// LOCAL_IN, before the request hook: replies to local clients.
    LocalInReply = 0,
    /// LOCAL_IN: requests from remote clients.
    LocalInRequest = 1,
    /// LOCAL_OUT: requests from clients on the director.
    LocalOutRequest = 2,
    /// FORWARD: NAT replies from real servers.
    ForwardReply = 3,
}

impl HookPoint {
    /// The point for a const-generic hook trampoline's number.
    fn from_u8(v: u8) -> Option<Self> {
        match v {
            0 => Some(Self::LocalInReply),
            1 => Some(Self::LocalInRequest),
            2 => Some(Self::LocalOutRequest),
            3 => Some(Self::ForwardReply),
            _ => None,
        }
    }

    /// Its netfilter hook (`NF_INET_*`).
    pub(crate) fn nf_hook(self) -> NfHook {
        match self {
            Self::LocalInReply | Self::LocalInRequest => NfHook::LocalIn,
            Self::LocalOutRequest => NfHook::LocalOut,
            Self::ForwardReply => NfHook::Forward,
        }
    }
}

/// What the hooks call: implemented by the state they are registered with.
pub(crate) trait HookHandler: Send + Sync {
    /// Handles one packet of family `af` at `point` in namespace `net`.
    fn hook(&self, point: HookPoint, af: AddrFamily, net: &Net, skb: Skb<'_>) -> Verdict;
}

/// (hook point, netfilter hook number, priority), as IPVS registers them.
const POINTS: [(HookPoint, u32, i32); 4] = [
    // Replies to clients on the director: before the request hook.
    (
        HookPoint::LocalInReply,
        ffi::NF_INET_LOCAL_IN,
        ffi::NF_IP_PRI_NAT_SRC - 2,
    ),
    // Requests from remote clients to a virtual service.
    (
        HookPoint::LocalInRequest,
        ffi::NF_INET_LOCAL_IN,
        ffi::NF_IP_PRI_NAT_SRC - 1,
    ),
    // Requests from clients on the director itself.
    (
        HookPoint::LocalOutRequest,
        ffi::NF_INET_LOCAL_OUT,
        ffi::NF_IP_PRI_NAT_DST + 2,
    ),
    // NAT replies from real servers, routed through the director.
    (HookPoint::ForwardReply, ffi::NF_INET_FORWARD, 100),
];

/// Number of hooks: every point, once for IPv4 and once for IPv6.
const NHOOKS: usize = 2 * POINTS.len();

/// rvs's hooks, registered in one namespace.
///
/// # Invariants
///
/// `ops` is registered in the namespace `net`, which is alive while the
/// registration is (its owner is that namespace's state).
pub(super) struct Hooks {
    net: *mut ffi::net,
    ops: KBox<[ffi::nf_hook_ops; NHOOKS]>,
}

// SAFETY: the registration is created and dropped under its owner's lock;
// the C side only reads the ops.
unsafe impl Send for Hooks {}
// SAFETY: nothing is reachable mutably through `&Hooks`.
unsafe impl Sync for Hooks {}

impl Hooks {
    /// Registers the hooks in `net`, with `state` as their private data.
    ///
    /// # Safety
    ///
    /// `state` must outlive the returned registration by an RCU grace
    /// period, and `net` must outlive the registration.
    pub(super) unsafe fn register<H: HookHandler>(net: &Net, state: *const H) -> Result<Self> {
        let mut ops = KBox::new([ffi::nf_hook_ops::default(); NHOOKS], GFP_KERNEL_ACCOUNT)?;
        let v4 = POINTS.iter().map(|p| (false, p));
        let points = Iterator::chain(v4, POINTS.iter().map(|p| (true, p)));
        for (op, (v6, &(point, hooknum, priority))) in ops.iter_mut().zip(points) {
            op.hook = Some(match (point, v6) {
                (HookPoint::LocalInReply, false) => {
                    hook_fn::<H, { HookPoint::LocalInReply as u8 }, false>
                }
                (HookPoint::LocalInRequest, false) => {
                    hook_fn::<H, { HookPoint::LocalInRequest as u8 }, false>
                }
                (HookPoint::LocalOutRequest, false) => {
                    hook_fn::<H, { HookPoint::LocalOutRequest as u8 }, false>
                }
                (HookPoint::ForwardReply, false) => {
                    hook_fn::<H, { HookPoint::ForwardReply as u8 }, false>
                }
                (HookPoint::LocalInReply, true) => {
                    hook_fn::<H, { HookPoint::LocalInReply as u8 }, true>
                }
                (HookPoint::LocalInRequest, true) => {
                    hook_fn::<H, { HookPoint::LocalInRequest as u8 }, true>
                }
                (HookPoint::LocalOutRequest, true) => {
                    hook_fn::<H, { HookPoint::LocalOutRequest as u8 }, true>
                }
                (HookPoint::ForwardReply, true) => {
                    hook_fn::<H, { HookPoint::ForwardReply as u8 }, true>
                }
            });
            op.pf = if v6 {
                ffi::NFPROTO_IPV6 as u8
            } else {
                ffi::NFPROTO_IPV4 as u8
            };
            op.hooknum = hooknum;
            op.priority = priority;
            op.priv_ = state as *mut c_void;
        }
        // SAFETY: `ops` is a heap array that lives until `drop`, which
        // unregisters first; `net` is alive.
        let ret = unsafe { ffi::nf_register_net_hooks(net.as_ptr(), ops.as_ptr(), NHOOKS as u32) };
        if ret != 0 {
            return Err(Error::from_errno(ret));
        }
        // INVARIANT: registered just above in `net`, which the caller
        // guarantees outlives the registration.
        Ok(Self {
            net: net.as_ptr(),
            ops,
        })
    }
}

impl Drop for Hooks {
    fn drop(&mut self) {
        // SAFETY: registered in `register` on this namespace, which is
        // alive (invariant). Running hook calls may still use the state
        // after this returns (see the module docs).
        unsafe { ffi::nf_unregister_net_hooks(self.net, self.ops.as_ptr(), NHOOKS as u32) };
    }
}

/// # Safety
///
/// Called by netfilter only, with the `priv_` given at registration (an
/// `H`), a valid packet and a valid hook state. `V6`: registered for
/// NFPROTO_IPV6, so the packet's network header is IPv6.
unsafe extern "C" fn hook_fn<H: HookHandler, const POINT: u8, const V6: bool>(
    priv_: *mut c_void,
    skb: *mut ffi::sk_buff,
    state: *const ffi::nf_hook_state,
) -> c_uint {
    let Some(point) = HookPoint::from_u8(POINT) else {
        return ffi::NF_ACCEPT;
    };
    // SAFETY: `priv_` is the state given at registration, alive until a
    // grace period after the hooks are unregistered (see `register`).
    let ns = unsafe { &*(priv_ as *const H) };
    // SAFETY: netfilter passes a valid state whose `net` is alive.
    let net = unsafe { Net::from_raw((*state).net) };
    // SAFETY: netfilter passes a valid skb owned by this hook call.
    let skb = unsafe { Skb::from_raw(skb) };
    let af = if V6 {
        AddrFamily::Inet6
    } else {
        AddrFamily::Inet
    };
    match ns.hook(point, af, net, skb) {
        Verdict::Accept => ffi::NF_ACCEPT,
        Verdict::Drop => ffi::NF_DROP,
        Verdict::Stolen => ffi::NF_STOLEN,
    }
}
