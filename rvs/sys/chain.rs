// SPDX-License-Identifier: GPL-2.0

//! A hash table of RCU-published singly linked chains of slab-allocated
//! entries, under striped spinlocks, that can change its number of chains
//! while it is used.
//!
//! C headers: [`include/linux/rculist.h`] (the pattern, not the API),
//! [`include/linux/rcupdate.h`] (`call_rcu`, `synchronize_rcu`); the resize
//! follows the idea of [`lib/rhashtable.c`] (a second array while entries
//! move, tail entries moved one at a time).
//!
//! Readers walk a chain under an RCU read-side section ([`ReadGuard`])
//! without a lock: a new entry is published with a release store of the
//! link that points to it, and an unlinked one is freed only after a grace
//! period. Writers insert and unlink under the stripe lock of the entry's
//! hash ([`ChainTable::lock`]: the hash's low bits pick one of the
//! stripes), taken with bottom halves off. Every reference to an entry
//! handed out here is tied to a read-side section, so it cannot outlive
//! the grace period that frees the entry.
//!
//! Entries are placed by a 32-bit hash, of which an array of `2^bits`
//! chains uses the low `bits`. [`ChainTable::resize`] moves every entry to
//! a new array:
//! 1. the new array is linked from the old one (`next`); from then on
//!    writers insert into the new one, and a lookup that reaches the end
//!    of its chain in the old array goes on in the new one;
//! 2. chain by chain, under the chain's stripe lock, the *last* entry of
//!    the old chain is linked at the front of its new chain, then cut from
//!    the old one. A reader standing on it goes on into the new chain,
//!    never skipping an old entry (there is none after it); a reader that
//!    finds it gone from the old chain finds it in the new one, which it
//!    walks next;
//! 3. the new array becomes the one readers start from; after a grace
//!    period nobody walks the old one, and it is freed.
//!
//! Both arrays have at least as many chains as there are stripes, so an
//! old chain and every new chain its entries go to share one stripe lock:
//! a move takes one lock, and a writer holding an entry's stripe lock sees
//! it where it is.
//!
//! An entry created *counted* also keeps a reference count
//! ([`EntryRef`]): the chain holds one reference while the entry is
//! linked, and its memory is freed (after a grace period) when the last
//! reference goes, which may be after it left the chain.

use super::ffi;
use super::rcu::{self, lock_bh, BhLocked, ReadGuard};
use super::sched;
use super::slab::{CacheSlot, Cached, SlabBox};
use core::ptr::{self, NonNull};
use core::sync::atomic::{AtomicPtr, AtomicU32, Ordering};
use kernel::prelude::*;
use kernel::sync::lock::{mutex::MutexBackend, Guard};
use kernel::sync::{new_mutex, Mutex, SpinLock};
use kernel::types::Opaque;

/// What a chain table holds.
pub(crate) trait ChainItem: Sized + Send + Sync + 'static {
    /// The slab cache the entries of this type come from.
    fn cache() -> &'static CacheSlot<Entry<Self>>;
}

/// One entry of a chain: the value with its link, its reference count,
/// its hash, and the RCU head that frees it.
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
    /// Set once, when the entry is published ([`HashGuard::push_front`]).
    hash: u32,
    value: T,
}

impl<T> Entry<T> {
    fn with(value: T, counted: bool) -> Self {
        Self {
            head: Opaque::uninit(),
            next: AtomicPtr::new(ptr::null_mut()),
            refs: AtomicU32::new(u32::from(counted)),
            hash: 0,
            value,
        }
    }

    /// An entry that never enters a chain (e.g. on the stack), of hash 0.
    pub(crate) fn unhashed(value: T) -> Self {
        // INVARIANT: uncounted, and only `NewEntry` can be linked.
        Self::with(value, false)
    }

