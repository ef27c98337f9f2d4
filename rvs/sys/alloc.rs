// SPDX-License-Identifier: GPL-2.0

//! Large zero-filled heap objects built in place (never on the stack).
//!
//! C header: [`include/linux/slab.h`] (`kvmalloc`, `__GFP_ZERO`)

use kernel::prelude::*;

/// Types for which the all-zero bit pattern is a valid value.
///
/// # Safety
///
/// Implementors guarantee that a value whose every byte is zero is a valid
/// (initialized, safe to use and to drop) value of the type.
pub(crate) unsafe trait ZeroValid: Sized {}

// The pure-logic crate's tables too large for the stack (`rvs_core` sits
// below `sys` and has no `unsafe`, so the promise about its types is made
// here, next to the allocation that relies on it).
//
// SAFETY: an all-zero `MhTable` is a valid empty table (documented in
// rvs_core::sched::mh: plain integer arrays, 0 an empty slot).
unsafe impl ZeroValid for crate::rvs_core::sched::MhTable {}
// SAFETY: an all-zero `LblcTable` is a valid empty table (documented in
// rvs_core::sched::lblc: a key and plain integer entries, none in use).
unsafe impl ZeroValid for crate::rvs_core::sched::LblcTable {}

/// A zero-filled `T` on the kvmalloc heap, charged to the caller's memory
/// cgroup.
pub(crate) fn zeroed_kvbox<T: ZeroValid>() -> Result<KVBox<T>> {
    let b = KVBox::<T>::new_uninit(GFP_KERNEL_ACCOUNT | __GFP_ZERO)?;
    // SAFETY: the allocation is zero-filled (`__GFP_ZERO`), and all zeroes
    // are a valid `T` (`ZeroValid`).
    Ok(unsafe { b.assume_init() })
}
