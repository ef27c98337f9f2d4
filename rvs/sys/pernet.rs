// SPDX-License-Identifier: GPL-2.0

//! Per-namespace state: a typed `pernet_operations` registration, and the
//! node that holds each namespace's state with what it registers there.
//!
//! C headers: [`include/net/net_namespace.h`], [`include/net/netns/generic.h`],
//! [`include/linux/workqueue.h`]
//!
//! rvs keeps all of its configuration and connections per network namespace,
//! like IPVS. [`Registration`] registers a `pernet_operations` whose `init`
//! builds a [`PernetState`] for every namespace (existing and future) in a
//! [`Pernet`] node, and whose `pre_exit` and `exit` tear it down in two steps
//! with an RCU grace period between them; the node is then found from a
//! [`Net`] with [`PernetState::of`].
//!
//! The node owns what the state registers in its namespace, so that the
//! teardown order cannot be gotten wrong: the netfilter hooks (unregistered
//! in `pre_exit` at the latest, a grace period before the state is freed),
//! IPv6 defragmentation (disabled in `exit` at the latest), one delayed
//! work that calls [`PernetState::work`] (never queued after `pre_exit`,
//! cancelled in `exit` at the latest), and up to [`THREADS`] kernel threads
//! that run [`PernetState::thread`] (stopped in `exit` at the latest).

use super::ffi;
use super::hooks::{HookHandler, Hooks};
use super::ingress::{IngressHandler, IngressHooks};
use super::kthread::Task;
use super::netdev::{Device, Rtnl};
use super::netns::Net;
use core::ffi::{c_int, c_void, CStr};
use core::marker::PhantomData;
use core::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use kernel::prelude::*;
use kernel::sync::{new_mutex, Mutex};
use kernel::types::Opaque;

/// The id the kernel gives a registration (a `static`, one per state type).
///
/// # Invariants
///
/// `id` is 0 or the id the kernel assigned to the one live (or last)
/// [`Registration`] of `T`, whose slots hold `Pernet<T>` pointers.
pub(crate) struct PernetId<T> {
    id: AtomicU32,
    _type: PhantomData<fn() -> T>,
}

impl<T> PernetId<T> {
    /// An id not assigned yet.
    pub(crate) const fn new() -> Self {
        // INVARIANT: 0, not assigned yet.
        Self {
            id: AtomicU32::new(0),
            _type: PhantomData,
        }
    }
}

/// State that rvs keeps for each network namespace.
pub(crate) trait PernetState: Sized + Send + Sync + 'static {
    /// The slot the kernel writes this state's id into: one `static` of
    /// the implementing type, the same at every call.
    fn id() -> &'static PernetId<Self>;

    /// Builds the state of a namespace that was just created (or existed when
    /// the module loaded).
    fn new(net: &Net) -> Result<Pin<KBox<Self>>>;

    /// Stops what runs under RCU and refers to this state (packet hooks):
    /// the first step of the namespace going away or the module unloading.
    /// The kernel waits for an RCU grace period between this and
    /// [`PernetState::exit`], so a packet still inside a hook when this
    /// returns has left it before `exit` frees anything it could see
    /// (unregistering a netfilter hook does not wait for running calls).
    /// The node's hooks are unregistered after this returns, if this did
    /// not do it, and its work is never queued again.
    fn pre_exit(this: &Pernet<Self>);

    /// Stops the rest (workers) and lets go of everything before the state
    /// is dropped, one RCU grace period after [`PernetState::pre_exit`].
    /// The work is cancelled and IPv6 defragmentation disabled after this
    /// returns, if this did not do it.
    fn exit(this: &Pernet<Self>);

    /// The node's delayed work (see [`Pernet::schedule_work`]); process
    /// context.
    fn work(this: &Pernet<Self>);

    /// The body of the node's thread `id` (see [`Pernet::start_thread`]):
    /// runs until `crate::sys::kthread::should_stop` says so (or returns
    /// earlier, having nothing to do).
    fn thread(_this: &Pernet<Self>, _id: usize) {}

    /// The state of `net`, if the registration is alive.
    fn of(net: &Net) -> Option<&Pernet<Self>> {
        let slot = slot::<Self>(net);
        if slot.is_null() {
            return None;
        }
        // SAFETY: the kernel allocated a pointer-sized slot for this id, which
        // holds a node pointer or null; `pernet_exit` clears it last.
        let node = unsafe { *slot };
        // SAFETY: a non-null pointer came from `KBox::into_raw` and stays
        // valid until `pernet_exit` of this namespace.
        unsafe { node.as_ref() }
    }
}

