// SPDX-License-Identifier: GPL-2.0

//! A network namespace's directory of integer and text sysctls
//! (`/proc/sys/net/...`), each read and written through callbacks of the
//! layer above instead of pointing the kernel at a variable.
//!
//! C header: [`include/linux/sysctl.h`], [`include/net/net_namespace.h`]
//!
//! The kernel's text handling (`proc_dointvec`) parses and prints; the
//! value goes through a local, so a write reaches the layer above as one
//! number to validate and store (under its own lock, into its atomics),
//! and a rejected value changes nothing. A text knob goes the same way
//! through a buffer of [`TEXT_MAX`] bytes and `proc_dostring`. Permissions are the core's: the
//! files are 0644, and a namespace's sysctls are writable by holders of
//! CAP_NET_ADMIN over its user namespace (`net_ctl_permissions`).

use super::ffi;
use super::netns::Net;
use core::ffi::{c_int, c_void, CStr};
use core::ptr::{self, NonNull};
use kernel::prelude::*;

/// The knobs of one directory, implemented by the layer above.
pub(crate) trait SysctlKnobs: 'static {
    /// The directory, under /proc/sys (as `c"net/ipv4/vs"`).
    const DIR: &'static CStr;
    /// The number of knobs.
    const COUNT: usize;
    /// The file name of knob `index` (below `COUNT`).
    fn name(index: usize) -> &'static CStr;
    /// The current value of knob `index` in `net`.
    fn read(net: &Net, index: usize) -> i32;
    /// Stores `value` into knob `index` of `net`, or refuses it with an
    /// errno (EINVAL for a value out of range, as sysctls do), which the
    /// writer gets.
    fn write(net: &Net, index: usize, value: i32) -> Result;

    /// Whether knob `index` holds text rather than an integer: then it is
    /// read and written whole through [`SysctlKnobs::read_text`] and
    /// [`SysctlKnobs::write_text`] (and never through `read`/`write`).
    fn is_text(_index: usize) -> bool {
        false
    }

    /// Writes text knob `index` of `net` into `out`; returns its length
    /// (at most `out.len()`).
    fn read_text(_net: &Net, _index: usize, _out: &mut [u8]) -> usize {
        0
    }

    /// Stores `text` (what was written, up to its first newline) into
    /// text knob `index` of `net`, or refuses it with an errno.
    fn write_text(_net: &Net, _index: usize, _text: &[u8]) -> Result {
        Err(EINVAL)
    }
}

/// The table entry `ctl` of a knob, its namespace and its index.
///
/// # Safety
///
/// `ctl` is an entry of a table made by [`SysctlDir::register`] (its
/// `data` the namespace, alive while the table is registered, its
/// `extra1` the knob's index), called for from one of its handlers.
unsafe fn knob<'a>(ctl: *const ffi::ctl_table) -> (ffi::ctl_table, &'a Net, usize) {
    // SAFETY: `ctl` is an entry of our table (the function's contract).
    let entry = unsafe { *ctl };
    // SAFETY: `data` is the namespace, alive while the table is registered
    // (`SysctlDir`'s invariant), so during the handler's call.
    let net = unsafe { Net::from_raw(entry.data.cast()) };
    (entry, net, entry.extra1 as usize)
}

/// The size of a text knob's buffer, its terminating NUL included.
pub(crate) const TEXT_MAX: usize = 1024;

/// # Safety
///
/// As [`handler`], for a text knob.
unsafe extern "C" fn text_handler<K: SysctlKnobs>(
    ctl: *const ffi::ctl_table,
    write: c_int,
    buffer: *mut c_void,
    lenp: *mut usize,
    ppos: *mut ffi::loff_t,
) -> c_int {
    // SAFETY: called for an entry of our table (the function's contract).
    let (entry, net, index) = unsafe { knob(ctl) };
    let Ok(mut buf) = KVec::from_elem(0u8, TEXT_MAX, GFP_KERNEL) else {
        return ENOMEM.to_errno();
    };
    // One byte kept for the NUL (the buffer is zeroed).
    if let Some(room) = buf.get_mut(..TEXT_MAX - 1) {
        K::read_text(net, index, room);
    }
    let tmp = ffi::ctl_table {
        data: buf.as_mut_ptr().cast(),
        maxlen: TEXT_MAX as c_int,
        extra1: ptr::null_mut(),
        ..entry
    };
    // SAFETY: `tmp` is a valid string table entry whose `data` has
    // `maxlen` bytes, NUL-terminated; the rest are the caller's arguments.
    let ret = unsafe { ffi::proc_dostring(&tmp, write, buffer, lenp, ppos) };
    if write == 0 || ret != 0 {
        return ret;
    }
    let len = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    match K::write_text(net, index, buf.get(..len).unwrap_or(&[])) {
        Ok(()) => 0,
        Err(e) => e.to_errno(),
    }
}

