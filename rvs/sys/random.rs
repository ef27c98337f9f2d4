// SPDX-License-Identifier: GPL-2.0

//! The kernel's random number generator.
//!
//! C header: [`include/linux/random.h`]

use super::ffi;

/// Fills `buf` with random bytes (`get_random_bytes`).
pub(crate) fn fill(buf: &mut [u8]) {
    // SAFETY: `buf` is valid for writes of `buf.len()` bytes.
    unsafe { ffi::get_random_bytes(buf.as_mut_ptr().cast(), buf.len()) };
}

/// A random `u32` (`get_random_u32`).
pub(crate) fn u32() -> u32 {
    // SAFETY: no preconditions.
    unsafe { ffi::get_random_u32() }
}
