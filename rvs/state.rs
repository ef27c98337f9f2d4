// SPDX-License-Identifier: GPL-2.0

//! rvs's state of one network namespace: its services, connections, hooks
//! and connection collector.
//!
//! The hooks and the connection table are created with the first service
//! (like IPVS, a namespace without services pays nothing on its packet
//! path) and live until the namespace goes away or the module unloads.

use crate::conn::{ConnTable, Limits};
use crate::ffi;
use crate::hooks::Hooks;
use crate::netns::{Net, PernetState};
use crate::rcu::{RcuCell, WriterToken};
use crate::rvs_core::config::AddrFamily;
use crate::rvs_core::proto::Timeouts;
use crate::rvs_core::settings::{self, Setting};
use crate::service::Services;
use core::ptr;
use core::sync::atomic::{AtomicBool, AtomicPtr, AtomicU32, AtomicU64, Ordering};
use kernel::prelude::*;
use kernel::sync::{new_mutex, Mutex};
use kernel::types::Opaque;

/// log2 of each namespace's connection table's bucket count: the
/// `conn_tab_bits` module parameter (IPVS's has the same name; its one
/// table, shared by every namespace, has 2^12 buckets by default, where
/// a million connections make chains of 256). Checked when the module
/// loads; read-only after that.
pub(crate) fn conn_tab_bits() -> u32 {
    // SAFETY: reads a module parameter that nothing writes after load
    // (permissions 0444).
    unsafe { ffi::rvs_conn_tab_bits() }
}
/// How often expired connections are collected, in seconds.
const GC_PERIOD_SECS: u32 = 1;

/// Configuration state, changed only under [`NetState::lock`].
pub(crate) struct Ctl {
    hooks: Option<Hooks>,
    /// IPv6 defragmentation is enabled for this namespace (since its first
    /// IPv6 service; see `rvs_defrag6_enable`).
    defrag6: bool,
}

impl WriterToken for Ctl {}

/// Everything rvs keeps for one network namespace.
#[pin_data]
pub(crate) struct NetState {
    net: *mut ffi::net,
    /// Virtual services and their real servers.
    pub(crate) services: Services,
    conns: AtomicPtr<ConnTable>,
    /// Connection timeouts (`--set`), read per packet.
    pub(crate) timeouts: RcuCell<Timeouts>,
    /// Runtime settings (`--set-option`), one per row of
    /// `rvs_core::settings::SETTINGS`; read per packet, written under `ctl`.
    settings: [AtomicU32; settings::COUNT],
    #[pin]
    ctl: Mutex<Ctl>,
    gc: Opaque<ffi::delayed_work>,
    stopping: AtomicBool,
    /// Connections removed by the collector so far (diagnostics).
    pub(crate) collected: AtomicU32,
    /// Jiffies of the last rate estimate of each half of the services
    /// (see [`NetState::collect`]).
    last_estimate: [AtomicU64; 2],
    /// Collector runs so far: picks the half whose rates are estimated.
    ticks: AtomicU64,
}

// SAFETY: `net` is only used while the namespace is alive (this state is
// torn down by its pernet exit); everything else is Send + Sync or atomics.
unsafe impl Send for NetState {}
// SAFETY: as above.
unsafe impl Sync for NetState {}

static NET_ID: AtomicU32 = AtomicU32::new(0);

