// SPDX-License-Identifier: GPL-2.0

//! A table of RCU-published singly linked chains of slab-allocated
//! entries, under striped spinlocks.
//!
//! C headers: [`include/linux/rculist.h`] (the pattern, not the API),
//! [`include/linux/rcupdate.h`] (`call_rcu`)
//!
//! Readers walk a chain under an RCU read-side section ([`ReadGuard`])
//! without a lock: a new entry is published with a release store of the
//! link that points to it, and an unlinked one is freed only after a grace
//! period. Writers insert and unlink under the stripe lock of the bucket
//! ([`ChainTable::lock`]: bucket index modulo the stripe count), taken with
//! bottom halves off. Every reference to an entry handed out here is tied
//! to a read-side section, so it cannot outlive the grace period that
//! frees the entry.
//!
//! An entry created *counted* also keeps a reference count
//! ([`EntryRef`]): the chain holds one reference while the entry is
//! linked, and its memory is freed (after a grace period) when the last
//! reference goes, which may be after it left the chain.

use super::ffi;
use super::rcu::{lock_bh, BhLocked, ReadGuard};
use super::slab::{CacheSlot, Cached, SlabBox};
use core::ptr::{self, NonNull};
use core::sync::atomic::{AtomicPtr, AtomicU32, Ordering};
use kernel::prelude::*;
use kernel::sync::SpinLock;
use kernel::types::Opaque;

/// What a chain table holds.
pub(crate) trait ChainItem: Sized + Send + Sync + 'static {
    /// The slab cache the entries of this type come from.
    fn cache() -> &'static CacheSlot<Entry<Self>>;
}

/// One entry of a chain: the value with its link, its reference count,
/// its bucket, and the RCU head that frees it.
///
/// # Invariants
///
/// Unless made by [`Entry::unhashed`] (and then never linked, nor
/// referenced by an [`EntryRef`]: `refs` is 0), an entry lives in a slab
/// object of `T`'s cache, owned by the chain it was published in until it
/// is unlinked, and then by whoever frees it: freed by RCU after a grace
/// period, when it is unlinked and `refs` is 0.
#[repr(C)]
pub(crate) struct Entry<T> {
    /// First (`#[repr(C)]`): `free_entry` finds the entry from it.
    head: Opaque<ffi::callback_head>,
    next: AtomicPtr<Entry<T>>,
    /// References to the entry's memory: 0 for an uncounted entry (or a
    /// counted one whose chain reference was claimed), else the chain's
    /// while linked plus one per [`EntryRef`].
    refs: AtomicU32,
    bucket: u32,
    value: T,
}

impl<T> Entry<T> {
    fn with(value: T, bucket: u32, counted: bool) -> Self {
        Self {
            head: Opaque::uninit(),
            next: AtomicPtr::new(ptr::null_mut()),
            refs: AtomicU32::new(u32::from(counted)),
            bucket,
            value,
        }
    }

    /// An entry that never enters a chain (e.g. on the stack), of bucket
    /// `u32::MAX`.
    pub(crate) fn unhashed(value: T) -> Self {
        // INVARIANT: uncounted, and only `NewEntry` can be linked.
        Self::with(value, u32::MAX, false)
    }

    /// The bucket given at creation (`u32::MAX` for an unhashed entry).
    pub(crate) fn bucket(&self) -> u32 {
        self.bucket
    }

    /// References held now (a relaxed snapshot; see the type's docs).
    pub(crate) fn refs(&self) -> u32 {
        self.refs.load(Ordering::Relaxed)
    }

    /// Claims the chain's reference of a counted entry that nothing else
    /// references (1 -> 0): unlinking it then frees it. False if other
    /// references exist or it was claimed already.
    pub(crate) fn try_claim(&self) -> bool {
        self.refs
            .compare_exchange(1, 0, Ordering::AcqRel, Ordering::Relaxed)
            .is_ok()
    }
}

impl<T> core::ops::Deref for Entry<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.value
    }
}

