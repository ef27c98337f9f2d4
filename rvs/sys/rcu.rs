// SPDX-License-Identifier: GPL-2.0

//! RCU: read-side guards, bottom-half guards, and a pointer cell whose
//! readers never lock and whose writers replace the value wholesale.
//!
//! C headers: [`include/linux/rcupdate.h`], [`include/linux/bottom_half.h`]
//!
//! The packet path reads services, destinations and connections under
//! [`ReadGuard`] without taking any lock. Writers (the control plane, under
//! a namespace's configuration mutex) publish a new value with
//! [`RcuCell::replace`]; the old one is freed by `call_rcu` after every
//! reader that could see it has finished.

use super::ffi;
use core::marker::PhantomData;
use core::sync::atomic::{AtomicPtr, Ordering};
use kernel::prelude::*;
use kernel::sync::lock::{mutex::MutexBackend, Guard};
use kernel::sync::Mutex;
use kernel::types::Opaque;

/// An RCU read-side critical section (`rcu_read_lock`).
///
/// # Invariants
///
/// `rcu_read_lock` was called when the guard was made, on this CPU context
/// (the guard is not `Send`), and is undone only by its drop: while a
/// `&ReadGuard` lives, no grace period that began after it can end.
pub(crate) struct ReadGuard {
    _not_send: PhantomData<*mut ()>,
}

impl ReadGuard {
    /// Enters a read-side critical section.
    pub(crate) fn new() -> Self {
        // SAFETY: always allowed; paired with the unlock in `drop`.
        unsafe { ffi::rvs_rcu_read_lock() };
        // INVARIANT: the read-side section was just entered.
        Self {
            _not_send: PhantomData,
        }
    }
}

impl Drop for ReadGuard {
    fn drop(&mut self) {
        // SAFETY: paired with the lock in `new`, on the same CPU context
        // (the guard is not `Send`).
        unsafe { ffi::rvs_rcu_read_unlock() };
    }
}

/// Bottom halves disabled (`local_bh_disable`), so spinlocks also taken by
/// the packet path (softirq) can be taken from process context.
///
/// # Invariants
///
/// `local_bh_disable` was called when the guard was made, on this CPU (the
/// guard is not `Send`), and is undone only by its drop. Bottom halves off
/// is also an RCU read-side section.
pub(crate) struct BhGuard {
    _not_send: PhantomData<*mut ()>,
}

impl BhGuard {
    /// Disables bottom halves on this CPU until the guard drops.
    pub(crate) fn new() -> Self {
        // SAFETY: always allowed; paired with the enable in `drop`.
        unsafe { ffi::rvs_local_bh_disable() };
        // INVARIANT: bottom halves were just disabled.
        Self {
            _not_send: PhantomData,
        }
    }
}

impl Drop for BhGuard {
    fn drop(&mut self) {
        // SAFETY: paired with `new` on the same CPU (not `Send`).
        unsafe { ffi::rvs_local_bh_enable() };
    }
}

/// Waits until every RCU callback queued so far has run. Called once at
/// module unload, so no callback can run module code after it is gone.
pub(crate) fn barrier() {
    // SAFETY: may sleep; called from module exit, a sleepable context.
    unsafe { ffi::rcu_barrier() };
}

/// Waits for a grace period: every read-side section (and every section
/// with bottom halves or preemption off) that began before the call has
/// ended when it returns. Process context only: it sleeps.
pub(crate) fn synchronize() {
    // SAFETY: no memory-safety preconditions; callers are in sleepable
    // context (checked by `might_sleep` on debug kernels).
    unsafe { ffi::synchronize_rcu() };
}

/// A value with its `rcu_head`, freed by an RCU callback.
#[repr(C)]
struct Node<T> {
    head: Opaque<ffi::callback_head>,
    value: T,
}

/// A pointer to a `T` that readers load under RCU and writers replace.
///
/// # Invariants
///
/// `ptr` always points to a live `Node<T>` allocated by `KBox`; a node
/// that was replaced is freed only after an RCU grace period.
pub(crate) struct RcuCell<T: Send + Sync> {
    ptr: AtomicPtr<Node<T>>,
}

impl<T: Send + Sync> RcuCell<T> {
    fn node(value: T, flags: kernel::alloc::Flags) -> Result<*mut Node<T>> {
        let node = KBox::new(
            Node {
                head: Opaque::uninit(),
                value,
            },
            flags,
        )?;
        Ok(KBox::into_raw(node))
    }