    /// The hash the entry was published under (0 for an unhashed one).
    pub(crate) fn hash(&self) -> u32 {
        self.hash
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
    /// Moves `value` into a new entry of `T`'s cache (`GFP_ATOMIC`);
    /// `counted`: it has a reference count, of which the chain will hold
    /// one. `None` if memory is short.
    pub(crate) fn new(value: T, counted: bool) -> Option<Self> {
        // INVARIANT: a fresh entry in a fresh slab object.
        SlabBox::new_atomic(Entry::with(value, counted)).map(Self)
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

/// log2 of the chains that share one mark (see [`ChainTable::marks`]).
pub(crate) const GROUP_SHIFT: u32 = 4;

/// One array of chains, with a mark per group of `1 << GROUP_SHIFT`
/// chains (the owner's bookkeeping, e.g. when to look at the group again),
/// and, while a resize runs, the array its entries move to.
///
/// # Invariants
///
/// `heads.len()` is `mask + 1`, a power of two. Every non-null link in
/// `heads` and in their entries points to a live entry owned by the chain
/// (see [`Entry`]). `next` is null, or the array a resize moves the
/// entries to, which stays live as long as this one is reachable.
struct Buckets<T: ChainItem> {
    heads: KVVec<AtomicPtr<Entry<T>>>,
    marks: KVVec<AtomicU32>,
    mask: u32,
    next: AtomicPtr<Buckets<T>>,
}

impl<T: ChainItem> Buckets<T> {
    /// `1 << bits` empty chains, every mark `mark`; charged to the
    /// caller's memory cgroup.
    fn new(bits: u32, mark: u32) -> Result<KBox<Self>> {
        if bits > MAX_BITS {
            return Err(EINVAL);
        }
        let n = 1usize << bits;
        let mut heads = KVVec::with_capacity(n, GFP_KERNEL_ACCOUNT)?;
        for _ in 0..n {
            heads.push(AtomicPtr::new(ptr::null_mut()), GFP_KERNEL_ACCOUNT)?;
        }
        let groups = (n >> GROUP_SHIFT).max(1);
        let mut marks = KVVec::with_capacity(groups, GFP_KERNEL_ACCOUNT)?;
        for _ in 0..groups {
            marks.push(AtomicU32::new(mark), GFP_KERNEL_ACCOUNT)?;
        }
        // INVARIANT: `n` empty chains, `mask` is `n - 1`, no resize yet.
        Ok(KBox::new(
            Self {
                heads,
                marks,
                mask: (n - 1) as u32,
                next: AtomicPtr::new(ptr::null_mut()),
            },
            GFP_KERNEL_ACCOUNT,
        )?)
    }

    /// The chain `hash` belongs to in this array.
    fn head(&self, hash: u32) -> &AtomicPtr<Entry<T>> {
        let i = (hash & self.mask) as usize;
        // SAFETY: `i <= mask` and `heads.len()` is `mask + 1` (invariant).
        unsafe { self.heads.get_unchecked(i) }
    }

    /// The mark of `hash`'s group in this array.
    fn mark(&self, hash: u32) -> Option<&AtomicU32> {
        self.marks.get(((hash & self.mask) >> GROUP_SHIFT) as usize)
    }

    /// The array the entries move to, while a resize runs.
    fn next<'g>(&'g self, _g: &'g ReadGuard) -> Option<&'g Buckets<T>> {
        let p = NonNull::new(self.next.load(Ordering::Acquire))?;
        // SAFETY: `next` stays live as long as `self` is reachable
        // (invariant): it becomes the table's current array, which a later
        // resize frees only a grace period after it stopped being current,
        // and that later resize starts only after the grace period that
        // retires `self`, which `_g` (borrowed for `'g`) delays.
        Some(unsafe { p.as_ref() })
    }
}

/// Largest log2 of a table's chain count.
pub(crate) const MAX_BITS: u32 = 30;

/// A hash table of chains with striped locks, resizable while in use (see
/// the module docs).
///
/// # Invariants
///
/// `cur` points to a live array owned by the table (from `KBox::into_raw`),
/// never null, whose chain count is `size`; only [`ChainTable::resize`]
/// replaces it (holding `resizing`), and it frees the old array a grace
/// period after the swap. Outside a resize, the current array's `next` is
/// null. Links change only under the stripe lock of the hashes of the
/// chain, `locks[hash & (locks.len() - 1)]`; `locks.len()` is a power of
/// two no larger than any array's chain count.
pub(crate) struct ChainTable<T: ChainItem> {
    cur: AtomicPtr<Buckets<T>>,
    size: AtomicU32,
    locks: KVec<Pin<KBox<SpinLock<()>>>>,
    resizing: Pin<KBox<Mutex<()>>>,
}

// SAFETY: entries and arrays are only freed after an RCU grace period, and
// links change only under the stripe locks; `T` is Send + Sync.
unsafe impl<T: ChainItem> Send for ChainTable<T> {}
// SAFETY: as above.
unsafe impl<T: ChainItem> Sync for ChainTable<T> {}

/// No resize runs while this lives (see [`ChainTable::exclusive`]).
pub(crate) struct Exclusive<'a>(#[allow(dead_code)] Guard<'a, (), MutexBackend>);

impl<T: ChainItem> ChainTable<T> {
    /// A table of `1 << bits` empty chains with every mark `mark`, and
    /// `stripes` locks (a power of two, at most the chain count of any
    /// size the table will have), each built by `lock` (one call site, so
    /// one lock class). Charged to the caller's memory cgroup.
    pub(crate) fn new<L, F>(bits: u32, stripes: usize, mark: u32, lock: F) -> Result<Self>
    where
        F: Fn() -> L,
        L: PinInit<SpinLock<()>>,
    {
        if !stripes.is_power_of_two() || bits > MAX_BITS || stripes > 1usize << bits {
            return Err(EINVAL);
        }
        let first = Buckets::new(bits, mark)?;
        let mut locks = KVec::with_capacity(stripes, GFP_KERNEL_ACCOUNT)?;
        for _ in 0..stripes {
            locks.push(
                KBox::pin_init(lock(), GFP_KERNEL_ACCOUNT)?,
                GFP_KERNEL_ACCOUNT,
            )?;
        }
        let resizing = KBox::pin_init(new_mutex!((), "rvs_chain_resize"), GFP_KERNEL_ACCOUNT)?;
        // INVARIANT: one empty array, owned; `stripes` is a power of two
        // no larger than its chain count (`resize` keeps it so).
        Ok(Self {
            size: AtomicU32::new(1u32 << bits),
            cur: AtomicPtr::new(KBox::into_raw(first)),
            locks,
            resizing,
        })
    }

    /// Number of chains now.
    pub(crate) fn len(&self) -> usize {
        self.size.load(Ordering::Relaxed) as usize
    }

    /// The stripe lock of `hash`.
    fn stripe(&self, hash: u32) -> &SpinLock<()> {
        let i = hash as usize & (self.locks.len() - 1);
        // SAFETY: `locks.len()` is a power of two (invariant), so `i` is
        // below it.
        unsafe { self.locks.get_unchecked(i) }
    }

    /// The current array, for the read-side section `_g`.
    fn first<'g>(&'g self, _g: &'g ReadGuard) -> &'g Buckets<T> {
        // SAFETY: `cur` is never null and live (invariant); an array that
        // stops being current is freed only after a grace period, which
        // `_g` (borrowed for `'g`) delays.
        unsafe { &*self.cur.load(Ordering::Acquire) }
    }

    /// The entries of `hash`'s chain (with others that share it), walked
    /// under the read-side section `g` without a lock. While a resize runs
    /// the walk goes on in the new array: every entry of the chain that
    /// stays in the table during the walk is met (some may be met twice).
    pub(crate) fn iter<'g>(&'g self, g: &'g ReadGuard, hash: u32) -> RcuIter<'g, T> {
        let b = self.first(g);
        // INVARIANT: the chain's head, loaded inside `g`.
        RcuIter {
            p: b.head(hash).load(Ordering::Acquire),
            table: Some(b),
            hash,
            g,
        }
    }

    /// Takes the stripe lock of `hash`, bottom halves off, to change its
    /// chain (in the old and the new array, while a resize runs).
    pub(crate) fn lock<'g>(&'g self, g: &'g ReadGuard, hash: u32) -> HashGuard<'g, T> {
        let lock = lock_bh(self.stripe(hash));
        // Loaded under the lock: a resize that began before moves this
        // stripe's chains only after the lock is released, and one that
        // linked its new array before the lock was taken has it seen here.
        let old = self.first(g);
        let new = old.next(g);
        // INVARIANT: the arrays of `hash` with its stripe lock, taken here.
        HashGuard {
            old,
            new,
            hash,
            _lock: lock,
        }
    }

    /// Positions for walks of every chain: the current array's chains,
    /// then, while a resize runs, the new array's.
    pub(crate) fn slots(&self, g: &ReadGuard) -> usize {
        let b = self.first(g);
        b.heads.len() + b.next(g).map_or(0, |n| n.heads.len())
    }

    /// The chain at `slot` and its index in its array.
    fn slot<'g>(
        &'g self,
        g: &'g ReadGuard,
        slot: usize,
    ) -> Option<(&'g AtomicPtr<Entry<T>>, usize)> {
        let b = self.first(g);
        match b.heads.get(slot) {
            Some(h) => Some((h, slot)),
            None => {
                let i = slot.checked_sub(b.heads.len())?;
                Some((b.next(g)?.heads.get(i)?, i))
            }
        }
    }

    /// Whether the chain at `slot` looks empty, without its lock (an entry
    /// inserted concurrently may be missed). `None` past the end.
    pub(crate) fn looks_empty(&self, g: &ReadGuard, slot: usize) -> Option<bool> {
        Some(self.slot(g, slot)?.0.load(Ordering::Relaxed).is_null())
    }

    /// The entries of the chain at `slot`, walked under the read-side
    /// section `g` without a lock. `None` past the end.
    pub(crate) fn iter_slot<'g>(&'g self, g: &'g ReadGuard, slot: usize) -> Option<RcuIter<'g, T>> {
        let (head, _) = self.slot(g, slot)?;
        // INVARIANT: the chain's head, loaded inside `g`; one chain only.
        Some(RcuIter {
            p: head.load(Ordering::Acquire),
            table: None,
            hash: 0,
            g,
        })
    }

    /// Takes the stripe lock of the chain at `slot`, bottom halves off.
    pub(crate) fn lock_slot<'g>(
        &'g self,
        g: &'g ReadGuard,
        slot: usize,
    ) -> Option<BucketGuard<'g, T>> {
        let (head, i) = self.slot(g, slot)?;
        // Every hash of chain `i` has the low bits of `i` (arrays have at
        // least as many chains as there are stripes): one stripe.
        let lock = lock_bh(self.stripe(i as u32));
        // INVARIANT: the chain with its own stripe lock, taken here.
        Some(BucketGuard { head, _lock: lock })
    }

    /// The marks of the current array: mark `k` is the owner's for slots
    /// `k << GROUP_SHIFT` up to the next group.
    pub(crate) fn marks<'g>(&'g self, g: &'g ReadGuard) -> &'g [AtomicU32] {
        &self.first(g).marks
    }

    /// Calls `f` on the mark of `hash`'s group in each array (two while a
    /// resize runs).
    pub(crate) fn for_each_mark(&self, g: &ReadGuard, hash: u32, mut f: impl FnMut(&AtomicU32)) {
        let mut b = Some(self.first(g));
        while let Some(t) = b {
            if let Some(m) = t.mark(hash) {
                f(m);
            }
            b = t.next(g);
        }
    }

    /// Keeps resizes out while the returned value lives: walks that must
    /// meet every entry exactly once hold it (a walk may sleep).
    pub(crate) fn exclusive(&self) -> Exclusive<'_> {
        Exclusive(self.resizing.lock())
    }

    /// Moves every entry to a new array of `1 << bits` chains, all marks
    /// `mark`, while lookups and writers go on (see the module docs). Each
    /// chain moves under its stripe lock, one at a time, with a scheduling
    /// point every 64 chains; the old array is freed after a grace period.
    /// Process context, no lock held, not inside [`Self::exclusive`].
    /// Returns whether the size changed (`ENOMEM` leaves the table as it
    /// was).
    pub(crate) fn resize(&self, bits: u32, mark: u32) -> Result<bool> {
        if bits > MAX_BITS || self.locks.len() > 1usize << bits {
            return Err(EINVAL);
        }
        let _x = self.resizing.lock();
        let old_p = self.cur.load(Ordering::Acquire);
        // SAFETY: `cur` is live and only replaced here, under `resizing`,
        // which is held.
        let old = unsafe { &*old_p };
        if old.heads.len() == 1usize << bits {
            return Ok(false);
        }
        let new_p = KBox::into_raw(Buckets::new(bits, mark)?);
        // SAFETY: just allocated; freed only by a later resize or the drop,
        // neither of which can run before this returns.
        let new = unsafe { &*new_p };
        // From here on, writers that take a stripe lock insert into `new`,
        // and walks that end in the old array go on in `new`.
        // INVARIANT: `new` stays live while `old` is reachable (above).
        old.next.store(new_p, Ordering::Release);
        for (i, head) in old.heads.iter().enumerate() {
            {
                let _lock = lock_bh(self.stripe(i as u32));
                // SAFETY: the stripe lock of every hash of the chain (they
                // share the low bits of `i`) is held, so also that of
                // their chains in `new`.
                unsafe { move_chain(head, new) };
            }
            if i % 64 == 63 {
                // Process context; no spinlock and no read section held.
                sched::cond_resched();
            }
        }
        // INVARIANT: `new` (whose `next` is null) is current; `old` is
        // freed a grace period later, below.
        self.cur.store(new_p, Ordering::Release);
        self.size.store(1u32 << bits, Ordering::Relaxed);
        rcu::synchronize();
        // SAFETY: `old` is no longer current, every read section that
        // could have loaded it has ended (grace period), no `next` names
        // it, and its chains are empty: every entry moved, and writers
        // insert into `new` since `next` was set. It came from
        // `KBox::into_raw`.
        drop(unsafe { KBox::from_raw(old_p) });
        Ok(true)
    }
}

