// SPDX-License-Identifier: GPL-2.0

//! Network namespaces: a typed per-namespace state registration.
//!
//! C headers: [`include/net/net_namespace.h`], [`include/net/netns/generic.h`]
//!
//! rvs keeps all of its configuration and connections per network namespace,
//! like IPVS. [`Registration`] registers a `pernet_operations` whose `init`
//! builds a [`PernetState`] for every namespace (existing and future) and whose
//! `pre_exit` and `exit` tear it down in two steps with an RCU grace period
//! between them; the state is then found from a [`Net`] with
//! [`PernetState::of`].

use crate::ffi;
use core::ffi::c_int;
use core::marker::PhantomData;
use core::sync::atomic::{AtomicU32, Ordering};
use kernel::prelude::*;
use kernel::types::Opaque;

/// A network namespace (C: `struct net`).
///
/// # Invariants
///
/// The wrapped `struct net` is alive for the lifetime of any `&Net`.
#[repr(transparent)]
pub(crate) struct Net(Opaque<ffi::net>);

impl Net {
    /// Borrows a `struct net` the caller knows to be alive.
    ///
    /// # Safety
    ///
    /// `ptr` must point to a live `struct net` that stays alive for `'a`.
    pub(crate) unsafe fn from_raw<'a>(ptr: *mut ffi::net) -> &'a Net {
        // SAFETY: `Net` is a transparent wrapper of `struct net`, and the
        // caller guarantees that the pointee lives for `'a`.
        unsafe { &*ptr.cast::<Net>() }
    }

    /// The raw pointer, for C calls.
    pub(crate) fn as_ptr(&self) -> *mut ffi::net {
        self.0.get()
    }
}

/// State that rvs keeps for each network namespace.
pub(crate) trait PernetState: Sized + Send + Sync {
    /// The slot the kernel writes this state's id into (one static per type).
    fn id_slot() -> &'static AtomicU32;

    /// Builds the state of a namespace that was just created (or existed when
    /// the module loaded).
    fn new(net: &Net) -> Result<Pin<KBox<Self>>>;

    /// Stops what runs under RCU and refers to this state (packet hooks):
    /// the first step of the namespace going away or the module unloading.
    /// The kernel waits for an RCU grace period between this and
    /// [`PernetState::exit`], so a packet still inside a hook when this
    /// returns has left it before `exit` frees anything it could see
    /// (unregistering a netfilter hook does not wait for running calls).
    fn pre_exit(&self, net: &Net);

    /// Stops the rest (workers) and lets go of everything before the state
    /// is dropped, one RCU grace period after [`PernetState::pre_exit`].
    fn exit(&self, net: &Net);

    /// The state of `net`, if rvs's registration is alive.
    fn of(net: &Net) -> Option<&Self> {
        let id = Self::id_slot().load(Ordering::Relaxed);
        // SAFETY: `net` is alive (type invariant); `net_generic` only reads
        // the namespace's generic-pointer array at an id the kernel assigned.
        let slot = unsafe { ffi::rvs_net_generic(net.as_ptr(), id) }.cast::<*mut Self>();
        if slot.is_null() {
            return None;
        }
        // The kernel allocated a pointer-sized slot for this id; `pernet_init` fills it.
        // SAFETY: the slot holds a `KBox<Self>` pointer or null; `pernet_exit` clears it last.
        let state = unsafe { *slot };
        // SAFETY: a non-null pointer came from `KBox::into_raw` and stays
        // valid until `pernet_exit` of this namespace.
        unsafe { state.as_ref() }
    }
}

/// The `pernet_operations` and its id, at a stable address.
struct Ops<T> {
    ops: ffi::pernet_operations,
    _state: PhantomData<T>,
}

/// Registration of a [`PernetState`]; unregisters (and so tears down every
/// namespace's state) on drop.
pub(crate) struct Registration<T: PernetState> {
    ops: Pin<KBox<Ops<T>>>,
}

// SAFETY: the registration is only touched at module init and exit; the C
// side only reads the ops.
unsafe impl<T: PernetState> Send for Registration<T> {}
// SAFETY: as above, no interior mutability is reachable through `&self`.
unsafe impl<T: PernetState> Sync for Registration<T> {}