impl NetState {
    /// The configuration lock: serializes netlink commands of this
    /// namespace.
    pub(crate) fn lock(
        &self,
    ) -> kernel::sync::lock::Guard<'_, Ctl, kernel::sync::lock::mutex::MutexBackend> {
        self.ctl.lock()
    }

    /// The current value of a runtime setting (lock-free).
    pub(crate) fn setting(&self, s: Setting) -> u32 {
        self.settings
            .get(s.index())
            .map_or(s.spec().default, |v| v.load(Ordering::Relaxed))
    }

    /// Stores validated setting values; `values[i]` is row `i`'s new value,
    /// `None` leaves it unchanged. The configuration lock orders writers.
    pub(crate) fn set_settings(&self, _ctl: &mut Ctl, values: &[Option<u32>; settings::COUNT]) {
        for (slot, v) in self.settings.iter().zip(values.iter()) {
            if let Some(v) = v {
                slot.store(*v, Ordering::Relaxed);
            }
        }
    }

    /// The connection table, once the first service was added.
    pub(crate) fn conns(&self) -> Option<&ConnTable> {
        let p = self.conns.load(Ordering::Acquire);
        // SAFETY: set once from a leaked KBox under the configuration lock; freed only in
        // `exit`, after the hooks and the collector that read it are gone.
        unsafe { p.as_ref() }
    }

    /// Makes the namespace ready to balance: connection table, collector
    /// and hooks. Idempotent; called with the lock held when a service is
    /// added.
    pub(crate) fn activate(&self, ctl: &mut Ctl, net: &Net, af: AddrFamily) -> Result {
        // The namespace is going away (`pre_exit` ran): nothing new may
        // start that its exit would not stop.
        if self.stopping.load(Ordering::Relaxed) {
            return Err(ENODEV);
        }
        if self.conns.load(Ordering::Acquire).is_null() {
            let table = KBox::new(ConnTable::new(conn_tab_bits())?, GFP_KERNEL_ACCOUNT)?;
            self.conns.store(KBox::into_raw(table), Ordering::Release);
            self.schedule_gc();
        }
        if af == AddrFamily::Inet6 && !ctl.defrag6 {
            // IPv6 fragments would reach the hooks one by one: netfilter's
            // IPv6 defragmentation gives them whole packets, as IPVS asks.
            // SAFETY: `net` is alive; undone once, in `exit`.
            let ret = unsafe { ffi::rvs_defrag6_enable(net.as_ptr()) };
            if ret != 0 {
                return Err(Error::from_errno(ret));
            }
            ctl.defrag6 = true;
        }
        if ctl.hooks.is_none() {
            // SAFETY: `self` is the namespace's pinned state, which drops the
            // hooks (in `pre_exit`) a grace period before it is freed.
            ctl.hooks = Some(unsafe { Hooks::register(net, self)? });
        }
        Ok(())
    }

    /// Makes every real server forget its cached routes (a device of the
    /// namespace went down or away; see `crate::netdev`).
    pub(crate) fn forget_routes(&self) {
        let ctl = self.lock();
        self.services.for_each_dest(&*ctl, |d, w| d.route.forget(w));
    }

    /// Size of the connection table in buckets (before activation, the
    /// size it will have).
    pub(crate) fn conn_tab_size(&self) -> u32 {
        self.conns().map_or(1 << conn_tab_bits(), |c| c.size())
    }

    /// The flood settings (`conn_max`, `drop_entry`, `secure_tcp`) now.
    pub(crate) fn limits(&self) -> Limits {
        Limits {
            max: self.setting(Setting::ConnMax),
            drop_entry: self.setting(Setting::DropEntry),
            secure_tcp: self.setting(Setting::SecureTcp),
        }
    }

    fn schedule_gc(&self) {
        if self.stopping.load(Ordering::Relaxed) {
            return;
        }
        let delay = crate::conn::secs_to_jiffies(GC_PERIOD_SECS);
        // SAFETY: `gc` was initialized in `new` and lives as long as `self`;
        // `exit` cancels it synchronously before `self` is freed.
        unsafe { ffi::rvs_queue_delayed_work(self.gc.get(), delay as _) };
    }

    fn collect(&self) {
        if let Some(conns) = self.conns() {
            let nodest = self.setting(Setting::ExpireNodestConn) != 0;
            let n = conns.collect(self.limits(), nodest);
            self.collected.fetch_add(n, Ordering::Relaxed);
        }
        // Rates are estimated every 2 s, IPVS's interval (and smoothing:
        // `ipvsadm --rate` reads the same on both), half of the services at
        // each run, so that a large configuration's work is spread.
        let half = (self.ticks.fetch_add(1, Ordering::Relaxed) % 2) as usize;
        if let Some(last) = self.last_estimate.get(half) {
            let now = crate::conn::jiffies();
            let elapsed = now.wrapping_sub(last.swap(now, Ordering::Relaxed));
            self.services
                .estimate(half, elapsed, crate::conn::secs_to_jiffies(1));
        }
        self.schedule_gc();
    }
}

/// # Safety
///
/// Called by the workqueue only, for the `gc` work of a live `NetState`.
unsafe extern "C" fn gc_work(work: *mut ffi::work_struct) {
    // SAFETY: the work is the `gc` field of a live `NetState` (cancelled before it is
    // freed); `to_delayed_work` returns the containing `delayed_work`.
    let dw = unsafe { ffi::rvs_to_delayed_work(work) };
    let offset = core::mem::offset_of!(NetState, gc);
    // SAFETY: `dw` is the `gc` field (`Opaque` has its contents' layout), so stepping back
    // by the field's offset gives the state.
    let state = unsafe { &*dw.cast::<u8>().sub(offset).cast::<NetState>() };
    state.collect();
}

impl PernetState for NetState {
    fn id_slot() -> &'static AtomicU32 {
        &NET_ID
    }

    fn new(net: &Net) -> Result<Pin<KBox<Self>>> {
        let services = Services::new()?;
        let timeouts = RcuCell::new(Timeouts::default())?;
        let state = KBox::pin_init(
            pin_init!(NetState {
                net: net.as_ptr(),
                services,
                conns: AtomicPtr::new(ptr::null_mut()),
                timeouts,
                settings: settings::defaults().map(AtomicU32::new),
                ctl <- new_mutex!(Ctl { hooks: None, defrag6: false }, "rvs_netns_ctl"),
                gc: Opaque::uninit(),
                stopping: AtomicBool::new(false),
                collected: AtomicU32::new(0),
                last_estimate: [(); 2].map(|()| AtomicU64::new(crate::conn::jiffies())),
                ticks: AtomicU64::new(0),
            }),
            GFP_KERNEL_ACCOUNT,
        )?;
        // SAFETY: `gc` is pinned in the state and not yet queued.
        unsafe { ffi::rvs_init_delayed_work(state.gc.get(), Some(gc_work)) };
        Ok(state)
    }

    fn pre_exit(&self, _net: &Net) {
        // No hook is registered again after this (`activate` refuses).
        self.stopping.store(true, Ordering::Relaxed);
        // Packets may still be inside a hook when this returns; the kernel
        // waits for them (a grace period) before `exit`.
        self.lock().hooks = None;
    }

    fn exit(&self, net: &Net) {
        if core::mem::take(&mut self.lock().defrag6) {
            // SAFETY: `net` is alive; enabled once in `activate`.
            unsafe { ffi::rvs_defrag6_disable(net.as_ptr()) };
        }
        // SAFETY: `gc` was initialized in `new`; waits for a running
        // collection and stops it from re-queueing (`stopping`).
        unsafe { ffi::cancel_delayed_work_sync(self.gc.get()) };
        let p = self.conns.swap(ptr::null_mut(), Ordering::AcqRel);
        if !p.is_null() {
            // Dropping it unlinks every entry and frees them after a grace period.
            // SAFETY: from `KBox::into_raw` in `activate`; no collector reaches it now,
            // and no hook: they were unregistered in `pre_exit`, a grace period ago.
            drop(unsafe { KBox::from_raw(p) });
        }
        let _ = self.net;
    }
}