/// Moves the entries of the chain at `head` to their chains in `new`,
/// last entry first (see the module docs).
///
/// # Safety
///
/// The caller holds the stripe lock of every hash of the chain (and so of
/// their chains in `new`), and `new` is linked as the old array's `next`.
unsafe fn move_chain<T: ChainItem>(head: &AtomicPtr<Entry<T>>, new: &Buckets<T>) {
    loop {
        let mut link = head;
        let mut p = link.load(Ordering::Relaxed);
        if p.is_null() {
            return;
        }
        loop {
            // SAFETY: linked in a chain whose lock is held: live.
            let next = unsafe { &(*p).next };
            let n = next.load(Ordering::Relaxed);
            if n.is_null() {
                break;
            }
            link = next;
            p = n;
        }
        // SAFETY: as above; `p` is the chain's last entry.
        let e = unsafe { &*p };
        let dst = new.head(e.hash);
        // A reader standing on `e` goes on into its new chain: nothing of
        // the old chain follows `e`.
        e.next.store(dst.load(Ordering::Relaxed), Ordering::Release);
        // INVARIANT: `e` is owned by its new chain from here on (under the
        // lock); readers that miss it in the old chain meet it there.
        dst.store(p, Ordering::Release);
        link.store(ptr::null_mut(), Ordering::Release);
    }
}

