// SPDX-License-Identifier: GPL-2.0

//! Netfilter ingress hooks: the fast path's hook on each device of a
//! namespace.
//!
//! C header: [`include/linux/netfilter_netdev.h`]
//!
//! An ingress hook (`NFPROTO_NETDEV`, `NF_NETDEV_INGRESS`) belongs to one
//! device: it runs in `__netif_receive_skb_core`, before the packet reaches
//! IP, as nftables' netdev chains and flowtables do. [`IngressHooks`] keeps
//! one registration per device of a namespace; its owner
//! (`crate::sys::pernet`) adds and removes them under RTNL, following the
//! devices (`crate::sys::netdev`), and drops them all in `pre_exit`. As with
//! [`super::hooks`], unregistering does not wait for running hook calls:
//! the handler's state outlives the registrations by an RCU grace period.

use super::ffi;
use super::netdev::Device;
use super::netns::Net;
use super::skb::Skb;
use super::verdict::Verdict;
use crate::rvs_core::config::AddrFamily;
use core::ffi::{c_uint, c_void};
use kernel::prelude::*;

/// After nftables' netdev chains of standard priorities (filter is 0), so
/// that an ingress filter sees packets before the fast path takes them.
const PRIORITY: i32 = 500;

/// What the ingress hooks call: implemented by the state they belong to.
pub(crate) trait IngressHandler: Send + Sync {
    /// Whether the namespace wants its devices hooked now (read under
    /// RTNL, whenever devices or the wish may have changed).
    fn ingress_wanted(&self) -> bool;

    /// Handles one IPv4 or IPv6 packet (`af`) received in `net`, its
    /// network header at the packet's start: `Accept` lets it go on to
    /// the stack.
    fn ingress(&self, af: AddrFamily, net: &Net, skb: Skb<'_>) -> Verdict;
}

/// One device's registration.
///
/// # Invariants
///
/// `ops` is registered in `net` on the device `ops.dev`, which is alive
/// while the registration is (the owner drops it at the device's
/// `NETDEV_UNREGISTER`, before the device is freed).
struct DevHook {
    net: *mut ffi::net,
    ops: KBox<ffi::nf_hook_ops>,
}

impl Drop for DevHook {
    fn drop(&mut self) {
        // SAFETY: registered in `IngressHooks::attach` on this namespace and
        // device, both alive (invariant).
        unsafe { ffi::nf_unregister_net_hook(self.net, &*self.ops) };
    }
}

/// A namespace's ingress registrations, one per hooked device (in slots
/// that an unhooked device leaves empty for the next one).
pub(crate) struct IngressHooks {
    hooks: KVec<Option<DevHook>>,
}

// SAFETY: the registrations are made and dropped under their owner's lock;
// the C side only reads the ops.
unsafe impl Send for IngressHooks {}
// SAFETY: nothing is reachable mutably through `&IngressHooks`.
unsafe impl Sync for IngressHooks {}

impl IngressHooks {
    pub(crate) const fn new() -> Self {
        Self { hooks: KVec::new() }
    }

    /// The slot of `dev`'s registration.
    fn slot_of(&mut self, dev: &Device) -> Option<&mut Option<DevHook>> {
        let dev = dev.as_ptr();
        self.hooks
            .as_mut_slice()
            .iter_mut()
            .find(|h| h.as_ref().is_some_and(|h| h.ops.dev == dev))
    }

    /// Hooks `dev` (of namespace `net`) with `state` as the handler.
    ///
    /// # Safety
    ///
    /// `state` must outlive the registration by an RCU grace period, and
    /// the caller must drop the registration ([`Self::detach`]) before
    /// `dev` is freed (at its `NETDEV_UNREGISTER`, with RTNL held).
    pub(super) unsafe fn attach<H: IngressHandler>(
        &mut self,
        net: &Net,
        dev: &Device,
        state: *const H,
    ) -> Result {
        if self.slot_of(dev).is_some() {
            return Ok(());
        }
        if !self.hooks.iter().any(Option::is_none) {
            self.hooks.push(None, GFP_KERNEL_ACCOUNT)?;
        }
        let mut op = ffi::nf_hook_ops {
            hook: Some(ingress_fn::<H>),
            pf: ffi::NFPROTO_NETDEV as u8,
            hooknum: ffi::NF_NETDEV_INGRESS,
            priority: PRIORITY,
            ..Default::default()
        };
        op.dev = dev.as_ptr();
        op.priv_ = state as *mut c_void;
        let ops = KBox::new(op, GFP_KERNEL_ACCOUNT)?;
        // SAFETY: `ops` lives in a heap box kept until the registration is
        // dropped; `net` and `dev` (a device of `net`) are alive.
        let ret = unsafe { ffi::nf_register_net_hook(net.as_ptr(), &*ops) };
        if ret != 0 {
            return Err(Error::from_errno(ret));
        }
        // INVARIANT: registered just above on `dev` in `net`; the caller
        // detaches it before the device goes.
        let hook = DevHook {
            net: net.as_ptr(),
            ops,
        };
        // An empty slot exists (made above if there was none).
        if let Some(slot) = self.hooks.as_mut_slice().iter_mut().find(|h| h.is_none()) {
            *slot = Some(hook);
        }
        Ok(())
    }

    /// Unhooks `dev`, if hooked.
    pub(super) fn detach(&mut self, dev: &Device) {
        if let Some(slot) = self.slot_of(dev) {
            drop(slot.take());
        }
    }

    /// Unhooks every device.
    pub(super) fn clear(&mut self) {
        for slot in self.hooks.as_mut_slice() {
            drop(slot.take());
        }
    }

    /// How many devices are hooked.
    pub(crate) fn len(&self) -> usize {
        self.hooks.iter().filter(|h| h.is_some()).count()
    }
}

/// # Safety
///
/// Called by netfilter only, with the `priv_` given at registration (an
/// `H`), a valid packet received on the hooked device and a valid state.
unsafe extern "C" fn ingress_fn<H: IngressHandler>(
    priv_: *mut c_void,
    skb: *mut ffi::sk_buff,
    state: *const ffi::nf_hook_state,
) -> c_uint {
    // SAFETY: a valid packet, being received (`skb->dev` is the device).
    let af = match unsafe { ffi::rvs_skb_ingress_family(skb) } {
        4 => AddrFamily::Inet,
        6 => AddrFamily::Inet6,
        _ => return ffi::NF_ACCEPT,
    };
    // SAFETY: `priv_` is the state given at registration, alive until a
    // grace period after the registration is dropped (see `attach`).
    let h = unsafe { &*(priv_ as *const H) };
    // SAFETY: netfilter passes a valid state whose `net` is alive.
    let net = unsafe { Net::from_raw((*state).net) };
    // SAFETY: netfilter passes a valid skb owned by this hook call.
    let skb = unsafe { Skb::from_raw(skb) };
    match h.ingress(af, net, skb) {
        Verdict::Accept => ffi::NF_ACCEPT,
        Verdict::Drop => ffi::NF_DROP,
        Verdict::Stolen => ffi::NF_STOLEN,
    }
}