/// How many threads a node may run at once: ids `0..THREADS`.
pub(crate) const THREADS: usize = 2;

/// What a node registered in its namespace.
struct Resources {
    hooks: Option<Hooks>,
    /// IPv6 defragmentation enabled (once, by [`Pernet::enable_defrag6`]).
    defrag6: bool,
    /// Running threads, by id.
    threads: [Option<Thread>; THREADS],
}

/// What a node's thread is given: the node and the thread's id.
struct ThreadCtx {
    node: *const c_void,
    id: usize,
}

/// A node's running thread.
///
/// # Invariants
///
/// `_task` runs `thread_fn::<T>` with `_ctx` for the node `_ctx.node` (of
/// type `Pernet<T>`). Fields drop in order: the thread is stopped, and
/// waited for, before `_ctx` is freed.
struct Thread {
    _task: Task,
    _ctx: KBox<ThreadCtx>,
}

/// One namespace's state and what it registered there.
///
/// # Invariants
///
/// `work` is an initialized delayed work whose function is `work_fn::<T>`;
/// `net` is alive while the node is (the node is freed by the namespace's
/// pernet exit); `res.hooks` hold `state` as their private data.
#[repr(C)]
#[pin_data]
pub(crate) struct Pernet<T: PernetState> {
    /// First (`#[repr(C)]`): `work_fn` finds the node from it.
    work: Opaque<ffi::delayed_work>,
    net: *mut ffi::net,
    /// `pre_exit` ran: no work is queued, no hook registered any more.
    stopping: AtomicBool,
    #[pin]
    res: Mutex<Resources>,
    /// The fast path's device hooks: taken under RTNL (never the other
    /// way round), apart from `res`, whose holders may wait for threads
    /// that take RTNL.
    #[pin]
    ingress: Mutex<IngressHooks>,
    state: Pin<KBox<T>>,
}

// SAFETY: `net` is only used while the namespace is alive (invariant); the
// work is driven through the workqueue API, `res` is behind its mutex, and
// the state is Send + Sync.
unsafe impl<T: PernetState> Send for Pernet<T> {}
// SAFETY: as above.
unsafe impl<T: PernetState> Sync for Pernet<T> {}

impl<T: PernetState> core::ops::Deref for Pernet<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.state
    }
}

impl<T: PernetState> Pernet<T> {
    /// The namespace.
    pub(crate) fn net(&self) -> &Net {
        // SAFETY: alive while the node is (invariant).
        unsafe { Net::from_raw(self.net) }
    }

    /// Queues the work to run in `delay` jiffies (unless queued already, or
    /// the namespace is going away).
    pub(crate) fn schedule_work(&self, delay: u64) {
        if self.stopping.load(Ordering::Relaxed) {
            return;
        }
        // SAFETY: `work` was initialized with the node (invariant) and lives as
        // long as it; `exit` cancels it synchronously before the node is freed.
        unsafe { ffi::rvs_queue_delayed_work(self.work.get(), delay as _) };
    }

    /// Runs the node's work as soon as possible (a queued run is brought
    /// forward; a running one runs again after). Any context.
    pub(crate) fn expedite_work(&self) {
        if self.stopping.load(Ordering::Relaxed) {
            return;
        }
        // SAFETY: as in `schedule_work`; `mod_delayed_work` may be called
        // from softirq (it disables interrupts around the timer).
        unsafe { ffi::rvs_mod_delayed_work(self.work.get(), 0) };
    }