/// Frees every entry of a chain nothing else can reach any more.
///
/// # Safety
///
/// The caller owns the chain exclusively (the table is being dropped).
unsafe fn dispose_chain<T: ChainItem>(head: &AtomicPtr<Entry<T>>) {
    let mut p = head.swap(ptr::null_mut(), Ordering::Relaxed);
    while !p.is_null() {
        // SAFETY: the chain's entries are live and nothing else reaches
        // them (the caller's exclusive ownership).
        let next = unsafe { (*p).next.load(Ordering::Relaxed) };
        // SAFETY: unlinked just above (the whole chain was).
        unsafe { dispose_unlinked(p) };
        p = next;
    }
}

impl<T: ChainItem> Drop for ChainTable<T> {
    fn drop(&mut self) {
        // Owners empty the table first (with their own bookkeeping); this
        // only frees what they left, after a grace period.
        let mut p = self.cur.swap(ptr::null_mut(), Ordering::Relaxed);
        while let Some(nn) = NonNull::new(p) {
            // SAFETY: `&mut self`: nothing else reaches the arrays (at most
            // the current one and, had a resize stopped half-way, its
            // `next`), which came from `KBox::into_raw`.
            let b = unsafe { KBox::from_raw(nn.as_ptr()) };
            for head in b.heads.iter() {
                // SAFETY: as above, the chains are ours alone.
                unsafe { dispose_chain(head) };
            }
            p = b.next.load(Ordering::Relaxed);
        }
    }
}