impl<T: ChainItem> Cached for Entry<T> {
    fn cache() -> &'static CacheSlot<Self> {
        T::cache()
    }
}

/// An entry built and not yet published.
///
/// # Invariants
///
/// The box holds an entry of `T`'s cache that no chain and no reference
/// has seen yet (`next` null, `refs` 1 if counted, else 0).
pub(crate) struct NewEntry<T: ChainItem>(SlabBox<Entry<T>>);

impl<T: ChainItem> NewEntry<T> {
    /// Moves `value` into a new entry of `T`'s cache for `bucket`
    /// (`GFP_ATOMIC`); `counted`: it has a reference count, of which the
    /// chain will hold one. `None` if memory is short.
    pub(crate) fn new(value: T, bucket: u32, counted: bool) -> Option<Self> {
        // INVARIANT: a fresh entry in a fresh slab object.
        SlabBox::new_atomic(Entry::with(value, bucket, counted)).map(Self)
    }
}

impl<T: ChainItem> core::ops::Deref for NewEntry<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0.value
    }
}

/// Frees an unlinked entry now that nothing can reach it, or drops the
/// chain's reference to a counted one.
///
/// # Safety
///
/// `p` is an entry just unlinked from its chain (under its stripe lock),
/// owned by that chain until now.
unsafe fn dispose_unlinked<T: ChainItem>(p: *mut Entry<T>) {
    // SAFETY: the chain's ownership keeps `*p` allocated.
    let e = unsafe { &*p };
    if e.refs.load(Ordering::Acquire) == 0 {
        // SAFETY: unlinked, no reference left (a claimed entry is never
        // referenced again); `free_entry` runs after every reader that
        // could hold `e` has left its read section.
        unsafe { ffi::call_rcu(e.head.get(), Some(free_entry::<T>)) };
    } else {
        // SAFETY: `p` is counted and the chain's reference is ours.
        unsafe { release::<T>(p) };
    }
}

/// Drops one reference to a counted entry; the last one frees it after a
/// grace period (it is out of its chain by then: the chain's own reference
/// went when it was unlinked, or was claimed).
///
/// # Safety
///
/// `p` is a counted entry and the caller owns one of its references.
unsafe fn release<T: ChainItem>(p: *mut Entry<T>) {
    // SAFETY: the caller's reference keeps `*p` allocated.
    let e = unsafe { &*p };
    if e.refs.fetch_sub(1, Ordering::AcqRel) == 1 {
        // SAFETY: no reference is left and the entry is unlinked; readers
        // that found it before are waited for by the grace period.
        unsafe { ffi::call_rcu(e.head.get(), Some(free_entry::<T>)) };
    }
}

/// # Safety
///
/// Called by RCU only, with the head of an entry queued by
/// [`dispose_unlinked`] or [`release`].
unsafe extern "C" fn free_entry<T: ChainItem>(head: *mut ffi::callback_head) {
    // `head` is the first field of a `#[repr(C)]` entry.
    let Some(p) = NonNull::new(head.cast::<Entry<T>>()) else {
        return;
    };
    // SAFETY: the entry came from `SlabBox::into_raw` (`push_front`), was
    // unlinked a grace period ago and nothing refers to it any more.
    drop(unsafe { SlabBox::from_raw(p) });
}

/// A counted reference to an entry: its memory stays allocated while the
/// reference lives, even after the entry left its chain.
///
/// # Invariants
///
/// `0` points to a counted entry published in a chain, on which this
/// value owns one reference.
pub(crate) struct EntryRef<T: ChainItem>(NonNull<Entry<T>>);

// SAFETY: the reference only reads the entry (`T: Sync`) and drops its
// count atomically.
unsafe impl<T: ChainItem> Send for EntryRef<T> {}
// SAFETY: as above.
unsafe impl<T: ChainItem> Sync for EntryRef<T> {}

