// SPDX-License-Identifier: GPL-2.0

//! A slab cache for the objects of one type, and the box that owns one of
//! its objects (what `KBox` is for kmalloc).
//!
//! C header: [`include/linux/slab.h`]
//!
//! A cache of its own packs objects at their size instead of a kmalloc
//! size class and shows their count and size in `/proc/slabinfo` (IPVS has
//! `ip_vs_conn`). The cache lives in a [`CacheSlot`] static, created at
//! module load ([`CacheSlot::create`]) and destroyed when the returned
//! [`CacheOwner`] drops, at unload, after every object was freed.

use super::ffi;
use core::ffi::CStr;
use core::marker::PhantomData;
use core::ptr::{self, NonNull};
use core::sync::atomic::{AtomicPtr, Ordering};
use kernel::prelude::*;

/// Where the cache of `T` objects is kept (a `static`).
///
/// # Invariants
///
/// `cache` is null or a live cache created for `T`'s size and alignment.
pub(crate) struct CacheSlot<T> {
    cache: AtomicPtr<ffi::kmem_cache>,
    _type: PhantomData<fn() -> T>,
}

impl<T> CacheSlot<T> {
    /// An empty slot (no cache yet).
    pub(crate) const fn new() -> Self {
        // INVARIANT: null.
        Self {
            cache: AtomicPtr::new(ptr::null_mut()),
            _type: PhantomData,
        }
    }

    /// Creates the cache, named `name` in /proc/slabinfo; it is destroyed
    /// when the returned owner drops. `EBUSY` if the slot has one already.
    pub(crate) fn create(&'static self, name: &'static CStr) -> Result<CacheOwner<T>> {
        let size = u32::try_from(core::mem::size_of::<T>()).map_err(|_| EINVAL)?;
        let align = u32::try_from(core::mem::align_of::<T>()).map_err(|_| EINVAL)?;
        // SAFETY: the name is a static NUL-terminated string (the cache keeps
        // the pointer); size and alignment are those of `T`.
        let cache = unsafe { ffi::rvs_kmem_cache_create(name.as_ptr(), size, align) };
        if cache.is_null() {
            return Err(ENOMEM);
        }
        // INVARIANT: a cache for `T`'s layout, just created.
        if self
            .cache
            .compare_exchange(ptr::null_mut(), cache, Ordering::Release, Ordering::Relaxed)
            .is_err()
        {
            // SAFETY: created above, no object was allocated from it.
            unsafe { ffi::kmem_cache_destroy(cache) };
            return Err(EBUSY);
        }
        // INVARIANT: the slot holds the cache just created, and no other
        // owner exists (the exchange from null succeeded).
        Ok(CacheOwner { slot: self })
    }
}

/// Owner of a slot's cache: destroys it on drop.
///
/// # Invariants
///
/// `slot` holds the cache this owner created (or null once dropped): only
/// one owner exists per slot (`create` fails on a full slot).
pub(crate) struct CacheOwner<T: 'static> {
    slot: &'static CacheSlot<T>,
}

impl<T> Drop for CacheOwner<T> {
    fn drop(&mut self) {
        let cache = self.slot.cache.swap(ptr::null_mut(), Ordering::AcqRel);
        if !cache.is_null() {
            // SAFETY: created by `create` (invariant) and taken out of the
            // slot, so no new object comes from it. Dropped at unload after
            // every object was freed (after `rcu_barrier`); were one left,
            // the kernel would warn and keep the cache, and `SlabBox`'s drop
            // (`kfree`) stays valid for it.
            unsafe { ffi::kmem_cache_destroy(cache) };
        }
    }
}

/// Types allocated from a cache of their own.
pub(crate) trait Cached: Sized + 'static {
    /// The slot holding the cache of this type.
    fn cache() -> &'static CacheSlot<Self>;
}

/// An owned `T` in an object of `T`'s slab cache.
///
/// # Invariants
///
/// The pointer is an initialized `T` in a slab object of a cache created
/// for `T`'s layout (allocated from `T::cache()`), owned by this box.
pub(crate) struct SlabBox<T: Cached>(NonNull<T>);

// SAFETY: the box owns its `T`, as `KBox` does.
unsafe impl<T: Cached + Send> Send for SlabBox<T> {}
// SAFETY: as above.
unsafe impl<T: Cached + Sync> Sync for SlabBox<T> {}

impl<T: Cached> SlabBox<T> {
    /// Moves `value` into a new object of `T`'s cache (`GFP_ATOMIC`, so the
    /// packet path may call it); `None` if memory is short or there is no
    /// cache.
    pub(crate) fn new_atomic(value: T) -> Option<Self> {
        let cache = T::cache().cache.load(Ordering::Acquire);
        if cache.is_null() {
            return None;
        }
        // SAFETY: `cache` is live while it is in its slot (destroyed only
        // after every object is gone); GFP_ATOMIC may be used in softirq.
        let p = NonNull::new(unsafe { ffi::rvs_kmem_cache_alloc_atomic(cache) }.cast::<T>())?;
        // SAFETY: `p` is a fresh object of a cache created with `T`'s size
        // and alignment (invariant of `CacheSlot<T>`); nothing refers to it.
        unsafe { p.as_ptr().write(value) };
        // INVARIANT: initialized just above, owned.
        Some(Self(p))
    }
}

impl<T: Cached> SlabBox<T> {
    /// Gives up ownership; [`SlabBox::from_raw`] takes it back.
    pub(crate) fn into_raw(b: Self) -> *mut T {
        let p = b.0.as_ptr();
        core::mem::forget(b);
        p
    }

    /// # Safety
    ///
    /// `p` came from [`SlabBox::into_raw`] and nothing else refers to it.
    pub(crate) unsafe fn from_raw(p: NonNull<T>) -> Self {
        // INVARIANT: the caller hands back the ownership `into_raw` gave up.
        Self(p)
    }
}

impl<T: Cached> core::ops::Deref for SlabBox<T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: owned, initialized object (invariant).
        unsafe { self.0.as_ref() }
    }
}

impl<T: Cached> Drop for SlabBox<T> {
    fn drop(&mut self) {
        let p = self.0.as_ptr();
        // SAFETY: the object is owned and initialized (invariant) and not
        // used after this; its memory is a slab object, freed once.
        // `kfree` finds the object's cache from its slab page, so this
        // holds whatever cache `T::cache()` (a safe trait) names now, and
        // even after an owner destroyed a cache that still had objects
        // (the kernel then warns and keeps it).
        unsafe {
            ptr::drop_in_place(p);
            ffi::kfree(p.cast());
        }
    }
}
