// SPDX-License-Identifier: GPL-2.0

//! Address forms shared by the packet and route wrappers and their users:
//! an IPv4 or IPv6 address is carried in 16 bytes, IPv4 in the first 4.
//!
//! C header: [`include/uapi/linux/in6.h`]

use super::ffi;

/// The 16-byte form of an IPv4 address.
pub(crate) fn addr16(a: [u8; 4]) -> [u8; 16] {
    let mut x = [0u8; 16];
    x[..4].copy_from_slice(&a);
    x
}

/// The IPv4 address of a 16-byte form.
pub(crate) fn addr4(a: &[u8; 16]) -> [u8; 4] {
    [a[0], a[1], a[2], a[3]]
}

/// An IPv6 address in the kernel's form.
pub(super) fn in6(addr: &[u8; 16]) -> ffi::in6_addr {
    ffi::in6_addr {
        in6_u: ffi::in6_addr__bindgen_ty_1 { u6_addr8: *addr },
    }
}

/// The bytes of a kernel IPv6 address.
pub(super) fn in6_bytes(a: &ffi::in6_addr) -> [u8; 16] {
    // SAFETY: every bit pattern of the union is a valid byte array.
    unsafe { a.in6_u.u6_addr8 }
}
