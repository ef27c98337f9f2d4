// SPDX-License-Identifier: GPL-2.0

//! rvs's state of one network namespace: its services, connections,
//! settings and connection collector.
//!
//! The hooks and the connection table are created with the first service
//! (like IPVS, a namespace without services pays nothing on its packet
//! path) and live until the namespace goes away or the module unloads.
//! The state lives in the namespace's `crate::sys::pernet::Pernet` node,
//! which also holds the hooks, IPv6 defragmentation and the collector's
//! delayed work.

#![forbid(unsafe_code)]

use crate::lb::conn::Limits;
use crate::lb::conn_table::ConnTable;
use crate::lb::service_table::Services;
use crate::lb::stats::Stats;
use crate::lb::sync::SyncDaemons;
use crate::rvs_core::config::AddrFamily;
use crate::rvs_core::proto::Timeouts;
use crate::rvs_core::settings::{self, Setting};
use crate::rvs_core::table_size;
use crate::sys::netdev::{Device, DeviceHandler};
use crate::sys::netns::Net;
use crate::sys::param;
use crate::sys::percpu::Counters;
use crate::sys::pernet::{Pernet, PernetId, PernetState};
use crate::sys::rcu::{RcuCell, SetOnce, Writer, WriterLock};
use crate::sys::time;
use core::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use kernel::prelude::*;
use kernel::sync::new_mutex;

/// log2 of each namespace's connection table's bucket count: the
/// `conn_tab_bits` module parameter (IPVS's has the same name; its one
/// table, shared by every namespace, has 2^12 buckets by default, where
/// a million connections make chains of 256). Checked when the module
/// loads; read-only after that.
pub(crate) fn conn_tab_bits() -> u32 {
    param::conn_tab_bits()
}
/// How often expired connections are collected, in seconds.
const GC_PERIOD_SECS: u32 = 1;

/// Configuration state, changed only under [`NetState::lock`]. Its guard
/// is the writer token of the namespace's RCU cells (services, real
/// servers, timeouts, route caches).
pub(crate) struct Ctl {}

/// Everything rvs keeps for one network namespace.
#[pin_data]
pub(crate) struct NetState {
    /// The connection table, once the first service was added. First, so
    /// that it drops first: dropping it unlinks every entry and frees them
    /// after a grace period; by then (the namespace's pernet exit) no hook
    /// and no collector reaches it (unregistered a grace period ago, and
    /// cancelled).
    conns: SetOnce<ConnTable>,
    /// Virtual services and their real servers.
    pub(crate) services: Services,
    /// Traffic of every service of the namespace, kept when a service
    /// goes (IPVS's `tot_stats`): only with `ipvs_compat=1`, whose
    /// `/proc/net/ip_vs_stats` is its one reader, so that without it the
    /// packet path counts nothing more.
    pub(crate) tot_stats: Option<Stats>,
    /// Connection timeouts (`--set`), read per packet.
    pub(crate) timeouts: RcuCell<Timeouts>,
    /// Runtime settings (`--set-option`), one per row of
    /// `rvs_core::settings::SETTINGS`; read per packet, written under `ctl`.
    settings: [AtomicU32; settings::COUNT],
    #[pin]
    ctl: WriterLock<Ctl>,
    stopping: AtomicBool,
    /// Connections removed by the collector so far (diagnostics).
    pub(crate) collected: AtomicU32,
    /// Jiffies of the last rate estimate of each half of the services
    /// (see [`NetState::collect`]).
    last_estimate: [AtomicU64; 2],
    /// Collector runs so far: picks the half whose rates are estimated.
    ticks: AtomicU64,
    /// Jiffies of the next collector pass: a run of the work brought
    /// forward to resize the connection table only resizes.
    next_pass: AtomicU64,
    /// The earliest drain deadline (jiffies) the collector must act on;
    /// 0 for none (`lb::drain`).
    pub(super) next_drain: AtomicU64,
    /// Packets (and bytes) the VIP port guard dropped or refused, per CPU:
    /// a flood of them costs no shared cache line.
    guarded: Counters,
    /// Connection sync daemons (`--start-daemon`).
    #[pin]
    pub(crate) sync: SyncDaemons,
}