impl<T: ChainItem> EntryRef<T> {
    /// A reference to `e` (found by a walk in the caller's read section);
    /// `None` if it is uncounted or its last reference is being dropped.
    pub(crate) fn new(e: &Entry<T>) -> Option<Self> {
        e.refs
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |r| {
                (r != 0).then(|| r.saturating_add(1))
            })
            .ok()?;
        // INVARIANT: `refs` was not 0, so `e` is counted and not yet freed
        // (an `unhashed` entry has 0); one reference is now ours.
        Some(Self(NonNull::from(e)))
    }

    fn into_raw(self) -> *mut Entry<T> {
        let p = self.0.as_ptr();
        core::mem::forget(self);
        p
    }
}

impl<T: ChainItem> core::ops::Deref for EntryRef<T> {
    type Target = Entry<T>;
    fn deref(&self) -> &Entry<T> {
        // SAFETY: our reference keeps the entry allocated (invariant).
        unsafe { self.0.as_ref() }
    }
}

impl<T: ChainItem> Drop for EntryRef<T> {
    fn drop(&mut self) {
        // SAFETY: the reference counted in `new` is ours (invariant).
        unsafe { release::<T>(self.0.as_ptr()) };
    }
}

/// An optional [`EntryRef`] kept in a value and taken out at most once.
///
/// # Invariants
///
/// `0` is null or the pointer of an [`EntryRef`] whose reference it owns.
pub(crate) struct RefSlot<T: ChainItem>(AtomicPtr<Entry<T>>);

impl<T: ChainItem> RefSlot<T> {
    /// A slot holding `r`.
    pub(crate) fn new(r: Option<EntryRef<T>>) -> Self {
        // INVARIANT: takes over `r`'s reference.
        Self(AtomicPtr::new(
            r.map_or(ptr::null_mut(), EntryRef::into_raw),
        ))
    }

    /// The entry the slot refers to now, for the read-side section `g`.
    pub(crate) fn get<'g>(&self, _g: &'g ReadGuard) -> Option<&'g Entry<T>> {
        let p = NonNull::new(self.0.load(Ordering::Acquire))?;
        // SAFETY: the slot owned a reference when it was loaded, inside
        // `_g`; a reference taken out since is dropped through `release`,
        // which frees the entry only by `call_rcu`, after the grace period
        // that `_g` (borrowed for `'g`) delays.
        Some(unsafe { p.as_ref() })
    }

    /// Takes the reference out (a relaxed swap: callers serialize by the
    /// lock they hold, or own the value).
    pub(crate) fn take(&self) -> Option<EntryRef<T>> {
        let p = NonNull::new(self.0.swap(ptr::null_mut(), Ordering::Relaxed))?;
        // INVARIANT: the reference moves from the slot to the `EntryRef`.
        Some(EntryRef(p))
    }
}

impl<T: ChainItem> Drop for RefSlot<T> {
    fn drop(&mut self) {
        drop(self.take());
    }
}

/// A fixed-size table of chains with striped locks.
///
/// # Invariants
///
/// Every non-null link in `buckets` and in their entries points to a live
/// entry owned by the chain (see [`Entry`]); links change only under the
/// bucket's stripe lock, `locks[bucket % locks.len()]`.
pub(crate) struct ChainTable<T: ChainItem> {
    buckets: KVVec<AtomicPtr<Entry<T>>>,
    locks: KVec<Pin<KBox<SpinLock<()>>>>,
}

// SAFETY: entries are only freed after an RCU grace period, and links
// change only under the stripe locks; `T` is Send + Sync.
unsafe impl<T: ChainItem> Send for ChainTable<T> {}
// SAFETY: as above.
unsafe impl<T: ChainItem> Sync for ChainTable<T> {}

