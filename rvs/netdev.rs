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
//! first event is released by the next): every real server of the device's
//! namespace forgets its cached routes ([`crate::route::RouteCache::forget`]).

use crate::ffi;
use crate::netns::{Net, PernetState};
use crate::state::NetState;
use core::ffi::{c_int, c_ulong, c_void};
use kernel::prelude::*;
use kernel::types::Opaque;

/// The registered notifier; unregisters on drop.
///
/// # Invariants
///
/// `nb` is registered with `register_netdevice_notifier` and stays pinned
/// in its allocation until `Drop` has unregistered it.
pub(crate) struct DeviceEvents {
    nb: Pin<KBox<Opaque<ffi::notifier_block>>>,
}

// SAFETY: touched only at module init and exit; the C side calls the
// callback, which uses no state of this value.
unsafe impl Send for DeviceEvents {}
// SAFETY: as above.
unsafe impl Sync for DeviceEvents {}

impl DeviceEvents {
    /// Registers for device events of every namespace. (The kernel replays
    /// `NETDEV_REGISTER`/`NETDEV_UP` for existing devices, which are
    /// ignored.)
    pub(crate) fn register() -> Result<Self> {
        let nb = KBox::pin(
            Opaque::new(ffi::notifier_block {
                notifier_call: Some(on_event),
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
        Ok(Self { nb })
    }
}

impl Drop for DeviceEvents {
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
unsafe extern "C" fn on_event(
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
        // A namespace's state outlives its devices: pernet exit runs after
        // the namespace's devices are unregistered.
        if let Some(state) = NetState::of(net) {
            state.forget_routes();
        }
    }
    ffi::NOTIFY_DONE as c_int
}
