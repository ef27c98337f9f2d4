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

use super::ffi;
use super::netns::Net;
use core::ffi::{c_int, c_ulong, c_void};
use core::marker::PhantomData;
use kernel::prelude::*;
use kernel::types::Opaque;

/// What the notifier calls.
pub(crate) trait DeviceHandler {
    /// A device of `net` went down or is being unregistered (process
    /// context, under RTNL).
    fn device_down(net: &Net);
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
    /// `NETDEV_REGISTER`/`NETDEV_UP` for existing devices, which are
    /// ignored.)
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
    let down =
        event == c_ulong::from(ffi::NETDEV_DOWN) || event == c_ulong::from(ffi::NETDEV_UNREGISTER);
    if down {
        // SAFETY: `ptr` is the event's info, whose device (and so its
        // namespace) is alive during the call.
        let net = unsafe { Net::from_raw(ffi::rvs_netdev_event_net(ptr)) };
        H::device_down(net);
    }
    ffi::NOTIFY_DONE as c_int
}