static NET_ID: PernetId<NetState> = PernetId::new();

impl NetState {
    /// Counts a packet the VIP port guard dropped or refused.
    pub(crate) fn count_guarded(&self, bytes: usize) {
        self.guarded.count_in(bytes, false);
    }

    /// Packets the VIP port guard dropped or refused so far.
    pub(crate) fn guarded(&self) -> u64 {
        self.guarded.sum().inpkts
    }

    /// The configuration lock: serializes netlink commands of this
    /// namespace.
    pub(crate) fn lock(&self) -> Writer<'_, Ctl> {
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
    pub(crate) fn set_settings(
        &self,
        _ctl: &mut Writer<'_, Ctl>,
        values: &[Option<u32>; settings::COUNT],
    ) {
        for (slot, v) in self.settings.iter().zip(values.iter()) {
            if let Some(v) = v {
                slot.store(*v, Ordering::Relaxed);
            }
        }
    }

    /// The connection table, once the first service was added.
    pub(crate) fn conns(&self) -> Option<&ConnTable> {
        self.conns.get()
    }

    /// Makes the namespace ready to balance: connection table, collector
    /// and hooks. Idempotent; called with the lock held when a service is
    /// added.
    pub(crate) fn activate(
        this: &Pernet<Self>,
        ctl: &mut Writer<'_, Ctl>,
        af: AddrFamily,
    ) -> Result {
        // The namespace is going away (`pre_exit` ran): nothing new may
        // start that its exit would not stop.
        if this.stopping.load(Ordering::Relaxed) {
            return Err(ENODEV);
        }
        if this.conns.get().is_none() {
            let table = KBox::new(ConnTable::new(conn_tab_bits())?, GFP_KERNEL_ACCOUNT)?;
            this.conns.set(table, ctl);
            Self::schedule_gc(this);
        }
        if af == AddrFamily::Inet6 {
            // IPv6 fragments would reach the hooks one by one: netfilter's
            // IPv6 defragmentation gives them whole packets, as IPVS asks.
            // Undone once, in `exit`.
            this.enable_defrag6()?;
        }
        // The hooks call `HookHandler::hook` (crate::lb::datapath) on this
        // state; the node drops them in `pre_exit`, a grace period before
        // the state is freed.
        this.enable_hooks()
    }

    /// Makes every real server forget its cached routes (a device of the
    /// namespace went down or away; see `crate::sys::netdev`).
    pub(crate) fn forget_routes(&self) {
        let ctl = self.lock();
        self.services.for_each_dest(&ctl, |d, w| d.route.forget(w));
    }

    /// Size of the connection table in buckets now (before activation,
    /// the size it will start with).
    pub(crate) fn conn_tab_size(&self) -> u32 {
        self.conns()
            .map_or(1 << table_size::MIN_BITS.min(conn_tab_bits()), |c| c.size())
    }

    /// The most buckets the connection table may grow to
    /// (`2^conn_tab_bits`).
    pub(crate) fn conn_tab_max(&self) -> u32 {
        1u32.checked_shl(conn_tab_bits()).unwrap_or(u32::MAX)
    }

    /// The flood settings (`conn_max`, `drop_entry`, `secure_tcp`) now.
    pub(crate) fn limits(&self) -> Limits {
        Limits {
            max: self.setting(Setting::ConnMax),
            drop_entry: self.setting(Setting::DropEntry),
            secure_tcp: self.setting(Setting::SecureTcp),
        }
    }

    fn schedule_gc(this: &Pernet<Self>) {
        if this.stopping.load(Ordering::Relaxed) {
            return;
        }
        // `exit` cancels the work synchronously before the state is freed.
        this.schedule_work(time::secs_to_jiffies(GC_PERIOD_SECS));
    }