/// # Safety
///
/// Called by the sysctl core only, for a table made by
/// [`SysctlDir::register`] with `K`: `ctl` is one of its entries (its
/// `data` the namespace, alive while the table is registered, its
/// `extra1` the knob's index), and the other arguments are as
/// `proc_dointvec` expects them.
unsafe extern "C" fn handler<K: SysctlKnobs>(
    ctl: *const ffi::ctl_table,
    write: c_int,
    buffer: *mut c_void,
    lenp: *mut usize,
    ppos: *mut ffi::loff_t,
) -> c_int {
    // SAFETY: called for an entry of our table (the function's contract).
    let (entry, net, index) = unsafe { knob(ctl) };
    let mut value: c_int = K::read(net, index);
    // The kernel parses into and prints from `value`, a local.
    let tmp = ffi::ctl_table {
        data: ptr::addr_of_mut!(value).cast(),
        maxlen: core::mem::size_of::<c_int>() as c_int,
        extra1: ptr::null_mut(),
        ..entry
    };
    // SAFETY: `tmp` is a valid one-int table entry for the call; the other
    // arguments are the caller's, passed on unchanged.
    let ret = unsafe { ffi::proc_dointvec(&tmp, write, buffer, lenp, ppos) };
    if write == 0 || ret != 0 {
        return ret;
    }
    match K::write(net, index, value) {
        Ok(()) => 0,
        Err(e) => e.to_errno(),
    }
}

/// The C type of a sysctl's handler.
type ProcHandler = unsafe extern "C" fn(
    *const ffi::ctl_table,
    c_int,
    *mut c_void,
    *mut usize,
    *mut ffi::loff_t,
) -> c_int;

/// A registered sysctl directory of one namespace; unregistered on drop.
///
/// # Invariants
///
/// `header` is the registration of `table` in a namespace that outlives
/// this object (dropped in its pernet exit at the latest); `table`'s
/// entries stay where they are (a boxed slice) until `Drop` unregisters.
pub(crate) struct SysctlDir {
    header: NonNull<ffi::ctl_table_header>,
    _table: KVec<ffi::ctl_table>,
}

// SAFETY: the header is only passed back to the sysctl API, callable from
// any task; the table is not touched after registration.
unsafe impl Send for SysctlDir {}
// SAFETY: `&SysctlDir` exposes nothing.
unsafe impl Sync for SysctlDir {}

impl SysctlDir {
    /// Registers `K`'s knobs in `net`'s `/proc/sys/K::DIR`, mode 0644.
    pub(crate) fn register<K: SysctlKnobs>(net: &Net) -> Result<Self> {
        let mut table = KVec::with_capacity(K::COUNT, GFP_KERNEL)?;
        for index in 0..K::COUNT {
            let name = K::name(index);
            let (maxlen, proc_handler) = if K::is_text(index) {
                (TEXT_MAX, text_handler::<K> as ProcHandler)
            } else {
                (core::mem::size_of::<c_int>(), handler::<K> as ProcHandler)
            };
            table.push(
                ffi::ctl_table {
                    procname: name.as_ptr(),
                    // The namespace: heap memory, which the core's check
                    // of per-namespace tables accepts as writable.
                    data: net.as_ptr().cast(),
                    maxlen: maxlen as c_int,
                    mode: 0o644,
                    proc_handler: Some(proc_handler),
                    poll: ptr::null_mut(),
                    extra1: index as *mut c_void,
                    extra2: ptr::null_mut(),
                },
                GFP_KERNEL,
            )?;
        }
        // SAFETY: `net` is alive, `DIR` is 'static, and `table` holds
        // `len` entries that stay in place until `Drop` (the vector is
        // never grown again).
        let header = unsafe {
            ffi::register_net_sysctl_sz(
                net.as_ptr(),
                K::DIR.as_ptr(),
                table.as_mut_ptr(),
                table.len(),
            )
        };
        let header = NonNull::new(header).ok_or(ENOMEM)?;
        // INVARIANT: registered just above, from `table`.
        Ok(Self {
            header,
            _table: table,
        })
    }
}

impl Drop for SysctlDir {
    fn drop(&mut self) {
        // SAFETY: registered (invariant); this waits for running handlers,
        // after which the table may go.
        unsafe { ffi::unregister_net_sysctl_table(self.header.as_ptr()) };
    }
}
