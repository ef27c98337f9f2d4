// SPDX-License-Identifier: GPL-2.0

//! Network namespaces (`struct net`).
//!
//! C header: [`include/net/net_namespace.h`]
//!
//! A [`Net`] is borrowed from the kernel for as long as it is known to be
//! alive (a hook call, a request, a device event); per-namespace state is
//! registered with `crate::sys::pernet`.

use super::ffi;
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
    pub(super) unsafe fn from_raw<'a>(ptr: *mut ffi::net) -> &'a Net {
        // SAFETY: `Net` is a transparent wrapper of `struct net`, and the
        // caller guarantees that the pointee lives for `'a`.
        unsafe { &*ptr.cast::<Net>() }
    }

    /// The raw pointer, for C calls.
    pub(super) fn as_ptr(&self) -> *mut ffi::net {
        self.0.get()
    }

    /// Whether IPsec policies apply to what the namespace forwards or
    /// sends.
    pub(crate) fn has_xfrm_policy(&self) -> bool {
        // SAFETY: a live namespace (type invariant); reads counters.
        unsafe { ffi::rvs_net_has_xfrm_policy(self.as_ptr()) }
    }
}
