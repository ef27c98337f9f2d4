// SPDX-License-Identifier: GPL-2.0

//! Netfilter hook registration for one network namespace.
//!
//! C header: [`include/linux/netfilter.h`]
//!
//! rvs hooks IPv4 and IPv6 at IPVS's points and priorities (see
//! `Documentation/architecture.md`), the real-server companion (rvs_rs) at
//! two points of its own; IPv6 uses the same numbers, as IPVS does
//! (`NF_IP6_PRI_*` equal `NF_IP_PRI_*`). [`Hooks`] registers a handler's
//! points ([`HookHandler::POINTS`]) in one namespace and unregisters them
//! on drop; every hook calls [`HookHandler::hook`] of the state given at
//! registration, the way `kernel::net::phy` calls its `Driver`. `nf_unregister_net_hooks` does
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
    /// PRE_ROUTING, after defragmentation and before conntrack and
    /// routing: what the host receives, before its stack sees it.
    PreRoutingEarly = 4,
    /// LOCAL_OUT, after conntrack, NAT and the filter: what the host
    /// sends, as its stack made it.
    LocalOutLate = 5,
}

impl HookPoint {
    /// The point for a const-generic hook trampoline's number.
    fn from_u8(v: u8) -> Option<Self> {
        match v {
            0 => Some(Self::LocalInReply),
            1 => Some(Self::LocalInRequest),
            2 => Some(Self::LocalOutRequest),
            3 => Some(Self::ForwardReply),
            4 => Some(Self::PreRoutingEarly),
            5 => Some(Self::LocalOutLate),
            _ => None,
        }
    }

    /// Its netfilter hook (`NF_INET_*`).
    pub(crate) fn nf_hook(self) -> NfHook {
        match self {
            Self::LocalInReply | Self::LocalInRequest => NfHook::LocalIn,
            Self::LocalOutRequest | Self::LocalOutLate => NfHook::LocalOut,
            Self::ForwardReply => NfHook::Forward,
            Self::PreRoutingEarly => NfHook::PreRouting,
        }
    }

    /// (netfilter hook number, priority).
    fn placement(self) -> (u32, i32) {
        match self {
            // Replies to clients on the director: before the request hook.
            Self::LocalInReply => (ffi::NF_INET_LOCAL_IN, ffi::NF_IP_PRI_NAT_SRC - 2),
            // Requests from remote clients to a virtual service.
            Self::LocalInRequest => (ffi::NF_INET_LOCAL_IN, ffi::NF_IP_PRI_NAT_SRC - 1),
            // Requests from clients on the director itself.
            Self::LocalOutRequest => (ffi::NF_INET_LOCAL_OUT, ffi::NF_IP_PRI_NAT_DST + 2),
            // NAT replies from real servers, routed through the director.
            Self::ForwardReply => (ffi::NF_INET_FORWARD, 100),
            // Right after defragmentation (-400), before raw (-300).
            Self::PreRoutingEarly => (
                ffi::NF_INET_PRE_ROUTING,
                ffi::NF_IP_PRI_CONNTRACK_DEFRAG + 1,
            ),
            // After the filter (0) and security (50) tables.
            Self::LocalOutLate => (ffi::NF_INET_LOCAL_OUT, 300),
        }
    }
}

/// What the hooks call: implemented by the state they are registered with.
pub(crate) trait HookHandler: Send + Sync {
    /// The points to hook, each for IPv4 and for IPv6.
    const POINTS: &'static [HookPoint];

    /// Handles one packet of family `af` at `point` in namespace `net`.
    fn hook(&self, point: HookPoint, af: AddrFamily, net: &Net, skb: Skb<'_>) -> Verdict;
}

/// rvs's hooks, registered in one namespace.
///
/// # Invariants
///
/// `ops` is registered in the namespace `net`, which is alive while the
/// registration is (its owner is that namespace's state).
pub(super) struct Hooks {
    net: *mut ffi::net,
    ops: KVec<ffi::nf_hook_ops>,
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
        let mut ops = KVec::with_capacity(2 * H::POINTS.len(), GFP_KERNEL_ACCOUNT)?;
        for v6 in [false, true] {
            for &point in H::POINTS {
                let (hooknum, priority) = point.placement();
                let mut op = ffi::nf_hook_ops {
                    hook: Some(hook_fn_of::<H>(point, v6)),
                    pf: if v6 {
                        ffi::NFPROTO_IPV6 as u8
                    } else {
                        ffi::NFPROTO_IPV4 as u8
                    },
                    hooknum,
                    priority,
                    ..Default::default()
                };
                op.priv_ = state as *mut c_void;
                ops.push(op, GFP_KERNEL_ACCOUNT)?;
            }
        }
        let (n, ops_p) = (ops.len() as u32, ops.as_ptr());
        // SAFETY: `ops` is a heap array that lives until `drop`, which
        // unregisters first; `net` is alive.
        let ret = unsafe { ffi::nf_register_net_hooks(net.as_ptr(), ops_p, n) };
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
        unsafe { ffi::nf_unregister_net_hooks(self.net, self.ops.as_ptr(), self.ops.len() as u32) };
    }
}

/// The C hook function of `point` for one family: a trampoline per
/// (handler, point, family), which knows both from its constants.
type HookFn =
    unsafe extern "C" fn(*mut c_void, *mut ffi::sk_buff, *const ffi::nf_hook_state) -> c_uint;

fn hook_fn_of<H: HookHandler>(point: HookPoint, v6: bool) -> HookFn {
    use HookPoint::*;
    match (point, v6) {
        (LocalInReply, false) => hook_fn::<H, { LocalInReply as u8 }, false>,
        (LocalInRequest, false) => hook_fn::<H, { LocalInRequest as u8 }, false>,
        (LocalOutRequest, false) => hook_fn::<H, { LocalOutRequest as u8 }, false>,
        (ForwardReply, false) => hook_fn::<H, { ForwardReply as u8 }, false>,
        (PreRoutingEarly, false) => hook_fn::<H, { PreRoutingEarly as u8 }, false>,
        (LocalOutLate, false) => hook_fn::<H, { LocalOutLate as u8 }, false>,
        (LocalInReply, true) => hook_fn::<H, { LocalInReply as u8 }, true>,
        (LocalInRequest, true) => hook_fn::<H, { LocalInRequest as u8 }, true>,
        (LocalOutRequest, true) => hook_fn::<H, { LocalOutRequest as u8 }, true>,
        (ForwardReply, true) => hook_fn::<H, { ForwardReply as u8 }, true>,
        (PreRoutingEarly, true) => hook_fn::<H, { PreRoutingEarly as u8 }, true>,
        (LocalOutLate, true) => hook_fn::<H, { LocalOutLate as u8 }, true>,
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
