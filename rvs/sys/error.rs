// SPDX-License-Identifier: GPL-2.0

//! Kernel error codes that `kernel::error::code` lacks.
//!
//! C header: [`include/uapi/asm-generic/errno.h`]

use super::ffi;
use kernel::prelude::*;

fn from_errno(code: u32) -> Error {
    Error::from_errno(-(code as i32))
}

/// `EMSGSIZE`: a message buffer is full.
pub(crate) fn emsgsize() -> Error {
    from_errno(ffi::EMSGSIZE)
}

/// `EHOSTUNREACH`: no route to the host.
pub(crate) fn ehostunreach() -> Error {
    from_errno(ffi::EHOSTUNREACH)
}

/// `EOPNOTSUPP`: the operation is not supported.
pub(crate) fn eopnotsupp() -> Error {
    from_errno(ffi::EOPNOTSUPP)
}

/// `EADDRNOTAVAIL`: an interface has no address to send from.
pub(crate) fn eaddrnotavail() -> Error {
    from_errno(ffi::EADDRNOTAVAIL)
}