    /// A cell holding `value`.
    pub(crate) fn new(value: T) -> Result<Self> {
        Ok(Self {
            ptr: AtomicPtr::new(Self::node(value, GFP_KERNEL_ACCOUNT)?),
        })
    }

    /// The current value, valid while `guard` is held.
    pub(crate) fn get<'g>(&'g self, _guard: &'g ReadGuard) -> &'g T {
        // `'g` ties the reference to the caller's read-side section.
        // SAFETY: `ptr` is always valid; a replaced node outlives every section that loaded it.
        unsafe { &(*self.ptr.load(Ordering::Acquire)).value }
    }

    /// The current value, for writers: the borrowed writer token proves no
    /// concurrent replace, and readers only ever read.
    pub(crate) fn get_writer<'a>(&'a self, _writer: &'a impl WriterToken) -> &'a T {
        // SAFETY: as in `get`; the value cannot be replaced while the
        // writer token is borrowed, because `replace` needs it too.
        unsafe { &(*self.ptr.load(Ordering::Acquire)).value }
    }

    /// Publishes `value`; the old value is dropped after a grace period.
    pub(crate) fn replace(&self, value: T, _writer: &mut impl WriterToken) -> Result {
        let new = Self::node(value, GFP_KERNEL_ACCOUNT)?;
        let old = self.ptr.swap(new, Ordering::AcqRel);
        // SAFETY: `old` is no longer reachable through the cell; readers that loaded it are in
        // read-side sections, which `call_rcu` waits for before `free_node` runs.
        unsafe { ffi::call_rcu((*old).head.get(), Some(free_node::<T>)) };
        Ok(())
    }
}

/// A value made ready for [`RcuCell::install`] or [`RcuOpt::install`]:
/// allocated already, so publishing it cannot fail (a transaction
/// allocates everything first, then publishes).
pub(crate) struct Prepared<T: Send + Sync>(KBox<Node<T>>);

impl<T: Send + Sync> Prepared<T> {
    /// `value`, allocated for publishing.
    pub(crate) fn new(value: T) -> Result<Self> {
        Ok(Self(KBox::new(
            Node {
                head: Opaque::uninit(),
                value,
            },
            GFP_KERNEL_ACCOUNT,
        )?))
    }
}

impl<T: Send + Sync> RcuCell<T> {
    /// Publishes a prepared value; the old value is dropped after a grace
    /// period. Cannot fail, allocates nothing, never sleeps.
    pub(crate) fn install(&self, value: Prepared<T>, _writer: &mut impl WriterToken) {
        let new = KBox::into_raw(value.0);
        let old = self.ptr.swap(new, Ordering::AcqRel);
        // SAFETY: as in `replace`.
        unsafe { ffi::call_rcu((*old).head.get(), Some(free_node::<T>)) };
    }
}

impl<T: Send + Sync> Drop for RcuCell<T> {
    fn drop(&mut self) {
        let node = *self.ptr.get_mut();
        // SAFETY: `&mut self` means no reader can reach the cell any more (its owner was
        // unpublished a grace period ago), so the node can be freed now.
        drop(unsafe { KBox::from_raw(node) });
    }
}

/// A pointer to an optional `T` (null when `None`) that readers load under
/// RCU and writers replace: like [`RcuCell`], but an empty slot costs no
/// allocation (hash buckets, most of which stay empty).
///
/// # Invariants
///
/// `ptr` is null or points to a live `Node<T>` allocated by `KBox`; a node
/// that was replaced is freed only after an RCU grace period.
pub(crate) struct RcuOpt<T: Send + Sync> {
    ptr: AtomicPtr<Node<T>>,
}

impl<T: Send + Sync> RcuOpt<T> {
    /// An empty slot.
    pub(crate) fn empty() -> Self {
        Self {
            ptr: AtomicPtr::new(core::ptr::null_mut()),
        }
    }

    /// The current value, valid while `guard` is held.
    pub(crate) fn get<'g>(&'g self, _guard: &'g ReadGuard) -> Option<&'g T> {
        let p = self.ptr.load(Ordering::Acquire);
        // SAFETY: `p` is null or a live node (invariant); a replaced node
        // outlives every read-side section that loaded it.
        unsafe { p.as_ref() }.map(|n| &n.value)
    }

