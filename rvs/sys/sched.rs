// SPDX-License-Identifier: GPL-2.0

//! Scheduling points for long loops.
//!
//! C header: [`include/linux/sched.h`]

use super::ffi;

/// Lets other tasks run if this one used up its time (`cond_resched`).
/// Call it only from process context with no spinlock and no RCU read-side
/// section held (a workqueue worker between batches).
pub(crate) fn cond_resched() {
    // SAFETY: `cond_resched` has no memory-safety preconditions; the
    // context rule above is checked by `might_sleep` on debug kernels.
    unsafe { ffi::rvs_cond_resched() };
}