    fn collect(this: &Pernet<Self>) {
        // A resize first, before the pass: the collector walks the array
        // it leaves.
        if let Some(conns) = this.conns() {
            conns.resize_if_due();
        }
        let now = time::jiffies();
        let due = this.next_pass.load(Ordering::Relaxed);
        if (due.wrapping_sub(now) as i64) > 0 {
            // Brought forward for the resize: the pass keeps its time.
            this.schedule_work(due.wrapping_sub(now));
            return;
        }
        this.next_pass.store(
            now.wrapping_add(time::secs_to_jiffies(GC_PERIOD_SECS)),
            Ordering::Relaxed,
        );
        if let Some(conns) = this.conns() {
            let nodest = this.setting(Setting::ExpireNodestConn) != 0;
            let n = conns.collect(this.limits(), nodest);
            this.collected.fetch_add(n, Ordering::Relaxed);
        }
        Self::end_due_drains(this);
        // Rates are estimated every 2 s, IPVS's interval (and smoothing:
        // `ipvsadm --rate` reads the same on both), half of the services at
        // each run, so that a large configuration's work is spread.
        let half = (this.ticks.fetch_add(1, Ordering::Relaxed) % 2) as usize;
        if let Some(last) = this.last_estimate.get(half) {
            let now = time::jiffies();
            let elapsed = now.wrapping_sub(last.swap(now, Ordering::Relaxed));
            let hz = time::secs_to_jiffies(1);
            this.services.estimate(half, elapsed, hz);
            if half == 0 {
                if let Some(t) = &this.tot_stats {
                    t.estimate(elapsed, hz);
                }
            }
        }
        Self::schedule_gc(this);
    }
}

impl PernetState for NetState {
    fn id() -> &'static PernetId<Self> {
        &NET_ID
    }

    fn new(_net: &Net) -> Result<Pin<KBox<Self>>> {
        let services = Services::new()?;
        let tot_stats = param::ipvs_compat().then(Stats::new).transpose()?;
        let timeouts = RcuCell::new(Timeouts::default())?;
        let guarded = Counters::new()?;
        KBox::pin_init(
            pin_init!(NetState {
                conns: SetOnce::new(),
                services,
                tot_stats,
                timeouts,
                settings: settings::defaults().map(AtomicU32::new),
                ctl <- WriterLock::new(new_mutex!(Ctl {}, "rvs_netns_ctl")),
                stopping: AtomicBool::new(false),
                collected: AtomicU32::new(0),
                last_estimate: [(); 2].map(|()| AtomicU64::new(time::jiffies())),
                ticks: AtomicU64::new(0),
                next_pass: AtomicU64::new(0),
                next_drain: AtomicU64::new(0),
                guarded,
                sync <- SyncDaemons::new(),
            }),
            GFP_KERNEL_ACCOUNT,
        )
    }

    fn pre_exit(this: &Pernet<Self>) {
        // No hook is registered again after this (`activate` refuses).
        this.stopping.store(true, Ordering::Relaxed);
        // Sync daemons end first: their sockets are the namespace's.
        SyncDaemons::stop_all(this);
        // Packets may still be inside a hook when this returns; the kernel
        // waits for them (a grace period) before `exit`.
        let _ctl = this.lock();
        this.disable_hooks();
    }

    fn exit(this: &Pernet<Self>) {
        this.disable_defrag6();
        // Waits for a running collection and stops it from re-queueing
        // (`stopping`). The connection table goes with the state, right
        // after this returns (see `NetState::conns`).
        this.cancel_work();
    }

    fn work(this: &Pernet<Self>) {
        Self::collect(this);
    }

    fn thread(this: &Pernet<Self>, id: usize) {
        crate::lb::sync::run_thread(this, id);
    }
}

impl DeviceHandler for NetState {
    fn device_down(net: &Net) {
        // A namespace's state outlives its devices: pernet exit runs after
        // the namespace's devices are unregistered.
        if let Some(state) = NetState::of(net) {
            state.forget_routes();
        }
    }

    fn device_added(net: &Net, dev: &Device) {
        if let Some(state) = NetState::of(net) {
            if state.ingress_device_added(dev).is_err() {
                pr_warn!(
                    "fast path: a new device could not be hooked; its packets take the slow path\n"
                );
            }
        }
    }

    fn device_removed(net: &Net, dev: &Device) {
        if let Some(state) = NetState::of(net) {
            state.ingress_device_removed(dev);
        }
    }
}