impl<T: PernetState> Registration<T> {
    /// Registers the per-namespace subsystem: `T::new` runs for every
    /// existing namespace before this returns.
    pub(crate) fn new() -> Result<Self> {
        let ops = ffi::pernet_operations {
            init: Some(pernet_init::<T>),
            pre_exit: Some(pernet_pre_exit::<T>),
            exit: Some(pernet_exit::<T>),
            id: T::id_slot().as_ptr(),
            size: core::mem::size_of::<*mut T>(),
            ..Default::default()
        };
        let ops = KBox::pin(
            Ops {
                ops,
                _state: PhantomData,
            },
            GFP_KERNEL,
        )?;
        // SAFETY: `ops` is pinned in a heap allocation that outlives the
        // registration (it is dropped only after `unregister_pernet_subsys`).
        let ret = unsafe { ffi::register_pernet_subsys(&ops.ops as *const _ as *mut _) };
        if ret != 0 {
            return Err(Error::from_errno(ret));
        }
        Ok(Self { ops })
    }
}

impl<T: PernetState> Drop for Registration<T> {
    fn drop(&mut self) {
        // SAFETY: the ops were registered in `new` and are still pinned.
        unsafe { ffi::unregister_pernet_subsys(&self.ops.ops as *const _ as *mut _) };
    }
}

fn slot<T: PernetState>(net: &Net) -> *mut *mut T {
    let id = T::id_slot().load(Ordering::Relaxed);
    // SAFETY: `net` is alive; the id belongs to our registration.
    unsafe { ffi::rvs_net_generic(net.as_ptr(), id) }.cast::<*mut T>()
}

/// # Safety
///
/// Called by the pernet core only, with a namespace being set up.
unsafe extern "C" fn pernet_init<T: PernetState>(net: *mut ffi::net) -> c_int {
    // SAFETY: the kernel calls `init` with a namespace that is alive for the
    // duration of the call.
    let net = unsafe { Net::from_raw(net) };
    match T::new(net) {
        Ok(state) => {
            let slot = slot::<T>(net);
            if slot.is_null() {
                return EINVAL.to_errno();
            }
            // SAFETY: the state is never moved out of its allocation: the
            // raw pointer is only turned back into a pinned box in `exit`.
            let raw = KBox::into_raw(unsafe { Pin::into_inner_unchecked(state) });
            // SAFETY: the kernel allocated the slot (`ops.size` bytes) before
            // calling `init`, and nothing else writes it.
            unsafe { *slot = raw };
            0
        }
        Err(e) => e.to_errno(),
    }
}

/// # Safety
///
/// Called by the pernet core only, with a namespace being torn down (before
/// `pernet_exit`, with a grace period between them).
unsafe extern "C" fn pernet_pre_exit<T: PernetState>(net: *mut ffi::net) {
    // SAFETY: the kernel calls `pre_exit` with a namespace that is alive for
    // the duration of the call.
    let net = unsafe { Net::from_raw(net) };
    // The slot still holds the state: only `pernet_exit` clears it.
    if let Some(state) = T::of(net) {
        state.pre_exit(net);
    }
}

/// # Safety
///
/// Called by the pernet core only, with a namespace being torn down.
unsafe extern "C" fn pernet_exit<T: PernetState>(net: *mut ffi::net) {
    // SAFETY: the kernel calls `exit` with a namespace that is alive for the
    // duration of the call.
    let net = unsafe { Net::from_raw(net) };
    let slot = slot::<T>(net);
    if slot.is_null() {
        return;
    }
    // SAFETY: the slot is ours and was written by `pernet_init` (or is null).
    let state = unsafe { core::ptr::replace(slot, core::ptr::null_mut()) };
    if state.is_null() {
        return;
    }
    // SAFETY: `state` came from `KBox::into_raw` of a pinned box in
    // `pernet_init`, and the slot no longer refers to it.
    let state = unsafe { Pin::new_unchecked(KBox::from_raw(state)) };
    state.exit(net);
    drop(state);
}
