// SPDX-License-Identifier: GPL-2.0

//! Refusing another module's load: a module notifier that fails the
//! `MODULE_STATE_COMING` step of modules by name, before their init runs.
//!
//! C header: [`include/linux/module.h`] (`register_module_notifier`)
//!
//! With `ipvs_compat=1` rvs owns what ip_vs would create (the "IPVS"
//! genl family, `/proc/net/ip_vs*`); ip_vs's init creates its proc files
//! before it finds the family taken, which the proc layer reports with a
//! kernel warning. Refusing ip_vs before its init avoids that.

use super::ffi;
use core::ffi::{c_int, c_ulong, c_void, CStr};
use kernel::prelude::*;
use kernel::types::Opaque;

/// The refused module's name (one per build: only ip_vs needs it).
const REFUSED: &CStr = c"ip_vs";

/// A registered module notifier refusing [`REFUSED`]; unregisters on
/// drop.
///
/// # Invariants
///
/// `nb` is registered with `register_module_notifier` and stays pinned in
/// its allocation until `Drop` has unregistered it.
pub(crate) struct RefuseModule {
    nb: Pin<KBox<Opaque<ffi::notifier_block>>>,
}

// SAFETY: touched only at module init and exit; the callback uses no
// state of this value.
unsafe impl Send for RefuseModule {}
// SAFETY: as above.
unsafe impl Sync for RefuseModule {}

impl RefuseModule {
    /// From now on, loading ip_vs fails with EEXIST (and says why in the
    /// kernel log).
    pub(crate) fn ip_vs() -> Result<Self> {
        let nb = KBox::pin(
            Opaque::new(ffi::notifier_block {
                notifier_call: Some(on_module),
                ..Default::default()
            }),
            GFP_KERNEL,
        )?;
        // SAFETY: `nb` is pinned in a heap allocation that outlives the
        // registration (dropped only after unregistering).
        let ret = unsafe { ffi::register_module_notifier(nb.get()) };
        if ret != 0 {
            return Err(Error::from_errno(ret));
        }
        // INVARIANT: registered just above; `nb` stays pinned in its box.
        Ok(Self { nb })
    }
}

impl Drop for RefuseModule {
    fn drop(&mut self) {
        // SAFETY: registered in `ip_vs` (invariant); after this returns
        // the chain no longer calls `on_module`.
        unsafe { ffi::unregister_module_notifier(self.nb.get()) };
    }
}

/// # Safety
///
/// Called by the module notifier chain only, with `data` the `struct
/// module` whose state changes.
unsafe extern "C" fn on_module(
    _nb: *mut ffi::notifier_block,
    state: c_ulong,
    data: *mut c_void,
) -> c_int {
    if state != c_ulong::from(ffi::MODULE_STATE_COMING) {
        return ffi::NOTIFY_DONE as c_int;
    }
    // SAFETY: `data` is a module being loaded, valid during the call.
    if !unsafe { ffi::rvs_module_is(data, REFUSED.as_ptr()) } {
        return ffi::NOTIFY_DONE as c_int;
    }
    pr_err!("refusing to load ip_vs: rvs owns the \"IPVS\" netlink family and /proc/net/ip_vs (loaded with ipvs_compat=1)\n");
    // SAFETY: plain arithmetic on an errno (notifier_from_errno).
    unsafe { ffi::rvs_notifier_from_errno(-(ffi::EEXIST as c_int)) }
}
