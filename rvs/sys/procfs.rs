// SPDX-License-Identifier: GPL-2.0

//! Read-only files in a network namespace's `/proc/net`: small ones whose
//! whole text is written at each read ([`ProcShow`],
//! `proc_create_net_single`, a `seq_file` of one record), and tables read
//! a slot at a time ([`ProcRecords`], `proc_create_net`, a `seq_file`
//! whose records are the slots), so that a million connections are never
//! one buffer.
//!
//! C headers: [`include/linux/proc_fs.h`], [`include/linux/seq_file.h`]
//!
//! The text is produced by a [`ProcShow`] implemented above this layer,
//! through [`SeqText`], a `core::fmt::Write` over the `seq_file`. When
//! the text outgrows the buffer, `seq_file` calls the show function again
//! with a larger one; [`SeqText`] stops the formatting at the first write
//! that does not fit, so an oversized pass costs little.

use super::ffi;
use super::netns::Net;
use core::ffi::{c_int, c_void, CStr};
use core::fmt;
use core::marker::PhantomData;
use core::ptr::{self, NonNull};
use kernel::prelude::*;

/// What a file shows, implemented by the layer above.
pub(crate) trait ProcShow {
    /// Writes the file's whole text for namespace `net`. A write error
    /// means the buffer is full (the caller is called again with a larger
    /// one): stop and return.
    fn show(net: &Net, out: &mut SeqText<'_>) -> fmt::Result;
}

/// The text of one read, being written.
///
/// # Invariants
///
/// `seq` is the `seq_file` of a running show callback, valid for `'a`.
pub(crate) struct SeqText<'a> {
    seq: *mut ffi::seq_file,
    _p: PhantomData<&'a mut ffi::seq_file>,
}

impl fmt::Write for SeqText<'_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        // SAFETY: `seq` is valid during the show callback (invariant);
        // `s` is valid for `s.len()` bytes.
        let ret = unsafe { ffi::seq_write(self.seq, s.as_ptr().cast(), s.len()) };
        if ret == 0 {
            Ok(())
        } else {
            Err(fmt::Error)
        }
    }
}

/// # Safety
///
/// Called by `seq_file` only, for a file made by [`ProcFile::create`]
/// with `S`: `seq` is valid for the call and its private data is the
/// file's namespace, alive while the file exists.
unsafe extern "C" fn show_trampoline<S: ProcShow>(
    seq: *mut ffi::seq_file,
    _v: *mut c_void,
) -> c_int {
    // SAFETY: the file lives in its namespace's /proc/net and is removed
    // before the namespace goes (`ProcFile`'s invariant), so the namespace
    // outlives the call.
    let net = unsafe { Net::from_raw(ffi::rvs_seq_file_single_net(seq)) };
    // INVARIANT: `seq` is valid for this call (the function's contract).
    let mut out = SeqText {
        seq,
        _p: PhantomData,
    };
    // A full buffer is not an error: seq_file notices and calls again.
    let _ = S::show(net, &mut out);
    0
}

