// SPDX-License-Identifier: GPL-2.0

//! The module's parameters, declared with `module_param` in
//! `rvs/helpers.c`.
//!
//! C header: [`include/linux/moduleparam.h`]

use super::ffi;

/// The `conn_tab_bits` parameter (read-only after load: permissions 0444).
pub(crate) fn conn_tab_bits() -> u32 {
    // SAFETY: reads a module parameter that nothing writes after load.
    unsafe { ffi::rvs_conn_tab_bits() }
}

/// The `ipvs_compat` parameter (read-only after load: permissions 0444).
pub(crate) fn ipvs_compat() -> bool {
    // SAFETY: reads a module parameter that nothing writes after load.
    unsafe { ffi::rvs_ipvs_compat() }
}
