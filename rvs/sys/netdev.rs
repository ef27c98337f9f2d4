// SPDX-License-Identifier: GPL-2.0

//! Network device events: a device that goes down or away must not be kept
//! alive by routes that rvs caches for its real servers.
//!
//! C header: [`include/linux/netdevice.h`] (`register_netdevice_notifier`)
//!
//! IPVS drops its cached routes on `NETDEV_DOWN` (`ip_vs_dst_event`).
//! [`DeviceEvents`] does the same for rvs, on `NETDEV_DOWN` and
//! `NETDEV_UNREGISTER` (which the kernel repeats every second while a
//! device's references are still held, so a route cached in a race with the
//! first event is released by the next), [`DeviceHandler::device_down`]
//! runs for the device's namespace, where every real server forgets its
//! cached routes ([`crate::sys::route::RouteCache::forget`]).
//!
//! The fast path hooks each device of a namespace (`crate::sys::ingress`):
//! [`DeviceHandler::device_added`] (`NETDEV_REGISTER`, also when a device
//! enters the namespace) and [`DeviceHandler::device_removed`]
//! (`NETDEV_UNREGISTER`, also when it leaves) keep the hooks in step, and
//! [`Rtnl`] lets a namespace walk its devices.

use super::ffi;
use super::netns::Net;
use core::ffi::{c_int, c_ulong, c_void};
use core::marker::PhantomData;
use kernel::prelude::*;
use kernel::types::Opaque;

/// A network device, alive for the borrow.
///
/// # Invariants
///
/// Wraps a registered `struct net_device`, which stays alive for as long
/// as the reference (the notifier's event, or RTNL held while walking).
#[repr(transparent)]
pub(crate) struct Device(Opaque<ffi::net_device>);

impl Device {
    /// # Safety
    ///
    /// `ptr` is a live device that stays alive for `'a`.
    unsafe fn from_raw<'a>(ptr: *mut ffi::net_device) -> &'a Self {
        // SAFETY: `Device` is a transparent wrapper of `struct net_device`;
        // the caller guarantees the lifetime.
        unsafe { &*ptr.cast::<Self>() }
    }

    /// The raw pointer, for C calls.
    pub(super) fn as_ptr(&self) -> *mut ffi::net_device {
        self.0.get()
    }

    /// Whether it is the namespace's loopback device.
    pub(crate) fn is_loopback(&self) -> bool {
        // SAFETY: a live device (invariant); reads its flags.
        unsafe { ffi::rvs_dev_is_loopback(self.as_ptr()) }
    }
}

/// RTNL, held: devices can be walked, and none comes or goes meanwhile.
pub(crate) struct Rtnl(());

impl Rtnl {
    /// Takes RTNL (sleeps; process context, no lock that a netdevice
    /// notifier takes may be held).
    pub(crate) fn lock() -> Self {
        // SAFETY: process context (the caller's promise); released on drop.
        unsafe { ffi::rtnl_lock() };
        Self(())
    }

    /// Calls `f` on every device of `net` (RTNL keeps them alive).
    pub(crate) fn for_each_device(&self, net: &Net, mut f: impl FnMut(&Device)) {
        let mut dev = core::ptr::null_mut();
        loop {
            // SAFETY: RTNL is held (`self`); `dev` is null or a device of
            // `net` that RTNL keeps registered.
            dev = unsafe { ffi::rvs_net_next_dev(net.as_ptr(), dev) };
            if dev.is_null() {
                return;
            }
            // SAFETY: a registered device, alive while RTNL is held, which
            // outlasts the borrow given to `f`.
            f(unsafe { Device::from_raw(dev) });
        }
    }
}

impl Drop for Rtnl {
    fn drop(&mut self) {
        // SAFETY: taken in `lock`.
        unsafe { ffi::rtnl_unlock() };
    }
}

/// What the notifier calls (process context, under RTNL).
pub(crate) trait DeviceHandler {
    /// A device of `net` went down or is being unregistered.
    fn device_down(net: &Net);

    /// `dev` was registered in `net` (or moved into it).
    fn device_added(net: &Net, dev: &Device);

    /// `dev` is being unregistered from `net` (or moved out of it): every
    /// hook on it must go now.
    fn device_removed(net: &Net, dev: &Device);
}

/// The registered notifier; unregisters on drop.
///
/// # Invariants
///
/// `nb` is registered with `register_netdevice_notifier` and stays pinned
/// in its allocation until `Drop` has unregistered it.
pub(crate) struct DeviceEvents<H: DeviceHandler> {
    nb: Pin<KBox<Opaque<ffi::notifier_block>>>,
    _handler: PhantomData<H>,
}

// SAFETY: touched only at module init and exit; the C side calls the
// callback, which uses no state of this value.
unsafe impl<H: DeviceHandler> Send for DeviceEvents<H> {}
// SAFETY: as above.
unsafe impl<H: DeviceHandler> Sync for DeviceEvents<H> {}

impl<H: DeviceHandler> DeviceEvents<H> {
    /// Registers for device events of every namespace. (The kernel replays
    /// `NETDEV_REGISTER`/`NETDEV_UP` for existing devices, which hook
    /// nothing: no namespace has its fast path on before the module is
    /// loaded.)
    pub(crate) fn register() -> Result<Self> {
        let nb = KBox::pin(
            Opaque::new(ffi::notifier_block {
                notifier_call: Some(on_event::<H>),
                ..Default::default()
            }),
            GFP_KERNEL,
        )?;
        // SAFETY: `nb` is pinned in a heap allocation that outlives the
        // registration (dropped only after unregistering).
        let ret = unsafe { ffi::register_netdevice_notifier(nb.get()) };
        if ret != 0 {
            return Err(Error::from_errno(ret));
        }
        // INVARIANT: registered just above; `nb` stays pinned in its box.
        Ok(Self {
            nb,
            _handler: PhantomData,
        })
    }
}

impl<H: DeviceHandler> Drop for DeviceEvents<H> {
    fn drop(&mut self) {
        // SAFETY: registered in `register` (invariant). Unregistering
        // replays `NETDEV_DOWN`/`NETDEV_UNREGISTER` for every device, which
        // only makes real servers forget routes.
        unsafe { ffi::unregister_netdevice_notifier(self.nb.get()) };
    }
}

/// # Safety
///
/// Called by the netdevice notifier chain only, with `ptr` the event's
/// `struct netdev_notifier_info`, under RTNL (process context).
unsafe extern "C" fn on_event<H: DeviceHandler>(
    _nb: *mut ffi::notifier_block,
    event: c_ulong,
    ptr: *mut c_void,
) -> c_int {
    let is = |e: u32| event == c_ulong::from(e);
    if !(is(ffi::NETDEV_DOWN) || is(ffi::NETDEV_UNREGISTER) || is(ffi::NETDEV_REGISTER)) {
        return ffi::NOTIFY_DONE as c_int;
    }
    // SAFETY: `ptr` is the event's info, whose device (and so its
    // namespace) is alive during the call.
    let (net, dev) = unsafe {
        (
            Net::from_raw(ffi::rvs_netdev_event_net(ptr)),
            Device::from_raw(ffi::rvs_netdev_event_dev(ptr)),
        )
    };
    if is(ffi::NETDEV_REGISTER) {
        H::device_added(net, dev);
    } else {
        if is(ffi::NETDEV_UNREGISTER) {
            H::device_removed(net, dev);
        }
        H::device_down(net);
    }
    ffi::NOTIFY_DONE as c_int
}
