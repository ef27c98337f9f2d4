// SPDX-License-Identifier: GPL-2.0

//! Kernel threads: started with a function and a pointer, stopped by the
//! handle's owner, which waits for the function to return.
//!
//! C header: [`include/linux/kthread.h`]
//!
//! Only `crate::sys::pernet` starts threads (a namespace's node owns them,
//! so that they stop before its state is freed); the load balancer's
//! thread bodies use [`should_stop`] and [`sleep`] to run until asked to
//! stop.

use super::ffi;
use core::ffi::{c_int, c_void, CStr};
use core::ptr::NonNull;
use kernel::prelude::*;

/// A running (or finished) kernel thread.
///
/// # Invariants
///
/// `task` is a thread made by `rvs_kthread_start`, which holds a
/// reference to its task struct for the handle (so stopping it is valid
/// even after its function returned), and it has not been stopped yet.
pub(super) struct Task {
    task: NonNull<ffi::task_struct>,
}

// SAFETY: the handle only stops its thread, which may be done from any
// process context.
unsafe impl Send for Task {}
// SAFETY: no method takes `&self`.
unsafe impl Sync for Task {}

impl Task {
    /// Starts a thread named `name` running `f(data)`.
    ///
    /// # Safety
    ///
    /// `f` must be sound to call with `data` from a new thread, and
    /// `data` must stay valid until the returned handle is dropped (which
    /// waits for `f` to return; if the thread is stopped before it ran,
    /// `f` is never called).
    pub(super) unsafe fn start(
        f: unsafe extern "C" fn(*mut c_void) -> c_int,
        data: *mut c_void,
        name: &CStr,
    ) -> Result<Self> {
        let mut err: c_int = 0;
        // SAFETY: `name` is a NUL-terminated string printed with "%s";
        // the caller vouches for `f` and `data`.
        let p = unsafe { ffi::rvs_kthread_start(Some(f), data, name.as_ptr(), &mut err) };
        match NonNull::new(p) {
            // INVARIANT: started by `rvs_kthread_start`, not stopped.
            Some(task) => Ok(Self { task }),
            None => Err(Error::from_errno(err)),
        }
    }
}

impl Drop for Task {
    fn drop(&mut self) {
        // SAFETY: a thread of `rvs_kthread_start`, not stopped before
        // (invariant); `kthread_stop` waits for its function to return,
        // then the handle's task reference is put.
        unsafe { ffi::rvs_kthread_stop(self.task.as_ptr()) };
    }
}

/// Whether the current thread was asked to stop (`kthread_should_stop`).
/// Call it only from a thread started by [`Task::start`].
pub(crate) fn should_stop() -> bool {
    // SAFETY: reads the current kthread's flags; the sys layer calls
    // thread bodies only from kthreads.
    unsafe { ffi::kthread_should_stop() }
}

/// Sleeps up to `jiffies`, or until woken (a stop request wakes it).
/// Process context only, no lock held.
pub(crate) fn sleep(jiffies: u64) {
    let j = i64::try_from(jiffies).unwrap_or(i64::MAX);
    // SAFETY: `schedule_timeout_interruptible` has no memory-safety
    // preconditions; the context rule is checked by `might_sleep`.
    unsafe { ffi::rvs_sleep_interruptible(j as _) };
}