    /// Waits for a running work and cancels a queued one (process context).
    pub(crate) fn cancel_work(&self) {
        // SAFETY: `work` was initialized with the node (invariant). After
        // `pre_exit` nothing queues it again (`stopping`).
        unsafe { ffi::cancel_delayed_work_sync(self.work.get()) };
    }

    /// Registers the netfilter hooks in the namespace, calling the state's
    /// [`HookHandler`]; nothing if they are registered. `ENODEV` once the
    /// namespace is going away.
    pub(crate) fn enable_hooks(&self) -> Result
    where
        T: HookHandler,
    {
        let mut res = self.res.lock();
        if self.stopping.load(Ordering::Relaxed) {
            return Err(ENODEV);
        }
        if res.hooks.is_none() {
            let state: &T = &self.state;
            // SAFETY: the state is pinned in the node and freed (in
            // `pernet_exit`) a grace period after `pernet_pre_exit` dropped
            // the hooks; `stopping` keeps them from coming back after it.
            // The namespace outlives the node.
            res.hooks = Some(unsafe { Hooks::register(self.net(), state)? });
        }
        Ok(())
    }

    /// Unregisters the hooks (hook calls still running may use the state
    /// for one more grace period).
    pub(crate) fn disable_hooks(&self) {
        let hooks = self.res.lock().hooks.take();
        drop(hooks);
    }

    /// Hooks the namespace's devices (not loopback) for the fast path, or
    /// unhooks them, as the state wants now
    /// ([`IngressHandler::ingress_wanted`]). Takes RTNL: the caller holds
    /// no lock that a device event takes. On error nothing stays hooked.
    pub(crate) fn ingress_sync(&self) -> Result
    where
        T: IngressHandler,
    {
        let rtnl = Rtnl::lock();
        let mut hooks = self.ingress.lock();
        if self.stopping.load(Ordering::Relaxed) || !self.state.ingress_wanted() {
            hooks.clear();
            return Ok(());
        }
        let state: *const T = &*self.state;
        let mut res = Ok(());
        rtnl.for_each_device(self.net(), |dev| {
            if res.is_ok() && !dev.is_loopback() {
                // SAFETY: the state is freed (in `pernet_exit`) a grace
                // period after `pernet_pre_exit` unhooked every device,
                // and `stopping`, checked under this lock, keeps hooks
                // from coming back after it. `dev` is a device of the
                // namespace, alive under RTNL; `ingress_device_removed`
                // unhooks it at its NETDEV_UNREGISTER.
                res = unsafe { hooks.attach(self.net(), dev, state) };
            }
        });
        if res.is_err() {
            hooks.clear();
        }
        res
    }

    /// A device entered the namespace (the netdevice notifier, RTNL held):
    /// hooked if the fast path is on. A device that cannot be hooked (no
    /// memory) stays on the slow path.
    pub(crate) fn ingress_device_added(&self, dev: &Device) -> Result
    where
        T: IngressHandler,
    {
        let mut hooks = self.ingress.lock();
        if self.stopping.load(Ordering::Relaxed)
            || !self.state.ingress_wanted()
            || dev.is_loopback()
        {
            return Ok(());
        }
        let state: *const T = &*self.state;
        // SAFETY: as in `ingress_sync`; the notifier's caller holds RTNL
        // and the device is alive for the event.
        unsafe { hooks.attach(self.net(), dev, state) }
    }

    /// A device leaves the namespace (the netdevice notifier, RTNL held):
    /// its hook goes now, before the device may be freed.
    pub(crate) fn ingress_device_removed(&self, dev: &Device) {
        self.ingress.lock().detach(dev);
    }

    /// How many devices the fast path hooks.
    pub(crate) fn ingress_devices(&self) -> usize {
        self.ingress.lock().len()
    }

    /// Enables netfilter's IPv6 defragmentation for the namespace (once).
    pub(crate) fn enable_defrag6(&self) -> Result {
        let mut res = self.res.lock();
        if !res.defrag6 {
            // SAFETY: `net` is alive (invariant); undone once, by
            // `disable_defrag6`.
            let ret = unsafe { ffi::rvs_defrag6_enable(self.net) };
            if ret != 0 {
                return Err(Error::from_errno(ret));
            }
            res.defrag6 = true;
        }
        Ok(())
    }