impl<T: ChainItem> ChainTable<T> {
    /// A table of `n` empty chains and `stripes` locks, each built by
    /// `lock` (one call site, so one lock class). Charged to the caller's
    /// memory cgroup.
    pub(crate) fn new<L, F>(n: usize, stripes: usize, lock: F) -> Result<Self>
    where
        F: Fn() -> L,
        L: PinInit<SpinLock<()>>,
    {
        if stripes == 0 {
            return Err(EINVAL);
        }
        let mut buckets = KVVec::with_capacity(n, GFP_KERNEL_ACCOUNT)?;
        for _ in 0..n {
            buckets.push(AtomicPtr::new(ptr::null_mut()), GFP_KERNEL_ACCOUNT)?;
        }
        let mut locks = KVec::with_capacity(stripes, GFP_KERNEL_ACCOUNT)?;
        for _ in 0..stripes {
            locks.push(
                KBox::pin_init(lock(), GFP_KERNEL_ACCOUNT)?,
                GFP_KERNEL_ACCOUNT,
            )?;
        }
        // INVARIANT: every chain is empty.
        Ok(Self { buckets, locks })
    }

    /// Number of buckets.
    pub(crate) fn len(&self) -> usize {
        self.buckets.len()
    }

    /// Whether chain `bucket` looks empty, without its lock (an entry
    /// inserted concurrently may be missed). `None` past the end.
    pub(crate) fn looks_empty(&self, bucket: usize) -> Option<bool> {
        Some(self.buckets.get(bucket)?.load(Ordering::Relaxed).is_null())
    }

    /// The entries of chain `bucket`, walked under the read-side section
    /// `g` without a lock. `None` past the end.
    pub(crate) fn iter<'g>(&'g self, _g: &'g ReadGuard, bucket: usize) -> Option<RcuIter<'g, T>> {
        // INVARIANT: the chain's head, loaded inside `_g`.
        Some(RcuIter {
            p: self.buckets.get(bucket)?.load(Ordering::Acquire),
            _g,
        })
    }

    /// Takes the stripe lock of chain `bucket`, bottom halves off.
    pub(crate) fn lock(&self, bucket: usize) -> Option<BucketGuard<'_, T>> {
        let head = self.buckets.get(bucket)?;
        let lock = self.locks.get(bucket.checked_rem(self.locks.len())?)?;
        // INVARIANT: the bucket with its own stripe lock, taken here.
        Some(BucketGuard {
            head,
            _lock: lock_bh(lock),
        })
    }
}

impl<T: ChainItem> Drop for ChainTable<T> {
    fn drop(&mut self) {
        // Owners empty the table first (with their own bookkeeping); this
        // only frees what they left, after a grace period.
        for head in self.buckets.iter() {
            let mut p = head.swap(ptr::null_mut(), Ordering::Relaxed);
            while !p.is_null() {
                // SAFETY: `&mut self`: nothing else can reach the chain, whose
                // entries are live (invariant).
                let next = unsafe { (*p).next.load(Ordering::Relaxed) };
                // SAFETY: unlinked just above (the whole chain was).
                unsafe { dispose_unlinked(p) };
                p = next;
            }
        }
    }
}

/// A chain walked under an RCU read-side section.
///
/// # Invariants
///
/// `p` is null or an entry that was reachable from the chain after the
/// read-side section `_g` began (so it is freed, if at all, only after
/// `_g` ends).
pub(crate) struct RcuIter<'g, T: ChainItem> {
    p: *mut Entry<T>,
    _g: &'g ReadGuard,
}

impl<'g, T: ChainItem> Iterator for RcuIter<'g, T> {
    type Item = &'g Entry<T>;

    fn next(&mut self) -> Option<&'g Entry<T>> {
        if self.p.is_null() {
            return None;
        }
        // SAFETY: entries reachable from a chain are live, and one that is
        // unlinked meanwhile is freed only after a grace period, which
        // cannot end while the read-side section `_g` (borrowed for `'g`)
        // is held.
        let e: &'g Entry<T> = unsafe { &*self.p };
        // INVARIANT: `e`'s link, loaded inside `_g` (Acquire: the entry it
        // names is fully built).
        self.p = e.next.load(Ordering::Acquire);
        Some(e)
    }
}