    /// The current value, for writers (see [`RcuCell::get_writer`]).
    pub(crate) fn get_writer<'a>(&'a self, _writer: &'a impl WriterToken) -> Option<&'a T> {
        let p = self.ptr.load(Ordering::Acquire);
        // SAFETY: as in `get`; the value cannot be replaced while the
        // writer token is borrowed, because `replace` needs it mutably.
        unsafe { p.as_ref() }.map(|n| &n.value)
    }

    /// Publishes `value` (or empties the slot); the old value is dropped
    /// after a grace period.
    pub(crate) fn replace(&self, value: Option<T>, _writer: &mut impl WriterToken) -> Result {
        let new = match value {
            Some(v) => RcuCell::node(v, GFP_KERNEL_ACCOUNT)?,
            None => core::ptr::null_mut(),
        };
        let old = self.ptr.swap(new, Ordering::AcqRel);
        if !old.is_null() {
            // SAFETY: `old` is no longer reachable through the slot; readers
            // that loaded it are in read-side sections, which `call_rcu`
            // waits for before `free_node` runs.
            unsafe { ffi::call_rcu((*old).head.get(), Some(free_node::<T>)) };
        }
        Ok(())
    }
}

impl<T: Send + Sync> RcuOpt<T> {
    /// Publishes a prepared value (or empties the slot); the old value is
    /// dropped after a grace period. Cannot fail, allocates nothing,
    /// never sleeps.
    pub(crate) fn install(&self, value: Option<Prepared<T>>, _writer: &mut impl WriterToken) {
        let new = value.map_or(core::ptr::null_mut(), |v| KBox::into_raw(v.0));
        let old = self.ptr.swap(new, Ordering::AcqRel);
        if !old.is_null() {
            // SAFETY: as in `replace`.
            unsafe { ffi::call_rcu((*old).head.get(), Some(free_node::<T>)) };
        }
    }
}

impl<T: Send + Sync> Drop for RcuOpt<T> {
    fn drop(&mut self) {
        let node = *self.ptr.get_mut();
        if !node.is_null() {
            // SAFETY: `&mut self` means no reader can reach the slot any
            // more (its owner was unpublished a grace period ago), and the
            // node came from `KBox::into_raw`.
            drop(unsafe { KBox::from_raw(node) });
        }
    }
}

/// Proof of exclusive write access to a set of RCU cells: the guard of the
/// mutex that serializes their writers.
///
/// Writers read a cell without a read-side section ([`RcuCell::get_writer`],
/// the reference borrowing the token) and replace it with the token
/// borrowed mutably ([`RcuCell::replace`]), so while a writer holds such a
/// reference no `replace` through the same token can free its value.
///
/// # Safety
///
/// A value of the implementing type may exist only while its holder holds
/// a [`WriterLock`], which excludes every other holder of a token of that
/// lock. The only implementor is [`Writer`], the guard of a `WriterLock`,
/// which nothing outside this file can construct: code above this layer
/// cannot make a token without taking the lock.
///
/// The token proves that *a* writer lock is held, not which one: which
/// cells a lock covers is its owner's layout (each namespace's state owns
/// its lock and its cells, and writes its cells only under its own lock).
/// Binding each cell to its lock, as `LockedBy` does, would cost a pointer
/// per cell (every service bucket) and a runtime check per access.
pub(crate) unsafe trait WriterToken {}

/// The mutex that serializes the writers of a set of RCU cells (a
/// namespace's configuration lock); its guard, [`Writer`], is their
/// [`WriterToken`].
///
/// Which cells a lock covers is the owner's layout: each namespace's state
/// owns its lock and its cells, and writes its cells only with its own
/// lock's guard (the token proves that *a* writer lock is held; it does not
/// name the cells, as `LockedBy` does at the cost of a pointer per cell).
#[pin_data]
pub(crate) struct WriterLock<T> {
    #[pin]
    mutex: Mutex<T>,
}

impl<T> WriterLock<T> {
    /// A lock around `data` (from `new_mutex!`, which names its class).
    pub(crate) fn new(mutex: impl PinInit<Mutex<T>>) -> impl PinInit<Self> {
        pin_init!(Self { mutex <- mutex })
    }

    /// Takes the lock (may sleep).
    pub(crate) fn lock(&self) -> Writer<'_, T> {
        // INVARIANT: the guard of this lock's mutex, just taken.
        Writer(self.mutex.lock())
    }
}