    /// Starts thread `id` (`0..THREADS`), named `name`, running
    /// [`PernetState::thread`]: `EBUSY` if it runs already, `ENODEV` once
    /// the namespace is going away. May sleep.
    pub(crate) fn start_thread(&self, id: usize, name: &CStr) -> Result {
        if self.stopping.load(Ordering::Relaxed) {
            return Err(ENODEV);
        }
        let mut res = self.res.lock();
        let slot = res.threads.get_mut(id).ok_or(EINVAL)?;
        if slot.is_some() {
            return Err(EBUSY);
        }
        let ctx = KBox::new(
            ThreadCtx {
                node: (self as *const Self).cast::<c_void>(),
                id,
            },
            GFP_KERNEL,
        )?;
        let data = (&*ctx as *const ThreadCtx).cast_mut().cast::<c_void>();
        // SAFETY: `thread_fn::<T>` reads `data` as the `ThreadCtx` it is,
        // whose node is this `Pernet<T>`; the context is kept with the
        // handle and freed after the thread is stopped (`Thread`), and the
        // node stops its threads before it is freed (`pernet_exit`).
        let task = unsafe { Task::start(thread_fn::<T>, data, name)? };
        // INVARIANT: `task` runs `thread_fn::<T>` with `ctx`, for this node.
        *slot = Some(Thread {
            _task: task,
            _ctx: ctx,
        });
        Ok(())
    }

    /// Stops thread `id` if it runs, and waits for its function to return
    /// (process context; the caller must hold no lock the thread takes).
    pub(crate) fn stop_thread(&self, id: usize) {
        let t = self.res.lock().threads.get_mut(id).and_then(Option::take);
        // Stopped outside the lock.
        drop(t);
    }

    /// Disables IPv6 defragmentation if [`Self::enable_defrag6`] enabled it.
    pub(crate) fn disable_defrag6(&self) {
        if core::mem::take(&mut self.res.lock().defrag6) {
            // SAFETY: `net` is alive; enabled once by `enable_defrag6`.
            unsafe { ffi::rvs_defrag6_disable(self.net) };
        }
    }
}

/// # Safety
///
/// Called by the workqueue only, for the `work` of a live node.
unsafe extern "C" fn work_fn<T: PernetState>(work: *mut ffi::work_struct) {
    // SAFETY: the work is the `work` field of a live node (cancelled before
    // it is freed); `to_delayed_work` returns the containing `delayed_work`.
    let dw = unsafe { ffi::rvs_to_delayed_work(work) };
    // SAFETY: `work` is the first field of the `#[repr(C)]` node (`Opaque`
    // has its contents' layout), so the node starts where it does.
    let node = unsafe { &*dw.cast::<Pernet<T>>() };
    T::work(node);
}

/// # Safety
///
/// Called only as the function of a thread started by
/// [`Pernet::start_thread`], with its [`ThreadCtx`].
unsafe extern "C" fn thread_fn<T: PernetState>(data: *mut c_void) -> c_int {
    // SAFETY: `data` is the thread's `ThreadCtx`, freed only after the
    // thread was stopped and waited for (`Thread`'s invariant).
    let ctx = unsafe { &*data.cast::<ThreadCtx>() };
    // SAFETY: `ctx.node` is the `Pernet<T>` that started the thread, which
    // stops it before it is freed (`pernet_exit`).
    let node = unsafe { &*ctx.node.cast::<Pernet<T>>() };
    T::thread(node, ctx.id);
    0
}

/// The `pernet_operations` and its id, at a stable address.
struct Ops<T> {
    ops: ffi::pernet_operations,
    _state: PhantomData<T>,
}