/// A chain with its stripe lock held (bottom halves off); dropping it
/// unlocks.
///
/// # Invariants
///
/// `head` is a bucket of a [`ChainTable`] and `_lock` the guard of that
/// bucket's stripe lock: only the holder may change the chain's links.
pub(crate) struct BucketGuard<'a, T: ChainItem> {
    head: &'a AtomicPtr<Entry<T>>,
    _lock: BhLocked<'a, ()>,
}

impl<'a, T: ChainItem> BucketGuard<'a, T> {
    /// Publishes `e` at the front of the chain: readers that load the new
    /// link see it fully built. The reference lives as long as the
    /// caller's read-side section `g`, which delays its freeing.
    pub(crate) fn push_front<'g>(&self, _g: &'g ReadGuard, e: NewEntry<T>) -> &'g Entry<T> {
        e.0.next
            .store(self.head.load(Ordering::Relaxed), Ordering::Relaxed);
        let raw = SlabBox::into_raw(e.0);
        // Publish: readers that load the new head see a fully built entry.
        // INVARIANT: a live entry, now owned by the chain, linked under the
        // stripe lock (`self`).
        self.head.store(raw, Ordering::Release);
        // SAFETY: just published; freed only after a grace period that the
        // caller's read-side section (`g`) delays.
        unsafe { &*raw }
    }

    /// Unlinks every entry for which `doomed` holds, calls `unlinked` on
    /// each right after (readers may still see it), then frees it after a
    /// grace period (a counted entry: drops the chain's reference).
    /// Returns how many went.
    pub(crate) fn unlink_where(
        &self,
        mut doomed: impl FnMut(&Entry<T>) -> bool,
        mut unlinked: impl FnMut(&Entry<T>),
    ) -> u32 {
        let mut removed = 0;
        let mut link: &AtomicPtr<Entry<T>> = self.head;
        loop {
            let p = link.load(Ordering::Relaxed);
            if p.is_null() {
                break;
            }
            // SAFETY: under the chain's stripe lock, entries in it are live
            // and only lock holders unlink them (invariant of the table).
            let e = unsafe { &*p };
            if doomed(e) {
                // Readers at `e` still see its `next`; new readers skip it.
                // INVARIANT: links change under the stripe lock (`self`); the
                // chain gives up `e`, disposed of below.
                link.store(e.next.load(Ordering::Relaxed), Ordering::Release);
                unlinked(e);
                // SAFETY: unlinked above under the lock; the chain owned it.
                unsafe { dispose_unlinked(p) };
                removed += 1;
            } else {
                link = &e.next;
            }
        }
        removed
    }

    /// The entries of the chain, walked with the lock held (kept until the
    /// iterator drops); references live as long as the caller's read-side
    /// section `g`.
    pub(crate) fn into_iter<'g>(self, _g: &'g ReadGuard) -> LockedIter<'a, 'g, T> {
        // INVARIANT: the head of the locked chain.
        LockedIter {
            p: self.head.load(Ordering::Relaxed),
            _guard: self,
            _g,
        }
    }
}

/// A chain walked under its stripe lock (see [`BucketGuard::into_iter`]).
///
/// # Invariants
///
/// `p` is null or an entry linked in `_guard`'s chain, whose lock is held
/// for as long as the iterator lives; `_g` was held before it was loaded.
pub(crate) struct LockedIter<'a, 'g, T: ChainItem> {
    p: *mut Entry<T>,
    _guard: BucketGuard<'a, T>,
    _g: &'g ReadGuard,
}

impl<'g, T: ChainItem> Iterator for LockedIter<'_, 'g, T> {
    type Item = &'g Entry<T>;

    fn next(&mut self) -> Option<&'g Entry<T>> {
        if self.p.is_null() {
            return None;
        }
        // SAFETY: under the chain's stripe lock (`_guard`), entries in it
        // are live and only lock holders unlink them; once unlinked, one is
        // freed only after a grace period, which the read-side section `_g`
        // delays past `'g`.
        let e: &'g Entry<T> = unsafe { &*self.p };
        // INVARIANT: the next entry of the locked chain.
        self.p = e.next.load(Ordering::Relaxed);
        Some(e)
    }
}