/// A chain walked under an RCU read-side section.
///
/// # Invariants
///
/// `p` is null or an entry that was reachable from a chain of the table
/// after the read-side section `g` began (so it is freed, if at all, only
/// after `g` ends). `table`, if set, is the array whose chain of `hash`
/// the walk started in or went on to, reached inside `g`.
pub(crate) struct RcuIter<'g, T: ChainItem> {
    p: *mut Entry<T>,
    table: Option<&'g Buckets<T>>,
    hash: u32,
    g: &'g ReadGuard,
}

impl<'g, T: ChainItem> Iterator for RcuIter<'g, T> {
    type Item = &'g Entry<T>;

    fn next(&mut self) -> Option<&'g Entry<T>> {
        loop {
            if !self.p.is_null() {
                // SAFETY: entries reachable from a chain are live, and one
                // that is unlinked meanwhile is freed only after a grace
                // period, which cannot end while the read-side section `g`
                // (borrowed for `'g`) is held.
                let e: &'g Entry<T> = unsafe { &*self.p };
                // INVARIANT: `e`'s link, loaded inside `g` (Acquire: the
                // entry it names is fully built).
                self.p = e.next.load(Ordering::Acquire);
                return Some(e);
            }
            // The end of a chain: while a resize runs, the entries that
            // moved are in the new array's chain of the hash.
            let next = self.table?.next(self.g)?;
            self.table = Some(next);
            // INVARIANT: the head of `hash`'s chain in the new array,
            // loaded inside `g` (Acquire, as above).
            self.p = next.head(self.hash).load(Ordering::Acquire);
        }
    }
}

