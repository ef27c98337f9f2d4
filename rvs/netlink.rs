// SPDX-License-Identifier: GPL-2.0

//! The "RVS" generic netlink family: IPVS's commands and attributes
//! (`rvs/uapi/rvs.h`), decoded into the service model and answered.

use crate::ffi;
use crate::genl::{errno, Dump, FamilySpec, Handler, OpSpec, Request};
use kernel::prelude::*;

const fn op(cmd: u32, doit: bool, dumpit: bool) -> OpSpec {
    OpSpec {
        cmd: cmd as u8,
        doit,
        dumpit,
    }
}

const CMD_ATTR_MAX: usize = ffi::__RVS_CMD_ATTR_MAX as usize - 1;

/// Top-level attribute policy, indexed by `RVS_CMD_ATTR_*`.
static POLICY: [u8; CMD_ATTR_MAX + 1] = {
    let mut p = [ffi::NLA_UNSPEC as u8; CMD_ATTR_MAX + 1];
    p[ffi::RVS_CMD_ATTR_SERVICE as usize] = ffi::NLA_NESTED as u8;
    p[ffi::RVS_CMD_ATTR_DEST as usize] = ffi::NLA_NESTED as u8;
    p[ffi::RVS_CMD_ATTR_DAEMON as usize] = ffi::NLA_NESTED as u8;
    p[ffi::RVS_CMD_ATTR_TIMEOUT_TCP as usize] = ffi::NLA_U32 as u8;
    p[ffi::RVS_CMD_ATTR_TIMEOUT_TCP_FIN as usize] = ffi::NLA_U32 as u8;
    p[ffi::RVS_CMD_ATTR_TIMEOUT_UDP as usize] = ffi::NLA_U32 as u8;
    p
};

static OPS: [OpSpec; 1] = [op(ffi::RVS_CMD_GET_INFO, true, false)];

/// The family as registered by the module.
pub(crate) static FAMILY: FamilySpec = FamilySpec {
    name: ffi::RVS_GENL_NAME,
    version: ffi::RVS_GENL_VERSION,
    policy: &POLICY,
    ops: &OPS,
};

/// Dispatches the family's commands.
pub(crate) struct RvsNetlink;

impl Handler for RvsNetlink {
    fn doit(cmd: u8, req: &Request<'_>) -> Result {
        match u32::from(cmd) {
            ffi::RVS_CMD_GET_INFO => get_info(req),
            _ => Err(req.fail(errno(ffi::EOPNOTSUPP), c"command not supported")),
        }
    }

    fn dumpit(_cmd: u8, dump: &mut Dump<'_>) -> Result {
        Err(dump.fail(errno(ffi::EOPNOTSUPP), c"command cannot be dumped"))
    }
}

fn get_info(req: &Request<'_>) -> Result {
    let mut reply = req.reply(ffi::RVS_CMD_GET_INFO as u8)?;
    let msg = reply.msg();
    msg.put_u32(ffi::RVS_INFO_ATTR_VERSION, ffi::RVS_VERSION_CODE)?;
    msg.put_u32(ffi::RVS_INFO_ATTR_CONN_TAB_SIZE, 4096)?;
    reply.send()
}