/// What a table file shows, implemented by the layer above: a title,
/// then the records of each slot (a hash chain, say) in slot order.
/// `seq_file` asks for one slot at a time and may stop between two (a
/// full buffer) and resume at the next read: slots are its records, so a
/// table that changes between reads may show an entry twice or miss it,
/// as IPVS's listing does.
pub(crate) trait ProcRecords {
    /// Writes the title line(s).
    fn header(out: &mut SeqText<'_>) -> fmt::Result;
    /// The number of slots of `net`'s table now.
    fn slots(net: &Net) -> usize;
    /// Writes the records of slot `slot` (`< slots(net)`, or nothing).
    fn show_slot(net: &Net, slot: usize, out: &mut SeqText<'_>) -> fmt::Result;
}

/// A `seq_file` position as its record token: 1 for the title, 2 + `i`
/// for slot `i`; null past the end. Tokens are never dereferenced.
fn token<R: ProcRecords>(seq: *mut ffi::seq_file, pos: i64) -> *mut c_void {
    // SAFETY: `seq` is the file's `seq_file` during a callback, and the
    // file's namespace outlives it (`ProcFile`'s invariant).
    let net = unsafe { Net::from_raw(ffi::rvs_seq_file_net(seq)) };
    match usize::try_from(pos) {
        Ok(0) => 1usize as *mut c_void,
        Ok(p) if p - 1 < R::slots(net) => p.saturating_add(1) as *mut c_void,
        _ => ptr::null_mut(),
    }
}

/// # Safety
///
/// Called by `seq_file` only, for a file made by
/// [`ProcFile::create_records`] with `R`: `seq` and `pos` are valid.
unsafe extern "C" fn records_start<R: ProcRecords>(
    seq: *mut ffi::seq_file,
    pos: *mut ffi::loff_t,
) -> *mut c_void {
    // SAFETY: `pos` is valid for the call (the function's contract).
    token::<R>(seq, unsafe { *pos })
}

/// # Safety
///
/// As [`records_start`].
unsafe extern "C" fn records_next<R: ProcRecords>(
    seq: *mut ffi::seq_file,
    _v: *mut c_void,
    pos: *mut ffi::loff_t,
) -> *mut c_void {
    // SAFETY: `pos` is valid for the call (the function's contract).
    let p = unsafe {
        *pos = (*pos).saturating_add(1);
        *pos
    };
    token::<R>(seq, p)
}

/// Nothing to release: each slot's show takes what it needs.
///
/// # Safety
///
/// None needed; `unsafe` only for the table's function type.
unsafe extern "C" fn records_stop(_seq: *mut ffi::seq_file, _v: *mut c_void) {}

/// # Safety
///
/// As [`records_start`]; `v` is a token returned by it or `records_next`.
unsafe extern "C" fn records_show<R: ProcRecords>(
    seq: *mut ffi::seq_file,
    v: *mut c_void,
) -> c_int {
    // SAFETY: as in `token`.
    let net = unsafe { Net::from_raw(ffi::rvs_seq_file_net(seq)) };
    // INVARIANT: `seq` is valid for this call (the function's contract).
    let mut out = SeqText {
        seq,
        _p: PhantomData,
    };
    // A full buffer is not an error: seq_file notices, drops this record's
    // part and shows it again (into a larger buffer if it was the first).
    let _ = match v as usize {
        1 => R::header(&mut out),
        t => R::show_slot(net, t.saturating_sub(2), &mut out),
    };
    0
}

/// The `seq_operations` of `R`'s files, one static table per `R`.
struct RecordOps<R>(PhantomData<R>);

impl<R: ProcRecords> RecordOps<R> {
    const OPS: ffi::seq_operations = ffi::seq_operations {
        start: Some(records_start::<R>),
        stop: Some(records_stop),
        next: Some(records_next::<R>),
        show: Some(records_show::<R>),
    };
}

/// A file in one namespace's `/proc/net`; removed on drop.
///
/// # Invariants
///
/// `net` is alive while this exists (the owner drops it in the
/// namespace's pernet exit at the latest), and `name` is registered in
/// its `/proc/net` until `Drop`.
pub(crate) struct ProcFile {
    net: NonNull<ffi::net>,
    name: &'static CStr,
}

// SAFETY: the pointers are only passed back to the proc API, which may be
// called from any task.
unsafe impl Send for ProcFile {}
// SAFETY: `&ProcFile` exposes nothing.
unsafe impl Sync for ProcFile {}

impl ProcFile {
    /// Creates `/proc/net/NAME` of `net`, readable by all (0444), showing
    /// `S`'s text. The caller must drop it before `net` goes (a pernet
    /// exit), which `remove_proc_entry` makes wait for running reads.
    pub(crate) fn create<S: ProcShow>(net: &Net, name: &'static CStr) -> Result<Self> {
        // SAFETY: `net` is alive; `name` is 'static; the show function
        // matches the file (S's trampoline); no private data.
        let pde = unsafe {
            ffi::proc_create_net_single(
                name.as_ptr(),
                0o444,
                ffi::rvs_proc_net_dir(net.as_ptr()),
                Some(show_trampoline::<S>),
                ptr::null_mut(),
            )
        };
        if pde.is_null() {
            return Err(ENOMEM);
        }
        // INVARIANT: registered just above, in `net`'s /proc/net.
        Ok(Self {
            net: NonNull::new(net.as_ptr()).ok_or(EINVAL)?,
            name,
        })
    }

    /// Creates `/proc/net/NAME` of `net`, readable by all (0444), showing
    /// `R`'s table a slot at a time. Dropped before `net` goes, as
    /// [`ProcFile::create`]'s.
    pub(crate) fn create_records<R: ProcRecords>(net: &Net, name: &'static CStr) -> Result<Self> {
        let ops: &'static ffi::seq_operations = &RecordOps::<R>::OPS;
        // SAFETY: `net` is alive; `name` and `ops` are 'static and the
        // callbacks match the file (R's); the C helper sizes the private
        // data as `seq_file_net` expects.
        let pde = unsafe {
            ffi::rvs_proc_create_net_seq(name.as_ptr(), ffi::rvs_proc_net_dir(net.as_ptr()), ops)
        };
        if pde.is_null() {
            return Err(ENOMEM);
        }
        // INVARIANT: registered just above, in `net`'s /proc/net.
        Ok(Self {
            net: NonNull::new(net.as_ptr()).ok_or(EINVAL)?,
            name,
        })
    }
}

impl Drop for ProcFile {
    fn drop(&mut self) {
        // SAFETY: the file is registered and `net` alive (invariant);
        // remove_proc_entry waits for reads in progress to finish.
        unsafe {
            ffi::remove_proc_entry(self.name.as_ptr(), ffi::rvs_proc_net_dir(self.net.as_ptr()))
        };
    }
}