/// The chains of one hash with their stripe lock held (bottom halves
/// off); dropping it unlocks.
///
/// # Invariants
///
/// `old` is the table's current array as loaded under the stripe lock of
/// `hash`, `_lock`, and `new` its `next` then: the entries of `hash` are
/// in their chain of one of them, and only the holder may change the links
/// of those chains.
pub(crate) struct HashGuard<'g, T: ChainItem> {
    old: &'g Buckets<T>,
    new: Option<&'g Buckets<T>>,
    hash: u32,
    _lock: BhLocked<'g, ()>,
}

impl<'g, T: ChainItem> HashGuard<'g, T> {
    /// Publishes `e` under the guard's hash at the front of its chain (in
    /// the new array while a resize runs): readers that load the new link
    /// see it fully built. The reference lives as long as the read-side
    /// section `'g` of the guard, which delays its freeing.
    pub(crate) fn push_front(&self, e: NewEntry<T>) -> &'g Entry<T> {
        let head = self.new.unwrap_or(self.old).head(self.hash);
        let raw = SlabBox::into_raw(e.0);
        // SAFETY: not published yet: the entry is ours alone.
        unsafe {
            (*raw).hash = self.hash;
            (*raw)
                .next
                .store(head.load(Ordering::Relaxed), Ordering::Relaxed);
        }
        // Publish: readers that load the new head see a fully built entry.
        // INVARIANT: a live entry, now owned by the chain, linked under the
        // stripe lock (`self`).
        head.store(raw, Ordering::Release);
        // SAFETY: just published; freed only after a grace period that the
        // read-side section `'g` delays.
        unsafe { &*raw }
    }

    /// Unlinks every entry of the hash's chains (which other hashes may
    /// share) for which `doomed` holds; see [`BucketGuard::unlink_where`].
    pub(crate) fn unlink_where(
        &self,
        mut doomed: impl FnMut(&Entry<T>) -> bool,
        mut unlinked: impl FnMut(&Entry<T>),
    ) -> u32 {
        let mut n = 0;
        for b in Iterator::chain(core::iter::once(self.old), self.new) {
            // SAFETY: the stripe lock of `hash` is held (invariant).
            n += unsafe { unlink_in(b.head(self.hash), &mut doomed, &mut unlinked) };
        }
        n
    }
}

