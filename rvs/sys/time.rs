// SPDX-License-Identifier: GPL-2.0

//! Time in jiffies.
//!
//! C header: [`include/linux/jiffies.h`]

use super::ffi;

/// The current time in jiffies.
pub(crate) fn jiffies() -> u64 {
    // SAFETY: reads a global counter.
    unsafe { ffi::rvs_jiffies() as u64 }
}

/// Jiffies per second (`HZ`).
pub(crate) fn hz() -> u64 {
    // SAFETY: reads a constant.
    unsafe { ffi::rvs_hz() as u64 }
}

/// Seconds to jiffies (saturating).
pub(crate) fn secs_to_jiffies(secs: u32) -> u64 {
    u64::from(secs).saturating_mul(hz())
}