/// Registration of a [`PernetState`]; unregisters (and so tears down every
/// namespace's state) on drop.
///
/// # Invariants
///
/// `ops` is registered with `register_pernet_subsys` until `Drop`.
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
        // One registration per state type: a second one would share the
        // id slot, and its namespaces' nodes would be found by the first.
        if T::id().id.load(Ordering::Relaxed) != 0 {
            return Err(EBUSY);
        }
        let ops = ffi::pernet_operations {
            init: Some(pernet_init::<T>),
            pre_exit: Some(pernet_pre_exit::<T>),
            exit: Some(pernet_exit::<T>),
            id: T::id().id.as_ptr(),
            size: core::mem::size_of::<*mut Pernet<T>>(),
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
        // INVARIANT: registered just above.
        Ok(Self { ops })
    }
}

impl<T: PernetState> Drop for Registration<T> {
    fn drop(&mut self) {
        // SAFETY: the ops were registered in `new` (invariant) and are still
        // pinned.
        unsafe { ffi::unregister_pernet_subsys(&self.ops.ops as *const _ as *mut _) };
        // INVARIANT: the id is the kernel's no more; `T::of` finds nothing.
        T::id().id.store(0, Ordering::Relaxed);
    }
}

/// The slot of `T`'s node in `net`, or null if `T` is not registered.
fn slot<T: PernetState>(net: &Net) -> *mut *mut Pernet<T> {
    let id = T::id().id.load(Ordering::Relaxed);
    if id == 0 {
        return core::ptr::null_mut();
    }
    // SAFETY: `net` is alive; the id was assigned to `T`'s registration
    // (the kernel writes it into `T::id()`), whose slots hold `Pernet<T>`
    // pointers.
    unsafe { ffi::rvs_net_generic(net.as_ptr(), id) }.cast::<*mut Pernet<T>>()
}

/// Builds a namespace's node.
fn new_node<T: PernetState>(net: &Net) -> Result<Pin<KBox<Pernet<T>>>> {
    let state = T::new(net)?;
    let node = KBox::pin_init(
        pin_init!(Pernet {
            work: Opaque::uninit(),
            net: net.as_ptr(),
            stopping: AtomicBool::new(false),
            res <- new_mutex!(
                Resources { hooks: None, defrag6: false, threads: [None, None] },
                "rvs_netns_res"
            ),
            ingress <- new_mutex!(IngressHooks::new(), "rvs_netns_ingress"),
            state,
        }),
        GFP_KERNEL_ACCOUNT,
    )?;
    // SAFETY: `work` is pinned in the node and not yet queued.
    unsafe { ffi::rvs_init_delayed_work(node.work.get(), Some(work_fn::<T>)) };
    // INVARIANT: the work is initialized with `work_fn::<T>`; the node is
    // freed by this namespace's exit, so `net` outlives it; no hooks yet.
    Ok(node)
}

/// # Safety
///
/// Called by the pernet core only, with a namespace being set up.
unsafe extern "C" fn pernet_init<T: PernetState>(net: *mut ffi::net) -> c_int {
    // SAFETY: the kernel calls `init` with a namespace that is alive for the
    // duration of the call.
    let net = unsafe { Net::from_raw(net) };
    match new_node::<T>(net) {
        Ok(node) => {
            let slot = slot::<T>(net);
            if slot.is_null() {
                return EINVAL.to_errno();
            }
            // SAFETY: the node is never moved out of its allocation: the
            // raw pointer is only turned back into a pinned box in `exit`.
            let raw = KBox::into_raw(unsafe { Pin::into_inner_unchecked(node) });
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
    // The slot still holds the node: only `pernet_exit` clears it.
    if let Some(node) = T::of(net) {
        node.stopping.store(true, Ordering::Relaxed);
        T::pre_exit(node);
        node.disable_hooks();
        // `stopping`, read under the same lock, keeps them from coming back.
        node.ingress.lock().clear();
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
    let node = unsafe { core::ptr::replace(slot, core::ptr::null_mut()) };
    if node.is_null() {
        return;
    }
    // SAFETY: `node` came from `KBox::into_raw` of a pinned box in
    // `pernet_init`, and the slot no longer refers to it.
    let node = unsafe { Pin::new_unchecked(KBox::from_raw(node)) };
    T::exit(&node);
    for id in 0..THREADS {
        node.stop_thread(id);
    }
    node.cancel_work();
    node.disable_defrag6();
    node.disable_hooks();
    drop(node);
}