/// Unlinks the entries of the chain at `link` for which `doomed` holds.
///
/// # Safety
///
/// The caller holds the chain's stripe lock.
unsafe fn unlink_in<T: ChainItem>(
    mut link: &AtomicPtr<Entry<T>>,
    doomed: &mut impl FnMut(&Entry<T>) -> bool,
    unlinked: &mut impl FnMut(&Entry<T>),
) -> u32 {
    let mut removed = 0;
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
            // INVARIANT: links change under the stripe lock (the caller's);
            // the chain gives up `e`, disposed of below.
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

/// One chain with its stripe lock held (bottom halves off); dropping it
/// unlocks.
///
/// # Invariants
///
/// `head` is a chain of an array of a [`ChainTable`], reached inside the
/// read-side section `'g`, and `_lock` the guard of that chain's stripe
/// lock: only the holder may change the chain's links.
pub(crate) struct BucketGuard<'g, T: ChainItem> {
    head: &'g AtomicPtr<Entry<T>>,
    _lock: BhLocked<'g, ()>,
}

impl<'g, T: ChainItem> BucketGuard<'g, T> {
    /// Unlinks every entry for which `doomed` holds, calls `unlinked` on
    /// each right after (readers may still see it), then frees it after a
    /// grace period (a counted entry: drops the chain's reference).
    /// Returns how many went.
    pub(crate) fn unlink_where(
        &self,
        mut doomed: impl FnMut(&Entry<T>) -> bool,
        mut unlinked: impl FnMut(&Entry<T>),
    ) -> u32 {
        // SAFETY: the chain's stripe lock is held (invariant).
        unsafe { unlink_in(self.head, &mut doomed, &mut unlinked) }
    }

    /// The entries of the chain, walked with the lock held (kept until the
    /// iterator drops); references live as long as the read-side section
    /// `'g`.
    pub(crate) fn into_iter(self) -> LockedIter<'g, T> {
        // INVARIANT: the head of the locked chain.
        LockedIter {
            p: self.head.load(Ordering::Relaxed),
            _guard: self,
        }
    }
}

/// A chain walked under its stripe lock (see [`BucketGuard::into_iter`]).
///
/// # Invariants
///
/// `p` is null or an entry linked in `_guard`'s chain, whose lock is held
/// for as long as the iterator lives.
pub(crate) struct LockedIter<'g, T: ChainItem> {
    p: *mut Entry<T>,
    _guard: BucketGuard<'g, T>,
}

impl<'g, T: ChainItem> Iterator for LockedIter<'g, T> {
    type Item = &'g Entry<T>;

    fn next(&mut self) -> Option<&'g Entry<T>> {
        if self.p.is_null() {
            return None;
        }
        // SAFETY: under the chain's stripe lock (`_guard`), entries in it
        // are live and only lock holders unlink them; once unlinked, one is
        // freed only after a grace period, which the read-side section
        // `'g` (that the guard borrows) delays.
        let e: &'g Entry<T> = unsafe { &*self.p };
        // INVARIANT: the next entry of the locked chain.
        self.p = e.next.load(Ordering::Relaxed);
        Some(e)
    }
}