/// A held [`WriterLock`]: the data it guards, and the writer token.
///
/// # Invariants
///
/// The wrapped guard is of a `WriterLock`'s mutex: the lock is held while
/// the value exists. Only [`WriterLock::lock`] makes one (the field is
/// private to this file).
pub(crate) struct Writer<'a, T>(Guard<'a, T, MutexBackend>);

// SAFETY: a `Writer` exists only while its `WriterLock` is held (type
// invariant: it wraps the mutex's guard, and only `WriterLock::lock` makes
// one), and the mutex excludes every other `Writer` of that lock.
unsafe impl<T> WriterToken for Writer<'_, T> {}

impl<T> core::ops::Deref for Writer<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T> core::ops::DerefMut for Writer<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.0
    }
}

/// # Safety
///
/// Called by RCU only, with the head of a node queued by `replace` or
/// `install`.
unsafe extern "C" fn free_node<T: Send + Sync>(head: *mut ffi::callback_head) {
    // `head` is the first field of a `#[repr(C)]` node (offset 0).
    let node = head.cast::<Node<T>>();
    // SAFETY: `call_rcu` was given this node's head in `replace`; the node
    // came from `KBox::into_raw` and nothing else refers to it now.
    drop(unsafe { KBox::from_raw(node) });
}

/// A spinlock guard taken with bottom halves disabled (`spin_lock_bh`):
/// for locks that both the packet path (softirq) and process context take.
///
/// # Invariants
///
/// `guard` was taken while `_bh` was already held; fields drop in order,
/// so the lock is released before bottom halves are enabled again.
pub(crate) struct BhLocked<'a, T> {
    guard: kernel::sync::lock::Guard<'a, T, kernel::sync::lock::spinlock::SpinLockBackend>,
    _bh: BhGuard,
}

/// Locks `lock` with bottom halves disabled.
pub(crate) fn lock_bh<T>(lock: &kernel::sync::SpinLock<T>) -> BhLocked<'_, T> {
    let bh = BhGuard::new();
    // INVARIANT: bottom halves are off before the lock is taken.
    BhLocked {
        guard: lock.lock(),
        _bh: bh,
    }
}

impl<T> core::ops::Deref for BhLocked<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.guard
    }
}

impl<T> core::ops::DerefMut for BhLocked<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.guard
    }
}

/// A heap value published once (by a writer) and read lock-free until its
/// owner drops: `get` needs no read-side section, because the value is
/// never replaced or freed while the cell is shared.
///
/// # Invariants
///
/// `ptr` is null or points to a value from `KBox::into_raw` owned by the
/// cell, which is dropped only with the cell.
pub(crate) struct SetOnce<T> {
    ptr: AtomicPtr<T>,
    _owns: PhantomData<T>,
}

impl<T> SetOnce<T> {
    /// An empty cell.
    pub(crate) fn new() -> Self {
        // INVARIANT: null.
        Self {
            ptr: AtomicPtr::new(core::ptr::null_mut()),
            _owns: PhantomData,
        }
    }

    /// The value, once set.
    pub(crate) fn get(&self) -> Option<&T> {
        let p = self.ptr.load(Ordering::Acquire);
        // SAFETY: null or a value owned by the cell (invariant), which lives
        // as long as the cell and so at least as long as `&self`.
        unsafe { p.as_ref() }
    }

    /// Publishes `value` if the cell is empty (writers are serialized by
    /// `_writer`); `value` is dropped if it is set already.
    pub(crate) fn set(&self, value: KBox<T>, _writer: &mut impl WriterToken) {
        let p = KBox::into_raw(value);
        // INVARIANT: an empty cell takes ownership; a set one is never
        // overwritten (its value may be referenced), whatever writers race.
        if self
            .ptr
            .compare_exchange(
                core::ptr::null_mut(),
                p,
                Ordering::Release,
                Ordering::Relaxed,
            )
            .is_err()
        {
            // SAFETY: `p` came from `KBox::into_raw` just above and was not
            // published.
            drop(unsafe { KBox::from_raw(p) });
        }
    }
}

impl<T> Drop for SetOnce<T> {
    fn drop(&mut self) {
        let p = *self.ptr.get_mut();
        if !p.is_null() {
            // SAFETY: from `KBox::into_raw` in `set`, owned by the cell, and
            // `&mut self` means nothing else refers to it.
            drop(unsafe { KBox::from_raw(p) });
        }
    }
}
